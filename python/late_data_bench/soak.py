"""The soak cell: a day of consecutive one-minute scheduled runs with the scheduler's upkeep on
(reconciliation and maintenance every 60 runs), recording how each run's cost and each table's
files and metadata move run after run. Incremental pipelines rarely slow down on their first run;
they slow down on their thousandth."""

from __future__ import annotations

import csv
import json
import logging
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from tqdm import tqdm

from late_data.running.scheduler import Upkeep, tagged_selection
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.timeutil import format_timestamp
from late_data.tables import delta_log_files
from late_data.tables.history import delta_active_files
from late_data.tables.versions import current_metadata_file
from late_data_bench.benchmarks import built_history
from late_data_bench.cells import HISTORY, HISTORY_TABLE, MEANS, BenchCell

log = logging.getLogger(__name__)

# The late-data tables of the bench's water-level pipeline, whose metadata the soak weighs.
SOAK_TABLES = (
    MEANS,
    HISTORY_TABLE,
    "int_water_level__versions",
    "water_level_too_late_readings",
    "late_data_run_audit",
)
# The scheduler's upkeep (reconciliation and maintenance every 60 runs), its maintenance keeping
# 15 minutes of wall-clock snapshots rather than the default 24 hours: a one-minute schedule keeping
# 24 h holds 1,440 runs of snapshots and reaches its steady state (expiring deletes what the runs
# add) after a day; the soak makes about ten one-minute runs a minute, so 15 minutes keeps about
# 150 runs' worth and reaches that steady state within its first 200 runs.
SOAK_UPKEEP = Upkeep(reconcile_every=60, maintain_every=60, keep_hours=0.25)
# Flat means: the median of the last 100 runs at most 1.1x the median of runs 100 to 200.
BASELINE_RUNS = (100, 200)
TAIL_RUNS = 100
FLAT_RATIO = 1.1
# The raw rows are appended ten minutes of arrivals at a time, ahead of the runs (a run sees only
# rows that arrived by its run time): generating them costs about 2.5 s, more than a run at 100
# series, every minute.
FEED_AHEAD_MINUTES = 10


@dataclass(frozen=True)
class SoakRun:
    """One scheduled run of the soak, and the tables right after it (and its upkeep)."""

    run: int
    run_time: str
    seconds: float
    snapshot_seconds: float
    reconciliation: bool
    maintenance_seconds: float
    history_data_files: int
    history_delete_files: int
    means_data_files: int
    means_delete_files: int
    data_files: int  # every late-data table of the pipeline, with the audit
    metadata_bytes: int


@dataclass(frozen=True)
class SoakSummary:
    runs: int
    baseline_median_s: float
    tail_median_s: float
    ratio: float
    baseline_max_files: int
    tail_max_files: int
    baseline_max_metadata_bytes: int
    tail_max_metadata_bytes: int


def soak_name(cell: BenchCell) -> str:
    return f"soak_{cell.locations}_{cell.lateness}"


def run_soak(
    project: DbtProject, cell: BenchCell, runs: int, out_dir: Path, upkeep: Upkeep, machine: str
) -> list[Path]:
    """Build the cell's history (untimed), then `runs` consecutive one-minute scheduled runs with
    `upkeep`, the raw rows fed ahead of them (FEED_AHEAD_MINUTES); writes the runs so far every 50
    runs, and the summary and plot at the end."""
    feed, history_end = built_history(project, cell)
    spark, schema = project.spark, project.target_schema()
    table_format = project.environment.table_format
    locations = {table: _location(project, f"{schema}.{table}", table_format) for table in SOAK_TABLES}
    measured: list[SoakRun] = []
    first = history_end + timedelta(minutes=1, seconds=10)
    for number in tqdm(range(1, runs + 1), desc=f"soak {cell}", unit="run"):
        run_time = first + timedelta(minutes=number - 1)
        if feed.fed_until <= run_time:
            feed.until(run_time + timedelta(minutes=FEED_AHEAD_MINUTES))
        started = time.perf_counter()
        report = upkeep.run(project, run_time, tagged_selection("water_level"), number)
        upkept = time.perf_counter() - started
        history_files = _file_counts(spark, f"{schema}.{HISTORY_TABLE}", locations[HISTORY_TABLE], table_format)
        means_files = _file_counts(spark, f"{schema}.{MEANS}", locations[MEANS], table_format)
        measured.append(
            SoakRun(
                run=number,
                run_time=format_timestamp(run_time),
                seconds=round(report.seconds, 3),
                snapshot_seconds=0.0,
                reconciliation=upkeep.reconciles(number),
                maintenance_seconds=round(upkept - report.seconds, 3) if upkeep.maintains(number) else 0.0,
                history_data_files=history_files[0],
                history_delete_files=history_files[1],
                means_data_files=means_files[0],
                means_delete_files=means_files[1],
                data_files=sum(_data_files_on_disk(path) for path in locations.values()),
                metadata_bytes=sum(_metadata_bytes(path, table_format) for path in locations.values()),
            )
        )
        log.info("%s soak run %d: %s", cell, number, measured[-1])
        if number % 50 == 0 or number == runs:
            measured = _with_snapshot_seconds(project, measured)
            write_soak_runs(measured, out_dir / f"{soak_name(cell)}.csv")
    return write_soak_outputs(measured, cell, out_dir, machine, upkeep)


def _with_snapshot_seconds(project: DbtProject, measured: list[SoakRun]) -> list[SoakRun]:
    seconds = _snapshot_seconds(project, [run.run_time for run in measured])
    return [replace(run, snapshot_seconds=seconds.get(run.run_time, 0.0)) for run in measured]


def _location(project: DbtProject, table: str, table_format: str) -> Path:
    if table_format == "iceberg":
        return delta_log_files.local_path(current_metadata_file(project, table)).parent.parent
    return delta_log_files.local_path(str(project.spark.sql(f"describe detail {table}").first()["location"]))


def _file_counts(spark: Any, table: str, location: Path, table_format: str) -> tuple[int, int]:
    """(data files, delete files) a reader of the table's current version plans over. Iceberg: the
    current snapshot's summary, from the newest metadata file on disk (a query of the `files` or
    `snapshots` table costs 0.7 to 1.8 s here, a run's share). Delta: from the log, a file
    carrying a deletion vector counting as a delete file."""
    if table_format != "iceberg":
        files = delta_active_files(spark, table)
        return len(files), sum(1 for file in files if file.deleted_rows)
    newest = max((location / "metadata").glob("*.metadata.json"), key=lambda path: int(path.name.split("-")[0]))
    metadata = json.loads(newest.read_text())
    (current,) = [s for s in metadata["snapshots"] if s["snapshot-id"] == metadata["current-snapshot-id"]]
    return int(current["summary"]["total-data-files"]), int(current["summary"]["total-delete-files"])


def _snapshot_seconds(project: DbtProject, run_times: list[str]) -> dict[str, float]:
    """The history snapshot's seconds of each run, from the audit, in one query."""
    rows = project.query(
        f"select cast(run_time as string) as run_time, sum(seconds) as seconds"
        f" from {project.target_schema()}.late_data_run_audit"
        f" where model = '{HISTORY}' and outcome = 'success' and run_time >= timestamp'{min(run_times)}'"
        " group by run_time"
    )
    return {str(row["run_time"])[:19]: round(float(row["seconds"]), 3) for row in rows}


def _data_files_on_disk(location: Path) -> int:
    """Parquet files under the table's directory, referenced or not (what maintenance must delete)."""
    return sum(
        1 for path in location.rglob("*.parquet") if "metadata" not in path.parts and "_delta_log" not in path.parts
    )


def _metadata_bytes(location: Path, table_format: str) -> int:
    folder = location / ("metadata" if table_format == "iceberg" else "_delta_log")
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def write_soak_runs(measured: list[SoakRun], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=[field.name for field in fields(SoakRun)])
        writer.writeheader()
        writer.writerows(asdict(run) for run in measured)
    return path


def read_soak_runs(path: Path) -> list[SoakRun]:
    with path.open() as handle:
        return [
            SoakRun(**{field.name: _typed(row[field.name], field.type) for field in fields(SoakRun)})
            for row in csv.DictReader(handle)
        ]


def _typed(text: str, type_name: Any) -> Any:
    """A CSV cell as its field's type (the dataclass's annotations are strings here)."""
    parsers: dict[str, Callable[[str], Any]] = {"int": int, "float": float, "bool": lambda value: value == "True"}
    return parsers.get(str(type_name), str)(text)


def summarize(measured: list[SoakRun]) -> SoakSummary:
    """The median of runs 100 to 200 against the median of the last 100, and the most files and
    metadata in each stretch. Runs with a reconciliation are left out of both medians: they
    recompute the late window on purpose, once an hour."""
    if len(measured) < BASELINE_RUNS[1] + TAIL_RUNS:
        raise ValueError(f"a soak summary needs at least {BASELINE_RUNS[1] + TAIL_RUNS} runs, got {len(measured)}")
    baseline = measured[BASELINE_RUNS[0] - 1 : BASELINE_RUNS[1]]
    tail = measured[-TAIL_RUNS:]

    def median(stretch: list[SoakRun]) -> float:
        return statistics.median(run.seconds for run in stretch if not run.reconciliation)

    return SoakSummary(
        runs=len(measured),
        baseline_median_s=median(baseline),
        tail_median_s=median(tail),
        ratio=median(tail) / median(baseline),
        baseline_max_files=max(run.data_files for run in baseline),
        tail_max_files=max(run.data_files for run in tail),
        baseline_max_metadata_bytes=max(run.metadata_bytes for run in baseline),
        tail_max_metadata_bytes=max(run.metadata_bytes for run in tail),
    )


def upkeep_sentence(upkeep: Upkeep) -> str:
    """How often the soak reconciled and maintained, and the snapshots its maintenance kept."""
    kept = "the macro's default" if upkeep.keep_hours is None else f"{upkeep.keep_hours * 60:g} minutes"
    return (
        f"Reconciliation every {upkeep.reconcile_every} runs, maintenance every {upkeep.maintain_every} runs keeping"
        f" {kept} of table snapshots (a day's 24 hours of one-minute runs, scaled to the soak's pace)."
    )


def soak_markdown(measured: list[SoakRun], cell: BenchCell, machine: str, upkeep: Upkeep) -> str:
    summary = summarize(measured)
    maintenance = [run.maintenance_seconds for run in measured if run.maintenance_seconds]
    reconciliations = [run.seconds for run in measured if run.reconciliation]
    verdict = "met" if summary.ratio <= FLAT_RATIO else "not met"
    return "\n".join(
        [
            f"# Soak: {summary.runs} one-minute scheduled runs, {cell.locations} series, {cell.lateness} lateness",
            "",
            machine,
            "",
            upkeep_sentence(upkeep),
            "",
            "| | runs 100 to 200 | last 100 runs | ratio |",
            "|---|---|---|---|",
            f"| median seconds per run (reconciliations left out) | {summary.baseline_median_s:.2f} |"
            f" {summary.tail_median_s:.2f} | {summary.ratio:.2f}x (target at most {FLAT_RATIO}x: {verdict}) |",
            f"| most data files on disk, every table | {summary.baseline_max_files} | {summary.tail_max_files} |"
            f" {summary.tail_max_files / summary.baseline_max_files:.2f}x |",
            f"| most metadata bytes, every table | {summary.baseline_max_metadata_bytes:,} |"
            f" {summary.tail_max_metadata_bytes:,} |"
            f" {summary.tail_max_metadata_bytes / summary.baseline_max_metadata_bytes:.2f}x |",
            "",
            f"Reconciliations: {len(reconciliations)}, median {statistics.median(reconciliations or [0]):.2f} s."
            f" Maintenance: {len(maintenance)} times, median {statistics.median(maintenance or [0]):.2f} s"
            " (after the run, not in its seconds).",
            "",
            "Per 100 runs (reconciliations left out of the medians; files and metadata at the stretch's end):",
            "",
            "| runs | median s | history snapshot median s | history data files | result data files"
            " | data files on disk | metadata MiB |",
            "|---|---:|---:|---:|---:|---:|---:|",
            *_stretch_rows(measured),
            "",
            f"Every run: {soak_name(cell)}.csv; plot: {soak_name(cell)}.png.",
            "",
        ]
    )


def _stretch_rows(measured: list[SoakRun], size: int = 100) -> list[str]:
    rows = []
    for start in range(0, len(measured), size):
        stretch = measured[start : start + size]
        plain = [run for run in stretch if not run.reconciliation] or stretch
        last = stretch[-1]
        rows.append(
            f"| {stretch[0].run} to {last.run} | {statistics.median(run.seconds for run in plain):.2f}"
            f" | {statistics.median(run.snapshot_seconds for run in plain):.2f} | {last.history_data_files}"
            f" | {last.means_data_files} | {last.data_files} | {last.metadata_bytes / 2**20:.1f} |"
        )
    return rows


def write_soak_outputs(
    measured: list[SoakRun], cell: BenchCell, out_dir: Path, machine: str, upkeep: Upkeep
) -> list[Path]:
    name = soak_name(cell)
    paths = [write_soak_runs(measured, out_dir / f"{name}.csv")]
    if len(measured) >= BASELINE_RUNS[1] + TAIL_RUNS:
        markdown = out_dir / f"{name}.md"
        markdown.write_text(soak_markdown(measured, cell, machine, upkeep))
        paths.append(markdown)
    paths.append(plot_soak(measured, cell, out_dir / f"{name}.png"))
    return paths


def plot_soak(measured: list[SoakRun], cell: BenchCell, path: Path) -> Path:
    """Run seconds over run number (reconciliations and maintenance marked), and files and
    metadata over run number."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (timing, files) = plt.subplots(2, 1, figsize=(11, 7), sharex=True)
    plain = [run for run in measured if not run.reconciliation]
    timing.plot([run.run for run in plain], [run.seconds for run in plain], ".", markersize=2, label="scheduled run")
    timing.plot(
        [run.run for run in plain], [run.snapshot_seconds for run in plain], ".", markersize=2, label="history snapshot"
    )
    reconciled = [run for run in measured if run.reconciliation]
    timing.plot([run.run for run in reconciled], [run.seconds for run in reconciled], "x", label="reconciliation run")
    timing.set(ylabel="seconds", title=f"{len(measured)} one-minute runs, {cell.locations} series, {cell.lateness}")
    timing.grid(True, alpha=0.3)
    timing.legend(fontsize=8)
    numbers = [run.run for run in measured]
    files.plot(numbers, [run.history_data_files for run in measured], label="history data files")
    files.plot(numbers, [run.history_delete_files for run in measured], label="history delete files")
    files.plot(numbers, [run.means_data_files for run in measured], label="result data files")
    files.plot(numbers, [run.data_files for run in measured], label="data files on disk, every table")
    files.set(xlabel="run number", ylabel="files")
    files.grid(True, alpha=0.3)
    metadata = files.twinx()
    metadata.plot(numbers, [run.metadata_bytes / 2**20 for run in measured], "k:", label="metadata MiB (right)")
    metadata.set_ylabel("metadata MiB")
    handles = files.get_legend_handles_labels()[0] + metadata.get_legend_handles_labels()[0]
    files.legend(handles, [handle.get_label() for handle in handles], fontsize=8, loc="upper left")
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return path
