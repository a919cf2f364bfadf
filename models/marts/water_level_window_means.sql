{{
    config(
        materialized='late_data',
        tags=['late_data', 'water_level'],
        meta={'late_data': {
            'series_key': 'location',
            'measures': {
                'reading_count': 'count',
                'mean_value': {'mean': 'reading_value'},
                'value_sum': {'sum': 'reading_value'},
            },
            'digest': 'readings_digest',
            'versions_table': 'int_water_level__versions',
            'too_late_table': 'water_level_too_late_readings',
            'quarantine_view': 'water_level_quarantine',
            'revisions_view': false,
        }},
    )
}}

{#- Mean and count of the water levels per location and minute, kept correct under late data by
    the late_data materialization (package/): each run loads the reading versions that arrived
    since the previous one and rewrites only the partitions where a window changed or became
    final. Its versions, too-late listing and quarantine keep their names from before the
    package (meta above); the revisions are water_level_window_revisions, with display names. -#}

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
