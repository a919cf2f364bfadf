"""The raw, append-only source tables and their data contract."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable

WATER_LEVEL_COLUMNS = (
    "event_id string, location string, event_time timestamp, value double, ingested_at timestamp"
)


@dataclass(frozen=True)
class Reading:
    event_id: str
    location: str
    event_time: datetime
    value: float
    ingested_at: datetime


def water_level_table(raw_schema: str) -> str:
    return f"{raw_schema}.water_level_readings"


def ensure_water_level_table(spark: Any, raw_schema: str, table_format: str) -> str:
    """Create raw.water_level_readings if missing (Iceberg: hidden daily partitions on event_time)."""
    table = water_level_table(raw_schema)
    partitioning = "partitioned by (days(event_time))" if table_format == "iceberg" else ""
    spark.sql(f"create schema if not exists {raw_schema}")
    spark.sql(
        f"create table if not exists {table} ({WATER_LEVEL_COLUMNS}) using {table_format} {partitioning}"
    )
    return table


def append_readings(spark: Any, table: str, readings: Iterable[Reading]) -> int:
    """Append explicit readings (for tests and hand-made corrections); returns the row count."""
    rows = [
        (r.event_id, r.location, r.event_time, float(r.value), r.ingested_at) for r in readings
    ]
    if rows:
        spark.createDataFrame(rows, schema=WATER_LEVEL_COLUMNS).writeTo(table).append()
    return len(rows)
