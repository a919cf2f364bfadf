{{ config(materialized='view', tags=['page_error_rates', 'quarantine']) }}

{#- A view over the versions table of both page counters (see water_level_quarantine). -#}

with

page_count_versions as (

    select * from {{ ref('int_page_error_rates__versions') }}

),

quarantined_page_counts as (

    select
        source_table,
        event_id,
        page as series_key,
        event_time,
        cast(if(source_table = 'page_errors', error_count, view_count) as string) as raw_value,
        ingested_at,
        quarantine_reason,
        loaded_at as quarantined_at
    from page_count_versions
    where quarantine_reason is not null

)

select * from quarantined_page_counts
