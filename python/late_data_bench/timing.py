"""Timing one strategy's runs: the feeds of later arrivals, each timed run with its statements
profiled, the whole scheduled run, plain dbt in a process of its own, and the check that every
strategy ends with the same numbers."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from tqdm import tqdm

from late_data.project.generator import Scenario, generate
from late_data.running.scheduler import SCHEDULED_BUILD, tagged_selection
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.environment import ProjectEnvironment
from late_data.runtime.timeutil import ceil_to, floor_to
from late_data.runtime.timeutil import format_timestamp as _stamp
from late_data_bench.cells import (
    BENCH_LATENESS,
    BENCH_ORIGIN,
    BENCH_VARS,
    FLOOR,
    HISTORY,
    HISTORY_SNAPSHOT,
    HISTORY_TABLE,
    MEANS,
    MEASURE_TABLES,
    MICROBATCH,
    MICROBATCH_PERCENTILES,
    OURS,
    OURS_EXTREMES,
    OURS_PERCENTILES,
    PERCENTILES,
    PERCENTILES_MICROBATCH,
    STRATEGIES,
    WHOLE_RUN,
    BenchCell,
    RunProfile,
    _minutes_over_an_hour,
    bench_vars,
)
from late_data_bench.profile import EventRecorder


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


log = logging.getLogger(__name__)


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
