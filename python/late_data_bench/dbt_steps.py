"""One plain `dbt` command, as cron starts it, timed step by step: run as

    python -m late_data_bench.dbt_steps <dbt arguments...>

it invokes dbt's own runner (the same as the `dbt` command) with a callback that keeps the time of
the events that bound each step, and prints one JSON line: the seconds of each step and the
statements run in it. The process's own start (Python, imports) is measured by whoever starts it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

# The steps, in order (bounded by dbt-core 1.11's events).
STEPS = (
    "startup",  # the process's start to dbt's first line (Python and dbt imported)
    "parse",  # reading the project (partial parse where the previous run's is usable)
    "session",  # the Spark session (a JVM start on the embedded target) and dbt's list of schemas
    "listing",  # dbt's listing of the relations in the schemas it builds into
    "on_run_start",  # the project's on-run-start hooks, rendered and run
    "model",
    "snapshot",
    "tests",
    "on_run_end",
    "exit",  # dbt's last event to the process's end
)


class StepClock:
    """Keeps the moments that bound each step, and counts the statements run in each."""

    def __init__(self, started: float) -> None:
        self.started = started
        self.marks: dict[str, float] = {}
        self.nodes: dict[str, list[float]] = {}
        self.statements: dict[str, int] = {}
        # Each node's own seconds (its start to its end), by name.
        self.node_seconds: dict[str, float] = {}
        self.node_started: dict[str, float] = {}
        # (moment, step) each statement started at: what a scan's metrics are charged to.
        self.statement_steps: list[tuple[float, str]] = []
        self.step = "session"

    def __call__(self, event: Any) -> None:
        name, now = event.info.name, time.time()
        if name == "MainReportVersion":
            self.marks.setdefault("version", now)
        elif name == "FoundStats":
            self.marks.setdefault("found", now)
        elif name == "SQLQuery":
            connection = str(event.data.conn_name)
            if connection.startswith("list_") and connection != "list_schemas":
                self.marks.setdefault("listing", now)
                self.step = "listing"
            elif connection == "master":
                hook = "on_run_end" if "model_done" in self.marks else "on_run_start"
                self.marks.setdefault(f"{hook}_from", now)
                self.step = hook
            self.statements[self.step] = self.statements.get(self.step, 0) + 1
            self.statement_steps.append((now, self.step))
        elif name == "LogHookEndLine":
            hook = "on_run_start" if "on-run-start" in str(event.data.statement) else "on_run_end"
            self.marks[f"{hook}_to"] = now
        elif name in ("NodeStart", "NodeFinished"):
            step = {"model": "model", "snapshot": "snapshot", "test": "tests"}.get(event.data.node_info.resource_type)
            if step:
                self.nodes.setdefault(step, []).append(now)
                self.step = step
                self.marks["model_done"] = now
                node = str(event.data.node_info.node_name)
                if name == "NodeStart":
                    self.node_started[node] = now
                elif node in self.node_started:
                    self.node_seconds[node] = round(now - self.node_started[node], 3)
        elif name == "CommandCompleted":
            self.marks["completed"] = now

    def seconds(self, ended: float) -> dict[str, float]:
        marks = self.marks

        def first(step: str) -> float | None:
            return min(self.nodes[step]) if self.nodes.get(step) else None

        def last(step: str) -> float | None:
            return max(self.nodes[step]) if self.nodes.get(step) else None

        start_hook = marks.get("on_run_start_from")
        spans = {
            "startup": (self.started, marks.get("version")),
            "parse": (marks.get("version"), marks.get("found")),
            "session": (marks.get("found"), marks.get("listing", start_hook)),
            "listing": (marks.get("listing"), start_hook),
            "on_run_start": (start_hook, marks.get("on_run_start_to")),
            "model": (first("model"), last("model")),
            "snapshot": (first("snapshot"), last("snapshot")),
            "tests": (first("tests"), last("tests")),
            "on_run_end": (marks.get("on_run_end_from"), marks.get("on_run_end_to")),
            "exit": (marks.get("completed"), ended),
        }
        return {
            step: round(end - start, 3) if start is not None and end is not None else 0.0
            for step, (start, end) in spans.items()
        }


# Iceberg's scan metrics, as Spark's SQL status keeps them: what each step read.
SCAN_METRICS = {
    "number of result data files": "files",
    "number of scanned data manifests": "manifests",
    "number of output rows": "rows",
}


def step_scans(clock: StepClock) -> dict[str, dict[str, int]]:
    """Per step, the data files, manifests and rows the Iceberg scans of its statements read (from
    the Spark session's SQL status store; a statement's executions are charged to the step it started
    in). Empty without a Spark session in this process (the thrift target)."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    if SparkContext._active_spark_context is None:
        return {}
    store = SparkSession.builder.getOrCreate()._jsparkSession.sharedState().statusStore()
    executions = store.executionsList()
    totals: dict[str, dict[str, int]] = {}
    for index in range(executions.size()):
        execution = executions.apply(index)
        names = {}
        # A scan's own metrics: "number of output rows" of every other operator is not a read.
        nodes = store.planGraph(execution.executionId()).allNodes().iterator()
        while nodes.hasNext():
            node = nodes.next()
            if not str(node.name()).startswith(("BatchScan", "Scan")):
                continue
            metrics = node.metrics().iterator()
            while metrics.hasNext():
                metric = metrics.next()
                if metric.name() in SCAN_METRICS:
                    names[metric.accumulatorId()] = SCAN_METRICS[metric.name()]
        found = {"files": 0, "manifests": 0, "rows": 0}
        values = store.executionMetrics(execution.executionId()).iterator()
        while values.hasNext():
            value = values.next()
            if value._1() in names:
                found[names[value._1()]] += int(str(value._2()).split("\n")[0].replace(",", "") or 0)
        if not (found["files"] or found["manifests"]):
            continue
        moment = execution.submissionTime() / 1000
        step = next((step for at, step in reversed(clock.statement_steps) if at <= moment), "session")
        for key, number in found.items():
            totals.setdefault(step, {"files": 0, "manifests": 0, "rows": 0})[key] += number
    return totals


def run_in_new_process(
    env: dict[str, str], project: Path, run_time: datetime, command: list[str]
) -> tuple[float, dict[str, Any]]:
    """A plain dbt `command` on `project` at `run_time`, in a new process as cron starts it (this
    module's main): its wall seconds, start to end, and the JSON line main prints. A failed command
    raises with the end of its output."""
    # Imported here, not by the timed process this module's main runs in.
    from late_data.runtime.timeutil import format_timestamp

    started = time.time()
    process = subprocess.run(
        [
            sys.executable,
            "-m",
            "late_data_bench.dbt_steps",
            str(started),
            *command,
            "--project-dir",
            str(project),
            "--profiles-dir",
            env["DBT_PROFILES_DIR"],
        ],
        env={**env, "LATE_DATA_RUN_TIME": format_timestamp(run_time)},
        capture_output=True,
        text=True,
        check=False,
    )
    ended = time.time()
    lines = [line for line in process.stdout.splitlines() if line.startswith("{")]
    if process.returncode != 0 or not lines:
        raise RuntimeError(f"dbt {command[0]} failed: {(process.stdout + process.stderr)[-3000:]}")
    return round(ended - started, 2), json.loads(lines[-1])


def main(argv: list[str]) -> int:
    started = float(argv[0])
    from dbt.cli.main import dbtRunner

    clock = StepClock(started)
    outcome = dbtRunner(callbacks=[clock]).invoke(argv[1:])
    ended = time.time()
    print(
        json.dumps(
            {
                "success": outcome.success,
                "seconds": clock.seconds(ended),
                "statements": clock.statements,
                "nodes": clock.node_seconds,
                "scans": step_scans(clock),
            }
        )
    )
    return 0 if outcome.success else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
