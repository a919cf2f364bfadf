{{ config(materialized='view', tags=['water_level']) }}

with

locations as (

    select * from {{ ref('series_catalogue') }}
    where series_kind = 'location'

),

revisions as (

    {{ late_data.window_revisions(
        ref('water_level_window_means_history'),
        late_data.pipeline_named('water_level_window_means'),
        value_column='mean_value',
    ) }}

)

select
    revisions.*,
    locations.unit,
    coalesce(locations.display_name, revisions.location) as display_name
from revisions
left join locations on revisions.location = locations.series_key
