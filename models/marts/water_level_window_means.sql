{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['partition_start', 'series_bucket'],
        on_schema_change='fail',
        tags=['late_data', 'water_level'],
        meta={'late_data_sources': ['water_level_readings'], 'late_data_role': 'windows'},
    )
}}

{#- A scheduled run starts from the reading versions that arrived since the previous run and
    rewrites only the partitions (time partition and location bucket) where a window changed or
    became final: int_water_level__windows_to_write compares and selects them. -#}

with

windows_to_write as (

    select * from {{ ref('int_water_level__windows_to_write') }}

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
        written_at,
        partition_start,
        series_bucket{{ late_data_write_columns() }}
    from windows_to_write

)

select * from window_means
