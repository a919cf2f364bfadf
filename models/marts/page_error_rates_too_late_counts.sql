{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='version_id',
        on_schema_change='fail',
        tags=['late_data', 'too_late_rows', 'page_error_rates'],
        meta={'late_data_sources': ['page_errors', 'page_views'], 'late_data_role': 'too_late_rows'},
    )
}}


with

version_counts as (

    select * from {{ ref('int_page_error_rates__version_counts') }}

),

too_late_versions as (

    {{ late_data_too_late_versions(
        'version_counts',
        version_columns=['source_table', 'event_id', 'ingested_at', 'event_time', 'error_count', 'view_count', 'page'],
    ) }}

)

select
    version_id,
    source_table,
    event_id,
    page,
    event_time,
    error_count,
    view_count,
    ingested_at,
    window_start,
    version_final_at as final_at,
    too_late_reason,
    seconds_after_final,
    {{ late_data_run_time() }} as detected_at,
    '{{ invocation_id }}' as invocation_id
from too_late_versions
