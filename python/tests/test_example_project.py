"""The example project (integration_tests/): a dbt project of its own installs the late_data package
by `local:` path and defines pipelines on sources of its own, each in one model and one yml entry:
- meter readings per meter and 5 minutes with a 2-hour late window (sum, count and max);
- daily active users: distinct users per app and day, with a 48-hour late window;
- latency percentiles (p50, p95, median) per endpoint on 5-minute windows sliding by 1 minute;
- revenue per region and hour, each order by its customer's region at the order's time (a dbt
  snapshot of the customers, joined at event time), with late corrections of past intervals.
Each is built with plain dbt (deps, build, scheduled builds with late rows and corrections in
between) and checked with `late-data check` at every run: every window right, the history right as
of every run, the too-late and quarantined rows listed. Then a fix in the select of all five applied
in one stage (`late-data plan`, `apply`, `publish`) and each checked again: the apply on every shape.

dbt runs in this process (dbtRunner, the same commands as the CLI's) on the tests' Spark session:
the embedded metastore admits one JVM."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest

from late_data import cli
from late_data.commands.why import window_story
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.environment import CHECKOUT, prepare_environment
from late_data.runtime.timeutil import format_timestamp
from late_data.tables.history import commits_after, latest_version
from tests.helpers import clock, dbt_statuses

EXAMPLE = CHECKOUT / "integration_tests"
SCHEMA, RAW_SCHEMA, EXAMPLE_RAW = "meters", "meters_raw", "example_raw"
ORIGIN = datetime(2026, 6, 1, 0, 0, 0)
at = clock(ORIGIN)
READINGS = "event_id string, meter_id string, event_time timestamp, kwh double, ingested_at timestamp"
APP_EVENTS = "event_id string, app string, user_id string, event_time timestamp, ingested_at timestamp"
REQUESTS = "event_id string, endpoint string, event_time timestamp, latency_ms double, ingested_at timestamp"
ORDERS = "event_id string, customer_id string, event_time timestamp, amount double, ingested_at timestamp"
CUSTOMERS = "customer_id string, region string, updated_at timestamp"
PAGE_VIEWS = (
    "event_id string, visitor_id string, page string, event_time timestamp, dwell_seconds double, ingested_at timestamp"
)
METERS = ("m1", "m2", "m3", "m4")


def on_time_readings() -> list[tuple[Any, ...]]:
    """A reading per meter and minute for an hour, each arriving 10 s after it was taken; the
    reading at minute 3 of m1 is its window's largest (9.0)."""
    rows = []
    for index, meter in enumerate(METERS):
        for minute in range(60):
            kwh = 9.0 if (meter, minute) == ("m1", 3) else round(0.5 + (minute * 7 + index) % 5 * 0.25, 2)
            rows.append((f"{meter}-{minute}", meter, at(minute), kwh, at(minute) + timedelta(seconds=10)))
    return rows


def later_readings() -> list[tuple[Any, ...]]:
    """What arrives after the first run: readings within the late window, a correction that lowers
    the largest reading of a window (its max must fall), a reading two hours too late, and two
    readings that cannot be counted."""
    return [
        ("m2-late-1", "m2", at(12.5), 4.0, at(40)),
        ("m3-late-1", "m3", at(1.5), 2.0, at(45)),
        ("m1-3", "m1", at(3), 1.0, at(50)),  # the correction of the 9.0
        ("m4-too-late", "m4", at(2.5), 6.0, at(130)),  # its window was final at 02:05
        ("m4-nan", "m4", at(20), float("nan"), at(52)),
        ("m2-no-meter", None, at(21), 1.0, at(52)),
    ]


@pytest.fixture(scope="module")
def example(project: DbtProject, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DbtProject]:
    """The example project on the tests' Spark session, its schemas empty, its raw table filled."""
    spark = project.spark
    previous_schema, previous_dir = os.environ.get("LATE_DATA_SCHEMA"), os.environ.get("LATE_DATA_PROJECT_DIR")
    for schema in (SCHEMA, RAW_SCHEMA, EXAMPLE_RAW):
        spark.sql(f"drop schema if exists {schema} cascade")
        if schema != SCHEMA:
            spark.sql(f"create schema {schema}")
    table_format = project.environment.table_format
    spark.sql(f"create table {RAW_SCHEMA}.meter_readings ({READINGS}) using {table_format}")
    spark.sql(f"create table {EXAMPLE_RAW}.app_events ({APP_EVENTS}) using {table_format}")
    spark.sql(f"create table {EXAMPLE_RAW}.requests ({REQUESTS}) using {table_format}")
    spark.sql(f"create table {EXAMPLE_RAW}.orders ({ORDERS}) using {table_format}")
    spark.sql(f"create table {EXAMPLE_RAW}.customers ({CUSTOMERS}) using {table_format}")
    spark.sql(f"create table {EXAMPLE_RAW}.page_views ({PAGE_VIEWS}) using {table_format}")
    spark.createDataFrame(on_time_readings(), READINGS).writeTo(f"{RAW_SCHEMA}.meter_readings").append()
    os.environ["LATE_DATA_SCHEMA"] = SCHEMA
    os.environ["LATE_DATA_PROJECT_DIR"] = str(EXAMPLE)
    os.environ["DBT_PROFILES_DIR"] = str(CHECKOUT / "profiles")  # the example project has none
    example_project = DbtProject(prepare_environment(), hold_home=False)
    plain_dbt("deps")
    try:
        yield example_project
    finally:
        for name, value in (("LATE_DATA_SCHEMA", previous_schema), ("LATE_DATA_PROJECT_DIR", previous_dir)):
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        prepare_environment()


def plain_dbt(*args: str, run_time: datetime | None = None) -> Any:
    """A dbt command on the example project, as a user types it (dbt's own runner, no late-data code),
    its run time in the environment as the docs pass it (dbt keeps its partial parse)."""
    from dbt.cli.main import dbtRunner

    with pytest.MonkeyPatch.context() as environment:
        if run_time is not None:
            environment.setenv("LATE_DATA_RUN_TIME", format_timestamp(run_time))
        outcome = dbtRunner().invoke(
            ["--quiet", *args, "--project-dir", str(EXAMPLE), "--profiles-dir", str(CHECKOUT / "profiles")]
        )
    assert outcome.success, outcome.exception or [
        (result.node.name, result.message) for result in outcome.result.results if str(result.status) != "success"
    ]
    return outcome


def late_data_check(
    example: DbtProject, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> str:
    monkeypatch.setattr(cli, "open_project", lambda writer=None: example)
    code = cli.main(["--project-dir", str(EXAMPLE), "check", *args])
    captured = capsys.readouterr()
    assert code == 0, captured.out + captured.err
    return captured.out


def test_the_example_pipeline_is_right_run_after_run_with_plain_dbt(
    example: DbtProject, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spark = example.spark
    first = plain_dbt("build", "--select", "meter_usage+", run_time=at(30) + timedelta(seconds=10))
    assert {result.node.name for result in first.result.results} >= {"meter_usage", "meter_usage_history"}
    window_max = f"select kwh_max from {SCHEMA}.meter_usage where meter_id = 'm1' and window_start = timestamp'{at(0)}'"
    assert spark.sql(window_max).first()["kwh_max"] == 9.0
    spark.createDataFrame(later_readings(), READINGS).writeTo(f"{RAW_SCHEMA}.meter_readings").append()

    second_at, third_at = at(55) + timedelta(seconds=10), at(140) + timedelta(seconds=10)
    plain_dbt("build", "--select", "meter_usage+", run_time=second_at)
    # The correction retracted the window's largest reading: its max is recomputed from the versions.
    assert spark.sql(window_max).first()["kwh_max"] == pytest.approx(1.5)

    third = plain_dbt("build", "--select", "meter_usage+", run_time=third_at)
    # The package's tests read what the run loaded: nothing new quarantined, one reading listed too late.
    statuses = {result.node.name: str(result.status) for result in third.result.results}
    assert statuses["late_data_quarantine_is_empty_meter_usage_"] == "pass"
    assert statuses["late_data_too_late_rows_meter_usage_history_"] == "warn"
    too_late = spark.sql(f"select event_id, too_late_reason from {SCHEMA}.meter_usage__too_late").collect()
    assert [(row["event_id"], row["too_late_reason"]) for row in too_late] == [("m4-too-late", "arrived_after_final")]
    quarantined = spark.sql(f"select event_id, quarantine_reason from {SCHEMA}.meter_usage__quarantine").collect()
    assert sorted((row["event_id"], row["quarantine_reason"]) for row in quarantined) == [
        ("m2-no-meter", "null_meter_id"),
        ("m4-nan", "not_finite"),
    ]
    # Every run's state, read back from the history (as of each run time), against the oracle.
    for run_time in (at(30) + timedelta(seconds=10), second_at, third_at):
        out = late_data_check(
            example, monkeypatch, capsys, "--pipeline", "meter_usage", "--run-time", format_timestamp(run_time)
        )
        assert out.splitlines()[-1].endswith(" 0 mismatched"), out

    plain_dbt("build", "--full-refresh", "--select", "meter_usage+", run_time=third_at + timedelta(minutes=10))
    out = late_data_check(example, monkeypatch, capsys, "--pipeline", "meter_usage")
    assert out.splitlines()[-1].endswith(" 0 mismatched"), out
    tests = plain_dbt("test", "--select", "meter_usage+", run_time=third_at + timedelta(minutes=10))
    statuses = {result.node.name: str(result.status) for result in tests.result.results}
    assert statuses["late_data_too_late_rows_meter_usage_history_"] == "warn"
    assert statuses["late_data_quarantine_is_empty_meter_usage_"] == "warn"
    assert statuses["late_data_ambiguous_versions_meter_usage_"] == "pass"


def test_plain_dbt_on_cron_reconciles_by_itself_every_reconcile_every_seconds(
    example: DbtProject, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The cron sequence with plain dbt, one command each minute and no second line for the
    reconciliation: with var reconcile_every_seconds, the first scheduled run at least that long
    after the last reconciliation (here the full refresh at 02:30:10) is one by itself and repairs
    a window planted wrong; a run before leaves it as it found it. Follows the meter test."""
    spark = example.spark
    every = {"reconcile_every_seconds": 900}

    def cron_run(run_time: datetime) -> None:
        plain_dbt("build", "--select", "meter_usage+", "--vars", json.dumps(every), run_time=run_time)

    planted = f"meter_id = 'm2' and window_start = timestamp'{format_timestamp(at(10))}'"
    right = spark.sql(f"select reading_count from {SCHEMA}.meter_usage where {planted}").first()[0]
    spark.sql(f"update {SCHEMA}.meter_usage set reading_count = reading_count + 7 where {planted}")
    cron_run(at(160) + timedelta(seconds=10))  # 10 minutes after the full refresh: a scheduled run
    assert spark.sql(f"select reading_count from {SCHEMA}.meter_usage where {planted}").first()[0] == right + 7
    cron_run(at(166) + timedelta(seconds=10))  # 16 minutes after it: a reconciliation
    assert spark.sql(f"select reading_count from {SCHEMA}.meter_usage where {planted}").first()[0] == right
    kinds = spark.sql(
        f"select run_time, run_kind, windows_repaired from {SCHEMA}.late_data_run_audit"
        f" where model = 'meter_usage' and run_time > timestamp'{format_timestamp(at(151))}' order by run_time"
    ).collect()
    assert [(row["run_kind"], row["windows_repaired"]) for row in kinds] == [("scheduled", 0), ("reconcile", 1)]
    out = late_data_check(example, monkeypatch, capsys, "--pipeline", "meter_usage")
    assert out.splitlines()[-1].endswith(" 0 mismatched"), out


def check_every_run(
    example: DbtProject,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    pipeline: str,
    run_times: list[datetime],
) -> str:
    """`late-data check` of one pipeline as of each of its runs (the last from its result table and
    its too-late listing, the others from its history): 0 mismatched every time. Returns the last
    check's output."""
    out = ""
    for run_time in run_times:
        out = late_data_check(
            example, monkeypatch, capsys, "--pipeline", pipeline, "--run-time", format_timestamp(run_time)
        )
        assert out.splitlines()[-1].endswith(" 0 mismatched") and f"{pipeline}: " in out, out
    return out


def build(pipeline: str, run_time: datetime) -> Any:
    """A scheduled run of one example pipeline, as cron would start it: plain dbt build of its nodes."""
    return plain_dbt("build", "--select", f"{pipeline}+", run_time=run_time)


DAY = ORIGIN  # daily active users: day windows from 2026-06-01


def on_day(day: int, hours: float) -> datetime:
    return DAY + timedelta(days=day, hours=hours)


def app_events() -> list[tuple[Any, ...]]:
    """Three days of events of two apps, each arriving a minute after it happened: five users a
    day and app, most of them with more than one event."""
    rows = []
    for day in range(3):
        for app_index, app in enumerate(("web", "ios")):
            for number in range(8):
                user = f"u{(number * 3 + day + app_index) % 5}"
                moment = on_day(day, 1 + number * 2.5)
                rows.append((f"{app}-{day}-{number}", app, user, moment, moment + timedelta(minutes=1)))
    return rows


def distinct_users(spark: Any, app: str, day: int) -> tuple[int, int]:
    row = spark.sql(
        f"select active_users, event_count from {SCHEMA}.daily_active_users"
        f" where app = '{app}' and window_start = timestamp'{format_timestamp(on_day(day, 0))}'"
    ).first()
    return (int(row["active_users"]), int(row["event_count"])) if row else (0, 0)


def test_daily_active_users_stay_right_under_36_hours_of_lateness(
    example: DbtProject, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A distinct count per day with a 48-hour late window: late events of new and known users, a
    correction that replaces a day's only event of a user, a correction that moves an event to
    another day, an event too late for its final day and one that cannot be counted."""
    spark = example.spark
    spark.createDataFrame(app_events(), APP_EVENTS).writeTo(f"{EXAMPLE_RAW}.app_events").append()
    runs = [on_day(2, 12) + timedelta(seconds=10)]
    build("daily_active_users", runs[-1])
    before = distinct_users(spark, "web", 0)
    later = [
        ("late-new-user", "web", "u9", on_day(0, 10), on_day(2, 13)),  # 36 hours after its day ended
        ("late-known-user", "web", "u0", on_day(0, 11), on_day(2, 13)),
        # web-0-3 was u4's only web event on day 0: its correction to u0 takes u4 away.
        ("web-0-3", "web", "u0", on_day(0, 8.5), on_day(2, 13.5)),
        ("ios-1-0", "ios", "u1", on_day(2, 5), on_day(2, 13.6)),  # moved from day 1 to day 2
    ]
    spark.createDataFrame(later, APP_EVENTS).writeTo(f"{EXAMPLE_RAW}.app_events").append()
    runs.append(on_day(2, 14) + timedelta(seconds=10))
    build("daily_active_users", runs[-1])
    assert distinct_users(spark, "web", 0) == (before[0], before[1] + 2)  # u9 came, u4 went

    final_day_0 = on_day(3, 0)  # day 0's window ends at day 1 and is final 48 hours later
    too_late = [
        ("too-late", "web", "u7", on_day(0, 20), final_day_0 + timedelta(hours=1)),
        ("no-user", "ios", None, on_day(1, 9), final_day_0 + timedelta(minutes=30)),
        ("late-day-1", "ios", "u7", on_day(1, 9), final_day_0 + timedelta(hours=1, minutes=30)),
    ]
    spark.createDataFrame(too_late, APP_EVENTS).writeTo(f"{EXAMPLE_RAW}.app_events").append()
    runs.append(final_day_0 + timedelta(hours=2, seconds=10))
    build("daily_active_users", runs[-1])
    assert distinct_users(spark, "web", 0) == (before[0], before[1] + 2)  # final before "too-late" arrived
    listed = spark.sql(f"select event_id, too_late_reason from {SCHEMA}.daily_active_users__too_late").collect()
    assert [(row["event_id"], row["too_late_reason"]) for row in listed] == [("too-late", "arrived_after_final")]
    check_every_run(example, monkeypatch, capsys, "daily_active_users", runs)
    # Lateness, without a model of its own, over each event's first delivery (the two corrections
    # are no lateness of the feed): one of the 52 came after its day was final, so the 48-hour late
    # window captured 51/52, under the default target of 0.999.
    (lateness,) = spark.sql(f"select * from {SCHEMA}.daily_active_users__lateness").collect()
    assert (lateness["source_table"], lateness["arrived_rows"]) == ("app_events", 52)
    assert lateness["configured_captured_share"] == pytest.approx(51 / 52) and not lateness["counts_corrections"]
    assert lateness["max_lateness_seconds"] == (final_day_0 + timedelta(hours=1) - on_day(0, 20)).total_seconds()
    assert not lateness["configured_meets_target"] and lateness["recommended_late_window_seconds"] == 172800 + 3600
    tests = plain_dbt("test", "--select", "daily_active_users", run_time=runs[-1])
    assert dbt_statuses(tests, "test")["late_data_late_window_meets_target_daily_active_users_"] == "warn"


LATENCY = ORIGIN + timedelta(days=10)  # the latency pipeline's clock


def requests() -> list[tuple[Any, ...]]:
    """Two endpoints, a request every 20 seconds for 40 minutes, each arriving 5 seconds later."""
    rows = []
    for endpoint_index, endpoint in enumerate(("/a", "/b")):
        for tick in range(120):
            moment = LATENCY + timedelta(seconds=20 * tick)
            latency = float(10 + (tick * 7 + endpoint_index * 3) % 40)
            rows.append((f"{endpoint}-{tick}", endpoint, moment, latency, moment + timedelta(seconds=5)))
    return rows


def test_latency_percentiles_on_sliding_windows_stay_right(
    example: DbtProject, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """p50, p95 and the median per endpoint over 5-minute windows sliding by 1 minute, with a
    30-minute late window: a late slow request reaches five windows, a correction lowers one,
    another moves a request, and a request arriving between the final moments of its windows counts
    in the later ones and is listed as too late for the earlier ones."""
    spark = example.spark
    spark.createDataFrame(requests(), REQUESTS).writeTo(f"{EXAMPLE_RAW}.requests").append()
    minute = clock(LATENCY)
    runs = [minute(30) + timedelta(seconds=10)]
    build("request_latency", runs[-1])
    later = [
        ("/a-late", "/a", minute(10.5), 900.0, minute(33)),  # in the windows starting at minutes 6 to 10
        ("/a-30", "/a", minute(10), 1.0, minute(34)),  # a correction
        ("/b-31", "/b", minute(25.2), 15.0, minute(35)),  # moved from minute 10 to minute 25
    ]
    spark.createDataFrame(later, REQUESTS).writeTo(f"{EXAMPLE_RAW}.requests").append()
    runs.append(minute(36) + timedelta(seconds=10))
    build("request_latency", runs[-1])
    windows = spark.sql(
        f"select window_start, request_count, latency_p95 from {SCHEMA}.request_latency where endpoint = '/a'"
        f" and window_start between timestamp'{format_timestamp(minute(6))}' and timestamp'{format_timestamp(minute(11))}'"
    ).collect()
    assert sorted(row["window_start"] for row in windows if row["latency_p95"] > 100) == [
        minute(m) for m in range(6, 11)
    ]

    # The windows holding minute 8 start at minutes 4 to 8 and are final 30 minutes after their
    # ends, at minutes 39 to 43: arriving at 41:30, the request counts only in those starting at 7 and 8.
    spark.createDataFrame([("/b-between", "/b", minute(8.5), 20.0, minute(41.5))], REQUESTS).writeTo(
        f"{EXAMPLE_RAW}.requests"
    ).append()
    runs.append(minute(42) + timedelta(seconds=10))
    build("request_latency", runs[-1])
    listed = spark.sql(
        f"select window_start from {SCHEMA}.request_latency__too_late where event_id = '/b-between'"
    ).collect()
    assert sorted(row["window_start"] for row in listed) == [minute(m) for m in range(4, 7)]
    check_every_run(example, monkeypatch, capsys, "request_latency", runs)


SHOP = ORIGIN + timedelta(days=20)  # the revenue pipeline's clock


def orders() -> list[tuple[Any, ...]]:
    """Four customers ordering at minutes 5, 25 and 45 of four hours, each order arriving 2 minutes later."""
    rows = []
    for hour in range(4):
        for index, customer in enumerate(("c1", "c2", "c3", "c4")):
            for minute in (5, 25, 45):
                moment = SHOP + timedelta(hours=hour, minutes=minute)
                amount = float(10 * (index + 1) + minute)
                rows.append((f"{customer}-{hour}-{minute}", customer, moment, amount, moment + timedelta(minutes=2)))
    return rows


def set_region(spark: Any, customer: str, region: str, effective: datetime) -> None:
    """A change of a customer's region in the source, effective from `effective` (possibly in the
    past: the snapshot closes the old interval there)."""
    spark.sql(
        f"update {EXAMPLE_RAW}.customers set region = '{region}', updated_at = timestamp'{format_timestamp(effective)}'"
        f" where customer_id = '{customer}'"
    )


def revenue(spark: Any, region: str, hour: int) -> tuple[int, float]:
    row = spark.sql(
        f"select order_count, revenue from {SCHEMA}.revenue_by_region where region = '{region}'"
        f" and window_start = timestamp'{format_timestamp(SHOP + timedelta(hours=hour))}'"
    ).first()
    return (int(row["order_count"]), float(row["revenue"])) if row else (0, 0.0)


def why_recomputes(example: DbtProject, region: str, window_start: datetime) -> list[str]:
    """The reasons of the versions `late-data why` lists for a revenue window, after checking each
    one, read as of its run, against the count and sum of the orders why marks counted then."""
    story = window_story(example, "revenue_by_region", region, window_start)
    for version in story.published:
        then = window_story(example, "revenue_by_region", region, window_start, version["valid_from"])
        amounts = [
            json.loads(str(row["measures"]))["amount"] for row in then.deliveries if row["delivery_status"] == "counted"
        ]
        measures = json.loads(str(version["measures"]))
        assert (len(amounts), round(sum(amounts), 6)) == (
            measures["order_count"],
            round(float(measures["revenue"]), 6),
        ), (version, then.deliveries)
    return [str(row["revision_reason"]) for row in story.published]


def test_revenue_by_region_follows_late_corrections_of_the_customer_dimension(
    example: DbtProject, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Revenue per region and hour by the customer's region at each order's time (a dbt snapshot of
    the customers, declared as a dimension): a region change effective in the past moves exactly
    the orders since then to the new region's windows; one that reaches a final window is listed as
    too late and leaves it alone; every run checks 0 mismatched against a replay of the applied
    dimension. Overlapping intervals fail the snapshot's test, naming the customer."""
    spark = example.spark
    customers = [("c1", "north", SHOP), ("c2", "north", SHOP), ("c3", "south", SHOP), ("c4", "south", SHOP)]
    spark.createDataFrame(customers, CUSTOMERS).writeTo(f"{EXAMPLE_RAW}.customers").append()
    spark.createDataFrame(orders(), ORDERS).writeTo(f"{EXAMPLE_RAW}.orders").append()
    hour = clock(SHOP)
    runs = [hour(180) + timedelta(seconds=10)]
    build("+revenue_by_region", runs[-1])
    north_1, south_1 = revenue(spark, "north", 1), revenue(spark, "south", 1)

    # c2 moved to the south at 01:30, recorded only now: its orders of 01:45 and later move.
    set_region(spark, "c2", "south", hour(90))
    late = [("c2-late", "c2", hour(110), 5.0, hour(200))]
    spark.createDataFrame(late, ORDERS).writeTo(f"{EXAMPLE_RAW}.orders").append()
    runs.append(hour(210) + timedelta(seconds=10))
    build("+revenue_by_region", runs[-1])
    c2_amount = 20.0 + 45
    assert revenue(spark, "north", 1) == (north_1[0] - 1, north_1[1] - c2_amount)
    assert revenue(spark, "south", 1) == (south_1[0] + 2, south_1[1] + c2_amount + 5.0)
    reasons = spark.sql(
        f"select region, revision_reason from {SCHEMA}.revenue_by_region__revisions"
        f" where window_start = timestamp'{format_timestamp(hour(60))}' and version_number = 2"
    ).collect()
    assert sorted(tuple(row) for row in reasons) == [("north", "dimension_change"), ("south", "dimension_change")]
    # late-data why on both 01:00 windows: in the north, c2's 01:45 order is superseded by its
    # version the change put in the south's window; each version recomputes as of its run.
    for region in ("north", "south"):
        assert why_recomputes(example, region, hour(60)) == ["initial", "dimension_change"]
    moved = window_story(example, "revenue_by_region", "north", hour(60)).deliveries
    assert {row["event_key"]: row["delivery_status"] for row in moved}["c2-1-45"] == "superseded"

    # And the customers' rows that applied to the orders it counts: c2's north interval closed at
    # 01:30 by the change, not yet as of the first run.
    def applied(at: datetime | None = None) -> set[tuple[Any, ...]]:
        story = window_story(example, "revenue_by_region", "north", hour(60), at)
        return {(row["event_key"], row["valid_from"], row["valid_to"]) for row in story.dimension_rows}

    assert applied() == {("c1", SHOP, None), ("c2", SHOP, hour(90))}
    assert applied(runs[0]) == {("c1", SHOP, None), ("c2", SHOP, None)}

    # c3 moved to the north at 00:30: the 00:00 window has been final since 03:00 and keeps c3's
    # 00:45 order in the south (listed as too late); the later windows move c3's orders.
    south_0, south_2 = revenue(spark, "south", 0), revenue(spark, "south", 2)
    set_region(spark, "c3", "north", hour(30))
    runs.append(hour(225) + timedelta(seconds=10))
    build("+revenue_by_region", runs[-1])
    assert revenue(spark, "south", 0) == south_0
    assert revenue(spark, "south", 2)[0] == south_2[0] - 3
    listed = spark.sql(
        f"select event_id, region, too_late_reason from {SCHEMA}.revenue_by_region__too_late order by event_id"
    ).collect()
    assert [tuple(row) for row in listed] == [("c3-0-45", "north", "dimension_change_after_final")]

    # Copies of one order delivered together count once, are stored once and, when a change of c4's
    # region reaches their window after it became final, are listed once. A correction of a final
    # window is listed as replacing a final version; one that moves an order from one final window
    # to another misses both.
    copies = [("c4-copy", "c4", hour(125), 7.0, hour(228))] * 2
    spark.createDataFrame(copies, ORDERS).writeTo(f"{EXAMPLE_RAW}.orders").append()
    runs.append(hour(230) + timedelta(seconds=10))
    build("+revenue_by_region", runs[-1])
    stored = spark.sql(f"select count(*) from {SCHEMA}.revenue_by_region__versions where event_id = 'c4-copy'")
    assert stored.first()[0] == 1
    set_region(spark, "c4", "west", hour(100))
    corrections = [("c1-0-5", "c1", hour(5), 99.0, hour(305)), ("c2-0-25", "c2", hour(70), 45.0, hour(306))]
    spark.createDataFrame(corrections, ORDERS).writeTo(f"{EXAMPLE_RAW}.orders").append()
    runs.append(hour(310) + timedelta(seconds=10))
    build("+revenue_by_region", runs[-1])
    listed = spark.sql(
        f"select event_id, window_start, too_late_reason from {SCHEMA}.revenue_by_region__too_late"
        " where event_id in ('c4-copy', 'c1-0-5', 'c2-0-25')"
    ).collect()
    assert sorted(tuple(row) for row in listed) == [
        ("c1-0-5", hour(0), "replaces_final_version"),
        ("c2-0-25", hour(0), "replaces_final_version"),
        ("c2-0-25", hour(60), "arrived_after_final"),
        ("c4-copy", hour(120), "dimension_change_after_final"),
    ]
    # check compares the listing too (as of the last run): an entry listed twice, or with another
    # reason, fails it. Each check replays every dimension change up to its run: the first run, the
    # one whose change reached a final window, and the last (the history as of every run is
    # the scenario oracle's and the fault injection's proof).
    out = check_every_run(example, monkeypatch, capsys, "revenue_by_region", [runs[0], runs[2], runs[-1]])
    assert "revenue_by_region: too-late listing: " in out, out
    # Lateness names the orders, the source the facts come from (not the customers), over each
    # order's first delivery (the copies once, the corrections not), with Spark's exact percentiles.
    (lateness,) = spark.sql(f"select * from {SCHEMA}.revenue_by_region__lateness").collect()
    (expected,) = spark.sql(
        "select count(*) as arrived, percentile(seconds, 0.9) as p90 from (select distinct *,"
        " (unix_millis(ingested_at) - unix_millis(event_time)) / 1000.0 as seconds"
        " from (select *, ingested_at = min(ingested_at) over (partition by event_id) as first_delivery"
        f" from {EXAMPLE_RAW}.orders where ingested_at <= timestamp'{format_timestamp(runs[-1])}')"
        " where first_delivery)"
    ).collect()
    assert (lateness["source_table"], lateness["arrived_rows"]) == ("orders", expected["arrived"])
    assert lateness["p90_lateness_seconds"] == expected["p90"]

    # A second open interval of c4 from 02:00: orders after it would join two rows.
    snapshot = f"{SCHEMA}.customers_snapshot"
    spark.sql(
        f"insert into {snapshot} select customer_id, 'west', updated_at, dbt_scd_id || 'x', dbt_updated_at,"
        f" timestamp'{format_timestamp(hour(120))}', null from {snapshot} where customer_id = 'c4'"
    )
    from dbt.cli.main import dbtRunner

    outcome = dbtRunner().invoke(
        [
            "--quiet",
            "test",
            "--select",
            "customers_snapshot",
            "--project-dir",
            str(EXAMPLE),
            "--profiles-dir",
            str(CHECKOUT / "profiles"),
        ]
    )
    statuses = dbt_statuses(outcome, "test")
    assert statuses == {"late_data_valid_intervals_customers_snapshot_customer_id": "fail"}
    spark.sql(f"delete from {snapshot} where customer_id = 'c4' and dbt_scd_id like '%x'")  # for the tests after


VISITS = ORIGIN + timedelta(days=20)  # the page visits pipeline's clock


def page_view(event: str, visitor: str | None, minute: float, arrived: float, dwell: float = 12.0) -> tuple[Any, ...]:
    at_minute = clock(VISITS)
    return (event, visitor, f"/p{int(minute) % 3}", at_minute(minute), dwell, at_minute(arrived))


def visits(spark: Any, visitor: str) -> list[tuple[datetime, datetime, int]]:
    rows = spark.sql(
        f"select window_start, window_end, page_views from {SCHEMA}.page_visits where visitor_id = '{visitor}'"
    ).collect()
    return sorted((row["window_start"], row["window_end"], row["page_views"]) for row in rows)


def rewritten_since(spark: Any, table_format: str, version: int | None) -> set[tuple[datetime, int]]:
    """(hour partition, series bucket) of every partition page_visits' commits after `version` touched."""
    commits = commits_after(spark, f"{SCHEMA}.page_visits", table_format, version)
    return set().union(*(commit.partitions_touched for commit in commits))


def test_page_visits_merge_extend_and_split_exactly_under_late_data(
    example: DbtProject, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Sessions per visitor, a 30-minute gap, a 1-hour late window, at most 4 hours each: a late view
    in the gap merges two sessions across a partition boundary, a view before a session extends it
    backwards, a correction that moves the view bridging them splits the merged session again, a
    view later than its late window is listed and changes nothing, copies count once, a bad value is
    quarantined, and a burst longer than 4 hours is cut 4 hours after its first view. Checked
    against the session oracle at every run, from the result and from the history."""
    spark = example.spark
    table_format = example.environment.table_format
    minute = clock(VISITS)
    first = [
        *(page_view(f"v1-{m}", "v1", m, m + 1) for m in (0, 10, 20, 60, 70)),
        *(page_view(f"v2-{m}", "v2", m, m + 1) for m in (30, 40)),
        page_view("v2-40", "v2", 40, 41),  # a copy delivered with it
        *(page_view(f"v3-{m}", "v3", m, m + 1) for m in range(0, 320, 20)),
        # Sub-second times: the third view a microsecond beyond the gap starts a session of its own,
        # and a view 0.74 s after its late window is listed as 1 second after final (rounded up).
        *(page_view(f"v4-{m}", "v4", m, m + 1) for m in (0, 30)),
        page_view("v4-60", "v4", 60 + 1 / 60_000_000, 61),
        page_view("v4-late", "v4", 5, 65 + 0.74 / 60),
    ]
    spark.createDataFrame(first, PAGE_VIEWS).writeTo(f"{EXAMPLE_RAW}.page_views").append()
    runs = [minute(75) + timedelta(seconds=10)]
    build("page_visits", runs[-1])
    assert visits(spark, "v1") == [(minute(0), minute(50), 3), (minute(60), minute(100), 2)]
    assert visits(spark, "v2") == [(minute(30), minute(70), 2)]
    beyond_gap = minute(60) + timedelta(microseconds=1)
    assert visits(spark, "v4") == [(minute(0), minute(60), 2), (beyond_gap, beyond_gap + timedelta(minutes=30), 1)]

    later = [
        page_view("v1-40", "v1", 40, 80),  # in the gap: merges 0-50 and 60-100
        page_view("v2-20", "v2", 20, 78),  # before the first: extends the session backwards
        page_view("v2-nan", "v2", 35, 83, dwell=float("nan")),  # quarantined, counted nowhere
    ]
    spark.createDataFrame(later, PAGE_VIEWS).writeTo(f"{EXAMPLE_RAW}.page_views").append()
    runs.append(minute(90) + timedelta(seconds=10))
    before = latest_version(spark, f"{SCHEMA}.page_visits", table_format)
    build("page_visits", runs[-1])
    assert visits(spark, "v1") == [(minute(0), minute(100), 6)]
    assert visits(spark, "v2") == [(minute(20), minute(70), 3)]
    # The table format's record of what the run rewrote: the hour of the merged and extended
    # sessions' starts, and the next hour, where the session that merged away started.
    assert rewritten_since(spark, table_format, before) == {(minute(0), 0), (minute(60), 0)}

    corrections = [
        page_view("v1-40", "v1", 150, 95),  # the bridging view happened much later: the merge splits
        page_view("v1-25", "v1", 25, 91),  # 6 minutes after its late window
    ]
    spark.createDataFrame(corrections, PAGE_VIEWS).writeTo(f"{EXAMPLE_RAW}.page_views").append()
    runs.append(minute(100) + timedelta(seconds=10))
    before = latest_version(spark, f"{SCHEMA}.page_visits", table_format)
    build("page_visits", runs[-1])
    # The split's three sessions start in three hours; v2's, v3's and the too-late view's change nothing.
    assert rewritten_since(spark, table_format, before) == {(minute(0), 0), (minute(60), 0), (minute(120), 0)}
    assert visits(spark, "v1") == [
        (minute(0), minute(50), 3),
        (minute(60), minute(100), 2),
        (minute(150), minute(180), 1),
    ]
    listed = spark.sql(
        f"select event_id, too_late_reason, seconds_after_final from {SCHEMA}.page_visits__too_late"
    ).collect()
    assert sorted(tuple(row) for row in listed) == [
        ("v1-25", "arrived_after_final", 360),
        ("v4-late", "arrived_after_final", 1),
    ]
    (quarantined,) = spark.sql(f"select event_id from {SCHEMA}.page_visits__quarantine").collect()
    assert quarantined["event_id"] == "v2-nan"

    revisions = spark.sql(
        f"select window_start, valid_from, revision_reason from {SCHEMA}.page_visits__revisions"
        " where visitor_id = 'v1' and revision_reason in ('merged', 'split')"
    ).collect()
    assert sorted(tuple(row) for row in revisions) == [
        (minute(0), runs[1], "merged"),  # 0-50 and 60-100 became one
        (minute(0), runs[2], "split"),
        (minute(60), runs[2], "split"),
    ]
    (extended,) = spark.sql(
        f"select revision_reason, count_change from {SCHEMA}.page_visits__revisions"
        f" where visitor_id = 'v2' and window_start = timestamp'{format_timestamp(minute(20))}'"
    ).collect()
    assert tuple(extended) == ("late_data", 1)  # the session starting at 30 extended backwards

    runs.append(minute(320) + timedelta(seconds=10))
    build("page_visits", runs[-1])
    # v3 viewed a page every 20 minutes from 0 to 300: cut 240 minutes after its first view.
    assert visits(spark, "v3") == [(minute(0), minute(250), 12), (minute(240), minute(330), 4)]
    check_every_run(example, monkeypatch, capsys, "page_visits", runs)
    # One value wrong, and the check says so.
    spark.sql(f"update {SCHEMA}.page_visits set page_views = page_views + 1 where visitor_id = 'v4'")
    monkeypatch.setattr(cli, "open_project", lambda writer=None: example)
    assert cli.main(["--project-dir", str(EXAMPLE), "check", "--pipeline", "page_visits"]) == 1
    assert "2 mismatched" in capsys.readouterr().out


# A fix in the select of every example pipeline: (model, the select's text, the fixed text).
FIXED_SELECTS = (
    ("meter_usage", "    kwh,\n", "    kwh * 1000 as kwh,\n"),  # kWh to Wh
    (
        "daily_active_users",
        "from {{ source('apps', 'app_events') }}",
        "from {{ source('apps', 'app_events') }}\nwhere user_id != 'u1'",
    ),
    ("request_latency", "    latency_ms,\n", "    latency_ms / 1000 as latency_ms,\n"),
    ("revenue_by_region", "    orders.amount,\n", "    orders.amount * 100 as amount,\n"),  # to cents
    ("page_visits", "    dwell_seconds,\n", "    dwell_seconds / 60 as dwell_seconds,\n"),
)
FIXED = ORIGIN + timedelta(days=25)  # the apply's clock: after the other tests' runs, before the refusals'


def test_a_fixed_select_of_every_shape_is_applied_in_a_stage_and_published(
    example: DbtProject, tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`late-data plan`, `apply` and `publish` on each shape the example holds (fixed, daily distinct,
    sliding percentiles, a dimension at event time, sessions), with a few rows of each its own and
    whatever the tests above left: a fix in every pipeline's select rebuilt from raw in one stage,
    invisible until published, then every pipeline right against its recomputation through the new
    select, and each window the fix changed a new version labelled definition_change."""
    import shutil

    spark = example.spark
    rows = {
        f"{RAW_SCHEMA}.meter_readings": ([("fix-m1", "m1", FIXED, 2.0, FIXED + timedelta(seconds=10))], READINGS),
        f"{EXAMPLE_RAW}.app_events": (
            [(f"fix-{user}", "web", user, FIXED, FIXED + timedelta(seconds=10)) for user in ("u1", "u2")],
            APP_EVENTS,
        ),
        f"{EXAMPLE_RAW}.requests": ([("fix-a", "/a", FIXED, 100.0, FIXED + timedelta(seconds=5))], REQUESTS),
        f"{EXAMPLE_RAW}.customers": (
            [(customer, "east", FIXED - timedelta(hours=1)) for customer in ("fix-c", "fix-d")],
            CUSTOMERS,
        ),
        f"{EXAMPLE_RAW}.orders": (
            [
                (f"fix-{customer}", customer, FIXED, 10.0, FIXED + timedelta(seconds=10))
                for customer in ("fix-c", "fix-d")
            ],
            ORDERS,
        ),
        f"{EXAMPLE_RAW}.page_views": (
            [("fix-v", "fix-v", "/p", FIXED, 12.0, FIXED + timedelta(seconds=10))],
            PAGE_VIEWS,
        ),
    }
    for table, (values, schema) in rows.items():
        spark.createDataFrame(values, schema).writeTo(table).append()
    built_at, applied_at = FIXED + timedelta(minutes=1, seconds=10), FIXED + timedelta(hours=3, minutes=30)
    plain_dbt("build", "--resource-type", "model", "--resource-type", "snapshot", run_time=built_at)
    # The orders' window final (at 03:00), then one customer's region changed from before it: too late.
    revenue_run = [
        "build",
        "--resource-type",
        "model",
        "--resource-type",
        "snapshot",
        "--select",
        "+revenue_by_region+",
    ]
    plain_dbt(*revenue_run, run_time=FIXED + timedelta(hours=3, seconds=10))
    set_region(spark, "fix-c", "west", FIXED - timedelta(minutes=30))
    plain_dbt(*revenue_run, run_time=FIXED + timedelta(hours=3, minutes=20))
    listed = spark.sql(f"select too_late_reason from {SCHEMA}.revenue_by_region__too_late where event_id = 'fix-fix-c'")
    assert [row["too_late_reason"] for row in listed.collect()] == ["dimension_change_after_final"]

    copy = tmp_path / "project"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("target", "logs", "dbt_packages"))
    (copy / "packages.yml").write_text(f"packages:\n  - local: {CHECKOUT / 'package'}\n")
    for model, old, new in FIXED_SELECTS:
        sql = copy / "models" / f"{model}.sql"
        assert old in sql.read_text(), model
        sql.write_text(sql.read_text().replace(old, new))
    monkeypatch.setenv("LATE_DATA_PROJECT_DIR", str(copy))
    fixed = DbtProject(prepare_environment(), hold_home=False)
    try:
        monkeypatch.setattr(cli, "open_project", lambda writer=None: fixed)

        def late_data(*args: str) -> str:
            code = cli.main(["--project-dir", str(copy), *args])
            captured = capsys.readouterr()
            assert code == 0, captured.out + captured.err
            return captured.out

        plain_dbt_deps(copy)
        plan = late_data("plan").splitlines()
        assert plan[-1] == "plan: 5 of 5 pipelines changed", plan
        assert all(" the select redefined" in line for line in plan[:-1]), plan
        # Until the change is applied, check says it cannot check the tables through the new select.
        assert cli.main(["--project-dir", str(copy), "check", "--pipeline", "page_visits"]) == 2
        assert capsys.readouterr().err.endswith(
            " was computed by another definition than the code's (the select redefined), and check recomputes"
            " through the code's: apply the change first (late-data plan, then late-data apply), then check\n"
        )
        results = lambda: {
            model: sorted(spark.table(f"{SCHEMA}.{model}").collect(), key=str) for model, *_ in FIXED_SELECTS
        }
        published = results()

        out = late_data("apply", "--run-time", format_timestamp(applied_at))
        name = next(word for word in out.split() if word.startswith("apply_"))
        assert results() == published

        assert f"publish: {name} published" in late_data("publish", name)
        out = late_data("check")
        assert all(f"{model}: " in out for model, *_ in FIXED_SELECTS) and out.splitlines()[-1].endswith(
            " 0 mismatched"
        ), out
        window_max = (
            f"select kwh_max from {SCHEMA}.meter_usage where meter_id = 'm1' and window_start = timestamp'{FIXED}'"
        )
        assert spark.sql(window_max).first()["kwh_max"] == 2000.0
        # The sessions' own revisions: the fix's session has a new version at the apply, labelled as
        # the definition's, as has every window of both shapes the fix changed.
        versions = spark.sql(
            f"select valid_from, revision_reason from {SCHEMA}.page_visits__revisions"
            f" where visitor_id = 'fix-v' order by version_number"
        ).collect()
        assert [tuple(row) for row in versions] == [(built_at, "initial"), (applied_at, "definition_change")]
        for revisions in ("page_visits__revisions", "revenue_by_region__revisions"):
            reasons = spark.sql(
                f"select distinct revision_reason from {SCHEMA}.{revisions}"
                f" where valid_from = timestamp'{format_timestamp(applied_at)}' and version_number > 1"
            ).collect()
            assert [row["revision_reason"] for row in reasons] == ["definition_change"], (revisions, reasons)
        # A rebuild applies what came too late for a final window: fix-c's order moves to the west (a
        # window of its own, first published by the apply) and leaves the too-late listing. The
        # dimension rows the rebuild applied are published with it, so the check above replays them.
        moved = spark.sql(
            f"select region, valid_from, valid_to, revision_reason from {SCHEMA}.revenue_by_region__revisions"
            f" where window_start = timestamp'{FIXED}' and region in ('east', 'west') order by region, version_number"
        ).collect()
        assert [tuple(row) for row in moved] == [
            ("east", built_at, FIXED + timedelta(hours=3, seconds=10), "initial"),
            ("east", FIXED + timedelta(hours=3, seconds=10), applied_at, "finalized"),
            ("east", applied_at, None, "definition_change"),
            ("west", applied_at, None, "initial"),
        ]
        assert (
            spark.sql(f"select * from {SCHEMA}.revenue_by_region__too_late where event_id = 'fix-fix-c'").count() == 0
        )
        # A run before the apply had the old select: check, which recomputes through the code's, says
        # so rather than report its correct windows as mismatched.
        argv = [
            "--project-dir",
            str(copy),
            "check",
            "--pipeline",
            "meter_usage",
            "--run-time",
            format_timestamp(built_at),
        ]
        assert cli.main(argv) == 2
        assert capsys.readouterr().err == (
            f"late-data: meter_usage: the run at {format_timestamp(built_at)} was computed by another definition than"
            " the code's (the select redefined), and check recomputes through the code's: check a run since the change\n"
        )
    finally:
        monkeypatch.setenv("LATE_DATA_PROJECT_DIR", str(EXAMPLE))
        prepare_environment()


def plain_dbt_deps(project_dir: Any) -> None:
    from dbt.cli.main import dbtRunner

    common = ["--project-dir", str(project_dir), "--profiles-dir", str(CHECKOUT / "profiles")]
    assert dbtRunner().invoke(["--quiet", "deps", *common]).success


@pytest.mark.spark
def test_the_example_project_parses_without_a_deprecation_warning() -> None:
    """What the docs tell a user to write (the example's yml: generic tests with their arguments
    under `arguments:`) raises none of dbt 1.11's deprecation warnings on a full parse."""
    from dbt.cli.main import dbtRunner

    deprecations: list[str] = []

    def collect(event: Any) -> None:
        if event.info.name.endswith("Deprecation"):
            deprecations.append(event.info.name)

    common = ["--project-dir", str(EXAMPLE), "--profiles-dir", str(CHECKOUT / "profiles")]
    assert dbtRunner().invoke(["--quiet", "deps", *common]).success
    assert dbtRunner(callbacks=[collect]).invoke(["--quiet", "parse", "--no-partial-parse", *common]).success
    assert deprecations == []


def test_the_example_pipeline_is_one_model_and_one_yml_entry() -> None:
    """What a pipeline costs a user: its model and its yml (the project's one-time setup aside)."""
    models = EXAMPLE / "models"
    pipelines = {path.stem for path in models.glob("*.sql")}
    assert pipelines == {"meter_usage", "daily_active_users", "request_latency", "revenue_by_region", "page_visits"}
    assert sorted(path.name for path in models.iterdir()) == sorted(
        f"{name}{suffix}" for name in pipelines for suffix in (".sql", ".yml")
    )
    for name in pipelines:
        assert sum(len((models / f"{name}{suffix}").read_text().splitlines()) for suffix in (".sql", ".yml")) <= 80, (
            name
        )


@pytest.mark.parametrize(
    ("model", "old", "new", "command", "message"),
    [
        (
            "request_latency",
            "latency_p95: {percentile: {column: latency_ms, p: 0.95}}",
            "latency_p95: {percentile: {column: latency_ms, p: 1.5}}",
            "run-operation",
            "meta.late_data.measures of model request_latency.latency_p95.percentile.p=1.5 must be a number above 0"
            " and below 1",
        ),
        (
            "request_latency",
            "window_slide_seconds: 60",
            "window_slide_seconds: 70",
            "run-operation",
            "meta.late_data.window_slide_seconds of model request_latency=70 must divide window_size_seconds=300",
        ),
        (
            "page_visits",
            "session_gap_seconds: 1800",
            "session_gap_seconds: 1800\n          window_size_seconds: 300",
            "run-operation",
            "meta.late_data of model page_visits: session_gap_seconds and window_size_seconds cannot be set together",
        ),
        (
            "daily_active_users",
            "active_users: {count_distinct: user_id}",
            "active_users: {median: user_id}",
            "run",
            "meta.late_data.measures.active_users of model daily_active_users: column user_id is string, which"
            " median cannot take (it needs a number)",
        ),
        (
            "revenue_by_region",
            "          dimensions:\n            customers_snapshot: {key: customer_id}\n",
            "",
            "run-operation",
            "late-data model revenue_by_region reads snapshot customers_snapshot, which it does not declare in"
            " meta.late_data.dimensions",
        ),
    ],
)
def test_a_bad_measure_window_or_undeclared_dimension_is_refused_naming_it(
    example: DbtProject, tmp_path: Any, model: str, old: str, new: str, command: str, message: str
) -> None:
    """The example project with one pipeline's yml broken: refused before anything is written, the
    error naming the pipeline and the setting."""
    import shutil

    from dbt.cli.main import dbtRunner

    broken = tmp_path / "project"
    shutil.copytree(EXAMPLE, broken, ignore=shutil.ignore_patterns("target", "logs", "dbt_packages"))
    yml = broken / "models" / f"{model}.yml"
    assert old in yml.read_text()
    yml.write_text(yml.read_text().replace(old, new))
    (broken / "packages.yml").write_text(f"packages:\n  - local: {CHECKOUT / 'package'}\n")
    common = ["--project-dir", str(broken), "--profiles-dir", str(CHECKOUT / "profiles")]
    tables = [f"{SCHEMA}.{model}", f"{SCHEMA}.{model}__versions"]
    rows_before = [
        example.spark.table(table).count() if example.spark.catalog.tableExists(table) else None for table in tables
    ]
    assert dbtRunner().invoke(["--quiet", "deps", *common]).success
    # A rebuild: a scheduled run of a changed measure is refused earlier, as a change of definition.
    args = (
        ["run-operation", "late_data.describe_pipelines"]
        if command == "run-operation"
        else ["run", "--full-refresh", "--select", model]
    )
    outcome = dbtRunner().invoke(["--quiet", *args, *common, "--vars", '{run_time: "2026-07-01 00:00:10"}'])
    assert not outcome.success
    errors = (broken / "logs" / "dbt.log").read_text()
    assert message in " ".join(errors.split()), errors[-3000:]
    rows_after = [
        example.spark.table(table).count() if example.spark.catalog.tableExists(table) else None for table in tables
    ]
    assert rows_after == rows_before
