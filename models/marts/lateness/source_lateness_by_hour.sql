with

arrivals as (

    select * from {{ ref('int_late_data__arrivals') }}

),

hourly as (

    select
        source_table,
        date_trunc('hour', ingested_at) as arrival_hour,
        count(*) as arrived_rows,
        count_if(ingested_at > window_end) as late_rows,
        count_if(ingested_at > final_at) as too_late_rows
    from arrivals
    group by source_table, date_trunc('hour', ingested_at)

)

select
    source_table,
    arrival_hour,
    arrived_rows,
    late_rows,
    too_late_rows,
    late_rows / arrived_rows as late_share,
    too_late_rows / arrived_rows as too_late_share
from hourly
