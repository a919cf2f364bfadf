{{
    config(
        materialized='late_data',
        enabled=var('late_data_bench', false),
        tags=['bench'],
        meta={'late_data': {
            'series_key': 'location',
            'measures': {
                'reading_count': 'count',
                'p50_value': {'percentile': {'column': 'reading_value', 'p': 0.5}},
                'p95_value': {'percentile': {'column': 'reading_value', 'p': 0.95}},
            },
        }},
    )
}}

{#- The benchmark's percentile pipeline: the median and 95th percentile of the water levels per
    location and minute, kept by the package (every window whose versions changed recomputed from
    its versions). Its peer is bench_water_level_percentiles_microbatch. Not part of the product:
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
