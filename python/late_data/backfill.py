"""Targeted backfills: an event-time range, in chunks, with a change manifest to review."""

from __future__ import annotations

import csv
import logging
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from tqdm import tqdm

from late_data.dbt_project import DbtProject
from late_data.timeutil import floor_to, format_timestamp

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ResultTable:
    """A late-data result table and how its partitions are totalled in a change manifest."""

    name: str
    rows: str  # SQL aggregate: raw rows counted in the partition
    total: str  # SQL aggregate: the partition's summed measure
    digest: str  # the digest column


RESULT_TABLES = (
    ResultTable("water_level_window_means", "sum(reading_count)", "sum(value_sum)", "readings_digest"),
    ResultTable("page_error_rates", "sum(counted_rows)", "sum(error_count + view_count)", "counts_digest"),
)

# The result tables and their history snapshots, from the versions loaded so far (a backfill loads
# none: the next scheduled run loads and applies what arrived; the histories list no too-late rows).
BACKFILL_RUN = [
    "build",
    "--select",
    "+tag:late_data",
    "--resource-type",
    "model",
    "--resource-type",
    "snapshot",
]


@dataclass(frozen=True)
class PartitionTotals:
    windows: int
    rows: int
    value_sum: Decimal | None
    digest: Decimal | None


@dataclass(frozen=True)
class PartitionChange:
    table: str
    partition_start: datetime
    windows_before: int
    windows_after: int
    rows_before: int
    rows_after: int
    sum_before: Decimal | None
    sum_after: Decimal | None


def chunk_bounds(
    start: datetime, end: datetime, chunk: timedelta, partition_seconds: int
) -> list[tuple[datetime, datetime]]:
    """[start, end) cut into chunks that begin on partition boundaries, so no partition is done twice."""
    step = max(partition_seconds, int(chunk.total_seconds()) // partition_seconds * partition_seconds)
    bounds, lower = [], floor_to(start, partition_seconds)
    while lower < end:
        upper = min(lower + timedelta(seconds=step), end)
        bounds.append((max(lower, start), upper))
        lower = lower + timedelta(seconds=step)
    return bounds


def partition_totals(
    spark: Any, schema: str, table: ResultTable, lower: datetime, upper: datetime
) -> dict[datetime, PartitionTotals]:
    if not spark.catalog.tableExists(f"{schema}.{table.name}"):
        return {}
    rows = spark.sql(
        f"""
        select partition_start, count(*) as windows, {table.rows} as counted_rows,
            {table.total} as total, sum({table.digest}) as digest
        from {schema}.{table.name}
        where partition_start >= timestamp'{format_timestamp(lower)}'
            and partition_start < timestamp'{format_timestamp(upper)}'
        group by partition_start
        """
    ).collect()
    return {
        row["partition_start"]: PartitionTotals(row["windows"], row["counted_rows"], row["total"], row["digest"])
        for row in rows
    }


def diff_totals(
    table: str, before: dict[datetime, PartitionTotals], after: dict[datetime, PartitionTotals]
) -> list[PartitionChange]:
    empty = PartitionTotals(0, 0, None, None)
    changes = []
    for partition in sorted(set(before) | set(after)):
        old, new = before.get(partition, empty), after.get(partition, empty)
        if old != new:
            changes.append(
                PartitionChange(
                    table, partition, old.windows, new.windows, old.rows, new.rows, old.value_sum, new.value_sum
                )
            )
    return changes


def run_backfill(
    project: DbtProject,
    start: datetime,
    end: datetime,
    chunk: timedelta,
    include_too_late: bool,
    run_time: datetime,
    manifest_dir: Path,
) -> tuple[list[PartitionChange], Path]:
    """Recompute the partitions of every result table overlapping [start, end) chunk by chunk, record
    the revisions (reason `backfill`) and write the change manifest; returns the changes and the
    manifest path."""
    partition_seconds = int(project.setting("partition_size_seconds"))
    schema = project.target_schema()
    changes: list[PartitionChange] = []
    for lower, upper in tqdm(chunk_bounds(start, end, chunk, partition_seconds), desc="backfill", unit="chunk"):
        partitions_from = floor_to(lower, partition_seconds)
        partitions_to = floor_to(upper - timedelta(microseconds=1), partition_seconds) + timedelta(
            seconds=partition_seconds
        )
        before = {
            table: partition_totals(project.spark, schema, table, partitions_from, partitions_to)
            for table in RESULT_TABLES
        }
        project.invoke(
            BACKFILL_RUN,
            {
                "run_time": format_timestamp(run_time),
                "backfill": {
                    "from": format_timestamp(lower),
                    "to": format_timestamp(upper),
                    "include_too_late": include_too_late,
                },
            },
        )
        for table, totals in before.items():
            after = partition_totals(project.spark, schema, table, partitions_from, partitions_to)
            changes += diff_totals(table.name, totals, after)
    manifest_dir.mkdir(parents=True, exist_ok=True)
    manifest = manifest_dir / f"backfill_{start:%Y%m%dT%H%M%S}_{end:%Y%m%dT%H%M%S}_at_{run_time:%Y%m%dT%H%M%S}.csv"
    with manifest.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(PartitionChange.__dataclass_fields__))
        writer.writeheader()
        writer.writerows(asdict(change) for change in changes)
    log.info("backfill: %d partitions changed; manifest %s", len(changes), manifest)
    return changes, manifest
