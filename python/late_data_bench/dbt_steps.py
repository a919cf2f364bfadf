"""One plain `dbt` command, as cron starts it, timed step by step: run as

    python -m late_data_bench.dbt_steps <dbt arguments...>

it invokes dbt's own runner (the same as the `dbt` command) with a callback that keeps the time of
the events that bound each step, and prints one JSON line: the seconds of each step and the
statements run in it. The process's own start (Python, imports) is measured by whoever starts it.
"""

from __future__ import annotations

import json
import sys
import time
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
        elif name == "LogHookEndLine":
            hook = "on_run_start" if "on-run-start" in str(event.data.statement) else "on_run_end"
            self.marks[f"{hook}_to"] = now
        elif name in ("NodeStart", "NodeFinished"):
            step = {"model": "model", "snapshot": "snapshot", "test": "tests"}.get(event.data.node_info.resource_type)
            if step:
                self.nodes.setdefault(step, []).append(now)
                self.step = step
                self.marks["model_done"] = now
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


def main(argv: list[str]) -> int:
    started = float(argv[0])
    from dbt.cli.main import dbtRunner

    clock = StepClock(started)
    outcome = dbtRunner(callbacks=[clock]).invoke(argv[1:])
    ended = time.time()
    print(json.dumps({"success": outcome.success, "seconds": clock.seconds(ended), "statements": clock.statements}))
    return 0 if outcome.success else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
