"""The `late-data` command line's arguments: its parser (build_parser), each subcommand's options,
and the types that refuse a bad value naming the option (a time, a count, a share, a version name)."""

from __future__ import annotations

import argparse
import math
from datetime import datetime
from importlib.metadata import entry_points
from pathlib import Path
from typing import NoReturn

from late_data.commands.explain import MODES
from late_data.project.generator import LATENESS_PROFILES, PageScenario, Scenario
from late_data.runtime.environment import SHARED_CATALOG_TARGETS, TABLE_FORMATS
from late_data.runtime.timeutil import parse_timestamp


def parse_time(text: str) -> datetime:
    """A command-line time as naive UTC; an offset ('+02:00', 'Z') is converted, as dbt's vars are."""
    try:
        return parse_timestamp(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a time: use 'YYYY-MM-DD HH:MM:SS' (UTC) or ISO 8601 with an offset"
        ) from None


def positive_int(text: str) -> int:
    """A count or a duration that must be at least 1 (argparse names the flag with the message)."""
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def count_or_never(text: str) -> int:
    """A whole number where 0 means never or none."""
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 0")
    return int(text)


def version_name(text: str) -> str:
    """A name for a staged version, checked as every command checks one (named_versions.validate_name)."""
    from late_data.publishing.named_versions import PublishRefused, validate_name

    try:
        return validate_name(text)
    except PublishRefused as refused:
        raise argparse.ArgumentTypeError(str(refused)) from None


def share(text: str) -> float:
    value = positive_float(text)
    if value > 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a share: above 0, at most 1")
    return value


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number above 0")
    return value


def add_scenario_arguments(parser: argparse.ArgumentParser, origin_help: str | None = None) -> None:
    """The generated scenario's settings. `origin_help`: --origin is optional (a command that can
    run without a scenario checks it), with this help."""
    defaults = Scenario()
    parser.add_argument("--locations", type=positive_int, default=defaults.locations)
    parser.add_argument(
        "--reading-interval", type=positive_int, default=defaults.reading_interval_seconds, help="seconds"
    )
    parser.add_argument("--late-share", type=float, default=defaults.late_share)
    parser.add_argument("--lateness", choices=LATENESS_PROFILES, default=defaults.lateness)
    parser.add_argument("--max-lateness", type=count_or_never, default=defaults.max_lateness_seconds, help="seconds")
    parser.add_argument("--correction-share", type=float, default=defaults.correction_share)
    parser.add_argument("--moved-correction-share", type=float, default=defaults.moved_correction_share)
    parser.add_argument("--too-late-share", type=float, default=defaults.too_late_share)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    page_defaults = PageScenario()
    parser.add_argument("--pages", type=count_or_never, default=page_defaults.pages, help="page-count series; 0: none")
    parser.add_argument("--page-late-share", type=float, default=page_defaults.late_share)
    parser.add_argument(
        "--origin",
        type=parse_time,
        required=origin_help is None,
        help=origin_help or "first tick of the scenario (UTC)",
    )


class OneLineParser(argparse.ArgumentParser):
    """A bad argument is refused in one line naming it and where the arguments are listed, like
    every other refusal of the command (exit 2), not argparse's usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"late-data: {message} (`{self.prog} --help` lists the arguments)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="late-data", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument(
        "--project-dir",
        type=Path,
        default=None,
        help="the dbt project (default: LATE_DATA_PROJECT_DIR, else the current directory when it is one, else this repository's demo)",
    )
    parser.add_argument(
        "--profiles-dir",
        type=Path,
        default=None,
        help="where profiles.yml is (default: DBT_PROFILES_DIR, the project, its profiles/, ~/.dbt)",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    commands.add_parser(
        "setup", help="lay out LATE_DATA_HOME (jars) so plain `dbt` commands work, and create the raw tables"
    )

    init = commands.add_parser(
        "init",
        help="set a dbt project up for the late_data package (empty folder or existing project), and a first"
        " pipeline on a source table",
    )
    init.add_argument("--dir", type=Path, default=Path("."), help="the project folder (default: here)")
    init.add_argument("--name", default=None, help="a new project's name (default: the folder's)")
    init.add_argument("--table-format", choices=TABLE_FORMATS, default="iceberg")
    init.add_argument(
        "--profile",
        default=None,
        help="a dbt profile of yours (in DBT_PROFILES_DIR or ~/.dbt) whose catalog holds the source: the project"
        " uses it instead of writing a profile of its own",
    )
    init.add_argument(
        "--target",
        default=None,
        help="with --profile, one of its targets (default: the profile's own); without it, the shared catalog"
        f" where the source already is: {' or '.join(SHARED_CATALOG_TARGETS)} (docs/cluster.md); default: the"
        " embedded catalog",
    )
    init.add_argument(
        "--package", default=None, help="the package: a local path or a git URL (default: this checkout's package/)"
    )
    init.add_argument("--source", default=None, metavar="SCHEMA.TABLE", help="a first pipeline on this table")
    init.add_argument(
        "--columns",
        default=None,
        help="its columns, `name type, ...` (default: read from the table); with --create-source, creates it",
    )
    init.add_argument("--create-source", action="store_true", help="create the source table when it does not exist")
    init.add_argument("--pipeline", default=None, help="the pipeline's model (default: the table's name)")
    init.add_argument("--series-key", default=None)
    init.add_argument("--event-id", default="event_id", help="the column all versions of an event share")
    init.add_argument("--event-time", default="event_time")
    init.add_argument("--ingested-at", default="ingested_at")
    init.add_argument(
        "--measure",
        dest="measures",
        action="append",
        default=None,
        metavar="NAME=KIND[:COLUMN]",
        help="e.g. reading_count=count, kwh_sum=sum:kwh (repeatable; default: row_count=count)",
    )
    init.add_argument("--window-seconds", type=positive_int, default=None, help="fixed windows' length (default 300)")
    init.add_argument(
        "--session-gap-seconds",
        type=positive_int,
        default=None,
        help="sessions instead of fixed windows: a series' events each within this gap of the one before",
    )
    init.add_argument(
        "--max-session-seconds", type=positive_int, default=None, help="with --session-gap-seconds: the longest session"
    )
    init.add_argument("--late-window-seconds", type=positive_int, default=3600)
    init.add_argument("--partition-seconds", type=positive_int, default=3600)

    generate_command = commands.add_parser("generate", help="append the scenario's rows for [start, end)")
    add_scenario_arguments(generate_command)
    generate_command.add_argument("--start", type=parse_time, required=True)
    generate_command.add_argument("--end", type=parse_time, required=True)

    schedule = commands.add_parser("schedule", help="run the pipeline on a schedule in one warm process")
    schedule.add_argument("--clock", choices=("real", "simulated"), default="real")
    schedule.add_argument("--interval", type=positive_int, default=60, help="seconds between runs")
    schedule.add_argument("--offset", type=count_or_never, default=10, help="seconds after the interval boundary")
    schedule.add_argument("--runs", type=positive_int, default=None, help="real clock: stop after this many runs")
    schedule.add_argument(
        "--maintain-every",
        type=count_or_never,
        default=60,
        help="expire old table snapshots and compact after every N runs (0: never)",
    )
    schedule.add_argument(
        "--reconcile-every",
        type=count_or_never,
        default=60,
        help="make every N-th run a reconciliation: recompute every checked window from raw and repair (0: never)",
    )
    schedule.add_argument("--end", type=parse_time, help="simulated clock: last run time")
    add_scenario_arguments(
        schedule,
        origin_help="first tick of the scenario (UTC) and the simulated clock's first run;"
        " not needed with --clock real --no-generate",
    )
    schedule.add_argument(
        "--no-generate",
        action="store_true",
        help="feed no generated data: run the pipelines on what their sources hold (your own project)",
    )

    load = commands.add_parser(
        "load",
        help="append files of rows (CSV with a header, JSON lines, Parquet) to a pipeline's source, each row stamped"
        " ingested_at; while a scheduler runs, handed to it to load before its next run",
    )
    load.add_argument("source", help="the source table, schema.table")
    load.add_argument("files", nargs="*", type=Path, help="files to load, each whole or not at all, in this order")
    load.add_argument(
        "--from-table", default=None, help="instead of files: the rows of this table (schema.table) new by --new-by"
    )
    load.add_argument(
        "--new-by",
        default=None,
        help="with --from-table: a column that grows as rows arrive there; rows after its largest value at the"
        " previous such load are new",
    )
    load.add_argument("--format", choices=("csv", "json", "parquet"), default=None, help="default: from each extension")
    load.add_argument(
        "--wait",
        type=count_or_never,
        default=120,
        help="seconds to wait for a process that holds the project (a dbt build of cron's) before giving up;"
        " the files then wait in the inbox for the next load or scheduler",
    )

    why = commands.add_parser(
        "why", help="one window's story: its published versions, the deliveries that made each and why"
    )
    why.add_argument("pipeline", help="the pipeline's result model")
    why.add_argument("--series", required=True, help="the window's series (several key columns: joined by '|')")
    why.add_argument("--window", type=parse_time, required=True, help="the window's start")
    why.add_argument("--at", type=parse_time, default=None, help="as it stood at this moment (default: now)")
    why.add_argument("--format", choices=("text", "json"), default="text")

    backfill = commands.add_parser("backfill", help="recompute an event-time range in chunks, with a change manifest")
    backfill.add_argument("--from", dest="start", type=parse_time, required=True, help="event time, inclusive")
    backfill.add_argument("--to", dest="end", type=parse_time, required=True, help="event time, exclusive")
    backfill.add_argument("--chunk-hours", type=positive_float, default=1.0)
    backfill.add_argument(
        "--include-too-late",
        action="store_true",
        help="count rows that arrived after their window became final (revises final windows)",
    )
    backfill.add_argument("--run-time", type=parse_time, default=None, help="default: now (UTC)")
    backfill.add_argument(
        "--stage",
        action="store_true",
        help="compute it in a stage schema and write its manifest and validation summary; readers see nothing"
        " until `late-data publish <name>`",
    )
    backfill.add_argument(
        "--name", type=version_name, default=None, help="--stage: its version name (default backfill_<yyyymmdd>_r<n>)"
    )

    publish = commands.add_parser(
        "publish", help="make a staged backfill or apply visible in every table it touched, if it meets its thresholds"
    )
    publish.add_argument("name", type=version_name)
    publish.add_argument("--max-changed-window-share", type=share, default=None)
    publish.add_argument("--max-partition-change", type=positive_float, default=None)
    publish.add_argument("--final-windows", choices=("allow", "refuse"), default=None)

    discard = commands.add_parser("discard", help="drop a staged backfill or apply without publishing it")
    discard.add_argument("name", type=version_name)

    commands.add_parser(
        "versions", help="the named versions: published backfills, applies and rollbacks, and how to read them"
    )

    rollback = commands.add_parser(
        "rollback", help="every late-data table of the pipelines back to their state after a run, or a named version"
    )
    rollback.add_argument("--to", dest="target", required=True, help="a run time (UTC) or a version name")
    rollback.add_argument("--pipeline", action="append", help="only this pipeline (repeatable; default: all)")
    rollback.add_argument("--name", type=version_name, default=None, help="default rollback_<yyyymmdd>_r<n>")

    # Commands another package adds (the benchmark's `bench`, late_data_bench): entry points of the
    # group late_data.commands, each a function that adds its parser and sets its `command` default.
    for entry in sorted(entry_points(group="late_data.commands"), key=lambda entry: entry.name):
        entry.load()(commands)

    check = commands.add_parser(
        "check", help="compare every window of every pipeline with a from-scratch recomputation by its measures"
    )
    check.add_argument(
        "--run-time",
        type=parse_time,
        default=None,
        help="check as of the last run at or before this time (default: the last run)",
    )
    check.add_argument("--pipeline", action="append", help="check only this pipeline (its model's name; repeatable)")

    cluster = commands.add_parser(
        "cluster", help="a shared catalog (PostgreSQL + Hive metastore), Spark master, workers and Thrift Server"
    )
    cluster.add_argument("action", choices=("up", "down", "status"))

    reconcile = commands.add_parser(
        "reconcile", help="a run that recomputes every checked window from raw, repairs and counts what differs"
    )
    reconcile.add_argument("--run-time", type=parse_time, default=None, help="default: now (UTC)")

    explain = commands.add_parser(
        "explain", help="print the SQL each late-data node would run now (scheduled, rebuild or reconcile)"
    )
    explain.add_argument("--run-time", type=parse_time, required=True)
    explain.add_argument("--mode", choices=MODES, action="append", help="repeatable; default: scheduled")
    explain.add_argument("--select", default=None, help="dbt selection (default: every pipeline and its history)")
    explain.add_argument("--out", type=Path, default=None, help="write <mode>.sql files here instead of printing")

    commands.add_parser(
        "status", help="the last run of each model, interrupted runs, the quarantine and the last reconciliation"
    )

    plan = commands.add_parser(
        "plan",
        help="for each pipeline whose definition changed since its tables were built: what changed, what applying it rebuilds",
    )
    plan.add_argument("--pipeline", action="append", default=None, help="repeatable; default: every pipeline")

    apply = commands.add_parser(
        "apply",
        help="rebuild each pipeline whose definition changed in a stage, with its validation summary; readers see"
        " nothing until `late-data publish <name>`",
    )
    apply.add_argument("--pipeline", action="append", default=None, help="repeatable; default: every changed pipeline")
    apply.add_argument("--run-time", type=parse_time, default=None, help="default: now (UTC)")
    apply.add_argument(
        "--name", type=version_name, default=None, help="its version name (default apply_<yyyymmdd>_r<n>)"
    )

    demo = commands.add_parser("demo", help="2 hours of the scenario on a simulated clock, then the oracle")
    demo.add_argument("--hours", type=positive_float, default=2.0)
    demo.add_argument("--interval", type=positive_int, default=900, help="seconds between simulated runs")
    demo.add_argument("--offset", type=count_or_never, default=10)
    return parser


def scenario_from(args: argparse.Namespace) -> Scenario:
    return Scenario(
        locations=args.locations,
        reading_interval_seconds=args.reading_interval,
        late_share=args.late_share,
        lateness=args.lateness,
        max_lateness_seconds=args.max_lateness,
        correction_share=args.correction_share,
        moved_correction_share=args.moved_correction_share,
        too_late_share=args.too_late_share,
        seed=args.seed,
    )


def page_scenario_from(args: argparse.Namespace) -> PageScenario | None:
    if args.pages == 0:
        return None
    return PageScenario(
        pages=args.pages,
        reading_interval_seconds=args.reading_interval,
        late_share=args.page_late_share,
        lateness=args.lateness,
        max_lateness_seconds=args.max_lateness,
        too_late_share=args.too_late_share,
        seed=args.seed,
    )


def require_range(start: datetime, end: datetime, start_flag: str, end_flag: str) -> None:
    """Before Spark starts: a range that holds nothing would run and report success on nothing."""
    if end <= start:
        raise ValueError(f"{end_flag} {end} is not after {start_flag} {start}: the range is empty")
