{#- Every row version of every late-data source with how late it arrived, measured from its event
    time and from its window's end, and the late window configured for its source. -#}

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
        {{ late_data_late_window_seconds(['water_level_readings']) }} as late_window_seconds
    from {{ ref('int_water_level_readings__windowed') }}

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
            when 'page_errors' then {{ late_data_late_window_seconds(['page_errors']) }}
            else {{ late_data_late_window_seconds(['page_views']) }}
        end as late_window_seconds
    from {{ ref('int_page_counts__windowed') }}

),

arrivals as (

    select * from water_level_arrivals
    union all
    select * from page_count_arrivals

)

select
    *,
    (unix_millis(ingested_at) - unix_millis(event_time)) / 1000.0 as lateness_seconds,
    (unix_millis(ingested_at) - unix_millis(window_end)) / 1000.0 as seconds_after_window_end
from arrivals
