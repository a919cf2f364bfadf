"""Time as this project passes it around: naive datetimes in UTC, floored to grid steps counted from the
Unix epoch, written as 'YYYY-MM-DD HH:MM:SS' for dbt vars and SQL literals.

One module so that the Python side floors, parses and formats exactly as the dbt macros do
(`late_data.parse_time`, the partition and window arithmetic over `unix_seconds`): an oracle or a
scheduler that rounded differently would disagree with the models it checks.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

# Naive, like every timestamp here: Spark's session time zone is pinned to UTC (profiles.yml).
EPOCH = datetime(1970, 1, 1)
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S"


def _step(size: timedelta | float) -> timedelta:
    step = size if isinstance(size, timedelta) else timedelta(seconds=size)
    if step <= timedelta(0):
        raise ValueError(f"a grid step must be positive, not {size}")
    return step


def floor_to(moment: datetime, size: timedelta | float) -> datetime:
    """The start of the `size`-long grid cell (seconds or a timedelta, counted from the epoch) that
    holds `moment`: a window's or partition's start, as the models compute it from unix_seconds."""
    step = _step(size)
    return EPOCH + (moment - EPOCH) // step * step


def ceil_to(moment: datetime, size: timedelta | float) -> datetime:
    """`moment` if it lies on the grid, else the next grid point."""
    floor = floor_to(moment, size)
    return floor if floor == moment else floor + _step(size)


def epoch_seconds(moment: datetime) -> int:
    """Whole seconds since the epoch of a naive UTC datetime (the generator's tick numbers)."""
    return int(moment.replace(tzinfo=UTC).timestamp())


def parse_timestamp(text: str) -> datetime:
    """A naive UTC datetime from ISO 8601 text ('2026-01-01 00:00:00', '...T00:00:00Z',
    '...+02:00'). An offset is converted to UTC, not dropped, as the macro late_data.parse_time
    does for dbt vars: the same text means the same instant on both sides. Raises ValueError."""
    parsed = datetime.fromisoformat(text.strip())
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    return parsed


def format_timestamp(moment: datetime) -> str:
    """'YYYY-MM-DD HH:MM:SS': what the dbt vars (run_time, backfill bounds) and `timestamp'...'`
    literals take. Sub-seconds are dropped: run times are whole seconds."""
    return moment.strftime(TIMESTAMP_FORMAT)


def utc_now() -> datetime:
    """Now, naive UTC, whole seconds: a default run time."""
    return datetime.now(UTC).replace(tzinfo=None, microsecond=0)


def seconds_after(later: datetime, earlier: datetime) -> int:
    """Whole seconds from `earlier` to `later`, rounded up from the exact (microsecond) difference:
    a too-late entry's `seconds_after_final`, as the listing computes it (late_data.too_late_versions),
    so 0.2 s after a window became final is 1, never 0."""
    return -((earlier - later) // timedelta(seconds=1))
