{#- Both series in one relation, each windowed with its own source's late window, so one
    checksum covers a page's window whichever series changed. -#}

with

page_errors as (

    select * from {{ ref('stg_web__page_errors') }}

),

page_views as (

    select * from {{ ref('stg_web__page_views') }}

),

countable_errors as (

    select * from page_errors
    where quarantine_reason is null

),

countable_views as (

    select * from page_views
    where quarantine_reason is null

),

windowed_errors as (

    {{ late_data_windowed(
        'countable_errors', late_data_late_window_seconds(['page_errors']), series_key='page',
    ) }}

),

windowed_views as (

    {{ late_data_windowed(
        'countable_views', late_data_late_window_seconds(['page_views']), series_key='page',
    ) }}

),

page_counts as (

    {{ page_error_rates_union(
        'windowed_errors', 'windowed_views',
        carried_columns=['window_start', 'window_end', 'final_at', 'partition_start'],
    ) }}

)

select * from page_counts
