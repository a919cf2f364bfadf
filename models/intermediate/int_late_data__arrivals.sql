{#- Every row version of every late-data source that has arrived, with how late it arrived, measured
    from its event time and from its window's end, and the late window configured for its source.
    Arrived means by the run time when one is given; otherwise by the moment the view is read (these
    are views, read long after they were built). A row stamped later (a clock ahead) has not
    arrived yet and would skew the lateness. -#}

{%- set arrived_by = late_data.run_time() if var('run_time', none) else 'current_timestamp()' %}
{%- set water_levels = late_data.pipeline_named('water_level_window_means') %}
{%- set page_counts = late_data.pipeline_named('page_error_rates') %}

with

water_level_arrivals as (

    select
        'water_level_readings' as source_table,
        event_id,
        location as series_key,
        event_time,
        window_end,
        final_at,
        ingested_at,
        {{ water_levels.late_window }} as late_window_seconds
    from {{ ref('int_water_level__windowed') }}

),

page_count_arrivals as (

    select
        source_table,
        event_id,
        page as series_key,
        event_time,
        window_end,
        final_at,
        ingested_at,
        case source_table
            when 'page_errors' then {{ page_counts.late_window_by_source.get('page_errors', page_counts.late_window) }}
            else {{ page_counts.late_window_by_source.get('page_views', page_counts.late_window) }}
        end as late_window_seconds
    from {{ ref('int_page_error_rates__windowed') }}

),

arrivals as (

    select * from water_level_arrivals
    union all
    select * from page_count_arrivals

),

arrived as (

    select * from arrivals
    where ingested_at <= {{ arrived_by }}

)

select
    *,
    (unix_millis(ingested_at) - unix_millis(event_time)) / 1000.0 as lateness_seconds,
    (unix_millis(ingested_at) - unix_millis(window_end)) / 1000.0 as seconds_after_window_end
from arrived
