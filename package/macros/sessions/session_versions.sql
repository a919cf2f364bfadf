{% macro session_versions(relation, pipeline) %}
    {#- late_data.windowed of a session pipeline: a version's bounds come from the other versions
        (late_data.sessionized), so here its "window" is its own event time, final at event time +
        late window: the last moment a version of it can change a session (docs/design.md,
        "Sessions"). #}
    select
        *,
        event_time as window_start,
        event_time as window_end,
        {{ late_data.add_seconds('event_time', pipeline.late_window) }} as final_at,
        {%- if pipeline.source_column %}
        event_time + make_dt_interval(0, 0, 0, {{ late_data.source_late_window(pipeline) }}) as version_final_at,
        {%- endif %}
        {{ late_data.time_bucket('event_time', pipeline.partition_size) }} as partition_start,
        {{ late_data.series_bucket(pipeline) }} as series_bucket
    from {{ relation }}
{%- endmacro %}
