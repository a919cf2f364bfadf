"""The raw, append-only source tables and their data contracts."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

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


def ensure_raw_tables(spark: Any, raw_schema: str, table_format: str) -> dict[str, str]:
    """Create the raw tables if missing (Iceberg: hidden daily partitions on event_time); returns
    source table name -> qualified table name."""
    partitioning = "partitioned by (days(event_time))" if table_format == "iceberg" else ""
    spark.sql(f"create schema if not exists {raw_schema}")
    tables = {}
    for name, columns in RAW_TABLES.items():
        tables[name] = f"{raw_schema}.{name}"
        spark.sql(f"create table if not exists {tables[name]} ({columns}) using {table_format} {partitioning}")
    return tables


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
