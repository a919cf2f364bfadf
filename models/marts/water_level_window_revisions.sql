{{ config(materialized='view', tags=['water_level']) }}

with

locations as (

    select * from {{ ref('series_catalogue') }}
    where series_kind = 'location'

),

revisions as (

    {{ late_data_window_revisions(
        history=ref('water_level_window_means_history'),
        key_columns=['window_start', 'location'],
        count_column='reading_count',
        value_column='mean_value',
    ) }}

)

select
    revisions.*,
    locations.unit,
    coalesce(locations.display_name, revisions.location) as display_name
from revisions
left join locations on revisions.location = locations.series_key
