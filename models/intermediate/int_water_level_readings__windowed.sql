{%- set seconds_until_final = var('window_size_seconds') + var('late_window_seconds') %}

with

readings as (

    select * from {{ ref('stg_sensors__water_level_readings') }}

),

bucketed as (

    select
        *,
        {{ late_data_time_bucket('event_time', var('window_size_seconds')) }} as window_start,
        {{ late_data_time_bucket('event_time', var('partition_size_seconds')) }} as partition_start,
        {{ late_data_time_bucket('previous_version_event_time', var('window_size_seconds')) }}
            as previous_version_window_start
    from readings

)

select
    event_id,
    location,
    event_time,
    reading_value,
    ingested_at,
    superseded_at,
    previous_version_event_time,
    window_start,
    {{ late_data_add_seconds('window_start', var('window_size_seconds')) }} as window_end,
    {{ late_data_add_seconds('window_start', seconds_until_final) }} as final_at,
    {{ late_data_add_seconds('previous_version_window_start', seconds_until_final) }} as previous_version_final_at,
    partition_start
from bucketed
