{{ config(materialized='ephemeral') }}

{#- Ephemeral: it depends on the run time and reads only the run's scan horizon, so it is inlined
    into each run's query instead of being kept as a view that could go stale. -#}

with

reading_versions as (

    {{ late_data_version_chain(
        ref('int_water_level_readings__scanned'), tie_breaker_columns=['reading_value', 'location'],
    ) }}

),

counted_readings as (

    select *
    from reading_versions
    where {{ late_data_counts_as_of(late_data_run_time()) }}

),

window_checksums as (

    select
        window_start,
        location,
        final_at,
        final_at <= {{ late_data_run_time() }} as is_final,
        count(*) as reading_count,
        {{ late_data_exact_sum('reading_value') }} as value_sum,
        {{ late_data_digest(['event_id', 'event_time', 'reading_value']) }} as readings_digest
    from counted_readings
    group by window_start, location, final_at

)

select * from window_checksums
