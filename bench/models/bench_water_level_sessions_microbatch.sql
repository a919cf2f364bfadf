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

{#- The benchmark's peer of bench_water_level_sessions: dbt's microbatch strategy recomputing the
    sessions that start in each hourly batch of its range, as a dbt user would write it to be
    right: the batch's readings from one gap before it (whether a session starts in the batch
    depends on the reading before), up to the run time (a session ends where its readings end),
    the same versions counted, the same bounds. The benchmark picks the range: the late window,
    one gap and one hour more (sessions that started earlier but can still change). Not part of
    the product: enabled only with var late_data_bench. -#}

{%- set pipeline = late_data.pipeline_named(
    'bench_water_level_sessions', stand_in={'session_gap_seconds': 120, 'series_key': ['location']}
) -%}
{#- The batch's bounds (none while dbt parses). -#}
{%- set batch = model.get('batch') or {} -%}
{%- set batch_start = "timestamp'" ~ (batch.get('event_time_start') or '2020-01-01') ~ "'" -%}
{%- set batch_end = "timestamp'" ~ (batch.get('event_time_end') or '2020-01-01') ~ "'" -%}

with

readings as (

    select * from {{ ref('stg_sensors__water_level_readings') }}

),

batch_readings as (

    select *
    from readings
    where
        quarantine_reason is null
        and event_time >= {{ batch_start }} - interval {{ pipeline.session_gap }} seconds

),

reading_versions as (

    -- The same version chain as the product's: the next version of the event supersedes.
    select
        *,
        event_time + interval {{ pipeline.late_window }} seconds as final_at,
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

session_starts as (

    select
        *,
        coalesce(
            event_time > lag(event_time) over (partition by location order by event_time, event_id)
            + interval {{ pipeline.session_gap }} seconds,
            true
        ) as starts_session
    from counted_readings

),

numbered_readings as (

    select
        *,
        sum(cast(starts_session as int)) over (
            partition by location order by event_time, event_id rows unbounded preceding
        ) as session_number
    from session_starts

),

sessions as (

    select
        location,
        min(event_time) as window_start,
        max(event_time) + interval {{ pipeline.session_gap }} seconds as window_end,
        count(*) as reading_count,
        cast(sum(cast(reading_value as decimal(28, 9))) as double) / count(*) as mean_value,
        max(final_at) + interval {{ pipeline.session_gap }} seconds <= {{ late_data.run_time() }} as is_final
    from numbered_readings
    group by location, session_number

)

select
    window_start,
    location,
    {{ late_data.time_bucket('window_start', pipeline.partition_size) }} as partition_start,
    window_end,
    reading_count,
    mean_value,
    is_final
from sessions
where window_start >= {{ batch_start }} and window_start < {{ batch_end }}
