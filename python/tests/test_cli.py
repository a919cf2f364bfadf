"""The command line: every subcommand parses to its own function, and errors end in a message (no Spark)."""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from late_data import api, cli
from late_data.commands.check import PipelineCheck
from late_data.oracles.compare import Comparison
from late_data.project.pipelines import Measure, Pipeline
from late_data.project.raw_tables import require_raw_tables
from late_data.running.scheduler import Upkeep, maintain_tables
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.settings import SetupError

ORIGIN = ["--origin", "2026-01-01 00:00:00"]


def test_every_subcommand_has_one_function() -> None:
    subparsers = next(
        action for action in cli.build_parser()._actions if isinstance(action, argparse._SubParsersAction)
    )
    # bench: the benchmark's own command, found through its entry point (late_data_bench.command).
    assert set(subparsers.choices) == {*cli.COMMANDS, "bench"}
    assert subparsers.choices["bench"].get_default("command_function").__module__ == "late_data_bench.command"
    assert set(cli.COMMANDS) == {
        "setup",
        "init",
        "generate",
        "schedule",
        "load",
        "why",
        "backfill",
        "publish",
        "discard",
        "versions",
        "rollback",
        "check",
        "explain",
        "cluster",
        "reconcile",
        "status",
        "plan",
        "apply",
        "demo",
    }


@pytest.mark.parametrize(
    "argv",
    [
        ["setup"],
        ["generate", *ORIGIN, "--start", "2026-01-01 00:00:00", "--end", "2026-01-01 01:00:00"],
        ["schedule", "--clock", "simulated", *ORIGIN, "--end", "2026-01-01 02:00:00"],
        ["load", "raw.meter_readings", "a.csv", "b.parquet"],
        [
            "why",
            "water_level_window_means",
            "--series",
            "loc-00024",
            "--window",
            "2026-01-01 00:10:00",
            "--format",
            "json",
        ],
        ["backfill", "--from", "2026-01-01 00:00:00", "--to", "2026-01-01 01:00:00", "--include-too-late"],
        ["bench", "--quick", "--cell", "100:2:heavy", "--cell", "1000:25:sparse:24"],
        ["check", "--run-time", "2026-01-01 02:00:10"],
        ["cluster", "status"],
        ["reconcile"],
        ["status"],
        ["plan", "--pipeline", "water_level_window_means"],
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
    assert bench.out == Path("x") and bench.whole_run_only is False
    assert cli.build_parser().parse_args(["bench", "--cell", "100000:2:heavy", "--whole-run-only"]).whole_run_only
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
    (line,) = capsys.readouterr().err.splitlines()  # one line, not argparse's usage block
    assert line.startswith("late-data: ") and "--help` lists the arguments" in line


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


@pytest.mark.parametrize(
    "argv",
    [
        ["schedule", "--clock", "simulated", "--end", "2026-01-01 02:00:00"],
        ["schedule"],  # the real clock feeding the demo's generated scenario
    ],
)
def test_a_schedule_that_needs_an_origin_is_refused_before_spark_starts(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "open_project", lambda writer=None: pytest.fail("opened the project"))
    assert cli.main(argv) == 2
    assert "late-data: --origin is needed" in capsys.readouterr().err


def test_the_real_clock_on_your_own_data_needs_no_origin(monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's `late-data --project-dir . schedule --no-generate`: no scenario, so no origin."""
    opened: list[str | None] = []

    def stop_at_open(writer: str | None = None) -> DbtProject:
        opened.append(writer)
        raise SetupError("stopped before Spark")

    monkeypatch.setattr(cli, "open_project", stop_at_open)
    assert cli.main(["schedule", "--no-generate"]) == 2
    assert opened == ["schedule"]


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["schedule", *ORIGIN, "--interval", "0"], "--interval"),
        (["schedule", *ORIGIN, "--interval", "-60"], "--interval"),
        (["schedule", *ORIGIN, "--runs", "0"], "--runs"),
        (["schedule", *ORIGIN, "--offset", "-1"], "--offset"),
        (["schedule", *ORIGIN, "--maintain-every", "-1"], "--maintain-every"),
        (["schedule", *ORIGIN, "--reconcile-every", "x"], "--reconcile-every"),
        (["schedule", *ORIGIN, "--locations", "0"], "--locations"),
        (["schedule", *ORIGIN, "--reading-interval", "0"], "--reading-interval"),
        (["schedule", *ORIGIN, "--pages", "-3"], "--pages"),
        (
            ["backfill", "--from", "2026-01-01 00:00:00", "--to", "2026-01-01 01:00:00", "--chunk-hours", "0"],
            "--chunk-hours",
        ),
        (
            ["backfill", "--from", "2026-01-01 00:00:00", "--to", "2026-01-01 01:00:00", "--chunk-hours", "nan"],
            "--chunk-hours",
        ),
        (["demo", "--hours", "0"], "--hours"),
        (["demo", "--hours", "-2"], "--hours"),
        (["demo", "--interval", "0"], "--interval"),
        (["bench", "--runs", "0"], "--runs"),
        (["generate", *ORIGIN, "--start", "2026-01-01", "--end", "2026-01-02", "--locations", "0"], "--locations"),
    ],
)
def test_numbers_that_must_be_positive_are_refused_naming_the_flag(
    argv: list[str], flag: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "open_project", lambda writer=None: pytest.fail("opened the project"))
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert f"argument {flag}: " in error and "late-data" in error


def test_zero_means_never_where_a_flag_says_so() -> None:
    args = cli.build_parser().parse_args(
        ["schedule", *ORIGIN, "--maintain-every", "0", "--reconcile-every", "0", "--pages", "0", "--offset", "0"]
    )
    assert (args.maintain_every, args.reconcile_every, args.pages, args.offset) == (0, 0, 0, 0)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["backfill", "--from", "2026-01-01 01:00:00", "--to", "2026-01-01 00:00:00"],
            "--to 2026-01-01 00:00:00 is not after --from 2026-01-01 01:00:00",
        ),
        (["backfill", "--from", "2026-01-01 01:00:00", "--to", "2026-01-01 01:00:00"], "is not after --from"),
        (
            ["generate", *ORIGIN, "--start", "2026-01-01 02:00:00", "--end", "2026-01-01 01:00:00"],
            "--end 2026-01-01 01:00:00 is not after --start",
        ),
        (
            ["schedule", "--clock", "simulated", *ORIGIN, "--end", "2025-12-31 00:00:00"],
            "--end 2025-12-31 00:00:00 is not after --origin",
        ),
    ],
)
def test_an_empty_or_inverted_range_is_refused_before_spark_starts(
    argv: list[str], message: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "open_project", lambda writer=None: pytest.fail("opened the project"))
    assert cli.main(argv) == 2
    error = capsys.readouterr().err
    assert message in error and "the range is empty" in error and len(error.strip().splitlines()) == 1


def demo_pipeline() -> Pipeline:
    """The demo's water-level pipeline as the package describes it (no Spark): its sources matter here."""
    return Pipeline(
        name="water_level_window_means",
        unique_id="model.late_data_demo.water_level_window_means",
        result="analytics.water_level_window_means",
        versions="analytics.int_water_level__versions",
        too_late=None,
        quarantine=None,
        histories=(),
        sources=(("water_level_readings", "raw.water_level_readings"),),
        tags=(),
        series_key=("location",),
        event_key=("event_id",),
        source_column=None,
        window_size_seconds=60,
        window_slide_seconds=60,
        partition_size_seconds=600,
        series_buckets=1,
        late_window_seconds=3600,
        late_window_by_source={"water_level_readings": 3600},
        measures=(Measure("reading_count", "count", None, None),),
        count_column="reading_count",
        digest="readings_digest",
        tie_breaker=("location",),
    )


class FakeProject:
    """A DbtProject without Spark: answers the catalog queries raw_tables() asks, records statements."""

    def __init__(self, tables: set[str], schema_exists: bool = True) -> None:
        self.tables, self.schema_exists = tables, schema_exists
        self.executed: list[str] = []
        self.environment = SimpleNamespace(
            table_format="iceberg",
            home=Path("/nowhere"),
            profile_target="iceberg",
            shares_catalog=False,
            class_archive=Path("/nowhere/jvm/spark.jsa"),
        )

    def raw_schema(self) -> str:
        return "raw"

    def query(self, sql: str) -> list[dict[str, object]]:
        if sql.startswith("show schemas"):
            return [{"namespace": "raw"}] if self.schema_exists else []
        assert sql == "show tables in raw", sql
        return [{"namespace": "raw", "tableName": table, "isTemporary": False} for table in sorted(self.tables)]

    def execute(self, sql: str) -> None:
        self.executed.append(sql)


@pytest.mark.parametrize(
    "argv",
    [
        ["reconcile", "--run-time", "2026-01-01 01:00:10"],
        ["check", "--run-time", "2026-01-01 01:00:10"],
        ["backfill", "--from", "2026-01-01 00:00:00", "--to", "2026-01-01 01:00:00"],
        ["schedule", "--clock", "simulated", *ORIGIN, "--end", "2026-01-01 02:00:00"],
    ],
)
def test_a_missing_raw_table_is_refused_naming_it(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The probe of issue 23: a renamed raw table made `reconcile` recreate it empty and report
    '0 windows repaired'. Now every command but setup and generate refuses, before any run."""
    project = FakeProject({"page_errors", "page_views"})
    monkeypatch.setattr(cli, "open_project", lambda writer=None: project)
    for module in (cli, api):  # pipelines_with_sources lives in late_data.api
        monkeypatch.setattr(module, "select_pipelines", lambda project, names=None: [demo_pipeline()])
    for runner in ("run_pipeline", "run_backfill", "run_simulated", "check_pipeline", "scenario_feed"):
        monkeypatch.setattr(cli, runner, lambda *args, **kwargs: pytest.fail("ran on a missing source"))
    assert cli.main(argv) == 2
    error = capsys.readouterr().err
    assert "raw table raw.water_level_readings missing" in error and "late-data setup" in error
    assert not project.executed


def test_a_check_that_compares_nothing_is_refused_not_reported_as_a_pass(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A project fresh from `late-data init` whose source got no row before its first runs: the
    check found no window and no too-late entry on either side, and said `0 mismatched`, exit 0."""
    nothing = Comparison(windows_checked=0, mismatched=0, examples=[])
    monkeypatch.setattr(cli, "open_project", lambda writer=None: FakeProject(set()))
    monkeypatch.setattr(cli, "pipelines_with_sources", lambda project, names=None: [demo_pipeline()])
    monkeypatch.setattr(cli, "require_built", lambda project: None)
    monkeypatch.setattr(cli, "check_pipeline", lambda *args: PipelineCheck(nothing, nothing))
    assert cli.main(["check", "--run-time", "2026-01-01 01:00:10"]) == 2
    captured = capsys.readouterr()
    assert "mismatched" not in captured.out
    assert captured.err.strip() == (
        "late-data: nothing to check: water_level_window_means and the recomputation from its sources hold no"
        " window and no too-late entry as of 2026-01-01 01:00:10: load rows into the sources, run, then check"
    )
    counted = Comparison(windows_checked=3, mismatched=0, examples=[])
    monkeypatch.setattr(cli, "check_pipeline", lambda *args: PipelineCheck(counted, nothing))
    assert cli.main(["check"]) == 0
    assert capsys.readouterr().out.strip() == "check: 3 windows, 0 too-late entries checked, 0 mismatched"


def test_setup_and_generate_create_the_raw_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    project = FakeProject(set(), schema_exists=False)
    monkeypatch.setattr(cli, "open_project", lambda writer=None: project)
    archived: list[Path] = []
    monkeypatch.setattr(cli, "make_class_archive", lambda archive: archived.append(archive) or True)
    assert cli.main(["setup"]) == 0
    assert archived == [Path("/nowhere/jvm/spark.jsa")]  # the JVM's class archive, for plain dbt's start
    assert project.executed[0] == "create schema if not exists raw"
    created = [sql.split()[5] for sql in project.executed[1:]]
    assert created == ["raw.water_level_readings", "raw.page_errors", "raw.page_views"]
    fed: list[tuple[datetime, datetime]] = []
    monkeypatch.setattr(cli, "scenario_feed", lambda *args: lambda start, end: fed.append((start, end)))
    argv = ["generate", *ORIGIN, "--start", "2026-01-01 00:00:00", "--end", "2026-01-01 01:00:00"]
    assert cli.main(argv) == 0 and fed == [(datetime(2026, 1, 1), datetime(2026, 1, 1, 1))]
    assert project.executed.count("create schema if not exists raw") == 2
    with pytest.raises(
        SetupError, match=r"raw tables raw.water_level_readings, raw.page_errors, raw.page_views missing"
    ):
        require_raw_tables(FakeProject(set(), schema_exists=False).query, "raw")


def test_writers_take_the_writer_lock_on_a_shared_catalog_only(monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[tuple[str, str]] = []
    monkeypatch.setattr(
        "late_data.cluster.writer_lock.take_writer_lock",
        lambda environment, schema, command: taken.append((schema, command)) or "lock",
    )
    monkeypatch.delenv("LATE_DATA_WRITER_LOCK", raising=False)
    monkeypatch.setenv("LATE_DATA_SCHEMA", "analytics")
    shared = SimpleNamespace(shares_catalog=True)
    assert cli.writer_lock(shared, "schedule") == "lock" and taken == [("analytics", "schedule")]
    assert cli.writer_lock(SimpleNamespace(shares_catalog=False), "schedule") is None
    monkeypatch.setenv("LATE_DATA_WRITER_LOCK", "off")
    assert cli.writer_lock(shared, "backfill") is None and len(taken) == 1


def test_explain_refuses_an_unknown_mode_before_spark_starts() -> None:
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["explain", "--run-time", "2026-01-01 00:00:00", "--mode", "fast"])


def test_explain_sections_read_back_by_node() -> None:
    from late_data.commands.explain import CompiledNode, parse_rendered, render_run

    nodes = [
        CompiledNode("a_model", "windows", "a_model", "select 1\n"),
        CompiledNode("a_history", "history", "a_history", "select 2"),
    ]
    rendered = render_run(nodes, "scheduled", datetime(2026, 1, 1, 1, 15, 10))
    assert "a scheduled run at 2026-01-01 01:15:10" in rendered
    sections = parse_rendered(rendered)
    assert list(sections) == ["a_model", "a_history"]
    assert sections["a_model"].endswith("select 1")
    assert "replacing the (time partition, series bucket) pairs" in sections["a_model"]
    assert "appended" in sections["a_history"]


def test_maintenance_passes_its_snapshot_retention_to_the_macro() -> None:
    """The soak keeps minutes of snapshots, not the macro's 24 hours; a scheduler keeps the default."""
    calls: list[list[str]] = []
    project = SimpleNamespace(invoke=calls.append)
    maintain_tables(project, 0.25)  # type: ignore[arg-type]
    maintain_tables(project)  # type: ignore[arg-type]
    assert calls == [
        ["run-operation", "late_data.maintain_tables", "--args", '{"keep_hours": 0.25}'],
        ["run-operation", "late_data.maintain_tables"],
    ]
    with pytest.raises(ValueError, match="keep_hours"):
        Upkeep(maintain_every=60, keep_hours=-1)


def test_plan_classes_each_change_of_a_definition() -> None:
    """`late-data plan`'s classes, on two definitions as the audit stores them (no Spark)."""
    from late_data.project.definitions import definition_changes

    count = {"name": "n", "kind": "count", "column": None, "expression": None, "p": None}
    mean = {"name": "m", "kind": "mean", "column": "v", "expression": None, "p": None}
    before = {
        "select": "a1",
        "measures": json.dumps([count, mean]),
        "window": "[60, 60, null, null, 300]",
        "upstream": {"model stg": "c3"},
    }
    after = {
        "select": "b2",
        "upstream": {"model stg": "d4", "seed units": "e5"},
        "measures": json.dumps([count, {**mean, "column": "w"}, {**mean, "name": "p99", "kind": "percentile"}]),
        "window": "[60, 60, null, null, 600]",
    }
    assert definition_changes(before, after) == [
        "measure added: p99",
        "measure redefined: m",
        "the select redefined",
        "the window layout: [60, 60, null, null, 300] -> [60, 60, null, null, 600]",
        "upstream: the select of stg",
        "upstream: units added",
    ]
    assert definition_changes(after, before)[:2] == ["measure removed: p99", "measure redefined: m"]
    assert definition_changes(before, before) == []


def test_plan_reads_no_definition_from_an_audit_without_one() -> None:
    """An audit no run has made yet, or one of an earlier version (no `definition` column until a
    run adds it): every pipeline has no definition recorded, and the audit is not queried."""
    from late_data.project.definitions import recorded_definitions

    def project(schemas: dict[str, dict[str, list[str]]]) -> Any:
        """A project whose catalog holds `schemas` ({schema: {table: columns}}) and answers only
        the catalog's questions (show schemas, show tables, describe)."""

        def query(sql: str) -> list[dict[str, Any]]:
            words = sql.split()
            if words[:2] == ["show", "schemas"]:
                return [{"namespace": name} for name in schemas if f"'{name}'" == words[-1]]
            if words[:2] == ["show", "tables"]:
                return [{"tableName": name} for name in schemas[words[3]]]
            if words[0] == "describe":
                schema, table = words[1].split(".")
                return [{"col_name": name} for name in schemas[schema][table]]
            raise AssertionError(f"queried: {sql}")

        return SimpleNamespace(target_schema=lambda: "analytics", query=query)

    assert recorded_definitions(project({})) == {}
    assert recorded_definitions(project({"analytics": {}})) == {}
    assert recorded_definitions(project({"analytics": {"late_data_run_audit": ["model", "run_time", "outcome"]}})) == {}


def test_a_load_while_another_process_holds_the_project_leaves_its_files_in_the_inbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not a scheduler (cron's dbt, a check): the load waits --wait seconds, then exits 2 saying where
    its files wait; nothing is lost, nothing is loaded, and no Spark starts."""
    import fcntl
    from types import SimpleNamespace

    environment = SimpleNamespace(home=tmp_path, shares_catalog=False)
    monkeypatch.setattr(cli, "prepare_environment", lambda: environment)
    monkeypatch.setattr(cli, "DbtProject", lambda environment: pytest.fail("the load opened the project"))
    (tmp_path / "a.csv").write_text("event_id\nx\n")
    with open(tmp_path / "late_data.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert cli.main(["load", "raw.meter_readings", str(tmp_path / "a.csv"), "--wait", "0"]) == 2
    assert "the 1 files wait in" in capsys.readouterr().err
    assert [path.name.split(".", 2)[-1] for path in (tmp_path / "inbox" / "raw.meter_readings").iterdir()] == ["a.csv"]
    # A name that is not schema.table, or a file whose format its extension does not say: refused first.
    assert cli.main(["load", "raw.meter_readings;drop", str(tmp_path / "a.csv")]) == 2
    (tmp_path / "a.txt").write_text("x")
    assert cli.main(["load", "raw.meter_readings", str(tmp_path / "a.txt")]) == 2
    assert "pass --format" in capsys.readouterr().err
    assert cli.main(["load", "raw.meter_readings", "--from-table", "landing.readings"]) == 2  # no --new-by
    assert "give files, or --from-table with --new-by" in capsys.readouterr().err
