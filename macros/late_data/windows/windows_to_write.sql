{% macro late_data_windows_to_write(window_checksums, result, key_columns, checksums, late_window_seconds) %}
    {#- A select of the rows the late-data result model stored in `result` writes, from
        `window_checksums` (a late_data_window_checksums select with the same `checksums`) and what
        `result` stores (the fresh-versus-stored comparison), with the window's status
        (is_final), computed_at and invocation_id (the run that last changed its published numbers
        or status) and written_at (the run that last wrote its partition):
        - first build or --full-refresh: every window;
        - scheduled run: every window of the partitions (time partition and series bucket) where a
          window changed or became final since the previous run, its stored checksums plus what
          changed, in one pass over the changes and the stored rows of those partitions only;
        - reconcile or backfill: the checked range recomputed and compared with what is stored;
          every window of the partitions where one differs.
        On incremental runs each row also says what happened to it, `window_change`: 'published'
        (count, sum or status changed), 'checksum' (only the digest changed), 'unchanged' (kept in a
        rewritten partition) or 'vanished' (no counted version left: a correction moved its only
        reading; a marker row that the write deletes), and `window_repaired` (reconcile: the
        recomputation disagreed with what the arrival-driven path would have stored).
        A run holds (writes nothing, and its changes wait for the next run) while a history
        snapshot of the model, selected in this invocation, has not recorded the model's last run. -#}
    {%- set run_mode = late_data_run_mode(result) if execute else {'mode': 'rebuild', 'previous_run_time': none} -%}
    {%- set count_column = late_data_count_column(checksums) -%}
    {%- set held = execute and run_mode.mode != 'rebuild' and late_data_histories_behind(result) -%}
    {%- if held and late_data_backfill() -%}
        {%- do exceptions.raise_compiler_error(
            "history snapshot " ~ held | join(', ') ~ " missed a run of " ~ result.identifier
            ~ ": run a scheduled run first, so it records what that run published"
        ) -%}
    {%- endif -%}
    {%- if execute -%}
        {%- do late_data_check_series_buckets(result) -%}
        {%- do late_data_record_write(result, {'mode': 'held' if held else run_mode.mode, 'key_columns': key_columns}) -%}
        {%- if held -%}
            {%- do log('late-data: ' ~ result.identifier ~ ' holds this run: ' ~ held | join(', ')
                ~ ' missed its last run and records it first', info=true) -%}
        {%- endif -%}
    {%- endif -%}
    {%- if held %}
    select * from (
    {%- endif -%}
    {%- if run_mode.mode == 'rebuild' %}
    select
        *,
        final_at <= {{ late_data_run_time() }} as is_final,
        {{ late_data_run_time() }} as computed_at,
        '{{ invocation_id }}' as invocation_id,
        {{ late_data_run_time() }} as written_at
    from {{ window_checksums }}
    where {{ count_column }} > 0
    {%- elif run_mode.mode == 'delta' %}
    {{- late_data_updated_windows(window_checksums, result, key_columns, checksums, late_window_seconds, run_mode.previous_run_time) }}
    {%- else %}
    {{- late_data_recomputed_windows(window_checksums, result, key_columns, checksums, late_window_seconds, run_mode.previous_run_time) }}
    {%- endif %}
    {%- if held %}
    ) as held_windows
    where false
    {%- endif %}
{%- endmacro %}


{% macro late_data_updated_windows(window_checksums, result, key_columns, checksums, late_window_seconds, previous_run_time) %}
    {#- The scheduled path of late_data_windows_to_write: stored checksums plus changes, for every
        window of the partitions where a window changed or became final. One join of the changes
        with the stored windows a change can reach, and a window function per partition (picking
        the partitions first and joining twice made Spark work the changes out four times). -#}
    {%- set run_time = late_data_run_time() -%}
    {%- set until_final = modules.datetime.timedelta(seconds=late_window_seconds + late_data_window_size_seconds()) -%}
    {%- set horizon = previous_run_time - until_final - modules.datetime.timedelta(seconds=late_data_write_delay_seconds()) -%}
    {%- set lowest_partition = late_data_timestamp_literal(late_data_floor_to_partition(horizon)) -%}
    {%- do late_data_record_write(result, {'checked_from': late_data_floor_to_partition(horizon)}) %}
    with

    window_changes as (

        select *
        from {{ window_checksums }}
        where not ({% for name in checksums %}{{ name }}__change = 0{{ ' and ' if not loop.last }}{% endfor %})

    ),

    stored_windows as (

        select *
        from {{ result }}
        where partition_start >= {{ lowest_partition }}

    ),

    joined_windows as (

        select
            {{- late_data_window_identity(key_columns, 'changes') }}
            {%- for name, spec in checksums.items() %}
            {{ late_data_stored_plus_change(name, spec, 'changes') }} as {{ name }},
            {%- endfor %}
            {{- late_data_stored_columns(checksums) }},
            -- A window changed, or it becomes final now.
            changes.{{ key_columns[0] }} is not null
            or (not stored.is_final and stored.final_at <= {{ run_time }}) as is_moved
        from stored_windows as stored
        full outer join window_changes as changes
            on {{ late_data_same_keys(key_columns, 'changes') }}

    ),

    updated_windows as (

        select *
        from (
            select *, max(is_moved) over (partition by partition_start, series_bucket) as is_partition_rewritten
            from joined_windows
        )
        where is_partition_rewritten

    )

    {{ late_data_written_windows('updated_windows', result, key_columns, checksums) }}
{%- endmacro %}


{% macro late_data_recomputed_windows(window_checksums, result, key_columns, checksums, late_window_seconds, previous_run_time) %}
    {#- The reconcile and backfill path of late_data_windows_to_write: the checked range recomputed
        and compared with what is stored; with a previous run (reconcile), also with what the
        arrival-driven path would have stored, to count the windows repaired. -#}
    {%- set checked = late_data_checked_range_after(result, late_data_last_run_time(result), late_window_seconds) -%}
    {%- do late_data_record_write(result, {'checked_from': checked.lower}) %}
    with

    fresh_windows as (

        select *
        from {{ window_checksums }}
        where {{ late_data_range_predicate(checked) }}

    ),

    stored_windows as (

        select *
        from {{ result }}
        where {{ late_data_range_predicate(checked) }}

    ),

    compared_windows as (

        select
            {{- late_data_window_identity(key_columns, 'fresh') }}
            {%- for name, spec in checksums.items() %}
            cast(coalesce(fresh.{{ name }}, 0) as {{ spec.type }}) as {{ name }},
            {%- endfor %}
            {%- if previous_run_time is not none %}
            {{ late_data_window_repaired(checksums) }} as window_repaired,
            {%- endif %}
            {{- late_data_stored_columns(checksums) }}
        from stored_windows as stored
        full outer join fresh_windows as fresh
            on {{ late_data_same_keys(key_columns, 'fresh') }}
        where stored.{{ key_columns[0] }} is not null or fresh.{{ late_data_count_column(checksums) }} > 0

    ),

    compared_partitions as (

        select
            *,
            max(not {{ late_data_same_checksums(checksums) }})
                over (partition by partition_start, series_bucket) as is_partition_changed
        from compared_windows

    ),

    updated_windows as (

        select * from compared_partitions where is_partition_changed

    )

    {{ late_data_written_windows('updated_windows', result, key_columns, checksums, repaired=previous_run_time is not none) }}
{%- endmacro %}


{% macro late_data_window_repaired(checksums) %}
    {#- SQL: reconciliation repairs the window: what the arrival-driven path would have stored
        (stored plus what changed) differs from the recomputation `fresh`, or a row written too
        late for that path changed the window. -#}
    not (
        {%- for name, spec in checksums.items() %}
        coalesce(fresh.{{ name }}, 0) = {{ late_data_stored_plus_change(name, spec, 'fresh') }} and
        {%- endfor %}
        not coalesce(fresh.changed_by_late_write, false)
    )
{%- endmacro %}


{% macro late_data_written_windows(updated_windows, result, key_columns, checksums, repaired=false) %}
    {#- The final select of an incremental late_data_windows_to_write: `updated_windows` (new
        checksums next to the stored_* ones) with status, window_change, computed_at and
        invocation_id. A negative count means the stored checksums drifted from the versions:
        the run fails rather than publish it. -#}
    {%- set run_time = late_data_run_time() -%}
    {%- set count_column = late_data_count_column(checksums) -%}
    {%- set published = {} -%}
    {%- for name, spec in checksums.items() if spec.published -%}{%- do published.update({name: spec}) -%}{%- endfor %}
    select
        {%- for column in key_columns + ['final_at', 'partition_start', 'series_bucket'] %}
        {{ column }},
        {%- endfor %}
        if(
            {{ count_column }} < 0,
            cast(raise_error(concat(
                'late-data: the stored {{ count_column }} of {{ result.identifier }} window ',
                concat_ws('|', {% for key in key_columns %}cast({{ key }} as string){{ ', ' if not loop.last }}{% endfor %}),
                ' would become negative: the stored checksums drifted; run late-data reconcile'
            )) as bigint),
            {{ count_column }}
        ) as {{ count_column }},
        {%- for name, spec in checksums.items() if name != count_column %}
        cast({{ name }} as {{ spec.type }}) as {{ name }},
        {%- endfor %}
        final_at <= {{ run_time }} as is_final,
        window_change,
        if(window_change = 'published', {{ run_time }}, stored_computed_at) as computed_at,
        if(window_change = 'published', '{{ invocation_id }}', stored_invocation_id) as invocation_id,
        -- Every row of a rewritten partition: what the next run compares with the audit to find a
        -- run that wrote and was interrupted before it recorded its outcome.
        {{ run_time }} as written_at,
        {{ 'window_repaired' if repaired else 'false' }} as window_repaired
    from (
        select
            *,
            case
                when {{ count_column }} = 0 then 'vanished'
                when stored_{{ count_column }} is null then 'published'
                when not {{ late_data_same_checksums(published) }} then 'published'
                when not {{ late_data_same_checksums(checksums, status=false) }} then 'checksum'
                else 'unchanged'
            end as window_change
        from {{ updated_windows }}
    )
{%- endmacro %}


{% macro late_data_write_columns() %}
    {#- The helper columns late_data_windows_to_write adds on incremental runs, for a result model's
        final select; the write step reads them and keeps them out of the table. -#}
    {{- return(', window_change, window_repaired' if is_incremental() else '') -}}
{% endmacro %}


{% macro late_data_check_series_buckets(target) %}
    {#- A result table's partitions are buckets of var `series_buckets`: changing it needs a rebuild. -#}
    {%- set last_buckets = late_data_last_run(target).get('series_buckets') -%}
    {%- if late_data_builds_incrementally(target) and last_buckets is not none and last_buckets != late_data_series_buckets() -%}
        {%- do exceptions.raise_compiler_error(
            "var series_buckets=" ~ late_data_series_buckets() ~ " differs from the " ~ last_buckets ~ " that "
            ~ target.identifier ~ " was built with: rebuild it with --full-refresh"
        ) -%}
    {%- endif -%}
{% endmacro %}


{% macro late_data_window_identity(key_columns, other) %}
    {#- The select list's first columns in a full outer join of `stored` windows with `other`:
        each window's keys, final_at and partition (time partition and series bucket), from
        whichever side has the window. -#}
    {%- for column in key_columns + ['final_at', 'partition_start', 'series_bucket'] %}
            coalesce(stored.{{ column }}, {{ other }}.{{ column }}) as {{ column }},
    {%- endfor %}
{%- endmacro %}


{% macro late_data_stored_columns(checksums) %}
    {#- What `stored` holds for the window, as stored_<checksum> and stored_is_final,
        stored_computed_at, stored_invocation_id (no trailing comma). -#}
    {%- for name in checksums %}
            stored.{{ name }} as stored_{{ name }},
    {%- endfor %}
            stored.is_final as stored_is_final,
            stored.computed_at as stored_computed_at,
            stored.invocation_id as stored_invocation_id
{%- endmacro %}


{% macro late_data_same_keys(key_columns, other) %}
    {#- Join condition: `stored` and `other` hold the same window. -#}
    {%- for key in key_columns -%}
        stored.{{ key }} = {{ other }}.{{ key }}{{ ' and ' if not loop.last }}
    {%- endfor -%}
{%- endmacro %}


{% macro late_data_same_checksums(checksums, status=true) %}
    {#- SQL, parenthesized: every checksum named in `checksums` equals its stored_ column (null-safe)
        and, with `status`, the window's final status equals stored_is_final. -#}
    (
    {%- for name in checksums %}
        {{ name }} <=> stored_{{ name }}{{ ' and' if not loop.last or status }}
    {%- endfor %}
    {%- if status %}
        final_at <= {{ late_data_run_time() }} <=> stored_is_final
    {%- endif %}
    )
{%- endmacro %}


{% macro late_data_stored_plus_change(name, spec, changes) %}
    {#- SQL: the stored checksum `name` plus what `changes` says changed (`name`__change), in the
        spec's addend type, so the sum is exact. -#}
    cast(coalesce(stored.{{ name }}, 0) as {{ spec.addend_type }}) + cast(coalesce({{ changes }}.{{ name }}__change, 0) as {{ spec.addend_type }})
{%- endmacro %}
