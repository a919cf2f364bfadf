{{ config(materialized='view', tags=['web_pages']) }}

with

revisions as (

    {{ late_data_window_revisions(
        history=ref('page_error_rates_history'),
        key_columns=['window_start', 'page'],
        count_column='counted_rows',
        value_column='error_rate_percent',
    ) }}

)

select * from revisions
