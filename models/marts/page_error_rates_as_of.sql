{{ config(materialized='view', tags=['web_pages']) }}

{#- page_error_rates as it stood at var `as_of` (default: now, the current versions), from its history. -#}

with

versions_at as (

    {{ late_data_as_of(
        ref('page_error_rates_history'),
        late_data_timestamp_literal(late_data_parse_time(var('as_of'), 'as_of')) if var('as_of', none) else none,
    ) }}

)

select
    window_start,
    window_end,
    page,
    error_count,
    view_count,
    error_rate_percent,
    is_final,
    dbt_valid_from as published_at
from versions_at
