"""Targeted backfills: an event-time range, in chunks, with a change manifest to review."""

from __future__ import annotations

import csv
import logging
import math
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from tqdm import tqdm

from late_data.project.pipelines import Pipeline
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.timeutil import floor_to, format_timestamp

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ResultTable:
    """A late-data result table and how its partitions are totalled in a change manifest."""

    name: str  # schema.table
    rows: str  # SQL aggregate: raw rows counted in the partition
    total: str  # SQL aggregate: the partition's summed measures (null without a sum measure)
    digest: str  # the digest column

    @classmethod
    def of(cls, pipeline: Pipeline) -> ResultTable:
        sums = [measure.name for measure in pipeline.measures if measure.kind == "sum"]
        return cls(
            pipeline.result,
            f"sum({pipeline.count_column})",
            f"sum({' + '.join(sums)})" if sums else "cast(null as decimal(38, 9))",
            pipeline.digest,
        )


# The result tables and their history snapshots (and the views they read), from the versions loaded
# so far (a backfill loads none: the next scheduled run loads and applies what arrived; the
# histories list no too-late rows).
BACKFILL_RUN = ["build", "--resource-type", "model", "--resource-type", "snapshot", "--select"]


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

    def line(self) -> str:
        """How `late-data backfill` reports the partition."""
        return (
            f"{self.table} {self.partition_start}: windows {self.windows_before} -> {self.windows_after},"
            f" rows {self.rows_before} -> {self.rows_after}, sum {self.sum_before} -> {self.sum_after}"
        )


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
    spark: Any, table: ResultTable, lower: datetime, upper: datetime
) -> dict[datetime, PartitionTotals]:
    if not spark.catalog.tableExists(table.name):
        return {}
    rows = spark.sql(
        f"""
        select partition_start, count(*) as windows, {table.rows} as counted_rows,
            {table.total} as total, sum({table.digest}) as digest
        from {table.name}
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
    pipelines: list[Pipeline],
    start: datetime,
    end: datetime,
    chunk: timedelta,
    include_too_late: bool,
    run_time: datetime,
    manifest_dir: Path,
) -> tuple[list[PartitionChange], Path]:
    """Recompute the partitions of the pipelines' result tables overlapping [start, end) chunk by
    chunk, record the revisions (reason `backfill`) and write the change manifest; returns the
    changes and the manifest path. Chunks begin on every pipeline's partition boundaries (the
    least common multiple of their sizes), so no partition is done twice."""
    partition_seconds = math.lcm(*(pipeline.partition_size_seconds for pipeline in pipelines))
    tables = [ResultTable.of(pipeline) for pipeline in pipelines]
    changes: list[PartitionChange] = []
    for lower, upper in tqdm(chunk_bounds(start, end, chunk, partition_seconds), desc="backfill", unit="chunk"):
        partitions_from = floor_to(lower, partition_seconds)
        partitions_to = floor_to(upper - timedelta(microseconds=1), partition_seconds) + timedelta(
            seconds=partition_seconds
        )
        before = {table: partition_totals(project.spark, table, partitions_from, partitions_to) for table in tables}
        project.invoke(
            [*BACKFILL_RUN, " ".join(f"+{name}" for pipeline in pipelines for name in pipeline.node_names)],
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
            after = partition_totals(project.spark, table, partitions_from, partitions_to)
            changes += diff_totals(table.name.split(".")[-1], totals, after)
    manifest_dir.mkdir(parents=True, exist_ok=True)
    manifest = manifest_dir / f"backfill_{start:%Y%m%dT%H%M%S}_{end:%Y%m%dT%H%M%S}_at_{run_time:%Y%m%dT%H%M%S}.csv"
    with manifest.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(PartitionChange.__dataclass_fields__))
        writer.writeheader()
        writer.writerows(asdict(change) for change in changes)
    log.info("backfill: %d partitions changed; manifest %s", len(changes), manifest)
    return changes, manifest
