{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['partition_start'],
        on_schema_change='fail',
        tags=['late_data', 'web_pages'],
        meta={'late_data_sources': ['page_errors', 'page_views']},
    )
}}

{#- Only the partitions whose input changed since the last run (all of them on the first build). -#}

with

windows_to_write as (

    {{ late_data_windows_to_write(
        ref('int_page_counts__window_checksums'),
        key_columns=['window_start', 'page'],
        checksum_columns=['counted_rows', 'counts_digest', 'is_final'],
    ) }}

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
        {{ late_data_run_time() }} as computed_at,
        '{{ invocation_id }}' as invocation_id,
        partition_start
    from windows_to_write

)

select * from error_rates
