"""The scheduled path against the oracle, run after run, with the table format's commit log as witness."""

from __future__ import annotations

import os
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

from late_data.commands.explain import MODES, compile_run, parse_rendered
from late_data.oracles.demo_pipelines import compare_means, expected_window_means
from late_data.running.scheduler import RunReport, run_simulated, scenario_feed
from late_data.runtime.timeutil import format_timestamp
from late_data.tables.history import commits_after
from tests.helpers import (
    TEST_SETTINGS,
    TEST_VARS,
    WINDOW_MEANS_COLUMNS,
    Pipeline,
    oracle_partitions_changed,
    water_levels,
)

ORIGIN = datetime(2026, 3, 1, 12, 0, 0)
SCENARIO = water_levels(
    locations=8,
    correction_share=0.03,
    moved_correction_share=0.3,
    too_late_share=0.02,
    # Every class of malformed version (NaN, infinities, beyond the exact sum, each null): the oracle
    # leaves them out by its own rule, the models by the quarantine's.
    malformed_share=0.02,
)
# What the means table publishes per window: a change in any of them must rewrite its partition.
ORACLE_COLUMNS = ["window_start", "location", "reading_count", "mean_value", "is_final"]


SCENARIO_MINUTES = 36  # more than 3 late windows: windows turn final, then corrections arrive too late
# Every 9 simulated minutes (the late window is 10): each run finds late rows, corrections and
# windows turning final since the one before, in 4 runs.
MINUTES_BETWEEN_RUNS = 9


@pytest.fixture(scope="module")
def scheduled_history(project: Any) -> dict[str, Any]:
    """Scheduled runs over SCENARIO_MINUTES, checking after each run."""
    pipeline = Pipeline(project, TEST_VARS)
    observed: list[dict[str, Any]] = []
    previous: dict[str, Any] = {"oracle": None, "version": None}

    def after_run(report: RunReport) -> None:
        # The oracle as of this run, worked out once: compared with the table now, and with the
        # previous run's oracle for what changed (then kept for the next run's).
        oracle = expected_window_means(pipeline.spark, pipeline.raw_table, report.run_time, TEST_SETTINGS)
        oracle = oracle.localCheckpoint()
        comparison = compare_means(oracle, pipeline.spark.table(pipeline.means_table))
        observed.append(
            {
                "report": report,
                "comparison": comparison,
                "touched": pipeline.touched_since(pipeline.means_table, previous["version"]),
                "oracle_changed": oracle_partitions_changed(oracle, previous["oracle"], "location", ORACLE_COLUMNS),
            }
        )
        previous["oracle"] = oracle
        previous["version"] = pipeline.version_of(pipeline.means_table)

    run_simulated(
        pipeline.project,
        scenario_feed(pipeline.project, pipeline.raw_tables, ORIGIN, water_levels=SCENARIO),
        ORIGIN,
        ORIGIN + timedelta(minutes=SCENARIO_MINUTES),
        timedelta(minutes=MINUTES_BETWEEN_RUNS),
        timedelta(seconds=10),
        after_run,
        pipeline_tag=pipeline.pipeline_tag,
    )
    return {"pipeline": pipeline, "observed": observed, "runs": SCENARIO_MINUTES // MINUTES_BETWEEN_RUNS}


def test_every_window_matches_the_oracle_after_every_run(scheduled_history: dict[str, Any]) -> None:
    observed = scheduled_history["observed"]
    assert len(observed) == scheduled_history["runs"]
    for step in observed:
        comparison = step["comparison"]
        assert comparison.windows_checked > 0
        assert comparison.mismatched == 0, (step["report"].run_time, comparison.examples)


def test_only_partitions_whose_input_changed_are_rewritten(scheduled_history: dict[str, Any]) -> None:
    """From the table format's commit log: a run touches no partition whose windows did not change."""
    observed = scheduled_history["observed"]
    for step in observed:
        assert step["touched"] <= step["oracle_changed"], step["report"].run_time
    # Not vacuous: runs did rewrite partitions, and left unchanged older partitions alone.
    assert any(step["touched"] for step in observed[1:])
    last = observed[-1]
    all_partitions = {
        (row["partition_start"], row["series_bucket"])
        for row in scheduled_history["pipeline"]
        .spark.table(scheduled_history["pipeline"].means_table)
        .select("partition_start", "series_bucket")
        .distinct()
        .collect()
    }
    assert len(last["touched"]) < len(all_partitions)


def test_run_report_matches_the_commit_log(scheduled_history: dict[str, Any]) -> None:
    for step in scheduled_history["observed"][1:]:
        report = step["report"]
        assert report.partitions_rewritten == len(step["touched"]), report.run_time
        assert report.rows_written >= report.windows_changed > 0


def test_rerun_at_the_same_run_time_changes_nothing(scheduled_history: dict[str, Any]) -> None:
    pipeline: Pipeline = scheduled_history["pipeline"]
    fmt = pipeline.project.environment.table_format
    last_run_time = scheduled_history["observed"][-1]["report"].run_time
    before_rows = pipeline.rows(pipeline.means_table)
    version = pipeline.version_of(pipeline.means_table)
    history = f"{pipeline.project.target_schema()}.water_level_window_means_history"
    versions_before = pipeline.spark.table(history).count()
    report = pipeline.run(last_run_time)
    commits = commits_after(pipeline.spark, pipeline.means_table, fmt, version)
    assert pipeline.spark.table(history).count() == versions_before
    assert report.rows_written == 0
    assert all(not commit.partitions_touched for commit in commits)
    after_rows = pipeline.rows(pipeline.means_table)
    assert [r.asDict() for r in after_rows] == [r.asDict() for r in before_rows]


def test_history_has_no_false_revisions(scheduled_history: dict[str, Any]) -> None:
    """Consecutive versions of a window always differ in count, mean or status."""
    pipeline: Pipeline = scheduled_history["pipeline"]
    schema = pipeline.project.target_schema()
    versions = pipeline.spark.sql(
        f"""
        select count(*) as versions, count_if(
            reading_count <=> lag_count and mean_value <=> lag_mean and is_final <=> lag_final
        ) as unchanged
        from (
            select *, lag(reading_count) over w as lag_count, lag(mean_value) over w as lag_mean,
                lag(is_final) over w as lag_final
            from {schema}.water_level_window_means_history
            window w as (partition by window_key order by dbt_valid_from)
        )
        """
    ).first()
    assert versions["versions"] > len(pipeline.rows(pipeline.means_table))
    assert versions["unchanged"] == 0


def test_as_of_reads_equal_the_oracle_at_past_run_times(scheduled_history: dict[str, Any]) -> None:
    pipeline: Pipeline = scheduled_history["pipeline"]
    for step in scheduled_history["observed"][1:-1]:  # the runs between the first and the last
        run_time = step["report"].run_time
        as_of = pipeline.history_as_of(run_time)
        expected = expected_window_means(pipeline.spark, pipeline.raw_table, run_time, TEST_SETTINGS)
        joined = expected.join(as_of, ["window_start", "location"], "full_outer")
        assert joined.count() == expected.count() == as_of.count() > 0
        mismatched = joined.where(
            (expected["reading_count"] != as_of["reading_count"])
            | (expected["is_final"] != as_of["is_final"])
            | (F.abs(expected["mean_value"] - as_of["mean_value"]) > 1e-9)
        ).count()
        assert mismatched == 0, run_time


def test_replaying_a_past_run_time_reproduces_the_as_of_read_exactly(scheduled_history: dict[str, Any]) -> None:
    """Recreate a past published table from the append-only raw table, bit for bit."""
    pipeline: Pipeline = scheduled_history["pipeline"]
    observed = scheduled_history["observed"]
    run_time = observed[len(observed) * 2 // 3]["report"].run_time
    published = pipeline.history_as_of(run_time).collect()
    replayed = replay_in_scratch_schema(pipeline, run_time, WINDOW_MEANS_COLUMNS)
    key = lambda row: (row["window_start"], row["location"])
    assert sorted(published, key=key) == sorted(replayed, key=key)
    assert len(published) > 100


def replay_in_scratch_schema(pipeline: Pipeline, run_time: datetime, columns: str) -> list[Any]:
    previous = os.environ.get("LATE_DATA_SCHEMA")
    os.environ["LATE_DATA_SCHEMA"] = "replay"
    pipeline.project.use_vars(TEST_VARS)
    try:
        pipeline.project.invoke(
            ["run", "--full-refresh", "--select", "+water_level_window_means"],
            {"run_time": format_timestamp(run_time)},
        )
        return pipeline.spark.sql(f"select {columns} from replay.water_level_window_means").collect()
    finally:
        if previous is None:
            os.environ.pop("LATE_DATA_SCHEMA")
        else:
            os.environ["LATE_DATA_SCHEMA"] = previous
        pipeline.project.use_vars(TEST_VARS)


def test_full_refresh_gives_bit_identical_results(scheduled_history: dict[str, Any]) -> None:
    pipeline: Pipeline = scheduled_history["pipeline"]
    run_time = scheduled_history["observed"][-1]["report"].run_time
    columns = "window_start, location, reading_count, mean_value, value_sum, readings_digest"
    incremental = pipeline.spark.sql(f"select {columns} from {pipeline.means_table}").collect()
    pipeline.project.invoke(
        ["run", "--full-refresh", "--select", f"+tag:{pipeline.pipeline_tag}"],
        {"run_time": format_timestamp(run_time)},
    )
    rebuilt = pipeline.spark.sql(f"select {columns} from {pipeline.means_table}").collect()
    key = lambda row: (row["window_start"], row["location"])
    assert sorted(incremental, key=key) == sorted(rebuilt, key=key)
    assert len(rebuilt) > 100


def test_too_late_rows_are_listed_not_counted(scheduled_history: dict[str, Any]) -> None:
    pipeline: Pipeline = scheduled_history["pipeline"]
    run_time = scheduled_history["observed"][-1]["report"].run_time
    listed = pipeline.spark.table(pipeline.too_late_table)
    raw_too_late = (
        pipeline.spark.table(pipeline.raw_table)
        .where(F.col("event_id").startswith("wl-tl-") & (F.col("ingested_at") <= F.lit(run_time)))
        .count()
    )
    assert raw_too_late > 0
    assert listed.where("too_late_reason = 'arrived_after_final' and event_id like 'wl-tl-%'").count() == raw_too_late
    assert listed.where("seconds_after_final <= 0").count() == 0


DOCS_SQL = Path(__file__).resolve().parents[2] / "docs" / "sql"


def comparable_sql(text: str, schemas: dict[str, str]) -> str:
    """SQL with what depends on the data and the settings (schemas, times, numbers, spacing) made
    generic, so the same macros give the same text on any warehouse."""
    for schema, placeholder in schemas.items():
        text = re.sub(rf"\b{re.escape(schema)}\.", f"{placeholder}.", text)
    text = re.sub(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?", "<time>", text)
    text = re.sub(r"\b\d+\b", "<n>", text)
    return " ".join(text.split())


def test_docs_sql_matches_what_each_mode_compiles(scheduled_history: dict[str, Any]) -> None:
    """docs/sql shows what a run executes (make sql-docs, on the demo's data); the same nodes compiled
    here must read the same but for data and settings, so a change to the macros cannot leave it
    stale. Iceberg's SQL: Delta's compiles from the same macros."""
    pipeline = scheduled_history["pipeline"]
    project = pipeline.project
    if project.environment.table_format != "iceberg":
        pytest.skip("docs/sql holds the Iceberg runs' SQL")
    run_time = scheduled_history["observed"][-1]["report"].run_time + timedelta(minutes=3)
    here = {project.target_schema(): "<schema>", project.raw_schema(): "<raw>"}
    documented_schemas = {"analytics": "<schema>", "raw": "<raw>"}
    for mode in MODES:
        documented = parse_rendered((DOCS_SQL / f"{mode}.sql").read_text())
        compiled = compile_run(project, run_time, mode, f"tag:{pipeline.pipeline_tag},tag:late_data")
        assert {node.name for node in compiled} <= set(documented), f"{mode}: nodes missing from docs/sql"
        for node in compiled:
            ours = comparable_sql(node.render().partition("\n")[2], here)
            theirs = comparable_sql(documented[node.name], documented_schemas)
            assert ours == theirs, f"docs/sql/{mode}.sql is stale for {node.name}: run make sql-docs"
