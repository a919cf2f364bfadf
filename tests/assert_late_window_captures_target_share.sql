{{ config(severity='warn') }}

-- Warns when a source's configured late window would have captured less than the target share of
-- its rows (var late_window_target_share, default 0.999): rows beyond it are too late and count
-- toward no window. Raise the source's late window to recommended_late_window_seconds
-- (var late_window_seconds_by_source).
select
    source_table,
    configured_late_window_seconds,
    configured_captured_share,
    recommended_late_window_seconds
from {{ ref('late_window_recommendations') }}
where not configured_meets_target
