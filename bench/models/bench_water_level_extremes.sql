{{
    config(
        materialized='late_data',
        enabled=var('late_data_bench', false),
        tags=['bench'],
        meta={'late_data': {
            'series_key': 'location',
            'measures': {
                'reading_count': 'count',
                'min_value': {'min': 'reading_value'},
                'max_value': {'max': 'reading_value'},
            },
        }},
    )
}}

{#- The benchmark's min/max pipeline: the lowest and highest water level per location and minute,
    kept by the package, to measure what a min or max costs per run. Not part of the product:
    enabled only with var late_data_bench. -#}

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
