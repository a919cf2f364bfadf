"""The Delta run of the format-aware tests, in a process of its own, started as soon as the suite
is collected so it runs beside the Iceberg tests rather than after them: it is the suite's longest
test, and a Spark test on these small tables leaves the other core idle much of the time."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

PROJECT_DIR = Path(__file__).resolve().parents[2]
TEST_ID = "test_delta.py::test_the_commit_log_proofs_hold_on_delta_tables"
TIMEOUT_SECONDS = 3600
# Run again on Delta tables (its own LATE_DATA_HOME and Spark): the tests whose proofs read the
# table format's metadata or go through what differs between the formats (a write that clears a
# partition, time travel, file pruning, maintenance, cloning and restoring); the multi-run scenario
# with the oracle after every run and the history checked against every published state; and the
# example pipelines whose runs write what no other does (a dimension's applied rows, merged; sliding
# windows). Left to Iceberg: what the SQL decides the same way on both (the hand-made corrections
# and too-late rows, a correction before the horizon, the settings refused), the history compared
# with the one the package kept before it appended (equal on Delta when the change was made; the
# scenario here checks Delta's history every run), the error-rate pipeline's proofs (200 s more on
# Delta) and the example's meter and daily pipelines (their writes are the same macros as the means').
FORMAT_AWARE_TESTS = (
    "python/tests/test_corrections.py::test_window_emptied_by_a_correction_is_cleared",
    "python/tests/test_scenario_oracle.py",
    "python/tests/test_maintenance.py",
    "python/tests/test_scan_horizon.py::test_a_scheduled_run_reads_no_file_older_than_its_horizon",
    "python/tests/test_scan_horizon.py::test_the_history_reads_and_writes_only_the_pairs_its_result_rewrote",
    "python/tests/test_example_project.py::test_revenue_by_region_follows_late_corrections_of_the_customer_dimension",
    "python/tests/test_example_project.py::test_latency_percentiles_on_sliding_windows_stay_right",
    "python/tests/test_publishing.py",
    "python/tests/test_delta.py::test_the_classes_spark_loaded_are_the_pinned_release",
)


@dataclass
class DeltaProofs:
    process: subprocess.Popen[bytes]
    log: Path
    deadline: float

    def outcome(self) -> tuple[int, str]:
        """0 when the child finished and its JUnit report counts tests and no failure or error, else
        non-zero; and the end of its output. Not its exit code alone: a process that reaps zombies
        (the cluster tests' process checks do) can collect it first, and Popen then reports 0."""
        try:
            code = self.process.wait(timeout=max(1.0, self.deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        output = self.log.read_text(errors="replace")[-6000:]
        if not self.report.is_file():
            return code or 1, f"no JUnit report from the Delta run\n{output}"
        suites = list(ElementTree.parse(self.report).getroot().iter("testsuite"))
        counted = sum(int(suite.get("tests", 0)) for suite in suites)
        failed = sum(int(suite.get("failures", 0)) + int(suite.get("errors", 0)) for suite in suites)
        return (code or 1) if failed or not counted else code, output

    @property
    def report(self) -> Path:
        return self.log.with_suffix(".xml")


_started: list[DeltaProofs] = []


def start() -> DeltaProofs:
    """The Delta run, started once per session (the child's conftest gives it a LATE_DATA_HOME of
    its own: no Derby metastore is shared)."""
    if _started:
        return _started[0]
    environment = {**os.environ, "LATE_DATA_TABLE_FORMAT": "delta", "LATE_DATA_TARGET": "delta"}
    environment.pop("LATE_DATA_HOME", None)
    log = Path(tempfile.mkstemp(prefix="delta_proofs_", suffix=".log")[1])
    with log.open("wb") as output:
        process = subprocess.Popen(
            [
                *(sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"),
                f"--junitxml={log.with_suffix('.xml')}",
                *FORMAT_AWARE_TESTS,
            ],
            cwd=PROJECT_DIR,
            env=environment,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    _started.append(DeltaProofs(process, log, time.monotonic() + TIMEOUT_SECONDS))
    return _started[0]


def stop() -> None:
    """At the end of the session: a Delta run still going (the suite stopped early) is killed."""
    for proofs in _started:
        if proofs.process.poll() is None:
            proofs.process.kill()
            proofs.process.wait()
