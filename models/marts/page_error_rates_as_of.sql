{{ config(materialized='view', tags=['page_error_rates']) }}

{#- page_error_rates as it stood at var `as_of` (default: now, the current versions), from its history. -#}

with

pages as (

    select * from {{ ref('series_catalogue') }}
    where series_kind = 'page'

),

versions_at as (

    {{ late_data.as_of(ref('page_error_rates_history'), var('as_of', none)) }}

)

select
    versions_at.window_start,
    versions_at.window_end,
    versions_at.page,
    versions_at.error_count,
    versions_at.view_count,
    versions_at.error_rate_percent,
    versions_at.is_final,
    versions_at.dbt_valid_from as published_at,
    versions_at.definition_id,
    versions_at.code_commit,
    pages.unit,
    coalesce(pages.display_name, versions_at.page) as display_name
from versions_at
left join pages on versions_at.page = pages.series_key
