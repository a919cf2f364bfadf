"""What `late-data check` costs: its seconds and the driver's peak memory, each check a process of
its own with a 2 GB driver (LATE_DATA_DRIVER_MEMORY=2g), on

- the example project (integration_tests/): its four pipelines after 26 plain `dbt build` runs over
  four simulated days, with late rows, corrections, copies delivered together, too-late rows and a
  change of two customers' regions, in the past, at every run (the revenue pipeline's dimension);
- the demo's water-level pipeline at 1,000 locations, 2 hours of sparse lateness (the bench's
  1000:2:sparse cell), built by 12 scheduled runs.

Beside each check: the median seconds of a scheduled run of the same pipeline (the example: a warm
`dbt build` of its nodes; the cell: its model and history snapshot, from the audit), so a check can
be read as a number of runs. Writes check_cost.csv and .md.
"""

from __future__ import annotations

import csv
import logging
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from statistics import median
from typing import Any

from late_data.runtime.environment import CHECKOUT
from late_data.runtime.timeutil import format_timestamp
from late_data_bench.processes import environment_for, in_own_process

log = logging.getLogger(__name__)

EXAMPLE = CHECKOUT / "integration_tests"
DRIVER_MEMORY = "2g"
ORIGIN = datetime(2026, 6, 1, 0, 0, 0)
RUN_EVERY = timedelta(hours=4)
RUNS = 26
EXAMPLE_PIPELINES = ("meter_usage", "daily_active_users", "request_latency", "revenue_by_region")
RAW = {
    "meters_raw.meter_readings": "event_id string, meter_id string, event_time timestamp, kwh double, ingested_at timestamp",
    "example_raw.app_events": "event_id string, app string, user_id string, event_time timestamp, ingested_at timestamp",
    "example_raw.requests": "event_id string, endpoint string, event_time timestamp, latency_ms double, ingested_at timestamp",
    "example_raw.orders": "event_id string, customer_id string, event_time timestamp, amount double, ingested_at timestamp",
    "example_raw.customers": "customer_id string, region string, updated_at timestamp",
}
REGIONS = ("north", "south", "east", "west")
CUSTOMERS = 20


@dataclass(frozen=True)
class CheckCost:
    project: str
    pipeline: str
    runs: int
    versions: int
    windows_checked: int
    check_seconds: float
    peak_driver_rss_mib: int
    scheduled_run_median_seconds: float
    measured_on: str

    @property
    def runs_equivalent(self) -> float:
        return self.check_seconds / self.scheduled_run_median_seconds


def run_check_cost(out_dir: Path) -> list[Path]:
    """Both projects built and checked; writes check_cost.csv and check_cost.md into `out_dir`."""
    costs = [*_example_costs(), *_cell_costs()]
    return write_outputs(costs, out_dir)


def _example_costs() -> list[CheckCost]:
    home = Path(tempfile.mkdtemp(prefix="check_cost_example_"))
    env = environment_for(home, EXAMPLE, "example_check", DRIVER_MEMORY)
    runs = in_own_process(_build_example, env)
    return [_measured_check(env, "example", pipeline, RUNS, runs[pipeline]) for pipeline in EXAMPLE_PIPELINES]


def _cell_costs() -> list[CheckCost]:
    home = Path(tempfile.mkdtemp(prefix="check_cost_cell_"))
    env = environment_for(home, CHECKOUT, "analytics", DRIVER_MEMORY)
    origin = "2026-01-01 00:00:00"
    schedule = [
        "schedule",
        "--clock",
        "simulated",
        "--origin",
        origin,
        "--end",
        "2026-01-01 02:00:00",
        "--interval",
        "600",
        "--offset",
        "10",
        "--locations",
        "1000",
        "--late-share",
        "0.01",
        "--lateness",
        "long_tail",
        "--pages",
        "0",
    ]
    started = time.monotonic()
    _late_data(env, ["setup"])  # the demo's raw tables, in this home's warehouse
    _late_data(env, schedule)
    log.info("check cost: the 1,000-location cell built in %.0f s", time.monotonic() - started)
    run_seconds = _audit_run_seconds(env, "water_level_window_means")
    return [_measured_check(env, "bench 1000:2:sparse", "water_level_window_means", 12, run_seconds)]


def _late_data(env: dict[str, str], args: list[str]) -> str:
    process = subprocess.run(
        [sys.executable, "-m", "late_data.cli", *args], env=env, capture_output=True, text=True, check=False
    )
    if process.returncode not in (0, 1):
        raise RuntimeError(f"late-data {' '.join(args)} failed: {process.stderr[-3000:]}")
    return process.stdout


def _measured_check(env: dict[str, str], project: str, pipeline: str, runs: int, run_seconds: list[float]) -> CheckCost:
    """`late-data check --pipeline` in a process of its own, timed, with its peak driver memory: the
    largest peak RSS (VmHWM) of its descendants, the JVM's, polled every 0.2 s while it runs. Not
    the children's rusage: py4j's JVM is never waited for, so rusage would see only Python."""
    wrapper = (
        "import subprocess, sys, tempfile, time\n"
        "from pathlib import Path\n"
        "def descendants(root):\n"
        "    children = {}\n"
        "    for stat in Path('/proc').glob('[0-9]*/stat'):\n"
        "        try:\n"
        "            fields = stat.read_text().rsplit(')', 1)[1].split()\n"
        "        except OSError:\n"
        "            continue\n"
        "        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))\n"
        "    found, todo = [], [root]\n"
        "    while todo:\n"
        "        pid = todo.pop()\n"
        "        found.append(pid)\n"
        "        todo.extend(children.get(pid, []))\n"
        "    return found\n"
        "def peak_kib(pid):\n"
        "    try:\n"
        "        for line in Path(f'/proc/{pid}/status').read_text().splitlines():\n"
        "            if line.startswith('VmHWM:'):\n"
        "                return int(line.split()[1])\n"
        "    except OSError:\n"
        "        pass\n"
        "    return 0\n"
        "started = time.monotonic()\n"
        "out, err = tempfile.TemporaryFile('w+'), tempfile.TemporaryFile('w+')\n"
        "process = subprocess.Popen(sys.argv[1:], stdout=out, stderr=err, text=True)\n"
        "peak = 0\n"
        "while process.poll() is None:\n"
        "    peak = max([peak, *(peak_kib(pid) for pid in descendants(process.pid))])\n"
        "    time.sleep(0.2)\n"
        "out.seek(0)\n"
        "err.seek(0)\n"
        "stdout, stderr = out.read(), err.read()\n"
        "seconds = time.monotonic() - started\n"
        "print(stdout)\n"
        "print(stderr[-2000:], file=sys.stderr)\n"
        "print('MEASURED', seconds, peak, process.returncode)\n"
    )
    process = subprocess.run(
        [sys.executable, "-c", wrapper, sys.executable, "-m", "late_data.cli", "check", "--pipeline", pipeline],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    measured = next(line for line in process.stdout.splitlines() if line.startswith("MEASURED"))
    _, seconds, max_rss_kib, code = measured.split()
    if code != "0":
        raise RuntimeError(f"late-data check --pipeline {pipeline} exited {code}: {process.stderr[-3000:]}")
    windows = next(
        int(line.split(": ")[2].split()[0])
        for line in process.stdout.splitlines()
        if line.startswith(f"check: {pipeline}: ") and "windows checked" in line
    )
    versions = int(_query(env, f"select count(*) from {_versions_table(env, pipeline)}"))
    cost = CheckCost(
        project=project,
        pipeline=pipeline,
        runs=runs,
        versions=versions,
        windows_checked=windows,
        check_seconds=round(float(seconds), 2),
        peak_driver_rss_mib=int(max_rss_kib) // 1024,
        scheduled_run_median_seconds=round(median(run_seconds), 2),
        measured_on=date.today().isoformat(),
    )
    log.info("check cost: %s", cost)
    return cost


def _versions_table(env: dict[str, str], pipeline: str) -> str:
    schema = env["LATE_DATA_SCHEMA"]
    return (
        f"{schema}.int_water_level__versions"
        if pipeline == "water_level_window_means"
        else f"{schema}.{pipeline}__versions"
    )


def _query(env: dict[str, str], sql: str) -> Any:
    """One value, from a Spark session of its own on the project's warehouse."""
    return in_own_process(_query_body, env, sql)


def _query_body(sql: str) -> Any:
    from late_data.runtime.dbt_project import DbtProject
    from late_data.runtime.environment import prepare_environment

    project = DbtProject(prepare_environment())
    try:
        return project.spark.sql(sql).first()[0]
    finally:
        project.close()


def _audit_run_seconds(env: dict[str, str], model: str) -> list[float]:
    """The seconds of each scheduled run of `model` and its history snapshot after the first (which
    builds from scratch), from the audit."""
    schema = env["LATE_DATA_SCHEMA"]
    rows = in_own_process(
        _query_rows,
        env,
        f"select run_time, max(if(model = '{model}', seconds, null)) + max(if(model = '{model}_history', seconds, null))"
        f" from {schema}.late_data_run_audit where run_kind = 'scheduled' and outcome = 'success'"
        " group by run_time order by run_time",
    )
    return [float(row[1]) for row in rows[1:] if row[1] is not None]


def _query_rows(sql: str) -> list[tuple[Any, ...]]:
    from late_data.runtime.dbt_project import DbtProject
    from late_data.runtime.environment import prepare_environment

    project = DbtProject(prepare_environment())
    try:
        return [tuple(row) for row in project.spark.sql(sql).collect()]
    finally:
        project.close()


def _build_example() -> dict[str, list[float]]:
    """The example project's raw tables fed and its pipelines built by plain dbt, RUNS runs every
    RUN_EVERY; the seconds of each pipeline's scheduled runs (a warm dbt build of its nodes)."""
    from late_data.runtime.dbt_project import DbtProject
    from late_data.runtime.environment import prepare_environment

    project = DbtProject(prepare_environment())
    spark = project.spark
    table_format = project.environment.table_format
    for schema in ("meters_raw", "example_raw"):
        spark.sql(f"create schema if not exists {schema}")
    for table, columns in RAW.items():
        spark.sql(f"create table if not exists {table} ({columns}) using {table_format}")
    rng = random.Random(7)
    regions = {f"c{number}": REGIONS[number % len(REGIONS)] for number in range(CUSTOMERS)}
    spark.createDataFrame(
        [(customer, region, ORIGIN) for customer, region in regions.items()], RAW["example_raw.customers"]
    ).writeTo("example_raw.customers").append()
    project.invoke(["deps"])
    seconds: dict[str, list[float]] = {pipeline: [] for pipeline in EXAMPLE_PIPELINES}
    fed_until = ORIGIN
    try:
        for run in range(RUNS):
            run_time = ORIGIN + RUN_EVERY * (run + 1) + timedelta(seconds=10)
            _feed(spark, rng, fed_until, run_time)
            if run:
                _move_customers(spark, rng, regions, run_time)
            fed_until = run_time
            for pipeline in EXAMPLE_PIPELINES:
                started = time.monotonic()
                project.invoke(
                    ["build", "--select", f"+{pipeline}+", "--exclude", "resource_type:test"],
                    {"run_time": format_timestamp(run_time)},
                )
                if run:
                    seconds[pipeline].append(time.monotonic() - started)
            log.info("check cost: example run %d of %d at %s", run + 1, RUNS, run_time)
    finally:
        project.close()
    return seconds


def _feed(spark: Any, rng: random.Random, start: datetime, end: datetime) -> None:
    """What arrives in [start, end): on-time rows, late ones, corrections, copies and too-late rows."""

    def late(moment: datetime, most_seconds: int) -> datetime:
        return moment + timedelta(seconds=rng.choice((30, 30, 30, rng.randint(60, most_seconds))))

    readings, events, requests, orders = [], [], [], []
    moment = start
    while moment < end:
        minute = int((moment - ORIGIN).total_seconds() // 60)
        for meter in range(20):
            if minute % 5 == 0:
                kwh = round(rng.uniform(0.1, 3.0), 3)
                readings.append((f"m{meter}-{minute}", f"m{meter}", moment, kwh, late(moment, 7000)))
                if rng.random() < 0.01:  # a correction, up to 3 hours later (sometimes too late)
                    readings.append(
                        (
                            f"m{meter}-{minute}",
                            f"m{meter}",
                            moment,
                            kwh + 0.5,
                            moment + timedelta(seconds=rng.randint(600, 10800)),
                        )
                    )
        if minute % 2 == 0:
            for app in ("web", "ios"):
                user = f"u{rng.randint(0, 49)}"
                events.append((f"{app}-{minute}", app, user, moment, late(moment, 150000)))
        for endpoint in ("/a", "/b"):
            if minute % 1 == 0:
                latency = float(rng.randint(5, 500))
                requests.append((f"{endpoint}-{minute}", endpoint, moment, latency, late(moment, 2000)))
        if minute % 10 == 0:
            for customer in rng.sample(range(CUSTOMERS), 4):
                row = (f"o{customer}-{minute}", f"c{customer}", moment, float(rng.randint(5, 200)), late(moment, 7000))
                orders.append(row)
                if rng.random() < 0.05:
                    orders.append(row)  # a copy delivered together
        moment += timedelta(minutes=1)
    for table, rows in (
        ("meters_raw.meter_readings", readings),
        ("example_raw.app_events", events),
        ("example_raw.requests", requests),
        ("example_raw.orders", orders),
    ):
        if rows:
            spark.createDataFrame(rows, RAW[table]).writeTo(table).append()


def _move_customers(spark: Any, rng: random.Random, regions: dict[str, str], run_time: datetime) -> None:
    """Two customers in another region from up to three hours before the run (a late correction
    of a past interval, which the snapshot records now)."""
    for customer in rng.sample(sorted(regions), 2):
        regions[customer] = rng.choice([region for region in REGIONS if region != regions[customer]])
        effective = run_time - timedelta(minutes=rng.randint(10, 180))
        spark.sql(
            f"update example_raw.customers set region = '{regions[customer]}',"
            f" updated_at = timestamp'{format_timestamp(effective)}' where customer_id = '{customer}'"
        )


def write_outputs(costs: list[CheckCost], out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = out_dir / "check_cost.csv", out_dir / "check_cost.md"
    with csv_path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=[*CheckCost.__dataclass_fields__, "runs_equivalent"])
        writer.writeheader()
        for cost in costs:
            writer.writerow({**asdict(cost), "runs_equivalent": round(cost.runs_equivalent, 2)})
    lines = [
        "# What `late-data check` costs",
        "",
        f"Each check a process of its own with a {DRIVER_MEMORY} driver (`late-data bench --check-cost`;"
        " python/late_data_bench/check_cost.py says what is built). Peak driver memory: the JVM's peak RSS."
        " A scheduled run: the median of the pipeline's warm runs while it was built.",
        "",
        "| project | pipeline | runs | versions | windows checked | check (s) | peak driver RSS (MiB) | scheduled run, median (s) | check in scheduled runs | measured |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for cost in costs:
        lines.append(
            f"| {cost.project} | {cost.pipeline} | {cost.runs} | {cost.versions:,} | {cost.windows_checked:,}"
            f" | {cost.check_seconds:.2f} | {cost.peak_driver_rss_mib:,} | {cost.scheduled_run_median_seconds:.2f}"
            f" | {cost.runs_equivalent:.1f} | {cost.measured_on} |"
        )
    md_path.write_text("\n".join(lines) + "\n")
    return [csv_path, md_path]
