with

windowed_readings as (

    {{ late_data_windowed(
        ref('stg_sensors__water_level_readings'),
        late_data_late_window_seconds(['water_level_readings']),
        series_key='location',
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
