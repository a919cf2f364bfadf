{{ config(severity='warn') }}

-- Warns when rows arrived after their window became final: they count toward no window until a
-- deliberate backfill includes them. See water_level_too_late_readings for the rows.
select
    event_id,
    location,
    window_start,
    too_late_reason,
    seconds_after_final
from {{ ref('water_level_too_late_readings') }}
