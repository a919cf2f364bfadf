"""The scheduled path against the oracle, run after run, with the table format's commit log as
witness; then, on the same pipeline, the next run with the files older than its scan horizon moved
away, and table maintenance, which bounds what every run commits and changes no number.

One scenario serves every test of the module: a scheduled pipeline's runs are what each test reads,
and building one costs more than all its readings (docs/testing.md). Maintenance is read from each
table format's own metadata: Iceberg's `{table}.snapshots` and `{table}.files`, Delta's DESCRIBE
HISTORY, DESCRIBE DETAIL and the files in the table's folder."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

from late_data.commands.explain import MODES, compile_run, parse_rendered
from late_data.oracles.demo_pipelines import compare_means, compare_window_means, expected_window_means
from late_data.project.audit import resume_point
from late_data.publishing.named_versions import NamedVersion, record
from late_data.running.scheduler import RunReport, run_simulated, scenario_feed
from late_data.runtime.timeutil import format_timestamp
from late_data.tables.delta_log import DataFile
from late_data.tables.delta_log_files import local_path
from late_data.tables.history import commits_after, delta_active_files
from late_data.tables.versions import NAMED_VERSION_SECONDS, current_metadata_file, hold_for_named_version
from tests.helpers import (
    TEST_SETTINGS,
    TEST_VARS,
    WINDOW_MEANS_COLUMNS,
    WRITE_DELAY_SECONDS,
    Pipeline,
    data_file_path,
    oracle_partitions_changed,
    partition_of,
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

    feed = scenario_feed(pipeline.project, pipeline.raw_tables, ORIGIN, water_levels=SCENARIO)
    run_simulated(
        pipeline.project,
        feed,
        ORIGIN,
        ORIGIN + timedelta(minutes=SCENARIO_MINUTES),
        timedelta(minutes=MINUTES_BETWEEN_RUNS),
        timedelta(seconds=10),
        after_run,
        pipeline_tag=pipeline.pipeline_tag,
    )
    # The later runs of the tests below are scheduled ones, not a first build of the whole DAG.
    pipeline.runs = len(observed)
    return {"pipeline": pipeline, "feed": feed, "observed": observed, "runs": SCENARIO_MINUTES // MINUTES_BETWEEN_RUNS}


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


# The scan horizon, then table maintenance: both on the scenario's pipeline as the tests above left
# it (its runs, the rerun and the full refresh), each going on from its last run. Last in the module,
# in this order: the horizon's run moves files away and back; maintenance expires what the as-of
# reads above need.


def files_before(pipeline: Pipeline, horizon: datetime) -> list[Path]:
    """Data files of the raw, versions, result and history tables that hold nothing a run with this
    horizon needs: raw and versions files whose every row happened and arrived before it, result
    and history files of partitions before it. Per-file upper bounds come from Iceberg's
    `readable_metrics`, or from the maxValues statistics of Delta's add actions."""
    schema = pipeline.project.target_schema()
    row_tables = (pipeline.raw_table, f"{schema}.int_water_level__versions")
    partitioned_tables = (pipeline.means_table, f"{schema}.water_level_window_means_history__closed")
    if pipeline.project.environment.table_format == "delta":
        return delta_files_before(pipeline, horizon, row_tables, partitioned_tables)
    at = f"timestamp'{horizon:%Y-%m-%d %H:%M:%S}'"
    raw = [
        row
        for table in row_tables
        for row in pipeline.spark.sql(
            f"""
            select file_path from {table}.files
            where readable_metrics.event_time.upper_bound < {at} and readable_metrics.ingested_at.upper_bound < {at}
            """
        ).collect()
    ]
    results = [
        row
        for table in partitioned_tables
        for row in pipeline.spark.sql(
            f"select file_path from {table}.files where partition.partition_start < {at}"
        ).collect()
    ]
    return [data_file_path(row["file_path"]) for row in raw + results]


def delta_files_before(
    pipeline: Pipeline, horizon: datetime, row_tables: tuple[str, ...], partitioned_tables: tuple[str, ...]
) -> list[Path]:
    # Delta keeps timestamp statistics to the millisecond, truncated: a file's latest row can be up
    # to 1 ms after its recorded maximum, so a file counts as before the horizon only with that margin.
    truncation = timedelta(milliseconds=1)

    def before(file: DataFile, column: str) -> bool:
        upper = file.max_values.get(column)
        return upper is not None and upper + truncation <= horizon

    raw = [
        file
        for table in row_tables
        for file in delta_active_files(pipeline.spark, table)
        if before(file, "event_time") and before(file, "ingested_at")
    ]
    results = [
        file
        for table in partitioned_tables
        for file in delta_active_files(pipeline.spark, table)
        if file.partition[0] is not None and file.partition[0] < horizon
    ]
    return [data_file_path(file.path) for file in raw + results]


def test_a_scheduled_run_reads_no_file_older_than_its_horizon(
    scheduled_history: dict[str, Any], tmp_path: Path
) -> None:
    """Old data files are moved away during the next scheduled run: it can only succeed if it never opens them."""
    pipeline: Pipeline = scheduled_history["pipeline"]
    last = scheduled_history["observed"][-1]["report"].run_time
    run_time = last + timedelta(minutes=MINUTES_BETWEEN_RUNS)
    scheduled_history["feed"](last, run_time)
    # The oldest partition the next run can change: the late window (plus a window, plus the write
    # delay a raw row may have) before the last run.
    horizon = partition_of(
        last
        - timedelta(seconds=TEST_VARS["late_window_seconds"] + TEST_VARS["window_size_seconds"] + WRITE_DELAY_SECONDS)
    )
    hidden = files_before(pipeline, horizon)
    assert len(hidden) >= 10, "the history should hold files the run does not need"
    moved = {path: tmp_path / f"{index}.parquet" for index, path in enumerate(hidden)}
    for source, target in moved.items():
        shutil.move(source, target)
    try:
        report = pipeline.run(run_time)
    finally:
        for source, target in moved.items():
            shutil.move(target, source)
    assert report.partitions_rewritten > 0
    comparison = compare_window_means(pipeline.spark, pipeline.raw_table, pipeline.means_table, run_time, TEST_SETTINGS)
    assert comparison.windows_checked > 0
    assert comparison.mismatched == 0, comparison.examples


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
    reports: list[RunReport]  # the scenario's runs
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
def maintained(scheduled_history: dict[str, Any]) -> Maintained:
    """The scenario's pipeline maintained (keep_hours 0, keep_snapshots 1) after the tests above, the
    counts taken right before and after, so the order of the tests below does not matter."""
    pipeline: Pipeline = scheduled_history["pipeline"]
    project = pipeline.project
    spark, schema, fmt = pipeline.spark, project.target_schema(), project.environment.table_format
    reports = [step["report"] for step in scheduled_history["observed"]]
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
        feed=scheduled_history["feed"],
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
    pipeline = maintained.pipeline
    last = resume_point(pipeline.project).last_success
    assert last is not None
    run_time = last + timedelta(minutes=MINUTES_BETWEEN_RUNS)
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
