"""What the run audit says: each model's last run, interrupted runs, the quarantine, reconciliation."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from late_data.dbt_project import DbtProject
from late_data.raw_tables import RAW_TABLES
from late_data.timeutil import format_timestamp

# One per pipeline: each is a view over its own versions table.
QUARANTINE_VIEWS = ("water_level_quarantine", "page_error_rates_quarantine")
# The result tables, whose rows carry written_at: the run time of the run that last wrote them.
RESULT_TABLES = ("water_level_window_means", "page_error_rates")


@dataclass(frozen=True)
class Status:
    last_runs: list[dict[str, Any]]
    # Result tables holding a write (written_at) that no successful run recorded: a run killed after
    # it wrote, not yet recovered by a later run (or, on a shared catalog, one still running).
    interrupted: list[dict[str, Any]]
    # The last run that found such a write and recovered it (it ran as a reconciliation).
    last_recovery: dict[str, Any] | None
    quarantine: list[dict[str, Any]]
    last_reconciliation: dict[str, Any] | None

    def lines(self) -> list[str]:
        if not self.last_runs and not self.interrupted:
            return ["status: no late-data run recorded yet"]
        lines = ["last runs:"]
        for run in self.last_runs:
            lines.append(
                f"  {run['model']}: {run['outcome']} {run['run_kind']} run_time={_stamp(run['run_time'])}"
                f" rows_written={_number(run['rows_written'])} windows_changed={_number(run['windows_changed'])}"
                f" rows_quarantined={_number(run['rows_quarantined'])} seconds={_number(run['seconds'], '.2f')}"
            )
        lines.append(f"interrupted runs not yet recovered: {len(self.interrupted)}")
        for run in self.interrupted:
            lines.append(
                f"  {run['model']} holds what a run at {_stamp(run['written_until'])} wrote; its last recorded run is"
                f" {_stamp(run['recorded_until'])} (the next run reconciles it)"
            )
        if self.last_recovery is not None:
            lines.append(
                f"last recovery: the run at {_stamp(self.last_recovery['run_time'])} recovered an interrupted run at"
                f" {_stamp(self.last_recovery['recovered_from'])}"
            )
        total = sum(int(row["versions"]) for row in self.quarantine)
        lines.append(f"quarantine: {total} row versions")
        for row in self.quarantine:
            lines.append(
                f"  {row['source_table']}: {row['versions']} {row['quarantine_reason']}"
                f" (last at run {_stamp(row['last_quarantined_at'])})"
            )
        if self.last_reconciliation is None:
            lines.append("last reconciliation: none")
        else:
            lines.append(
                f"last reconciliation: run_time={_stamp(self.last_reconciliation['run_time'])}"
                f" windows_repaired={_number(self.last_reconciliation['windows_repaired'])}"
            )
        return lines


def _stamp(moment: datetime | None) -> str:
    return format_timestamp(moment) if moment is not None else "-"


def _number(value: Any, spec: str = "") -> str:
    return "-" if value is None else format(value, spec)


def _existing_tables(project: DbtProject, schema: str) -> set[str]:
    if not project.query(f"show schemas like '{schema}'"):
        return set()
    return {row["tableName"] for row in project.query(f"show tables in {schema}")}


def last_successful_run_time(project: DbtProject) -> datetime | None:
    """The last run time a late-data model completed successfully (not counting backfills, which
    recompute the past)."""
    if "late_data_run_audit" not in _existing_tables(project, project.target_schema()):
        return None
    (row,) = project.query(
        f"""
        select max(run_time) as succeeded
        from {project.target_schema()}.late_data_run_audit
        where outcome = 'success' and run_kind != 'backfill'
        """
    )
    succeeded: datetime | None = row["succeeded"]
    return succeeded


def latest_arrival(project: DbtProject) -> datetime | None:
    """The latest ingested_at of any raw table: how far a feed of the raw tables has got."""
    existing = _existing_tables(project, project.raw_schema())
    tables = [f"{project.raw_schema()}.{table}" for table in RAW_TABLES if table in existing]
    if not tables:
        return None
    (row,) = project.query(
        "select max(ingested_at) as latest from ("
        + " union all ".join(f"select max(ingested_at) as ingested_at from {table}" for table in tables)
        + ")"
    )
    latest: datetime | None = row["latest"]
    return latest


def read_status(project: DbtProject) -> Status:
    """The audit's view of the pipeline, and the result tables' own record of what wrote them."""
    schema = project.target_schema()
    existing = _existing_tables(project, schema)
    if "late_data_run_audit" not in existing:
        return Status([], [], None, [], None)
    audit = f"{schema}.late_data_run_audit"
    last_runs = project.query(
        f"""
        select model, run_kind, run_time, outcome, rows_written, windows_changed, rows_quarantined, seconds
        from (
            select *, row_number() over (partition by model order by recorded_at desc) as newest
            from {audit}
            where outcome != 'started'
        )
        where newest = 1
        order by model
        """
    )
    results = [table for table in RESULT_TABLES if table in existing]
    interrupted = (
        project.query(
            " union all ".join(
                f"""
                select '{table}' as model, written_until, recorded_until
                from (select max(written_at) as written_until from {schema}.{table})
                cross join (
                    select max(run_time) as recorded_until from {audit} where model = '{table}' and outcome = 'success'
                )
                where written_until > coalesce(recorded_until, timestamp'1970-01-01 00:00:00')
                """
                for table in results
            )
        )
        if results
        else []
    )
    recoveries = project.query(
        f"""
        select run_time, max(recovered_from) as recovered_from
        from {audit}
        where recovered_from is not null and outcome = 'success'
        group by invocation_id, run_time
        order by run_time desc
        limit 1
        """
    )
    quarantines = [f"select * from {schema}.{view}" for view in QUARANTINE_VIEWS if view in existing]
    quarantine = (
        project.query(
            f"""
            select source_table, quarantine_reason, count(*) as versions, max(quarantined_at) as last_quarantined_at
            from ({" union all ".join(quarantines)})
            group by source_table, quarantine_reason
            order by source_table, quarantine_reason
            """
        )
        if quarantines
        else []
    )
    reconciliations = project.query(
        f"""
        select run_time, sum(windows_repaired) as windows_repaired
        from {audit}
        where run_kind = 'reconcile' and outcome = 'success' and model_role = 'windows'
        group by invocation_id, run_time
        order by run_time desc
        limit 1
        """
    )
    return Status(
        last_runs,
        interrupted,
        recoveries[0] if recoveries else None,
        quarantine,
        reconciliations[0] if reconciliations else None,
    )
