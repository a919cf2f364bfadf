"""The generator is deterministic; the dbt data tests pass on good data and catch malformed rows."""

from __future__ import annotations

from datetime import datetime, timedelta

from late_data.project.generator import generate, generate_page_counts
from late_data.project.raw_tables import PAGE_COUNT_COLUMNS, WATER_LEVEL_COLUMNS
from late_data.running.scheduler import run_pipeline, scenario_feed
from tests.helpers import Pipeline, dbt_statuses, page_counts, water_levels

ORIGIN = datetime(2026, 4, 1, 6, 0, 0)
SCENARIO = water_levels(
    locations=5, late_share=1.0, correction_share=0.05, moved_correction_share=0.5, too_late_share=0.05
)
PAGES = page_counts(too_late_share=0.05)


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


def test_page_generator_does_not_depend_on_batch_boundaries(pipeline: Pipeline) -> None:
    spark, schema = pipeline.spark, pipeline.project.raw_schema()
    whole = {name: f"{schema}.whole_{name}" for name in ("page_errors", "page_views")}
    for table in whole.values():
        spark.sql(f"create table {table} ({PAGE_COUNT_COLUMNS}) using {pipeline.project.environment.table_format}")
    generate_page_counts(spark, whole, PAGES, ORIGIN, ORIGIN, ORIGIN + timedelta(minutes=20))
    generate_page_counts(spark, pipeline.raw_tables, PAGES, ORIGIN, ORIGIN, ORIGIN + timedelta(minutes=7))
    generate_page_counts(
        spark, pipeline.raw_tables, PAGES, ORIGIN, ORIGIN + timedelta(minutes=7), ORIGIN + timedelta(minutes=20)
    )
    for name, table in whole.items():
        in_batches = spark.table(pipeline.raw_tables[name])
        assert in_batches.count() == spark.table(table).count() > 4 * 60
        assert in_batches.exceptAll(spark.table(table)).count() == 0
        # Rows arrive in the batch of their ingestion: late rows of early minutes land in the second one.
        assert (
            in_batches.where(
                "event_time < timestamp'2026-04-01 06:07:00' and ingested_at >= timestamp'2026-04-01 06:07:00'"
            ).count()
            > 0
        )


def test_dbt_data_tests_pass_on_generated_data(pipeline: Pipeline) -> None:
    """Both pipelines' data and every dbt data test of the project."""
    feed = scenario_feed(pipeline.project, pipeline.raw_tables, ORIGIN, water_levels=SCENARIO, pages=PAGES)
    feed(ORIGIN, ORIGIN + timedelta(minutes=25))
    run_pipeline(pipeline.project, ORIGIN + timedelta(minutes=25))
    invocation = pipeline.project.invoke(["test"], {"run_time": "2026-04-01 06:25:00"})
    statuses = dbt_statuses(invocation, "test")
    assert len(statuses) >= 20
    # Both scenarios send rows later than the late window, so those tests warn; all others pass.
    for warning in (
        "late_data_too_late_rows_water_level_window_means_history_",
        "late_data_too_late_rows_page_error_rates_history_",
        "assert_late_window_captures_target_share",
    ):
        assert statuses.pop(warning) == "warn", warning
    assert set(statuses.values()) == {"pass"}
