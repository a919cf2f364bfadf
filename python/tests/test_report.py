"""The report reads series names as data: a quote in a location or page name changes nothing."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from late_data.demo.report import _revision_paths_figure, window_versions

WINDOW = datetime(2026, 1, 1, 0, 5)
QUOTED = "O'Brien Weir"
# A name that would turn a quoted SQL literal into an always-true filter.
INJECTED = "x' or '1'='1"


def revisions_view(spark: Any, name: str, key: str, value: str, rows: list[tuple[Any, ...]]) -> str:
    """A global temporary view shaped like a revisions model (nothing written to the catalog)."""
    columns = ["window_start", key, value, "is_final", "valid_from", "version_number"]
    spark.createDataFrame(rows, columns).createOrReplaceGlobalTempView(name)
    return f"global_temp.{name}"


def versions_of(series: str, final_value: float) -> list[tuple[Any, ...]]:
    return [
        (WINDOW, series, final_value + 0.5, False, datetime(2026, 1, 1, 0, 7), 1),
        (WINDOW, series, None, False, datetime(2026, 1, 1, 0, 8), 2),
        (WINDOW, series, final_value, True, datetime(2026, 1, 1, 0, 20), 3),
    ]


def test_a_quote_in_a_series_name_is_data(project: Any) -> None:
    spark = project.spark
    table = revisions_view(
        spark,
        "water_level_window_revisions",
        "location",
        "mean_value",
        versions_of(QUOTED, 5.0) + versions_of("plain", 7.0) + versions_of(INJECTED, 9.0),
    )
    quoted = window_versions(spark, table, "location", "mean_value", WINDOW, QUOTED)
    assert [(row["value"], row["is_final"]) for row in quoted] == [(5.5, False), (5.0, True)]
    injected = window_versions(spark, table, "location", "mean_value", WINDOW, INJECTED)
    assert [row["value"] for row in injected] == [9.5, 9.0]


def test_the_revision_figure_draws_quoted_names(project: Any) -> None:
    spark = project.spark
    revisions_view(spark, "water_level_window_revisions", "location", "mean_value", versions_of(QUOTED, 5.0))
    revisions_view(spark, "page_error_rates_revisions", "page", "error_rate_percent", versions_of("/it's", 2.0))
    figure = _revision_paths_figure(spark, "global_temp", windows=4)
    labels = [text.get_text() for axis in figure.axes for text in axis.get_legend().get_texts()]
    assert labels == [f"{QUOTED} 00:05", "/it's 00:05"]
