"""From-scratch recomputation of the per-window means, independent of the dbt models.

It reads the raw table with the DataFrame API and applies the contract directly: as of run time
T, the reading counted for window W is, per event_id, the newest version ingested by
min(T, end of W + late window), provided that version's event time falls in W.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class WindowSettings:
    window_size_seconds: int = 60
    late_window_seconds: int = 3600


@dataclass(frozen=True)
class Comparison:
    windows_checked: int
    mismatched: int
    examples: list[Any]


def expected_window_means(spark: Any, raw_table: str, run_time: datetime, settings: WindowSettings) -> Any:
    from pyspark.sql import functions as F

    size = settings.window_size_seconds
    versions = (
        spark.table(raw_table)
        .where(F.col("ingested_at") <= F.lit(run_time))
        .withColumn(
            "window_start",
            F.timestamp_seconds(F.floor(F.unix_seconds("event_time") / size) * size),
        )
        .withColumn(
            "horizon",
            F.least(
                F.lit(run_time),
                F.timestamp_seconds(F.unix_seconds("window_start") + size + settings.late_window_seconds),
            ),
        )
    )
    order_key = F.struct("ingested_at", "event_time", "value", "location")
    candidates = versions.select(
        F.col("event_id").alias("candidate_event_id"),
        F.col("ingested_at").alias("candidate_ingested_at"),
        order_key.alias("candidate_key"),
    )
    # For each version, the newest version of its event visible at the version's own horizon.
    newest_at_horizon = (
        versions.where(F.col("ingested_at") <= F.col("horizon"))
        .withColumn("own_key", order_key)
        .join(
            candidates,
            (F.col("event_id") == F.col("candidate_event_id"))
            & (F.col("candidate_ingested_at") <= F.col("horizon")),
        )
        .groupBy("event_id", "own_key", "window_start", "location", "value")
        .agg(F.max("candidate_key").alias("newest_key"))
        .where(F.col("own_key") == F.col("newest_key"))
    )
    final_at = F.timestamp_seconds(F.unix_seconds("window_start") + size + settings.late_window_seconds)
    return newest_at_horizon.groupBy("window_start", "location").agg(
        F.count(F.lit(1)).alias("reading_count"),
        F.avg("value").alias("mean_value"),
        (F.max(final_at) <= F.lit(run_time)).alias("is_final"),
    )


def compare_window_means(
    spark: Any,
    raw_table: str,
    result_table: str,
    run_time: datetime,
    settings: WindowSettings,
    since: datetime | None = None,
    tolerance: float = 1e-9,
) -> Comparison:
    """Every (window, location) of the oracle and of the result table, matched both ways."""
    from pyspark.sql import functions as F

    expected = expected_window_means(spark, raw_table, run_time, settings).alias("expected")
    actual = spark.table(result_table).select(
        "window_start", "location", "reading_count", "mean_value", "is_final"
    ).alias("actual")
    if since is not None:
        expected = expected.where(F.col("window_start") >= F.lit(since))
        actual = actual.where(F.col("window_start") >= F.lit(since))
    joined = expected.join(actual, ["window_start", "location"], "full_outer")
    mismatch = (
        F.col("expected.reading_count").isNull()
        | F.col("actual.reading_count").isNull()
        | (F.col("expected.reading_count") != F.col("actual.reading_count"))
        | (F.col("expected.is_final") != F.col("actual.is_final"))
        | (
            F.abs(F.col("expected.mean_value") - F.col("actual.mean_value"))
            > F.lit(tolerance) * F.greatest(F.lit(1.0), F.abs(F.col("expected.mean_value")))
        )
    )
    flagged = joined.withColumn("is_mismatch", mismatch).cache()
    try:
        totals = flagged.agg(
            F.count(F.lit(1)).alias("windows"), F.sum(F.col("is_mismatch").cast("int")).alias("mismatched")
        ).first()
        examples = flagged.where("is_mismatch").limit(5).collect() if totals["mismatched"] else []
    finally:
        flagged.unpersist()
    return Comparison(
        windows_checked=int(totals["windows"]), mismatched=int(totals["mismatched"] or 0), examples=examples
    )
