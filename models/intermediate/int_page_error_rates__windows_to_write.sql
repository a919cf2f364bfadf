{{
    config(
        materialized='ephemeral',
        tags=['late_data', 'page_error_rates'],
    )
}}

{#- The fresh-versus-stored comparison of page_error_rates, as int_water_level__windows_to_write
    makes it for the water levels, over both page series in one relation: one checksum set covers a
    page's window whichever series changed. Ephemeral: it runs inside the model it feeds, whose
    stored rows it reads. -#}
{%- set result = late_data_model_relation('page_error_rates') %}
{%- set checksums = {
    'counted_rows': late_data_count(),
    'error_count': late_data_integer_sum('error_count'),
    'view_count': late_data_integer_sum('view_count'),
    'counts_digest': late_data_digest(['source_table', 'event_id', 'event_time', 'error_count', 'view_count']),
} %}

with

version_counts as (

    select * from {{ ref('int_page_error_rates__version_counts') }}

),

window_checksums as (

    {{ late_data_window_checksums(
        'version_counts', result, key_columns=['window_start', 'page'], checksums=checksums,
    ) }}

),

windows_to_write as (

    {{ late_data_windows_to_write(
        'window_checksums',
        result,
        key_columns=['window_start', 'page'],
        checksums=checksums,
        late_window_seconds=late_data_late_window_seconds(['page_errors', 'page_views']),
    ) }}

)

select * from windows_to_write
