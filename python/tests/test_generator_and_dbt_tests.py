"""The generator is deterministic; the dbt data tests pass on good data and catch malformed rows."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from late_data.dbt_project import DbtInvocationError
from late_data.generator import Scenario, generate
from late_data.pipeline import run_pipeline
from late_data.raw_tables import WATER_LEVEL_COLUMNS, Reading, append_readings
from tests.conftest import Pipeline

ORIGIN = datetime(2026, 4, 1, 6, 0, 0)
SCENARIO = Scenario(locations=5, correction_share=0.05, moved_correction_share=0.5, too_late_share=0.05,
                    late_window_seconds=600, max_lateness_seconds=600)


def test_generator_does_not_depend_on_batch_boundaries(pipeline: Pipeline) -> None:
    spark = pipeline.spark
    whole = f"{pipeline.project.raw_schema()}.generated_whole"
    spark.sql(f"create table {whole} ({WATER_LEVEL_COLUMNS}) using {pipeline.project.environment.table_format}")
    generate(spark, whole, SCENARIO, ORIGIN, ORIGIN, ORIGIN + timedelta(minutes=20))
    generate(spark, pipeline.raw_table, SCENARIO, ORIGIN, ORIGIN, ORIGIN + timedelta(minutes=7))
    generate(spark, pipeline.raw_table, SCENARIO, ORIGIN, ORIGIN + timedelta(minutes=7), ORIGIN + timedelta(minutes=20))
    in_batches = spark.table(pipeline.raw_table)
    assert in_batches.count() == spark.table(whole).count() > 5 * 120
    assert in_batches.exceptAll(spark.table(whole)).count() == 0
    kinds = {row["kind"] for row in in_batches.selectExpr("split(event_id, '-')[1] as kind").distinct().collect()}
    assert {"late", "tl"} <= kinds


def test_dbt_data_tests_pass_on_generated_data(pipeline: Pipeline) -> None:
    generate(pipeline.spark, pipeline.raw_table, SCENARIO, ORIGIN, ORIGIN, ORIGIN + timedelta(minutes=25))
    run_pipeline(pipeline.project, ORIGIN + timedelta(minutes=25))
    invocation = pipeline.project.invoke(["test"], {"run_time": "2026-04-01 06:25:00"})
    statuses = {
        result.node.name: str(result.status)
        for result in invocation.result.results
        if result.node.resource_type == "test"
    }
    assert len(statuses) >= 10
    # The scenario sends rows later than the late window, so that test warns; all others pass.
    assert statuses.pop("assert_no_too_late_readings") == "warn"
    assert set(statuses.values()) == {"pass"}


def test_malformed_raw_rows_fail_the_source_tests(pipeline: Pipeline) -> None:
    append_readings(pipeline.spark, pipeline.raw_table, [Reading("ok", "weir", ORIGIN, 1.0, ORIGIN)])
    pipeline.spark.sql(
        f"insert into {pipeline.raw_table} values ('broken', 'weir', null, 2.0, timestamp'2026-04-01 06:00:01')"
    )
    with pytest.raises(DbtInvocationError, match="source_not_null_sensors_water_level_readings_event_time"):
        pipeline.project.invoke(["test", "--select", "source:sensors"], {"run_time": "2026-04-01 06:05:00"})
    assert pipeline.spark.table(pipeline.raw_table).count() == 2  # nothing was dropped


def test_a_malformed_run_time_is_reported(pipeline: Pipeline) -> None:
    with pytest.raises(DbtInvocationError, match="is not a timestamp"):
        pipeline.project.invoke(["run"], {"run_time": "yesterday"})
