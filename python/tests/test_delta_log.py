"""Delta's commit log read faithfully, on a hand-written `_delta_log`: runs on every machine, with
no Spark and no Delta jars (the last two tests use the suite's Spark, not Delta)."""

from __future__ import annotations

import json
import shutil
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.types import TimestampType

from late_data.tables.delta_log import active_files, commits_after, latest_version
from late_data.tables.delta_log_files import DeltaLogError, HadoopLogFiles, LocalLogFiles
from late_data.tables.delta_values import typed_value
from late_data.tables.history import _spark_checkpoint_reader

SCHEMA = {
    "type": "struct",
    "fields": [
        {"name": name, "type": kind, "nullable": True, "metadata": {}}
        for name, kind in (
            ("window_start", "timestamp"),
            ("location", "string"),
            ("reading_count", "long"),
            ("mean_value", "decimal(18,6)"),
            ("partition_start", "timestamp"),
            ("series_bucket", "integer"),
        )
    ],
}
METADATA = {
    "id": "8b2f0c4e-0000-4000-8000-000000000001",
    "format": {"provider": "parquet", "options": {}},
    "schemaString": json.dumps(SCHEMA),
    "partitionColumns": ["partition_start", "series_bucket"],
    "configuration": {"delta.enableDeletionVectors": "true"},
    "createdTime": 1772438400000,
}
P0800, P0805 = "2026-03-02T08:00:00.000000Z", "2026-03-02T08:05:00.000000Z"


def data_file(name: str, partition_start: str | None, bucket: str | None, records: int, **extra: Any) -> dict:
    """An add action as Delta 3.3 writes it: the path relative to the table's root and URI-encoded
    (Delta's partition directory names escape ':' as %3A, which the log encodes again as %253A)."""
    directory = f"partition_start={(partition_start or '__HIVE_DEFAULT_PARTITION__').replace(':', '%253A')}"
    return {
        "path": f"{directory}/series_bucket={bucket}/{name}.parquet",
        "partitionValues": {"partition_start": partition_start, "series_bucket": bucket},
        "size": 1000,
        "modificationTime": 1772438400000,
        "dataChange": True,
        "stats": json.dumps(
            {
                "numRecords": records,
                "minValues": {"window_start": "2026-03-02T08:00:00.000Z", "reading_count": 1, "location": "pier"},
                "maxValues": {"window_start": "2026-03-02T08:04:00.000Z", "reading_count": 9, "location": "quay"},
                "nullCount": {"window_start": 0},
            }
        ),
        **extra,
    }


def removal(add: dict, extended: bool = True) -> dict:
    """A remove action; without extended file metadata it has neither partition values nor stats."""
    remove = {"path": add["path"], "deletionTimestamp": 1772438700000, "dataChange": True}
    if extended:
        remove |= {"extendedFileMetadata": True, "partitionValues": add["partitionValues"], "stats": add["stats"]}
    if "deletionVector" in add:
        remove["deletionVector"] = add["deletionVector"]
    return remove


A = data_file("a", P0800, "1", 4)
B = data_file("b", P0800, "2", 6)
C = data_file("c", P0800, "1", 5)
D = data_file("d", None, None, 2)
DV = {"storageType": "u", "pathOrInlineDv": "ab^-aqEH.-t@S}K{vb[*k^", "offset": 1, "sizeInBytes": 36, "cardinality": 3}
B_MARKED = {**B, "deletionVector": DV, "dataChange": True}
# An older writer's partition value: no 'T', no zone (the session time zone, UTC here).
E = data_file("e", "2026-03-02 08:05:00", "0", 7)


def commit_info(operation: str) -> dict:
    return {"commitInfo": {"timestamp": 1772438400000, "operation": operation, "isBlindAppend": False}}


COMMITS = [
    [
        commit_info("CREATE OR REPLACE TABLE AS SELECT"),
        {"protocol": {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["deletionVectors"]}},
        {"metaData": METADATA},
        {"add": A},
        {"add": B},
    ],
    # An insert overwrite of bucket 1 of 08:00 and a new file whose partition values are null.
    [commit_info("WRITE"), {"remove": removal(A)}, {"add": C}, {"add": D}],
    # A delete through a deletion vector (3 rows of b), and c removed by a writer without extended metadata.
    [commit_info("DELETE"), {"remove": removal(B)}, {"add": B_MARKED}, {"remove": removal(C, extended=False)}],
    [commit_info("WRITE"), {"add": E}],
]


def write_log(table: Path, commits: list[list[dict]] = COMMITS) -> Path:
    log = table / "_delta_log"
    log.mkdir(parents=True)
    for version, actions in enumerate(commits):
        (log / f"{version:020d}.json").write_text("\n".join(json.dumps(action) for action in actions) + "\n")
    return log


@pytest.fixture
def table(tmp_path: Path) -> Path:
    write_log(tmp_path / "means")
    return tmp_path / "means"


def pyspark_timestamp(text: str) -> datetime:
    """What PySpark returns for this UTC instant from an Iceberg metadata table."""
    instant = datetime.fromisoformat(text)
    return TimestampType().fromInternal(int(instant.timestamp()) * 1_000_000 + instant.microsecond)


def test_every_commit_is_read_with_typed_partitions_records_and_operation(table: Path) -> None:
    commits = commits_after(LocalLogFiles(f"file:{table}"), None)
    at_0800, at_0805 = pyspark_timestamp("2026-03-02T08:00:00+00:00"), pyspark_timestamp("2026-03-02T08:05:00+00:00")
    assert at_0800 == datetime(2026, 3, 2, 8, 0)  # naive, as the Iceberg path returns it (UTC machines)
    assert [commit.version for commit in commits] == [0, 1, 2, 3]
    assert [commit.operation for commit in commits] == ["CREATE OR REPLACE TABLE AS SELECT", "WRITE", "DELETE", "WRITE"]
    create, overwrite, delete, append = commits
    assert create.partitions_added == {(at_0800, 1), (at_0800, 2)}
    assert (create.records_added, create.files_added, create.partitions_removed) == (10, 2, frozenset())
    assert overwrite.partitions_added == {(at_0800, 1), (None, None)}
    assert overwrite.partitions_removed == {(at_0800, 1)}
    assert (overwrite.records_added, overwrite.records_removed) == (7, 4)
    assert overwrite.time_partitions_touched == {at_0800, None}
    # b re-added with a deletion vector: 3 rows deleted, none rewritten; c's remove had no
    # partition values or stats, taken from the add that brought it.
    assert delete.partitions_removed == {(at_0800, 1), (at_0800, 2)}
    assert delete.partitions_added == {(at_0800, 2)}
    assert (delete.records_added, delete.records_removed, delete.rows_deleted) == (0, 5, 3)
    assert (delete.files_added, delete.files_removed) == (1, 2)
    assert append.partitions_added == {(at_0805, 0)}
    assert all(isinstance(value, datetime) for c in commits for value, _ in c.partitions_touched if value)


def test_commits_after_a_version_and_the_latest_version(table: Path) -> None:
    log = LocalLogFiles(table)
    assert latest_version(log) == 3
    assert [commit.version for commit in commits_after(log, 1)] == [2, 3]
    assert commits_after(log, 3) == []
    # A version the log never reached: the table was dropped and re-created, every commit is new.
    assert [commit.version for commit in commits_after(log, 17)] == [0, 1, 2, 3]


def test_a_deleted_commit_file_is_an_error_not_a_silent_gap(table: Path) -> None:
    (table / "_delta_log" / f"{1:020d}.json").unlink()
    with pytest.raises(DeltaLogError, match=r"00000000000000000001\.json is gone .*logRetentionDuration"):
        commits_after(LocalLogFiles(table), 0)
    # Commit 2 removes c without partition values or stats, and the add that had them is gone.
    with pytest.raises(DeltaLogError, match=r"00000000000000000001\.json is gone; the table's files before version 2"):
        commits_after(LocalLogFiles(table), 1)
    assert [commit.version for commit in commits_after(LocalLogFiles(table), 2)] == [3]


def test_state_before_the_oldest_commit_file_comes_from_a_checkpoint(table: Path) -> None:
    """Delta deleted commits 0 and 1 after checkpointing version 1: the schema and the files before
    version 2 are in the checkpoint, read by the reader the caller passes."""
    log_dir = table / "_delta_log"
    for version in (0, 1):
        (log_dir / f"{version:020d}.json").unlink()
    log = LocalLogFiles(table)
    with pytest.raises(DeltaLogError, match="no checkpoint covers them"):
        commits_after(log, None)
    (log_dir / f"{1:020d}.checkpoint.parquet").write_bytes(b"PAR1")
    with pytest.raises(DeltaLogError, match="needs a checkpoint reader"):
        commits_after(log, None)
    requested: list[list[str]] = []

    def reader(paths: list[str]) -> list[dict[str, Any]]:
        requested.append(paths)
        return [{"metaData": METADATA}, {"add": B}, {"add": C}, {"add": D}]

    commits = commits_after(log, None, reader)
    assert [commit.version for commit in commits] == [2, 3]
    assert (commits[0].records_removed, commits[0].rows_deleted) == (5, 3)
    assert requested and requested[0][0].endswith(f"{1:020d}.checkpoint.parquet")
    assert {Path(f.path).name for f in active_files(log, reader)} == {"b.parquet", "d.parquet", "e.parquet"}


def test_active_files_replay_the_log_with_typed_statistics(table: Path) -> None:
    files = {Path(f.path).name: f for f in active_files(LocalLogFiles(f"file:{table}"))}
    assert set(files) == {"b.parquet", "d.parquet", "e.parquet"}
    b = files["b.parquet"]
    # The path decoded once: the directory name keeps Delta's own escaping of ':' (as on disk).
    assert b.path == f"file:{table}/partition_start=2026-03-02T08%3A00%3A00.000000Z/series_bucket=2/b.parquet"
    assert b.partition == (datetime(2026, 3, 2, 8, 0), 2)
    assert (b.num_records, b.deleted_rows) == (6, 3)
    assert b.max_values == {"window_start": datetime(2026, 3, 2, 8, 4), "reading_count": 9, "location": "quay"}
    assert b.min_values["window_start"] == datetime(2026, 3, 2, 8, 0)
    assert files["d.parquet"].partition == (None, None)
    assert files["e.parquet"].partition == (datetime(2026, 3, 2, 8, 5), 0)


def test_values_are_typed_by_the_column_type() -> None:
    assert typed_value("2026-03-02T08:00:00.000000Z", "timestamp") == datetime(2026, 3, 2, 8, 0)
    assert typed_value("2026-03-02 08:00:00.250000", "timestamp") == datetime(2026, 3, 2, 8, 0, 0, 250000)
    assert typed_value("2026-03-02T09:00:00.000+01:00", "timestamp") == datetime(2026, 3, 2, 8, 0)
    assert typed_value("2026-03-02 08:00:00", "timestamp_ntz") == datetime(2026, 3, 2, 8, 0)
    assert typed_value("2026-03-02", "date") == date(2026, 3, 2)
    assert typed_value("7", "integer") == 7 and typed_value("-7", "long") == -7
    assert typed_value("1.50", "decimal(18,6)") == Decimal("1.50")
    assert typed_value(1.5, "decimal(18,6)") == Decimal("1.5")
    assert typed_value("true", "boolean") is True
    assert typed_value(None, "timestamp") is None
    assert typed_value("pier", "string") == "pier"


def test_column_mapping_reads_values_under_physical_names(tmp_path: Path) -> None:
    schema = json.loads(METADATA["schemaString"])
    for field in schema["fields"]:
        field["metadata"] = {"delta.columnMapping.physicalName": f"col-{field['name']}"}
    metadata = {
        **METADATA,
        "schemaString": json.dumps(schema),
        "configuration": {"delta.columnMapping.mode": "name"},
    }
    add = {
        "path": "x/f.parquet",
        "partitionValues": {"col-partition_start": P0805, "col-series_bucket": "3"},
        "stats": json.dumps({"numRecords": 2, "maxValues": {"col-reading_count": 4}}),
    }
    write_log(tmp_path / "mapped", [[commit_info("WRITE"), {"metaData": metadata}, {"add": add}]])
    (commit,) = commits_after(LocalLogFiles(tmp_path / "mapped"), None)
    assert commit.partitions_added == {(datetime(2026, 3, 2, 8, 5), 3)}
    (file,) = active_files(LocalLogFiles(tmp_path / "mapped"))
    assert file.max_values == {"reading_count": 4}


def test_a_missing_log_is_reported(tmp_path: Path) -> None:
    with pytest.raises(DeltaLogError, match="is not a Delta table"):
        commits_after(LocalLogFiles(tmp_path / "nothing"), None)


def test_the_log_through_hadoop_and_a_spark_read_checkpoint(project: Any, table: Path, tmp_path: Path) -> None:
    """The paths a non-local warehouse takes, here on a file: URI with the suite's Spark (no Delta
    classes needed): Hadoop's FileSystem lists and reads the log, Spark reads the checkpoint."""
    spark = project.spark
    local = [(c.version, c.partitions_touched, c.records_added) for c in commits_after(LocalLogFiles(table), None)]
    hadoop = commits_after(HadoopLogFiles(spark, f"file://{table}"), None)
    assert [(c.version, c.partitions_touched, c.records_added) for c in hadoop] == local
    # A one-file Parquet checkpoint of version 1 from the actions of versions 0-1, reconciled (a
    # removes a, so neither is kept); Spark's JSON reader types partitionValues as a struct where
    # Delta writes a map: both read back as dicts.
    log_dir = table / "_delta_log"
    staged = tmp_path / "checkpoint"
    actions = spark.read.json([str(log_dir / f"{v:020d}.json") for v in (0, 1)])
    state = actions.where("commitInfo is null and remove is null and (add is null or add.path not like '%/a.parquet')")
    state.coalesce(1).write.parquet(str(staged))
    shutil.move(next(staged.glob("part-*.parquet")), log_dir / f"{1:020d}.checkpoint.parquet")
    for version in (0, 1):
        (log_dir / f"{version:020d}.json").unlink()
    commits = commits_after(LocalLogFiles(table), None, _spark_checkpoint_reader(spark))
    assert [(c.version, c.records_removed, c.rows_deleted) for c in commits] == [(2, 5, 3), (3, 0, 0)]
