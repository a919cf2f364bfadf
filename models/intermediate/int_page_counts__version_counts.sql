{{
    config(
        materialized='table',
        tags=['late_data', 'web_pages'],
        meta={'late_data_sources': ['page_errors', 'page_views'], 'late_data_role': 'version_counts'},
    )
}}

{#- Rewritten every run: the page-count versions of both series this run's result model and
    too-late listing look at, with their version chain (per series and event_id), and whether each
    counts now and counted at the previous run. Each row counts only within its own series' late
    window. -#}

with

version_counts as (

    {{ late_data_version_counts(
        ref('int_page_counts__versions'),
        late_window_seconds=late_data_late_window_seconds(['page_errors', 'page_views']),
        series_key='page',
        counted_for='page_error_rates',
        listed_for=['page_too_late_counts'],
        event_key_columns=['source_table', 'event_id'],
        tie_breaker_columns=['error_count', 'view_count', 'page'],
        version_late_window=late_data_source_late_window('source_table', ['page_errors', 'page_views']),
    ) }}

)

select * from version_counts
