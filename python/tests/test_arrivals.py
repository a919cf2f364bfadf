"""What a run starts from: the versions loaded since the previous run. Rows written late, drifted
checksums, a failed snapshot and bad settings, and how reconciliation and catch-up repair them."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from late_data.oracles.demo_pipelines import compare_window_means
from late_data.project.raw_tables import Reading, append_readings
from late_data.running.scheduler import run_pipeline, scenario_feed, scheduled_selection
from late_data.runtime.dbt_errors import DbtInvocationError
from late_data.tables.history import commits_after
from tests.helpers import (
    TEST_SETTINGS,
    TEST_VARS,
    WINDOW_MEANS_COLUMNS,
    WRITE_DELAY_SECONDS,
    Pipeline,
    clock,
    water_levels,
)

T0 = datetime(2026, 3, 6, 8, 0, 0)
at = clock(T0)


def mismatched(pipeline: Pipeline, run_time: datetime) -> int:
    comparison = compare_window_means(pipeline.spark, pipeline.raw_table, pipeline.means_table, run_time, TEST_SETTINGS)
    assert comparison.windows_checked > 0
    return comparison.mismatched


def reconcile(pipeline: Pipeline, run_time: datetime) -> Any:
    pipeline.runs += 1
    return run_pipeline(
        pipeline.project, run_time, scheduled_selection(pipeline.project, pipeline.pipeline_tag), reconcile=True
    )


def test_a_row_written_after_its_run_with_an_earlier_stamp_still_counts(pipeline: Pipeline) -> None:
    append_readings(pipeline.spark, pipeline.raw_table, [Reading("a", "weir", at(1.2), 1.0, at(1.3))])
    pipeline.run(at(2))
    # Stamped a minute before that run (the writer's clock, or a slow commit), written after it.
    append_readings(pipeline.spark, pipeline.raw_table, [Reading("b", "weir", at(1.5), 3.0, at(1))])
    report = pipeline.run(at(4))
    assert report.versions_loaded == 1
    window = pipeline.spark.sql(f"select * from {pipeline.means_table} where location = 'weir'").first()
    assert (window["reading_count"], window["mean_value"]) == (2, 2.0)
    assert mismatched(pipeline, at(4)) == 0


def test_reconciliation_repairs_what_the_arrival_driven_path_missed(pipeline: Pipeline) -> None:
    scenario = water_levels(locations=5)
    feed = scenario_feed(pipeline.project, pipeline.raw_tables, T0, water_levels=scenario)
    # (A reconciliation with nothing to repair: test_bad_input's status test.)
    feed(at(0), at(9))
    pipeline.run(at(9))

    # 1. The stored checksums drift (an edit by hand, a bug): arrival-driven runs never look again.
    pipeline.spark.sql(
        f"update {pipeline.means_table} set reading_count = reading_count + 1"
        f" where location = 'loc-00001' and window_start = timestamp'{at(8):%Y-%m-%d %H:%M:%S}'"
    )
    # 2. A row stamped before the write delay the scheduled runs allow for, written only now.
    append_readings(
        pipeline.spark,
        pipeline.raw_table,
        [Reading("written-late", "loc-00002", at(9.5), 100.0, at(9) - timedelta(seconds=WRITE_DELAY_SECONDS + 60))],
    )
    feed(at(9), at(12))
    pipeline.run(at(12))
    assert mismatched(pipeline, at(12)) == 2

    report = reconcile(pipeline, at(13))
    assert report.windows_repaired == 2
    assert mismatched(pipeline, at(13)) == 0
    schema = pipeline.project.target_schema()
    audit = pipeline.spark.sql(
        f"select windows_repaired from {schema}.late_data_run_audit"
        f" where model = 'water_level_window_means' and run_kind = 'reconcile' and outcome = 'success' order by run_time"
    ).collect()
    assert [row["windows_repaired"] for row in audit] == [2]
    feed(at(12), at(15))
    pipeline.run(at(15))  # the arrival-driven path goes on from the repaired state
    assert mismatched(pipeline, at(15)) == 0


def test_history_records_the_runs_a_failed_snapshot_missed(pipeline: Pipeline) -> None:
    """A snapshot fails after its result table moved on. The next run holds the result table until
    the history has recorded what the failed run published, stamped with that run (the window that
    vanished in it included); the run after catches up. As of every run time, the history gives
    the table as that run left it."""
    scenario = water_levels(correction_share=0.05, moved_correction_share=0.5)
    feed = scenario_feed(pipeline.project, pipeline.raw_tables, T0, water_levels=scenario)
    add = lambda *readings: append_readings(pipeline.spark, pipeline.raw_table, readings)
    add(Reading("solo", "pier", at(4.5), 2.0, at(4.6)))  # the only reading of pier's 08:04 window
    published: dict[datetime, list[Any]] = {}
    run_times = [at(minutes) for minutes in (6, 9, 12, 15)]
    history = f"{pipeline.project.target_schema()}.water_level_window_means_history"
    for step, run_time in enumerate(run_times):
        feed(run_times[step - 1] if step else T0, run_time)
        if step == 1:
            # The correction moves it to 08:08, and the snapshot of this run fails: the history's
            # closed versions have a column the versions it closes do not, so they cannot be appended.
            add(Reading("solo", "pier", at(8.5), 2.0, at(8.6)))
            pipeline.spark.sql(f"alter table {history}__closed add columns (blocker int)")
            with pytest.raises(DbtInvocationError, match="water_level_window_means_history"):
                pipeline.run(run_time)
            pipeline.spark.sql(f"alter table {history}__closed drop column blocker")
            assert mismatched(pipeline, run_time) == 0  # the result table moved on
        else:
            pipeline.run(run_time)
        published[run_time] = sorted(
            pipeline.spark.sql(f"select {WINDOW_MEANS_COLUMNS} from {pipeline.means_table}").collect()
        )

    assert published[run_times[2]] == published[run_times[1]]  # held while the history caught up
    assert mismatched(pipeline, run_times[3]) == 0  # then moved on with everything since
    for run_time, rows in published.items():
        as_of = pipeline.history_as_of(run_time).collect()
        assert sorted(as_of) == rows, run_time
    schema = pipeline.project.target_schema()
    pier = pipeline.spark.sql(
        f"select window_start, dbt_valid_from, dbt_valid_to from {schema}.water_level_window_means_history"
        " where location = 'pier' order by window_start"
    ).collect()
    assert [(row["window_start"], row["dbt_valid_from"], row["dbt_valid_to"]) for row in pier] == [
        (at(4), run_times[0], run_times[1]),  # closed at the failed run, which found it vanished
        (at(8), run_times[1], None),  # published by the failed run
    ]


def test_a_run_with_nothing_new_commits_nothing(pipeline: Pipeline) -> None:
    append_readings(pipeline.spark, pipeline.raw_table, [Reading("c", "lock", at(0.5), 1.0, at(0.6))])
    pipeline.run(at(1))
    fmt = pipeline.project.environment.table_format
    schema = pipeline.project.target_schema()
    tables = [
        f"{schema}.int_water_level__versions",
        pipeline.means_table,
        pipeline.too_late_table,
        f"{schema}.water_level_window_means_history__closed",
    ]
    versions = {table: pipeline.version_of(table) for table in tables}
    report = pipeline.run(at(3))  # no arrivals, no window becomes final
    assert (report.versions_loaded, report.windows_changed, report.partitions_rewritten) == (0, 0, 0)
    assert {table: commits_after(pipeline.spark, table, fmt, versions[table]) for table in tables} == {
        table: [] for table in tables
    }


def test_bad_settings_are_refused_naming_the_setting(pipeline: Pipeline) -> None:
    append_readings(pipeline.spark, pipeline.raw_table, [Reading("d", "quay", at(0.5), 1.0, at(0.6))])
    pipeline.run(at(1))
    pipeline.project.use_vars({**TEST_VARS, "series_buckets": 6})
    with pytest.raises(
        DbtInvocationError, match="var series_buckets=6 differs from the 4 that water_level_window_means"
    ):
        pipeline.run(at(2))
    # The refusal comes from the ephemeral comparison model; the audit records its model as failed.
    outcomes = pipeline.spark.sql(
        f"select outcome from {pipeline.project.target_schema()}.late_data_run_audit"
        f" where model = 'water_level_window_means' and run_time = timestamp'{at(2):%Y-%m-%d %H:%M:%S}'"
    ).collect()
    assert sorted(row["outcome"] for row in outcomes) == ["error"]
    pipeline.project.use_vars({**TEST_VARS, "write_delay_seconds": -5})
    with pytest.raises(DbtInvocationError, match="var write_delay_seconds=-5 must be a whole number, at least 0"):
        pipeline.run(at(2))
    pipeline.project.use_vars(TEST_VARS)
    with pytest.raises(DbtInvocationError, match="var reconcile must be true or false"):
        pipeline.project.invoke(
            ["run", "--select", "water_level_window_means"], {"run_time": "2026-03-06 08:02:00", "reconcile": "maybe"}
        )
    with pytest.raises(DbtInvocationError, match=r"is before the last run of .*runs only move forward in time"):
        pipeline.run(at(0.5))
