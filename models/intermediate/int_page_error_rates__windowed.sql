{#- Every countable page-count version of both series in one relation, with the window and
    partition of the page_error_rates pipeline and the final_at of its own source's late window:
    for lateness monitoring. -#}

with

page_errors as (

    select * from {{ ref('stg_web__page_errors') }}

),

page_views as (

    select * from {{ ref('stg_web__page_views') }}

),

page_counts as (

    {{ page_error_rates_union('page_errors', 'page_views', carried_columns=['quarantine_reason']) }}

),

countable_counts as (

    select * from page_counts
    where quarantine_reason is null

),

windowed_counts as (

    {{ late_data.windowed(
        'countable_counts',
        late_data.pipeline_named('page_error_rates', stand_in={'series_key': ['page'], 'source_column': 'source_table'}),
    ) }}

)

select
    source_table,
    event_id,
    page,
    event_time,
    error_count,
    view_count,
    ingested_at,
    window_start,
    window_end,
    version_final_at as final_at,
    partition_start,
    series_bucket
from windowed_counts
