"""Fault injection: a scheduler process killed (SIGKILL) inside a scheduled run, then a new process
resuming the schedule in the same LATE_DATA_HOME. After each resume the result table equals
the oracle, the history reproduces every state the result table was ever left in, and holds no
duplicate or overlapping versions.

Each scheduler is tests/fault_driver.py in its own process: the embedded Derby metastore admits one
process at a time, so the killed one must be gone before the next starts (and a kill -9 leaves
Derby's lock files behind: the next process must boot anyway)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from late_data.runtime.environment import find_project_dir

PROJECT_DIR = find_project_dir()
ORIGIN = datetime(2026, 3, 1, 12, 0, 0)
# Settings the driver must not inherit from the test session (its home is a temporary one).
INHERITED_SETTINGS = ("LATE_DATA_HOME", "LATE_DATA_WAREHOUSE", "LATE_DATA_SCHEMA")


def run_time(number: int) -> str:
    """Scheduled run `number`: every 3 minutes, 10 s after the boundary, from 9 minutes of data on."""
    return str(ORIGIN + timedelta(minutes=6 + 3 * number, seconds=10))


# One process per line: its runs, the last one killed at the named point (fault_driver.KILL_POINTS);
# every later process first runs the interrupted run time again, then checks, then goes on (the
# last one stops at its check: the one before it went on to a run of its own). One kill
# per state a kill can leave after the result table committed the killed run's write: its history
# behind (inside the history's append), or every table written but the audit (the audit insert).
# Either way the next run must find the write (the table's written_at is ahead of the audit) and
# recover it as a reconciliation. A kill before the result's commit leaves nothing of the run: a run
# that failed before its write (test_failed_runs). Each kill costs a process, about six minutes
# under make test's load.
KILLS = ["history_append", "audit_insert"]


def plans() -> list[dict[str, Any]]:
    first = {"steps": [{"run_time": run_time(1)}, {"run_time": run_time(2), "kill": KILLS[0]}]}
    resumed = [
        {
            "fed_until": run_time(number),
            "left_by": run_time(number),
            "steps": [{"recover": True}, {"check": True}]
            + ([{"run_time": run_time(number + 1), "kill": KILLS[number - 1]}] if number <= len(KILLS) else []),
        }
        for number in range(2, len(KILLS) + 2)
    ]
    return [first, *resumed]


def drive(home: Path, plan: dict[str, Any]) -> tuple[int, list[dict[str, Any]], str]:
    env = {key: value for key, value in os.environ.items() if key not in INHERITED_SETTINGS}
    env.update(
        {
            "LATE_DATA_HOME": str(home),
            "DBT_TARGET_PATH": str(home / "target"),
            "LATE_DATA_DRIVER_MEMORY": "1g",
            "LATE_DATA_SHUFFLE_PARTITIONS": "2",
        }
    )
    process = subprocess.run(
        [sys.executable, "-m", "tests.fault_driver", json.dumps({"origin": str(ORIGIN), **plan}, default=str)],
        cwd=PROJECT_DIR / "python",
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    records = [json.loads(line) for line in process.stdout.splitlines() if line.startswith("{")]
    return process.returncode, records, process.stderr


@pytest.mark.spark
def test_a_schedule_killed_inside_a_run_resumes_exactly(tmp_path: Path) -> None:
    started = time.monotonic()
    killed: list[dict[str, Any]] = []  # per kill: point, invocation id, run time, what the audit showed
    for index, plan in enumerate(plans()):
        plan["killed_invocations"] = [kill["invocation_id"] for kill in killed]
        returncode, records, stderr = drive(tmp_path, plan)
        if index:
            # The process after a kill: Derby booted despite the dead process's lock files; the run
            # the kill interrupted is found and recovered; then everything checks out.
            kill = killed[-1]
            assert returncode in (0, -9), stderr[-5000:]
            (before,) = [record["before_resume"] for record in records if "before_resume" in record]
            kill["before_resume"] = before
            (recovery,) = [record["before_recovery"] for record in records if "before_recovery" in record]
            written = [write["written_until"] for write in recovery["interrupted_writes"]]
            assert written == [kill["run_time"]], (kill, recovery)
            (check,) = [record["check"] for record in records if "check" in record]
            assert_exact(check, kill)
            kill["audit_after_resume"] = check["audit_of_killed"]
            # The killed invocation recorded nothing; the resumed run recorded what it recovered,
            # and status no longer lists an interrupted write.
            assert check["audit_of_killed"] == [] and check["interrupted_writes"] == [], (kill, check)
            assert check["last_recovered_from"] == kill["run_time"], (kill, check)
        kills = [record for record in records if "killing" in record]
        if index < len(KILLS):
            assert returncode == -9 and [record["killing"] for record in kills] == [KILLS[index]], (
                returncode,
                records,
                stderr[-5000:],
            )
            killed.append({**kills[0], "run_time": plan["steps"][-1]["run_time"]})
        else:
            assert returncode == 0 and not kills, stderr[-5000:]
    for kill in killed:
        print(f"fault {kill['killing']} at {kill['run_time']} ({kill['invocation_id']}): {kill['before_resume']}")
    print(f"fault injection: {len(killed)} kills and resumes in {time.monotonic() - started:.0f} s")


def assert_exact(check: dict[str, Any], kill: dict[str, Any]) -> None:
    """The result table equals the oracle; the history reproduces every published state, one
    version per window and run time, validity intervals disjoint, one open version per window."""
    history = check["history"]
    context = {"kill": kill["killing"], "run_time": check["run_time"]}
    assert check["windows_checked"] > 0 and check["mismatched"] == 0, (context, check["examples"])
    assert history["published_states"] > 0 and history["states_mismatched"] == 0, (context, history)
    assert history["duplicate_versions"] == history["overlapping_versions"] == history["empty_versions"] == 0, (
        context,
        history,
    )
    assert history["open_versions"] == history["current_windows"] > 0, (context, history)
