{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['partition_start', 'series_bucket'],
        on_schema_change='fail',
        tags=['late_data', 'page_error_rates'],
        meta={'late_data_sources': ['page_errors', 'page_views'], 'late_data_role': 'windows'},
    )
}}

{#- Like water_level_window_means, from two series: a page's window is final only when both
    series' late windows have passed, while each row counts only if it arrived within its own
    series' late window (int_page_error_rates__windows_to_write compares and selects the partitions). -#}

with

windows_to_write as (

    select * from {{ ref('int_page_error_rates__windows_to_write') }}

),

error_rates as (

    -- A window with rows of one series only has 0 for the other; a window whose counts are all
    -- 0 has no rate (null) rather than a division by zero.
    select
        window_start,
        {{ late_data_add_seconds('window_start', var('window_size_seconds')) }} as window_end,
        page,
        error_count,
        view_count,
        100 * cast(error_count as double) / nullif(error_count + view_count, 0) as error_rate_percent,
        counted_rows,
        is_final,
        final_at,
        counts_digest,
        computed_at,
        invocation_id,
        written_at,
        partition_start,
        series_bucket{{ late_data_write_columns() }}
    from windows_to_write

)

select * from error_rates
