{{
    config(
        materialized='incremental',
        incremental_strategy='microbatch',
        event_time='window_start',
        batch_size='day',
        begin='2020-01-01',
        lookback=2,
        partition_by=['window_start'],
        enabled=var('late_data_bench', false),
        tags=['bench'],
    )
}}

{#- The benchmark's peer of bench_daily_distinct_levels: dbt's microbatch strategy recomputing
    every daily batch of its range (the two days of the late window and today), the same rows
    counted (the product's version chain within the batch), the same distinct count. Not part of
    the product: enabled only with var late_data_bench. -#}

with

batch_readings as (

    select
        event_id,
        location,
        event_time,
        reading_value,
        ingested_at
    from {{ ref('int_water_level__windowed') }}

),

windowed_readings as (

    select
        *,
        timestamp_seconds(floor(unix_seconds(event_time) / 86400) * 86400) as window_start
    from batch_readings

),

reading_versions as (

    select
        *,
        window_start + interval 259200 second as final_at,
        lead(ingested_at) over (
            partition by event_id order by ingested_at, event_time, reading_value, location
        ) as superseded_at
    from windowed_readings

),

counted_readings as (

    select *
    from reading_versions
    where {{ late_data.counts_as_of(late_data.judged_at(late_data.run_time())) }}

),

daily_levels as (

    select
        window_start,
        location,
        count(*) as reading_count,
        count(distinct reading_value) as distinct_levels,
        max(final_at) <= {{ late_data.run_time() }} as is_final
    from counted_readings
    group by window_start, location

)

select * from daily_levels
