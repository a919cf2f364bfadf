"""A scheduler process for the fault-injection test (test_faults.py): scheduled runs of the water-level
pipeline at given run times in LATE_DATA_HOME, optionally killed (SIGKILL, no cleanup of any kind)
at one point of its last run, and, in a process resuming after such a kill, checks of what the
resumed schedule left. Run as `python -m tests.fault_driver '<json plan>'` from python/; prints one
JSON object per line (the kill about to happen, each run's report, the checks).

The kill comes from a dbt event callback, in the thread that fires the event, so the process dies
at a known statement: dbt fires SQLQuery just before it executes the statement."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from datetime import datetime
from typing import Any

from late_data.commands.status import read_status
from late_data.oracles.compare import compare
from late_data.oracles.demo_pipelines import compare_window_means
from late_data.project.audit import resume_point
from late_data.project.raw_tables import ensure_raw_tables
from late_data.running.scheduler import run_pipeline, scenario_feed, scheduled_selection
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.environment import prepare_environment
from late_data.runtime.timeutil import format_timestamp, parse_timestamp
from tests.helpers import TEST_SETTINGS, TEST_VARS, WINDOW_MEANS_COLUMNS, water_levels

HISTORY = "water_level_window_means_history"
AUDIT = "late_data_run_audit"
VERSIONS = "int_water_level__versions"
# Where the driver keeps the result table as each run left it: the published states the history
# must reproduce. Outside the project's schemas, which a reset drops.
WITNESS_SCHEMA = "fault_witness"
# Late rows (half the readings, up to the late window late), corrections (some moving a reading to
# another window), and rows too late to count: every resumed run has real work.
SCENARIO = water_levels(correction_share=0.05, moved_correction_share=0.3, too_late_share=0.02)


def statement(message: Any) -> str:
    return message.data.sql.lower() if message.info.name == "SQLQuery" else ""


# Kill points: (does this dbt event mark it, seconds to wait before the kill). A delay lets the
# statement start, so the kill lands while Spark executes it rather than before.
KILL_POINTS: dict[str, tuple[Any, float]] = {
    # While the history snapshot appends the versions the run closed (0.2 s after it starts).
    "history_append": (lambda m: "insert into" in statement(m) and f"{HISTORY}__closed" in statement(m), 0.2),
    # The on-run-end audit insert: every table of the run committed, the audit rows not.
    "audit_insert": (lambda m: "insert into" in statement(m) and AUDIT in statement(m), 0.0),
}


class Killer:
    """A dbt event callback that SIGKILLs this process at the armed kill point."""

    def __init__(self) -> None:
        self.point: str | None = None

    def __call__(self, message: Any) -> None:
        if self.point is None:
            return
        matches, delay = KILL_POINTS[self.point]
        if not matches(message):
            return
        emit({"killing": self.point, "invocation_id": message.info.invocation_id, "delay": delay})
        self.point = None
        if delay:
            threading.Timer(delay, kill_self).start()
        else:
            kill_self()


def kill_self() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def emit(record: dict[str, Any]) -> None:
    print(json.dumps(record, default=str), flush=True)


def parse_time(text: str) -> datetime:
    return parse_timestamp(text)


def record_published(project: DbtProject, run_time: datetime) -> None:
    """The result table as it stands, as the state published at `run_time`."""
    schema = project.target_schema()
    project.spark.sql(
        f"delete from {WITNESS_SCHEMA}.published where run_time = timestamp'{format_timestamp(run_time)}'"
    )
    project.spark.sql(
        f"""
        insert into {WITNESS_SCHEMA}.published
        select timestamp'{format_timestamp(run_time)}' as run_time, {WINDOW_MEANS_COLUMNS}
        from {schema}.water_level_window_means
        """
    )


def history_versions_from(project: DbtProject, moment: datetime) -> int:
    """History versions valid from `moment` (open ones are the result's rows, so the killed run's write shows)."""
    history = f"{project.target_schema()}.{HISTORY}"
    if not project.spark.catalog.tableExists(history):
        return 0
    return project.spark.sql(
        f"select count(*) from {history} where dbt_valid_from = timestamp'{format_timestamp(moment)}'"
    ).first()[0]


def audit_rows(project: DbtProject, invocation_ids: list[str]) -> list[dict[str, Any]]:
    if not invocation_ids:
        return []
    ids = ", ".join(f"'{invocation_id}'" for invocation_id in invocation_ids)
    return project.query(
        f"""
        select invocation_id, model, outcome, run_time
        from {project.target_schema()}.{AUDIT}
        where invocation_id in ({ids})
        order by invocation_id, model
        """
    )


def history_checks(project: DbtProject) -> dict[str, Any]:
    """The history against every recorded published state (as of each run time, the versions valid
    then equal the result table as that run left it), and its shape: no two versions of a window
    valid from the same moment, no overlapping validity intervals, at most one open version."""
    spark = project.spark
    history = spark.table(f"{project.target_schema()}.{HISTORY}")
    published = spark.table(f"{WITNESS_SCHEMA}.published")
    run_times = published.select("run_time").distinct()
    as_of = history.join(
        run_times,
        (history["dbt_valid_from"] <= run_times["run_time"])
        & (history["dbt_valid_to"].isNull() | (history["dbt_valid_to"] > run_times["run_time"])),
    )
    fidelity = compare(
        published,
        as_of,
        keys=["run_time", "window_start", "location"],
        exact_columns=["reading_count", "is_final"],
        approximate_columns=["mean_value"],
    )
    shape = spark.sql(
        f"""
        with versions as (
            select
                window_key,
                dbt_valid_from,
                dbt_valid_to,
                lag(dbt_valid_to) over w as previous_valid_to,
                lag(dbt_valid_from) over w as previous_valid_from
            from {project.target_schema()}.{HISTORY}
            window w as (partition by window_key order by dbt_valid_from, dbt_valid_to nulls last)
        )
        select
            count(*) as versions,
            count_if(dbt_valid_from = previous_valid_from) as duplicate_versions,
            count_if(previous_valid_from is not null and (previous_valid_to is null or previous_valid_to > dbt_valid_from))
                as overlapping_versions,
            count_if(dbt_valid_to <= dbt_valid_from) as empty_versions,
            count(distinct window_key) as windows,
            count_if(dbt_valid_to is null) as open_versions
        from versions
        """
    ).first()
    return {
        "published_states": run_times.count(),
        "states_checked": fidelity.windows_checked,
        "states_mismatched": fidelity.mismatched,
        "state_examples": [row.asDict() for row in fidelity.examples],
        **shape.asDict(),
        "windows_with_versions": history.select("window_key").distinct().count(),
        "current_windows": spark.table(f"{project.target_schema()}.water_level_window_means").count(),
    }


def check(project: DbtProject, raw_table: str, run_time: datetime, killed_invocations: list[str]) -> dict[str, Any]:
    """The result table against the oracle as of `run_time`, the history against every published
    state, what the audit says of the killed invocations, and what `late-data status` says."""
    oracle = compare_window_means(
        project.spark, raw_table, f"{project.target_schema()}.water_level_window_means", run_time, TEST_SETTINGS
    )
    return {
        "run_time": run_time,
        "windows_checked": oracle.windows_checked,
        "mismatched": oracle.mismatched,
        "examples": [row.asDict() for row in oracle.examples],
        "history": history_checks(project),
        "audit_of_killed": audit_rows(project, killed_invocations),
        # The product's own view (late-data status), not a second query of the tables.
        **status_of_interruptions(project),
    }


def status_of_interruptions(project: DbtProject) -> dict[str, Any]:
    status = read_status(project)
    return {
        "interrupted_writes": [
            {"model": run["model"], "written_until": run["written_until"]} for run in status.interrupted
        ],
        "last_recovered_from": status.last_recovery["recovered_from"] if status.last_recovery else None,
    }


def main(plan: dict[str, Any]) -> None:
    """`plan`: origin; fed_until (raw rows are fed up to here already; none: reset everything
    first); left_by (the run time of the run the previous process was killed in: the result table
    as it is now is what that run left published); killed_invocations (ids whose audit rows to
    report); steps, each {run_time, kill (a KILL_POINTS name, or none)} for a scheduled run,
    {recover: true} to run the interrupted run's time again, as a restarted scheduler does, or
    {check: true} for the checks as of the last run."""
    killer = Killer()
    project = DbtProject(prepare_environment(), TEST_VARS, callbacks=[killer])
    spark = project.spark
    if plan.get("fed_until") is None:
        project.reset_warehouse()
        spark.sql(f"drop schema if exists {WITNESS_SCHEMA} cascade")
        spark.sql(f"create schema {WITNESS_SCHEMA}")
        spark.sql(
            f"create table {WITNESS_SCHEMA}.published (run_time timestamp, window_start timestamp, location string,"
            " reading_count bigint, mean_value double, is_final boolean) using iceberg"
        )
    tables = ensure_raw_tables(spark, project.raw_schema(), project.environment.table_format)
    killed_invocations = plan.get("killed_invocations", [])
    if plan.get("left_by"):
        left_by = parse_time(plan["left_by"])
        published_then = spark.sql(
            f"select count(*) from {project.target_schema()}.water_level_window_means"
            f" where computed_at = timestamp'{format_timestamp(left_by)}'"
        ).first()[0]
        emit(
            {
                "before_resume": {
                    "result_windows_published_by_killed_run": published_then,
                    "history_versions_from_killed_run": history_versions_from(project, left_by),
                    "audit_of_killed": audit_rows(project, killed_invocations),
                }
            }
        )
        record_published(project, left_by)
    origin = parse_time(plan["origin"])
    feed = scenario_feed(project, tables, origin, water_levels=SCENARIO)
    fed_until = parse_time(plan["fed_until"]) if plan.get("fed_until") else origin
    last_run_time: datetime | None = None
    runs_in_process = 0
    for step in plan["steps"]:
        if step.get("check"):
            emit({"check": check(project, tables["water_level_readings"], last_run_time, killed_invocations)})
            continue
        if step.get("recover"):
            # What a restarted scheduler does (run_simulated): resume at the first run time after
            # the last successful run in the audit, which is the interrupted one. When the killed
            # run wrote its result table, the table's written_at is ahead of the audit: status
            # shows it, and the models turn the resumed run into a reconciliation.
            recovered = parse_time(plan["left_by"])
            succeeded = resume_point(project).last_success
            assert succeeded is not None and succeeded < recovered, (succeeded, recovered)
            emit({"before_recovery": status_of_interruptions(project)})
            last_run_time, kill = recovered, None
        else:
            last_run_time, kill = parse_time(step["run_time"]), step.get("kill")
            feed(fed_until, last_run_time)
            fed_until = last_run_time
        killer.point = kill
        report = run_pipeline(
            project,
            last_run_time,
            scheduled_selection(project, "water_level", first_run=runs_in_process == 0),
        )
        runs_in_process += 1
        record_published(project, last_run_time)
        emit(
            {
                "run": report.line(),
                "windows_changed": report.windows_changed,
                "windows_repaired": report.windows_repaired,
                "rows_written": report.rows_written,
            }
        )
    project.close()


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
