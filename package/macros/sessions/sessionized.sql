{% macro session_grouping(version_counts, pipeline) %}
    {#- What late_data.window_checksums reads and groups by on a session pipeline: (the versions that
        count, each in its session (late_data.sessionized), the select list of a session's
        identity, final_at, partition and burst_start under the windows' names, the group-by list). -#}
    {%- set relation = '(' ~ late_data.sessionized(version_counts, pipeline) ~ ') as sessionized' -%}
    {%- set grouped = ['session_start'] + pipeline.series_key + ['session_final_at', 'session_partition_start', 'series_bucket', 'burst_start'] -%}
    {%- set selected = ['session_start as window_start'] + pipeline.series_key
        + ['session_final_at as final_at', 'session_partition_start as partition_start', 'series_bucket', 'burst_start'] -%}
    {{- return((relation, selected, grouped)) -}}
{% endmacro %}


{% macro sessionized(version_counts, pipeline) %}
    {#- A select of the versions of `version_counts` that count now, each with the session it lies
        in (docs/design.md, "Sessions"), as the columns late_data.window_checksums groups by:
        per series key, ordered by event time, an event more than session_gap_seconds after the
        one before it starts a burst; with max_session_seconds, a burst starting at burst_start is
        cut every max_session_seconds after it. A session starts at its first event
        (window_start), ends at its last event + the gap, is final a late window after its end,
        and lies in the partition of its start. -#}
    {%- set series = pipeline.series_key | join(', ') -%}
    {%- set order = (['event_time'] + pipeline.event_key + ['ingested_at']) | join(', ') %}
    select
        *,
        {{ late_data.add_seconds('session_end', pipeline.late_window) }} as session_final_at,
        {{ late_data.time_bucket('session_start', pipeline.partition_size) }} as session_partition_start
    from (
        select
            *,
            min(event_time) over session_events as session_start,
            {{ late_data.add_seconds('max(event_time) over session_events', pipeline.session_gap) }} as session_end
        from (
            select
                *,
                min(event_time) over (partition by {{ series }}, burst_number) as burst_start
            from (
                select
                    *,
                    sum(cast(starts_burst as int)) over (partition by {{ series }} order by {{ order }} rows unbounded preceding) as burst_number
                from (
                    select
                        *,
                        coalesce(
                            unix_micros(event_time) - lag(unix_micros(event_time)) over (partition by {{ series }} order by {{ order }})
                                > {{ pipeline.session_gap }} * 1000000,
                            true
                        ) as starts_burst
                    from {{ version_counts }}
                    where counts_now
                )
            )
        )
        window session_events as (
            partition by {{ series }}, burst_number
            {%- if pipeline.max_session %},
                floor((unix_micros(event_time) - unix_micros(burst_start)) / {{ pipeline.max_session * 1000000 }})
            {%- endif %}
        )
    )
{%- endmacro %}
