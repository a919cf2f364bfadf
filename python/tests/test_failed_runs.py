"""A run whose result write failed is never taken for a finished one: the scheduler says so in one
line and exits 2, `status` lists the run, the next scheduler start runs it again at its own run
time, and then `check` finds every window right and the history holds that run's state. Every
command on a warehouse nothing was built in says what to do, in one line, exit 2.

The commands run in this process on the tests' shared Spark session (`late-data` opens the project
through cli.open_project, patched to hand them that one)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest

from late_data import cli
from late_data.commands.status import read_status
from late_data.oracles.demo_pipelines import compare_means, expected_window_means
from late_data.project.audit import history_as_of
from late_data.project.raw_tables import ensure_raw_tables
from late_data.running.scheduler import run_pipeline
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.timeutil import format_timestamp
from tests.helpers import TEST_SETTINGS, TEST_VARS, WINDOW_MEANS_COLUMNS, clock

ORIGIN = datetime(2026, 5, 4, 9, 0, 0)
at = clock(ORIGIN)
SCHEDULE = [
    "schedule",
    "--clock",
    "simulated",
    "--origin",
    format_timestamp(ORIGIN),
    "--interval",
    "300",
    "--locations",
    "3",
    "--pages",
    "0",
    "--max-lateness",
    "600",
    "--reconcile-every",
    "0",
    "--maintain-every",
    "0",
]
# Where data files would go: under a file, so every write of the table fails, whoever runs it
# (root included), while its existing files stay readable.
UNWRITABLE = "file:/dev/null/unwritable"


@pytest.fixture
def commands(project: DbtProject, monkeypatch: pytest.MonkeyPatch) -> Iterator[DbtProject]:
    """An empty warehouse with the tests' settings, and every command opening the shared project."""
    project.reset_warehouse()
    project.use_vars(TEST_VARS)
    monkeypatch.setattr(cli, "open_project", lambda writer=None: project)
    yield project
    project.use_vars(TEST_VARS)


def run_command(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def last_line(err: str) -> str:
    """What a command ended with on stderr (a progress bar redraws itself with carriage returns)."""
    return err.replace("\r", "\n").strip().splitlines()[-1]


def test_a_failed_write_is_retried_and_then_everything_checks_out(
    commands: DbtProject, capsys: pytest.CaptureFixture[str]
) -> None:
    project = commands
    if project.environment.table_format != "iceberg":
        pytest.skip("the failed write is made with an Iceberg table property (write.data.path)")
    means = f"{project.target_schema()}.water_level_window_means"
    ensure_raw_tables(project.spark, project.raw_schema(), project.environment.table_format)

    code, out, _ = run_command([*SCHEDULE, "--end", format_timestamp(at(5) + timedelta(seconds=10))], capsys)
    assert code == 0, out
    # The first run builds everything and reports what it wrote (a first build used to report zeros).
    first = dict(field.split("=", 1) for field in out.splitlines()[0].split(" ")[2:])
    assert int(first["versions_loaded"]) > 0 and int(first["rows_written"]) > 0
    assert int(first["partitions_rewritten"]) > 0 and int(first["windows_changed"]) > 0

    # A row written by hand, stamped well after the schedule: the next schedule still feeds its batch.
    project.spark.sql(
        f"insert into {project.raw_schema()}.water_level_readings values"
        f" ('by-hand', 'loc-0', timestamp'{at(16)}', 1.0, timestamp'{at(40)}')"
    )
    failed_at = at(10) + timedelta(seconds=10)
    project.spark.sql(f"alter table {means} set tblproperties ('write.data.path' = '{UNWRITABLE}')")
    try:
        code, out, err = run_command([*SCHEDULE, "--end", format_timestamp(at(15) + timedelta(seconds=10))], capsys)
        assert code == 2
        line = last_line(err)
        assert line.startswith(f"late-data: the run at {format_timestamp(failed_at)} failed: dbt build failed:")
        assert "water_level_window_means: ParentNotDirectoryException" in line and "runs it again" in line
        assert "Traceback" not in err and "\tat " not in err and "Caused by" not in err
        fed = project.query(
            f"select count(*) as rows from {project.raw_schema()}.water_level_readings"
            f" where ingested_at >= timestamp'{at(5) + timedelta(seconds=10)}' and ingested_at < timestamp'{failed_at}'"
            " and event_id like 'wl-%'"
        )
        assert fed[0]["rows"] > 0

        status = read_status(project)
        # The failed node's tables (its versions and its result), and the history and listing it skipped.
        assert [(run["run_time"], run["model"], run["outcome"]) for run in status.failed] == [
            (failed_at, "int_water_level__versions", "error"),
            (failed_at, "water_level_too_late_readings", "skipped"),
            (failed_at, "water_level_window_means", "error"),
            (failed_at, "water_level_window_means_history", "skipped"),
        ]
        assert "interrupted runs not yet recovered: 1" in "\n".join(status.lines())
    finally:
        project.spark.sql(f"alter table {means} unset tblproperties ('write.data.path')")

    code, out, err = run_command([*SCHEDULE, "--end", format_timestamp(at(15) + timedelta(seconds=10))], capsys)
    assert code == 0, err
    assert [line[: len("run_time=") + 19] for line in out.splitlines()] == [
        f"run_time={format_timestamp(failed_at)}",
        f"run_time={format_timestamp(at(15) + timedelta(seconds=10))}",
    ]
    assert read_status(project).failed == []

    # The retried run's state is in the history, exactly; `check` at its run time reads it there.
    history = f"{means}_history"
    expected = expected_window_means(
        project.spark, f"{project.raw_schema()}.water_level_readings", failed_at, TEST_SETTINGS
    )
    assert (
        compare_means(expected, history_as_of(project.spark, history, failed_at, WINDOW_MEANS_COLUMNS)).mismatched == 0
    )
    assert (
        project.query(f"select count(*) as versions from {history} where dbt_valid_from = timestamp'{failed_at}'")[0][
            "versions"
        ]
        > 0
    )
    # At the retried run's time, and at a moment no run happened at (after the last run): checked as
    # of the last run before it, the current state, and said so.
    for argv in (
        ["check", "--run-time", format_timestamp(failed_at)],
        ["check", "--run-time", format_timestamp(at(18))],
    ):
        code, out, _ = run_command(argv, capsys)
        assert code == 0 and out.strip().endswith(" 0 mismatched"), out
    assert f"no run at {format_timestamp(at(18))}; checking the last one before it" in out

    # The feed cannot write the raw table: one line naming what it could not append, nothing run.
    readings = f"{project.raw_schema()}.water_level_readings"
    project.spark.sql(f"alter table {readings} set tblproperties ('write.data.path' = '{UNWRITABLE}')")
    try:
        code, _, err = run_command([*SCHEDULE, "--end", format_timestamp(at(20) + timedelta(seconds=10))], capsys)
    finally:
        project.spark.sql(f"alter table {readings} unset tblproperties ('write.data.path')")
    assert code == 2 and "Traceback" not in err
    assert last_line(err).startswith("late-data: could not append the generated rows arriving in [")
    assert f"to the raw tables ({readings}, " in last_line(err) and "ParentNotDirectoryException" in last_line(err)

    # A run without a run_time var happens at the wall clock: a simulated schedule after it has no
    # run left, and says why instead of succeeding with nothing done.
    run_pipeline(project, datetime(2026, 11, 25, 12, 0, 0), "tag:water_level,tag:late_data")
    code, _, err = run_command([*SCHEDULE, "--end", format_timestamp(at(40))], capsys)
    assert code == 2
    assert last_line(err).startswith("late-data: the audit's last run is at 2026-11-25 12:00:00, after --end")


@pytest.mark.parametrize("built_raw", [False, True])
def test_every_command_on_an_unbuilt_warehouse_says_what_to_do(
    commands: DbtProject, capsys: pytest.CaptureFixture[str], built_raw: bool
) -> None:
    project = commands
    if built_raw:
        ensure_raw_tables(project.spark, project.raw_schema(), project.environment.table_format)
    for argv in (
        ["check"],
        ["check", "--run-time", "2026-01-01 00:50:10"],
        ["reconcile", "--run-time", "2026-01-01 00:50:10"],
        [
            "backfill",
            "--from",
            "2026-01-01 00:00:00",
            "--to",
            "2026-01-01 01:00:00",
            "--run-time",
            "2026-01-01 02:00:10",
        ],
        ["status"],
        ["explain", "--run-time", "2026-01-01 00:50:10"],
    ):
        code, out, err = run_command(argv, capsys)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and not out, (argv, out, err)
        # The raw tables are checked first by the commands that read them.
        reads_raw = argv[0] in ("check", "reconcile", "backfill")
        missing = "raw tables raw.page_errors, raw.page_views, raw.water_level_readings missing"
        expected = missing if reads_raw and not built_raw else "nothing is built in schema"
        assert lines[0].startswith("late-data: ") and expected in lines[0], (argv, lines)
