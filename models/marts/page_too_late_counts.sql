{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='version_id',
        on_schema_change='fail',
        tags=['late_data', 'too_late_rows', 'web_pages'],
        meta={'late_data_sources': ['page_errors', 'page_views']},
    )
}}

{%- set last_run_time = late_data_last_run_time(this) if is_incremental() else none %}

with

too_late_versions as (

    {{ late_data_too_late_versions(
        ref('int_page_counts__scanned'),
        version_columns=['source_table', 'event_id', 'ingested_at', 'event_time', 'error_count', 'view_count', 'page'],
        arrived_after=late_data_timestamp_literal(last_run_time) if last_run_time else "timestamp'1970-01-01 00:00:00'",
        event_key_columns=['source_table', 'event_id'],
        tie_breaker_columns=['error_count', 'view_count', 'page'],
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
    final_at,
    too_late_reason,
    seconds_after_final,
    {{ late_data_run_time() }} as detected_at,
    '{{ invocation_id }}' as invocation_id
from too_late_versions
