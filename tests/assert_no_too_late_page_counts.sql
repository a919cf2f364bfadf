{{ config(severity='warn') }}

-- Warns when rows arrived after their window became final: they count toward no window until a
-- deliberate backfill includes them. See page_error_rates_too_late_counts for the rows.
select
    event_id,
    source_table,
    page,
    window_start,
    too_late_reason,
    seconds_after_final
from {{ ref('page_error_rates_too_late_counts') }}
