{#- on_schema_change fail: a versions table lacking a column of its staging model (an upgrade
    adding the quarantine reason, say) would silently drop it; refused, rebuild with --full-refresh. -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        on_schema_change='fail',
        tags=['late_data', 'late_data_versions', 'water_level'],
        meta={'late_data_sources': ['water_level_readings'], 'late_data_role': 'versions'},
    )
}}

{#- Every reading version delivered so far, with the run time of the run that loaded it: what a
    run compares its previous run with. Each run appends the versions that arrived since. -#}

with

delivered_versions as (

    select * from {{ ref('stg_sensors__water_level_readings') }}

),

new_versions as (

    {{ late_data_new_versions(
        'delivered_versions',
        version_columns=['event_id', 'location', 'event_time', 'reading_value', 'ingested_at'],
        late_window_seconds=late_data_late_window_seconds(['water_level_readings']),
    ) }}

)

select
    event_id,
    location,
    event_time,
    reading_value,
    ingested_at,
    quarantine_reason,
    {{ late_data_run_time() }} as loaded_at
from new_versions
