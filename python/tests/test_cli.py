"""The command line: every subcommand parses to its own function, and errors end in a message (no Spark)."""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path

import pytest

from late_data import cli

ORIGIN = ["--origin", "2026-01-01 00:00:00"]


def test_every_subcommand_has_one_function() -> None:
    subparsers = next(
        action for action in cli.build_parser()._actions if isinstance(action, argparse._SubParsersAction)
    )
    assert set(subparsers.choices) == set(cli.COMMANDS)
    assert set(cli.COMMANDS) == {
        "setup",
        "generate",
        "schedule",
        "backfill",
        "bench",
        "check",
        "cluster",
        "reconcile",
        "status",
        "demo",
    }


@pytest.mark.parametrize(
    "argv",
    [
        ["setup"],
        ["generate", *ORIGIN, "--start", "2026-01-01 00:00:00", "--end", "2026-01-01 01:00:00"],
        ["schedule", "--clock", "simulated", *ORIGIN, "--end", "2026-01-01 02:00:00"],
        ["backfill", "--from", "2026-01-01 00:00:00", "--to", "2026-01-01 01:00:00", "--include-too-late"],
        ["bench", "--quick", "--cell", "100:2:heavy", "--cell", "1000:25:sparse:24"],
        ["check", "--run-time", "2026-01-01 02:00:10"],
        ["cluster", "status"],
        ["reconcile"],
        ["status"],
        ["demo", "--hours", "1"],
    ],
)
def test_main_runs_the_subcommands_function(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    called: list[argparse.Namespace] = []
    monkeypatch.setitem(cli.COMMANDS, argv[0], lambda args: called.append(args) or 7)
    assert cli.main(argv) == 7
    assert [args.command for args in called] == [argv[0]]


def test_arguments_arrive_typed() -> None:
    args = cli.build_parser().parse_args(
        ["backfill", "--from", "2026-01-01T02:00:00+02:00", "--to", "2026-01-01 01:00:00Z", "--chunk-hours", "0.5"]
    )
    assert (args.start, args.end, args.chunk_hours) == (datetime(2026, 1, 1), datetime(2026, 1, 1, 1), 0.5)
    bench = cli.build_parser().parse_args(["bench", "--cell", "1000:25:sparse:24", "--out", "x"])
    (cell,) = bench.cells
    assert (cell.locations, cell.history_hours, cell.lateness, cell.late_window_hours) == (1000, 25.0, "sparse", 24.0)
    assert bench.out == Path("x")
    schedule = cli.build_parser().parse_args(["schedule", *ORIGIN])
    assert (schedule.clock, schedule.interval, schedule.offset, schedule.reconcile_every) == ("real", 60, 10, 60)


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "--cell", "100:2:gaussian"],
        ["bench", "--cell", "100:2"],
        ["check", "--run-time", "tomorrow"],
        ["generate", "--start", "2026-01-01 00:00:00", "--end", "2026-01-01 01:00:00"],  # no --origin
        ["cluster", "sideways"],
        [],
    ],
)
def test_bad_arguments_are_refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.build_parser().parse_args(argv)
    assert exit_info.value.code == 2
    assert "late-data" in capsys.readouterr().err


def test_command_errors_end_in_a_message(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def failing(args: argparse.Namespace) -> int:
        raise ValueError("--clock simulated needs --end")

    monkeypatch.setitem(cli.COMMANDS, "schedule", failing)
    assert cli.main(["schedule", "--clock", "simulated", *ORIGIN]) == 2
    assert "late-data: --clock simulated needs --end" in capsys.readouterr().err


def test_a_simulated_schedule_without_end_is_refused_before_spark_starts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "open_project", lambda: pytest.fail("opened the project"))
    assert cli.main(["schedule", "--clock", "simulated", *ORIGIN]) == 2
    assert "needs --end" in capsys.readouterr().err
