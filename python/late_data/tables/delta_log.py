"""Delta's transaction log, read directly: what each commit did and which files a table holds.

Reads the `_delta_log` directory of a table (protocol:
https://github.com/delta-io/delta/blob/master/PROTOCOL.md) without Spark and without Delta's jars,
so what the tests prove from it is itself tested on every machine (python/tests/test_delta_log.py).
Partition values and file statistics are typed by the table's schema (delta_values); the log's
files are listed and read locally or through Hadoop (delta_log_files).

Commits are read from the JSON commit files only. Delta deletes commit files older than the
table's `delta.logRetentionDuration` (30 days by default) once a checkpoint covers them; a
checkpoint keeps the table's state but not what each commit changed, so asking for commits after
a version whose successors were deleted raises DeltaLogError rather than answering from a partial
log. Checkpoints (Parquet) are read only to recover the schema or the file list from before the
oldest commit file still there, through a reader the caller passes (Spark's, in
`late_data.tables.history`); without one that case raises DeltaLogError too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from late_data.tables.commit import Commit
from late_data.tables.delta_log_files import (
    CHECKPOINT_FILE,
    COMMIT_FILE,
    V2_CHECKPOINT_FILE,
    CheckpointReader,
    DeltaLogError,
    LogFiles,
)
from late_data.tables.delta_values import TableSchema, table_schema, typed_value


@dataclass(frozen=True)
class DataFile:
    """A data file the table holds, with its statistics typed (columns absent from the statistics
    are absent here)."""

    path: str
    partition: tuple[Any, ...]
    num_records: int | None
    min_values: Mapping[str, Any]
    max_values: Mapping[str, Any]
    deleted_rows: int  # rows a deletion vector marks deleted


# Parsed commit files by (log file, identity): commit files never change once written, and the
# identity tells a re-created table's file from the old one of the same name.
_ACTIONS: dict[tuple[str, tuple[Any, ...]], list[dict[str, Any]]] = {}
_ACTIONS_KEPT = 20_000


def commit_versions(names: Iterable[str]) -> list[int]:
    return sorted(int(match.group(1)) for name in names if (match := COMMIT_FILE.match(name)))


def latest_version(log: LogFiles) -> int | None:
    """The table's current version: its newest commit file (a checkpoint never outruns it)."""
    versions = commit_versions(log.names())
    return versions[-1] if versions else None


def commits_after(
    log: LogFiles, version: int | None, checkpoint_reader: CheckpointReader | None = None
) -> list[Commit]:
    """What each commit after `version` did (every commit still in the log when None), oldest first.

    A version newer than the log's newest means the table was dropped and re-created since (as the
    Iceberg reader treats a snapshot id it no longer finds): then every commit is new. A table
    re-created that has grown past `version` again cannot be told apart by version number alone."""
    names = log.names()
    versions = commit_versions(names)
    if not versions:
        return []
    if version is not None and version > versions[-1]:
        version = None
    first = versions[0] if version is None else version + 1
    if first > versions[-1]:
        return []
    present = set(versions)
    missing = [v for v in range(first, versions[-1] + 1) if v not in present]
    if missing:
        raise DeltaLogError(
            f"{log.location}: commit file {missing[0]:020d}.json is gone (Delta deletes commits older than"
            " delta.logRetentionDuration, 30 days by default, once a checkpoint covers them); what the"
            f" commits after version {version} changed can no longer be read"
        )
    schema = None if _has_metadata(log, first) else _schema_before(log, first, names, versions, checkpoint_reader)
    added_before: dict[str, dict[str, Any]] | None = None
    commits = []
    for number in range(first, versions[-1] + 1):
        actions = _actions(log, number)
        metadata = next((action["metaData"] for action in actions if "metaData" in action), None)
        if metadata is not None:
            schema = table_schema(metadata)
        if schema is None:
            raise DeltaLogError(f"{log.location}: no metaData action at or before version {number}")
        removed = [action["remove"] for action in actions if "remove" in action]
        if any(_needs_add(remove) for remove in removed) and added_before is None:
            # Remove actions carry statistics and partition values optionally; the add action that
            # brought the file has both. Replayed once, only when a remove lacks them.
            added_before = _files_added_before(log, number, names, versions, checkpoint_reader)
        if added_before is not None:
            removed = [_completed(remove, added_before) for remove in removed]
        commits.append(_commit(number, actions, removed, schema, log.location))
        if added_before is not None:
            for action in actions:
                if "add" in action:
                    added_before[action["add"]["path"]] = action["add"]
    return commits


def active_files(log: LogFiles, checkpoint_reader: CheckpointReader | None = None) -> list[DataFile]:
    """The data files of the table's current version, with typed statistics."""
    names = log.names()
    versions = commit_versions(names)
    if not versions:
        return []
    files, schema = _replay(log, versions[-1] + 1, names, versions, checkpoint_reader)
    if schema is None:
        raise DeltaLogError(f"{log.location}: no metaData action in the log")
    return [_data_file(add, schema, log.location) for add in files.values()]


def _actions(log: LogFiles, version: int) -> list[dict[str, Any]]:
    name = f"{version:020d}.json"
    key = (log.path_of(name), log.identity(name))
    if key not in _ACTIONS:
        if len(_ACTIONS) >= _ACTIONS_KEPT:
            _ACTIONS.clear()
        _ACTIONS[key] = [json.loads(line) for line in log.read_text(name).splitlines() if line.strip()]
    return _ACTIONS[key]


def _has_metadata(log: LogFiles, version: int) -> bool:
    return any("metaData" in action for action in _actions(log, version))


def _schema_before(
    log: LogFiles, version: int, names: list[str], versions: list[int], reader: CheckpointReader | None
) -> TableSchema:
    """The schema in effect just before `version`: the newest metaData in the commits before it,
    else in the checkpoint those commits follow."""
    for number in reversed([v for v in versions if v < version]):
        metadata = next((a["metaData"] for a in _actions(log, number) if "metaData" in a), None)
        if metadata is not None:
            return table_schema(metadata)
    checkpoint_actions = _checkpoint_actions(log, version, names, versions, reader)
    metadata = next((a["metaData"] for a in checkpoint_actions if a.get("metaData")), None)
    if metadata is None:
        raise DeltaLogError(f"{log.location}: no metaData action before version {version}")
    return table_schema(metadata)


def _checkpoint_actions(
    log: LogFiles, version: int, names: list[str], versions: list[int], reader: CheckpointReader | None
) -> list[dict[str, Any]]:
    """The actions of the newest checkpoint before `version` that the remaining commit files
    continue (at or after the version before the oldest commit file)."""
    if versions[0] == 0:
        return []  # every commit file is there: nothing is only in a checkpoint
    if any(V2_CHECKPOINT_FILE.match(name) for name in names):
        raise DeltaLogError(f"{log.location}: V2 checkpoints (with sidecar files) are not read here")
    parts: dict[int, list[str]] = {}
    for name in names:
        match = CHECKPOINT_FILE.match(name)
        if match and versions[0] - 1 <= int(match.group(1)) < version:
            parts.setdefault(int(match.group(1)), []).append(name)
    complete = [c for c, files in parts.items() if _checkpoint_complete(files)]
    if not complete:
        raise DeltaLogError(
            f"{log.location}: the commits before version {versions[0]} were deleted and no checkpoint covers them"
        )
    if reader is None:
        raise DeltaLogError(
            f"{log.location}: the table's state before version {versions[0]} is only in a Parquet"
            " checkpoint, which needs a checkpoint reader (late_data.tables.history passes Spark's)"
        )
    return reader([log.path_of(name) for name in sorted(parts[max(complete)])])


def _checkpoint_complete(files: list[str]) -> bool:
    matches = [CHECKPOINT_FILE.match(name) for name in files]
    if any(match and match.group(3) is None for match in matches):
        return True
    expected = {int(match.group(3)) for match in matches if match}
    return len(expected) == 1 and len(files) == expected.pop()


def _replay(
    log: LogFiles, version: int, names: list[str], versions: list[int], reader: CheckpointReader | None
) -> tuple[dict[str, dict[str, Any]], TableSchema | None]:
    """The add actions of the files the table held just before `version`, and its schema then."""
    files: dict[str, dict[str, Any]] = {}
    schema = None
    start = versions[0]
    if start > 0:
        checkpoint = _checkpoint_actions(log, version, names, versions, reader)
        for action in checkpoint:
            if action.get("metaData"):
                schema = table_schema(action["metaData"])
            if action.get("add"):
                files[action["add"]["path"]] = action["add"]
    replayed = [v for v in versions if v < version]
    gap = next((v for v in range(start, version) if v not in set(replayed)), None)
    if gap is not None:
        raise DeltaLogError(
            f"{log.location}: commit file {gap:020d}.json is gone; the table's files before version {version} cannot be replayed"
        )
    for number in replayed:
        actions = _actions(log, number)
        # Removes first: a deletion vector update removes and re-adds the same path in one commit.
        for action in actions:
            if "remove" in action:
                files.pop(action["remove"]["path"], None)
        for action in actions:
            if "add" in action:
                files[action["add"]["path"]] = action["add"]
            elif "metaData" in action:
                schema = table_schema(action["metaData"])
    return files, schema


def _files_added_before(
    log: LogFiles, version: int, names: list[str], versions: list[int], reader: CheckpointReader | None
) -> dict[str, dict[str, Any]]:
    files, _ = _replay(log, version, names, versions, reader)
    return files


def _needs_add(remove: Mapping[str, Any]) -> bool:
    return remove.get("partitionValues") is None or _num_records(remove) is None


def _completed(remove: dict[str, Any], added: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    source = added.get(remove["path"])
    if source is None or not _needs_add(remove):
        return remove
    return {
        **remove,
        "partitionValues": remove.get("partitionValues") or source.get("partitionValues") or {},
        "stats": remove.get("stats") if _num_records(remove) is not None else source.get("stats"),
    }


def _stats(action: Mapping[str, Any]) -> dict[str, Any]:
    stats = action.get("stats")
    return json.loads(stats) if isinstance(stats, str) and stats else {}


def _num_records(action: Mapping[str, Any]) -> int | None:
    value = _stats(action).get("numRecords")
    return None if value is None else int(value)


def _partition(action: Mapping[str, Any], schema: TableSchema, location: str) -> tuple[Any, ...]:
    values = action.get("partitionValues")
    if values is None:
        raise DeltaLogError(f"{location}: {action['path']} has no partition values in the log")
    return tuple(typed_value(values.get(key), kind) for _, key, kind in schema.partition_columns)


def _records(files: list[dict[str, Any]], skipped: set[str], version: int, location: str) -> int:
    total = 0
    for file in files:
        if file["path"] in skipped:
            continue
        records = _num_records(file)
        if records is None:
            raise DeltaLogError(
                f"{location}: {file['path']} (version {version}) has no numRecords statistic: Delta writes"
                " one unless spark.databricks.delta.stats.collect is off"
            )
        total += records
    return total


def _deleted(files: list[dict[str, Any]], marked: set[str]) -> int:
    """Rows deleted through deletion vectors of the marked files."""
    return sum((f.get("deletionVector") or {}).get("cardinality", 0) for f in files if f["path"] in marked)


def _commit(
    version: int, actions: list[dict[str, Any]], removed: list[dict[str, Any]], schema: TableSchema, location: str
) -> Commit:
    added = [action["add"] for action in actions if "add" in action]
    commit_info: dict[str, Any] = next((action["commitInfo"] for action in actions if "commitInfo" in action), {})
    # A file removed and added again with a deletion vector had rows deleted, not rewritten: its
    # rows are not counted as written or removed (Iceberg's position delete files likewise count
    # only the rows they delete).
    marked = {f["path"] for f in added if f.get("deletionVector")} & {f["path"] for f in removed}
    return Commit(
        version=version,
        operation=str(commit_info.get("operation", "UNKNOWN")),
        partitions_added=frozenset(_partition(f, schema, location) for f in added),
        partitions_removed=frozenset(_partition(f, schema, location) for f in removed),
        records_added=_records(added, marked, version, location),
        records_removed=_records(removed, marked, version, location),
        files_added=len(added),
        files_removed=len(removed),
        rows_deleted=_deleted(added, marked) - _deleted(removed, marked),
    )


def _data_file(add: Mapping[str, Any], schema: TableSchema, location: str) -> DataFile:
    stats = _stats(add)
    by_key = {key: column for column, key in schema.column_keys.items()}

    def typed(values: Mapping[str, Any] | None) -> dict[str, Any]:
        return {
            by_key[key]: typed_value(value, schema.column_types[by_key[key]])
            for key, value in (values or {}).items()
            if key in by_key and not isinstance(value, dict)  # nested columns' statistics are left out
        }

    return DataFile(
        path=_absolute(add["path"], location),
        partition=_partition(add, schema, location),
        num_records=None if stats.get("numRecords") is None else int(stats["numRecords"]),
        min_values=typed(stats.get("minValues")),
        max_values=typed(stats.get("maxValues")),
        deleted_rows=(add.get("deletionVector") or {}).get("cardinality", 0),
    )


def _absolute(path: str, location: str) -> str:
    """A data file's path: the log holds it relative to the table's root and URI-encoded (a
    partition directory `partition_start=2026-03-02 08%3A00%3A00` appears as `...%2008%253A00...`),
    or as an absolute URI."""
    if "://" in path or path.startswith("file:"):
        return path
    return f"{location.rstrip('/')}/{unquote(path)}"
