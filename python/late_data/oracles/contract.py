"""What the oracles count, written once for all of them and independently of the macros: which
delivered versions a window may count (the quarantine rule) and the names of the too-late
listing's reasons. The windows' oracle (windows.py) and the sessions' (sessions.py) both read it."""

from __future__ import annotations

from typing import Any

# The quarantine rule, written independently of the models: a version counts toward no window when a
# contract column is null, or its value is not finite or outside what the exact sum holds.
EXACT_SUM_BOUND = 1e19
COUNT_BOUND = 2**31 - 1


# The too-late listing's reasons (docs/design.md, "Corrections" and "Too late").
ARRIVED_AFTER_FINAL = "arrived_after_final"
REPLACES_FINAL_VERSION = "replaces_final_version"
DIMENSION_CHANGE_AFTER_FINAL = "dimension_change_after_final"


# The generic oracle's rule (any late-data pipeline, recomputed from its model's select by its declared
# measures: late_data.project.pipelines.Pipeline).
INTEGER_TYPES = ("tinyint", "smallint", "int", "bigint")


def countable(frame: Any, pipeline: Any) -> Any:
    """Column predicate over a pipeline's delivered versions: every column it reads is set, every
    fractional measure column finite, a column a sum, mean, min or max reads within what its sum
    holds (below EXACT_SUM_BOUND, an integer one at most COUNT_BOUND in magnitude), and the model's
    own quarantine_reason, if it selects one, null."""
    from pyspark.sql import functions as F

    types = dict(frame.dtypes)
    inputs = [measure.column for measure in pipeline.measures if measure.column]
    bounded = {measure.column for measure in pipeline.measures if measure.kind in ("sum", "mean", "min", "max")}
    required = [*pipeline.event_key, *pipeline.series_key, "event_time", *inputs, "ingested_at"]
    if pipeline.source_column:
        required.append(pipeline.source_column)
    predicate = F.lit(True)
    for column in required:
        predicate = predicate & F.col(column).isNotNull()
    for column in dict.fromkeys(inputs):
        value = F.col(column)
        if types[column] in INTEGER_TYPES:
            if column in bounded:
                predicate = predicate & (F.abs(value) <= COUNT_BOUND)
        elif types[column] in ("float", "double") or types[column].startswith("decimal"):
            predicate = predicate & ~F.isnan(value)
            if column in bounded:
                predicate = predicate & (F.abs(value) < EXACT_SUM_BOUND)
    if "quarantine_reason" in types:
        predicate = predicate & F.col("quarantine_reason").isNull()
    return predicate
