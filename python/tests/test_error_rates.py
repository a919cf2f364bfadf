"""The second pipeline: per-page error rates from two late series, through the shared macros."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from late_data.commands.check import check_pipeline
from late_data.oracles.demo_pipelines import compare_rates, expected_error_rates
from late_data.project.pipelines import find_pipelines, select_pipelines
from late_data.project.raw_tables import PageCount, append_page_counts
from late_data.publishing.publish import publish
from late_data.publishing.stage import stage_apply
from late_data.running.backfill import run_backfill
from late_data.running.scheduler import RunReport, run_simulated, scenario_feed
from late_data.runtime.timeutil import format_timestamp
from tests.helpers import TEST_VARS, Pipeline, clock, oracle_partitions_changed, page_counts

# Page views may arrive later than page errors: each source has its own late window.
RATE_VARS = {**TEST_VARS, "late_window_seconds_by_source": {"page_views": 900}}
ERRORS_LATE_WINDOW, VIEWS_LATE_WINDOW = 600, 900
ORIGIN = datetime(2026, 5, 1, 9, 0, 0)
SCENARIO = page_counts(pages=6, max_lateness_seconds=900, too_late_share=0.01, late_window_seconds=900)


def rates_pipeline(project: Any) -> Pipeline:
    return Pipeline(project, RATE_VARS, pipeline_tag="page_error_rates")


def expected(pipeline: Pipeline, run_time: datetime) -> Any:
    return expected_error_rates(
        pipeline.spark,
        pipeline.raw_tables["page_errors"],
        pipeline.raw_tables["page_views"],
        run_time,
        TEST_VARS["window_size_seconds"],
        ERRORS_LATE_WINDOW,
        VIEWS_LATE_WINDOW,
    )


@pytest.fixture(scope="module")
def scheduled_rates(project: Any) -> dict[str, Any]:
    """Runs every 6 simulated minutes for 30 minutes (late windows of 10 and 15), checked against
    the oracle after each run."""
    pipeline = rates_pipeline(project)
    observed: list[dict[str, Any]] = []
    previous: dict[str, Any] = {"oracle": None, "version": None}

    def after_run(report: RunReport) -> None:
        # The oracle as of this run, worked out once: compared with the table now, and with the
        # previous run's oracle for what changed (then kept for the next run's).
        new = expected(pipeline, report.run_time).localCheckpoint()
        comparison = compare_rates(new, pipeline.spark.table(pipeline.rates_table))
        observed.append(
            {
                "report": report,
                "comparison": comparison,
                "touched": pipeline.touched_since(pipeline.rates_table, previous["version"]),
                "oracle_changed": oracle_partitions_changed(new, previous["oracle"], "page"),
            }
        )
        previous.update(oracle=new, version=pipeline.version_of(pipeline.rates_table))

    run_simulated(
        pipeline.project,
        scenario_feed(pipeline.project, pipeline.raw_tables, ORIGIN, pages=SCENARIO),
        ORIGIN,
        ORIGIN + timedelta(minutes=30),
        timedelta(minutes=6),
        timedelta(seconds=10),
        after_run,
        pipeline_tag=pipeline.pipeline_tag,
    )
    return {"pipeline": pipeline, "observed": observed}


def test_rates_match_the_oracle_after_every_run(scheduled_rates: dict[str, Any]) -> None:
    observed = scheduled_rates["observed"]
    assert len(observed) == 5
    for step in observed:
        assert step["comparison"].windows_checked > 0
        assert step["comparison"].mismatched == 0, (step["report"].run_time, step["comparison"].examples)
    # Not vacuous: both series had late rows, and some windows have views but no errors (0 %).
    pipeline: Pipeline = scheduled_rates["pipeline"]
    for source_table in ("page_errors", "page_views"):
        late = pipeline.spark.sql(
            f"select count(*) from {pipeline.raw_tables[source_table]} where ingested_at > event_time + interval 2 minutes"
        ).first()[0]
        assert late > 20, source_table
    zero = pipeline.spark.sql(f"select count(*) from {pipeline.rates_table} where error_count = 0").first()[0]
    assert zero > 0
    assert (
        pipeline.spark.sql(
            f"select count(*) from {pipeline.rates_table} where error_count = 0 and error_rate_percent != 0"
        ).first()[0]
        == 0
    )


def test_only_partitions_whose_rates_changed_are_rewritten(scheduled_rates: dict[str, Any]) -> None:
    observed = scheduled_rates["observed"]
    for step in observed:
        assert step["touched"] <= step["oracle_changed"], step["report"].run_time
    assert any(step["touched"] for step in observed[1:])


def test_rate_history_and_full_refresh(scheduled_rates: dict[str, Any]) -> None:
    pipeline: Pipeline = scheduled_rates["pipeline"]
    schema = pipeline.project.target_schema()
    reasons = {
        row["revision_reason"]
        for row in pipeline.spark.sql(
            f"select distinct revision_reason from {schema}.page_error_rates_revisions"
        ).collect()
    }
    assert {"initial", "late_data", "finalized"} <= reasons
    run_time = scheduled_rates["observed"][-1]["report"].run_time
    columns = "window_start, page, error_count, view_count, error_rate_percent, counted_rows, is_final, counts_digest"
    incremental = pipeline.spark.sql(f"select {columns} from {pipeline.rates_table}").collect()
    pipeline.project.invoke(
        ["run", "--full-refresh", "--select", "+page_error_rates"], {"run_time": format_timestamp(run_time)}
    )
    rebuilt = pipeline.spark.sql(f"select {columns} from {pipeline.rates_table}").collect()
    key = lambda row: (row["window_start"], row["page"])
    assert sorted(incremental, key=key) == sorted(rebuilt, key=key)
    assert len(rebuilt) > 100


def test_a_wider_late_window_of_one_series_is_applied_in_a_stage(scheduled_rates: dict[str, Any], tmp_path) -> None:
    """The two-series rates through late-data apply: the page views' late window widened from 15
    to 30 minutes, rebuilt from both raw series in a stage and published; the rates right against
    the oracle under the new late window, and each window it made open again a new version labelled
    definition_change."""
    pipeline: Pipeline = scheduled_rates["pipeline"]
    applied_at = scheduled_rates["observed"][-1]["report"].run_time + timedelta(minutes=1)
    final_before = pipeline.spark.sql(f"select count(*) from {pipeline.rates_table} where is_final").first()[0]
    pipeline.project.use_vars({**RATE_VARS, "late_window_seconds_by_source": {"page_views": 1800}})
    try:
        [rates] = select_pipelines(pipeline.project, ["page_error_rates"])
        version, _ = stage_apply(
            pipeline.project, [rates], {rates.name: ["the late windows"]}, applied_at, None, tmp_path
        )
        publish(pipeline.project, version.name, {})
        check = check_pipeline(pipeline.project, rates, None)
        assert (check.mismatched, check.windows.windows_checked > 100) == (0, True), check.lines
        reopened = pipeline.spark.sql(
            f"select distinct revision_reason, is_final from {pipeline.project.target_schema()}.page_error_rates_revisions"
            f" where valid_from = timestamp'{format_timestamp(applied_at)}'"
        ).collect()
        assert final_before > 0 and [tuple(row) for row in reopened] == [("definition_change", False)]
    finally:
        pipeline.project.use_vars(RATE_VARS)


T0 = datetime(2026, 5, 2, 8, 0, 0)
at = clock(T0)


def rate_row(pipeline: Pipeline, page: str, window_start: datetime) -> dict[str, Any] | None:
    return pipeline.window_row(pipeline.rates_table, "page", page, window_start)


def test_a_late_row_in_either_series_rewrites_only_its_partition(project: Any, tmp_path) -> None:
    pipeline = rates_pipeline(project)
    errors, views = pipeline.raw_tables["page_errors"], pipeline.raw_tables["page_views"]
    append_page_counts(
        pipeline.spark,
        views,
        [
            PageCount("v1", "/home", at(0.5), 90, at(0.6)),
            PageCount("v2", "/home", at(6.5), 50, at(6.6)),
        ],
    )
    append_page_counts(pipeline.spark, errors, [PageCount("e1", "/home", at(6.5), 50, at(6.6))])
    pipeline.run(at(8))
    home = rate_row(pipeline, "/home", at(0))
    assert (home["error_count"], home["view_count"], home["error_rate_percent"]) == (0, 90, 0.0)  # views, no errors
    assert rate_row(pipeline, "/home", at(6))["error_rate_percent"] == 50.0
    assert rate_row(pipeline, "/home", at(1)) is None  # neither series: no row

    before = pipeline.version_of(pipeline.rates_table)
    append_page_counts(pipeline.spark, errors, [PageCount("e2", "/home", at(0.7), 10, at(8.5))])  # late error
    pipeline.run(at(9))
    assert rate_row(pipeline, "/home", at(0))["error_rate_percent"] == 10.0
    assert pipeline.touched_since(pipeline.rates_table, before) == {(at(0), pipeline.bucket_of("/home"))}

    before = pipeline.version_of(pipeline.rates_table)
    append_page_counts(pipeline.spark, views, [PageCount("v4", "/home", at(6.8), 100, at(9.5))])  # late views
    pipeline.run(at(10))
    assert rate_row(pipeline, "/home", at(6))["error_rate_percent"] == 25.0
    assert pipeline.touched_since(pipeline.rates_table, before) == {(at(5), pipeline.bucket_of("/home"))}

    # Errors have 600 s, views 900 s: after 08:11 the 08:00 window is closed to errors, open to views.
    append_page_counts(pipeline.spark, errors, [PageCount("e3", "/home", at(0.8), 5, at(12.5))])  # too late
    append_page_counts(pipeline.spark, views, [PageCount("v5", "/home", at(0.9), 15, at(12.5))])  # in time
    report = pipeline.run(at(13))
    home = rate_row(pipeline, "/home", at(0))
    assert (home["error_count"], home["view_count"], home["is_final"], report.too_late_rows) == (10, 105, False, 1)

    # A backfill including too-late rows revises the final window, with a manifest entry for it.
    pipeline.run(at(30))
    changes, _ = run_backfill(
        pipeline.project,
        find_pipelines(pipeline.project),
        at(0),
        at(5),
        timedelta(hours=1),
        include_too_late=True,
        run_time=at(30.5),
        manifest_dir=tmp_path,
    )
    assert [(c.table, c.partition_start, c.sum_before, c.sum_after) for c in changes] == [
        ("page_error_rates", at(0), 115, 120)
    ]
    assert rate_row(pipeline, "/home", at(0))["error_count"] == 15
    last = pipeline.spark.sql(
        f"select revision_reason from {pipeline.project.target_schema()}.page_error_rates_revisions"
        f" where page = '/home' and window_start = timestamp'{at(0):%Y-%m-%d %H:%M:%S}' order by version_number desc"
    ).first()
    assert last["revision_reason"] == "backfill"


def test_recommended_late_window_matches_a_constructed_distribution(project: Any) -> None:
    """1,000 rows arriving 1..1,000 s after their window ended: the smallest late window capturing
    99.9 % of them is 999 s; the configured 600 s captures 60 % and the test warns."""
    pipeline = rates_pipeline(project)
    counts = [
        PageCount(f"v{k}", "/home", at(k % 50), 1, at(k % 50) + timedelta(seconds=60 + k)) for k in range(1, 1001)
    ]
    # Stamped after the run time (a clock a year ahead): not arrived yet, so not counted as late.
    counts.append(PageCount("ahead", "/home", at(1), 1, at(1) + timedelta(days=365)))
    append_page_counts(pipeline.spark, pipeline.raw_tables["page_views"], counts)
    schema = pipeline.project.target_schema()

    def recommendation(project_vars: dict) -> dict:
        pipeline.project.use_vars(project_vars)
        pipeline.project.invoke(["run", "--select", "+tag:lateness"], {"run_time": "2026-05-02 10:00:00"})
        test = pipeline.project.invoke(
            ["test", "--select", "assert_late_window_captures_target_share"], {"run_time": "2026-05-02 10:00:00"}
        )
        row = (
            pipeline.spark.sql(f"select * from {schema}.late_window_recommendations where source_table = 'page_views'")
            .first()
            .asDict()
        )
        (status,) = [str(result.status) for result in test.result.results if result.node.resource_type == "test"]
        return {**row, "test_status": status}

    configured = recommendation(TEST_VARS)
    assert configured["arrived_rows"] == 1000
    assert configured["recommended_late_window_seconds"] == 999
    assert configured["configured_late_window_seconds"] == 600
    assert configured["configured_captured_share"] == pytest.approx(0.6)
    assert configured["test_status"] == "warn"

    distribution = pipeline.spark.sql(
        f"select * from {schema}.source_lateness_distribution where source_table = 'page_views' and series_key is null"
    ).first()
    # Lateness from the event time is 60 + k - (seconds into the minute) = 60 + k here: 61 .. 1060.
    assert distribution["max_lateness_seconds"] == 1060
    assert distribution["p50_lateness_seconds"] == pytest.approx(560.5)
    hourly = pipeline.spark.sql(
        f"select sum(arrived_rows), sum(late_rows), sum(too_late_rows) from {schema}.source_lateness_by_hour"
        " where source_table = 'page_views'"
    ).first()
    assert tuple(hourly) == (1000, 1000, 400)
    # A wider late window captures more (another target share picks another quantile: the dbt unit
    # test late_window_recommendation_is_the_target_quantile).
    widened = recommendation({**TEST_VARS, "late_window_seconds_by_source": {"page_views": 999}})
    assert widened["configured_captured_share"] == pytest.approx(0.999)
    assert widened["test_status"] == "pass"
