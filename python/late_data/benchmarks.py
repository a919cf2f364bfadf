"""Measurements on this machine: the scheduled path against its alternatives, and its cost as history grows."""

from __future__ import annotations

import logging
import statistics
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from tqdm import tqdm

from late_data.dbt_project import DbtProject
from late_data.demo import reset_schemas
from late_data.generator import Scenario, generate
from late_data.pipeline import run_pipeline
from late_data.raw_tables import ensure_raw_tables

log = logging.getLogger(__name__)

HISTORY_ORIGIN = datetime(2026, 2, 1)
WATER_LEVEL = "+tag:water_level"
SPARSE_SCENARIO = Scenario(locations=100, late_share=0.01, lateness="long_tail")


@dataclass(frozen=True)
class HistoryCost:
    days: float
    raw_rows: int
    history_versions: int
    runs: int
    median_snapshot_seconds: float
    median_model_seconds: float
    median_run_seconds: float

    def line(self) -> str:
        return (
            f"history={self.days:g} days raw_rows={self.raw_rows} history_versions={self.history_versions}"
            f" runs={self.runs} median_snapshot_s={self.median_snapshot_seconds:.2f}"
            f" median_means_model_s={self.median_model_seconds:.2f} median_run_s={self.median_run_seconds:.2f}"
        )


def measure_history_cost(project: DbtProject, days: float, runs: int, scenario: Scenario = SPARSE_SCENARIO) -> HistoryCost:
    """Build `days` of history, then time `runs` warm scheduled runs one minute apart."""
    reset_schemas(project)
    raw_table = ensure_raw_tables(project.spark, project.raw_schema(), project.environment.table_format)[
        "water_level_readings"
    ]
    history_end = HISTORY_ORIGIN + timedelta(days=days)
    day = HISTORY_ORIGIN
    with tqdm(total=days, desc=f"generate {days:g} days", unit="day", leave=False) as progress:
        while day < history_end:
            next_day = min(day + timedelta(days=1), history_end)
            generate(project.spark, raw_table, scenario, HISTORY_ORIGIN, day, next_day)
            progress.update((next_day - day) / timedelta(days=1))
            day = next_day
    run_pipeline(project, history_end, WATER_LEVEL)  # first build: everything from raw, the initial versions
    audit = f"{project.target_schema()}.late_data_run_audit"
    snapshot_seconds, model_seconds, run_seconds = [], [], []
    previous = history_end
    for step in range(1, runs + 1):
        run_time = history_end + timedelta(minutes=step)
        generate(project.spark, raw_table, scenario, HISTORY_ORIGIN, previous, run_time)
        previous = run_time
        report = run_pipeline(project, run_time, WATER_LEVEL)
        seconds = {
            row["model_role"]: row["seconds"]
            for row in project.spark.sql(
                f"select model_role, seconds from {audit} where run_time = timestamp'{run_time:%Y-%m-%d %H:%M:%S}'"
            ).collect()
        }
        snapshot_seconds.append(seconds["history"])
        model_seconds.append(seconds["windows"])
        run_seconds.append(report.seconds)
        log.info("%s snapshot %.2f s, means model %.2f s", report.line(), seconds["history"], seconds["windows"])
    return HistoryCost(
        days=days,
        raw_rows=project.spark.table(raw_table).count(),
        history_versions=project.spark.table(f"{project.target_schema()}.water_level_window_means_history").count(),
        runs=runs,
        median_snapshot_seconds=statistics.median(snapshot_seconds),
        median_model_seconds=statistics.median(model_seconds),
        median_run_seconds=statistics.median(run_seconds),
    )


# --- Changed partitions against the alternatives, side by side on the same data and run times ---

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
TOO_LATE = "water_level_too_late_readings"
HISTORY = "water_level_window_means_history"
SCHEDULED_RUN = "scheduled_run"
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


def bench_cell(project: DbtProject, cell: BenchCell, runs: int) -> list[BenchResult]:
    """Generate the cell's history, build every strategy's table once (untimed), then time `runs`
    scheduled runs one minute apart, each strategy on the same data and run time."""
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
    run_time = history_end + timedelta(seconds=10)
    generate(spark, raw_table, scenario, BENCH_ORIGIN, history_end, run_time)
    project.invoke(
        ["build", "--select", "+tag:water_level", "--resource-type", "model", "--resource-type", "snapshot"],
        {"run_time": _stamp(run_time)},
    )
    # The peers start from the same table (built batch by batch, a week of history would take hours).
    for table in (MICROBATCH, FLOOR):
        spark.sql(
            f"create table {schema}.{table} using {project.environment.table_format} partitioned by (partition_start)"
            f" as select window_start, location, partition_start, reading_count, mean_value, is_final from {schema}.{MEANS}"
        )

    try:
        timings = _timed_runs(project, cell, scenario, raw_table, history_end, run_time, runs)
    finally:
        # The cached view holds this cell's tables; dropping the schemas does not evict it.
        spark.sql("uncache table if exists bench_changed_windows")
        spark.sql("drop view if exists bench_changed_windows")
    _check_strategies_agree(spark, schema)
    return [
        BenchResult(
            locations=cell.locations, history_hours=cell.history_hours, lateness=cell.lateness, strategy=strategy,
            runs=len(timings[strategy]),
            median_s=statistics.median(t[0] for t in timings[strategy]),
            partitions_rewritten=statistics.median(t[1] for t in timings[strategy]),
            files_rewritten=statistics.median(t[2] for t in timings[strategy]),
        )
        for strategy in (*STRATEGIES, SCHEDULED_RUN)
    ]


def _timed_runs(
    project: DbtProject, cell: BenchCell, scenario: Scenario, raw_table: str, history_end: datetime,
    previous: datetime, runs: int,
) -> dict[str, list[tuple[float, int, int]]]:
    """Per strategy, (seconds, partitions rewritten, files rewritten) of each of `runs` runs, plus
    `scheduled_run`: this project's whole scheduled run (the means, then the too-late listing and
    the history snapshot), with the history table's partitions and files."""
    from late_data.table_history import commits_after, latest_version

    spark, schema, table_format = project.spark, project.target_schema(), project.environment.table_format
    timings: dict[str, list[tuple[float, int, int]]] = {strategy: [] for strategy in (*STRATEGIES, SCHEDULED_RUN)}
    tables = {"changed_partitions": MEANS, "microbatch": MICROBATCH, "full_refresh": MEANS, "floor": FLOOR,
              SCHEDULED_RUN: HISTORY}
    for step in tqdm(range(1, runs + 1), desc=f"runs {cell}", unit="run", leave=False):
        run_time = history_end + timedelta(minutes=step, seconds=10)
        generate(spark, raw_table, scenario, BENCH_ORIGIN, previous, run_time)
        _cache_changed_windows(spark, schema, previous, run_time)
        for strategy in (*STRATEGIES, SCHEDULED_RUN):
            if strategy == "full_refresh" and step > _full_refresh_runs(cell, runs):
                continue
            table = f"{schema}.{tables[strategy]}"
            version = latest_version(spark, table, table_format)
            started = time.perf_counter()
            _run_strategy(project, strategy, previous, run_time)
            seconds = time.perf_counter() - started
            if strategy == SCHEDULED_RUN:
                seconds += timings["changed_partitions"][-1][0]
            commits = commits_after(spark, table, table_format, version)
            partitions = set().union(*(commit.partitions_touched for commit in commits))
            files = sum(commit.files_added + commit.files_removed for commit in commits)
            timings[strategy].append((seconds, len(partitions), files))
            log.info("%s %s run %d: %.2f s, %d partitions, %d files", cell, strategy, step, seconds, len(partitions), files)
        previous = run_time
    return timings


def _full_refresh_runs(cell: BenchCell, runs: int) -> int:
    """A full refresh of a day or a week of history takes minutes: two runs give its median there."""
    return runs if cell.history_hours <= 2 else min(runs, 2)


def _run_strategy(project: DbtProject, strategy: str, previous: datetime, run_time: datetime) -> None:
    at = {"run_time": _stamp(run_time)}
    if strategy == "changed_partitions":
        project.invoke(["run", "--select", MEANS], at)
    elif strategy == SCHEDULED_RUN:
        # The rest of the scheduler's run; its time is added to the means model's.
        project.invoke(["build", "--select", f"{TOO_LATE} {HISTORY}", "--resource-type", "model", "--resource-type", "snapshot"], at)
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
        project.spark.sql(_floor_merge(project.target_schema(), project.raw_schema(), run_time))


def _cache_changed_windows(spark: Any, schema: str, previous: datetime, run_time: datetime) -> None:
    """The floor's perfect knowledge, computed outside its timing: the windows that received rows
    or became final since the previous run (rows stamped exactly at the previous run time included:
    the generator may append them after that run)."""
    until_final = timedelta(seconds=BENCH_VARS["late_window_seconds"] + BENCH_VARS["window_size_seconds"])
    spark.sql("uncache table if exists bench_changed_windows")
    spark.sql(
        f"""
        create or replace temporary view bench_changed_windows as
        select distinct window_start, location from {schema}.int_water_level_readings__windowed
        where (ingested_at >= timestamp'{_stamp(previous)}' and ingested_at <= timestamp'{_stamp(run_time)}')
            or (final_at > timestamp'{_stamp(previous)}' and final_at <= timestamp'{_stamp(run_time)}'
                and event_time >= timestamp'{_stamp(previous - until_final)}')
        """
    )
    spark.sql("cache table bench_changed_windows")


def _floor_merge(schema: str, raw_schema: str, run_time: datetime) -> str:
    """One hand-written statement: the means of exactly the changed windows, from the raw rows of
    those windows only, merged into the floor's table. It relies on what the benchmark knows and
    the product cannot: which windows changed, and that the data has no corrections moving a
    reading between windows."""
    at = f"timestamp'{_stamp(run_time)}'"
    window, late = BENCH_VARS["window_size_seconds"], BENCH_VARS["late_window_seconds"]
    partition = BENCH_VARS["partition_size_seconds"]
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
                        where event_time >= (select min(window_start) from bench_changed_windows)
                    ) as readings
                    left semi join bench_changed_windows as changed
                        on readings.window_start = changed.window_start and readings.location = changed.location
                )
            )
            where ingested_at <= least({at}, final_at) and coalesce(superseded_at > least({at}, final_at), true)
            group by window_start, location, partition_start
        ) as fresh
        on target.window_start = fresh.window_start and target.location = fresh.location
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


def write_bench_outputs(results: list[BenchResult], out_dir: Path, machine: str) -> list[Path]:
    """bench/results.csv, bench/results.md (table and ratios) and bench/results.png."""
    import csv

    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, md_path, png_path = out_dir / "results.csv", out_dir / "results.md", out_dir / "results.png"
    with csv_path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(BenchResult.__dataclass_fields__))
        writer.writeheader()
        writer.writerows(asdict(result) for result in results)
    cells = sorted({(r.locations, r.history_hours, r.lateness) for r in results})
    median = {(r.locations, r.history_hours, r.lateness, r.strategy): r.median_s for r in results}
    lines = [
        f"# Benchmark: changed partitions against the alternatives\n\n{machine}\n",
        "Median seconds per warm run (one Spark session), same data and run times per cell. The first four"
        " columns keep `water_level_window_means` right, one dbt invocation each (the floor: one Spark"
        " statement); `scheduled run` is this project's whole scheduled run: the means, then the too-late"
        " listing and the history snapshot.\n",
        "| locations | history h | lateness | changed partitions | microbatch | full refresh | floor | scheduled run |"
        " ours / microbatch | ours / full refresh | ours / floor |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for cell in cells:
        ours, micro, full, floor, scheduled = (median[(*cell, strategy)] for strategy in (*STRATEGIES, SCHEDULED_RUN))
        lines.append(
            f"| {cell[0]:,} | {cell[1]:g} | {cell[2]} | {ours:.2f} | {micro:.2f} | {full:.2f} | {floor:.2f}"
            f" | {scheduled:.2f} | {ours / micro:.2f} | {ours / full:.2f} | {ours / floor:.2f} |"
        )
    lines += [
        "", "Partitions and files rewritten per run (medians, from the table format's commit metadata; for"
        " `scheduled_run`, those of the history snapshot's table), and runs measured:", "",
        "| locations | history h | lateness | strategy | runs | partitions | files |", "|---:|---:|---|---|---:|---:|---:|",
    ]
    lines += [
        f"| {r.locations:,} | {r.history_hours:g} | {r.lateness} | {r.strategy} | {r.runs} | {r.partitions_rewritten:g}"
        f" | {r.files_rewritten:g} |"
        for r in results
    ]
    md_path.write_text("\n".join(lines) + "\n\n![medians](results.png)\n")
    _plot_bench(results, cells, png_path)
    return [csv_path, md_path, png_path]


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
