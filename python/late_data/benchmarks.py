"""Measurements on this machine: the changed-partition path against its alternatives, side by side on the
same data and run times, and this project's whole scheduled run."""

from __future__ import annotations

import logging
import statistics
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Callable

from tqdm import tqdm

from late_data.backfill import floor_to
from late_data.dbt_project import DbtProject
from late_data.demo import reset_schemas
from late_data.generator import Scenario, generate
from late_data.pipeline import SCHEDULED_BUILD, scheduled_selection
from late_data.profile import profile_lines, read_log_slice
from late_data.raw_tables import ensure_raw_tables

log = logging.getLogger(__name__)

BENCH_ORIGIN = datetime(2026, 6, 1)
BENCH_LATENESS = {
    # Every 10 s each location sends one reading from anywhere in the last hour: nearly every window changes.
    "heavy": {"late_share": 1.0, "lateness": "uniform"},
    # About 1 % of readings late, long-tailed.
    "sparse": {"late_share": 0.01, "lateness": "long_tail"},
}
STRATEGIES = ("changed_partitions", "microbatch", "full_refresh", "floor")
# The benchmark's settings: the product's late window and window size, 10-minute partitions.
BENCH_VARS = {"late_window_seconds": 3600, "window_size_seconds": 60, "partition_size_seconds": 600, "late_data_bench": True}
MEANS = "water_level_window_means"
HISTORY = "water_level_window_means_history"
# This project's whole scheduled run (means, too-late listing, history snapshot in one invocation),
# and the history snapshot's share of it: measured after the peers, on further minutes of data.
SCHEDULED_RUN = "scheduled_run"
HISTORY_SNAPSHOT = "history_snapshot"
MICROBATCH = "water_level_window_means_microbatch"
FLOOR = "bench_floor_window_means"


@dataclass(frozen=True)
class BenchCell:
    locations: int
    history_hours: float
    lateness: str


@dataclass(frozen=True)
class BenchResult:
    locations: int
    history_hours: float
    lateness: str
    strategy: str
    runs: int
    median_s: float
    partitions_rewritten: float
    files_rewritten: float

    @property
    def cell_key(self) -> tuple[int, float, str]:
        return (self.locations, self.history_hours, self.lateness)


@dataclass(frozen=True)
class RunProfile:
    """One run's slice of dbt's log and the Spark jobs it started."""

    log_lines: list[str]
    spark_jobs: int


@dataclass(frozen=True)
class CellMeasurement:
    cell: BenchCell
    results: list[BenchResult]
    profiles: dict[str, RunProfile]  # the last timed run of the strategies in PROFILED


# Where the time goes is reported for this project's two runs.
PROFILED = ("changed_partitions", SCHEDULED_RUN)

FULL_MATRIX = tuple(
    [BenchCell(locations, 2, lateness) for locations in (100, 1_000, 10_000) for lateness in ("heavy", "sparse")]
    + [BenchCell(1_000, 24, "sparse"), BenchCell(1_000, 168, "sparse")]
)
QUICK_MATRIX = (BenchCell(20, 2.1, "heavy"), BenchCell(20, 2.1, "sparse"))


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _floor_hour(moment: datetime) -> datetime:
    return moment.replace(minute=0, second=0, microsecond=0)


def _ceil_hour(moment: datetime) -> datetime:
    floor = _floor_hour(moment)
    return floor if floor == moment else floor + timedelta(hours=1)


def bench_cell(project: DbtProject, cell: BenchCell, runs: int) -> CellMeasurement:
    """Generate the cell's history, build every strategy's table once (untimed), then time `runs`
    runs of each strategy on the same data and run times, spread evenly over an hour (a scheduled
    task runs at every minute of the hour, and microbatch's hourly batches cost more late in the
    hour), each one minute after an untimed run that brings every table up to date. Then time as
    many whole scheduled runs of this project over the next hour, the same way."""
    project.use_vars(BENCH_VARS)
    reset_schemas(project)
    spark, schema = project.spark, project.target_schema()
    raw_table = ensure_raw_tables(spark, project.raw_schema(), project.environment.table_format)["water_level_readings"]
    scenario = Scenario(locations=cell.locations, **BENCH_LATENESS[cell.lateness])
    history_end = BENCH_ORIGIN + timedelta(hours=cell.history_hours)
    moment, chunk = BENCH_ORIGIN, timedelta(hours=max(1, 600 // cell.locations))
    with tqdm(total=cell.history_hours, desc=f"generate {cell}", unit="h", leave=False) as progress:
        while moment < history_end:
            upto = min(moment + chunk, history_end)
            generate(spark, raw_table, scenario, BENCH_ORIGIN, moment, upto)
            progress.update((upto - moment) / timedelta(hours=1))
            moment = upto
    first_run_time = history_end + timedelta(seconds=10)
    generate(spark, raw_table, scenario, BENCH_ORIGIN, history_end, first_run_time)
    project.invoke(
        ["build", "--select", "+tag:water_level", "--resource-type", "model", "--resource-type", "snapshot"],
        {"run_time": _stamp(first_run_time)},
    )
    # The peers start from the same table (built batch by batch, a week of history would take hours).
    for table in (MICROBATCH, FLOOR):
        spark.sql(
            f"create table {schema}.{table} using {project.environment.table_format} partitioned by (partition_start)"
            f" as select window_start, location, partition_start, reading_count, mean_value, is_final from {schema}.{MEANS}"
        )
    feed = _Feed(spark, raw_table, scenario, first_run_time)
    minutes = _minutes_over_an_hour(runs)
    profiles: dict[str, RunProfile] = {}
    try:
        timings = _timed_runs(project, cell, feed, [history_end + timedelta(minutes=m, seconds=10) for m in minutes], profiles)
    finally:
        spark.catalog.dropTempView("bench_changed_windows")
    _check_strategies_agree(spark, schema)
    next_hour = history_end + timedelta(hours=1)
    timings.update(
        _timed_scheduled_runs(project, cell, feed, [next_hour + timedelta(minutes=m, seconds=10) for m in minutes], profiles)
    )
    results = [
        BenchResult(
            locations=cell.locations, history_hours=cell.history_hours, lateness=cell.lateness, strategy=strategy,
            runs=len(timings[strategy]),
            median_s=statistics.median(t[0] for t in timings[strategy]),
            partitions_rewritten=statistics.median(t[1] for t in timings[strategy]),
            files_rewritten=statistics.median(t[2] for t in timings[strategy]),
        )
        for strategy in (*STRATEGIES, SCHEDULED_RUN, HISTORY_SNAPSHOT)
    ]
    return CellMeasurement(cell, results, {strategy: profiles[strategy] for strategy in PROFILED})


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


def _timed_runs(
    project: DbtProject, cell: BenchCell, feed: _Feed, run_times: list[datetime], profiles: dict[str, RunProfile]
) -> dict[str, list[tuple[float, int, int]]]:
    """Per strategy, (seconds, partitions rewritten, files rewritten) of the run at each of
    `run_times`, each after an untimed run of every strategy one minute earlier; `profiles` gets
    each strategy's last run."""
    spark, schema = project.spark, project.target_schema()
    timings: dict[str, list[tuple[float, int, int]]] = {strategy: [] for strategy in STRATEGIES}
    tables = {"changed_partitions": MEANS, "microbatch": MICROBATCH, "full_refresh": MEANS, "floor": FLOOR}
    for step, run_time in enumerate(tqdm(run_times, desc=f"runs {cell}", unit="run", leave=False), start=1):
        catch_up = run_time - timedelta(minutes=1)
        previous = feed.until(catch_up)
        _materialize_changed_windows(spark, schema, previous, catch_up)
        for strategy in ("changed_partitions", "microbatch", "floor"):
            _run_strategy(project, strategy, previous, catch_up)
        feed.until(run_time)
        _materialize_changed_windows(spark, schema, catch_up, run_time)
        for strategy in STRATEGIES:
            if strategy == "full_refresh" and step > _full_refresh_runs(cell, len(run_times)):
                continue
            seconds, partitions, files, profile = _timed(
                project, f"{schema}.{tables[strategy]}", lambda: _run_strategy(project, strategy, catch_up, run_time)
            )
            timings[strategy].append((seconds, partitions, files))
            profiles[strategy] = profile
            log.info("%s %s run %d: %.2f s, %d partitions, %d files", cell, strategy, step, seconds, partitions, files)
    return timings


def _timed_scheduled_runs(
    project: DbtProject, cell: BenchCell, feed: _Feed, run_times: list[datetime], profiles: dict[str, RunProfile]
) -> dict[str, list[tuple[float, int, int]]]:
    """This project's whole scheduled run (the scheduler's selection after its first run) at each
    of `run_times`, each after an untimed one a minute earlier: seconds, the history table's
    partitions and files rewritten, and the snapshot's own seconds from the audit."""
    spark, schema = project.spark, project.target_schema()
    timings: dict[str, list[tuple[float, int, int]]] = {SCHEDULED_RUN: [], HISTORY_SNAPSHOT: []}

    def scheduled_run(run_time: datetime) -> None:
        project.invoke(
            SCHEDULED_BUILD + ["--select", scheduled_selection("water_level", first_run=False)],
            {"run_time": _stamp(run_time)},
        )

    for step, run_time in enumerate(tqdm(run_times, desc=f"scheduled runs {cell}", unit="run", leave=False), start=1):
        feed.until(run_time - timedelta(minutes=1))
        scheduled_run(run_time - timedelta(minutes=1))
        feed.until(run_time)
        seconds, partitions, files, profiles[SCHEDULED_RUN] = _timed(
            project, f"{schema}.{HISTORY}", lambda: scheduled_run(run_time)
        )
        snapshot_seconds = spark.sql(
            f"select seconds from {schema}.late_data_run_audit"
            f" where model = '{HISTORY}' and run_time = timestamp'{_stamp(run_time)}'"
        ).first()["seconds"]
        log.info("%s scheduled run %d: %.2f s (snapshot %.2f s), %d history partitions", cell, step, seconds, snapshot_seconds, partitions)
        timings[SCHEDULED_RUN].append((seconds, partitions, files))
        timings[HISTORY_SNAPSHOT].append((snapshot_seconds, partitions, files))
    return timings


def _timed(project: DbtProject, table: str, run: Callable[[], Any]) -> tuple[float, int, int, RunProfile]:
    """Seconds of `run`, the partitions and files it rewrote in `table` (from the table format's
    commits), and where its time went (from dbt's log and Spark's job tracker)."""
    from late_data.table_history import commits_after, latest_version

    table_format = project.environment.table_format
    version = latest_version(project.spark, table, table_format)
    dbt_log = project.environment.dbt_log_dir / "dbt.log"
    log_start = dbt_log.stat().st_size if dbt_log.exists() else 0
    jobs_before = set(project.spark.sparkContext.statusTracker().getJobIdsForGroup())
    started = time.perf_counter()
    run()
    seconds = time.perf_counter() - started
    jobs = len(set(project.spark.sparkContext.statusTracker().getJobIdsForGroup()) - jobs_before)
    profile = RunProfile(read_log_slice(dbt_log, log_start) if dbt_log.exists() else [], jobs)
    commits = commits_after(project.spark, table, table_format, version)
    partitions = set().union(*(commit.partitions_touched for commit in commits))
    return seconds, len(partitions), sum(commit.files_added + commit.files_removed for commit in commits), profile


def _full_refresh_runs(cell: BenchCell, runs: int) -> int:
    """A full refresh of a day or a week of history takes minutes: two runs give its median there."""
    return runs if cell.history_hours <= 2 else min(runs, 2)


def _run_strategy(project: DbtProject, strategy: str, previous: datetime, run_time: datetime) -> None:
    at = {"run_time": _stamp(run_time)}
    if strategy == "changed_partitions":
        project.invoke(["run", "--select", MEANS], at)
    elif strategy == "microbatch":
        late = timedelta(seconds=BENCH_VARS["late_window_seconds"] + BENCH_VARS["window_size_seconds"])
        # The batches a late row can reach: lookback covering the late window, whatever changed.
        project.invoke(
            [
                "run", "--select", MICROBATCH,
                "--event-time-start", _stamp(_floor_hour(min(previous, run_time) - late)),
                "--event-time-end", _stamp(_ceil_hour(run_time)),
            ],
            at,
        )
    elif strategy == "full_refresh":
        project.invoke(["run", "--full-refresh", "--select", MEANS], at)
    else:
        project.spark.sql(_floor_merge(project.target_schema(), project.raw_schema(), previous, run_time))


def _materialize_changed_windows(spark: Any, schema: str, previous: datetime, run_time: datetime) -> None:
    """The floor's perfect knowledge, computed outside its timing: the windows that received rows
    or became final since the previous run (rows stamped exactly at the previous run time included:
    the generator may append them after that run). Checkpointed, not cached: Spark's cache misses
    plans over Iceberg session-catalog tables (every lookup makes a new table object), so a cached
    view was silently recomputed from the whole raw table inside the floor's timing."""
    until_final = timedelta(seconds=BENCH_VARS["late_window_seconds"] + BENCH_VARS["window_size_seconds"])
    changed_windows = spark.sql(
        f"""
        select distinct window_start, location from {schema}.int_water_level_readings__windowed
        where (ingested_at >= timestamp'{_stamp(previous)}' and ingested_at <= timestamp'{_stamp(run_time)}')
            or (final_at > timestamp'{_stamp(previous)}' and final_at <= timestamp'{_stamp(run_time)}'
                and event_time >= timestamp'{_stamp(previous - until_final)}')
        """
    )
    changed_windows.localCheckpoint(eager=True).createOrReplaceTempView("bench_changed_windows")


def _floor_merge(schema: str, raw_schema: str, previous: datetime, run_time: datetime) -> str:
    """One hand-written statement: the means of exactly the changed windows, from the raw rows of
    those windows only, merged into the floor's table. It relies on what the benchmark knows and
    the product cannot: which windows changed, and that the data has no corrections moving a
    reading between windows. A window changed since the previous run received a row within its
    late window or became final, so it starts after previous - late window - window size: a
    literal bound, which lets the table format prune the older partitions of the raw table and of
    the merge's target."""
    at = f"timestamp'{_stamp(run_time)}'"
    window, late = BENCH_VARS["window_size_seconds"], BENCH_VARS["late_window_seconds"]
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


def _check_strategies_agree(spark: Any, schema: str) -> None:
    """A benchmark of wrong answers is worthless: all four tables must hold the same windows."""
    columns = "window_start, location, reading_count, round(mean_value, 9) as mean_value, is_final"
    reference = spark.sql(f"select {columns} from {schema}.{MEANS}")
    for table in (MICROBATCH, FLOOR):
        other = spark.sql(f"select {columns} from {schema}.{table}")
        differing = reference.exceptAll(other).count() + other.exceptAll(reference).count()
        if differing:
            raise RuntimeError(f"benchmark: {table} differs from {MEANS} in {differing} rows")


def write_bench_outputs(
    measurements: list[CellMeasurement], out_dir: Path, machine: str, keep_other_cells: bool = False
) -> list[Path]:
    """bench/results.csv, bench/results.md (table and ratios), bench/results.png and
    bench/profile.md (where this project's runs spend their time). With `keep_other_cells`, the
    rows of cells not measured now stay as results.csv had them (re-measuring some cells)."""
    import csv

    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, md_path, png_path = out_dir / "results.csv", out_dir / "results.md", out_dir / "results.png"
    results = [result for measurement in measurements for result in measurement.results]
    if keep_other_cells and csv_path.exists():
        measured = {(m.cell.locations, m.cell.history_hours, m.cell.lateness) for m in measurements}
        results = [result for result in _read_results(csv_path) if result.cell_key not in measured] + results
        results.sort(key=lambda result: result.cell_key)
    with csv_path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(BenchResult.__dataclass_fields__))
        writer.writeheader()
        writer.writerows(asdict(result) for result in results)
    cells = sorted({r.cell_key for r in results})
    median = {(r.locations, r.history_hours, r.lateness, r.strategy): r.median_s for r in results}
    lines = [
        f"# Benchmark: changed partitions against the alternatives\n\n{machine}\n",
        "Median seconds per warm run (one Spark session). Per cell, the four ways to keep"
        " `water_level_window_means` right ran on the same data and run times, one dbt invocation each"
        " (the floor: one Spark statement). Then `scheduled run`: this project's whole scheduled run"
        " (means, too-late listing and history snapshot in one invocation) on the following minutes,"
        " with the snapshot's share of it.\n",
        "| locations | history h | lateness | changed partitions | microbatch | full refresh | floor"
        " | ours / microbatch | ours / full refresh | ours / floor | scheduled run | of which snapshot |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for cell in cells:
        ours, micro, full, floor, scheduled, snapshot = (
            median[(*cell, strategy)] for strategy in (*STRATEGIES, SCHEDULED_RUN, HISTORY_SNAPSHOT)
        )
        lines.append(
            f"| {cell[0]:,} | {cell[1]:g} | {cell[2]} | {ours:.2f} | {micro:.2f} | {full:.2f} | {floor:.2f}"
            f" | {ours / micro:.2f} | {ours / full:.2f} | {ours / floor:.2f} | {scheduled:.2f} | {snapshot:.2f} |"
        )
    lines += [
        "", "Partitions and files rewritten per run (medians, from the table format's commit metadata; for"
        " `scheduled_run` and `history_snapshot`, those of the history snapshot's table), and runs measured:", "",
        "| locations | history h | lateness | strategy | runs | partitions | files |", "|---:|---:|---|---|---:|---:|---:|",
    ]
    lines += [
        f"| {r.locations:,} | {r.history_hours:g} | {r.lateness} | {r.strategy} | {r.runs} | {r.partitions_rewritten:g}"
        f" | {r.files_rewritten:g} |"
        for r in results
    ]
    md_path.write_text("\n".join(lines) + "\n\n![medians](results.png)\n")
    _plot_bench(results, cells, png_path)
    profile_path = out_dir / "profile.md"
    kept_sections = _other_cells_profile_sections(profile_path, measurements) if keep_other_cells else []
    profile_path.write_text(_profile_markdown(measurements, machine, kept_sections))
    return [csv_path, md_path, png_path, profile_path]


def _read_results(csv_path: Path) -> list[BenchResult]:
    import csv

    with csv_path.open(newline="") as handle:
        return [
            BenchResult(
                locations=int(row["locations"]), history_hours=float(row["history_hours"]), lateness=row["lateness"],
                strategy=row["strategy"], runs=int(row["runs"]), median_s=float(row["median_s"]),
                partitions_rewritten=float(row["partitions_rewritten"]), files_rewritten=float(row["files_rewritten"]),
            )
            for row in csv.DictReader(handle)
        ]


def _profile_heading(cell: BenchCell) -> str:
    return f"## {cell.locations:,} locations, {cell.history_hours:g} h history, {cell.lateness}: "


def _other_cells_profile_sections(profile_path: Path, measurements: list[CellMeasurement]) -> list[str]:
    """The sections of an existing profile.md that belong to cells not measured now."""
    if not profile_path.exists():
        return []
    measured = tuple(_profile_heading(measurement.cell) for measurement in measurements)
    sections = profile_path.read_text().split("\n## ")[1:]
    return ["## " + section.strip() + "\n" for section in sections if not ("## " + section).startswith(measured)]


def _profile_markdown(measurements: list[CellMeasurement], machine: str, kept_sections: list[str]) -> str:
    lines = [
        f"# Where the time goes\n\n{machine}\n",
        "The last timed run of each cell, per kind of statement: wall seconds from a statement's start"
        " to dbt's next event (fetching its result included), from dbt's debug log; Spark jobs from"
        " Spark's job tracker. `changed_partitions` runs the means model alone; `scheduled_run` is the"
        " whole scheduled run (means, too-late listing, history snapshot).\n",
        *kept_sections,
    ]
    for measurement in measurements:
        cell = measurement.cell
        for strategy, profile in measurement.profiles.items():
            lines += [
                f"{_profile_heading(cell)}{strategy}\n",
                *profile_lines(profile.log_lines, profile.spark_jobs),
                "",
            ]
    return "\n".join(lines)


def _plot_bench(results: list[BenchResult], cells: list[tuple[int, float, str]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(10, 4))
    width = 0.16
    for offset, strategy in enumerate((*STRATEGIES, SCHEDULED_RUN)):
        values = [next(r.median_s for r in results if (r.locations, r.history_hours, r.lateness, r.strategy) == (*cell, strategy)) for cell in cells]
        axis.bar([i + offset * width for i in range(len(cells))], values, width, label=strategy)
    axis.set_xticks([i + 2 * width for i in range(len(cells))])
    axis.set_xticklabels([f"{c[0]:,} loc\n{c[1]:g} h {c[2]}" for c in cells], fontsize=8)
    axis.set(yscale="log", ylabel="median seconds per run")
    axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)
