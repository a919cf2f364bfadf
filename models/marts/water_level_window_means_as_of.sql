{{ config(materialized='view', tags=['water_level']) }}

{#- The result table as it stood at var `as_of` (default: now, the current versions), from its history. Read it
    with: dbt show --select water_level_window_means_as_of --vars '{as_of: "2026-01-01 01:00:10"}' -#}

with

locations as (

    select * from {{ ref('series_catalogue') }}
    where series_kind = 'location'

),

versions_at as (

    {{ late_data.as_of(ref('water_level_window_means_history'), var('as_of', none)) }}

)

select
    versions_at.window_start,
    versions_at.window_end,
    versions_at.location,
    versions_at.reading_count,
    versions_at.mean_value,
    versions_at.is_final,
    versions_at.dbt_valid_from as published_at,
    versions_at.definition_id,
    versions_at.code_commit,
    locations.unit,
    coalesce(locations.display_name, versions_at.location) as display_name
from versions_at
left join locations on versions_at.location = locations.series_key
