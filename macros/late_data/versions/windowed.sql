{% macro late_data_windowed(relation, late_window_seconds, series_key, version_late_window=none) %}
    {#- A select of the row versions of `relation` (event_id, event_time, ingested_at, ...) with
        their window, final_at = window end + late window (the moment after which the window no
        longer accepts rows), and the result partition holding that window: its time partition and
        the bucket of its series key. `version_late_window`, a SQL expression, gives rows of
        several sources their own late windows (version_final_at); `late_window_seconds` is then
        the largest, when the window as a whole becomes final. -#}
    {%- set window_size = late_data_window_size_seconds() -%}
    {%- set partition_size = late_data_partition_size_seconds() %}
    select
        *,
        {{ late_data_add_seconds('window_start', window_size) }} as window_end,
        {{ late_data_add_seconds('window_start', window_size + late_window_seconds) }} as final_at,
        {%- if version_late_window %}
        timestamp_seconds(unix_seconds(window_start) + {{ window_size }} + {{ version_late_window }}) as version_final_at,
        {%- endif %}
        {{ late_data_time_bucket('event_time', partition_size) }} as partition_start,
        {{ late_data_series_bucket(series_key) }} as series_bucket
    from (
        select
            *,
            {{ late_data_time_bucket('event_time', window_size) }} as window_start
        from {{ relation }}
    )
{%- endmacro %}


{% macro late_data_counts_as_of(judged_at, superseded_at='superseded_at') %}
    {#- True for a row version that counts toward its window when judged at `judged_at` (a SQL
        timestamp expression): it has arrived and no newer version of its event has. Expects
        ingested_at and the arrival of the next version, `superseded_at` (null while newest). -#}
    (ingested_at <= {{ judged_at }} and coalesce({{ superseded_at }} > {{ judged_at }}, true))
{%- endmacro %}


{% macro late_data_judged_at(run_time, final_at='final_at') %}
    {#- When a window is judged as of `run_time`: at the earlier of run_time and its `final_at`, so a
        final window is frozen and later arrivals never change it. A backfill with
        include_too_late judges every window at run_time: the deliberate way to revise final windows. -#}
    {%- set backfill = late_data_backfill() -%}
    {{- return(run_time if backfill and backfill.include_too_late else 'least(' ~ run_time ~ ', ' ~ final_at ~ ')') -}}
{% endmacro %}
