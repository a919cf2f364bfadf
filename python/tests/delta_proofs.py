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
from typing import Any
from xml.etree import ElementTree

from late_data.runtime.delta_jars import delta_jars_unavailable

PROJECT_DIR = Path(__file__).resolve().parents[2]
TEST_ID = "test_delta_proofs.py::test_the_commit_log_proofs_hold_on_delta_tables"
# How pytest-xdist's controller tells its workers where the Delta run it started writes.
WORKER_INPUT_KEY = "late_data_delta_proofs_log"
TIMEOUT_SECONDS = 3600
# Run again on Delta tables (its own LATE_DATA_HOME and Spark): what differs between the formats.
# The writes (a partition cleared by a correction, the result replaced by a full refresh), the
# commit log each proof reads, file pruning, maintenance, and a staged backfill's clone, publish and
# rollback; and one scenario end to end, the oracle and the commit log after every run. Left to
# Iceberg: what the SQL decides the same way on both (the corrections and too-late rows, sessions'
# merges and splits, the settings refused, the history's revisions, the replay into another
# schema), and the example's pipelines, whose writes are the macros the scenario writes on Delta
# (replace the changed partitions, merge the too-late listing, append the history).
FORMAT_AWARE_TESTS = (
    "python/tests/test_corrections.py::test_window_emptied_by_a_correction_is_cleared",
    *(
        f"python/tests/test_scenario_oracle.py::{name}"
        for name in (
            "test_every_window_matches_the_oracle_after_every_run",
            "test_only_partitions_whose_input_changed_are_rewritten",
            "test_run_report_matches_the_commit_log",
            "test_rerun_at_the_same_run_time_changes_nothing",
            "test_as_of_reads_equal_the_oracle_at_past_run_times",
            "test_full_refresh_gives_bit_identical_results",
            # On the scenario's pipeline, after the tests above (the module's order).
            "test_a_scheduled_run_reads_no_file_older_than_its_horizon",
            "test_every_run_commits_and_appends_a_file_to_the_audit",
            "test_maintenance_compacts_the_audit_and_changes_no_number",
            "test_delta_keeps_keep_hours_of_files_and_log",
            "test_the_next_run_still_finds_what_changed",
        )
    ),
    "python/tests/test_publishing.py::test_a_staged_backfill_is_invisible_until_published_and_a_rollback_restores_every_table",
    # An apply's publish: Delta maps a table's columns by name before it drops one.
    "python/tests/test_definitions.py::test_publishing_an_apply_adds_the_columns_of_measures_added_and_drops_those_of_measures_removed",
    "python/tests/test_delta.py::test_the_classes_spark_loaded_are_the_pinned_release",
)


@dataclass(frozen=True)
class DeltaProofs:
    """The Delta run's files: its output (`log`), its JUnit report and its exit code, each written by
    the run itself, so any process of the suite can wait for it: under pytest-xdist the controller
    starts it and the worker that draws the waiting test reads its outcome."""

    log: Path

    @property
    def report(self) -> Path:
        return self.log.with_suffix(".xml")

    @property
    def exit_file(self) -> Path:
        return self.log.with_suffix(".exit")

    @property
    def cost_file(self) -> Path:
        """What the run cost (tests/costs.py), written by its conftest as it ends."""
        return self.log.with_suffix(".cost")

    def outcome(self, timeout: float = TIMEOUT_SECONDS) -> tuple[int, str]:
        """0 when the run finished and its JUnit report counts tests and no failure or error, else
        non-zero; and the end of its output. Not its exit code alone: a report with no test in it
        (nothing collected) is a failure too."""
        deadline = time.monotonic() + timeout
        while not (written := self.exit_file.read_text().strip() if self.exit_file.is_file() else ""):
            if time.monotonic() > deadline:
                return 1, f"the Delta run did not finish in {timeout:.0f} s\n{self._output()}"
            time.sleep(2)
        code = int(written)
        if not self.report.is_file():
            return code or 1, f"no JUnit report from the Delta run\n{self._output()}"
        suites = list(ElementTree.parse(self.report).getroot().iter("testsuite"))
        counted = sum(int(suite.get("tests", 0)) for suite in suites)
        failed = sum(int(suite.get("failures", 0)) + int(suite.get("errors", 0)) for suite in suites)
        return (code or 1) if failed or not counted else code, self._output()

    def _output(self) -> str:
        return self.log.read_text(errors="replace")[-6000:] if self.log.is_file() else ""


def not_run_because() -> str | None:
    """Why this session does not run the Delta proofs (the reason its waiting test is skipped with),
    or None: a session already on Delta runs every test there; without Delta's jars they cannot run."""
    if os.environ.get("LATE_DATA_TABLE_FORMAT") == "delta":
        return "this session runs every test on Delta already"
    return delta_jars_unavailable()


def new_log() -> Path:
    """Where a Delta run about to start writes its output (its report and exit code beside it)."""
    return Path(tempfile.mkstemp(prefix="delta_proofs_", suffix=".log")[1])


_started: list[tuple[DeltaProofs, subprocess.Popen[bytes]]] = []


def start(log: Path | None = None) -> DeltaProofs:
    """The Delta run, started once per process that starts it (the child's conftest gives it a
    LATE_DATA_HOME of its own: no Derby metastore is shared). A shell writes its exit code when it
    ends, for whichever process waits."""
    if _started:
        return _started[0][0]
    proofs = DeltaProofs(log or new_log())
    environment = {
        **os.environ,
        "LATE_DATA_TABLE_FORMAT": "delta",
        "LATE_DATA_TARGET": "delta",
        "TESTS_COST_FILE": str(proofs.cost_file),
    }
    environment.pop("LATE_DATA_HOME", None)
    command = [
        *(sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"),
        f"--junitxml={proofs.report}",
        *FORMAT_AWARE_TESTS,
    ]
    with proofs.log.open("wb") as output:
        process = subprocess.Popen(
            ["sh", "-c", '"$@"; echo $? > "$0"', str(proofs.exit_file), *command],
            cwd=PROJECT_DIR,
            env=environment,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    _started.append((proofs, process))
    return proofs


def started_cost() -> dict[str, float] | None:
    """What the Delta run this process started cost, if it started one and it ended."""
    from tests import costs

    return costs.read(_started[0][0].cost_file) if _started else None


def stop() -> None:
    """At the end of the session that started it: a Delta run still going (the suite stopped early)
    is killed, with its pytest."""
    for _, process in _started:
        if process.poll() is None:
            os.killpg(process.pid, 9)
            process.wait()


def started(config: Any) -> DeltaProofs:
    """The Delta run of this test session: under pytest-xdist the one the controller started (its
    log named in the worker's input), else the one this process started."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        return DeltaProofs(Path(workerinput[WORKER_INPUT_KEY]))
    return start()
