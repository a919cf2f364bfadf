"""The oracles of the demo project's two pipelines written out by hand: the water levels' means per
location and the pages' error rates from two late series. Both read the raw tables with the
DataFrame API and apply the contract directly: as of run time T, the row counted for window W is,
per event_id, the newest version ingested by min(T, end of W + the source's late window), provided
that version's event time falls in W."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from late_data.oracles.compare import Comparison, compare
from late_data.oracles.contract import (
    COUNT_BOUND,
    EXACT_SUM_BOUND,
)

# The columns of a means table that make a window's published state: what a check compares and the
# history must reproduce.
WINDOW_MEANS_COLUMNS = "window_start, location, reading_count, mean_value, is_final"


@dataclass(frozen=True)
class WindowSettings:
    window_size_seconds: int = 60
    late_window_seconds: int = 3600


def is_countable(key_column: str, integer_counts: bool) -> Any:
    """Column predicate: the raw row version can be counted (see the README's contract section)."""
    from pyspark.sql import functions as F

    required = F.lit(True)
    for column in ("event_id", key_column, "event_time", "value", "ingested_at"):
        required = required & F.col(column).isNotNull()
    value = F.col("value")
    if integer_counts:
        return required & (value >= 0) & (value <= COUNT_BOUND)
    return required & ~F.isnan(value) & (F.abs(value) < EXACT_SUM_BOUND)


def counted_versions(
    spark: Any,
    raw_table: str,
    key_column: str,
    run_time: datetime,
    window_size_seconds: int,
    late_window_seconds: int,
    integer_counts: bool = False,
) -> Any:
    """Per event_id, the version that counts as of run_time (if any): among the countable versions
    (is_countable), the newest ingested by min(run_time, its window's end + late window), provided
    its event time falls in that window. Columns: event_id, window_start, the key column, value."""
    from pyspark.sql import functions as F

    size = window_size_seconds
    versions = (
        spark.table(raw_table)
        .where(is_countable(key_column, integer_counts))
        .where(F.col("ingested_at") <= F.lit(run_time))
        .withColumn("window_start", F.timestamp_seconds(F.floor(F.unix_seconds("event_time") / size) * size))
        .withColumn(
            "horizon",
            F.least(
                F.lit(run_time),
                F.timestamp_seconds(F.unix_seconds("window_start") + size + late_window_seconds),
            ),
        )
    )
    order_key = F.struct("ingested_at", "event_time", "value", key_column)
    candidates = versions.select(
        F.col("event_id").alias("candidate_event_id"),
        F.col("ingested_at").alias("candidate_ingested_at"),
        order_key.alias("candidate_key"),
    )
    # For each version, the newest version of its event visible at the version's own horizon.
    return (
        versions.where(F.col("ingested_at") <= F.col("horizon"))
        .withColumn("own_key", order_key)
        .join(
            candidates,
            (F.col("event_id") == F.col("candidate_event_id")) & (F.col("candidate_ingested_at") <= F.col("horizon")),
        )
        .groupBy("event_id", "own_key", "window_start", key_column, "value")
        .agg(F.max("candidate_key").alias("newest_key"))
        .where(F.col("own_key") == F.col("newest_key"))
        .select("event_id", "window_start", key_column, "value")
    )


def _is_final(window_size_seconds: int, late_window_seconds: int, run_time: datetime) -> Any:
    from pyspark.sql import functions as F

    final_at = F.timestamp_seconds(F.unix_seconds("window_start") + window_size_seconds + late_window_seconds)
    return final_at <= F.lit(run_time)


def expected_window_means(spark: Any, raw_table: str, run_time: datetime, settings: WindowSettings) -> Any:
    from pyspark.sql import functions as F

    size, late = settings.window_size_seconds, settings.late_window_seconds
    return (
        counted_versions(spark, raw_table, "location", run_time, size, late)
        .groupBy("window_start", "location")
        .agg(F.count(F.lit(1)).alias("reading_count"), F.avg("value").alias("mean_value"))
        .withColumn("is_final", _is_final(size, late, run_time))
    )


def expected_error_rates(
    spark: Any,
    errors_table: str,
    views_table: str,
    run_time: datetime,
    window_size_seconds: int,
    errors_late_window_seconds: int,
    views_late_window_seconds: int,
) -> Any:
    """Per page and window: error and view sums of the counted rows of each series (0 where a
    series has none), the error percentage, and the status (final once both late windows passed)."""
    from pyspark.sql import functions as F

    def sums(table: str, late: int, name: str) -> Any:
        return (
            counted_versions(spark, table, "page", run_time, window_size_seconds, late, integer_counts=True)
            .groupBy("window_start", "page")
            .agg(F.sum("value").alias(name), F.count(F.lit(1)).alias(f"{name}_rows"))
        )

    errors = sums(errors_table, errors_late_window_seconds, "error_count")
    views = sums(views_table, views_late_window_seconds, "view_count")
    both = errors.join(views, ["window_start", "page"], "full_outer").fillna(0)
    total = F.col("error_count") + F.col("view_count")
    return both.select(
        "window_start",
        "page",
        "error_count",
        "view_count",
        F.when(total > 0, 100.0 * F.col("error_count") / total).alias("error_rate_percent"),
        (F.col("error_count_rows") + F.col("view_count_rows")).alias("counted_rows"),
        _is_final(window_size_seconds, max(errors_late_window_seconds, views_late_window_seconds), run_time).alias(
            "is_final"
        ),
    )


def compare_window_means(
    spark: Any,
    raw_table: str,
    result_table: str,
    run_time: datetime,
    settings: WindowSettings,
    since: datetime | None = None,
) -> Comparison:
    """Every (window, location) of the oracle as of `run_time` and of the means table, matched both ways."""
    return compare_means(expected_window_means(spark, raw_table, run_time, settings), spark.table(result_table), since)


def compare_means(expected: Any, actual: Any, since: datetime | None = None) -> Comparison:
    """Every (window, location) of `expected` (expected_window_means, e.g. a materialized one the
    caller keeps) and of `actual` (a means table), matched both ways."""
    return compare(
        expected,
        actual,
        keys=["window_start", "location"],
        exact_columns=["reading_count", "is_final"],
        approximate_columns=["mean_value"],
        since=since,
    )


def compare_error_rates(
    spark: Any,
    errors_table: str,
    views_table: str,
    result_table: str,
    run_time: datetime,
    window_size_seconds: int,
    errors_late_window_seconds: int,
    views_late_window_seconds: int,
) -> Comparison:
    """Every (window, page) of the rate oracle as of `run_time` and of the rates table, matched both ways."""
    expected = expected_error_rates(
        spark,
        errors_table,
        views_table,
        run_time,
        window_size_seconds,
        errors_late_window_seconds,
        views_late_window_seconds,
    )
    return compare_rates(expected, spark.table(result_table))


def compare_rates(expected: Any, actual: Any) -> Comparison:
    """Every (window, page) of `expected` (expected_error_rates, e.g. a materialized one the caller
    keeps) and of `actual` (a rates table), matched both ways."""
    return compare(
        expected,
        actual,
        keys=["window_start", "page"],
        exact_columns=["error_count", "view_count", "counted_rows", "is_final"],
        approximate_columns=["error_rate_percent"],
    )
