"""A scheduled run reads only what can change its windows, and loses nothing by doing so."""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta
from pathlib import Path

from late_data.oracles.demo_pipelines import compare_window_means
from late_data.project.raw_tables import Reading, append_readings
from late_data.running.scheduler import run_simulated, scenario_feed
from late_data.tables.delta_log import DataFile
from late_data.tables.history import delta_active_files
from tests.helpers import (
    TEST_SETTINGS,
    TEST_VARS,
    WINDOW_MEANS_COLUMNS,
    WRITE_DELAY_SECONDS,
    Pipeline,
    clock,
    partition_of,
    water_levels,
)

ORIGIN = datetime(2026, 3, 4, 6, 0, 0)


def local_path(file_path: str) -> Path:
    return Path(file_path.removeprefix("file:"))


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
    return [local_path(row["file_path"]) for row in raw + results]


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
    return [local_path(file.path) for file in raw + results]


def test_a_scheduled_run_reads_no_file_older_than_its_horizon(pipeline: Pipeline, tmp_path: Path) -> None:
    """Old data files are moved away during one scheduled run: it can only succeed if it never opens them."""
    scenario = water_levels(locations=4, late_share=0.3)
    feed = scenario_feed(pipeline.project, pipeline.raw_tables, ORIGIN, water_levels=scenario)
    interval, offset = timedelta(minutes=10), timedelta(seconds=10)
    reports = run_simulated(
        pipeline.project, feed, ORIGIN, ORIGIN + timedelta(minutes=40), interval, offset, pipeline_tag="water_level"
    )
    pipeline.runs = len(reports)
    last = reports[-1].run_time
    run_time = last + interval
    feed(last, run_time)
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


def test_a_correction_that_arrived_before_the_horizon_still_supersedes(pipeline: Pipeline) -> None:
    """A device clock an hour ahead sends a reading from the future; a correction moves it back to
    the present before either leaves the scan horizon by event time. The reading stays in the
    range a later run checks, its correction does not: the run must still read the correction."""
    at = clock(datetime(2026, 3, 4, 8, 0, 0))
    append_readings(
        pipeline.spark,
        pipeline.raw_table,
        [
            Reading("skewed", "pier", at(60), 5.0, at(1)),
            Reading("skewed", "pier", at(1), 7.0, at(2)),
            Reading("steady", "pier", at(20), 1.0, at(20.5)),
        ],
    )
    for minutes in (3, 30, 50):
        pipeline.run(at(minutes))
    # At 08:50 the run checks from 08:15 on: the reading (event 09:00) is inside, its correction
    # (event 08:01, arrived 08:02) is not.
    windows = {(row["location"], row["window_start"]): row for row in pipeline.rows(pipeline.means_table)}
    assert ("pier", at(60)) not in windows
    assert windows[("pier", at(1))]["mean_value"] == 7.0
    comparison = compare_window_means(pipeline.spark, pipeline.raw_table, pipeline.means_table, at(50), TEST_SETTINGS)
    assert comparison.mismatched == 0, comparison.examples


def test_the_history_reads_and_writes_only_the_pairs_its_result_rewrote(pipeline: Pipeline, tmp_path: Path) -> None:
    """A late reading changes one location's window. The result table rewrites that location's
    (time partition, series bucket); the history appends the version it closed there: every file of
    the history's closed versions is moved away during the run (three earlier runs closed versions
    of every location), which can only succeed if the append never opens them, and the history's
    own commit touches that pair only."""
    at = clock(datetime(2026, 3, 4, 9, 0, 0))
    locations = ["harbour", "bridge", "quay", "pier", "lock", "weir"]
    buckets = {location: pipeline.bucket_of(location) for location in locations}
    late = "harbour"
    assert len(set(buckets.values())) > 1 and sum(b == buckets[late] for b in buckets.values()) < len(locations)
    append_readings(
        pipeline.spark,
        pipeline.raw_table,
        [
            Reading(f"{location}-{minute}", location, at(minute), 1.0, at(minute + 0.2))
            for location in locations
            for minute in (1, 2, 6)
        ],
    )
    pipeline.run(at(7))
    for late_round in range(2):
        arrived = at(7.1 + 0.2 * late_round)
        readings = [Reading(f"{location}-{late_round}", location, at(2.5), 2.0, arrived) for location in locations]
        append_readings(pipeline.spark, pipeline.raw_table, readings)
        pipeline.run(arrived + timedelta(seconds=5))
    # Late for the 09:06 window, which stays open past the next run (09:01's became final at 09:07).
    append_readings(pipeline.spark, pipeline.raw_table, [Reading("harbour-late", late, at(6.5), 5.0, at(7.7))])
    changed = (partition_of(at(6.5)), buckets[late])
    history = f"{pipeline.project.target_schema()}.water_level_window_means_history__closed"
    version = pipeline.version_of(history)
    others = [path for path in history_files(pipeline, history) if path[1] != changed]
    assert len(others) >= 3, "the history should hold files of other pairs"
    moved = {source: tmp_path / f"{index}.parquet" for index, (source, _) in enumerate(others)}
    for source, target in moved.items():
        shutil.move(source, target)
    try:
        report = pipeline.run(at(7.9))  # before the 09:02 windows become final
    finally:
        for source, target in moved.items():
            shutil.move(target, source)
    assert report.windows_changed == 1
    touched = pipeline.touched_since(history, version)
    assert touched and {partition[:2] for partition in touched} == {changed}, touched
    as_of = sorted(pipeline.history_as_of(at(7.9)).collect())
    assert as_of == sorted(pipeline.spark.sql(f"select {WINDOW_MEANS_COLUMNS} from {pipeline.means_table}").collect())


def history_files(pipeline: Pipeline, history: str) -> list[tuple[Path, tuple[datetime, int]]]:
    """Every live data and delete file of a history, with its (time partition, series bucket)."""
    if pipeline.project.environment.table_format == "delta":
        return [
            (local_path(file.path), (file.partition[0], file.partition[1]))
            for file in delta_active_files(pipeline.spark, history)
        ]
    rows = pipeline.spark.sql(
        f"select file_path, partition.partition_start as time_partition, partition.series_bucket as bucket"
        f" from {history}.all_files"
    ).collect()
    return [(local_path(row["file_path"]), (row["time_partition"], row["bucket"])) for row in rows]
