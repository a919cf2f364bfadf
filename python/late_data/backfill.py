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

from late_data.dbt_project import DbtProject, format_timestamp

log = logging.getLogger(__name__)

EPOCH = datetime(1970, 1, 1)


@dataclass(frozen=True)
class PartitionTotals:
    windows: int
    rows: int
    value_sum: Decimal | None
    digest: Decimal | None


@dataclass(frozen=True)
class PartitionChange:
    partition_start: datetime
    windows_before: int
    windows_after: int
    rows_before: int
    rows_after: int
    sum_before: Decimal | None
    sum_after: Decimal | None


def floor_to(moment: datetime, size_seconds: int) -> datetime:
    return EPOCH + timedelta(seconds=int((moment - EPOCH).total_seconds()) // size_seconds * size_seconds)


def chunk_bounds(start: datetime, end: datetime, chunk: timedelta, partition_seconds: int) -> list[tuple[datetime, datetime]]:
    """[start, end) cut into chunks that begin on partition boundaries, so no partition is done twice."""
    step = max(partition_seconds, int(chunk.total_seconds()) // partition_seconds * partition_seconds)
    bounds, lower = [], floor_to(start, partition_seconds)
    while lower < end:
        upper = min(lower + timedelta(seconds=step), end)
        bounds.append((max(lower, start), upper))
        lower = lower + timedelta(seconds=step)
    return bounds


def partition_totals(spark: Any, table: str, lower: datetime, upper: datetime) -> dict[datetime, PartitionTotals]:
    rows = spark.sql(
        f"""
        select partition_start, count(*) as windows, sum(reading_count) as reading_rows,
            sum(value_sum) as value_sum, sum(readings_digest) as digest
        from {table}
        where partition_start >= timestamp'{format_timestamp(lower)}'
            and partition_start < timestamp'{format_timestamp(upper)}'
        group by partition_start
        """
    ).collect()
    return {
        row["partition_start"]: PartitionTotals(row["windows"], row["reading_rows"], row["value_sum"], row["digest"])
        for row in rows
    }


def diff_totals(before: dict[datetime, PartitionTotals], after: dict[datetime, PartitionTotals]) -> list[PartitionChange]:
    empty = PartitionTotals(0, 0, None, None)
    changes = []
    for partition in sorted(set(before) | set(after)):
        old, new = before.get(partition, empty), after.get(partition, empty)
        if old != new:
            changes.append(
                PartitionChange(partition, old.windows, new.windows, old.rows, new.rows, old.value_sum, new.value_sum)
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
    """Recompute the result partitions overlapping [start, end) chunk by chunk, record the revisions
    (reason `backfill`) and write the change manifest; returns the changes and the manifest path."""
    partition_seconds = int(project.setting("partition_size_seconds"))
    table = f"{project.target_schema()}.water_level_window_means"
    changes: list[PartitionChange] = []
    for lower, upper in tqdm(chunk_bounds(start, end, chunk, partition_seconds), desc="backfill", unit="chunk"):
        partitions_from = floor_to(lower, partition_seconds)
        partitions_to = floor_to(upper - timedelta(microseconds=1), partition_seconds) + timedelta(seconds=partition_seconds)
        before = partition_totals(project.spark, table, partitions_from, partitions_to)
        project.invoke(
            ["build", "--select", "water_level_window_means+", "--resource-type", "model", "--resource-type", "snapshot"],
            {
                "run_time": format_timestamp(run_time),
                "backfill": {
                    "from": format_timestamp(lower),
                    "to": format_timestamp(upper),
                    "include_too_late": include_too_late,
                },
            },
        )
        changes += diff_totals(before, partition_totals(project.spark, table, partitions_from, partitions_to))
    manifest_dir.mkdir(parents=True, exist_ok=True)
    manifest = manifest_dir / f"backfill_{start:%Y%m%dT%H%M%S}_{end:%Y%m%dT%H%M%S}_at_{run_time:%Y%m%dT%H%M%S}.csv"
    with manifest.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(PartitionChange.__dataclass_fields__))
        writer.writeheader()
        writer.writerows(asdict(change) for change in changes)
    log.info("backfill: %d partitions changed; manifest %s", len(changes), manifest)
    return changes, manifest
