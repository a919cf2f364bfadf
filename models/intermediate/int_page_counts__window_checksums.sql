{{ config(materialized='ephemeral') }}

{#- Ephemeral for the same reason as int_water_level__window_checksums: it depends on the run time.
    A page's window is final only when both series' late windows have passed. -#}
{%- set late_window_seconds = late_data_late_window_seconds(['page_errors', 'page_views']) %}
{%- set seconds_until_final = var('window_size_seconds') + late_window_seconds %}

with

page_count_versions as (

    {{ late_data_version_chain(
        ref('int_page_counts__scanned'),
        event_key_columns=['source_table', 'event_id'],
        tie_breaker_columns=['error_count', 'view_count', 'page'],
    ) }}

),

counted_page_counts as (

    select *
    from page_count_versions
    where {{ late_data_counts_as_of(late_data_run_time()) }}

),

window_checksums as (

    select
        window_start,
        page,
        {{ late_data_add_seconds('window_start', seconds_until_final) }} as final_at,
        count(*) as counted_rows,
        sum(error_count) as error_count,
        sum(view_count) as view_count,
        {{ late_data_digest(['source_table', 'event_id', 'event_time', 'error_count', 'view_count']) }}
            as counts_digest
    from counted_page_counts
    group by window_start, page

)

select
    *,
    final_at <= {{ late_data_run_time() }} as is_final
from window_checksums
