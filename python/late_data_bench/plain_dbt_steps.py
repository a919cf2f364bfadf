"""A plain `dbt build` of one pipeline as cron runs it on the embedded target, step by step: the
example project's meter pipeline (20 meters, a reading a minute each, a tenth of them late by up to
an hour, a correction now and then), built once, then one minute's readings and one `dbt build
--select meter_usage+` in a new process per run, its run time from LATE_DATA_RUN_TIME (so dbt's
partial parse from the run before is used, as it is for a cron job). Each run's steps come from
dbt's own events (late_data_bench.dbt_steps). Writes plain_dbt_steps.csv and .md.
"""

from __future__ import annotations

import csv
import json
import logging
import random
import tempfile
from datetime import date, datetime, timedelta
from pathlib import Path
from statistics import median
from typing import Any

from late_data.runtime.environment import CHECKOUT
from late_data.runtime.timeutil import format_timestamp
from late_data_bench.dbt_steps import STEPS, run_in_new_process
from late_data_bench.processes import environment_for, in_own_process

log = logging.getLogger(__name__)

EXAMPLE = CHECKOUT / "integration_tests"
ORIGIN = datetime(2026, 6, 1, 0, 0, 0)
HISTORY = timedelta(hours=2)
METERS = 20
READINGS = "event_id string, meter_id string, event_time timestamp, kwh double, ingested_at timestamp"
SELECT = ["--select", "meter_usage+", "--exclude", "resource_type:test"]


def run_plain_dbt_steps(out_dir: Path, runs: int = 5, jvm_options: str | None = None) -> list[Path]:
    """`jvm_options`: the dbt processes' LATE_DATA_JVM_OPTIONS (default: unset, the profile's own,
    as cron's dbt has them; "" for a JVM without the class archive and the quick JIT tier)."""
    home = Path(tempfile.mkdtemp(prefix="plain_dbt_steps_"))
    env = environment_for(home, EXAMPLE, "plain_dbt")
    env.pop("LATE_DATA_DRIVER_MEMORY")  # the profile's own
    in_own_process(_build, env, ORIGIN + HISTORY)
    measured = []
    for number in range(runs + 1):
        run_time = ORIGIN + HISTORY + timedelta(minutes=number + 1, seconds=10)
        # The feed's own dbt state elsewhere: cron's dbt finds its partial parse as it left it.
        in_own_process(
            _feed, {**env, "DBT_TARGET_PATH": str(home / "feed_target")}, run_time - timedelta(minutes=1), run_time
        )
        steps = _timed_build(env if jvm_options is None else {**env, "LATE_DATA_JVM_OPTIONS": jvm_options}, run_time)
        if number:  # the first parses the project in full: dbt's own parse after the build's vars
            measured.append(steps)
        log.info("plain dbt steps: run %d: %s", number, steps)
    return write_outputs(measured, out_dir)


def _build(until: datetime) -> None:
    """The raw table, two hours of readings and a first build (untimed, in this process)."""
    from late_data.runtime.dbt_project import DbtProject
    from late_data.runtime.environment import prepare_environment

    project = DbtProject(prepare_environment())
    try:
        project.spark.sql("create schema if not exists meters_raw")
        project.spark.sql(
            f"create table meters_raw.meter_readings ({READINGS}) using {project.environment.table_format}"
        )
        project.invoke(["deps"])
        _append(project.spark, ORIGIN, until)
        project.invoke(["build", *SELECT], {"run_time": format_timestamp(until)})
    finally:
        project.close()


def _feed(start: datetime, end: datetime) -> None:
    from late_data.runtime.dbt_project import DbtProject
    from late_data.runtime.environment import prepare_environment

    project = DbtProject(prepare_environment())
    try:
        _append(project.spark, start, end)
    finally:
        project.close()


def _append(spark: Any, start: datetime, end: datetime) -> None:
    rng = random.Random(int(start.timestamp()))
    rows = []
    moment = start.replace(second=0)
    while moment < end:
        for meter in range(METERS):
            event_time = moment - timedelta(seconds=rng.randint(60, 3600)) if rng.random() < 0.1 else moment
            event_id = f"m{meter}-{int(event_time.timestamp())}"
            rows.append(
                (event_id, f"m{meter}", event_time, round(rng.uniform(0.1, 3.0), 3), moment + timedelta(seconds=5))
            )
            if rng.random() < 0.01:
                rows.append((event_id, f"m{meter}", event_time, 1.0, moment + timedelta(seconds=20)))
        moment += timedelta(minutes=1)
    spark.createDataFrame(rows, READINGS).writeTo("meters_raw.meter_readings").append()


def _timed_build(env: dict[str, str], run_time: datetime) -> dict[str, Any]:
    """`dbt build` of the meter pipeline in a new process, as cron starts it, with its steps."""
    total, result = run_in_new_process(env, EXAMPLE, run_time, ["build", *SELECT])
    return {"total": total, **result["seconds"], "statements": result["statements"]}


def write_outputs(measured: list[dict[str, Any]], out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = out_dir / "plain_dbt_steps.csv", out_dir / "plain_dbt_steps.md"
    columns = ["total", *STEPS]
    with csv_path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["run", *columns, "statements", "measured_on"])
        for number, steps in enumerate(measured, start=1):
            writer.writerow(
                [
                    number,
                    *(steps[column] for column in columns),
                    json.dumps(steps["statements"]),
                    date.today().isoformat(),
                ]
            )
    medians = {column: median(steps[column] for steps in measured) for column in columns}
    statements = measured[-1]["statements"]
    lines = [
        "# A plain `dbt build` of one pipeline, step by step",
        "",
        f"The example project's meter pipeline on the embedded target (Iceberg), as cron starts it: `dbt build"
        f" --select meter_usage+` in a new process, {len(measured)} runs a minute apart"
        " (`late-data bench --plain-dbt-steps`; python/late_data_bench/plain_dbt_steps.py). Seconds, medians;"
        f" statements of the last run. Measured {date.today().isoformat()}.",
        "",
        "| step | seconds (median) | statements |",
        "|---|---:|---:|",
        *(f"| {column} | {medians[column]:.2f} | {statements.get(column, '')} |" for column in columns),
    ]
    md_path.write_text("\n".join(lines) + "\n")
    return [csv_path, md_path]
