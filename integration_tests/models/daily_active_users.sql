{{ config(materialized='late_data') }}

select
    event_id,
    app,
    user_id,
    event_time,
    ingested_at
from {{ source('apps', 'app_events') }}
