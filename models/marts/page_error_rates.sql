{{
    config(
        materialized='late_data',
        tags=['late_data', 'page_error_rates'],
        meta={'late_data': {
            'series_key': 'page',
            'event_key': ['source_table', 'event_id'],
            'source_column': 'source_table',
            'measures': {
                'error_count': {'sum': 'error_count'},
                'view_count': {'sum': 'view_count'},
                'error_rate_percent': {'expression': '100 * cast(error_count as double) / nullif(error_count + view_count, 0)'},
                'counted_rows': 'count',
            },
            'digest': 'counts_digest',
            'versions_table': 'int_page_error_rates__versions',
            'too_late_table': 'page_error_rates_too_late_counts',
            'quarantine_view': 'page_error_rates_quarantine',
            'revisions_view': false,
        }},
    )
}}

{#- Per page and minute, the share of page views with an error, from two series that each arrive
    late: both counters in one relation (source_table tells which; the other's count is 0), so one
    checksum covers a page's window whichever changed. Each row counts within its own source's
    late window (source_column); a window is final when both have passed. A window whose counts
    are all 0 has no rate (null), not a division by zero. -#}

with

page_errors as (

    select * from {{ ref('stg_web__page_errors') }}

),

page_views as (

    select * from {{ ref('stg_web__page_views') }}

),

page_counts as (

    {{ page_error_rates_union('page_errors', 'page_views', carried_columns=['quarantine_reason']) }}

)

select * from page_counts
