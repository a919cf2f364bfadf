{{
    config(
        materialized='incremental',
        incremental_strategy='microbatch',
        event_time='window_start',
        batch_size='hour',
        begin='2020-01-01',
        lookback=1,
        partition_by=['partition_start'],
        enabled=var('late_data_bench', false),
        tags=['bench'],
    )
}}

{#- The benchmark's peer of bench_water_level_percentiles: dbt's microbatch strategy recomputing
    every hourly batch of its range, the same rows counted (the product's version chain within the
    batch, as water_level_window_means_microbatch does), the same exact percentiles. Not part of the
    product: enabled only with var late_data_bench. -#}

with

batch_readings as (

    select * from {{ ref('int_water_level__windowed') }}

),

reading_versions as (

    -- The same version chain as the product's: the next version of the event supersedes.
    select
        *,
        lead(ingested_at) over (
            partition by event_id order by ingested_at, event_time, reading_value, location
        ) as superseded_at
    from batch_readings

),

counted_readings as (

    select *
    from reading_versions
    where {{ late_data.counts_as_of(late_data.judged_at(late_data.run_time())) }}

),

window_percentiles as (

    select
        window_start,
        location,
        partition_start,
        count(*) as reading_count,
        percentile(reading_value, 0.5) as p50_value,
        percentile(reading_value, 0.95) as p95_value,
        max(final_at) <= {{ late_data.run_time() }} as is_final
    from counted_readings
    group by window_start, location, partition_start

)

select * from window_percentiles
