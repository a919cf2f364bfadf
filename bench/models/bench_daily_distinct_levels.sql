{{
    config(
        materialized='late_data',
        enabled=var('late_data_bench', false),
        tags=['bench'],
        meta={'late_data': {
            'series_key': 'location',
            'window_size_seconds': 86400,
            'late_window_seconds': 172800,
            'partition_size_seconds': 86400,
            'measures': {
                'reading_count': 'count',
                'distinct_levels': {'count_distinct': 'reading_value'},
            },
        }},
    )
}}

{#- The benchmark's long-window pipeline: distinct water levels (millimetres) per location and day
    with a 48-hour late window, kept by the package (a distinct count updated from the values that
    changed). Its peer is bench_daily_distinct_levels_microbatch. Not part of the product: enabled
    only with var late_data_bench. -#}

with

readings as (

    select * from {{ ref('stg_sensors__water_level_readings') }}

)

select
    event_id,
    location,
    event_time,
    reading_value,
    ingested_at,
    quarantine_reason
from readings
