{% macro session_bounds(pipeline) %}
    {#- late_data.window_bounds of a session pipeline: window_start, window_end, the series key and
        session_seconds (each followed by a comma); a session's end is its last event + the gap (its
        final_at minus the late window), and session_seconds is from its first event to its last. #}
        window_start,
        {{ late_data.add_seconds('final_at', -pipeline.late_window) }} as window_end,
        {%- for column in pipeline.series_key %}
        {{ column }},
        {%- endfor %}
        (unix_micros(final_at) - unix_micros(window_start)) / 1000000 - {{ pipeline.late_window + pipeline.session_gap }} as session_seconds,
{%- endmacro %}
