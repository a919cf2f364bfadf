with

windowed_readings as (

    {{ late_data_windowed(
        ref('stg_sensors__water_level_readings'),
        late_data_late_window_seconds(['water_level_readings']),
    ) }}

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
    window_end,
    final_at,
    previous_version_final_at,
    partition_start
from windowed_readings
