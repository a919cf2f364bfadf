"""The benchmark's cells (series, hours, lateness, late window) and strategies, named once: the
matrices `make bench` measures, the peer models each strategy is timed against, and the results' records."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

BENCH_ORIGIN = datetime(2026, 6, 1)


BENCH_LATENESS: dict[str, dict[str, Any]] = {
    # Every 10 s each location sends one reading from anywhere in its late window: nearly every window changes.
    "heavy": {"late_share": 1.0, "lateness": "uniform"},
    # About 1 % of readings late, long-tailed.
    "sparse": {"late_share": 0.01, "lateness": "long_tail"},
}
# Four ways to keep water_level_window_means right, then this project's whole scheduled run and
# its history snapshot's share of it.
OURS = "late_data"
STRATEGIES = (OURS, "microbatch", "full_refresh", "floor")
WHOLE_RUN = "whole_run"
# The same whole run with dbt on the `thrift` target (`late-data bench --thrift`, cluster up).
THRIFT_WHOLE_RUN = "thrift_whole_run"
# The same whole run as plain dbt from cron: `dbt build` in a process of its own each time, which
# starts a JVM (on the embedded target) and reuses dbt's partial parse (the warm scheduler pays both
# once); and on the `thrift` target, where the Thrift Server's JVM is already warm.
PLAIN_DBT_WHOLE_RUN = "plain_dbt_whole_run"
PLAIN_DBT_THRIFT_WHOLE_RUN = "plain_dbt_thrift_whole_run"
THRIFT_STRATEGIES = (THRIFT_WHOLE_RUN, PLAIN_DBT_THRIFT_WHOLE_RUN)
HISTORY_SNAPSHOT = "history_snapshot"
# The product's window size, 10-minute partitions; the late window is the cell's.
BENCH_VARS = {"window_size_seconds": 60, "partition_size_seconds": 600, "late_data_bench": True}
MEANS = "water_level_window_means"
HISTORY = "water_level_window_means_history"
HISTORY_TABLE = f"{HISTORY}__closed"  # a history is a view of its closed versions and the result
MICROBATCH = "water_level_window_means_microbatch"
FLOOR = "bench_floor_window_means"
# Measures no checksum updates, on the same readings: percentiles (this project against microbatch
# computing the same ones) and a min and max (this project), each a pipeline of the bench's own.
PERCENTILES = "bench_water_level_percentiles"
PERCENTILES_MICROBATCH = "bench_water_level_percentiles_microbatch"
EXTREMES = "bench_water_level_extremes"
OURS_PERCENTILES, MICROBATCH_PERCENTILES, OURS_EXTREMES = (
    "late_data_percentiles",
    "microbatch_percentiles",
    "late_data_extremes",
)
MEASURE_STRATEGIES = (OURS_PERCENTILES, MICROBATCH_PERCENTILES, OURS_EXTREMES)
MEASURE_TABLES = {
    OURS_PERCENTILES: PERCENTILES,
    MICROBATCH_PERCENTILES: PERCENTILES_MICROBATCH,
    OURS_EXTREMES: EXTREMES,
}
# The cells that measure them besides the means: at a 1 h late window, and at 24 h, where microbatch
# recomputes every hourly batch of the late window.
MEASURE_CELLS = {(1_000, 2.0, "sparse", 1.0), (100, 25.0, "sparse", 24.0)}
# Long windows: distinct water levels per location and day with a 48-hour late window, this project
# against microbatch recomputing the daily batches of the late window; measured instead of the means.
DAILY = "bench_daily_distinct_levels"
DAILY_MICROBATCH = "bench_daily_distinct_levels_microbatch"
OURS_DAILY, MICROBATCH_DAILY = "late_data_daily_distinct", "microbatch_daily_distinct"
DAILY_CELLS = {(100, 74.0, "sparse", 48.0)}
# Sessions: each location's water levels in sessions with a 2-minute gap, on readings sent in spells
# (20 minutes on, 20 off, each location its own phase); this project against microbatch recomputing
# the sessions that can still change and against the same model over every batch since the start.
SESSIONS = "bench_water_level_sessions"
SESSIONS_MICROBATCH = "bench_water_level_sessions_microbatch"
SESSION_GAP_SECONDS = 120  # as bench_water_level_sessions sets it
OURS_SESSIONS, MICROBATCH_SESSIONS, FULL_REFRESH_SESSIONS = (
    "late_data_sessions",
    "microbatch_sessions",
    "full_refresh_sessions",
)
# The cells (1,000 series, 1 h late window), and a 24 h late window, where microbatch
# recomputes every hourly batch of a day.
SESSION_CELLS = {(1_000, 3.0, "sparse", 1.0), (1_000, 3.0, "heavy", 1.0), (100, 26.0, "sparse", 24.0)}
SESSION_ACTIVITY: dict[str, Any] = {"active_seconds": 1200, "idle_seconds": 1200}
# Heavy lateness for sessions is one reading in ten sent late again (uniformly within the late window):
# at the means' one in one, late readings fill every idle spell and each location is one endless session.
SESSION_LATENESS: dict[str, dict[str, Any]] = {
    "heavy": {"late_share": 0.1, "lateness": "uniform"},
    "sparse": BENCH_LATENESS["sparse"],
}
# The generator appends about this many rows per call while building a cell's history.
GENERATED_ROWS_PER_CHUNK = 20_000_000


@dataclass(frozen=True)
class BenchCell:
    locations: int
    history_hours: float
    lateness: str
    late_window_hours: float = 1.0
    # Timed runs of this cell when set (a slow cell runs once; the results say so), else the bench's.
    runs: int | None = None

    @property
    def late_window_seconds(self) -> int:
        return int(self.late_window_hours * 3600)

    @property
    def key(self) -> tuple[int, float, str, float]:
        return (self.locations, self.history_hours, self.lateness, self.late_window_hours)

    def __str__(self) -> str:
        return (
            f"{self.locations:,} locations, {self.history_hours:g} h history, {self.lateness},"
            f" {self.late_window_hours:g} h late window"
        )


@dataclass(frozen=True)
class BenchResult:
    locations: int
    history_hours: float
    lateness: str
    late_window_hours: float
    strategy: str
    runs: int
    median_s: float
    partitions_rewritten: float
    files_rewritten: float
    rows_written: float
    # The UTC date of the measurement: re-measuring some cells keeps the others' rows with theirs.
    measured_on: str = ""

    @property
    def cell_key(self) -> tuple[int, float, str, float]:
        return (self.locations, self.history_hours, self.lateness, self.late_window_hours)


@dataclass(frozen=True)
class RunProfile:
    """One run's dbt events (as JSON-log records) and the Spark jobs it started."""

    events: list[dict[str, Any]]
    spark_jobs: int


@dataclass(frozen=True)
class CellMeasurement:
    cell: BenchCell
    results: list[BenchResult]
    profiles: dict[str, RunProfile]  # the last timed run of the strategies in PROFILED
    # How far the raw table was fed, and the last run time: where plain dbt's runs go on from.
    fed_until: datetime | None = None
    # False for `--whole-run-only`: its rows replace the cell's whole-run rows and keep the peers'.
    every_strategy: bool = True


# Where the time goes is reported for this project's runs: the means, the whole run and, where measured,
# the percentile and min/max pipelines (the daily cell reports its own).
PROFILED = (OURS, WHOLE_RUN, OURS_PERCENTILES, OURS_EXTREMES)

FULL_MATRIX = (
    *(BenchCell(locations, 2, lateness) for locations in (100, 1_000, 10_000) for lateness in ("heavy", "sparse")),
    BenchCell(1_000, 25, "heavy", late_window_hours=24),
    BenchCell(1_000, 25, "sparse", late_window_hours=24),
    # The percentile and min/max pipelines with a 24 h late window (MEASURE_CELLS).
    BenchCell(100, 25, "sparse", late_window_hours=24),
    # Daily windows, 48 h late window: the long-window pipeline only (DAILY_CELLS).
    BenchCell(100, 74, "sparse", late_window_hours=48),
    # Sessions (SESSION_CELLS); at 24 h, microbatch and the full refresh take about a minute a run.
    BenchCell(1_000, 3, "sparse"),
    BenchCell(1_000, 3, "heavy"),
    BenchCell(100, 26, "sparse", late_window_hours=24, runs=3),
    # 90 million raw rows: one timed run of each strategy, no full refresh (it takes tens of minutes).
    BenchCell(100_000, 1.25, "heavy", runs=1),
)
QUICK_MATRIX = (BenchCell(20, 2.1, "heavy"), BenchCell(20, 2.1, "sparse"))
# Where plain dbt's whole run is measured beside the warm scheduler's (each run a new process).
PLAIN_DBT_CELLS = {(100, 2.0, "heavy", 1.0), (1_000, 2.0, "heavy", 1.0), (1_000, 2.0, "sparse", 1.0)}


def parse_cell(text: str) -> BenchCell:
    """A cell from `LOCATIONS:HOURS:LATENESS[:LATE_WINDOW_HOURS]` (the CLI's --cell); ValueError otherwise."""
    locations, hours, lateness, *late_window = text.split(":")
    if lateness not in BENCH_LATENESS or len(late_window) > 1:
        raise ValueError(f"{text!r}: lateness {lateness!r} is not one of {sorted(BENCH_LATENESS)}")
    return BenchCell(int(locations), float(hours), lateness, float(late_window[0]) if late_window else 1.0)


def bench_vars(cell: BenchCell) -> dict[str, Any]:
    return {**BENCH_VARS, "late_window_seconds": cell.late_window_seconds}


def _consecutive_minutes(runs: int) -> list[int]:
    """Minutes past the end of the history for `runs` timed whole runs right after the build, each
    after an untimed run a minute earlier (3 runs: 2, 4, 6)."""
    return [2 * step for step in range(1, runs + 1)]


def _minutes_over_an_hour(runs: int) -> list[int]:
    """Minutes past the hour for `runs` timed runs, evenly spread (5 runs: 6, 18, 30, 42, 54)."""
    return [max(2, int(60 * (step + 0.5) / runs)) for step in range(runs)]
