{{
    config(
        materialized='ephemeral',
        tags=['late_data', 'water_level'],
    )
}}

{#- The fresh-versus-stored comparison of water_level_window_means: per window, the checksums of
    the reading versions that count now and of what changed since that model's previous run, set
    against the checksums it stores; the rows of the partitions (time partition and location
    bucket) where a window changed or became final. Ephemeral: it runs inside the model it feeds,
    whose stored rows it reads (a ref to that model would be a cycle). -#}
{%- set result = late_data_model_relation('water_level_window_means') %}
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

    {{ late_data_window_checksums(
        'version_counts', result, key_columns=['window_start', 'location'], checksums=checksums,
    ) }}

),

windows_to_write as (

    {{ late_data_windows_to_write(
        'window_checksums',
        result,
        key_columns=['window_start', 'location'],
        checksums=checksums,
        late_window_seconds=late_data_late_window_seconds(['water_level_readings']),
    ) }}

)

select * from windows_to_write
