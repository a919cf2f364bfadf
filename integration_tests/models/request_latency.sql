{{ config(materialized='late_data') }}

select
    event_id,
    endpoint,
    event_time,
    latency_ms,
    ingested_at
from {{ source('web', 'requests') }}
