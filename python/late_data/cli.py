"""The `late-data` command: generate, schedule, check and demo, in one warm process.

One small function per subcommand (COMMANDS maps the name to it); the work is in the library
modules, so what a command does can be called, and tested, without the command line. Its arguments
are parsed by late_data.arguments.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
import traceback
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING

from late_data.api import pipelines_with_sources
from late_data.arguments import build_parser, page_scenario_from, require_range, scenario_from
from late_data.commands.check import check_pipeline
from late_data.commands.explain import compile_run, render_run, write_runs
from late_data.commands.plan import plan_definitions, plan_lines
from late_data.commands.status import read_status
from late_data.commands.why import window_story
from late_data.loading.inbox import (
    SchedulerMark,
    hand_over,
    hand_over_table,
    inbox,
    load_waiting,
    running_scheduler,
)
from late_data.project.audit import require_built
from late_data.project.definitions import definition_changes, recorded_definitions
from late_data.project.pipelines import Pipeline, scheduled_nodes, select_pipelines
from late_data.project.raw_tables import create_raw_tables, require_raw_tables
from late_data.publishing.named_versions import (
    NamedVersion,
    PublishRefused,
    require_nothing_unfinished,
    unfinished_lines,
    validate_name,
    version_lines,
)
from late_data.publishing.publish import discard, pipeline_thresholds, publish, violations
from late_data.publishing.rollback import rollback
from late_data.publishing.stage import PartitionSummary, stage_apply, stage_backfill
from late_data.running.backfill import run_backfill
from late_data.running.scheduler import (
    Upkeep,
    run_pipeline,
    run_real_clock,
    run_simulated,
    scenario_feed,
    scheduled_selection,
)
from late_data.runtime.class_archive import make_class_archive
from late_data.runtime.dbt_errors import describe_error
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.environment import ProjectEnvironment, prepare_environment, try_lock_home
from late_data.runtime.settings import SetupError, validate_relation
from late_data.runtime.timeutil import format_timestamp, parse_timestamp, utc_now

if TYPE_CHECKING:
    from late_data.cluster.writer_lock import WriterLock


log = logging.getLogger("late_data")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.project_dir is not None:
        os.environ["LATE_DATA_PROJECT_DIR"] = str(args.project_dir.resolve())
    if args.profiles_dir is not None:
        os.environ["DBT_PROFILES_DIR"] = str(args.profiles_dir.resolve())
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    for noisy in ("py4j", "pyspark", "pyhive"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        # A command another package added (the bench) set its function as the parser's default.
        command: Callable[[argparse.Namespace], int] = COMMANDS.get(args.command) or args.command_function
        return command(args)
    except KeyboardInterrupt:
        print("late-data: interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        # Exit 2, one line: a broken setup or a failed run, told apart from `check`'s 1 (mismatches).
        if args.verbose or os.environ.get("LATE_DATA_DEBUG"):
            traceback.print_exc()
        print(f"late-data: {describe_error(error)}", file=sys.stderr)
        return 2


def open_project(writer: str | None = None) -> DbtProject:
    """The environment laid out and checked, and a dbt project on it (holds LATE_DATA_HOME's lock).
    `writer`: the command, when it writes the result tables; it then holds the schema's writer lock
    on a shared catalog, taken before Spark starts."""
    environment = prepare_environment()
    lock = writer_lock(environment, writer) if writer else None
    project = DbtProject(environment)
    if lock is not None:
        project.hold(lock)
    return project


def writer_lock(environment: ProjectEnvironment, command: str) -> WriterLock | None:
    """None where one writer is already certain: the embedded targets' LATE_DATA_HOME lock admits
    one process, and LATE_DATA_WRITER_LOCK=off leaves it to whatever schedules the runs."""
    if not environment.shares_catalog or os.environ.get("LATE_DATA_WRITER_LOCK") == "off":
        return None
    from late_data.cluster.writer_lock import take_writer_lock

    return take_writer_lock(environment, os.environ.get("LATE_DATA_SCHEMA", "analytics"), command)


def raw_tables(project: DbtProject) -> dict[str, str]:
    """The demo's raw tables by name; refused, naming them, when one is missing (only `setup` and
    `generate` create them)."""
    return require_raw_tables(project.query, project.raw_schema())


def setup_command(args: argparse.Namespace) -> int:
    """A fresh machine ends ready to run: LATE_DATA_HOME laid out and the raw tables there."""
    project = open_project()
    tables = create_raw_tables(project.execute, project.raw_schema(), project.environment.table_format)
    environment = project.environment
    archived = make_class_archive(environment.class_archive) if not environment.shares_catalog else False
    print(
        f"late-data: ready in {environment.home} (table format {environment.table_format},"
        f" target {environment.profile_target}; raw tables {', '.join(tables.values())};"
        f" {'class archive ' + str(environment.class_archive) if archived else 'no class archive'})"
    )
    return 0


def init_command(args: argparse.Namespace) -> int:
    """Everything is checked before anything is written; a source's columns are read with the new
    project's own Spark (its profile, its warehouse), after `dbt deps`."""
    from late_data.commands.init import init_project

    for line in init_project(args):
        print(line)
    return 0


def cluster_command(args: argparse.Namespace) -> int:
    """`up` ends with the status too, so its exit code says whether every service came up."""
    from late_data.cluster import cluster_down, cluster_status, cluster_up, describe

    environment = prepare_environment()
    if args.action == "up":
        _, seconds = cluster_up(environment)
        print(f"cluster: up in {seconds:.1f} s")
    elif args.action == "down":
        stopped = cluster_down(environment)
        print(f"cluster: stopped {', '.join(stopped)}" if stopped else "cluster: nothing was running")
        return 0
    settings, statuses = cluster_status(environment)
    print(describe(settings, statuses))
    return 0 if all(status.running for status in statuses) else 1


def generate_command(args: argparse.Namespace) -> int:
    require_range(args.start, args.end, "--start", "--end")
    scenario, pages = scenario_from(args), page_scenario_from(args)
    project = open_project()
    tables = create_raw_tables(project.execute, project.raw_schema(), project.environment.table_format)
    scenario_feed(project, tables, args.origin, scenario, pages)(args.start, args.end)
    log.info("appended the rows arriving in [%s, %s) to %s", args.start, args.end, ", ".join(tables.values()))
    return 0


def schedule_command(args: argparse.Namespace) -> int:
    """A missing --end or --origin is refused before Spark and dbt start (tens of seconds)."""
    if args.clock == "simulated" and args.end is None:
        raise ValueError("--clock simulated needs --end")
    if args.origin is None and (args.clock == "simulated" or not args.no_generate):
        raise ValueError(
            "--origin is needed (the scenario's first tick, the simulated clock's first run) unless --clock real"
            " --no-generate"
        )
    if args.clock == "simulated":
        require_range(args.origin, args.end, "--origin", "--end")
    scenario, pages = scenario_from(args), page_scenario_from(args)
    project = open_project(writer="schedule")
    pipelines_with_sources(project)
    require_nothing_unfinished(project)
    # Your own pipelines read what your sources hold; the demo's are fed its generated scenario.
    feed = None if args.no_generate else scenario_feed(project, raw_tables(project), args.origin, scenario, pages)
    interval, offset = timedelta(seconds=args.interval), timedelta(seconds=args.offset)
    upkeep = Upkeep(reconcile_every=args.reconcile_every, maintain_every=args.maintain_every)
    # `late-data load` hands this process its files while it holds the project (loaded before each run).
    project.hold(SchedulerMark(project.environment.home))
    if args.clock == "simulated":
        run_simulated(
            project, feed or (lambda start, end: None), args.origin, args.end, interval, offset, upkeep=upkeep
        )
    else:
        run_real_clock(
            project,
            interval,
            offset,
            args.runs,
            feed,
            args.origin,
            upkeep=upkeep,
            on_report=lambda report: print(report.line(), flush=True),
        )
    return 0


def load_command(args: argparse.Namespace) -> int:
    """The files go to the inbox first (late_data.loading.inbox), so none is lost whichever process
    stops; then they are loaded here when the project is free, or left to the scheduler that holds it."""
    source = validate_relation("load source", args.source)
    if bool(args.files) == bool(args.from_table) or bool(args.from_table) != bool(args.new_by):
        raise SetupError("load: give files, or --from-table with --new-by")
    environment = prepare_environment()
    if args.from_table:
        handed = [hand_over_table(environment.home, source, args.from_table, args.new_by)]
    else:
        handed = hand_over(environment.home, source, args.files, args.format)
    deadline = time.monotonic() + args.wait
    held = None
    # The lock is taken here and kept, not looked at and taken again: nothing slips in between.
    while not environment.shares_catalog and (held := try_lock_home(environment)) is None:
        scheduler = running_scheduler(environment.home)
        if scheduler is not None:
            print(
                f"load: {len(handed)} files handed to the scheduler (pid {scheduler}), which loads them into {source}"
                f" before its next run; a file it cannot read goes to {inbox(environment.home)}/refused/ with its reasons"
            )
            return 0
        if time.monotonic() >= deadline:
            raise SetupError(
                f"load: {environment.home} is still in use by another process after --wait {args.wait} s; the"
                f" {len(handed)} files wait in {inbox(environment.home)} and load with the next `late-data load`"
                " or `late-data schedule`"
            )
        time.sleep(1)
    project = DbtProject(environment, hold_home=False)
    if held is not None:
        project.hold(held)
    try:
        outcomes = load_waiting(project.spark, environment.home)
    finally:
        project.close()
    for outcome in outcomes:
        print(outcome.line())
    return 1 if any(outcome.reasons for outcome in outcomes) else 0


def why_command(args: argparse.Namespace) -> int:
    project = open_project()
    story = window_story(project, args.pipeline, args.series, args.window, args.at)
    print(story.json_rows() if args.format == "json" else "\n".join(story.lines()))
    return 0


def backfill_command(args: argparse.Namespace) -> int:
    require_range(args.start, args.end, "--from", "--to")
    project = open_project(writer="backfill")
    pipelines = pipelines_with_sources(project)
    require_built(project)
    require_nothing_unfinished(project)
    if args.stage:
        return stage_command(project, pipelines, args)
    changes, manifest = run_backfill(
        project,
        pipelines,
        args.start,
        args.end,
        timedelta(hours=args.chunk_hours),
        args.include_too_late,
        args.run_time or utc_now(),
        project.environment.home / "backfills",
    )
    for change in changes:
        print(change.line())
    print(f"backfill: {len(changes)} partitions changed; manifest {manifest}")
    return 0


def stage_command(project: DbtProject, pipelines: list[Pipeline], args: argparse.Namespace) -> int:
    version, summary = stage_backfill(
        project,
        pipelines,
        args.start,
        args.end,
        timedelta(hours=args.chunk_hours),
        args.include_too_late,
        args.run_time or utc_now(),
        args.name,
        project.environment.home,
    )
    refused = print_summary(summary, version, pipelines)
    print(
        f"backfill: staged {version.name}: {sum(row.windows_changed for row in summary)} windows change in"
        f" {len(summary)} partitions; manifest {version.detail['manifest']}, summary {version.detail['summary']};"
        f" nothing published: `late-data publish {version.name}`" + (" would be refused" if refused else "")
    )
    return 0


def print_summary(summary: list[PartitionSummary], version: NamedVersion, pipelines: list[Pipeline]) -> list[str]:
    """A staged version's validation summary, a line per partition, then each threshold it exceeds
    (returned: publishing it would be refused)."""
    for row in summary:
        print(
            f"{row.pipeline} {row.partition_start}: windows {row.windows_before} -> {row.windows_after},"
            f" changed {row.windows_changed}, final revised {row.final_windows_revised}, rows {row.rows_before} ->"
            f" {row.rows_after}, total {row.total_before} -> {row.total_after} ({row.relative_change:.2%})"
        )
    refused = violations(summary, version.detail["windows_in_range"], pipeline_thresholds(pipelines, {}))
    for line in refused:
        print(f"over a threshold: {line}")
    return refused


def publish_command(args: argparse.Namespace) -> int:
    project = open_project(writer="publish")
    require_built(project)
    overrides = {
        "max_changed_window_share": args.max_changed_window_share,
        "max_partition_change": args.max_partition_change,
        "final_windows": args.final_windows,
    }
    version = publish(project, args.name, overrides)
    print(
        f"publish: {version.name} published: {len(version.tables)} tables of {', '.join(version.pipelines)};"
        f" manifest {version.detail['manifest']}"
    )
    return 0


def discard_command(args: argparse.Namespace) -> int:
    project = open_project(writer="discard")
    discard(project, args.name)
    print(f"discard: {args.name} dropped, nothing published")
    return 0


def versions_command(args: argparse.Namespace) -> int:
    project = open_project()
    require_built(project)
    print("\n".join(version_lines(project)))
    return 0


def rollback_command(args: argparse.Namespace) -> int:
    try:
        to_run_time, to_version = parse_timestamp(args.target), None
    except ValueError:
        to_run_time, to_version = None, validate_name(args.target)
    project = open_project(writer="rollback")
    require_built(project)
    pipelines = select_pipelines(project, args.pipeline)
    version = rollback(project, pipelines, to_run_time, to_version, args.name, utc_now())
    state = f"the state after the run at {version.detail['to']}" if to_run_time else f"version {version.detail['to']}"
    print(
        f"rollback: {version.name}: {len(version.tables)} tables of {', '.join(version.pipelines)} back to {state};"
        " the next scheduled run loads again what arrived since"
    )
    return 0


def check_command(args: argparse.Namespace) -> int:
    """Exit 1 on any mismatched window, so a scheduler or CI can alert on it."""
    project = open_project()
    pipelines = pipelines_with_sources(project, args.pipeline)
    require_built(project)
    checks = []
    for pipeline in pipelines:
        checks.append(check_pipeline(project, pipeline, args.run_time))
        for line in checks[-1].lines:
            print(line)
    windows = sum(check.windows.windows_checked for check in checks)
    mismatched = sum(check.mismatched for check in checks)
    listed = [check.too_late for check in checks if check.too_late is not None]
    entries_checked = sum(listing.windows_checked for listing in listed)
    if windows == 0 and entries_checked == 0:
        # A comparison of nothing proves nothing: a source no run has loaded a row of yet, or a moment
        # before the first rows, is a setup to finish, not a pipeline found right.
        names = ", ".join(pipeline.name for pipeline in pipelines)
        raise SetupError(
            f"nothing to check: {names} and the recomputation from {'its' if len(pipelines) == 1 else 'their'}"
            " sources hold no window and no too-late entry"
            + (f" as of {format_timestamp(args.run_time)}" if args.run_time else "")
            + ": load rows into the sources, run, then check"
        )
    entries = f", {entries_checked} too-late entries" if listed else ""
    print(f"check: {windows} windows{entries} checked, {mismatched} mismatched")
    return 1 if mismatched else 0


def reconcile_command(args: argparse.Namespace) -> int:
    project = open_project(writer="reconcile")
    pipelines_with_sources(project)
    require_built(project)
    require_nothing_unfinished(project)
    report = run_pipeline(project, args.run_time or utc_now(), scheduled_selection(project), reconcile=True)
    print(report.line())
    print(f"reconcile: {report.windows_repaired} windows repaired")
    return 0


def explain_command(args: argparse.Namespace) -> int:
    project = open_project()
    require_built(project)
    modes = tuple(args.mode or ("scheduled",))
    select = args.select or scheduled_nodes(select_pipelines(project))
    if args.out is not None:
        for path in write_runs(project, args.run_time, modes, args.out, select):
            print(f"explain: wrote {path}")
        return 0
    for mode in modes:
        print(render_run(compile_run(project, args.run_time, mode, select), mode, args.run_time))
    return 0


def status_command(args: argparse.Namespace) -> int:
    project = open_project()
    require_built(project)
    print("\n".join([*read_status(project).lines(), *unfinished_lines(project)]))
    return 0


def plan_command(args: argparse.Namespace) -> int:
    project = open_project()
    require_built(project)
    print("\n".join(plan_lines(plan_definitions(project, select_pipelines(project, args.pipeline)))))
    return 0


def apply_command(args: argparse.Namespace) -> int:
    project = open_project(writer="apply")
    require_built(project)
    pipelines = select_pipelines(project, args.pipeline)
    recorded = recorded_definitions(project)
    changes = {
        pipeline.name: definition_changes(recorded[pipeline.table], pipeline.definition, pipeline.legacy_select)
        for pipeline in pipelines
        if pipeline.table in recorded
    }
    changed = [pipeline for pipeline in pipelines if changes.get(pipeline.name)]
    if not changed:
        raise PublishRefused(
            "nothing to apply: every selected pipeline's definition is the one its tables were built with"
            " (`late-data plan` says so per pipeline)"
        )
    version, summary = stage_apply(
        project,
        changed,
        {pipeline.name: changes[pipeline.name] for pipeline in changed},
        args.run_time or utc_now(),
        args.name,
        project.environment.home,
    )
    refused = print_summary(summary, version, changed)
    print(
        f"apply: staged {version.name} ({', '.join(version.pipelines)} rebuilt by its new definition):"
        f" {sum(row.windows_changed for row in summary)} windows change in {len(summary)} partitions; summary"
        f" {version.detail['summary']}; nothing published: `late-data publish {version.name}`"
        + (" would be refused" if refused else "")
    )
    return 0


def demo_command(args: argparse.Namespace) -> int:
    from late_data.demo.demo import run_demo

    summary = run_demo(
        open_project(writer="demo"), args.hours, timedelta(seconds=args.interval), timedelta(seconds=args.offset)
    )
    print("\n".join(summary.lines))
    return 1 if summary.mismatched else 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "setup": setup_command,
    "init": init_command,
    "generate": generate_command,
    "schedule": schedule_command,
    "load": load_command,
    "why": why_command,
    "backfill": backfill_command,
    "publish": publish_command,
    "discard": discard_command,
    "versions": versions_command,
    "rollback": rollback_command,
    "check": check_command,
    "cluster": cluster_command,
    "reconcile": reconcile_command,
    "explain": explain_command,
    "status": status_command,
    "plan": plan_command,
    "apply": apply_command,
    "demo": demo_command,
}


if __name__ == "__main__":
    sys.exit(main())
