{{
    config(
        materialized='late_data',
        enabled=var('late_data_bench', false),
        tags=['bench'],
        meta={'late_data': {
            'series_key': 'location',
            'session_gap_seconds': 120,
            'measures': {
                'reading_count': 'count',
                'mean_value': {'mean': 'reading_value'},
            },
        }},
    )
}}

{#- The benchmark's sessions pipeline: the water levels of each location in sessions that end after
    two minutes without a reading (the bench's sessions data sends in spells with idle time
    between), kept by the package: each run recomputes the sessions that can still change. Its peer
    is bench_water_level_sessions_microbatch. Not part of the product: enabled only with var
    late_data_bench. -#}

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
