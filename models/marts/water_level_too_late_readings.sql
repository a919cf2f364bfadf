{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='version_id',
        on_schema_change='fail',
        tags=['late_data', 'too_late_rows', 'water_level'],
        meta={'late_data_sources': ['water_level_readings']},
    )
}}

{#- Each run lists the versions that arrived since the last successful run (merge makes a rerun
    harmless); a version's lateness is fixed when it arrives. -#}
{%- set last_run_time = late_data_last_run_time(this) if is_incremental() else none %}

with

too_late_versions as (

    {{ late_data_too_late_versions(
        ref('int_water_level_readings__scanned'),
        version_columns=['event_id', 'ingested_at', 'event_time', 'reading_value', 'location'],
        arrived_after=late_data_timestamp_literal(last_run_time) if last_run_time else "timestamp'1970-01-01 00:00:00'",
        tie_breaker_columns=['reading_value', 'location'],
    ) }}

)

select
    version_id,
    event_id,
    location,
    event_time,
    reading_value,
    ingested_at,
    window_start,
    final_at,
    too_late_reason,
    seconds_after_final,
    {{ late_data_run_time() }} as detected_at,
    '{{ invocation_id }}' as invocation_id
from too_late_versions
