"""What the run audit says: each model's last run, interrupted runs, the quarantine, reconciliation."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from late_data.dbt_project import DbtProject
from late_data.timeutil import format_timestamp

# One per pipeline: each is a view over its own versions table.
QUARANTINE_VIEWS = ("water_level_quarantine", "page_counts_quarantine")


@dataclass(frozen=True)
class AuditedRunTimes:
    """The last run time a late-data model completed successfully (not counting backfills, which
    recompute the past), and the last one any invocation started, interrupted or not."""

    succeeded: datetime | None
    started: datetime | None


@dataclass(frozen=True)
class Status:
    last_runs: list[dict[str, Any]]
    interrupted: list[dict[str, Any]]
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
        lines.append(f"interrupted runs (started, no outcome recorded): {len(self.interrupted)}")
        for run in self.interrupted:
            lines.append(
                f"  invocation {run['invocation_id']}: {run['run_kind']} run_time={_stamp(run['run_time'])},"
                f" {run['models']} models started at {_stamp(run['started_at'])}"
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


def _table_exists(project: DbtProject, table: str) -> bool:
    schema = project.target_schema()
    return bool(project.query(f"show schemas like '{schema}'")) and bool(
        project.query(f"show tables in {schema} like '{table}'")
    )


def audited_run_times(project: DbtProject) -> AuditedRunTimes:
    if not _table_exists(project, "late_data_run_audit"):
        return AuditedRunTimes(None, None)
    (row,) = project.query(
        f"""
        select
            max(if(outcome = 'success' and run_kind != 'backfill', run_time, null)) as succeeded,
            max(if(run_kind != 'backfill', run_time, null)) as started
        from {project.target_schema()}.late_data_run_audit
        """
    )
    return AuditedRunTimes(row["succeeded"], row["started"])


def read_status(project: DbtProject, interrupted_limit: int = 10) -> Status:
    """The audit's view of the pipeline. An invocation still running shows as interrupted too: it
    has recorded its `started` rows and no outcome yet."""
    if not _table_exists(project, "late_data_run_audit"):
        return Status([], [], [], None)
    audit = f"{project.target_schema()}.late_data_run_audit"
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
    interrupted = project.query(
        f"""
        select
            invocation_id,
            min(run_kind) as run_kind,
            min(run_time) as run_time,
            min(recorded_at) as started_at,
            count(*) as models
        from {audit}
        group by invocation_id
        having count_if(outcome != 'started') = 0
        order by started_at desc
        limit {interrupted_limit}
        """
    )
    quarantines = [
        f"select * from {project.target_schema()}.{view}" for view in QUARANTINE_VIEWS if _table_exists(project, view)
    ]
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
    return Status(last_runs, interrupted, quarantine, reconciliations[0] if reconciliations else None)
