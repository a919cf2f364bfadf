"""Session windows recomputed from a pipeline's delivered versions, independently of the macros:
a plain Python walk over each event's versions, then over each series' counted events.

The contract (docs/design.md, "Sessions"):

- a version's final moment is its event time + the late window; judged at the earlier of the run
  time and that moment, a version counts when it had arrived and no later version of its event
  had (fixed windows judge a version at its window's final moment instead); a version that arrives
  after its own final moment is too late (`arrived_after_final`), one that arrives after the final
  moment of the version it replaces leaves that one counting (`replaces_final_version`);
- per series key, the counted events sorted by event time form bursts: an event within the gap
  of the one before it (event_time - previous <= gap, to the microsecond) belongs to its burst;
- with a maximum length M, a burst starting at s0 is cut at s0 + M, s0 + 2M, ...: the k-th session
  of the burst holds its events with floor((event_time - s0) / M) = k;
- a session starts at its first event time and ends at its last event time + gap; it is final
  once its end + the late window has passed (no version that can still count could touch it).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from late_data.oracles.contract import (
    ARRIVED_AFTER_FINAL,
    DIMENSION_CHANGE_AFTER_FINAL,
    INTEGER_TYPES,
    REPLACES_FINAL_VERSION,
    countable,
)
from late_data.runtime.timeutil import seconds_after


@dataclass(frozen=True)
class SessionVersion:
    """One delivered version: its event's key, its series' key, its times and the values it carries."""

    event: tuple[Any, ...]
    series: tuple[Any, ...]
    event_time: datetime
    ingested_at: datetime
    chain_key: tuple[Any, ...]  # the order of versions of one event: arrival, then event time and tie breakers
    values: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    late_window_seconds: int | None = None  # its source's, where a pipeline's sources have their own

    def final_moment(self, late_window_seconds: int) -> datetime:
        """The last moment a version of this event may arrive and count: its event time plus its
        source's late window (else the pipeline's)."""
        return self.event_time + timedelta(seconds=self.late_window_seconds or late_window_seconds)


@dataclass(frozen=True)
class TooLate:
    version: SessionVersion
    reason: str
    seconds_after_final: int
    missed_moment: datetime  # the event time of the version it could not change (its own, or the replaced one's)


@dataclass(frozen=True)
class Session:
    series: tuple[Any, ...]
    events: tuple[SessionVersion, ...]  # sorted by event time
    gap_seconds: int

    @property
    def start(self) -> datetime:
        return self.events[0].event_time

    @property
    def end(self) -> datetime:
        return self.events[-1].event_time + timedelta(seconds=self.gap_seconds)

    def final_at(self, late_window_seconds: int) -> datetime:
        return self.end + timedelta(seconds=late_window_seconds)


def counted_versions(
    versions: Iterable[SessionVersion], run_time: datetime, late_window_seconds: int
) -> tuple[list[SessionVersion], list[TooLate]]:
    """The versions that count as of `run_time`, and one too-late entry per version arrived by then
    and moment it could not change, with its reason and how many seconds after that moment's
    final it arrived. Each version is judged at the earlier of `run_time` and its own final moment
    (event time + late window): it counts when it had arrived by then and no later version of its
    event had. So a correction that arrives after the version it replaces became final leaves that
    one counting (`replaces_final_version`), and counts itself if it is in time for its own event
    time (else `arrived_after_final`), as fixed windows treat a correction into another window."""
    by_event: dict[tuple[Any, ...], list[SessionVersion]] = {}
    for version in versions:
        if version.ingested_at <= run_time:
            by_event.setdefault(version.event, []).append(version)
    counted: list[SessionVersion] = []
    too_late: list[TooLate] = []
    for chain in by_event.values():
        # Copies of one version delivered together are one version.
        ordered = sorted({v.chain_key: v for v in chain}.values(), key=lambda v: v.chain_key)
        for index, version in enumerate(ordered):
            own_final = version.final_moment(late_window_seconds)
            judged_at = min(run_time, own_final)
            following = ordered[index + 1] if index + 1 < len(ordered) else None
            if version.ingested_at <= judged_at and (following is None or following.ingested_at > judged_at):
                counted.append(version)
            # The version it replaces is the one before it; a replacement after that one's final
            # moment leaves it counting (and misses its moment).
            missed_replaced = None
            if index > 0:
                replaced = ordered[index - 1]
                replaced_final = replaced.final_moment(late_window_seconds)
                if version.ingested_at > replaced_final:
                    missed_replaced = replaced.event_time
                    too_late.append(
                        TooLate(
                            version,
                            REPLACES_FINAL_VERSION,
                            seconds_after(version.ingested_at, replaced_final),
                            replaced.event_time,
                        )
                    )
            if version.ingested_at > own_final and missed_replaced != version.event_time:
                too_late.append(
                    TooLate(
                        version, ARRIVED_AFTER_FINAL, seconds_after(version.ingested_at, own_final), version.event_time
                    )
                )
    return counted, too_late


def sessions_of_series(
    events: Sequence[SessionVersion], gap_seconds: int, max_session_seconds: int | None
) -> list[Session]:
    """The sessions of one series' counted events."""
    ordered = sorted(events, key=lambda v: (v.event_time, v.chain_key))
    # Exact timedeltas, as the macros compare microseconds: an event a microsecond beyond the gap starts a burst.
    gap = timedelta(seconds=gap_seconds)
    longest = timedelta(seconds=max_session_seconds) if max_session_seconds else None
    bursts: list[list[SessionVersion]] = []
    for event in ordered:
        if bursts and event.event_time - bursts[-1][-1].event_time <= gap:
            bursts[-1].append(event)
        else:
            bursts.append([event])
    sessions: list[Session] = []
    for burst in bursts:
        pieces: dict[int, list[SessionVersion]] = {}
        burst_start = burst[0].event_time
        for event in burst:
            piece = (event.event_time - burst_start) // longest if longest else 0
            pieces.setdefault(piece, []).append(event)
        for piece in sorted(pieces):
            sessions.append(Session(burst[0].series, tuple(pieces[piece]), gap_seconds))
    return sessions


def sessions_of(
    versions: Iterable[SessionVersion],
    run_time: datetime,
    gap_seconds: int,
    late_window_seconds: int,
    max_session_seconds: int | None = None,
) -> tuple[list[Session], list[TooLate]]:
    """Every session as of `run_time`, and the versions too late for it."""
    counted, too_late = counted_versions(versions, run_time, late_window_seconds)
    by_series: dict[tuple[Any, ...], list[SessionVersion]] = {}
    for version in counted:
        by_series.setdefault(version.series, []).append(version)
    sessions = [
        session
        for series_events in by_series.values()
        for session in sessions_of_series(series_events, gap_seconds, max_session_seconds)
    ]
    return sessions, too_late


def interpolated_percentile(values: Sequence[float], p: float) -> float | None:
    """The exact percentile `p` of `values`: at position (n - 1) * p of the sorted values, linear
    interpolation between the two closest ranks (what Spark's `percentile` documents)."""
    if not values:
        return None
    ordered = sorted(float(v) for v in values)
    position = (len(ordered) - 1) * p
    lower, upper = int(position // 1), int(-(-position // 1))
    if lower == upper:
        return ordered[lower]
    return (upper - position) * ordered[lower] + (position - lower) * ordered[upper]


def measure_value(kind: str, values: Sequence[Any], p: float | None = None) -> Any:
    """One measure over a session's values of its column (None values never reach here: a version
    with a null input is quarantined)."""
    if kind == "count":
        return len(values)
    if kind == "sum":
        return sum(values, Decimal(0)) if values and isinstance(values[0], Decimal) else sum(values)
    if kind == "mean":
        return sum(float(v) for v in values) / len(values)
    if kind == "min":
        return min(values)
    if kind == "max":
        return max(values)
    if kind == "count_distinct":
        return len(set(values))
    if kind in ("percentile", "median"):
        return interpolated_percentile(values, p if p is not None else 0.5)
    raise ValueError(f"no session oracle for measure kind {kind}")


# The Spark side: a pipeline's delivered versions (a DataFrame of its model's columns) in, its
# sessions and too-late entries out, in the shapes oracle.compare_windows and compare_too_late read.


def _session_versions(pipeline: Any, delivered: Any, run_time: datetime) -> Any:
    """An RDD of SessionVersion: the countable versions of `delivered` arrived by `run_time`, each
    input column of a sum over fractional values as the exact decimal the sums add."""
    from pyspark import cloudpickle
    from pyspark.sql import functions as F

    # Spark's Python workers need not have this package installed (another interpreter, a
    # cluster's executors): the functions and classes they run travel with the job.
    for module in (__name__, seconds_after.__module__):
        cloudpickle.register_pickle_by_value(sys.modules[module])  # type: ignore[no-untyped-call]
    types = dict(delivered.dtypes)
    inputs = list(dict.fromkeys(measure.column for measure in pipeline.measures if measure.column))
    exact = {
        measure.column
        for measure in pipeline.measures
        if measure.kind == "sum" and types[measure.column] not in INTEGER_TYPES
    }
    arrived = delivered.where(countable(delivered, pipeline)).where(F.col("ingested_at") <= F.lit(run_time))
    carried = [
        *[
            F.col(column)
            for column in dict.fromkeys([*inputs, *([pipeline.source_column] if pipeline.source_column else [])])
        ],
        # A version a dimension change made (dimension_oracle.replayed_versions) is listed as such.
        *([F.col("made_by_dimension")] if "made_by_dimension" in delivered.columns else []),
        *[F.col(column).cast("decimal(28,9)").alias(f"exact__{column}") for column in sorted(exact)],
    ]
    rows = arrived.select(
        F.struct(*pipeline.event_key).alias("event"),
        F.struct(*pipeline.series_key).alias("series"),
        "event_time",
        "ingested_at",
        F.struct("ingested_at", "event_time", *pipeline.tie_breaker).alias("chain_key"),
        # Spark serializes no struct without a field: a pipeline that only counts carries a placeholder.
        F.struct(*(carried or [F.lit(None).cast("boolean").alias("no_measured_column")])).alias("values"),
    )
    by_source = {source: seconds for source, seconds in pipeline.late_window_by_source.items() if source}
    source_column = pipeline.source_column
    return rows.rdd.map(
        lambda row: SessionVersion(
            tuple(row.event),
            tuple(row.series),
            row.event_time,
            row.ingested_at,
            tuple(row.chain_key),
            row["values"].asDict(),
            by_source.get(row["values"][source_column]) if source_column else None,
        )
    )


def _judged(pipeline: Any, delivered: Any, run_time: datetime, kind: str) -> Any:
    """An RDD of the counted versions (`kind` "counted") or too-late entries ("too_late") as of
    `run_time`, worked out per event (counted_versions)."""
    late = pipeline.late_window_seconds

    def judged(versions: Iterable[SessionVersion]) -> list[Any]:
        counted, too_late = counted_versions(versions, run_time, late)
        return counted if kind == "counted" else too_late

    return (
        _session_versions(pipeline, delivered, run_time)
        .groupBy(lambda version: version.event)
        .flatMap(lambda pair: judged(pair[1]))
    )


def session_windows_of(pipeline: Any, delivered: Any, run_time: datetime) -> Any:
    """Per session and series: the pipeline's measures over the versions of `delivered` that count
    as of `run_time`, with is_final, window_end and session_seconds, in the result's columns."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    gap, longest, late = pipeline.session_gap_seconds, pipeline.max_session_seconds, pipeline.late_window_seconds
    types = dict(delivered.dtypes)
    counted = _judged(pipeline, delivered, run_time, "counted")
    measures = [measure for measure in pipeline.measures if measure.kind != "expression"]
    # Plain tuples in what the workers run: they need not import this package's other modules.
    specs = [(measure.kind, measure.column, measure.p) for measure in measures]

    def session_rows(series_events: tuple[Any, Any]) -> list[tuple[Any, ...]]:
        rows = []
        for session in sessions_of_series(list(series_events[1]), gap, longest):
            values = []
            for kind, column, p in specs:
                if kind == "sum" and types[column] not in INTEGER_TYPES:
                    column = f"exact__{column}"
                inputs = [event.values[column] for event in session.events] if column else list(session.events)
                values.append(measure_value(kind, inputs, p))
            last = session.events[-1].event_time
            rows.append(
                (
                    session.start,
                    session.end,
                    *session.series,
                    *values,
                    (last - session.start).total_seconds(),
                    session.final_at(late) <= run_time,
                )
            )
        return rows

    sessions = counted.groupBy(lambda version: version.series).flatMap(session_rows)
    schema = {field.name: field.dataType for field in delivered.schema.fields}

    def measure_type(measure: Any) -> Any:
        if measure.kind in ("count", "count_distinct"):
            return T.LongType()
        if measure.kind == "sum":
            return T.LongType() if types[measure.column] in INTEGER_TYPES else T.DecimalType(38, 9)
        if measure.kind in ("min", "max"):
            return schema[measure.column]
        return T.DoubleType()

    fields = [
        T.StructField("window_start", T.TimestampType()),
        T.StructField("window_end", T.TimestampType()),
        *[T.StructField(column, schema[column]) for column in pipeline.series_key],
        *[T.StructField(measure.name, measure_type(measure)) for measure in measures],
        T.StructField("session_seconds", T.DoubleType()),
        T.StructField("is_final", T.BooleanType()),
    ]
    windows = delivered.sparkSession.createDataFrame(sessions, T.StructType(fields))
    for measure in pipeline.measures:
        if measure.kind == "expression":
            windows = windows.withColumn(measure.name, F.expr(measure.expression))
    return windows


def expected_session_too_late(pipeline: Any, delivered: Any, run_time: datetime) -> Any:
    """The entries a session pipeline's too-late listing holds after its run at `run_time`
    (counted_versions), in the columns oracle.compare_too_late reads: an entry's window_start is
    the moment it missed (its own event time, or the replaced version's)."""
    from pyspark.sql import types as T

    entries = _judged(pipeline, delivered, run_time, "too_late").map(
        lambda entry: (
            *entry.version.event,
            *entry.version.series,
            entry.version.event_time,
            entry.version.ingested_at,
            entry.missed_moment,
            DIMENSION_CHANGE_AFTER_FINAL if entry.version.values.get("made_by_dimension") else entry.reason,
            entry.seconds_after_final,
        )
    )
    schema = {field.name: field.dataType for field in delivered.schema.fields}
    series_only = [column for column in pipeline.series_key if column not in pipeline.event_key]
    fields = [
        *[T.StructField(column, schema[column]) for column in pipeline.event_key],
        *[T.StructField(f"series__{column}", schema[column]) for column in pipeline.series_key],
        T.StructField("event_time", T.TimestampType()),
        T.StructField("ingested_at", T.TimestampType()),
        T.StructField("window_start", T.TimestampType()),
        T.StructField("too_late_reason", T.StringType()),
        T.StructField("seconds_after_final", T.LongType()),
    ]
    frame = delivered.sparkSession.createDataFrame(entries, T.StructType(fields))
    for column in pipeline.series_key:
        if column in series_only:
            frame = frame.withColumnRenamed(f"series__{column}", column)
        else:
            frame = frame.drop(f"series__{column}")
    return frame
