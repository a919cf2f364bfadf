{{ config(materialized='late_data') }}

select
    event_id,
    meter_id,
    event_time,
    kwh,
    ingested_at
from {{ source('meters', 'meter_readings') }}
