"""The cron path soaked: the example project's meter pipeline (20 meters, a reading a minute each, a
tenth of them late by up to an hour, a correction now and then) run as the docs' crontab runs it,
a plain `dbt build --select meter_usage+` (the model, its three package tests, the history snapshot)
in a new process per simulated minute, and `dbt run-operation late_data.maintain_tables` in a new
process after every `maintain_every` runs (the crontab's hourly line), its seconds counted in the
run that pays it. Per run: each step's seconds (dbt's own events), each node's, and what each
step's Iceberg scans read (files, manifests, rows; late_data_bench.dbt_steps). Writes
cron_soak.csv, .md and .png.

The raw readings of the whole soak are written at its start, one commit, and the model reads those
stamped up to the run time (a filter of its own, `ingested_at <= run time`), which is what a
source fed every minute shows a run; the feed costs no process of its own per run.
"""

from __future__ import annotations

import csv
import json
import logging
import shutil
import tempfile
from datetime import date, datetime, timedelta
from pathlib import Path
from statistics import linear_regression, median
from typing import Any

from late_data.runtime.environment import CHECKOUT
from late_data.runtime.timeutil import format_timestamp
from late_data_bench.dbt_steps import run_in_new_process
from late_data_bench.plain_dbt_steps import EXAMPLE, HISTORY, ORIGIN, READINGS, _append
from late_data_bench.processes import environment_for, in_own_process

log = logging.getLogger(__name__)

SELECT = ["--select", "meter_usage+"]
# The model's own filter: only what has arrived by the run time is delivered.
DELIVERED = "{% if execute %}where ingested_at <= {{ late_data.run_time() }}{% endif %}"
STEPS = ("on_run_start", "model", "tests", "snapshot", "on_run_end")
STRETCH = 10


def run_cron_soak(out_dir: Path, runs: int, package: Path | None = None, maintain_every: int = 60) -> list[Path]:
    """`runs` runs of the cron path; `package`: the late_data package to install (default this
    checkout's: another checkout's measures it before a change, on the same data)."""
    home = Path(tempfile.mkdtemp(prefix="cron_soak_"))
    project = _project_copy(home / "project", package or CHECKOUT / "package")
    env = environment_for(home, project, "cron_soak")
    env.pop("LATE_DATA_DRIVER_MEMORY")  # the profile's own
    built_at = ORIGIN + HISTORY
    in_own_process(_build, env, built_at, built_at + timedelta(minutes=runs + 2))
    measured = []
    for number in range(1, runs + 1):
        run_time = built_at + timedelta(minutes=number, seconds=10)
        steps = _timed(env, project, run_time, ["build", *SELECT])
        steps["maintenance"] = 0.0
        if maintain_every and number % maintain_every == 0:
            maintained = _timed(env, project, run_time, ["run-operation", "late_data.maintain_tables"])
            steps["maintenance"] = maintained["total"]
        steps["total_with_maintenance"] = round(steps["total"] + steps["maintenance"], 2)
        measured.append(steps)
        log.info("cron soak: run %d: %.2f s", number, steps["total_with_maintenance"])
    shutil.rmtree(home, ignore_errors=True)
    return write_outputs(measured, out_dir, package, maintain_every)


def _project_copy(target: Path, package: Path) -> Path:
    """The example project, its package `package`, its meter model reading what arrived by the run time."""
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns("target", "logs", "dbt_packages"))
    (target / "packages.yml").write_text(f"packages:\n  - local: {package.resolve()}\n")
    model = target / "models" / "meter_usage.sql"
    model.write_text(model.read_text().rstrip() + f"\n{DELIVERED}\n")
    return target


def _build(built_at: datetime, until: datetime) -> None:
    """The raw table with every reading of the soak, and a first build at `built_at` (untimed)."""
    from late_data.runtime.dbt_project import DbtProject
    from late_data.runtime.environment import prepare_environment

    project = DbtProject(prepare_environment())
    try:
        spark = project.spark
        spark.sql("create schema if not exists meters_raw")
        spark.sql(f"create table meters_raw.meter_readings ({READINGS}) using {project.environment.table_format}")
        project.invoke(["deps"])
        _append(spark, ORIGIN, until)
        project.invoke(["build", *SELECT], {"run_time": format_timestamp(built_at)})
    finally:
        project.close()


def _timed(env: dict[str, str], project: Path, run_time: datetime, command: list[str]) -> dict[str, Any]:
    """One plain dbt command in a new process, as cron starts it, with its steps."""
    total, result = run_in_new_process(env, project, run_time, command)
    return {
        "total": total,
        **{step: result["seconds"].get(step, 0.0) for step in STEPS},
        "nodes": result.get("nodes", {}),
        "scans": result.get("scans", {}),
    }


def stretches(runs: int) -> list[tuple[int, int]]:
    """The runs the table compares, 10 at a time: 2 to 11 (the first is partial parse's first
    run after the build's), then every 10th stretch, and the last."""
    chosen = [(2, min(STRETCH + 1, runs))]
    for start in range(STRETCH * 2 + 1, runs + 1, STRETCH * 2):
        chosen.append((start, min(start + STRETCH - 1, runs)))
    last = (max(2, runs - STRETCH + 1), runs)
    if chosen[-1] != last:
        chosen.append(last)
    return chosen


def write_outputs(
    measured: list[dict[str, Any]], out_dir: Path, package: Path | None, maintain_every: int
) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, md_path, png_path = (out_dir / f"cron_soak.{suffix}" for suffix in ("csv", "md", "png"))
    columns = ["total_with_maintenance", "total", *STEPS, "maintenance"]
    with csv_path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["run", *columns, "nodes", "scans", "measured_on"])
        for number, steps in enumerate(measured, start=1):
            writer.writerow(
                [
                    number,
                    *(steps[column] for column in columns),
                    json.dumps(steps["nodes"]),
                    json.dumps(steps["scans"]),
                    date.today().isoformat(),
                ]
            )
    ranges = stretches(len(measured))

    def median_of(column: str, span: tuple[int, int]) -> float:
        return median(float(steps[column]) for steps in measured[span[0] - 1 : span[1]])

    def read_of(step: str, span: tuple[int, int]) -> str:
        files = median(steps["scans"].get(step, {}).get("files", 0) for steps in measured[span[0] - 1 : span[1]])
        manifests = median(
            steps["scans"].get(step, {}).get("manifests", 0) for steps in measured[span[0] - 1 : span[1]]
        )
        return f"{files:g} / {manifests:g}"

    header = " | ".join(f"runs {start}-{end}" for start, end in ranges)
    lines = [
        "# The cron path, soaked",
        "",
        f"{len(measured)} runs of the example project's meter pipeline as the docs' crontab runs it (`late-data"
        f" bench --cron-soak`; python/late_data_bench/cron_soak.py): a plain `dbt build --select meter_usage+`"
        " (the model, its three package tests, the history snapshot) in a new process per simulated minute,"
        f" `late_data.maintain_tables` after every {maintain_every} runs (counted in the run that pays it),"
        f" package {'of this checkout' if package is None else package}. Medians of 10 runs, seconds; the"
        f" last rows: data files / manifests the step's Iceberg scans read. Measured {date.today().isoformat()}.",
        "",
        f"| step | {header} | last / first |",
        "|---|" + "---:|" * (len(ranges) + 1),
    ]
    for column in columns:
        values = [median_of(column, span) for span in ranges]
        ratio = values[-1] / values[0] if values[0] else float("nan")
        lines.append(f"| {column} | " + " | ".join(f"{value:.2f}" for value in values) + f" | {ratio:.2f} |")
    for step in STEPS:
        lines.append(f"| {step}: files / manifests | " + " | ".join(read_of(step, span) for span in ranges) + " | |")
    passes = [float(steps["maintenance"]) for steps in measured if steps["maintenance"]]
    lines += [
        "",
        "The slope of each step over runs 2 on (least squares, the runs that paid maintenance left out) and"
        " where it leads: the step's seconds at run 1,440 (a day of one-minute runs) and 43,200 (a month)"
        " against its median of runs 2-11 (a step that got faster is projected flat)."
        + (
            f" Maintenance: {len(passes)} passes, median {median(passes):.2f} s, {sum(passes) / len(measured):.2f} s"
            " a run spread over the runs."
            if passes
            else ""
        ),
        "",
        "| step | slope, s per 100 runs | a day: run 1,440 / runs 2-11 | a month: run 43,200 / runs 2-11 |",
        "|---|---:|---:|---:|",
    ]
    for column in ("total", *STEPS):
        slope, day, month = projection(measured, column, maintain_every)
        lines.append(f"| {column} | {100 * slope:+.3f} | {day:.2f} | {month:.2f} |")
    md_path.write_text("\n".join(lines) + "\n")
    _plot(measured, png_path)
    return [csv_path, md_path, png_path]


def projection(measured: list[dict[str, Any]], column: str, maintain_every: int) -> tuple[float, float, float]:
    """A step's least-squares slope in seconds per run over runs 2 on (the runs that paid maintenance
    left out), and its projected seconds at runs 1,440 and 43,200 as ratios of its median of runs
    2-11 (1.0 for a slope at or below 0)."""
    points = [
        (number, float(steps[column]))
        for number, steps in enumerate(measured, start=1)
        if number >= 2 and not (maintain_every and number % maintain_every == 0)
    ]
    if len(points) < 2:
        return 0.0, 1.0, 1.0
    slope, intercept = linear_regression([run for run, _ in points], [value for _, value in points])
    baseline = median(value for run, value in points if run <= STRETCH + 1)
    if not baseline:
        return slope, float("nan"), float("nan")
    if slope <= 0:
        # Runs that got faster (the machine's speed moves between hours) are no trend to carry on.
        return slope, 1.0, 1.0
    return slope, (intercept + slope * 1440) / baseline, (intercept + slope * 43200) / baseline


def _plot(measured: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(9, 4.5))
    runs = list(range(1, len(measured) + 1))
    for column in ("total_with_maintenance", *STEPS):
        axis.plot(runs, [steps[column] for steps in measured], label=column, linewidth=1)
    axis.set_xlabel("run")
    axis.set_ylabel("seconds")
    axis.set_title("cron path: plain dbt build per simulated minute, by step")
    axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
