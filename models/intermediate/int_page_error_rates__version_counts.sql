{{
    config(
        materialized='ephemeral',
        tags=['late_data', 'page_error_rates'],
    )
}}

{#- The page-count versions of both series this run's result model and too-late listing look at,
    with their version chain (per series and event_id), and whether each counts now and counted at
    the previous run. Each row counts only within its own series' late window. Ephemeral: each
    model that reads it works it out inside its own query, in this run. -#}

with

version_counts as (

    {{ late_data_version_counts(
        ref('int_page_error_rates__versions'),
        late_window_seconds=late_data_late_window_seconds(['page_errors', 'page_views']),
        series_key='page',
        counted_for='page_error_rates',
        listed_for=['page_error_rates_too_late_counts'],
        event_key_columns=['source_table', 'event_id'],
        tie_breaker_columns=['error_count', 'view_count', 'page'],
        version_late_window=late_data_source_late_window('source_table', ['page_errors', 'page_views']),
    ) }}

)

select * from version_counts
