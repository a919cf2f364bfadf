"""A one-file HTML report: how late rows arrive, and how a few windows moved from provisional to final.

It reads the dbt models (the lateness monitoring models and the revision histories) and draws with
matplotlib; the figures are embedded, so the file can be mailed or attached as it is.
"""

from __future__ import annotations

import base64
import html
import io
import logging
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

LATENESS_BINS_SECONDS = 60


def write_report(spark: Any, schema: str, path: Path, windows_per_pipeline: int = 4) -> Path:
    """Write the report to `path` and return it."""
    import matplotlib

    matplotlib.use("Agg")
    sections = [
        "<h2>How late rows arrive</h2>",
        _figure(_lateness_figure(spark, schema)),
        _table(spark.sql(f"select * from {schema}.late_window_recommendations order by source_table")),
        _table(
            spark.sql(
                f"select * from {schema}.source_lateness_distribution where series_key is null order by source_table"
            )
        ),
        "<h2>From first published to final</h2>",
        "<p>Each line is one window: after each run that changed it, how far its published value was"
        " from the final one; a filled marker is final.</p>",
        _figure(_revision_paths_figure(spark, schema, windows_per_pipeline)),
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>late_data report</title>"
        "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}"
        "</style></head><body><h1>late_data report</h1>" + "\n".join(sections) + "</body></html>"
    )
    log.info("report written to %s", path)
    return path


def _lateness_figure(spark: Any, schema: str) -> Any:
    """Share of rows by lateness (1-minute bins, log scale) and the cumulative share, per source;
    dashed: the configured late windows (measured from the event, they start a window later)."""
    import matplotlib.pyplot as plt

    bins = spark.sql(
        f"""
        select source_table, floor(lateness_seconds / {LATENESS_BINS_SECONDS}) as lateness_bin, count(*) as arrived_rows
        from {schema}.int_late_data__arrivals
        group by source_table, floor(lateness_seconds / {LATENESS_BINS_SECONDS})
        order by source_table, lateness_bin
        """
    ).collect()
    figure, (histogram, cumulative) = plt.subplots(1, 2, figsize=(11, 3.8))
    for source_table in sorted({row["source_table"] for row in bins}):
        mine = [row for row in bins if row["source_table"] == source_table]
        total = sum(row["arrived_rows"] for row in mine)
        minutes = [row["lateness_bin"] * LATENESS_BINS_SECONDS / 60 for row in mine]
        shares = [row["arrived_rows"] / total for row in mine]
        histogram.step(minutes, shares, where="post", label=source_table)
        running, cumulative_shares = 0.0, []
        for share in shares:
            running += share
            cumulative_shares.append(running)
        cumulative.step(minutes, cumulative_shares, where="post", label=source_table)
    for row in spark.sql(
        f"select distinct configured_late_window_seconds from {schema}.late_window_recommendations"
    ).collect():
        for axis in (histogram, cumulative):
            axis.axvline(row[0] / 60, color="grey", linestyle="--", linewidth=0.8)
    histogram.set(yscale="log", xlabel="lateness (minutes after the event)", ylabel="share of rows")
    cumulative.set(xlabel="lateness (minutes after the event)", ylabel="cumulative share of rows", ylim=(0, 1.01))
    histogram.legend(fontsize=8)
    figure.tight_layout()
    return figure


def _revision_paths_figure(spark: Any, schema: str, windows: int) -> Any:
    """The most revised final windows of each pipeline: each version's distance from the final value,
    against the run time."""
    import matplotlib.pyplot as plt

    pipelines = [
        ("water_level_window_revisions", "location", "mean_value", "mean water level - final"),
        ("page_error_rates_revisions", "page", "error_rate_percent", "error % - final (points)"),
    ]
    figure, axes = plt.subplots(1, len(pipelines), figsize=(11, 3.8))
    for axis, (revisions, key, value, label) in zip(axes, pipelines, strict=True):
        most_revised = spark.sql(
            f"""
            select window_start, {key}
            from (
                select window_start, {key}, count(*) as versions, max(cast(is_final as int)) as finalized
                from {schema}.{revisions}
                group by window_start, {key}
            )
            where finalized = 1
            order by versions desc, window_start, {key}
            limit {windows}
            """
        ).collect()
        for window in most_revised:
            versions = window_versions(spark, f"{schema}.{revisions}", key, value, window["window_start"], window[key])
            final = versions[-1]["value"]
            times = [row["valid_from"] for row in versions]
            values = [row["value"] - final for row in versions]
            (line,) = axis.step(times, values, where="post", label=f"{window[key]} {window['window_start']:%H:%M}")
            for row in versions:
                axis.plot(
                    row["valid_from"],
                    row["value"] - final,
                    "o",
                    color=line.get_color(),
                    fillstyle="full" if row["is_final"] else "none",
                )
        axis.set(title=revisions, xlabel="run time", ylabel=label)
        axis.tick_params(axis="x", labelrotation=30, labelsize=8)
        axis.legend(fontsize=7)
    figure.tight_layout()
    return figure


def window_versions(spark: Any, table: str, key: str, value: str, window_start: Any, series: Any) -> list[Any]:
    """One window's versions (valid_from, value, is_final), oldest first. The window and series are
    compared as values through the DataFrame API, never spliced into SQL text: a series name is
    data (a location called "O'Brien Weir" must neither break the query nor change it)."""
    from pyspark.sql import functions as F

    versions: list[Any] = (
        spark.table(table)
        .where(
            (F.col("window_start") == F.lit(window_start)) & (F.col(key) == F.lit(series)) & F.col(value).isNotNull()
        )
        .orderBy("version_number")
        .select("valid_from", F.col(value).alias("value"), "is_final")
        .collect()
    )
    return versions


def _figure(figure: Any) -> str:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90)
    plt.close(figure)
    return f"<img alt='figure' src='data:image/png;base64,{base64.b64encode(buffer.getvalue()).decode()}'>"


def _table(frame: Any) -> str:
    rows = frame.collect()
    header = "".join(f"<th>{html.escape(column)}</th>" for column in frame.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_cell(value))}</td>" for value in row) + "</tr>" for row in rows)
    return f"<table><tr>{header}</tr>{body}</table>"


def _cell(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)
