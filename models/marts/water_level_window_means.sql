{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['partition_start', 'series_bucket'],
        on_schema_change='ignore',
        tags=['late_data', 'water_level'],
        meta={'late_data_sources': ['water_level_readings'], 'late_data_role': 'windows'},
    )
}}

{#- A scheduled run starts from the reading versions that arrived since the previous run and
    rewrites only the partitions (time partition and location bucket) where a window changed or
    became final. -#}
{%- set late_window_seconds = late_data_late_window_seconds(['water_level_readings']) %}
{%- do late_data_check_version_counts(ref('int_water_level__version_counts')) %}
{%- set checksums = {
    'reading_count': late_data_count(),
    'value_sum': late_data_exact_sum('reading_value'),
    'readings_digest': late_data_digest(['event_id', 'event_time', 'reading_value']),
} %}

with

version_counts as (

    select * from {{ ref('int_water_level__version_counts') }}

),

window_checksums as (

    {{ late_data_window_checksums('version_counts', key_columns=['window_start', 'location'], checksums=checksums) }}

),

windows_to_write as (

    {{ late_data_windows_to_write(
        'window_checksums',
        key_columns=['window_start', 'location'],
        checksums=checksums,
        late_window_seconds=late_window_seconds,
    ) }}

),

window_means as (

    select
        window_start,
        {{ late_data_add_seconds('window_start', var('window_size_seconds')) }} as window_end,
        location,
        reading_count,
        cast(value_sum as double) / reading_count as mean_value,
        is_final,
        final_at,
        value_sum,
        readings_digest,
        computed_at,
        invocation_id,
        partition_start,
        series_bucket{{ late_data_write_columns() }}
    from windows_to_write

)

select * from window_means
