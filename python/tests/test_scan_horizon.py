"""A scheduled run reads only what can change its windows, and loses nothing by doing so: on a few
hand-made rows here; a scheduled scenario's run with every file older than its horizon moved away is
in test_scenario_oracle.py, on that module's pipeline."""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta
from pathlib import Path

from late_data.oracles.demo_pipelines import compare_window_means
from late_data.project.raw_tables import Reading, append_readings
from late_data.tables.history import delta_active_files
from tests.helpers import (
    TEST_SETTINGS,
    WINDOW_MEANS_COLUMNS,
    Pipeline,
    clock,
    data_file_path,
    partition_of,
)


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
            (data_file_path(file.path), (file.partition[0], file.partition[1]))
            for file in delta_active_files(pipeline.spark, history)
        ]
    rows = pipeline.spark.sql(
        f"select file_path, partition.partition_start as time_partition, partition.series_bucket as bucket"
        f" from {history}.all_files"
    ).collect()
    return [(data_file_path(row["file_path"]), (row["time_partition"], row["bucket"])) for row in rows]
