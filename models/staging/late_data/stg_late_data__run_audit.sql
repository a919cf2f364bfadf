{#- The run audit the late-data macros keep (created by on-run-start), for the models that read
    it: the revisions marts take each run's kind from here. -#}

with

source as (

    select * from {{ source('late_data', 'late_data_run_audit') }}

),

audit_rows as (

    select
        invocation_id,
        model,
        model_role,
        run_kind,
        run_time,
        late_window_seconds,
        series_buckets,
        checked_from,
        windows_checked,
        windows_changed,
        windows_repaired,
        partitions_rewritten,
        vanished_windows,
        rows_written,
        rows_quarantined,
        seconds,
        outcome,
        recorded_at
    from source

)

select * from audit_rows
