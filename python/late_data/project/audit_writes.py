"""What commands other than dbt write into the run audit (late_data.project.audit reads it): a
publish's and a rollback's rows, the `rolled_back` marks on the rows of the runs a rollback undid, a
staged backfill's rows copied in when it is published."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Protocol

from late_data.project.audit import AUDIT, audit_model, audit_models
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.sql_text import sql_string, timestamp_literal
from late_data.runtime.timeutil import format_timestamp


class RecordedVersion(Protocol):
    """What the audit records of a named version (late_data.publishing.named_versions.NamedVersion)."""

    name: str
    run_time: datetime | None
    state_at: datetime | None
    tables: dict[str, int]
    detail: dict[str, Any]


def ensure_audit_columns(project: DbtProject) -> None:
    """The audit's rollback columns (late_data.run_audit_columns adds them too, on a dbt run)."""
    audit = f"{project.target_schema()}.{AUDIT}"
    present = set(project.spark.table(audit).columns)
    missing = [f"{name} string" for name in ("rolled_back_by", "rolled_back_outcome") if name not in present]
    if missing:
        project.execute(f"alter table {audit} add columns ({', '.join(missing)})")


def audit_rollback_rows(
    project: DbtProject, tables: list[str], state_at: datetime | None, rollback_name: str
) -> tuple[str, str]:
    """Predicates on the audit: the rows of `tables` the rollback `rollback_name` to `state_at`
    marks rolled back (recorded later), and those it restores: recorded by then and marked by
    another rollback made after then (a row a rollback marked before then stays marked: it was
    undone in that state too)."""
    stamp, models = timestamp_literal(state_at), audit_models(tables)
    later_rollbacks = [
        row["invocation_id"]
        for row in project.query(
            f"select distinct invocation_id from {project.target_schema()}.{AUDIT}"
            f" where run_kind = 'rollback' and recorded_at > {stamp} and invocation_id != {sql_string(rollback_name)}"
        )
    ]
    return (
        f"model in ({models}) and recorded_at > {stamp} and run_kind != 'rollback' and outcome != 'rolled_back'",
        f"model in ({models}) and recorded_at <= {stamp} and outcome = 'rolled_back'"
        f" and rolled_back_by in ({', '.join(sql_string(name) for name in later_rollbacks) or 'null'})",
    )


def mark_audit(project: DbtProject, version: RecordedVersion) -> None:
    """The audit of the version's tables as it stood at its state_at: rows recorded later marked
    rolled back by it, rows a later rollback marked restored; then one `rollback` row per table."""
    audit = f"{project.target_schema()}.{AUDIT}"
    marked, restored = audit_rollback_rows(project, list(version.tables), version.state_at, version.name)
    project.execute(
        f"update {audit} set rolled_back_outcome = outcome, outcome = 'rolled_back',"
        f" rolled_back_by = {sql_string(version.name)} where {marked}"
    )
    project.execute(
        f"update {audit} set outcome = rolled_back_outcome, rolled_back_outcome = null, rolled_back_by = null"
        f" where {restored}"
    )
    append_audit_rows(project, version, "rollback")


def append_audit_rows(project: DbtProject, version: RecordedVersion, kind: str) -> None:
    """One audit row per table of a publish or a rollback (run_kind and outcome `kind`, invocation_id
    its name, plan the table's version and the manifest), once (a resumed command adds none twice)."""
    audit = f"{project.target_schema()}.{AUDIT}"
    given = {
        "invocation_id": sql_string(version.name),
        "run_kind": sql_string(kind),
        "run_time": f"timestamp'{format_timestamp(version.run_time)}'" if version.run_time else "null",
        "outcome": sql_string(kind),
        "recorded_at": "current_timestamp()",
    }
    fields = project.spark.table(audit).schema.fields
    rows = " union all ".join(
        "select "
        + ", ".join(
            {
                **given,
                "model": sql_string(audit_model(table)),
                "plan": sql_string(json.dumps({"version": number, "manifest": version.detail.get("manifest")})),
            }.get(column.name, f"cast(null as {column.dataType.simpleString()})")
            + f" as {column.name}"
            for column in fields
        )
        for table, number in version.tables.items()
    )
    project.execute(
        f"insert into {audit} select * from ({rows}) as listed"
        f" where not exists (select 1 from {audit} as a where a.invocation_id = listed.invocation_id"
        " and a.model = listed.model)"
    )


def copy_audit_rows(project: DbtProject, stage: str, staged_from: str) -> None:
    """The staged backfill's audit rows, appended to the audit once (a resumed publish adds none twice)."""
    audit = f"{project.target_schema()}.{AUDIT}"
    columns = ", ".join(project.spark.table(audit).columns)
    project.execute(
        f"""
        insert into {audit}
        select {columns} from {stage}.{AUDIT} as staged
        where recorded_at >= timestamp'{staged_from}'
            -- What the stage built upstream was built there, not where the published tables read it.
            and coalesce(model_role, '') != 'upstream'
            and not exists (
                select 1 from {audit} as published
                where published.invocation_id = staged.invocation_id and published.model = staged.model
            )
        """
    )
