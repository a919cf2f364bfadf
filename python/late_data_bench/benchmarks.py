"""Measurements on this machine: this project's arrival-driven path against its alternatives, side by
side on the same data and run times, and this project's whole scheduled run."""

from __future__ import annotations

import itertools
import json
import logging
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from tqdm import tqdm

from late_data.project.generator import Scenario, generate
from late_data.project.raw_tables import ensure_raw_tables
from late_data.running.scheduler import SCHEDULED_BUILD, tagged_selection
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.environment import ProjectEnvironment, prepare_environment
from late_data.runtime.timeutil import ceil_to, floor_to
from late_data.runtime.timeutil import format_timestamp as _stamp
from late_data_bench.profile import EventRecorder, profile_lines

log = logging.getLogger(__name__)

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


def run_bench(
    out_dir: Path,
    machine: str,
    cells: tuple[BenchCell, ...] | None = None,
    runs: int | None = None,
    quick: bool = False,
    thrift: bool = False,
    whole_run_only: bool = False,
) -> list[Path]:
    """Measure `cells` (default: the quick or the full matrix; with `thrift`, 100:2:heavy) and write
    the outputs after each cell, so a long matrix keeps what it measured if stopped. Returns the
    files written. With explicit cells, the rows of other cells in out_dir stay. Each cell runs in a
    process of its own (its own Spark, its memory freed after), then plain dbt's whole runs go on
    from its warehouse in processes of their own. `whole_run_only`: time only this project's whole
    scheduled run (no peers, no plain dbt), for cells too large to measure every strategy of."""
    runs = runs or (2 if quick else 5)
    if thrift:
        environment = prepare_environment()
        project = DbtProject(environment)
        thrift_results: list[BenchResult] = []
        for cell in cells or (BenchCell(100, 2, "heavy"),):
            warm, feed = bench_thrift_whole_run(project, cell, runs)
            plain = _timed_plain_dbt_runs(environment, cell, runs, feed)
            thrift_results += [warm, _result(cell, PLAIN_DBT_THRIFT_WHOLE_RUN, plain)]
        for result in thrift_results:
            print(f"bench: {result.strategy} {result.cell_key}: median {result.median_s:.2f} s over {result.runs} runs")
        return write_bench_outputs([], out_dir, machine, thrift_results=tuple(thrift_results))
    measurements: list[CellMeasurement] = []
    paths: list[Path] = []
    for cell in cells or (QUICK_MATRIX if quick else FULL_MATRIX):
        cell_runs = cell.runs or runs
        measurement = _measured_in_own_process(cell, cell_runs, whole_run_only)
        if cell.key in PLAIN_DBT_CELLS and measurement.fed_until is not None and not whole_run_only:
            plain = _timed_plain_dbt_runs(
                prepare_environment(), cell, cell_runs, _GeneratorFeed(cell, measurement.fed_until)
            )
            measurement.results.append(_result(cell, PLAIN_DBT_WHOLE_RUN, plain))
        measurements.append(measurement)
        paths = write_bench_outputs(measurements, out_dir, machine, keep_other_cells=bool(cells))
    return paths


def _measured_in_own_process(cell: BenchCell, runs: int, whole_run_only: bool) -> CellMeasurement:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_measure_cell, args=(cell, runs, whole_run_only, queue))
    child.start()
    outcome, value = queue.get()
    child.join()
    if outcome != "ok":
        raise RuntimeError(f"bench cell {cell} failed: {value}")
    measurement: CellMeasurement = value
    return measurement


def _measure_cell(cell: BenchCell, runs: int, whole_run_only: bool, queue: Any) -> None:
    """The body of a cell's own process."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        project = DbtProject(prepare_environment())
        try:
            queue.put(("ok", bench_cell(project, cell, runs, whole_run_only)))
        finally:
            project.close()
    except BaseException as error:  # the parent reports it and stops
        queue.put(("error", f"{type(error).__name__}: {error}"))


def bench_vars(cell: BenchCell) -> dict[str, Any]:
    return {**BENCH_VARS, "late_window_seconds": cell.late_window_seconds}


def bench_cell(project: DbtProject, cell: BenchCell, runs: int, whole_run_only: bool = False) -> CellMeasurement:
    """Generate the cell's history, build every strategy's table once (untimed), then time `runs`
    runs of each strategy on the same data and run times, spread evenly over an hour (a scheduled
    task runs at every minute of the hour, and microbatch's hourly batches cost more late in the
    hour), each one minute after an untimed run that brings every table up to date. Then time as
    many whole scheduled runs of this project over the next hour, the same way (with
    `whole_run_only`, only those, in the minutes right after the build)."""
    feed, history_end = built_history(project, cell)
    minutes = _minutes_over_an_hour(runs)
    profiles: dict[str, RunProfile] = {}
    comparison = (
        DAILY_COMPARISON if cell.key in DAILY_CELLS else SESSIONS_COMPARISON if cell.key in SESSION_CELLS else None
    )
    if comparison is not None:
        run_times = [history_end + timedelta(minutes=m, seconds=10) for m in minutes]
        timed = _timed_against_peer(project, cell, feed, run_times, profiles, comparison)
        return CellMeasurement(
            cell, [_result(cell, strategy, timed[strategy]) for strategy in comparison.strategies], profiles
        )
    measures = MEASURE_STRATEGIES if cell.key in MEASURE_CELLS and not whole_run_only else ()
    timings = {} if whole_run_only else _timed_peers(project, cell, feed, history_end, minutes, profiles, measures)
    # After the peers, the whole runs take the next hour. Alone, they follow the build at once: the
    # history is in step with the means, and an untimed catch-up over the hour the peers would have
    # taken is no scheduler's minute (at 100,000 series it ran for more than 11 minutes).
    first_minute = history_end if whole_run_only else history_end + timedelta(hours=1)
    timings.update(
        _timed_whole_runs(
            project,
            cell,
            feed,
            [
                first_minute + timedelta(minutes=m, seconds=10)
                for m in (_consecutive_minutes(runs) if whole_run_only else minutes)
            ],
            profiles,
            history_behind=not whole_run_only,
        )
    )
    results = [
        _result(cell, strategy, timings[strategy])
        for strategy in (*STRATEGIES, WHOLE_RUN, HISTORY_SNAPSHOT, *measures)
        if timings.get(strategy)
    ]
    return CellMeasurement(
        cell,
        results,
        {strategy: profiles[strategy] for strategy in PROFILED if strategy in profiles},
        fed_until=feed.fed_until,
        every_strategy=not whole_run_only,
    )


def _timed_peers(
    project: DbtProject,
    cell: BenchCell,
    feed: _Feed,
    history_end: datetime,
    minutes: list[int],
    profiles: dict[str, RunProfile],
    measures: tuple[str, ...] = (),
) -> dict[str, list[_Timing]]:
    """Every strategy's timed runs over the hour after `history_end` (_timed_runs), from the same
    starting table, and the check that their answers agree; with `measures`, the percentile and
    min/max pipelines too."""
    spark, schema = project.spark, project.target_schema()
    table_format = project.environment.table_format
    # The peers start from the same table (built batch by batch, a week of history would take hours).
    for table in (MICROBATCH, FLOOR):
        spark.sql(
            f"create table {schema}.{table} using {table_format} partitioned by (partition_start)"
            f" as select window_start, location, partition_start, reading_count, mean_value, is_final from {schema}.{MEANS}"
        )
    if measures:
        project.invoke(
            ["run", "--select", PERCENTILES, EXTREMES], {"run_time": _stamp(history_end + timedelta(seconds=10))}
        )
        spark.sql(
            f"create table {schema}.{PERCENTILES_MICROBATCH} using {table_format} partitioned by (partition_start)"
            f" as select window_start, location, partition_start, reading_count, p50_value, p95_value, is_final"
            f" from {schema}.{PERCENTILES}"
        )
    try:
        timings = _timed_runs(
            project, cell, feed, [history_end + timedelta(minutes=m, seconds=10) for m in minutes], profiles, measures
        )
    finally:
        spark.catalog.dropTempView("bench_changed_windows")
    _check_strategies_agree(spark, schema, measures)
    return timings


@dataclass(frozen=True)
class _PeerComparison:
    """A pipeline of the bench's own against dbt's microbatch computing the same rows (and, where
    `full_refresh` names a strategy, the same microbatch model over every batch since the start)."""

    ours: str  # the late_data model and its strategy name
    ours_strategy: str
    peer: str  # the microbatch model and its strategy name
    peer_strategy: str
    peer_partitioned_by: str
    peer_columns: str  # the peer model's columns, in its order: its table is first copied from ours
    columns: str  # compared between the two tables at the end
    batch: timedelta  # the microbatch model's batch size
    lookback: Callable[[BenchCell], timedelta]  # how far before the run microbatch recomputes
    full_refresh: str | None = None

    @property
    def strategies(self) -> tuple[str, ...]:
        return (self.ours_strategy, self.peer_strategy, *([self.full_refresh] if self.full_refresh else []))


DAILY_COMPARISON = _PeerComparison(
    ours=DAILY,
    ours_strategy=OURS_DAILY,
    peer=DAILY_MICROBATCH,
    peer_strategy=MICROBATCH_DAILY,
    peer_partitioned_by="window_start",
    peer_columns="window_start, location, reading_count, distinct_levels, is_final",
    columns="window_start, location, reading_count, distinct_levels, is_final",
    batch=timedelta(days=1),
    lookback=lambda cell: timedelta(seconds=cell.late_window_seconds) + timedelta(days=1),
)
SESSIONS_COMPARISON = _PeerComparison(
    ours=SESSIONS,
    ours_strategy=OURS_SESSIONS,
    peer=SESSIONS_MICROBATCH,
    peer_strategy=MICROBATCH_SESSIONS,
    peer_partitioned_by="partition_start",
    peer_columns="window_start, location, partition_start, window_end, reading_count, mean_value, is_final",
    columns="window_start, location, window_end, reading_count, round(mean_value, 9), is_final",
    batch=timedelta(hours=1),
    # Sessions that end within the late window and a gap of the run can still change; the peer
    # cannot know where they started, so it recomputes an hour more (the data's spells are 20
    # minutes; a longer session would show as a difference at the end).
    lookback=lambda cell: timedelta(seconds=cell.late_window_seconds + SESSION_GAP_SECONDS) + timedelta(hours=1),
    full_refresh=FULL_REFRESH_SESSIONS,
)


def _timed_against_peer(
    project: DbtProject,
    cell: BenchCell,
    feed: _Feed,
    run_times: list[datetime],
    profiles: dict[str, RunProfile],
    comparison: _PeerComparison,
) -> dict[str, list[_Timing]]:
    """The pipeline and its microbatch peer (_PeerComparison): built once from the same history
    (untimed), then at each of `run_times` a timed run of each, after an untimed one a minute
    earlier; their answers checked equal. `profiles` gets this project's last timed run."""
    spark, schema = project.spark, project.target_schema()
    # Fed up to the build's run time first: rows fed later but stamped before it by more than
    # write_delay_seconds would be written late (the raw data contract), which only a
    # reconciliation picks up, while microbatch reads whatever is there.
    built_at = run_times[0] - timedelta(minutes=2)
    feed.until(built_at)
    project.invoke(["run", "--select", comparison.ours], {"run_time": _stamp(built_at)})
    spark.sql(
        f"create table {schema}.{comparison.peer} using {project.environment.table_format}"
        f" partitioned by ({comparison.peer_partitioned_by})"
        f" as select {comparison.peer_columns} from {schema}.{comparison.ours}"
    )
    timings: dict[str, list[_Timing]] = {strategy: [] for strategy in comparison.strategies}
    tables = {comparison.ours_strategy: comparison.ours}
    previous = built_at
    for run_time in tqdm(run_times, desc=f"{comparison.ours} runs {cell}", unit="run", leave=False):
        for moment, timed in ((run_time - timedelta(minutes=1), False), (run_time, True)):
            feed.until(moment)
            for strategy in comparison.strategies:
                if strategy == comparison.full_refresh and not timed:
                    continue
                run = partial(_run_against_peer, project, cell, comparison, strategy, previous, moment)
                if timed:
                    timing, profile = _timed(project, f"{schema}.{tables.get(strategy, comparison.peer)}", run)
                    timings[strategy].append(timing)
                    if strategy == comparison.ours_strategy:
                        profiles[strategy] = profile
                    log.info("%s %s: %s", cell, strategy, timing)
                else:
                    run()
            previous = moment
    ours, peer = (
        spark.sql(f"select {comparison.columns} from {schema}.{table}") for table in (comparison.ours, comparison.peer)
    )
    differing = ours.exceptAll(peer).count() + peer.exceptAll(ours).count()
    if differing:
        raise RuntimeError(f"benchmark: {comparison.peer} differs from {comparison.ours} in {differing} rows")
    return timings


def _run_against_peer(
    project: DbtProject,
    cell: BenchCell,
    comparison: _PeerComparison,
    strategy: str,
    previous: datetime,
    run_time: datetime,
) -> None:
    at = {"run_time": _stamp(run_time)}
    if strategy == comparison.ours_strategy:
        project.invoke(["run", "--select", comparison.ours], at)
        return
    start = BENCH_ORIGIN if strategy == comparison.full_refresh else min(previous, run_time) - comparison.lookback(cell)
    project.invoke(
        [
            "run",
            "--select",
            comparison.peer,
            "--event-time-start",
            _stamp(floor_to(start, comparison.batch)),
            "--event-time-end",
            _stamp(ceil_to(run_time, comparison.batch)),
        ],
        at,
    )


def bench_thrift_whole_run(project: DbtProject, cell: BenchCell, runs: int) -> tuple[BenchResult, _Feed]:
    """This project's whole scheduled run with dbt on the `thrift` target, timed like `whole_run`
    (generation, commit metadata and the audit through a `cluster` session on the shared catalog),
    and the feed, for plain dbt's runs after it."""
    if project.environment.profile_target != "thrift":
        raise ValueError("late-data bench --thrift needs LATE_DATA_TARGET=thrift and a running cluster")
    feed, history_end = built_history(project, cell)
    next_hour = history_end + timedelta(hours=1)
    timings = _timed_whole_runs(
        project, cell, feed, [next_hour + timedelta(minutes=m, seconds=10) for m in _minutes_over_an_hour(runs)], {}
    )
    return _result(cell, THRIFT_WHOLE_RUN, timings[WHOLE_RUN]), feed


def _result(cell: BenchCell, strategy: str, timings: list[_Timing]) -> BenchResult:
    return BenchResult(
        locations=cell.locations,
        history_hours=cell.history_hours,
        lateness=cell.lateness,
        late_window_hours=cell.late_window_hours,
        strategy=strategy,
        runs=len(timings),
        median_s=statistics.median(t.seconds for t in timings),
        partitions_rewritten=statistics.median(t.partitions for t in timings),
        files_rewritten=statistics.median(t.files for t in timings),
        rows_written=statistics.median(t.rows for t in timings),
        measured_on=f"{datetime.now(UTC):%Y-%m-%d}",
    )


def built_history(project: DbtProject, cell: BenchCell) -> tuple[_Feed, datetime]:
    """Fresh schemas with the cell's history generated and this project's tables built on it
    (untimed): the feed of later arrivals and the end of the history."""
    project.use_vars(bench_vars(cell))
    project.reset_warehouse()
    spark = project.spark
    raw_table = ensure_raw_tables(spark, project.raw_schema(), project.environment.table_format)["water_level_readings"]
    sessions = cell.key in SESSION_CELLS
    scenario = Scenario(
        locations=cell.locations,
        max_lateness_seconds=cell.late_window_seconds,
        late_window_seconds=cell.late_window_seconds,
        **(SESSION_LATENESS if sessions else BENCH_LATENESS)[cell.lateness],
        **(SESSION_ACTIVITY if sessions else {}),
    )
    history_end = BENCH_ORIGIN + timedelta(hours=cell.history_hours)
    rows_per_hour = cell.locations * 3600 / scenario.reading_interval_seconds * (1 + scenario.late_share)
    chunk = timedelta(hours=min(24.0, max(1 / 6, GENERATED_ROWS_PER_CHUNK / rows_per_hour)))
    moment = BENCH_ORIGIN
    with tqdm(total=cell.history_hours, desc=f"generate {cell}", unit="h", leave=False) as progress:
        while moment < history_end:
            upto = min(moment + chunk, history_end)
            generate(spark, raw_table, scenario, BENCH_ORIGIN, moment, upto)
            progress.update((upto - moment) / timedelta(hours=1))
            moment = upto
    first_run_time = history_end + timedelta(seconds=10)
    generate(spark, raw_table, scenario, BENCH_ORIGIN, history_end, first_run_time)
    project.invoke(
        [
            "build",
            "--select",
            "+tag:water_level",
            "int_water_level__windowed",
            "--resource-type",
            "seed",
            "--resource-type",
            "model",
            "--resource-type",
            "snapshot",
        ],
        {"run_time": _stamp(first_run_time)},
    )
    return _Feed(spark, raw_table, scenario, first_run_time), history_end


def _consecutive_minutes(runs: int) -> list[int]:
    """Minutes past the end of the history for `runs` timed whole runs right after the build, each
    after an untimed run a minute earlier (3 runs: 2, 4, 6)."""
    return [2 * step for step in range(1, runs + 1)]


def _minutes_over_an_hour(runs: int) -> list[int]:
    """Minutes past the hour for `runs` timed runs, evenly spread (5 runs: 6, 18, 30, 42, 54)."""
    return [max(2, int(60 * (step + 0.5) / runs)) for step in range(runs)]


@dataclass
class _Feed:
    """Appends the scenario's rows up to a run time; remembers how far it got."""

    spark: Any
    raw_table: str
    scenario: Scenario
    fed_until: datetime

    def until(self, run_time: datetime) -> datetime:
        """Append the rows arriving in [fed_until, run_time); returns the previous fed_until."""
        previous = self.fed_until
        generate(self.spark, self.raw_table, self.scenario, BENCH_ORIGIN, previous, run_time)
        self.fed_until = run_time
        return previous


@dataclass(frozen=True)
class _Timing:
    """One timed run: seconds, and what its commits wrote to the table measured."""

    seconds: float
    partitions: int
    files: int
    rows: int


def _timed_runs(
    project: DbtProject,
    cell: BenchCell,
    feed: _Feed,
    run_times: list[datetime],
    profiles: dict[str, RunProfile],
    measures: tuple[str, ...] = (),
) -> dict[str, list[_Timing]]:
    """Per strategy, the run at each of `run_times`, each after an untimed run of every strategy one
    minute earlier; `profiles` gets each strategy's last run. The full refreshes come after the
    last step, on its data: they rebuild this project's tables, and a scheduled run right after a
    rebuild is not what a scheduler sees minute after minute."""
    spark, schema = project.spark, project.target_schema()
    timings: dict[str, list[_Timing]] = {strategy: [] for strategy in (*STRATEGIES, *measures)}
    tables = {OURS: MEANS, "microbatch": MICROBATCH, "full_refresh": MEANS, "floor": FLOOR, **MEASURE_TABLES}
    incremental = (OURS, "microbatch", "floor", *measures)
    for step, run_time in enumerate(tqdm(run_times, desc=f"runs {cell}", unit="run", leave=False), start=1):
        catch_up = run_time - timedelta(minutes=1)
        previous = feed.until(catch_up)
        _materialize_changed_windows(spark, schema, cell, previous, catch_up)
        for strategy in incremental:
            _run_strategy(project, cell, strategy, previous, catch_up)
        feed.until(run_time)
        _materialize_changed_windows(spark, schema, cell, catch_up, run_time)
        for strategy in incremental:
            timing, profile = _timed(
                project,
                f"{schema}.{tables[strategy]}",
                partial(_run_strategy, project, cell, strategy, catch_up, run_time),
            )
            timings[strategy].append(timing)
            profiles[strategy] = profile
            log.info("%s %s run %d: %s", cell, strategy, step, timing)
    for step in range(1, _full_refresh_runs(cell, len(run_times)) + 1):
        timing, profiles["full_refresh"] = _timed(
            project,
            f"{schema}.{MEANS}",
            partial(_run_strategy, project, cell, "full_refresh", run_times[-1] - timedelta(minutes=1), run_times[-1]),
        )
        timings["full_refresh"].append(timing)
        log.info("%s full_refresh run %d: %s", cell, step, timing)
    return timings


def _timed_whole_runs(
    project: DbtProject,
    cell: BenchCell,
    feed: _Feed,
    run_times: list[datetime],
    profiles: dict[str, RunProfile],
    history_behind: bool = True,
) -> dict[str, list[_Timing]]:
    """This project's whole scheduled run (the scheduler's selection after its first run: versions,
    means, too-late listing, history snapshot, audit) at each of `run_times`, each after an untimed
    one a minute earlier; what it wrote to the history table, and the snapshot's own seconds from
    the audit."""
    spark, schema = project.spark, project.target_schema()
    timings: dict[str, list[_Timing]] = {WHOLE_RUN: [], HISTORY_SNAPSHOT: []}

    def whole_run(run_time: datetime) -> None:
        project.invoke(
            [*SCHEDULED_BUILD, "--select", tagged_selection("water_level")],
            {"run_time": _stamp(run_time)},
        )

    # The peers' runs left the history behind the means: its first whole run holds the means while
    # the history records what they published (late_data_histories_behind). Not timed.
    if history_behind:
        settle = run_times[0] - timedelta(minutes=2)
        feed.until(settle)
        whole_run(settle)
    for step, run_time in enumerate(tqdm(run_times, desc=f"whole runs {cell}", unit="run", leave=False), start=1):
        feed.until(run_time - timedelta(minutes=1))
        whole_run(run_time - timedelta(minutes=1))
        feed.until(run_time)
        timing, profiles[WHOLE_RUN] = _timed(project, f"{schema}.{HISTORY_TABLE}", partial(whole_run, run_time))
        snapshot_seconds = spark.sql(
            f"select seconds from {schema}.late_data_run_audit"
            f" where model = '{HISTORY}' and run_time = timestamp'{_stamp(run_time)}' and outcome = 'success'"
        ).first()["seconds"]
        log.info("%s whole run %d: %s (snapshot %.2f s)", cell, step, timing, snapshot_seconds)
        timings[WHOLE_RUN].append(timing)
        timings[HISTORY_SNAPSHOT].append(_Timing(snapshot_seconds, timing.partitions, timing.files, timing.rows))
    return timings


def _timed(project: DbtProject, table: str, run: Callable[[], Any]) -> tuple[_Timing, RunProfile]:
    """Seconds of `run`, the partitions, files and rows it wrote in `table` (from the table
    format's commits), and where its time went (from dbt's events and Spark's job tracker)."""
    from late_data.tables.history import commits_after, latest_version

    table_format = project.environment.table_format
    version = latest_version(project.spark, table, table_format)
    recorder = EventRecorder()
    jobs_before = set(project.spark.sparkContext.statusTracker().getJobIdsForGroup())
    with project.watching(recorder):
        started = time.perf_counter()
        run()
        seconds = time.perf_counter() - started
    jobs = len(set(project.spark.sparkContext.statusTracker().getJobIdsForGroup()) - jobs_before)
    profile = RunProfile(recorder.records(), jobs)
    commits = commits_after(project.spark, table, table_format, version)
    partitions = set().union(*(commit.partitions_touched for commit in commits))
    timing = _Timing(
        seconds=seconds,
        partitions=len(partitions),
        files=sum(commit.files_added + commit.files_removed for commit in commits),
        rows=sum(commit.records_added for commit in commits),
    )
    return timing, profile


def _full_refresh_runs(cell: BenchCell, runs: int) -> int:
    """A full refresh of a day or more of history takes minutes: two runs give its median there;
    of 100,000 locations, tens of minutes: not measured (the results show no row)."""
    if cell.locations >= 100_000:
        return 0
    return runs if cell.history_hours <= 2 and cell.locations <= 10_000 else min(runs, 2)


class _Feeds(Protocol):
    """A feed of the scenario's raw rows: how far it got, and `until(moment)` to go on."""

    fed_until: datetime

    def until(self, run_time: datetime) -> datetime: ...


@dataclass
class _GeneratorFeed:
    """A feed through `late-data generate` in a process of its own, for the plain-dbt runs after a
    cell's own process (and its Spark session) has ended."""

    cell: BenchCell
    fed_until: datetime

    def until(self, run_time: datetime) -> datetime:
        previous = self.fed_until
        lateness = BENCH_LATENESS[self.cell.lateness]
        scenario = {
            "--origin": _stamp(BENCH_ORIGIN),
            "--start": _stamp(previous),
            "--end": _stamp(run_time),
            "--locations": str(self.cell.locations),
            "--pages": "0",
            "--late-share": str(lateness["late_share"]),
            "--lateness": str(lateness["lateness"]),
            "--max-lateness": str(self.cell.late_window_seconds),
        }
        _run([sys.executable, "-m", "late_data.cli", "generate", *(part for item in scenario.items() for part in item)])
        self.fed_until = run_time
        return previous


def _timed_plain_dbt_runs(environment: ProjectEnvironment, cell: BenchCell, runs: int, feed: _Feeds) -> list[_Timing]:
    """The whole scheduled run as cron runs it: `dbt build` of the late-data nodes in a new process
    (on the embedded target a JVM start; dbt's partial parse from the run before, the relation
    listing and the describing statements included), at `runs` run times spread over the hour after
    where `feed` got to, each one minute after an untimed run, `feed` bringing the raw rows up to
    each (untimed). Commit metadata is not read: only seconds."""
    timings = []
    next_hour = ceil_to(feed.fed_until, timedelta(hours=1))
    for minute in _minutes_over_an_hour(runs):
        run_time = next_hour + timedelta(minutes=minute, seconds=10)
        for moment, timed in ((run_time - timedelta(minutes=1), False), (run_time, True)):
            feed.until(moment)
            started = time.perf_counter()
            _plain_dbt_build(environment, cell, moment)
            if timed:
                timings.append(_Timing(time.perf_counter() - started, 0, 0, 0))
                log.info("%s plain dbt whole run: %.2f s", cell, timings[-1].seconds)
    return timings


def _plain_dbt_build(environment: ProjectEnvironment, cell: BenchCell, run_time: datetime) -> None:
    options = {
        "--select": tagged_selection("water_level"),
        # The same vars every run and the run time from the environment, so dbt's partial parse
        # from the previous run is used, as it is for a cron job (a changed var makes dbt parse anew).
        "--vars": json.dumps(bench_vars(cell)),
        "--project-dir": str(environment.project_dir),
        "--profiles-dir": str(environment.profiles_dir),
        "--log-path": str(environment.dbt_log_dir),
    }
    _run(
        [
            str(Path(sys.executable).parent / "dbt"),
            *SCHEDULED_BUILD,
            *(part for item in options.items() for part in item),
        ],
        # The JVM cron's dbt starts (the profile's defaults), not this long-lived process's.
        {"LATE_DATA_RUN_TIME": _stamp(run_time), "LATE_DATA_JVM_OPTIONS": None},
    )


def _run(command: list[str], environment: dict[str, str | None] | None = None) -> None:
    """`command` with this process's environment and `environment` over it (None: unset)."""
    env = {**os.environ, **(environment or {})}
    finished = subprocess.run(
        command,
        env={name: value for name, value in env.items() if value is not None},
        capture_output=True,
        text=True,
        check=False,
    )
    if finished.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])} failed: {(finished.stdout + finished.stderr)[-3000:]}")


def _run_strategy(project: DbtProject, cell: BenchCell, strategy: str, previous: datetime, run_time: datetime) -> None:
    at = {"run_time": _stamp(run_time)}
    if strategy in (OURS, OURS_PERCENTILES, OURS_EXTREMES):
        # What keeps the means right: the means' node loads the versions that arrived, then writes.
        project.invoke(["run", "--select", {OURS: MEANS, **MEASURE_TABLES}[strategy]], at)
    elif strategy in ("microbatch", MICROBATCH_PERCENTILES):
        late = timedelta(seconds=cell.late_window_seconds + BENCH_VARS["window_size_seconds"])
        # The batches a late row can reach: lookback covering the late window, whatever changed.
        project.invoke(
            [
                "run",
                "--select",
                MICROBATCH if strategy == "microbatch" else PERCENTILES_MICROBATCH,
                "--event-time-start",
                _stamp(floor_to(min(previous, run_time) - late, timedelta(hours=1))),
                "--event-time-end",
                _stamp(ceil_to(run_time, timedelta(hours=1))),
            ],
            at,
        )
    elif strategy == "full_refresh":
        # Everything from raw: the versions table and the means.
        project.invoke(["run", "--full-refresh", "--select", MEANS], at)
    else:
        project.spark.sql(_floor_merge(project.target_schema(), project.raw_schema(), cell, previous, run_time))


def _materialize_changed_windows(
    spark: Any, schema: str, cell: BenchCell, previous: datetime, run_time: datetime
) -> None:
    """The floor's perfect knowledge, computed outside its timing: the windows that received rows
    or became final since the previous run (rows stamped exactly at the previous run time included:
    the generator may append them after that run). Checkpointed, not cached: Spark's cache misses
    plans over Iceberg session-catalog tables (every lookup makes a new table object), so a cached
    view was silently recomputed from the whole raw table inside the floor's timing."""
    until_final = timedelta(seconds=cell.late_window_seconds + BENCH_VARS["window_size_seconds"])
    changed_windows = spark.sql(
        f"""
        select distinct window_start, location from {schema}.int_water_level__windowed
        where (ingested_at >= timestamp'{_stamp(previous)}' and ingested_at <= timestamp'{_stamp(run_time)}')
            or (final_at > timestamp'{_stamp(previous)}' and final_at <= timestamp'{_stamp(run_time)}'
                and event_time >= timestamp'{_stamp(previous - until_final)}')
        """
    )
    changed_windows.localCheckpoint(eager=True).createOrReplaceTempView("bench_changed_windows")


def _floor_merge(schema: str, raw_schema: str, cell: BenchCell, previous: datetime, run_time: datetime) -> str:
    """One hand-written statement: the means of exactly the changed windows, from the raw rows of
    those windows only, merged into the floor's table. It relies on what the benchmark knows and
    the product cannot: which windows changed, and that the data has no corrections moving a
    reading between windows. A window changed since the previous run received a row within its
    late window or became final, so it starts after previous - late window - window size: a
    literal bound, which lets the table format prune the older partitions of the raw table and of
    the merge's target."""
    at = f"timestamp'{_stamp(run_time)}'"
    window, late = BENCH_VARS["window_size_seconds"], cell.late_window_seconds
    partition = BENCH_VARS["partition_size_seconds"]
    earliest_changed = min(previous, run_time) - timedelta(seconds=window + late)
    earliest_partition = floor_to(earliest_changed, partition)
    return f"""
        merge into {schema}.{FLOOR} as target
        using (
            select window_start, location, partition_start, count(*) as reading_count,
                cast(sum(cast(value as decimal(28, 9))) as double) / count(*) as mean_value,
                max(final_at) <= {at} as is_final
            from (
                select *, lead(ingested_at) over (partition by event_id order by ingested_at, event_time, value)
                    as superseded_at
                from (
                    select readings.*,
                        readings.window_start + interval {window + late} second as final_at,
                        timestamp_seconds(floor(unix_seconds(readings.window_start) / {partition}) * {partition})
                            as partition_start
                    from (
                        select *, timestamp_seconds(floor(unix_seconds(event_time) / {window}) * {window}) as window_start
                        from {raw_schema}.water_level_readings
                        where event_time >= timestamp'{_stamp(earliest_changed)}'
                    ) as readings
                    left semi join bench_changed_windows as changed
                        on readings.window_start = changed.window_start and readings.location = changed.location
                )
            )
            where ingested_at <= least({at}, final_at) and coalesce(superseded_at > least({at}, final_at), true)
            group by window_start, location, partition_start
        ) as fresh
        on target.window_start = fresh.window_start and target.location = fresh.location
            and target.partition_start >= timestamp'{_stamp(earliest_partition)}'
        when matched then update set *
        when not matched then insert *
    """


def _check_strategies_agree(spark: Any, schema: str, measures: tuple[str, ...] = ()) -> None:
    """A benchmark of wrong answers is worthless: all four tables must hold the same windows (and
    the two percentile tables, with `measures`)."""
    means = "window_start, location, reading_count, round(mean_value, 9) as mean_value, is_final"
    percentiles = "window_start, location, reading_count, round(p50_value, 9), round(p95_value, 9), is_final"
    pairs = [(MEANS, table, means) for table in (MICROBATCH, FLOOR)]
    if measures:
        pairs.append((PERCENTILES, PERCENTILES_MICROBATCH, percentiles))
    for reference_table, table, columns in pairs:
        reference = spark.sql(f"select {columns} from {schema}.{reference_table}")
        other = spark.sql(f"select {columns} from {schema}.{table}")
        differing = reference.exceptAll(other).count() + other.exceptAll(reference).count()
        if differing:
            raise RuntimeError(f"benchmark: {table} differs from {reference_table} in {differing} rows")


def write_bench_outputs(
    measurements: list[CellMeasurement],
    out_dir: Path,
    machine: str,
    keep_other_cells: bool = False,
    thrift_results: tuple[BenchResult, ...] = (),
) -> list[Path]:
    """bench/results.csv, bench/results.md (table and ratios), bench/results.png and
    bench/profile.md (where this project's runs spend their time). With `keep_other_cells`, the
    rows of cells not measured now stay as results.csv had them (re-measuring some cells).
    `thrift_results` replace the `thrift_whole_run` rows of their cells; other rows stay."""
    import csv

    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, md_path, png_path = out_dir / "results.csv", out_dir / "results.md", out_dir / "results.png"
    results = [result for measurement in measurements for result in measurement.results]
    if (keep_other_cells or thrift_results) and csv_path.exists():
        measured = {measurement.cell.key for measurement in measurements if measurement.every_strategy}
        replaced = {(*result.cell_key, result.strategy) for result in (*results, *thrift_results)}
        results = [
            result
            for result in _read_results(csv_path)
            # A cell measured again keeps its thrift rows, which `--thrift` measures on its own.
            if (result.cell_key not in measured or result.strategy in THRIFT_STRATEGIES)
            and (*result.cell_key, result.strategy) not in replaced
        ] + results
    results += thrift_results
    results.sort(key=lambda result: result.cell_key)
    with csv_path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(BenchResult.__dataclass_fields__))
        writer.writeheader()
        writer.writerows(asdict(result) for result in results)
    cells = sorted({r.cell_key for r in results if r.strategy in (OURS, WHOLE_RUN)})
    by_key = {(*r.cell_key, r.strategy): r for r in results}
    lines = [
        f"# Benchmark: this project against the alternatives\n\n{machine}\n",
        "Median seconds per warm run (one Spark session). Per cell, the four ways to keep"
        " `water_level_window_means` right ran on the same data and run times, one dbt invocation each"
        " (the floor: one Spark statement): `late_data` (load the versions that arrived, then the means"
        " model), dbt's `microbatch` over the late window, a full refresh from raw, and the floor. Then"
        " `whole run`: this project's whole scheduled run (versions, means, too-late listing, history"
        " snapshot, audit) on the following minutes, with the snapshot's share of it; `plain dbt`: the"
        " same run as cron makes it, `dbt build` in a new process each time (JVM start included, dbt's"
        " partial parse from the run before kept); `thrift whole run`: with dbt through the local"
        " cluster's Spark Thrift Server from the warm scheduler (`late-data bench --thrift`), and"
        " `plain thrift`: that run as cron makes it on the thrift target. `-`: not measured (the runs"
        " table says how many runs each median has), or a ratio of medians measured on different days."
        " `measured`: the UTC dates of the row's medians; re-measuring some cells, or only a cell's whole"
        " run (`--whole-run-only`), keeps the other medians with their dates.\n",
        "| locations | history h | late window h | lateness | late_data | microbatch | full refresh | floor"
        " | ours / microbatch | ours / floor | whole run | whole / floor | of which history | plain dbt whole run"
        " | plain / warm | thrift whole run | thrift / embedded | plain thrift whole run | plain thrift / thrift"
        " | measured |",
        "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]

    def median(cell: tuple[Any, ...], strategy: str) -> BenchResult | None:
        return by_key.get((*cell, strategy))

    def shown(result: BenchResult | None) -> str:
        return "-" if result is None else f"{result.median_s:.2f}"

    def ratio(numerator: BenchResult | None, denominator: BenchResult | None) -> str:
        """`-` also for medians of different days: this machine's speed moves by up to 2x between them."""
        if numerator is None or denominator is None or not denominator.median_s:
            return "-"
        if numerator.measured_on != denominator.measured_on:
            return "-"
        return f"{numerator.median_s / denominator.median_s:.2f}"

    def measured_on(cell: tuple[Any, ...]) -> str:
        """The dates of a cell's rows: two where some of its strategies were measured again."""
        return ", ".join(sorted({r.measured_on for r in results if r.cell_key == cell and r.measured_on})) or "-"

    for cell in cells:
        ours, micro, full, floor, whole, history, plain, thrift, plain_thrift = (
            median(cell, strategy)
            for strategy in (
                *STRATEGIES,
                WHOLE_RUN,
                HISTORY_SNAPSHOT,
                PLAIN_DBT_WHOLE_RUN,
                THRIFT_WHOLE_RUN,
                PLAIN_DBT_THRIFT_WHOLE_RUN,
            )
        )
        lines.append(
            f"| {cell[0]:,} | {cell[1]:g} | {cell[3]:g} | {cell[2]} | {shown(ours)} | {shown(micro)} | {shown(full)}"
            f" | {shown(floor)} | {ratio(ours, micro)} | {ratio(ours, floor)} | {shown(whole)} | {ratio(whole, floor)}"
            f" | {shown(history)} | {shown(plain)} | {ratio(plain, whole)} | {shown(thrift)} | {ratio(thrift, whole)}"
            f" | {shown(plain_thrift)} | {ratio(plain_thrift, thrift)} | {measured_on(cell)} |"
        )

    def peer_table(text: str, columns: dict[str, str], ratios: dict[str, tuple[str, str]]) -> list[str]:
        """A section of one pipeline against its peers: `columns` {heading: strategy}, `ratios`
        {heading: (numerator strategy, denominator strategy)}; nothing when none was measured."""
        peer_cells = sorted({r.cell_key for r in results if r.strategy in columns.values()})
        if not peer_cells:
            return []
        headings = [*columns, *ratios]
        section = [
            "",
            text,
            "",
            "| locations | history h | late window h | lateness | " + " | ".join(headings) + " |",
            "|---:|---:|---:|---|" + "---:|" * len(headings),
        ]
        for cell in peer_cells:
            shown_columns = [shown(median(cell, strategy)) for strategy in columns.values()]
            shown_ratios = [ratio(median(cell, top), median(cell, bottom)) for top, bottom in ratios.values()]
            section.append(
                f"| {cell[0]:,} | {cell[1]:g} | {cell[3]:g} | {cell[2]} | "
                + " | ".join(shown_columns + shown_ratios)
                + " |"
            )
        return section

    lines += peer_table(
        "Measures no checksum updates, on the same readings and run times (median seconds per warm run):"
        " `late_data percentiles` keeps the median and 95th percentile per location and minute, recomputing"
        " only the windows whose versions changed; `microbatch percentiles` computes the same percentiles"
        " over every hourly batch of the late window; `late_data min/max` keeps the minimum and maximum.",
        {
            "late_data percentiles": OURS_PERCENTILES,
            "microbatch percentiles": MICROBATCH_PERCENTILES,
            "late_data min/max": OURS_EXTREMES,
        },
        {"ours / microbatch": (OURS_PERCENTILES, MICROBATCH_PERCENTILES)},
    )
    lines += peer_table(
        "Long windows (median seconds per warm run): distinct water levels per location and day, 48-hour late"
        " window; `late_data` updates each day's distinct count from the values that arrived, `microbatch`"
        " recomputes every daily batch of the late window.",
        {"late_data": OURS_DAILY, "microbatch": MICROBATCH_DAILY},
        {"ours / microbatch": (OURS_DAILY, MICROBATCH_DAILY)},
    )
    lines += peer_table(
        "Sessions (median seconds per warm run): each location's water levels in sessions with a 2-minute"
        " gap, readings sent 20 minutes on, 20 off; heavy: one reading in ten sent late again within the"
        " late window, sparse: one in a hundred, long-tailed. `late_data` recomputes the sessions that"
        " end within the late window and a gap of the run, read from their stored starts; `microbatch`"
        " recomputes every hourly batch of the late window, a gap and one hour more (it cannot know where"
        " a session that can still change started), each batch read from one gap before it to the run"
        " time; `full refresh`: the same microbatch model over every batch since the start.",
        {"late_data": OURS_SESSIONS, "microbatch": MICROBATCH_SESSIONS, "full refresh": FULL_REFRESH_SESSIONS},
        {
            "ours / microbatch": (OURS_SESSIONS, MICROBATCH_SESSIONS),
            "ours / full refresh": (OURS_SESSIONS, FULL_REFRESH_SESSIONS),
        },
    )
    lines += [
        "",
        "Partitions, files and rows written per run (medians, from the table format's commit metadata;"
        " `late_data` and `full_refresh` partitions are time partition x location bucket, the peers' time"
        " partitions only; for `whole_run` and `history_snapshot`, the history table), and runs measured:",
        "",
        "| locations | history h | late window h | lateness | strategy | runs | partitions | files | rows |",
        "|---:|---:|---:|---|---|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r.locations:,} | {r.history_hours:g} | {r.late_window_hours:g} | {r.lateness} | {r.strategy} | {r.runs}"
        f" | {r.partitions_rewritten:g} | {r.files_rewritten:g} | {r.rows_written:,.0f} |"
        for r in results
    ]
    md_path.write_text("\n".join(lines) + "\n\n![medians](results.png)\n")
    _plot_bench(by_key, cells, png_path)
    profile_path = out_dir / "profile.md"
    kept = keep_other_cells or bool(thrift_results)
    kept_sections = _other_cells_profile_sections(profile_path, measurements) if kept else []
    profile_path.write_text(_profile_markdown(measurements, machine, kept_sections))
    return [csv_path, md_path, png_path, profile_path]


def _read_results(csv_path: Path) -> list[BenchResult]:
    import csv

    with csv_path.open(newline="") as handle:
        return [
            BenchResult(
                locations=int(row["locations"]),
                history_hours=float(row["history_hours"]),
                lateness=row["lateness"],
                late_window_hours=float(row["late_window_hours"]),
                strategy=row["strategy"],
                runs=int(row["runs"]),
                median_s=float(row["median_s"]),
                partitions_rewritten=float(row["partitions_rewritten"]),
                files_rewritten=float(row["files_rewritten"]),
                rows_written=float(row["rows_written"]),
                measured_on=row.get("measured_on") or "",
            )
            for row in csv.DictReader(handle)
        ]


def _profile_heading(cell: BenchCell) -> str:
    return f"## {cell}: "


def _other_cells_profile_sections(profile_path: Path, measurements: list[CellMeasurement]) -> list[str]:
    """The sections of an existing profile.md whose cell and strategy were not profiled now (a cell's
    whole run measured alone keeps the profile of its means)."""
    if not profile_path.exists():
        return []
    profiled = {
        f"{_profile_heading(measurement.cell)}{strategy}"
        for measurement in measurements
        for strategy in measurement.profiles
    }
    sections = ["## " + section.strip() + "\n" for section in profile_path.read_text().split("\n## ")[1:]]
    return [section for section in sections if section.splitlines()[0] not in profiled]


def _profile_markdown(measurements: list[CellMeasurement], machine: str, kept_sections: list[str]) -> str:
    lines = [
        f"# Where the time goes\n\n{machine}\n",
        "The last timed run of each cell, per kind of statement: wall seconds from a statement's start"
        " to dbt's next event (fetching its result included), from dbt's structured events (the records"
        " of its JSON log: SQLQuery, SQLQueryStatus); Spark jobs from"
        " Spark's job tracker. `late_data` loads the versions that arrived and runs the means model;"
        " `whole_run` is the whole scheduled run (versions, means, too-late listing, history snapshot,"
        " audit); `late_data_percentiles`, `late_data_extremes` and `late_data_daily_distinct`: the bench's"
        " percentile, min/max and daily distinct-count pipelines, where measured.\n",
        *kept_sections,
    ]
    for measurement in measurements:
        cell = measurement.cell
        measured_on = {result.strategy: result.measured_on for result in measurement.results}
        for strategy, profile in measurement.profiles.items():
            lines += [
                f"{_profile_heading(cell)}{strategy}\n",
                f"Measured {measured_on.get(strategy) or 'on an unrecorded date'}.\n",
                *profile_lines(profile.events, profile.spark_jobs),
                "",
            ]
    return "\n".join(lines)


def plot_lines(
    by_key: dict[tuple[Any, ...], BenchResult], cells: list[tuple[int, float, str, float]], lateness: str
) -> list[tuple[int, str, str, list[tuple[int, float]]]]:
    """(strategy number, strategy, date, [(series, median s)]) for each line of a lateness's panel:
    the 1 h late window's cells, one line per strategy and measurement date (this machine's speed
    drifts between days, so a line joins only medians of one date)."""
    growth = sorted(cell for cell in cells if cell[2] == lateness and cell[3] == 1.0 and cell[1] <= 2)
    dates = sorted({result.measured_on for result in by_key.values()})
    lines = []
    for (number, strategy), date in itertools.product(enumerate((*STRATEGIES, WHOLE_RUN, PLAIN_DBT_WHOLE_RUN)), dates):
        results = [(cell[0], by_key.get((*cell, strategy))) for cell in growth]
        points = [(series, result.median_s) for series, result in results if result and result.measured_on == date]
        if points:
            lines.append((number, strategy, date, points))
    return lines


def _plot_bench(
    by_key: dict[tuple[Any, ...], BenchResult], cells: list[tuple[int, float, str, float]], path: Path
) -> None:
    """How each strategy's median grows with the number of series, at a 1 h late window: one panel
    per lateness, log-log; a strategy keeps its colour, the newest date is drawn solid."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    newest = max((result.measured_on for result in by_key.values()), default="")
    for axis, lateness in zip(axes, ("heavy", "sparse"), strict=True):
        for number, strategy, date, points in plot_lines(by_key, cells, lateness):
            axis.plot(
                *zip(*points, strict=True),
                marker="o",
                color=f"C{number}",
                linestyle="-" if date == newest else ":",
                label=f"{strategy} ({date or 'undated'})",
            )
        axis.set(xscale="log", yscale="log", xlabel="series (locations)", title=f"{lateness} lateness, 1 h late window")
        axis.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("median seconds per run")
    if axes[0].get_lines():
        axes[0].legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)
