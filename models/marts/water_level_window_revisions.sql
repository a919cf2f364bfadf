{{ config(materialized='view', tags=['water_level']) }}

with

revisions as (

    {{ late_data_window_revisions(
        history=ref('water_level_window_means_history'),
        key_columns=['window_start', 'location'],
        count_column='reading_count',
        value_column='mean_value',
    ) }}

)

select * from revisions
