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

{#- The benchmark's peer of water_level_window_means: dbt's own microbatch strategy, recomputing
    every hourly batch in its range (the benchmark passes --event-time-start/--event-time-end
    covering the late window), changed or not. Same rows counted, same means. dbt filters its
    input to the batch by event_time (the upstream's event_time config), the way a dbt user would
    write it; that is generous to microbatch: it chains versions within the batch only, so a
    correction moving a reading into another hour would be missed (the benchmark's data has
    none). Not part of the product: enabled only with var late_data_bench. -#}

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

window_means as (

    select
        window_start,
        location,
        partition_start,
        count(*) as reading_count,
        cast(sum(cast(reading_value as decimal(28, 9))) as double) / count(*) as mean_value,
        max(final_at) <= {{ late_data.run_time() }} as is_final
    from counted_readings
    group by window_start, location, partition_start

)

select * from window_means
