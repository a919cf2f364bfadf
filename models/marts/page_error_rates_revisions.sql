{{ config(materialized='view', tags=['page_error_rates']) }}

with

pages as (

    select * from {{ ref('series_catalogue') }}
    where series_kind = 'page'

),

revisions as (

    {{ late_data.window_revisions(
        ref('page_error_rates_history'),
        late_data.pipeline_named('page_error_rates'),
        value_column='error_rate_percent',
    ) }}

)

select
    revisions.*,
    pages.unit,
    coalesce(pages.display_name, revisions.page) as display_name
from revisions
left join pages on revisions.page = pages.series_key
