{#- Every countable reading version with the window, partition and final_at of the
    water_level_window_means pipeline: for the benchmark's microbatch peer. -#}

with

readings as (

    select * from {{ ref('stg_sensors__water_level_readings') }}

),

countable_readings as (

    select * from readings
    where quarantine_reason is null

),

windowed_readings as (

    {{ late_data.windowed(
        'countable_readings',
        late_data.pipeline_named('water_level_window_means', stand_in={'series_key': ['location']}),
    ) }}

)

select
    event_id,
    location,
    event_time,
    reading_value,
    ingested_at,
    window_start,
    window_end,
    final_at,
    partition_start,
    series_bucket
from windowed_readings
