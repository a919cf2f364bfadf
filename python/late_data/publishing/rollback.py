"""A rollback puts each table back to its version after a run (or a named version) and marks the audit
rows of the runs it undid `rolled_back`, so the next scheduled run goes on from that run."""

from __future__ import annotations

from datetime import datetime

from late_data.project.audit import run_recorded_at
from late_data.project.audit_writes import ensure_audit_columns, mark_audit
from late_data.project.pipelines import Pipeline
from late_data.publishing.named_versions import (
    NamedVersion,
    PublishRefused,
    find_version,
    keep_description,
    named_versions,
    next_name,
    record,
    require_nothing_unfinished,
    unfinished,
    validate_name,
)
from late_data.publishing.stage import pipeline_tables
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.sql_text import as_moment
from late_data.runtime.timeutil import format_timestamp
from late_data.tables import versions as table_versions


def run_state_moment(project: DbtProject, pipelines: list[Pipeline], run_time: datetime) -> datetime:
    """When the run at `run_time` of the pipelines was last recorded: their tables' versions then are its state."""
    recorded_at = run_recorded_at(
        project, [table for pipeline in pipelines for table in pipeline_tables(project, pipeline)], run_time
    )
    if recorded_at is None:
        raise PublishRefused(
            f"no run of {', '.join(p.name for p in pipelines)} at {format_timestamp(run_time)} succeeded"
            " (`late-data status` lists the last runs)"
        )
    return as_moment(recorded_at)  # type: ignore[return-value]


def rollback(
    project: DbtProject,
    pipelines: list[Pipeline],
    to_run_time: datetime | None,
    to_version: str | None,
    name: str | None,
    now: datetime,
) -> NamedVersion:
    """Every late-data table of the pipelines back to its version after the run at `to_run_time`
    (or a named version's), the audit's later runs of those tables marked rolled back (and runs a
    later rollback marked, restored), recorded as a named version of its own. An interrupted
    rollback is finished first (and is what this call does)."""
    ensure_audit_columns(project)
    pending = unfinished(project)
    if pending is not None and pending.kind != "rollback":
        require_nothing_unfinished(project)
    version = pending if pending is not None else plan_rollback(project, pipelines, to_run_time, to_version, name, now)
    for table, number in version.tables.items():
        table_versions.restore(project, table, number)
    mark_audit(project, version)
    for table, number in version.tables.items():
        table_versions.tag(project, table, version.name, number)
    version.status = "rolled_back"
    record(project, version)
    project.forget_warehouse_state()
    return version


def plan_rollback(
    project: DbtProject,
    pipelines: list[Pipeline],
    to_run_time: datetime | None,
    to_version: str | None,
    name: str | None,
    now: datetime,
) -> NamedVersion:
    """The rollback's versions per table, checked (the target known, every version still kept), and
    journaled (status rolling_back) before anything changes."""
    tables = [table for pipeline in pipelines for table in pipeline_tables(project, pipeline)]
    versions: dict[str, int | None]
    if to_version is not None:
        target = find_version(project, to_version)
        if target.status not in ("published", "rolled_back"):
            raise PublishRefused(
                f"{to_version} is {target.status}: only a published or rolled-back version is returned to"
            )
        missing = [table for table in tables if table not in target.tables]
        if missing:
            raise PublishRefused(f"{to_version} holds no version of {', '.join(missing)}: select its pipelines only")
        state_at, run_time = target.state_at, target.run_time
        versions = {table: target.tables[table] for table in tables}
    elif to_run_time is not None:
        state_at, run_time = run_state_moment(project, pipelines, to_run_time), to_run_time
        versions = {table: table_versions.version_at(project, table, state_at) for table in tables}
    else:
        raise PublishRefused("a rollback needs a run time or a version name to go back to")
    described = to_version or format_timestamp(to_run_time or now)
    # A version the log no longer holds (None: gone from the snapshot log too) cannot be returned to.
    kept = {
        table: version
        for table, version in versions.items()
        if version is not None and table_versions.is_kept(project, table, version)
    }
    expired = [table for table in versions if table not in kept]
    if expired:
        raise PublishRefused(
            f"the state after {described} is no longer kept: {expired[0]}'s version of then has expired"
            f" (late_data.maintain_tables keeps {keep_description(project)}; named versions are kept as long as"
            " their tag on Iceberg)"
        )
    if all(table_versions.state_version(project, table) == number for table, number in kept.items()):
        raise PublishRefused(
            f"nothing to roll back: every table of {', '.join(p.name for p in pipelines)} holds {described}'s state"
        )
    version = NamedVersion(
        name=validate_name(name) if name else next_name(project, "rollback", now),
        kind="rollback",
        status="rolling_back",
        pipelines=[pipeline.name for pipeline in pipelines],
        run_time=run_time,
        state_at=state_at,
        tables=kept,
        base={
            table: number for table in kept if (number := table_versions.current_version(project, table)) is not None
        },
        detail={"to": described},
    )
    if any(existing.name == version.name for existing in named_versions(project)):
        raise PublishRefused(f"a version named {version.name} exists already: choose another --name")
    record(project, version)
    return version
