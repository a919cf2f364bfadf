"""Bad input: malformed rows are quarantined on every path, raw tables keep their contract, run times
only move forward, settings are refused by name, and the audit and `late-data status` see it all."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest

from late_data.commands.status import read_status
from late_data.oracles.demo_pipelines import compare_error_rates, compare_window_means
from late_data.project.raw_tables import PAGE_COUNT_COLUMNS, WATER_LEVEL_COLUMNS
from late_data.running.scheduler import run_pipeline, run_simulated, scenario_feed
from late_data.runtime.dbt_errors import DbtInvocationError, read_from
from late_data.runtime.dbt_project import DbtProject
from late_data.tables.history import latest_version
from tests.helpers import TEST_SETTINGS, TEST_VARS, Pipeline, clock, water_levels

ORIGIN = datetime(2026, 3, 2, 8, 0, 0)
NAN, INF = float("nan"), float("inf")
SCENARIO = water_levels(correction_share=0.05)
at = clock(ORIGIN)


def append_rows(pipeline: Pipeline, table: str, columns: str, rows: list[tuple[Any, ...]]) -> None:
    pipeline.spark.createDataFrame(rows, schema=columns).writeTo(pipeline.raw_tables[table]).append()


def good_readings() -> list[tuple[Any, ...]]:
    """Two readings per location in the windows at minutes 1 and 2."""
    return [
        (
            f"{location}-{minute}-{n}",
            location,
            at(minute) + timedelta(seconds=10 * n),
            5.0 + n,
            at(minute) + timedelta(seconds=30),
        )
        for location in ("harbour", "bridge")
        for minute in (1, 2)
        for n in (1, 2)
    ]


# One row per quarantine class, in windows that also hold good readings; the reason each must get.
MALFORMED_READINGS: list[tuple[tuple[Any, ...], str]] = [
    (("harbour-1-1", "harbour", at(1) + timedelta(seconds=10), NAN, at(3)), "not_finite"),  # a NaN resend
    (("bad-inf", "harbour", at(1), INF, at(3)), "not_finite"),
    (("bad-minus-inf", "bridge", at(1), -INF, at(3)), "not_finite"),
    (("bad-1e20", "harbour", at(2), 1e20, at(3)), "out_of_range"),
    (("bad-1e308", "bridge", at(2), 1e308, at(3)), "out_of_range"),
    (("harbour-2-1", "harbour", at(2) + timedelta(seconds=10), None, at(3)), "null_value"),  # a null resend
    ((None, "harbour", at(1), 24.0, at(3)), "null_event_id"),
    ((None, "harbour", at(1), 40.0, at(3)), "null_event_id"),
    (("bad-location", None, at(1), 5.0, at(3)), "null_location"),
    (("bad-event-time", "bridge", None, 5.0, at(3)), "null_event_time"),
    (("bad-stamp", "bridge", at(1), 5.0, None), "null_ingested_at"),
]


def window_rows(pipeline: Pipeline) -> list[dict[str, Any]]:
    return [row.asDict() for row in pipeline.rows(pipeline.means_table)]


def quarantine(pipeline: Pipeline, view: str = "water_level_quarantine") -> list[tuple[str, str, datetime]]:
    return sorted(
        (row["source_table"], row["quarantine_reason"], row["quarantined_at"])
        for row in pipeline.spark.table(f"{pipeline.project.target_schema()}.{view}").collect()
    )


def audit_rows(pipeline: Pipeline, where: str = "true") -> list[dict[str, Any]]:
    schema = pipeline.project.target_schema()
    return pipeline.project.query(
        f"select * from {schema}.late_data_run_audit where {where} order by recorded_at, model"
    )


def test_malformed_versions_are_quarantined_on_every_path(pipeline: Pipeline) -> None:
    append_rows(pipeline, "water_level_readings", WATER_LEVEL_COLUMNS, good_readings())
    pipeline.run(at(2.5))
    before, version_before = window_rows(pipeline), latest_version(pipeline.spark, pipeline.means_table, "iceberg")
    assert [(row["location"], row["reading_count"]) for row in before] == [("bridge", 2), ("harbour", 2)] * 2

    append_rows(pipeline, "water_level_readings", WATER_LEVEL_COLUMNS, [row for row, _ in MALFORMED_READINGS])
    report = pipeline.run(at(3.5))
    # Good windows are untouched: no commit on the means table, every row bit-identical.
    assert report.windows_changed == 0
    assert latest_version(pipeline.spark, pipeline.means_table, "iceberg") == version_before
    assert window_rows(pipeline) == before
    expected = sorted(("water_level_readings", reason, at(3.5)) for _, reason in MALFORMED_READINGS)
    assert quarantine(pipeline) == expected
    versions_audit = audit_rows(pipeline, f"model = 'int_water_level__versions' and run_time = timestamp'{at(3.5)}'")
    assert [(row["outcome"], row["rows_quarantined"]) for row in versions_audit] == [
        ("success", len(MALFORMED_READINGS)),
    ]
    assert (
        compare_window_means(
            pipeline.spark, pipeline.raw_table, pipeline.means_table, at(3.5), TEST_SETTINGS
        ).mismatched
        == 0
    )

    # A reconciliation recomputes from the versions: nothing to repair.
    assert run_pipeline(pipeline.project, at(4), "tag:water_level,tag:late_data", reconcile=True).windows_repaired == 0
    # A full refresh reads the same versions: the same windows, the same quarantine.
    pipeline.project.invoke(
        [
            "build",
            "--full-refresh",
            "--resource-type",
            "model",
            "--resource-type",
            "snapshot",
            "--select",
            "+tag:water_level",
        ],
        {"run_time": "2026-03-02 08:04:30"},
    )
    rebuilt = window_rows(pipeline)
    drop = ("computed_at", "invocation_id", "written_at")
    assert [{k: v for k, v in row.items() if k not in drop} for row in rebuilt] == [
        {k: v for k, v in row.items() if k not in drop} for row in before
    ]
    assert [reason for _, reason, _ in quarantine(pipeline)] == [reason for _, reason, _ in expected]
    assert audit_rows(
        pipeline, "model = 'int_water_level__versions' and run_kind = 'full_refresh' and outcome = 'success'"
    )[0]["rows_quarantined"] == len(MALFORMED_READINGS)

    # dbt test warns, naming the reasons.
    log_file = pipeline.project.environment.dbt_log_dir / "dbt.log"
    offset = log_file.stat().st_size
    invocation = pipeline.project.invoke(["test", "--select", "water_level_window_means,test_name:quarantine_is_empty"])
    assert [str(result.status) for result in invocation.result.results if result.node.resource_type == "test"] == [
        "warn"
    ]
    logged = read_from(log_file, offset)
    assert "late-data quarantine: water_level_readings: 3 not_finite, water_level_readings: 2 null_event_id" in logged


def test_page_counts_out_of_range_or_null_are_quarantined(project: DbtProject) -> None:
    pipeline = Pipeline(project, TEST_VARS, pipeline_tag="page_error_rates")
    good = [("pv-1", "/home", at(1), 90, at(1.5)), ("pe-1", "/home", at(1), 10, at(1.5))]
    append_rows(pipeline, "page_views", PAGE_COUNT_COLUMNS, [good[0], ("pv-neg", "/home", at(1), -5, at(1.5))])
    append_rows(
        pipeline,
        "page_errors",
        PAGE_COUNT_COLUMNS,
        [good[1], ("pe-big", "/home", at(1), 2**40, at(1.5)), ("pe-null", None, at(1), 1, at(1.5))],
    )
    pipeline.run(at(2.5))
    (rate,) = pipeline.rows(pipeline.rates_table, order_by="window_start")
    assert (rate["error_count"], rate["view_count"]) == (10, 90)
    assert [(table, reason) for table, reason, _ in quarantine(pipeline, "page_error_rates_quarantine")] == [
        ("page_errors", "null_page"),
        ("page_errors", "out_of_range"),
        ("page_views", "out_of_range"),
    ]
    raw = pipeline.raw_tables
    late = TEST_VARS["late_window_seconds"]
    comparison = compare_error_rates(
        pipeline.spark, raw["page_errors"], raw["page_views"], pipeline.rates_table, at(2.5), 60, late, late
    )
    assert comparison.mismatched == 0


def test_a_raw_table_of_the_wrong_types_fails_before_anything_is_written(project: DbtProject) -> None:
    pipeline = Pipeline(project, {**TEST_VARS, "raw_schema": "raw_contract"})
    spark = pipeline.spark
    spark.sql("drop table raw_contract.water_level_readings")
    spark.sql(
        "create table raw_contract.water_level_readings"
        " (event_id string, location string, event_time string, value string, ingested_at timestamp) using iceberg"
    )
    spark.sql(
        "insert into raw_contract.water_level_readings values"
        " ('a', 'harbour', '2026-03-02 08:01:00', 'abc', timestamp'2026-03-02 08:01:30'),"
        " ('b', 'harbour', 'yesterday', '5.0', timestamp'2026-03-02 08:01:30')"
    )
    with pytest.raises(DbtInvocationError) as failure:
        pipeline.run(at(2))
    message = str(failure.value)
    assert "raw_contract.water_level_readings column event_time has type string, expected timestamp" in message
    assert "raw_contract.water_level_readings column value has type string, expected double" in message
    schema = project.target_schema()
    assert not spark.catalog.tableExists(f"{schema}.water_level_window_means")
    assert not spark.catalog.tableExists(f"{schema}.int_water_level__versions")


def test_columns_beyond_the_contract_are_allowed_and_read_by_nothing(project: DbtProject) -> None:
    """A raw table may carry columns of its own (a device's firmware, a batch id): the contract
    names the columns the models read, and those alone decide the numbers."""
    pipeline = Pipeline(project, TEST_VARS)
    pipeline.spark.sql(f"alter table {pipeline.raw_table} add columns (device_firmware string)")
    pipeline.run(at(0.5))  # the first build; the next run is a scheduled one
    rows = [(*reading, "fw-2.1") for reading in good_readings()]
    append_rows(pipeline, "water_level_readings", f"{WATER_LEVEL_COLUMNS}, device_firmware string", rows)
    report = pipeline.run(at(3.5))
    assert report.windows_changed == 4
    comparison = compare_window_means(pipeline.spark, pipeline.raw_table, pipeline.means_table, at(3.5), TEST_SETTINGS)
    assert comparison.windows_checked == 4 and comparison.mismatched == 0


def history_defects(pipeline: Pipeline) -> list[Any]:
    """History versions that end before they begin, share a start with another version of their
    window, or do not start where the previous one ended (gaps and overlaps)."""
    history = f"{pipeline.project.target_schema()}.water_level_window_means_history"
    return pipeline.spark.sql(
        f"""
        select * from (
            select
                window_key, dbt_valid_from, dbt_valid_to,
                lag(dbt_valid_to) over (partition by window_key order by dbt_valid_from) as previous_valid_to,
                row_number() over (partition by window_key order by dbt_valid_from) as version_number,
                count(*) over (partition by window_key, dbt_valid_from) as same_start
            from {history}
        )
        where dbt_valid_to <= dbt_valid_from
            or same_start > 1
            or (version_number > 1 and not previous_valid_to <=> dbt_valid_from)
        """
    ).collect()


def test_run_times_only_move_forward_whatever_order_they_come_in(pipeline: Pipeline) -> None:
    feed = scenario_feed(pipeline.project, pipeline.raw_tables, ORIGIN, water_levels=SCENARIO)
    feed(ORIGIN, at(30))
    # Out of order as a restarted or misconfigured scheduler may send them: two runs, then a run
    # time well before the last one and one just before it.
    last_success: datetime | None = None
    refused = 0
    for run_time in (at(15), at(30), at(9), at(27)):
        if last_success is not None and run_time < last_success:
            with pytest.raises(DbtInvocationError, match="runs only move forward in time"):
                pipeline.run(run_time)
            refused += 1
        else:
            pipeline.run(run_time)
            last_success = run_time
    assert refused == 2
    assert history_defects(pipeline) == []
    assert (
        compare_window_means(
            pipeline.spark, pipeline.raw_table, pipeline.means_table, last_success, TEST_SETTINGS
        ).mismatched
        == 0
    )


def test_a_restarted_schedule_resumes_after_its_last_audited_run(pipeline: Pipeline) -> None:
    feed = scenario_feed(pipeline.project, pipeline.raw_tables, ORIGIN, water_levels=SCENARIO)
    interval, offset = timedelta(minutes=3), timedelta(seconds=10)
    first = run_simulated(pipeline.project, feed, ORIGIN, at(6), interval, offset, pipeline_tag="water_level")
    raw_rows = pipeline.spark.table(pipeline.raw_table).count()
    # Restarted with its original origin: no past run time is replayed, no row fed twice.
    second = run_simulated(pipeline.project, feed, ORIGIN, at(9), interval, offset, pipeline_tag="water_level")
    assert [report.run_time for report in first] == [at(0) + offset, at(3) + offset]
    assert [report.run_time for report in second] == [at(6) + offset]
    fed_since = pipeline.spark.table(pipeline.raw_table).where(f"ingested_at < timestamp'{at(3) + offset}'").count()
    assert fed_since == raw_rows
    assert history_defects(pipeline) == []
    assert (
        compare_window_means(
            pipeline.spark, pipeline.raw_table, pipeline.means_table, at(6) + offset, TEST_SETTINGS
        ).mismatched
        == 0
    )


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        ("late_window_seconds", 0, "var late_window_seconds=0 must be a whole number"),
        ("late_window_seconds", -60, "var late_window_seconds=-60 must be a whole number"),
        ("window_size_seconds", 0, "var window_size_seconds=0 must be a whole number"),
        ("partition_size_seconds", 0, "var partition_size_seconds=0 must be a whole number"),
        ("partition_size_seconds", 90, "var partition_size_seconds=90 must be a multiple of window_size_seconds=60"),
        ("series_buckets", 0, "var series_buckets=0 must be a whole number"),
        ("late_window_target_share", 1.5, "var late_window_target_share=1.5 must be a number above 0 and at most 1"),
        ("late_window_target_share", 0, "var late_window_target_share=0 must be a number above 0 and at most 1"),
        ("broadcast_arrivals_max", -1, "var broadcast_arrivals_max=-1 must be a whole number"),
        ("share_version_chain", "sometimes", "var share_version_chain must be true or false, not sometimes"),
        (
            "late_window_seconds_by_source",
            {"page_view": 60},
            "var late_window_seconds_by_source.page_view: no source table of that name",
        ),
        (
            "late_window_seconds_by_source",
            {"page_views": 0},
            "var late_window_seconds_by_source.page_views=0 must be a whole number",
        ),
    ],
)
def test_bad_settings_are_refused_naming_the_setting(
    project: DbtProject, setting: str, value: Any, message: str
) -> None:
    """The macros check the settings before anything runs (the hooks): the bad value reaches them as
    a var of the invocation, on the project parsed with the tests' settings (no parse per case)."""
    project.use_vars(TEST_VARS)
    bad = {**TEST_VARS, setting: value, "run_time": "2026-03-02 08:00:00"}
    with pytest.raises(DbtInvocationError, match=message.replace(".", r"\.").replace("(", r"\(")):
        project._invoke_raw(
            ["run", "--select", "stg_sensors__water_level_readings", "--vars", json.dumps(bad)],
            manifest=project.manifest(),
        )


@pytest.mark.parametrize(
    ("run_time", "message"),
    [
        ("2026-13-45 99:99:99", "var run_time='2026-13-45 99:99:99' has month 13 (1 to 12)"),
        ("2026-02-30 08:00:00", "var run_time='2026-02-30 08:00:00' has day 30, not a day of 2026-02"),
        ("2026-03-02 24:00:00", "var run_time='2026-03-02 24:00:00' has a time of day outside"),
        ("yesterday", "var run_time='yesterday' is not a timestamp"),
    ],
)
def test_run_times_that_do_not_parse_name_the_var(project: DbtProject, run_time: str, message: str) -> None:
    project.use_vars(TEST_VARS)
    with pytest.raises(DbtInvocationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        project.invoke(["run", "--select", "stg_sensors__water_level_readings"], {"run_time": run_time})


def test_a_run_time_from_the_environment_that_does_not_parse_names_the_variable(
    project: DbtProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.use_vars(TEST_VARS)
    monkeypatch.setenv("LATE_DATA_RUN_TIME", "yesterday")
    message = "environment variable LATE_DATA_RUN_TIME='yesterday' is not a timestamp"
    with pytest.raises(DbtInvocationError, match=message):
        project.invoke(["run", "--select", "stg_sensors__water_level_readings"])


def test_status_shows_last_runs_interrupted_runs_quarantine_and_reconciliation(pipeline: Pipeline) -> None:
    append_rows(pipeline, "water_level_readings", WATER_LEVEL_COLUMNS, [*good_readings(), MALFORMED_READINGS[0][0]])
    pipeline.run(at(3.5))
    run_pipeline(pipeline.project, at(4), "tag:water_level,tag:late_data", reconcile=True)
    status = read_status(pipeline.project)
    assert status.interrupted == [] and status.last_recovery is None
    assert status.unloaded == []  # every delivered row loaded: nothing listed
    assert {run["model"] for run in status.last_runs} >= {
        "water_level_window_means",
        "water_level_window_means_history",
    }
    assert all(run["outcome"] == "success" and run["run_kind"] == "reconcile" for run in status.last_runs), (
        status.last_runs
    )
    assert [(row["source_table"], row["quarantine_reason"], row["versions"]) for row in status.quarantine] == [
        ("water_level_readings", "not_finite", 1)
    ]
    assert status.last_reconciliation is not None and status.last_reconciliation["windows_repaired"] == 0

    # A run killed after its result write and before its audit row leaves the table ahead of the
    # audit (the fault-injection test kills real runs; here the write is made as such a run makes
    # it): status lists it until the next run, which recovers it as a reconciliation.
    append_rows(pipeline, "water_level_readings", WATER_LEVEL_COLUMNS, [("late-1", "harbour", at(2.2), 9.0, at(4.8))])
    killed_at, resumed_at = at(5), at(6)
    pipeline.spark.sql(
        f"update {pipeline.means_table} set written_at = timestamp'{killed_at}' where location = 'bridge'"
    )
    # A killed run's process is gone, and what it knew with it: the next run starts cold.
    pipeline.project.forget_warehouse_state()
    status = read_status(pipeline.project)
    assert [(run["model"], run["written_until"]) for run in status.interrupted] == [
        ("water_level_window_means", killed_at)
    ]
    text = "\n".join(status.lines())
    assert "interrupted runs not yet recovered: 1" in text and "water_level_readings: 1 not_finite" in text
    report = pipeline.run(resumed_at)
    assert report.windows_repaired == 0
    status = read_status(pipeline.project)
    assert status.interrupted == []
    assert status.last_recovery == {"run_time": resumed_at, "recovered_from": killed_at}
    assert {row["run_kind"] for row in audit_rows(pipeline, f"run_time = timestamp'{resumed_at}'")} == {"reconcile"}
    assert f"last recovery: the run at {resumed_at} recovered an interrupted run at {killed_at}" in "\n".join(
        status.lines()
    )
    assert (
        compare_window_means(
            pipeline.spark, pipeline.raw_table, pipeline.means_table, resumed_at, TEST_SETTINGS
        ).mismatched
        == 0
    )

    # A row appended now with a stamp from before the last run (history loaded late): no scheduled
    # run looks at it, and status says so until a reconciliation loads it.
    append_rows(pipeline, "water_level_readings", WATER_LEVEL_COLUMNS, [("old-1", "harbour", at(1.1), 5.0, at(-2))])
    (waiting,) = read_status(pipeline.project).unloaded
    assert (waiting["pipeline"], waiting["rows"], waiting["earliest_event"]) == ("water_level_window_means", 1, at(1.1))
    assert "rows delivered before the last run and not loaded: 1" in "\n".join(read_status(pipeline.project).lines())


def test_two_versions_with_one_stamp_count_by_the_tie_breaker_and_a_test_lists_them(pipeline: Pipeline) -> None:
    """One delivery holding two different versions of a reading (7.0 and 9.0, the same ingested_at):
    the chain cannot tell which came last, so its tie breaker counts the larger value (deterministic,
    and the oracle agrees), and the warning test lists the event."""
    ambiguous = [("harbour-9", "harbour", at(1), value, at(1.5)) for value in (7.0, 9.0)]
    append_rows(pipeline, "water_level_readings", WATER_LEVEL_COLUMNS, [*good_readings(), *ambiguous])
    pipeline.run(at(3))
    window = pipeline.window_row(pipeline.means_table, "location", "harbour", at(1))
    assert (
        window is not None and window["reading_count"] == 3 and window["mean_value"] == pytest.approx((6 + 7 + 9) / 3)
    )
    assert (
        compare_window_means(pipeline.spark, pipeline.raw_table, pipeline.means_table, at(3), TEST_SETTINGS).mismatched
        == 0
    )
    invocation = pipeline.project.invoke(
        ["test", "--select", "water_level_window_means,test_name:ambiguous_versions"], {"run_time": str(at(3))}
    )
    results = {result.node.name: result for result in invocation.result.results}
    (ambiguous_test,) = [result for name, result in results.items() if name.startswith("late_data_ambiguous_versions")]
    assert str(ambiguous_test.status) == "warn" and ambiguous_test.failures == 1


@pytest.mark.parametrize(
    "command",
    [["run", "--select", "stg_sensors__water_level_readings"], ["run-operation", "late_data_create_raw_schema"]],
)
def test_a_schema_var_that_is_not_a_name_is_refused_before_anything_runs(
    project: DbtProject, command: list[str]
) -> None:
    """Plain dbt with --vars reaches the macros without the Python side's check: they check it too,
    before any statement (the probe made a schema `probe_inj` with the comment 'injected')."""
    import json

    project.use_vars(TEST_VARS)
    bad = {**TEST_VARS, "raw_schema": "probe_inj comment 'injected'"}
    message = "var raw_schema='probe_inj comment 'injected'' is not a plain identifier: use letters, digits"
    with pytest.raises(DbtInvocationError, match=message):
        project._invoke_raw([*command, "--vars", json.dumps(bad)], manifest=project.manifest())
    assert not project.query("show schemas like 'probe_inj'")
