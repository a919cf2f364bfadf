{{ config(materialized='late_data') }}

select
    event_id,
    visitor_id,
    page,
    event_time,
    dwell_seconds,
    ingested_at
from {{ source('site', 'page_views') }}
