"""Table maintenance bounds what every run commits and changes no number."""

from __future__ import annotations

from datetime import datetime, timedelta

from late_data.generator import Scenario
from late_data.oracle import WindowSettings, compare_window_means
from late_data.pipeline import run_simulated, scenario_feed
from tests.conftest import TEST_VARS, Pipeline

ORIGIN = datetime(2026, 3, 5, 6, 0, 0)


def test_maintenance_expires_snapshots_and_compacts_the_audit(pipeline: Pipeline) -> None:
    spark, schema = pipeline.spark, pipeline.project.target_schema()
    scenario = Scenario(locations=4, late_share=0.3, max_lateness_seconds=600, late_window_seconds=600)
    feed = scenario_feed(pipeline.project, pipeline.raw_tables, ORIGIN, water_levels=scenario)
    interval, offset = timedelta(minutes=5), timedelta(seconds=10)
    reports = run_simulated(
        pipeline.project, feed, ORIGIN, ORIGIN + timedelta(minutes=30), interval, offset, pipeline_tag="water_level"
    )
    pipeline.runs = len(reports)
    tables = [pipeline.means_table, pipeline.too_late_table, f"{schema}.water_level_window_means_history"]
    audit = f"{schema}.late_data_run_audit"
    snapshots = lambda table: spark.sql(f"select count(*) from {table}.snapshots").first()[0]
    data_files = lambda table: spark.sql(f"select count(*) from {table}.files").first()[0]
    # The means and history tables commit on every run that changes a window; the too-late listing
    # only on runs that found a too-late row.
    assert all(snapshots(table) >= len(reports) - 1 for table in tables[::2])
    assert snapshots(tables[1]) >= 1
    assert data_files(audit) >= len(reports)
    means, history = pipeline.rows(pipeline.means_table), spark.table(tables[2]).count()
    audit_rows = spark.table(audit).count()

    pipeline.project.invoke(
        ["run-operation", "late_data_maintain_tables", "--args", "{keep_hours: 0, keep_snapshots: 1}"]
    )

    assert all(snapshots(table) == 1 for table in [*tables, audit])
    assert data_files(audit) == 1
    assert pipeline.rows(pipeline.means_table) == means
    assert (spark.table(tables[2]).count(), spark.table(audit).count()) == (history, audit_rows)
    # The next run still finds what changed since the last one.
    run_time = reports[-1].run_time + interval
    feed(reports[-1].run_time, run_time)
    assert pipeline.run(run_time).partitions_rewritten > 0
    settings = WindowSettings(TEST_VARS["window_size_seconds"], TEST_VARS["late_window_seconds"])
    comparison = compare_window_means(spark, pipeline.raw_table, pipeline.means_table, run_time, settings)
    assert comparison.mismatched == 0, comparison.examples
