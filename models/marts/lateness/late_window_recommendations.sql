{#- A row counts toward its window if it arrives by window end + late window, so the smallest late
    window that captures a share s of the rows is the smallest observed seconds_after_window_end
    whose cumulative share reaches s, rounded up to whole seconds. -#}
{%- set target_share = late_data.target_share() %}

with

arrivals as (

    select * from {{ ref('int_late_data__arrivals') }}

),

ranked_arrivals as (

    select
        source_table,
        seconds_after_window_end,
        cume_dist() over (partition by source_table order by seconds_after_window_end) as cumulative_share
    from arrivals

),

target_quantiles as (

    select
        source_table,
        min(seconds_after_window_end) as target_quantile_seconds
    from ranked_arrivals
    where cumulative_share >= {{ target_share }}
    group by source_table

),

per_source as (

    select
        source_table,
        count(*) as arrived_rows,
        max(late_window_seconds) as configured_late_window_seconds,
        avg(cast(seconds_after_window_end <= late_window_seconds as int)) as configured_captured_share
    from arrivals
    group by source_table

)

select
    per_source.source_table,
    per_source.arrived_rows,
    {{ target_share }} as target_share,
    per_source.configured_late_window_seconds,
    per_source.configured_captured_share,
    greatest(0, cast(ceil(target_quantiles.target_quantile_seconds) as bigint)) as recommended_late_window_seconds,
    per_source.configured_captured_share >= {{ target_share }} as configured_meets_target
from per_source
inner join target_quantiles on per_source.source_table = target_quantiles.source_table
