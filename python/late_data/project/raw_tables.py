"""The raw, append-only source tables and their data contracts."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from late_data.runtime.settings import SetupError

WATER_LEVEL_COLUMNS = "event_id string, location string, event_time timestamp, value double, ingested_at timestamp"
PAGE_COUNT_COLUMNS = "event_id string, page string, event_time timestamp, value bigint, ingested_at timestamp"

# Source table -> its columns; every table is append-only, a later row with the same event_id
# replaces the earlier one.
RAW_TABLES = {
    "water_level_readings": WATER_LEVEL_COLUMNS,
    "page_errors": PAGE_COUNT_COLUMNS,
    "page_views": PAGE_COUNT_COLUMNS,
}


@dataclass(frozen=True)
class Reading:
    event_id: str
    location: str
    event_time: datetime
    value: float
    ingested_at: datetime


@dataclass(frozen=True)
class PageCount:
    event_id: str
    page: str
    event_time: datetime
    value: int
    ingested_at: datetime


def raw_table_names(raw_schema: str) -> dict[str, str]:
    """Source table name -> qualified table name."""
    return {name: f"{raw_schema}.{name}" for name in RAW_TABLES}


def create_raw_tables(execute: Callable[[str], object], raw_schema: str, table_format: str) -> dict[str, str]:
    """Create the raw tables if missing (Iceberg: hidden daily partitions on event_time, and a
    manifest merged every 8 appends, not 100: every run reads each manifest of what it loads from)
    with `execute` (Spark's sql, or a statement through the Thrift Server); returns raw_table_names."""
    partitioning = (
        "partitioned by (days(event_time)) tblproperties ('commit.manifest.min-count-to-merge' = '8')"
        if table_format == "iceberg"
        else ""
    )
    execute(f"create schema if not exists {raw_schema}")
    tables = raw_table_names(raw_schema)
    for name, columns in RAW_TABLES.items():
        execute(f"create table if not exists {tables[name]} ({columns}) using {table_format} {partitioning}")
    return tables


def ensure_raw_tables(spark: Any, raw_schema: str, table_format: str) -> dict[str, str]:
    """create_raw_tables on a Spark session (the demo, the benchmark and the tests make their own data)."""
    return create_raw_tables(spark.sql, raw_schema, table_format)


def require_raw_tables(query: Callable[[str], list[dict[str, Any]]], raw_schema: str) -> dict[str, str]:
    """raw_table_names, when every one of the demo's raw tables exists; else a SetupError naming
    the missing ones (require_sources)."""
    tables = raw_table_names(raw_schema)
    require_sources(query, list(tables.values()))
    return tables


def require_sources(query: Callable[[str], list[dict[str, Any]]], relations: list[str]) -> None:
    """Refused with a SetupError naming them when any of these source tables (schema.table) is
    missing: a run on a missing source would read nothing and report success."""
    present = {schema: existing_tables(query, schema) for schema in sorted({r.split(".")[0] for r in relations})}
    missing = [
        relation
        for relation in dict.fromkeys(relations)
        if relation.split(".")[-1].lower() not in present[relation.split(".")[0]]
    ]
    if missing:
        raise SetupError(
            f"raw table{'s' if len(missing) > 1 else ''} {', '.join(missing)} missing: restore"
            f" {'them' if len(missing) > 1 else 'it'}, or run `late-data setup` to create the demo's empty raw tables"
            " (a run on a missing source would read nothing and report success)"
        )


def existing_tables(query: Callable[[str], list[dict[str, Any]]], schema: str) -> set[str]:
    """The names of the tables and views in `schema`, lower case; none when there is no such schema."""
    if not query(f"show schemas like '{schema}'"):
        return set()
    return {str(row["tableName"]).lower() for row in query(f"show tables in {schema}")}


def append_readings(spark: Any, table: str, readings: Iterable[Reading]) -> int:
    """Append explicit readings (for tests and hand-made corrections); returns the row count."""
    rows = [(r.event_id, r.location, r.event_time, float(r.value), r.ingested_at) for r in readings]
    if rows:
        spark.createDataFrame(rows, schema=WATER_LEVEL_COLUMNS).writeTo(table).append()
    return len(rows)


def append_page_counts(spark: Any, table: str, counts: Iterable[PageCount]) -> int:
    """Append explicit page counts to raw.page_errors or raw.page_views; returns the row count."""
    rows = [(c.event_id, c.page, c.event_time, int(c.value), c.ingested_at) for c in counts]
    if rows:
        spark.createDataFrame(rows, schema=PAGE_COUNT_COLUMNS).writeTo(table).append()
    return len(rows)
