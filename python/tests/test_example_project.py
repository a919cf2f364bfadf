"""The example project (integration_tests/): a dbt project of its own installs the late_data package
by `local:` path and defines a pipeline on a source of its own, meter readings per meter and 5
minutes with a 2-hour late window (sum, count and max), in one model and one yml entry. Built with
plain dbt (deps, build, scheduled builds with late rows and a correction in between, a full
refresh, test) and checked with `late-data check`: every window right, the history right as of
every run, the too-late and quarantined readings listed.

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
from late_data.dbt_project import DbtProject
from late_data.environment import find_project_dir, prepare_environment
from late_data.timeutil import format_timestamp
from tests.helpers import clock

REPOSITORY = find_project_dir()
EXAMPLE = REPOSITORY / "integration_tests"
SCHEMA, RAW_SCHEMA = "meters", "meters_raw"
ORIGIN = datetime(2026, 6, 1, 0, 0, 0)
at = clock(ORIGIN)
READINGS = "event_id string, meter_id string, event_time timestamp, kwh double, ingested_at timestamp"
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
    for schema in (SCHEMA, RAW_SCHEMA):
        spark.sql(f"drop schema if exists {schema} cascade")
    spark.sql(f"create schema {RAW_SCHEMA}")
    table_format = project.environment.table_format
    spark.sql(f"create table {RAW_SCHEMA}.meter_readings ({READINGS}) using {table_format}")
    spark.createDataFrame(on_time_readings(), READINGS).writeTo(f"{RAW_SCHEMA}.meter_readings").append()
    os.environ["LATE_DATA_SCHEMA"] = SCHEMA
    os.environ["LATE_DATA_PROJECT_DIR"] = str(EXAMPLE)
    example_project = DbtProject(prepare_environment(), hold_home=False)
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
    """A dbt command on the example project, as a user types it (dbt's own runner, no late-data code)."""
    from dbt.cli.main import dbtRunner

    vars_args = ["--vars", json.dumps({"run_time": format_timestamp(run_time)})] if run_time else []
    outcome = dbtRunner().invoke(
        [
            "--quiet",
            *args,
            "--project-dir",
            str(EXAMPLE),
            "--profiles-dir",
            str(REPOSITORY / "profiles"),
            *vars_args,
        ]
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
    out = capsys.readouterr().out
    assert code == 0, out
    return out


def test_the_example_pipeline_is_right_run_after_run_with_plain_dbt(
    example: DbtProject, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spark = example.spark
    plain_dbt("deps")
    first = plain_dbt("build", run_time=at(30) + timedelta(seconds=10))
    assert {result.node.name for result in first.result.results} >= {"meter_usage", "meter_usage_history"}
    window_max = f"select kwh_max from {SCHEMA}.meter_usage where meter_id = 'm1' and window_start = timestamp'{at(0)}'"
    assert spark.sql(window_max).first()["kwh_max"] == 9.0
    spark.createDataFrame(later_readings(), READINGS).writeTo(f"{RAW_SCHEMA}.meter_readings").append()

    second_at, third_at = at(55) + timedelta(seconds=10), at(140) + timedelta(seconds=10)
    plain_dbt("build", run_time=second_at)
    # The correction retracted the window's largest reading: its max is recomputed from the versions.
    assert spark.sql(window_max).first()["kwh_max"] == pytest.approx(1.5)
    out = late_data_check(example, monkeypatch, capsys)
    assert out.splitlines()[-1].endswith(" 0 mismatched") and "meter_usage: " in out

    plain_dbt("build", run_time=third_at)
    too_late = spark.sql(f"select event_id, too_late_reason from {SCHEMA}.meter_usage__too_late").collect()
    assert [(row["event_id"], row["too_late_reason"]) for row in too_late] == [("m4-too-late", "arrived_after_final")]
    quarantined = spark.sql(f"select event_id, quarantine_reason from {SCHEMA}.meter_usage__quarantine").collect()
    assert sorted((row["event_id"], row["quarantine_reason"]) for row in quarantined) == [
        ("m2-no-meter", "null_meter_id"),
        ("m4-nan", "not_finite"),
    ]
    # Every run's state, read back from the history (as of each run time), against the oracle.
    for run_time in (at(30) + timedelta(seconds=10), second_at, third_at):
        out = late_data_check(example, monkeypatch, capsys, "--run-time", format_timestamp(run_time))
        assert out.splitlines()[-1].endswith(" 0 mismatched"), out

    plain_dbt("build", "--full-refresh", run_time=third_at + timedelta(minutes=10))
    out = late_data_check(example, monkeypatch, capsys)
    assert out.splitlines()[-1].endswith(" 0 mismatched"), out
    tests = plain_dbt("test", run_time=third_at + timedelta(minutes=10))
    statuses = {result.node.name: str(result.status) for result in tests.result.results}
    assert statuses["late_data_too_late_rows_meter_usage_history_"] == "warn"
    assert statuses["late_data_quarantine_is_empty_meter_usage_"] == "warn"
    assert statuses["late_data_ambiguous_versions_meter_usage_"] == "pass"


def test_the_example_pipeline_is_one_model_and_one_yml_entry() -> None:
    """What a pipeline costs a user: its model and its yml (the project's one-time setup aside)."""
    pipeline_files = [EXAMPLE / "models" / "meter_usage.sql", EXAMPLE / "models" / "meter_usage.yml"]
    assert sorted(path.name for path in (EXAMPLE / "models").iterdir()) == sorted(path.name for path in pipeline_files)
    assert sum(len(path.read_text().splitlines()) for path in pipeline_files) <= 80
