"""The generic oracle: any late-data pipeline's windows and too-late listing recomputed from its
model's select by its declared measures (late_data.project.pipelines.Pipeline), independently of the
macros. As of run time T, the row counted for window W is, per event key, the newest version
ingested by min(T, W's final moment), provided that version's event time falls in W. Session
windows: late_data.oracles.sessions."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from late_data.oracles.compare import Comparison, compare
from late_data.oracles.contract import (
    ARRIVED_AFTER_FINAL,
    DIMENSION_CHANGE_AFTER_FINAL,
    INTEGER_TYPES,
    REPLACES_FINAL_VERSION,
    countable,
)
from late_data.oracles.sessions import expected_session_too_late, session_windows_of


def interpolated_percentile(column: str, p: float) -> Any:
    """The exact percentile `p` of a group's values of `column`, worked out here from the sorted
    values rather than by Spark's `percentile`: at position (n - 1) * p, linear interpolation
    between the two closest ranks (the definition Spark's `percentile` documents)."""
    from pyspark.sql import functions as F

    values = F.sort_array(F.collect_list(F.col(column).cast("double")))
    position = (F.size(values) - 1) * F.lit(p)
    lower, upper = F.floor(position), F.ceil(position)
    low_value = F.element_at(values, (lower + 1).cast("int"))
    high_value = F.element_at(values, (upper + 1).cast("int"))
    interpolated = (upper - position) * low_value + (position - lower) * high_value
    return F.when(F.size(values) == 0, F.lit(None)).when(lower == upper, low_value).otherwise(interpolated)


def windows_of(pipeline: Any, delivered: Any, run_time: datetime) -> Any:
    """Per window and series: the pipeline's measures over the versions of `delivered` (a
    DataFrame of the model's columns, each version's arrival in ingested_at) that count as of
    `run_time` (per event, the newest version ingested by min(run_time, its window's end + its
    source's late window), if its event time falls in that window), and is_final (the pipeline's
    largest late window has passed). Session windows: late_data.oracles.sessions."""
    from pyspark.sql import functions as F

    if pipeline.session_gap_seconds:
        return session_windows_of(pipeline, delivered, run_time)
    size = pipeline.window_size_seconds
    late = F.lit(pipeline.late_window_seconds)
    if pipeline.source_column:
        for source, seconds in pipeline.late_window_by_source.items():
            if source:
                late = F.when(F.col(pipeline.source_column) == source, F.lit(seconds)).otherwise(late)
    keys = ["window_start", *pipeline.series_key]
    inputs = list(dict.fromkeys(measure.column for measure in pipeline.measures if measure.column))
    # Every window holding the event time: the one starting at or before it on the slide grid, and
    # the size / slide - 1 before that (one, for tumbling windows).
    slide = pipeline.window_slide_seconds
    latest_start = F.floor(F.unix_seconds("event_time") / slide) * slide
    starts = F.sequence(latest_start - (size // slide - 1) * slide, latest_start, F.lit(slide))
    arrived = delivered.where(countable(delivered, pipeline)).where(F.col("ingested_at") <= F.lit(run_time))
    versions = (
        arrived.withColumn("window_start_seconds", F.explode(starts))
        .withColumn("window_start", F.timestamp_seconds("window_start_seconds"))
        .withColumn(
            "horizon", F.least(F.lit(run_time), F.timestamp_seconds(F.unix_seconds("window_start") + size + late))
        )
    )
    # A version's candidates are every version of its event, in whatever window.
    order_key = F.struct("ingested_at", "event_time", *pipeline.tie_breaker)
    candidates = arrived.select(
        *[F.col(key).alias(f"candidate_{key}") for key in pipeline.event_key],
        F.col("ingested_at").alias("candidate_ingested_at"),
        order_key.alias("candidate_key"),
    )
    same_event = F.lit(True)
    for key in pipeline.event_key:
        same_event = same_event & (F.col(key) == F.col(f"candidate_{key}"))
    counted = (
        versions.where(F.col("ingested_at") <= F.col("horizon"))
        .withColumn("own_key", order_key)
        .join(candidates, same_event & (F.col("candidate_ingested_at") <= F.col("horizon")))
        .groupBy(*pipeline.event_key, "own_key", *keys, *inputs)
        .agg(F.max("candidate_key").alias("newest_key"))
        .where(F.col("own_key") == F.col("newest_key"))
    )
    types = dict(delivered.dtypes)
    aggregates = []
    for measure in pipeline.measures:
        if measure.kind == "count":
            aggregates.append(F.count(F.lit(1)).alias(measure.name))
        elif measure.kind == "sum":
            exact = (
                measure.column
                if types[measure.column] in INTEGER_TYPES
                else F.col(measure.column).cast("decimal(28,9)")
            )
            aggregates.append(F.sum(exact).alias(measure.name))
        elif measure.kind == "mean":
            aggregates.append(F.avg(measure.column).alias(measure.name))
        elif measure.kind in ("min", "max"):
            aggregates.append(getattr(F, measure.kind)(measure.column).alias(measure.name))
        elif measure.kind == "count_distinct":
            aggregates.append(F.countDistinct(measure.column).alias(measure.name))
        elif measure.kind in ("percentile", "median"):
            aggregates.append(interpolated_percentile(measure.column, measure.p or 0.5).alias(measure.name))
    windows = counted.groupBy(*keys).agg(*aggregates)
    for measure in pipeline.measures:
        if measure.kind == "expression":
            windows = windows.withColumn(measure.name, F.expr(measure.expression))
    final_at = F.timestamp_seconds(F.unix_seconds("window_start") + size + pipeline.late_window_seconds)
    return windows.withColumn("is_final", final_at <= F.lit(run_time))


def compare_windows(expected: Any, actual: Any, pipeline: Any) -> Comparison:
    """Every window of `expected` (windows_of) and of `actual` (the pipeline's result table,
    or its history as of a run), matched both ways: counts, sums, minima, maxima and the status
    exactly, means, percentiles and expressions within the tolerance."""
    approximate = [
        measure.name for measure in pipeline.measures if measure.kind in ("mean", "expression", "percentile", "median")
    ]
    exact = [measure.name for measure in pipeline.measures if measure.name not in approximate]
    # A session's end comes from its events, so it is compared too.
    bounds = ["window_end"] if pipeline.session_gap_seconds else []
    return compare(
        expected,
        actual,
        keys=["window_start", *pipeline.series_key],
        exact_columns=[*exact, *bounds, "is_final"],
        approximate_columns=approximate,
    )


def expected_too_late(pipeline: Any, delivered: Any, run_time: datetime) -> Any:
    """The entries the pipeline's too-late listing holds after its run at `run_time`, recomputed from
    the versions `delivered` (as for windows_of; with dimensions, a made_by_dimension column): one
    per countable version arrived by then and window it could not change, with the columns the
    listing compares (compare_too_late). A version of an event replaces the one before it in
    arrival order (then event time and the pipeline's tie breakers); on sliding windows the k-th
    window holding a version's event time replaces the k-th of the version before. A version is
    too late for the window of the version it replaces when that window was final when it arrived
    (replaces_final_version), and for its own window when that one was (arrived_after_final,
    unless it is the same window); a version a dimension change made, either way, is
    dimension_change_after_final. Copies of one version delivered together are one version.
    Session windows: late_data.oracles.sessions."""
    from pyspark.sql import functions as F

    if pipeline.session_gap_seconds:
        return expected_session_too_late(pipeline, delivered, run_time)

    size, slide = pipeline.window_size_seconds, pipeline.window_slide_seconds
    late = F.lit(pipeline.late_window_seconds)
    if pipeline.source_column:
        for source, seconds in pipeline.late_window_by_source.items():
            if source:
                late = F.when(F.col(pipeline.source_column) == source, F.lit(seconds)).otherwise(late)
    arrived = delivered.where(countable(delivered, pipeline)).where(F.col("ingested_at") <= F.lit(run_time)).distinct()
    if "made_by_dimension" not in arrived.columns:
        arrived = arrived.withColumn("made_by_dimension", F.lit(False))
    latest_start = F.floor(F.unix_seconds("event_time") / slide) * slide
    windows = (
        arrived.withColumn("window_offset", F.explode(F.sequence(F.lit(0), F.lit(size // slide - 1))))
        .withColumn("window_start", F.timestamp_seconds(latest_start - F.col("window_offset") * slide))
        .withColumn("final_at", F.timestamp_seconds(F.unix_seconds("window_start") + size + late))
        .withColumn("chain_key", F.struct("ingested_at", "event_time", *pipeline.tie_breaker))
    )
    # For each version, the one it replaces: the latest of its event (and window offset) before it.
    earlier = windows.select(
        *[F.col(key).alias(f"earlier_{key}") for key in pipeline.event_key],
        F.col("window_offset").alias("earlier_offset"),
        F.struct(
            F.col("chain_key").alias("chain_key"),
            F.col("window_start").alias("window_start"),
            F.col("final_at").alias("final_at"),
        ).alias("earlier"),
    )
    same_event = F.col("window_offset") == F.col("earlier_offset")
    for key in pipeline.event_key:
        same_event = same_event & (F.col(key) == F.col(f"earlier_{key}"))
    version_columns = [column for column in windows.columns]
    replaced = (
        windows.join(earlier, same_event & (F.col("earlier.chain_key") < F.col("chain_key")), "left")
        .groupBy(*version_columns)
        .agg(F.max("earlier").alias("replaced"))
    )
    replaces = F.coalesce(F.col("ingested_at") > F.col("replaced.final_at"), F.lit(False))
    own = (F.col("ingested_at") > F.col("final_at")) & ~(
        replaces & (F.col("replaced.window_start") == F.col("window_start"))
    )
    entries = replaced.select(
        "*",
        F.explode(
            F.array(
                F.when(
                    replaces,
                    F.struct(
                        F.col("replaced.window_start").alias("start"),
                        F.lit(REPLACES_FINAL_VERSION).alias("reason"),
                        F.col("replaced.final_at").alias("final"),
                    ),
                ),
                F.when(
                    own,
                    F.struct(
                        F.col("window_start").alias("start"),
                        F.lit(ARRIVED_AFTER_FINAL).alias("reason"),
                        F.col("final_at").alias("final"),
                    ),
                ),
            )
        ).alias("missed"),
    ).where(F.col("missed").isNotNull())
    reason = F.when(F.col("made_by_dimension"), F.lit(DIMENSION_CHANGE_AFTER_FINAL)).otherwise(F.col("missed.reason"))
    return entries.select(
        *pipeline.event_key,
        *[column for column in pipeline.series_key if column not in pipeline.event_key],
        "event_time",
        "ingested_at",
        F.col("missed.start").alias("window_start"),
        reason.alias("too_late_reason"),
        seconds_after(F.col("ingested_at"), F.col("missed.final")).alias("seconds_after_final"),
    )


def seconds_after(later: Any, earlier: Any) -> Any:
    """timeutil.seconds_after over Spark columns: whole seconds, rounded up, of the exact difference
    (a decimal division, so no rounding of its own)."""
    from pyspark.sql import functions as F

    micros = (F.unix_micros(later) - F.unix_micros(earlier)).cast("decimal(20,0)")
    return F.ceil(micros / F.lit(1000000).cast("decimal(20,0)")).cast("long")


def compare_too_late(expected: Any, listed: Any, pipeline: Any) -> Comparison:
    """The entries of `expected` (expected_too_late) and of `listed` (the pipeline's too-late
    listing), matched both ways by version and window: a missing, extra or duplicated entry, or
    another reason or lateness, is a mismatch."""
    from pyspark.sql import functions as F

    keys = list(dict.fromkeys([*pipeline.event_key, *pipeline.series_key, "event_time", "ingested_at", "window_start"]))

    def entries(frame: Any) -> Any:
        return frame.groupBy(*keys).agg(
            F.count(F.lit(1)).alias("entries"),
            F.min("too_late_reason").alias("too_late_reason"),
            F.min("seconds_after_final").alias("seconds_after_final"),
        )

    return compare(
        entries(expected),
        entries(listed),
        keys=keys,
        exact_columns=["entries", "too_late_reason", "seconds_after_final"],
        approximate_columns=[],
    )
