{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['partition_start'],
        on_schema_change='fail',
        tags=['late_data', 'water_level'],
        meta={'late_data_sources': ['water_level_readings']},
    )
}}

{#- Only the partitions whose input changed since the last run (all of them on the first build). -#}

with

windows_to_write as (

    {{ late_data_windows_to_write(
        ref('int_water_level__window_checksums'),
        key_columns=['window_start', 'location'],
        checksum_columns=['reading_count', 'readings_digest', 'is_final'],
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
        {{ late_data_run_time() }} as computed_at,
        '{{ invocation_id }}' as invocation_id,
        partition_start
    from windows_to_write

)

select * from window_means
