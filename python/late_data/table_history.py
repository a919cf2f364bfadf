"""What each commit did to a table, read from the table format's own metadata."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Commit:
    """One commit; partitions are tuples of the table's partition values, in partition-spec order
    (for the late-data tables: (partition_start, series_bucket))."""

    version: int
    operation: str
    partitions_added: frozenset[tuple[Any, ...]]
    partitions_removed: frozenset[tuple[Any, ...]]
    records_added: int  # rows in the data files added
    records_removed: int  # rows in the data files removed
    files_added: int  # data and delete files
    files_removed: int
    rows_deleted: int = 0  # rows marked deleted by delete files (merge-on-read), not rewritten

    @property
    def partitions_touched(self) -> frozenset[tuple[Any, ...]]:
        return self.partitions_added | self.partitions_removed

    @property
    def time_partitions_touched(self) -> frozenset[Any]:
        """The first partition value (the time partition) of each partition touched."""
        return frozenset(partition[0] for partition in self.partitions_touched)


def latest_version(spark: Any, table: str, table_format: str) -> int | None:
    commits = commits_after(spark, table, table_format, None)
    return commits[-1].version if commits else None


def commits_after(spark: Any, table: str, table_format: str, version: int | None) -> list[Commit]:
    """Commits made after `version` (all commits when None), oldest first."""
    if table_format == "iceberg":
        return _iceberg_commits_after(spark, table, version)
    if table_format == "delta":
        return _delta_commits_after(spark, table, version)
    raise ValueError(f"unknown table format {table_format!r}")


def _iceberg_commits_after(spark: Any, table: str, version: int | None) -> list[Commit]:
    snapshots = spark.sql(
        f"select snapshot_id, operation, committed_at from {table}.snapshots order by committed_at"
    ).collect()
    sequence = [row["snapshot_id"] for row in snapshots]
    # A version missing from the log means the table was dropped and re-created since (a full
    # refresh): then every commit of the new table came after it.
    newer = sequence[sequence.index(version) + 1 :] if version in sequence else sequence
    if not newer:
        return []
    ids = ", ".join(str(snapshot_id) for snapshot_id in newer)
    # status 1 = file added by that snapshot, 2 = file deleted by it; content 0 = data file,
    # 1 and 2 = position and equality delete files (merge-on-read).
    file_fields = spark.sql(f"select data_file from {table}.all_entries limit 0").schema["data_file"].dataType.names
    partition = "data_file.partition" if "partition" in file_fields else "named_struct('unpartitioned', true)"
    entries = spark.sql(
        f"select snapshot_id, status, data_file.content as content, {partition} as partition_value,"
        f" data_file.record_count as records"
        f" from {table}.all_entries where snapshot_id in ({ids}) and status in (1, 2)"
    ).collect()
    operations = {row["snapshot_id"]: row["operation"] for row in snapshots}
    commits = []
    for snapshot_id in newer:
        mine = [e for e in entries if e["snapshot_id"] == snapshot_id]
        added = [e for e in mine if e["status"] == 1]
        removed = [e for e in mine if e["status"] == 2]
        commits.append(
            Commit(
                version=snapshot_id,
                operation=operations[snapshot_id],
                partitions_added=frozenset(_partition(e) for e in added),
                partitions_removed=frozenset(_partition(e) for e in removed),
                records_added=sum(e["records"] for e in added if e["content"] == 0),
                records_removed=sum(e["records"] for e in removed if e["content"] == 0),
                files_added=len(added),
                files_removed=len(removed),
                rows_deleted=sum(e["records"] for e in added if e["content"] != 0),
            )
        )
    return commits


def _partition(entry: Any) -> tuple[Any, ...]:
    value = entry["partition_value"]
    return () if "unpartitioned" in value.asDict() else tuple(value)


def _delta_commits_after(spark: Any, table: str, version: int | None) -> list[Commit]:
    history = spark.sql(f"describe history {table}").orderBy("version").collect()
    detail = spark.sql(f"describe detail {table}").first()
    schema = spark.table(table).schema
    location = detail["location"]
    partition_columns = [(column, schema[column].dataType.typeName()) for column in detail["partitionColumns"]]
    commits = []
    for row in history:
        if version is not None and row["version"] <= version:
            continue
        log_file = f"{location}/_delta_log/{row['version']:020d}.json"
        actions = [json.loads(line) for line in spark.sparkContext.textFile(log_file).collect()]
        added = [a["add"] for a in actions if "add" in a]
        removed = [a["remove"] for a in actions if "remove" in a]
        # A file removed and added again with a deletion vector had rows deleted, not rewritten.
        marked = {f["path"] for f in added if f.get("deletionVector")} & {f["path"] for f in removed}

        commits.append(
            Commit(
                version=row["version"],
                operation=row["operation"],
                partitions_added=frozenset(_delta_partition(f, partition_columns) for f in added),
                partitions_removed=frozenset(_delta_partition(f, partition_columns) for f in removed),
                records_added=_delta_records(added, marked),
                records_removed=_delta_records(removed, marked),
                files_added=len(added),
                files_removed=len(removed),
                rows_deleted=_delta_deleted(added, marked) - _delta_deleted(removed, marked),
            )
        )
    return commits


def _delta_records(files: list[dict[str, Any]], marked: set[str]) -> int:
    """Rows in the added or removed files, except files only marked with a deletion vector."""
    return sum(json.loads(f.get("stats") or "{}").get("numRecords", 0) for f in files if f["path"] not in marked)


def _delta_deleted(files: list[dict[str, Any]], marked: set[str]) -> int:
    """Rows deleted through deletion vectors of the marked files."""
    return sum((f.get("deletionVector") or {}).get("cardinality", 0) for f in files if f["path"] in marked)


def _delta_partition(action: dict[str, Any], partition_columns: list[tuple[str, str]]) -> tuple[Any, ...]:
    """A file's partition values, typed like Iceberg's (Delta's log keeps them as strings)."""
    from datetime import datetime

    values: list[Any] = []
    for column, type_name in partition_columns:
        raw = action["partitionValues"].get(column)
        if raw is None:
            values.append(None)
        elif type_name == "timestamp":
            values.append(datetime.fromisoformat(raw))
        elif type_name in ("integer", "long", "short"):
            values.append(int(raw))
        else:
            values.append(raw)
    return tuple(values)
