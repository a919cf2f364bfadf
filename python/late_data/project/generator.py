"""Deterministic generator for the water-level scenario (a public InfluxDB how-to's scenario).

Every `reading_interval_seconds` each location writes one on-time reading and, with probability
`late_share`, one late reading whose event time lies up to `max_lateness_seconds` in the past.
Optionally it also writes corrections of earlier readings (same event_id, new value, sometimes a
moved event time), readings later than the late window and malformed versions that must be
quarantined (MALFORMED_KINDS: NaN, infinities, values beyond the exact sum, nulls). Every random draw is a hash of
(seed, tick, location, purpose), so the data does not depend on how time is cut into batches.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from late_data.runtime.timeutil import epoch_seconds

LATENESS_PROFILES = ("uniform", "long_tail")
# The event ids the generator writes (water levels: wl-, page errors: pe-, page views: pv-), as a
# regular expression: how a resumed schedule tells its own feed's rows from rows written by hand.
GENERATED_EVENT_ID = "^(wl|pe|pv)-"

# Malformed row versions the generator can write, each a resend of a tick's reading (same event_id,
# ingested a moment later) unless its event_id or location is the null: each must count toward no
# window, and must not replace the good version it resends.
MALFORMED_KINDS = (
    ("not_finite", "event_id", "location", "event_time", "double('NaN')", "ingested_at"),
    ("not_finite", "event_id", "location", "event_time", "double('Infinity')", "ingested_at"),
    ("not_finite", "event_id", "location", "event_time", "double('-Infinity')", "ingested_at"),
    ("out_of_range", "event_id", "location", "event_time", "1e20D", "ingested_at"),
    ("out_of_range", "event_id", "location", "event_time", "-1.7e308D", "ingested_at"),
    ("null_value", "event_id", "location", "event_time", "cast(null as double)", "ingested_at"),
    ("null_event_id", "cast(null as string)", "location", "event_time", "value", "ingested_at"),
    ("null_location", "event_id", "cast(null as string)", "event_time", "value", "ingested_at"),
    ("null_event_time", "event_id", "location", "cast(null as timestamp)", "value", "ingested_at"),
    ("null_ingested_at", "event_id", "location", "event_time", "value", "cast(null as timestamp)"),
)


def _check_scenario(scenario: Scenario | PageScenario, shares: tuple[str, ...], positive: tuple[str, ...]) -> None:
    """Refuse a scenario with an unknown lateness profile, a share outside [0, 1] or a count below 1."""
    lateness = scenario.lateness
    if lateness not in LATENESS_PROFILES:
        raise ValueError(f"lateness must be one of {LATENESS_PROFILES}, not {lateness!r}")
    for name in shares:
        if not 0.0 <= getattr(scenario, name) <= 1.0:
            raise ValueError(f"{name} must lie in [0, 1], not {getattr(scenario, name)}")
    if any(getattr(scenario, name) < 1 for name in positive):
        raise ValueError(f"{' and '.join(positive)} must be positive")


@dataclass(frozen=True)
class Scenario:
    locations: int = 100
    reading_interval_seconds: int = 10
    late_share: float = 1.0
    lateness: str = "uniform"
    max_lateness_seconds: int = 3600
    correction_share: float = 0.0
    moved_correction_share: float = 0.0
    too_late_share: float = 0.0
    late_window_seconds: int = 3600
    window_size_seconds: int = 60
    malformed_share: float = 0.0
    # With both set, each location sends for active_seconds, then nothing for idle_seconds, and so
    # on, its phase its own: bursts with gaps for session windows (0: always sending). A late or
    # corrected version sent during an active spell may fall anywhere, idle spells included.
    active_seconds: int = 0
    idle_seconds: int = 0
    seed: int = 42

    def __post_init__(self) -> None:
        _check_scenario(
            self,
            shares=("late_share", "correction_share", "moved_correction_share", "too_late_share", "malformed_share"),
            positive=("locations", "reading_interval_seconds"),
        )
        if (self.active_seconds > 0) != (self.idle_seconds > 0) or min(self.active_seconds, self.idle_seconds) < 0:
            raise ValueError(
                f"active_seconds={self.active_seconds} and idle_seconds={self.idle_seconds}: both positive or both 0"
            )


def _uniform(scenario: Scenario, purpose: str) -> str:
    """SQL for a uniform draw in [0, 1) fixed by (seed, tick, location, purpose)."""
    return (
        f"((xxhash64({scenario.seed}, tick_epoch, location_index, '{purpose}') & 9007199254740991) / 9007199254740992D)"
    )


def _level(epoch_expression: str) -> str:
    """A smooth, location-specific water level, rounded to millimetres."""
    return f"round(5 + (location_index % 17) * 0.25 + 0.8 * sin({epoch_expression} / 1800.0 + location_index), 3)"


def _active_only(scenario: Scenario) -> str:
    """The grid's condition for sending only in a location's active spells (none when always active)."""
    if not scenario.active_seconds:
        return ""
    period = scenario.active_seconds + scenario.idle_seconds
    return f" and pmod(tick_epoch + location_index * 7919, {period}) < {scenario.active_seconds}"


def generate_sql(scenario: Scenario, origin: datetime, start: datetime, end: datetime) -> str:
    """SQL for all rows the scenario writes in [start, end) (by tick); `origin` is the first tick ever."""
    interval = scenario.reading_interval_seconds
    first_tick = -(-epoch_seconds(start) // interval) * interval
    last_tick = epoch_seconds(end) - 1
    origin_epoch = epoch_seconds(origin)

    def u(purpose: str) -> str:
        return _uniform(scenario, purpose)

    if scenario.lateness == "uniform":
        lateness = f"{u('lateness')} * {scenario.max_lateness_seconds}"
    else:
        lateness = f"pow({u('lateness')}, 6) * {scenario.max_lateness_seconds}"
    delay_ms = f"cast({u('delay')} * {min(2, interval) * 1000} as bigint)"
    ingested = f"timestamp_millis(tick_epoch * 1000 + {delay_ms})"
    location = "concat('loc-', lpad(cast(location_index as string), 5, '0'))"
    age_ticks = max(1, scenario.late_window_seconds // interval)
    corrected_tick = f"(tick_epoch - (1 + floor({u('correction_age')} * {age_ticks})) * {interval})"
    too_late_epoch = (
        f"(tick_epoch - {scenario.late_window_seconds + scenario.window_size_seconds}"
        f" - floor({u('too_late')} * {scenario.late_window_seconds}))"
    )
    malformed_columns = ", ".join(
        "case kind "
        + " ".join(f"when {kind} then {columns[position]}" for kind, columns in enumerate(MALFORMED_KINDS))
        + f" end as {name}"
        for position, name in enumerate(("event_id", "location", "event_time", "value", "ingested_at"), start=1)
    )
    return f"""
with grid as (
    select tick_epoch, location_index
    from (select explode(sequence({first_tick}L, {last_tick}L, {interval}L)) as tick_epoch)
    cross join (select id as location_index from range({scenario.locations}))
    where {first_tick} <= {last_tick}{_active_only(scenario)}
),
on_time as (
    select concat('wl-', location_index, '-', tick_epoch) as event_id, {location} as location,
        timestamp_seconds(tick_epoch) as event_time, {_level("tick_epoch")} as value,
        {ingested} as ingested_at
    from grid
),
late as (
    select concat('wl-late-', location_index, '-', tick_epoch) as event_id, {location} as location,
        timestamp_seconds(tick_epoch - {lateness}) as event_time,
        {_level(f"(tick_epoch - {lateness})")} as value, {ingested} as ingested_at
    from grid
    where {u("is_late")} < {scenario.late_share}
),
corrections as (
    select concat('wl-', location_index, '-', {corrected_tick}) as event_id, {location} as location,
        timestamp_seconds({corrected_tick}
            + if({u("moved")} < {scenario.moved_correction_share}, {scenario.window_size_seconds}, 0))
            as event_time,
        round({_level(corrected_tick)} + 0.05 + {u("correction")} * 0.5, 3) as value,
        {ingested} as ingested_at
    from grid
    where {u("is_correction")} < {scenario.correction_share} and {corrected_tick} >= {origin_epoch}
),
too_late as (
    select concat('wl-tl-', location_index, '-', tick_epoch) as event_id, {location} as location,
        timestamp_seconds({too_late_epoch}) as event_time, {_level(too_late_epoch)} as value,
        {ingested} as ingested_at
    from grid
    where {u("is_too_late")} < {scenario.too_late_share}
),
malformed as (
    select {malformed_columns}
    from (
        select concat('wl-', location_index, '-', tick_epoch) as event_id, {location} as location,
            timestamp_seconds(tick_epoch) as event_time, {_level("tick_epoch")} as value,
            {ingested} + interval 1 millisecond as ingested_at,
            cast(floor({u("malformed_kind")} * {len(MALFORMED_KINDS)}) as int) as kind
        from grid
        where {u("is_malformed")} < {scenario.malformed_share}
    )
)
select * from on_time
union all select * from late
union all select * from corrections
union all select * from too_late
union all select * from malformed
"""


def generate(spark: Any, table: str, scenario: Scenario, origin: datetime, start: datetime, end: datetime) -> int:
    """Append the scenario's rows for ticks in [start, end) to `table`; returns the row count."""
    batch = spark.sql(generate_sql(scenario, origin, start, end)).cache()
    try:
        rows: int = batch.count()
        batch.writeTo(table).append()
    finally:
        batch.unpersist()
    return rows


@dataclass(frozen=True)
class PageScenario:
    """Per page, every `reading_interval_seconds`: a count of page views without an error and a
    count with one (a row only when the count is above 0). Both follow random walks: the view
    level and the error share each move by a random step per tick. A share `late_share` of rows
    arrives late (lateness drawn as in Scenario), `too_late_share` after the late window."""

    pages: int = 20
    reading_interval_seconds: int = 10
    late_share: float = 0.2
    lateness: str = "uniform"
    max_lateness_seconds: int = 3600
    too_late_share: float = 0.0
    late_window_seconds: int = 3600
    window_size_seconds: int = 60
    seed: int = 7

    def __post_init__(self) -> None:
        _check_scenario(self, shares=("late_share", "too_late_share"), positive=("pages", "reading_interval_seconds"))


def page_counts_sql(scenario: PageScenario, origin: datetime, start: datetime, end: datetime) -> str:
    """SQL for the page-count rows that arrive in [start, end), columns as the raw tables plus
    `source_table`. The walks are cumulative sums from `origin`, so the data does not depend on
    how time is cut into batches."""
    interval = scenario.reading_interval_seconds
    first_tick = -(-epoch_seconds(origin) // interval) * interval
    last_tick = epoch_seconds(end) - 1

    def u(purpose: str) -> str:
        """A uniform draw in [0, 1) fixed by (seed, tick, page, series, purpose)."""
        return (
            f"((xxhash64({scenario.seed}, tick_epoch, page_index, source_table, '{purpose}') & 9007199254740991)"
            " / 9007199254740992D)"
        )

    lateness = f"{u('lateness')}" if scenario.lateness == "uniform" else f"pow({u('lateness')}, 6)"
    too_late = scenario.late_window_seconds + scenario.window_size_seconds
    delay_ms = f"""cast(1000 * case
            when {u("is_too_late")} < {scenario.too_late_share}
                then {too_late} + {u("too_late")} * {scenario.late_window_seconds}
            when {u("is_late")} < {scenario.late_share} then {lateness} * {scenario.max_lateness_seconds}
            else {u("delay")} * {min(2, interval)}
        end as bigint)"""
    page = "concat('/page-', lpad(cast(page_index as string), 3, '0'))"
    return f"""
with walks as (
    select
        tick_epoch,
        page_index,
        sum({u("view_step")} - 0.5) over page_ticks as view_walk,
        sum({u("error_step")} - 0.5) over page_ticks as error_walk
    from (select explode(sequence({first_tick}L, {last_tick}L, {interval}L)) as tick_epoch)
    cross join (select id as page_index, 'walk' as source_table from range({scenario.pages}))
    where {first_tick} <= {last_tick}
    window page_ticks as (partition by page_index order by tick_epoch)
),
counts as (
    select
        tick_epoch,
        page_index,
        cast(round(abs(10 + (page_index % 7) * 5 + 4 * view_walk)) as bigint) as views,
        0.08 * abs(sin(error_walk / 3 + page_index)) as error_share
    from walks
),
series as (
    select tick_epoch, page_index, 'page_views' as source_table, views as value from counts
    union all
    select tick_epoch, page_index, 'page_errors' as source_table,
        cast(round(views * error_share / (1 - error_share)) as bigint) as value
    from counts
),
delivered as (
    select
        source_table,
        concat(if(source_table = 'page_errors', 'pe-', 'pv-'), page_index, '-', tick_epoch) as event_id,
        {page} as page,
        timestamp_seconds(tick_epoch) as event_time,
        value,
        timestamp_millis(tick_epoch * 1000 + {delay_ms}) as ingested_at
    from series
    where value > 0
)
select * from delivered
where ingested_at >= timestamp'{start:%Y-%m-%d %H:%M:%S}' and ingested_at < timestamp'{end:%Y-%m-%d %H:%M:%S}'
"""


def generate_page_counts(
    spark: Any, tables: dict[str, str], scenario: PageScenario, origin: datetime, start: datetime, end: datetime
) -> int:
    """Append the page counts arriving in [start, end) to tables['page_errors'] and
    tables['page_views']; returns the row count."""
    batch = spark.sql(page_counts_sql(scenario, origin, start, end)).cache()
    try:
        rows: int = batch.count()
        for source_table in ("page_errors", "page_views"):
            batch.where(f"source_table = '{source_table}'").drop("source_table").writeTo(tables[source_table]).append()
    finally:
        batch.unpersist()
    return rows
