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

# The events that bound the steps, in order (dbt-core 1.11's event names).
STEPS = (
    "startup",  # the process's start to dbt's first line (Python and dbt imported)
    "parse",  # reading the project (partial parse where the previous run's is usable)
    "session",  # the Spark session (a JVM start on the embedded target) and dbt's relation listing
    "on_run_start",
    "model",
    "snapshot",
    "tests",
    "on_run_end",
    "exit",  # dbt's last event to the process's end
)


class StepClock:
    """Keeps the first and last time of what each step is made of, and counts statements."""

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
        elif name == "HooksRunning":
            hook = "on_run_start" if "start" in str(event.data.hook_type).lower() else "on_run_end"
            self.marks.setdefault(f"{hook}_from", now)
            self.step = hook
        elif name == "LogHookEndLine":
            hook = "on_run_start" if "start" in str(event.data.statement).lower() else "on_run_end"
            self.marks[f"{hook}_to"] = now
        elif name in ("NodeStart", "NodeFinished"):
            kind = event.data.node_info.resource_type
            step = {"model": "model", "snapshot": "snapshot", "test": "tests"}.get(kind)
            if step:
                self.nodes.setdefault(step, []).append(now)
                self.step = step
        elif name == "SQLQuery":
            self.statements[self.step] = self.statements.get(self.step, 0) + 1
        elif name == "CommandCompleted":
            self.marks["completed"] = now

    def seconds(self, ended: float) -> dict[str, float]:
        marks = self.marks

        def first(step: str) -> float | None:
            return min(self.nodes[step]) if self.nodes.get(step) else None

        def last(step: str) -> float | None:
            return max(self.nodes[step]) if self.nodes.get(step) else None

        spans = {
            "startup": (self.started, marks.get("version")),
            "parse": (marks.get("version"), marks.get("found")),
            "session": (marks.get("found"), marks.get("on_run_start_from")),
            "on_run_start": (marks.get("on_run_start_from"), marks.get("on_run_start_to")),
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
