"""The oracle's comparison itself: a value it cannot vouch for (NaN, infinity, a missing number)
must count as a mismatch, or a broken result could pass every oracle check in the suite."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

import pytest

from late_data.oracles.compare import compare
from late_data.runtime.dbt_project import DbtProject

NAN, INF = math.nan, math.inf
SCHEMA = "window_start timestamp, location string, reading_count bigint, is_final boolean, value double"
WINDOW = datetime(2026, 3, 1, 12, 0, 0)


# (case, expected value, actual value): each one window, otherwise equal on both sides.
MISMATCHES = [
    ("nan_vs_number", NAN, 1.5),
    ("number_vs_nan", 1.5, NAN),
    ("nan_vs_nan", NAN, NAN),
    ("inf_vs_inf", INF, INF),
    ("minus_inf_vs_minus_inf", -INF, -INF),
    ("minus_inf_vs_finite", -INF, 1.5),
    ("finite_vs_inf", 1.5, INF),
    ("null_vs_number", None, 1.5),
    ("number_vs_null", 1.5, None),
]
MATCHES = [("equal", 1.5, 1.5), ("equal_negative", -2.25, -2.25), ("zero", 0.0, 0.0), ("both_null", None, None)]


def compare_cases(project: DbtProject, cases: list[tuple[str, float | None, float | None]], approximate: bool) -> Any:
    """One window per case (its name as the location), compared on `value` as an approximate or an
    exact column: (windows checked, mismatched, names of the flagged cases among the examples)."""
    spark = project.spark

    def side(index: int) -> Any:
        return spark.createDataFrame([(WINDOW, name, 3, False, case[index]) for name, *case in cases], SCHEMA)

    comparison = compare(
        side(0),
        side(1),
        keys=["window_start", "location"],
        exact_columns=["reading_count", "is_final"] + ([] if approximate else ["value"]),
        approximate_columns=["value"] if approximate else [],
    )
    return comparison.windows_checked, comparison.mismatched, sorted(row["location"] for row in comparison.examples)


@pytest.mark.parametrize("approximate", [True, False], ids=["approximate", "exact"])
def test_non_finite_or_missing_values_are_mismatches(project: DbtProject, approximate: bool) -> None:
    """Every window has a bad value, so every window must be flagged (the count says which were not)."""
    checked, mismatched, flagged = compare_cases(project, MISMATCHES, approximate)
    assert (checked, mismatched) == (len(MISMATCHES), len(MISMATCHES)), flagged


@pytest.mark.parametrize("approximate", [True, False], ids=["approximate", "exact"])
def test_equal_values_are_not_mismatches(project: DbtProject, approximate: bool) -> None:
    checked, mismatched, flagged = compare_cases(project, MATCHES, approximate)
    assert (checked, mismatched) == (len(MATCHES), 0), flagged


def test_values_within_the_relative_tolerance_match_and_beyond_it_do_not(project: DbtProject) -> None:
    cases = [("within", 1e6, 1e6 + 1e-4), ("beyond", 1e6, 1e6 + 1e-2)]
    assert compare_cases(project, cases, approximate=True)[1:] == (1, ["beyond"])
    assert compare_cases(project, cases, approximate=False)[1:] == (2, ["beyond", "within"])
