"""Table-format versions of a table: which one is current, which one was current at a moment, whether
it is still kept, and putting a table back to one. An Iceberg version is a snapshot id, a Delta
version its commit number; both formats keep a log of when each became current, so "the state after
a run" is the version current when that run's audit rows were recorded."""

from __future__ import annotations

import re
from datetime import datetime

from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.sql_text import as_moment, timestamp_literal

# What a named version keeps on Delta: Delta's own default file retention, since it has no tags.
NAMED_VERSION_SECONDS = 168 * 3600
RETENTIONS = ("delta.deletedFileRetentionDuration", "delta.logRetentionDuration")
# How late_data.set_delta_retention writes them; any other value is the user's and left alone.
MAINTAINED_RETENTION = re.compile(r"^interval (\d+) seconds$")


def _format(project: DbtProject) -> str:
    return project.environment.table_format


def current_version(project: DbtProject, table: str) -> int | None:
    if _format(project) == "iceberg":
        rows = project.query(f"select snapshot_id from {table}.refs where name = 'main'")
        return int(rows[0]["snapshot_id"]) if rows else None
    rows = project.query(f"describe history {table} limit 1")
    return int(rows[0]["version"]) if rows else None


def state_version(project: DbtProject, table: str) -> int | None:
    """The version whose content the table holds now: its current version, except that a Delta
    RESTORE is a commit of its own holding the content of the version it restored."""
    if _format(project) == "iceberg":
        return current_version(project, table)
    history = {int(row["version"]): row for row in project.query(f"describe history {table}")}
    version = max(history, default=None)
    while version is not None and history[version]["operation"] == "RESTORE":
        restored = int((history[version]["operationParameters"] or {}).get("version", -1))
        if restored not in history:
            break
        version = restored
    return version


def version_at(project: DbtProject, table: str, moment: datetime) -> int | None:
    """The version that was current at `moment` (None: the table had no version yet). Iceberg's
    `history` logs each snapshot as it became current, rollbacks included; Delta's log is linear
    (a RESTORE is a commit of its own)."""
    if _format(project) == "iceberg":
        rows = project.query(
            f"select snapshot_id from {table}.history where made_current_at <= {timestamp_literal(moment)}"
            " order by made_current_at desc limit 1"
        )
        return int(rows[0]["snapshot_id"]) if rows else None
    versions = [
        row for row in project.query(f"describe history {table}") if (as_moment(row["timestamp"]) or moment) <= moment
    ]
    return max((int(row["version"]) for row in versions), default=None)


def is_kept(project: DbtProject, table: str, version: int) -> bool:
    """Whether the table format still keeps `version` (an expired Iceberg snapshot, or a Delta
    version older than its log keeps, cannot be returned to)."""
    if _format(project) == "iceberg":
        return bool(project.query(f"select 1 from {table}.snapshots where snapshot_id = {version}"))
    kept = [int(row["version"]) for row in project.query(f"describe history {table}")]
    # A Delta version older than the oldest checkpoint kept has lost the commits it is made of.
    return bool(kept) and min(kept) <= version <= max(kept)


def restore(project: DbtProject, table: str, version: int) -> None:
    """Make `version` the table's current state (one metadata commit; nothing when it already is)."""
    if state_version(project, table) == version:
        return
    if _format(project) == "iceberg":
        project.execute(f"call spark_catalog.system.set_current_snapshot(table => '{table}', snapshot_id => {version})")
    else:
        project.execute(f"restore table {table} to version as of {version}")


def hold_for_named_version(project: DbtProject, table: str) -> None:
    """Delta: a retention that maintenance shortened below 168 hours (late_data.set_delta_retention)
    back to 168 hours before a named version is made of the table, so the files and log of the
    version it names outlive the next maintenance (which keeps 168 hours for it from then on).
    Iceberg's tags hold their snapshots by themselves."""
    if _format(project) == "iceberg":
        return
    properties = {row["key"]: row["value"] for row in project.query(f"show tblproperties {table}")}
    shortened = [
        key
        for key in RETENTIONS
        if (match := MAINTAINED_RETENTION.match(str(properties.get(key, "")))) and int(match[1]) < NAMED_VERSION_SECONDS
    ]
    if shortened:
        held = ", ".join(f"'{key}' = 'interval {NAMED_VERSION_SECONDS} seconds'" for key in shortened)
        project.execute(f"alter table {table} set tblproperties ({held})")


def tag(project: DbtProject, table: str, name: str, version: int) -> None:
    """Iceberg: a tag `name` on the snapshot (kept from expiry as long as the tag exists). Delta has
    no tags: the named versions table is its only record, and its log retention bounds it."""
    if _format(project) == "iceberg":
        project.execute(f"alter table {table} create or replace tag `{name}` as of version {version}")


def read_as_of(project: DbtProject, table: str, version: int, name: str | None = None) -> str:
    """SQL naming the table as of a version: by its tag on Iceberg when it has one."""
    if _format(project) == "iceberg" and name:
        return f"{table} version as of '{name}'"
    return f"{table} version as of {version}"


def current_metadata_file(project: DbtProject, table: str) -> str:
    """An Iceberg table's current metadata file, as its metadata log names it."""
    (row,) = project.query(f"select file from {table}.metadata_log_entries order by timestamp desc limit 1")
    return str(row["file"])


def clone(project: DbtProject, source: str, target: str) -> None:
    """A copy of `source` as it is now, sharing its data files (metadata only): Iceberg registers
    the current metadata under a second name (its writes add files and metadata of their own;
    dropped without PURGE, which `drop table` is, it leaves the source alone); Delta makes a
    shallow clone."""
    if _format(project) == "iceberg":
        metadata_file = current_metadata_file(project, source)
        project.execute(
            f"call spark_catalog.system.register_table(table => '{target}', metadata_file => '{metadata_file}')"
        )
        # The copy inherits the source's metadata log, whose files are the source's: with the
        # package's metadata bound on, enough commits to the copy would delete them, the source's
        # current metadata file among them. The copy keeps every metadata file instead.
        project.execute(
            f"alter table {target} set tblproperties ('write.metadata.delete-after-commit.enabled' = 'false')"
        )
    else:
        project.execute(f"create table {target} shallow clone {source}")
