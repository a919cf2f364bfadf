"""Table maintenance bounds what every run commits and changes no number.

Read from each table format's own metadata: Iceberg's `{table}.snapshots` and `{table}.files`,
Delta's DESCRIBE HISTORY, DESCRIBE DETAIL and the files in the table's folder. One scenario and one
maintenance run serve every test of the module; the counts are taken right after them, so the
tests' order does not matter."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pytest

from late_data.oracles.demo_pipelines import compare_window_means
from late_data.publishing.named_versions import NamedVersion, record
from late_data.running.scheduler import RunReport, run_simulated, scenario_feed
from late_data.tables.delta_log_files import local_path
from late_data.tables.versions import NAMED_VERSION_SECONDS, current_metadata_file, hold_for_named_version
from tests.helpers import TEST_SETTINGS, TEST_VARS, Pipeline, water_levels

ORIGIN = datetime(2026, 3, 5, 6, 0, 0)
INTERVAL = timedelta(minutes=5)


def commit_count(spark: Any, table: str, table_format: str) -> int:
    """Versions of the table its metadata still holds (what time travel can reach)."""
    if table_format == "iceberg":
        return int(spark.sql(f"select count(*) from {table}.snapshots").first()[0])
    return spark.sql(f"describe history {table}").count()


def data_files(spark: Any, table: str, table_format: str) -> int:
    """Data files of the table's current version."""
    if table_format == "iceberg":
        return int(spark.sql(f"select count(*) from {table}.files").first()[0])
    return int(spark.sql(f"describe detail {table}").first()["numFiles"])


def files_on_disk(spark: Any, table: str) -> int:
    """Delta: the data files in the table's folder, those of older versions VACUUM left included."""
    location = local_path(str(spark.sql(f"describe detail {table}").first()["location"]))
    return sum(1 for path in location.rglob("*.parquet") if "_delta_log" not in path.parts)


def retention_properties(spark: Any, table: str) -> tuple[str | None, str | None]:
    properties = {row["key"]: row["value"] for row in spark.sql(f"show tblproperties {table}").collect()}
    return properties.get("delta.deletedFileRetentionDuration"), properties.get("delta.logRetentionDuration")


def operations(spark: Any, table: str, after_version: int) -> list[str]:
    """Delta: the operations committed after a version, oldest first."""
    rows = spark.sql(f"describe history {table}").where(f"version > {after_version}").orderBy("version").collect()
    return [row["operation"] for row in rows]


@dataclass
class Maintained:
    pipeline: Pipeline
    feed: Callable[[datetime, datetime], Any]
    reports: list[RunReport]
    tables: list[str]  # means, too-late listing, history
    audit: str
    commits_before: dict[str, int]
    commits_after: dict[str, int]
    audit_files_before: int
    audit_files_after: int
    unchanged: tuple[Any, Any]  # (before, after): means rows, history and audit row counts
    audit_operations: list[str]  # Delta: what maintenance committed to the audit
    held: tuple[int, list[Any]] | None  # Delta: the means' version a named version holds, its rows


@pytest.fixture(scope="module")
def maintained(project: Any) -> Maintained:
    pipeline = Pipeline(project, TEST_VARS)
    spark, schema, fmt = pipeline.spark, project.target_schema(), project.environment.table_format
    scenario = water_levels(late_share=0.3)
    feed = scenario_feed(project, pipeline.raw_tables, ORIGIN, water_levels=scenario)
    reports = run_simulated(
        project,
        feed,
        ORIGIN,
        ORIGIN + timedelta(minutes=20),  # four runs: enough for a version three commits back
        INTERVAL,
        timedelta(seconds=10),
        pipeline_tag="water_level",
    )
    pipeline.runs = len(reports)
    # A history is a view: its table is its closed versions'.
    tables = [pipeline.means_table, pipeline.too_late_table, f"{schema}.water_level_window_means_history__closed"]
    audit = f"{schema}.late_data_run_audit"
    state = lambda: (
        pipeline.rows(pipeline.means_table),
        spark.table(tables[2]).count(),
        spark.table(audit).count(),
    )
    commits_before = {table: commit_count(spark, table, fmt) for table in [*tables, audit]}
    audit_files_before, before = data_files(spark, audit, fmt), state()
    audit_version = spark.sql(f"describe history {audit}").first()["version"] if fmt == "delta" else 0
    held = None
    if fmt == "delta":
        # A named version of the means three commits back, whose files the later runs replaced.
        version = spark.sql(f"describe history {tables[0]} limit 1").first()["version"] - 3
        held = (version, spark.sql(f"select * from {tables[0]} version as of {version}").collect())
        record(
            project, NamedVersion("held", "backfill", "published", ["water_level"], None, tables={tables[0]: version})
        )

    project.invoke(["run-operation", "late_data.maintain_tables", "--args", "{keep_hours: 0, keep_snapshots: 1}"])

    return Maintained(
        pipeline=pipeline,
        feed=feed,
        reports=reports,
        tables=tables,
        audit=audit,
        commits_before=commits_before,
        commits_after={table: commit_count(spark, table, fmt) for table in [*tables, audit]},
        audit_files_before=audit_files_before,
        audit_files_after=data_files(spark, audit, fmt),
        unchanged=(before, state()),
        audit_operations=operations(spark, audit, audit_version) if fmt == "delta" else [],
        held=held,
    )


def test_every_run_commits_and_appends_a_file_to_the_audit(maintained: Maintained) -> None:
    means, too_late, history = maintained.tables
    runs = len(maintained.reports)
    # The means table commits on every run that changes a window, the history's closed versions on
    # every run that closed one (and once when built), the too-late listing only on runs that found a
    # too-late row.
    assert maintained.commits_before[means] >= runs - 1
    spark = maintained.pipeline.spark
    closing = spark.sql(
        f"select count_if(rows_written > 0) from {maintained.audit} where model = 'water_level_window_means_history'"
    ).first()[0]
    assert closing >= runs // 2
    assert closing <= maintained.commits_before[history] <= closing + 1
    assert maintained.commits_before[too_late] >= 1
    assert maintained.audit_files_before >= runs


def test_maintenance_compacts_the_audit_and_changes_no_number(maintained: Maintained) -> None:
    assert maintained.audit_files_after == 1
    before, after = maintained.unchanged
    assert after == before
    if maintained.pipeline.project.environment.table_format == "delta":
        assert "OPTIMIZE" in maintained.audit_operations, maintained.audit_operations


def test_maintenance_expires_old_snapshots(maintained: Maintained) -> None:
    if maintained.pipeline.project.environment.table_format == "delta":
        pytest.skip("Delta keeps versions by time only: test_delta_keeps_keep_hours_of_files_and_log")
    assert maintained.commits_after == {table: 1 for table in maintained.commits_after}


def test_delta_keeps_keep_hours_of_files_and_log(maintained: Maintained) -> None:
    """keep_hours=0: VACUUM leaves only the current version's files and both retentions are 0
    seconds, except on the means, which a named version of the last 168 hours holds: 168 hours, and
    its version still reads as it did. With nothing changed, maintaining again commits no property;
    staging a backfill holds a shortened table for its named version, and leaves a user's retention alone."""
    project = maintained.pipeline.project
    if project.environment.table_format != "delta":
        pytest.skip("Iceberg expires snapshots: test_maintenance_expires_old_snapshots")
    spark, (means, too_late, history), audit = project.spark, maintained.tables, maintained.audit
    for table in (too_late, history, audit):
        assert retention_properties(spark, table) == ("interval 0 seconds",) * 2, table
        assert files_on_disk(spark, table) == spark.sql(f"describe detail {table}").first()["numFiles"], table
    held = f"interval {NAMED_VERSION_SECONDS} seconds"
    assert retention_properties(spark, means) == (held, held)
    assert files_on_disk(spark, means) > spark.sql(f"describe detail {means}").first()["numFiles"]
    assert maintained.held is not None
    version, rows = maintained.held
    assert spark.sql(f"select * from {means} version as of {version}").collect() == rows

    versions = {table: spark.sql(f"describe history {table} limit 1").first()["version"] for table in (means, audit)}
    project.invoke(["run-operation", "late_data.maintain_tables", "--args", "{keep_hours: 0, keep_snapshots: 1}"])
    for table, before in versions.items():
        assert "SET TBLPROPERTIES" not in operations(spark, table, before), table

    hold_for_named_version(project, too_late)
    assert retention_properties(spark, too_late) == (held, held)
    spark.sql(f"alter table {too_late} set tblproperties ('delta.logRetentionDuration' = 'interval 1 hours')")
    hold_for_named_version(project, too_late)  # a retention the user wrote is theirs
    assert retention_properties(spark, too_late) == (held, "interval 1 hours")


def test_the_next_run_still_finds_what_changed(maintained: Maintained) -> None:
    pipeline, last = maintained.pipeline, maintained.reports[-1].run_time
    run_time = last + INTERVAL
    maintained.feed(last, run_time)
    assert pipeline.run(run_time).partitions_rewritten > 0
    comparison = compare_window_means(pipeline.spark, pipeline.raw_table, pipeline.means_table, run_time, TEST_SETTINGS)
    assert comparison.mismatched == 0, comparison.examples


def test_an_iceberg_table_keeps_its_newest_metadata_files_only(maintained: Maintained) -> None:
    """Every commit writes a metadata file holding every kept snapshot; Iceberg deletes none of the
    old ones unless told to, so at a run a minute a table's metadata folder grew without bound
    (bench/soak_100_heavy.md). The package's tables keep their newest 20: 30 more commits leave 21
    files (the current one and 20 before it), every table built or maintained by the package."""
    project = maintained.pipeline.project
    if project.environment.table_format == "delta":
        pytest.skip("Delta's log is bounded by its retention (test_delta_keeps_keep_hours_of_files_and_log)")
    spark = project.spark
    history = maintained.tables[2]
    for table in [*maintained.tables, maintained.audit]:
        properties = {row["key"]: row["value"] for row in spark.sql(f"show tblproperties {table}").collect()}
        assert properties.get("write.metadata.delete-after-commit.enabled") == "true", table
        assert properties.get("write.metadata.previous-versions-max") == "20", table
    for number in range(30):  # metadata-only commits, each a new metadata file
        spark.sql(f"alter table {history} set tblproperties ('late_data.test_commit' = '{number}')")
    folder = local_path(current_metadata_file(project, history)).parent
    assert len(list(folder.glob("*.metadata.json"))) == 21
    spark.sql(f"alter table {history} unset tblproperties ('late_data.test_commit')")
