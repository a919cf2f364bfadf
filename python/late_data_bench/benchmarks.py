"""Measurements on this machine: this project's arrival-driven path against its alternatives, side by
side on the same data and run times, and this project's whole scheduled run."""

from __future__ import annotations

import logging
import multiprocessing
import statistics
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tqdm import tqdm

from late_data.project.generator import Scenario, generate
from late_data.project.raw_tables import ensure_raw_tables
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.environment import prepare_environment
from late_data.runtime.timeutil import format_timestamp as _stamp
from late_data_bench.cells import (
    BENCH_LATENESS,
    BENCH_ORIGIN,
    DAILY_CELLS,
    FULL_MATRIX,
    GENERATED_ROWS_PER_CHUNK,
    HISTORY_SNAPSHOT,
    MEASURE_CELLS,
    MEASURE_STRATEGIES,
    PLAIN_DBT_CELLS,
    PLAIN_DBT_THRIFT_WHOLE_RUN,
    PLAIN_DBT_WHOLE_RUN,
    PROFILED,
    QUICK_MATRIX,
    SESSION_ACTIVITY,
    SESSION_CELLS,
    SESSION_LATENESS,
    STRATEGIES,
    THRIFT_WHOLE_RUN,
    WHOLE_RUN,
    BenchCell,
    BenchResult,
    CellMeasurement,
    RunProfile,
    _consecutive_minutes,
    _minutes_over_an_hour,
    bench_vars,
)
from late_data_bench.outputs import write_bench_outputs
from late_data_bench.peers import DAILY_COMPARISON, SESSIONS_COMPARISON, _timed_against_peer, _timed_peers
from late_data_bench.timing import _Feed, _GeneratorFeed, _timed_plain_dbt_runs, _timed_whole_runs, _Timing

log = logging.getLogger(__name__)


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
