{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['partition_start'],
        on_schema_change='fail',
        tags=['late_data'],
        pre_hook="{{ late_data_delete_emptied_partitions(this, [ref('int_water_level_readings__windowed')]) }}",
    )
}}

{%- set checked_partitions = late_data_checked_partitions(this) if is_incremental() else none %}

with

window_checksums as (

    select * from {{ ref('int_water_level__window_checksums') }}
    {%- if is_incremental() %}
        where {{ checked_partitions }}
    {%- endif %}

),

stored_checksums as (

    -- On the first build nothing is stored, so every partition counts as changed.
    select
        window_start,
        location,
        partition_start,
        is_final,
        reading_count,
        readings_digest
    {%- if is_incremental() %}
        from {{ this }}
        where {{ checked_partitions }}
    {%- else %}
        from window_checksums
        where false
    {%- endif %}

),

changed_partitions as (

    {{ late_data_changed_partitions(
        fresh='window_checksums',
        stored='stored_checksums',
        key_columns=['window_start', 'location'],
        checksum_columns=['reading_count', 'readings_digest', 'is_final'],
    ) }}

),

windows_to_write as (

    select window_checksums.*
    from window_checksums
    left semi join changed_partitions
        on window_checksums.partition_start = changed_partitions.partition_start

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
