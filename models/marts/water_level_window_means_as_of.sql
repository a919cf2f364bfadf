{{ config(materialized='view', tags=['water_level']) }}

{#- The result table as it stood at var `as_of` (default: now, the current versions), from its history. Read it
    with: dbt show --select water_level_window_means_as_of --vars '{as_of: "2026-01-01 01:00:10"}' -#}

with

versions_at as (

    {{ late_data_as_of(
        ref('water_level_window_means_history'),
        late_data_timestamp_literal(late_data_parse_time(var('as_of'), 'as_of')) if var('as_of', none) else none,
    ) }}

)

select
    window_start,
    window_end,
    location,
    reading_count,
    mean_value,
    is_final,
    dbt_valid_from as published_at
from versions_at
