"""The named versions table: for each table of the pipelines a version covers, the table-format
version holding its state (an Iceberg snapshot, also tagged with the name; a Delta version), its
status as a journal (a command that died while publishing or rolling back left work to finish) and
the lines `late-data versions` and `late-data status` print of it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from late_data.project.audit import undone_by
from late_data.project.raw_tables import existing_tables
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.sql_text import as_moment, sql_string, timestamp_literal
from late_data.runtime.timeutil import format_timestamp
from late_data.tables import versions as table_versions

NAMED_VERSIONS = "late_data_named_versions"
NAME = re.compile(r"^[a-z][a-z0-9_]{0,47}$")
# Journal states: a command that died in one of them left work that must be finished first.
UNFINISHED = ("publishing", "rolling_back")


class PublishRefused(ValueError):
    """A refusal in one line (the command exits 2 and changes nothing)."""


@dataclass
class NamedVersion:
    name: str
    kind: str  # backfill, apply or rollback
    status: str  # staged, publishing, published, rolling_back, rolled_back
    pipelines: list[str]
    run_time: datetime | None  # the run whose state it holds (a backfill: its run time)
    recorded_at: datetime | None = None
    state_at: datetime | None = None  # when its state was current (the audit as of then goes with it)
    tables: dict[str, int] = field(default_factory=dict)  # table -> version holding this state
    base: dict[str, int] = field(default_factory=dict)  # table -> version before it
    detail: dict[str, Any] = field(default_factory=dict)


def registry(project: DbtProject) -> str:
    return f"{project.target_schema()}.{NAMED_VERSIONS}"


def validate_name(name: str) -> str:
    if not NAME.match(name):
        raise PublishRefused(
            f"{name!r} is not a version name: use lower-case letters, digits and underscores, starting with a letter"
            " (at most 48)"
        )
    return name


def _ensure_registry(project: DbtProject) -> None:
    project.execute(
        f"""
        create table if not exists {registry(project)} (
            name string, kind string, status string, pipelines array<string>, run_time timestamp,
            recorded_at timestamp, state_at timestamp, tables string, base string, detail string
        ) using {project.environment.table_format}
        """
    )


def record(project: DbtProject, version: NamedVersion) -> None:
    """Append the version's row (one commit: the journal's step)."""
    _ensure_registry(project)

    pipelines = ", ".join(sql_string(name) for name in version.pipelines)
    project.execute(
        f"""
        insert into {registry(project)} values (
            {sql_string(version.name)}, {sql_string(version.kind)}, {sql_string(version.status)},
            array({pipelines}), {timestamp_literal(version.run_time)}, current_timestamp(), {timestamp_literal(version.state_at)},
            {sql_string(json.dumps(version.tables))}, {sql_string(json.dumps(version.base))},
            {sql_string(json.dumps(version.detail, default=str))}
        )
        """
    )


def named_versions(project: DbtProject) -> list[NamedVersion]:
    """Every named version as its last row says, oldest first."""
    if NAMED_VERSIONS not in existing_tables(project.query, project.target_schema()):
        return []
    rows = project.query(
        f"""
        select * from (
            select *, row_number() over (partition by name order by recorded_at desc) as newest
            from {registry(project)}
        )
        where newest = 1
        order by recorded_at
        """
    )
    return [
        NamedVersion(
            name=row["name"],
            kind=row["kind"],
            status=row["status"],
            # An array through the Thrift Server is JSON text.
            pipelines=json.loads(row["pipelines"]) if isinstance(row["pipelines"], str) else list(row["pipelines"]),
            run_time=as_moment(row["run_time"]),
            recorded_at=as_moment(row["recorded_at"]),
            state_at=as_moment(row["state_at"]),
            tables={table: int(version) for table, version in json.loads(row["tables"]).items()},
            base={table: int(version) for table, version in json.loads(row["base"]).items()},
            detail=json.loads(row["detail"]),
        )
        for row in rows
    ]


def state_label(version: NamedVersion, undone: dict[str, str]) -> str:
    """A version's status as `late-data versions` says it: a published backfill a rollback undid
    says so."""
    if version.status == "published" and version.name in undone:
        return f"published, then rolled back by {undone[version.name]}"
    return version.status


def find_version(project: DbtProject, name: str) -> NamedVersion:
    validate_name(name)
    found = [version for version in named_versions(project) if version.name == name]
    if not found:
        raise PublishRefused(f"no version named {name} (`late-data versions` lists them)")
    return found[0]


def unfinished(project: DbtProject) -> NamedVersion | None:
    return next((version for version in named_versions(project) if version.status in UNFINISHED), None)


def require_nothing_unfinished(project: DbtProject, allow: str | None = None) -> None:
    """Writers refuse to build on a half-published backfill or a half-done rollback."""
    pending = unfinished(project)
    if pending is not None and pending.name != allow:
        again = "late-data publish " + pending.name if pending.kind != "rollback" else "late-data rollback again"
        raise PublishRefused(
            f"{'publishing' if pending.kind != 'rollback' else 'the rollback'} {pending.name} was interrupted"
            f" ({describe_switched(project, pending)}): run `{again}` to finish it first"
        )


def switched_tables(version: NamedVersion) -> list[str]:
    """The tables a publish or a rollback switches to their new version: a rollback every table of
    its pipelines, a publish the result and history tables (it copies their partitions; a version
    staged before this was recorded: every table it staged)."""
    return list(version.detail.get("publishes") or version.base)


def describe_switched(project: DbtProject, version: NamedVersion) -> str:
    """How far an interrupted publish or rollback got: its tables at their new version and at their old."""
    tables = switched_tables(version)
    new = [table for table in tables if table_versions.current_version(project, table) != version.base.get(table)]
    return f"{len(new)} of {len(tables)} tables at their new version" + (f": {', '.join(new)}" if new else "")


def next_name(project: DbtProject, kind: str, moment: datetime) -> str:
    """`<kind>_<yyyymmdd>_r<n>`: n counts the versions of that kind named for that day."""
    prefix = f"{kind}_{moment:%Y%m%d}_r"
    taken = [version.name for version in named_versions(project) if version.name.startswith(prefix)]
    return f"{prefix}{len(taken) + 1}"


def keep_description(project: DbtProject) -> str:
    if project.environment.table_format == "iceberg":
        return "Iceberg snapshots 24 hours and at least the last 100 (keep_hours, keep_snapshots)"
    return (
        "Delta's files and log 24 hours (keep_hours), 168 hours on a table a named version of the last 168 hours"
        " holds (delta.deletedFileRetentionDuration, delta.logRetentionDuration)"
    )


def version_lines(project: DbtProject) -> list[str]:
    """`late-data versions`: each named version, what it holds and how to read it."""
    versions = named_versions(project)
    if not versions:
        return ["versions: none named yet (a staged backfill or apply, or a rollback, names one)"]
    lines = []
    undone = undone_by(project)
    for version in versions:
        stamp = format_timestamp(version.recorded_at) if version.recorded_at else "-"
        to = str(version.detail.get("to", ""))
        held = (
            ""
            if version.kind != "rollback"
            else (f", version {to}'s state" if NAME.match(to) else f", the state after the run at {to}")
        )
        again = f"; `late-data rollback --to {version.name}` returns to it" if version.name in undone else ""
        lines.append(
            f"{version.name}: {version.kind} {state_label(version, undone)} at {stamp}{held}{again};"
            f" pipelines {', '.join(version.pipelines)}"
        )
        for table, number in version.tables.items():
            lines.append(f"  select * from {table_versions.read_as_of(project, table, number, version.name)}")
    return lines


def unfinished_lines(project: DbtProject) -> list[str]:
    """For `late-data status`: an interrupted publish or rollback, and which tables it switched."""
    pending = unfinished(project)
    if pending is None:
        published = [v for v in named_versions(project) if v.status in ("published", "rolled_back")]
        if not published:
            return []
        return [f"last named version: {published[-1].name} ({state_label(published[-1], undone_by(project))})"]
    command = f"late-data publish {pending.name}" if pending.kind != "rollback" else "late-data rollback"
    return [
        f"{'publish' if pending.kind != 'rollback' else 'rollback'} {pending.name} interrupted:"
        f" {describe_switched(project, pending)}; readers see the old state of the others; `{command}` finishes it"
    ]
