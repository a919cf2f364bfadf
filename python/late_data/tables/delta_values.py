"""Delta's partition values and file statistics typed by the table's schema (the metaData action's
`partitionColumns` and `schemaString`) the way PySpark returns the same values from an Iceberg
metadata table: a timestamp becomes a naive datetime (`_as_pyspark_timestamp`), an integer an int,
a null partition value None."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from late_data.tables.delta_log_files import DeltaLogError

INTEGER_TYPES = ("byte", "short", "integer", "long")


@dataclass(frozen=True)
class TableSchema:
    """What the log's strings need to become values: partition columns in order and column types."""

    # (column, key in partitionValues and stats: the physical name under column mapping, type)
    partition_columns: tuple[tuple[str, str, str], ...]
    column_keys: Mapping[str, str]  # column -> key in stats
    column_types: Mapping[str, str]  # column -> Delta type name ("struct", "array", "map" when nested)


def table_schema(metadata: Mapping[str, Any]) -> TableSchema:
    fields = {field["name"]: field for field in json.loads(metadata["schemaString"])["fields"]}
    mapped = (metadata.get("configuration") or {}).get("delta.columnMapping.mode", "none") != "none"

    def key(name: str) -> str:
        field_metadata = fields[name].get("metadata") or {}
        return field_metadata.get("delta.columnMapping.physicalName", name) if mapped else name

    def type_name(name: str) -> str:
        kind = fields[name]["type"]
        return kind if isinstance(kind, str) else str(kind.get("type"))

    missing = [name for name in metadata.get("partitionColumns") or [] if name not in fields]
    if missing:
        raise DeltaLogError(f"partition columns {missing} are not in the table's schema")
    return TableSchema(
        partition_columns=tuple((name, key(name), type_name(name)) for name in metadata.get("partitionColumns") or []),
        column_keys={name: key(name) for name in fields},
        column_types={name: type_name(name) for name in fields},
    )


def typed_value(raw: Any, type_name: str) -> Any:
    """A partition value or statistic from the log, as PySpark would return the column's value."""
    if raw is None:
        return None
    if not isinstance(raw, str):  # statistics are JSON numbers and booleans already
        return Decimal(str(raw)) if type_name.startswith("decimal") else raw
    if type_name == "timestamp":
        return _as_pyspark_timestamp(_utc_instant(raw))
    if type_name == "timestamp_ntz":
        return datetime.fromisoformat(raw.removesuffix("Z")).replace(tzinfo=None)
    if type_name == "date":
        return date.fromisoformat(raw)
    if type_name in INTEGER_TYPES:
        return int(raw)
    if type_name in ("float", "double"):
        return float(raw)
    if type_name.startswith("decimal"):
        return Decimal(raw)
    if type_name == "boolean":
        return raw.lower() == "true"
    return raw  # string (and binary, left as the log's text)


def _utc_instant(text: str) -> datetime:
    """The instant a timestamp in the log stands for. Partition values come as
    `2026-03-02T08:00:00.000000Z` (UTC, what Delta 3.3 writes) or, from older writers,
    `2026-03-02 08:00:00[.ffffff]` in the writer's session time zone, UTC in this project
    (profiles.yml pins spark.sql.session.timeZone); statistics as `...T08:00:00.000Z` or with an
    offset."""
    parsed = datetime.fromisoformat(text)
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed


def _as_pyspark_timestamp(instant: datetime) -> datetime:
    """What PySpark's TimestampType.fromInternal makes of this instant (a naive datetime in the
    Python process's local time zone), which is what the Iceberg path returns for the same
    partition, so Commit values compare equal across formats. UTC on these machines."""
    micros = (instant - datetime(1970, 1, 1, tzinfo=UTC)) // _MICROSECOND
    return datetime.fromtimestamp(micros // 1_000_000).replace(microsecond=micros % 1_000_000)


_MICROSECOND = datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC) - datetime(1970, 1, 1, tzinfo=UTC)
