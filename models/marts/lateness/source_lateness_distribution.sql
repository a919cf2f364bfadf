with

arrivals as (

    select * from {{ ref('int_late_data__arrivals') }}

),

counted_arrivals as (

    {{ late_data.counted_arrivals('arrivals') }}

),

distribution as (

    -- One row per source (series_key null) and one per source and series key.
    select
        source_table,
        series_key,
        count(*) as arrived_rows,
        percentile(lateness_seconds, array(0.5, 0.9, 0.99, 0.999)) as lateness_percentiles,
        max(lateness_seconds) as max_lateness_seconds
    from counted_arrivals
    group by grouping sets ((source_table), (source_table, series_key))

)

select
    source_table,
    series_key,
    arrived_rows,
    max_lateness_seconds,
    lateness_percentiles[0] as p50_lateness_seconds,
    lateness_percentiles[1] as p90_lateness_seconds,
    lateness_percentiles[2] as p99_lateness_seconds,
    lateness_percentiles[3] as p999_lateness_seconds
from distribution
