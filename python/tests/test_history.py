"""Versioned truth: status, SCD2 history with reasons, too-late rows, targeted backfills, the run audit."""

from __future__ import annotations

import csv
from datetime import datetime, timedelta
from decimal import Decimal

import pytest

from late_data.project.pipelines import find_pipelines
from late_data.project.raw_tables import Reading, append_readings
from late_data.running.backfill import run_backfill
from late_data.runtime.dbt_errors import DbtInvocationError
from tests.helpers import Pipeline, clock

T0 = datetime(2026, 3, 3, 8, 0, 0)
at = clock(T0)


def revisions(pipeline: Pipeline, location: str) -> list[dict]:
    schema = pipeline.project.target_schema()
    return [
        row.asDict()
        for row in pipeline.spark.sql(
            f"select * from {schema}.water_level_window_revisions where location = '{location}' order by version_number"
        ).collect()
    ]


def history_size(pipeline: Pipeline) -> int:
    return pipeline.spark.table(f"{pipeline.project.target_schema()}.water_level_window_means_history").count()


def test_history_records_each_real_change_with_its_reason(pipeline: Pipeline, tmp_path) -> None:
    add = lambda *readings: append_readings(pipeline.spark, pipeline.raw_table, readings)
    add(Reading("a", "harbour", at(0.2), 1.0, at(0.3)))
    pipeline.run(at(1))
    add(Reading("b", "harbour", at(0.5), 3.0, at(2.5)))  # late row
    pipeline.run(at(3))
    add(Reading("a", "harbour", at(0.2), 2.0, at(4.5)))  # correction of "a"
    pipeline.run(at(5))
    pipeline.run(at(12))  # window 08:00 is final at 08:11
    size = history_size(pipeline)
    add(Reading("c", "harbour", at(0.7), 10.0, at(12.5)))  # too late: no version either
    report = pipeline.run(at(13))
    assert report.too_late_rows == 1
    assert history_size(pipeline) == size

    history = revisions(pipeline, "harbour")
    assert [(h["version_number"], h["revision_reason"]) for h in history] == [
        (1, "initial"),
        (2, "late_data"),
        (3, "correction"),
        (4, "finalized"),
    ]
    assert [h["valid_from"] for h in history] == [at(1), at(3), at(5), at(12)]
    assert [h["valid_to"] for h in history] == [at(3), at(5), at(12), None]
    assert [(h["reading_count"], h["mean_value"], h["is_final"]) for h in history] == [
        (1, 1.0, False),
        (2, 2.0, False),
        (2, 2.5, False),
        (2, 2.5, True),
    ]
    assert (history[1]["value_change"], history[1]["value_change_percent"], history[1]["count_change"]) == (
        1.0,
        100.0,
        1,
    )

    # As of any past run time, the history gives the table as that run left it.
    schema = pipeline.project.target_schema()
    as_of = pipeline.project.invoke(
        ["show", "--select", "water_level_window_means_as_of", "--limit", "10"],
        {"run_time": "2026-03-03 08:13:00", "as_of": "2026-03-03 08:04:00"},
    )
    shown = [
        dict(zip(as_of.result.results[0].agate_table.column_names, row, strict=True))
        for row in as_of.result.results[0].agate_table.rows
    ]
    assert [(row["location"], row["reading_count"], float(row["mean_value"])) for row in shown] == [("harbour", 2, 2.0)]

    # A scheduled run past the late window of 08:00's partition, then the deliberate revision.
    pipeline.run(at(20))
    changes, manifest = run_backfill(
        pipeline.project,
        find_pipelines(pipeline.project),
        at(0),
        at(5),
        timedelta(hours=1),
        include_too_late=True,
        run_time=at(20.5),
        manifest_dir=tmp_path,
    )
    assert [(c.partition_start, c.rows_before, c.rows_after, c.sum_before, c.sum_after) for c in changes] == [
        (at(0), 2, 3, Decimal("5.000000000"), Decimal("15.000000000"))
    ]
    with manifest.open() as handle:
        assert [row["partition_start"] for row in csv.DictReader(handle)] == ["2026-03-03 08:00:00"]
    history = revisions(pipeline, "harbour")
    assert (history[-1]["version_number"], history[-1]["revision_reason"], history[-1]["reading_count"]) == (
        5,
        "backfill",
        3,
    )

    pipeline.run(at(21))  # the next scheduled run leaves the backfilled window alone
    assert len(revisions(pipeline, "harbour")) == 5

    audit = pipeline.spark.sql(
        f"select run_kind, outcome, run_time from {schema}.late_data_run_audit"
        " where model = 'water_level_window_means' and outcome != 'started' order by recorded_at"
    ).collect()
    assert [row["run_kind"] for row in audit].count("backfill") == 1
    assert {row["outcome"] for row in audit} == {"success"}


def test_backfill_of_unchanged_history_changes_nothing(pipeline: Pipeline, tmp_path) -> None:
    append_readings(pipeline.spark, pipeline.raw_table, [Reading("d", "weir", at(1.2), 4.0, at(1.3))])
    pipeline.run(at(2))
    pipeline.run(at(30))
    changes, _ = run_backfill(
        pipeline.project,
        find_pipelines(pipeline.project),
        at(0),
        at(15),
        timedelta(minutes=5),
        include_too_late=False,
        run_time=at(30.5),
        manifest_dir=tmp_path,
    )
    assert changes == []
    assert [h["revision_reason"] for h in revisions(pipeline, "weir")] == ["initial", "finalized"]


def test_backfill_including_too_late_rows_refuses_windows_still_open(pipeline: Pipeline, tmp_path) -> None:
    append_readings(pipeline.spark, pipeline.raw_table, [Reading("e", "lock", at(1.2), 4.0, at(1.3))])
    pipeline.run(at(8))
    with pytest.raises(DbtInvocationError, match=r"a backfill must end by .* still kept by scheduled runs"):
        run_backfill(
            pipeline.project,
            find_pipelines(pipeline.project),
            at(0),
            at(10),
            timedelta(hours=1),
            include_too_late=True,
            run_time=at(8.5),
            manifest_dir=tmp_path,
        )


def test_a_history_table_of_an_earlier_version_is_refused_until_migrated(pipeline: Pipeline) -> None:
    """A history is a view over its closed versions and its result. The one table of every version
    an earlier version of the package kept is refused by name until `dbt run-operation
    late_data.migrate_history` makes the view, every version kept; the refused run's result had
    moved on, and the migration closes the version it replaced, as the history's run would have."""
    schema = pipeline.project.target_schema()
    history, table_format = f"{schema}.water_level_window_means_history", pipeline.project.environment.table_format
    append_readings(pipeline.spark, pipeline.raw_table, [Reading("a", "harbour", at(0.2), 1.0, at(0.3))])
    pipeline.run(at(1))
    append_readings(pipeline.spark, pipeline.raw_table, [Reading("b", "harbour", at(0.5), 3.0, at(1.5))])
    pipeline.run(at(2))
    recorded = sorted(pipeline.spark.table(history).collect())
    assert [row["is_current_version"] for row in recorded] == [False, True]
    # The earlier layout: every version in one table.
    pipeline.spark.sql(f"create table {history}_copy using {table_format} as select * from {history}")
    pipeline.spark.sql(f"drop view {history}")
    pipeline.spark.sql(f"drop table {history}__closed")
    pipeline.spark.sql(
        f"create table {history} using {table_format} partitioned by (partition_start, series_bucket, is_current_version)"
        f" as select * from {history}_copy"
    )
    pipeline.spark.sql(f"drop table {history}_copy")
    pipeline.project.forget_warehouse_state()  # an upgrade restarts the scheduler
    append_readings(pipeline.spark, pipeline.raw_table, [Reading("c", "harbour", at(0.6), 5.0, at(2.5))])
    with pytest.raises(DbtInvocationError, match=r"is a table of every version.*late_data.migrate_history"):
        pipeline.run(at(3))
    pipeline.project.invoke(["run-operation", "late_data.migrate_history"])
    pipeline.project.forget_warehouse_state()
    migrated = sorted(pipeline.spark.table(history).collect())
    assert [row["dbt_scd_id"] for row in migrated[:2]] == [row["dbt_scd_id"] for row in recorded]
    assert migrated[0] == recorded[0]
    assert migrated[1]["dbt_valid_to"] == migrated[2]["dbt_valid_from"] == at(3)
    pipeline.run(at(4))
    assert sorted(pipeline.spark.table(history).collect()) == migrated
    assert [(h["version_number"], h["revision_reason"]) for h in revisions(pipeline, "harbour")] == [
        (1, "initial"),
        (2, "late_data"),
        (3, "late_data"),
    ]
