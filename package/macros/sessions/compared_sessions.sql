{% macro compared_sessions(window_checksums, pipeline, aggregates, plan) %}
    {#- The recomputing path of late_data.windows_to_write for sessions: late_data.compared_windows,
        where a session's end (final_at) and its burst (burst_start) can move with the same numbers,
        and the sessions that ended before the range the run read in full are kept as stored
        (late_data.kept_sessions). -#}
    {%- set result = late_data.pipeline_relation(pipeline) -%}
    {%- set key_columns = late_data.key_columns(pipeline) -%}
    {%- set repairs = plan.counted_run_time is not none -%}
    {%- set checked = late_data.checked_range_after(pipeline, late_data.last_run_time(result)) -%}
    {%- do late_data.record_write(result, {'checked_from': checked.lower}) %}
    with

    fresh_windows as (

        select *
        from {{ window_checksums }}
        where {{ late_data.range_predicate(checked) }}
            {{- late_data.kept_sessions(pipeline, aggregates, checked) }}

    ),

    stored_windows as (

        select *
        from {{ result }}
        where {{ late_data.range_predicate(checked) }}

    ),

    compared_windows as (

        select
            {{- late_data.window_identity(key_columns, 'fresh') }}
            {{- late_data.fresh_columns(aggregates, repairs) }}
            {{- late_data.stored_columns(aggregates) }},
            fresh.burst_start,
            stored.final_at as stored_final_at,
            stored.burst_start as stored_burst_start
        from stored_windows as stored
        full outer join fresh_windows as fresh
            on {{ late_data.same_keys(key_columns, 'fresh') }}
        where stored.{{ key_columns[0] }} is not null or fresh.{{ pipeline.count_column }} > 0

    ),

    compared_partitions as (

        select
            *,
            max(not {{ late_data.same_aggregates(aggregates) }} or not (final_at <=> stored_final_at and burst_start <=> stored_burst_start))
                over (partition by partition_start, series_bucket) as is_partition_changed
        from compared_windows

    )

    {{ late_data.written_windows(
        '(select * from compared_partitions where is_partition_changed)', pipeline, aggregates, repaired=repairs,
        bounds_changed=late_data.session_bounds_changed()
    ) }}
{%- endmacro %}


{% macro kept_sessions(pipeline, aggregates, checked) %}
    {#- The end of the fresh windows' where clause on a session pipeline, and the stored sessions
        kept: a session ending by checked.sessions_from is as stored (what the run read of it may
        be partial, late_data.session_range), so those are taken from the result instead. -#}
    {%- set kept_until = late_data.timestamp_literal(checked.sessions_from + late_data.seconds(pipeline.late_window)) %}
            and final_at > {{ kept_until }}

        union all

        select
            {{ (late_data.key_columns(pipeline) + ['final_at', 'partition_start', 'series_bucket', 'burst_start']
                + aggregates.checksums.keys() | list + aggregates.recomputed.keys() | list) | join(', ') }}
        from {{ late_data.pipeline_relation(pipeline) }}
        where {{ late_data.range_predicate(checked) }} and final_at <= {{ kept_until }}
{%- endmacro %}


{% macro session_bounds_changed() %}
    {#- The cases of late_data.written_windows' window_change a session adds before the checksum's: its
        end moved with the same numbers ('published': a correction moved its last event), or its burst
        did ('checksum'). The text starts on a new line. #}
                -- A session whose end moved with the same numbers (a correction moved its last event).
                when not final_at <=> stored_final_at then 'published'
                when not burst_start <=> stored_burst_start then 'checksum'
{%- endmacro %}
