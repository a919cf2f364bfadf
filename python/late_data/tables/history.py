"""What each commit did to a table, read from the table format's own metadata."""

from __future__ import annotations

from typing import Any

from late_data.tables import delta_log, delta_log_files
from late_data.tables.commit import Commit

__all__ = ["Commit", "commits_after", "delta_active_files", "latest_version"]


def latest_version(spark: Any, table: str, table_format: str) -> int | None:
    if table_format == "delta":
        return delta_log.latest_version(_delta_log_files(spark, table))
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
    return delta_log.commits_after(_delta_log_files(spark, table), version, _spark_checkpoint_reader(spark))


def delta_active_files(spark: Any, table: str) -> list[delta_log.DataFile]:
    """The data files of a Delta table's current version, with typed per-file statistics (Delta's
    counterpart of Iceberg's `{table}.files` with `readable_metrics`)."""
    return delta_log.active_files(_delta_log_files(spark, table), _spark_checkpoint_reader(spark))


def _delta_log_files(spark: Any, table: str) -> delta_log_files.LogFiles:
    location = str(spark.sql(f"describe detail {table}").first()["location"])
    if delta_log_files.is_local(location):
        return delta_log_files.LocalLogFiles(location)
    return delta_log_files.HadoopLogFiles(spark, location)


def _spark_checkpoint_reader(spark: Any) -> delta_log_files.CheckpointReader:
    """Reads Parquet checkpoints with Spark, needed only once Delta has deleted old commit files."""

    def read(paths: list[str]) -> list[dict[str, Any]]:
        frame = spark.read.parquet(*paths)
        wanted = [column for column in ("metaData", "add", "remove", "protocol") if column in frame.columns]
        return [
            {key: value for key, value in row.asDict(recursive=True).items() if value is not None}
            for row in frame.select(*wanted).collect()
        ]

    return read
