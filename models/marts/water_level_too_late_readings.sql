{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='version_id',
        on_schema_change='fail',
        tags=['late_data', 'too_late_rows', 'water_level'],
        meta={'late_data_sources': ['water_level_readings'], 'late_data_role': 'too_late_rows'},
    )
}}

{#- Each run lists the versions that arrived since its previous run (merge makes a rerun
    harmless); a version's lateness is fixed when it arrives. -#}

with

version_counts as (

    select * from {{ ref('int_water_level__version_counts') }}

),

too_late_versions as (

    {{ late_data_too_late_versions(
        'version_counts',
        version_columns=['event_id', 'ingested_at', 'event_time', 'reading_value', 'location'],
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
