"""How an oracle's windows are compared with a result table's: matched both ways on their keys, exact
columns equal, approximate ones within a relative tolerance, and a value no one can vouch for (NaN,
infinity, a missing number) a mismatch."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Comparison:
    windows_checked: int
    mismatched: int
    examples: list[Any]


def compare(
    expected: Any,
    actual: Any,
    keys: list[str],
    exact_columns: list[str],
    approximate_columns: list[str],
    since: datetime | None = None,
    tolerance: float = 1e-9,
) -> Comparison:
    """Rows of `expected` and `actual` matched by `keys` both ways: a row on one side only, a
    differing exact column, or an approximate column off by more than `tolerance` (relative) is a
    mismatch; nulls match only nulls. A NaN or infinite value on either side of a compared column
    is always a mismatch: no result the contract defines is one, and Spark's NaN semantics (NaN
    equals NaN and sorts above every number) would otherwise let some of them pass unnoticed."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import DoubleType, FloatType

    columns = keys + exact_columns + approximate_columns
    expected = expected.select(columns).withColumn("in_expected", F.lit(True))
    actual = actual.select(columns).withColumn("in_actual", F.lit(True))
    if since is not None:
        expected = expected.where(F.col("window_start") >= F.lit(since))
        actual = actual.where(F.col("window_start") >= F.lit(since))
    floating = {
        field.name
        for frame in (expected, actual)
        for field in frame.schema.fields
        if isinstance(field.dataType, (DoubleType, FloatType))
    }
    joined = expected.alias("expected").join(actual.alias("actual"), keys, "full_outer")
    mismatch = F.col("in_expected").isNull() | F.col("in_actual").isNull()
    for column in exact_columns:
        want, got = F.col(f"expected.{column}"), F.col(f"actual.{column}")
        mismatch = mismatch | ~want.eqNullSafe(got)
        if column in floating:
            mismatch = mismatch | _not_finite(want) | _not_finite(got)
    for column in approximate_columns:
        want, got = F.col(f"expected.{column}"), F.col(f"actual.{column}")
        off = F.abs(want - got) > F.lit(tolerance) * F.greatest(F.lit(1.0), F.abs(want))
        mismatch = mismatch | (want.isNull() != got.isNull()) | F.coalesce(off, F.lit(False))
        if column in floating:
            mismatch = mismatch | _not_finite(want) | _not_finite(got)
    flagged = joined.withColumn("is_mismatch", mismatch).cache()
    try:
        totals = flagged.agg(
            F.count(F.lit(1)).alias("windows"), F.sum(F.col("is_mismatch").cast("int")).alias("mismatched")
        ).first()
        shown = [*keys] + [
            F.col(f"{side}.{column}").alias(f"{side}_{column}")
            for column in exact_columns + approximate_columns
            for side in ("expected", "actual")
        ]
        examples = flagged.where("is_mismatch").select(shown).limit(5).collect() if totals["mismatched"] else []
    finally:
        flagged.unpersist()
    return Comparison(
        windows_checked=int(totals["windows"]), mismatched=int(totals["mismatched"] or 0), examples=examples
    )


def _not_finite(column: Any) -> Any:
    """True for NaN and +/-infinity, false otherwise (null included). Spark compares NaN as equal to
    NaN and greater than any number, and infinity minus infinity is NaN, so neither an equality nor
    a tolerance test catches these values: they are tested for by name."""
    from pyspark.sql import functions as F

    return F.coalesce(F.isnan(column) | (F.abs(column) == F.lit(float("inf"))), F.lit(False))
