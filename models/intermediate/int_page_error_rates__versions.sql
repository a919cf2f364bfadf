{#- on_schema_change fail: a versions table lacking a column of its staging model (an upgrade
    adding the quarantine reason, say) would silently drop it; refused, rebuild with --full-refresh. -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        on_schema_change='fail',
        tags=['late_data', 'late_data_versions', 'page_error_rates'],
        meta={'late_data_sources': ['page_errors', 'page_views'], 'late_data_role': 'versions'},
    )
}}

{#- Every version of both page counters delivered so far, in one relation (so one checksum covers a
    page's window whichever series changed), with the run time of the run that loaded it. -#}

with

page_errors as (

    select * from {{ ref('stg_web__page_errors') }}

),

page_views as (

    select * from {{ ref('stg_web__page_views') }}

),

delivered_versions as (

    {{ page_error_rates_union('page_errors', 'page_views', carried_columns=['quarantine_reason']) }}

),

new_versions as (

    {{ late_data_new_versions(
        'delivered_versions',
        version_columns=['source_table', 'event_id', 'page', 'event_time', 'error_count', 'view_count', 'ingested_at'],
        late_window_seconds=late_data_late_window_seconds(['page_errors', 'page_views']),
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
    quarantine_reason,
    {{ late_data_run_time() }} as loaded_at
from new_versions
