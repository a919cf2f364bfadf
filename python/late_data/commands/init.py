"""`late-data init`: what a dbt project needs once to use the late_data package, and a first
pipeline on a source table, written into a folder (empty, or an existing dbt-spark project).

A file init writes starts with its mark (INIT_MARK): such a file is init's, and init writes it
again. A file without the mark is the user's: init never changes it. An existing project's
`dbt_project.yml` and `packages.yml` must already hold what the package needs (init says what to
add, in one line); any other file of the user's in init's way is refused in one line, and nothing
is written. A pipeline's model and yml are written once, never over an existing file.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from late_data.commands.init_files import (
    INIT_MARK,
    REPOSITORY_PACKAGE,
    SNAPSHOT_WRAPPER,
    _package_entry,
    _project_name,
    dbt_project_yml,
    packages_yml,
    pipeline_sql,
    pipeline_yml,
    profiles_yml,
)
from late_data.commands.init_spec import InitPlan, PipelineSpec, SourceTable, identifier, parse_columns, parse_measure
from late_data.runtime.class_archive import make_class_archive
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.environment import (
    SHARED_CATALOG_TARGETS,
    ProjectEnvironment,
    find_profiles_dir,
    prepare_environment,
)
from late_data.runtime.settings import SetupError


def plan_project(
    directory: Path, name: str, table_format: str, package: str, profile: UserProfile | None = None
) -> InitPlan:
    """The once-per-project files, checked against what is there; with a profile of the user's, the
    project uses it and gets none of its own."""
    identifier("--name", name)
    plan = InitPlan(directory)
    project_file = directory / "dbt_project.yml"
    if _writable(project_file):
        plan.files[project_file] = dbt_project_yml(name, table_format, profile.name if profile else None)
    else:
        text = project_file.read_text()
        name = _project_name(text) or name
        uses = re.search(r"^profile:\s*['\"]?([\w-]+)", text, re.MULTILINE)
        if profile is not None and (uses is None or uses.group(1) != profile.name):
            raise SetupError(
                f"--profile {profile.name}: {project_file} is your project's and uses the profile"
                f" {uses.group(1) if uses else '(none)'}: change its profile: line, or init without --profile"
            )
        missing = [hook for hook in ("late_data.on_run_start()", "late_data.on_run_end(results)") if hook not in text]
        if missing:
            raise SetupError(
                f"{project_file} is your project's, so late-data init leaves it alone, and it lacks the late_data hooks:"
                ' add on-run-start: ["{{ late_data.on_run_start() }}"] and on-run-end:'
                ' ["{{ late_data.on_run_end(results) }}"] (docs/your-own-pipeline.md), then run init again'
            )
    packages_file = directory / "packages.yml"
    if _writable(packages_file):
        plan.files[packages_file] = packages_yml(package)
    elif "subdirectory: package" not in packages_file.read_text() and "late_data" not in packages_file.read_text():
        raise SetupError(
            f"{packages_file} is your project's, so late-data init leaves it alone, and it does not install the"
            f" late_data package: add `- {_package_entry(package)}` under packages:, then run init again"
        )
    owned = [(directory / "macros" / "late_data.sql", SNAPSHOT_WRAPPER)]
    if project_file in plan.files and profile is None:
        # A project of its own gets an embedded Spark; an existing one keeps the profile it has.
        owned.append((directory / "profiles.yml", profiles_yml(name)))
    for path, text in owned:
        if not _writable(path):
            raise SetupError(
                f"{path} exists and is not late-data init's: late-data init writes nothing over it (move it aside,"
                " or set the project up by hand: docs/your-own-pipeline.md)"
            )
        plan.files[path] = text
    return plan


def plan_pipeline(plan: InitPlan, spec: PipelineSpec, table_format: str) -> None:
    """The pipeline's model and yml, refused over an existing file."""
    model = plan.directory / "models" / f"{spec.name}.sql"
    yml = plan.directory / "models" / f"{spec.name}.yml"
    for path in (model, yml):
        if path.exists():
            raise SetupError(f"{path} exists: late-data init writes a pipeline once (choose another --pipeline)")
    plan.files[model] = pipeline_sql(spec)
    declared = (spec.source.schema, spec.source.table) in declared_sources(plan.directory)
    plan.files[yml] = pipeline_yml(spec, table_format, declare_source=not declared)


def declared_sources(directory: Path) -> set[tuple[str, str]]:
    """(source name, table name) of every source the project's model ymls declare: a second
    pipeline on a source reads the first one's declaration (dbt refuses a source declared twice)."""
    import yaml

    declared = set()
    for path in (directory / "models").rglob("*.yml"):
        try:
            document = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError:
            continue
        for source in document.get("sources") or []:
            for table in source.get("tables") or []:
                declared.add((str(source.get("name")), str(table.get("name"))))
    return declared


def write_plan(plan: InitPlan) -> list[Path]:
    for path, text in plan.files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return list(plan.files)


def _writable(path: Path) -> bool:
    """Absent, or init's own (its first line carries init's mark)."""
    if not path.exists():
        return True
    first_line = next(iter(path.read_text().splitlines()), "")
    return INIT_MARK in first_line


@dataclass(frozen=True)
class UserProfile:
    """A dbt profile of the user's that an init'd project uses (--profile), and the target chosen
    (--target; None: the profile's own)."""

    name: str
    target: str | None
    profiles_dir: Path


def find_user_profile(name: str, target: str | None, directory: Path) -> UserProfile:
    """--profile NAME (and --target) checked against the user's profiles.yml, where dbt finds it for
    the project in `directory` (find_profiles_dir: DBT_PROFILES_DIR, which `late-data --profiles-dir`
    sets, the project folder, else ~/.dbt), before init writes
    anything: the profile and the target exist, and the target is dbt-spark's session method (the
    late-data commands read the warehouse through a Spark session in their own process; a catalog
    behind a Spark Thrift Server or a cluster has --target thrift or cluster without --profile)."""
    import yaml

    if not PROFILE_NAME.fullmatch(name):
        raise SetupError(f"--profile {name!r}: a dbt profile's name is letters, digits, _ and -")
    if target is not None and not PROFILE_NAME.fullmatch(target):
        raise SetupError(f"--target {target!r}: a dbt target's name is letters, digits, _ and -")
    profiles_dir = find_profiles_dir(directory).resolve()
    path = profiles_dir / "profiles.yml"
    if not path.is_file():
        raise SetupError(
            f"--profile {name}: no {path} (set DBT_PROFILES_DIR, or late-data --profiles-dir, to its folder)"
        )
    try:
        profiles = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as error:
        raise SetupError(f"--profile {name}: {path} is not YAML: {error}") from None
    profile = profiles.get(name) if isinstance(profiles, dict) else None
    if not isinstance(profile, dict):
        names = sorted(key for key in profiles if key != "config") if isinstance(profiles, dict) else []
        raise SetupError(f"--profile {name}: {path} has no profile {name} (it has: {', '.join(names) or 'none'})")
    outputs = profile.get("outputs") or {}
    chosen = str(target or profile.get("target") or "default")
    if "{{" in chosen:
        # The profile picks its target from the environment: dbt renders it, init cannot.
        return UserProfile(name, target, profiles_dir)
    if chosen not in outputs:
        raise SetupError(
            f"--target {chosen}: the profile {name} in {path} has no target {chosen}"
            f" (it has: {', '.join(sorted(outputs)) or 'none'})"
        )
    output = outputs[chosen] or {}
    kind, method = str(output.get("type", "")), str(output.get("method", ""))
    if "{{" not in kind and kind != "spark":
        raise SetupError(
            f"--profile {name}: its target {chosen} is type {kind or '(none)'}; late-data runs on dbt-spark (type: spark)"
        )
    if "{{" not in method and method != "session":
        raise SetupError(
            f"--profile {name}: its target {chosen} uses method {method or '(none)'}; the late-data commands need"
            " a Spark session of their own (method: session), or the shared catalog's --target cluster or thrift"
            " without --profile (docs/cluster.md)"
        )
    return UserProfile(name, target, profiles_dir)


def check_spec(spec: PipelineSpec) -> None:
    """Refuse, naming it, a column the pipeline reads that its source does not have."""
    names = {name for name, _ in spec.source.columns}
    source = spec.source
    needed = {
        "--event-id": source.event_id,
        "--event-time": source.event_time,
        "--ingested-at": source.ingested_at,
        "--series-key": spec.series_key,
        **{f"--measure {name}": column for name, _, column in spec.measures if column},
    }
    for option, column in needed.items():
        if column not in names:
            raise SetupError(f"{option}: {source.relation} has no column {column} (it has {', '.join(sorted(names))})")
    types = dict(source.columns)
    for option, column in (("--event-time", source.event_time), ("--ingested-at", source.ingested_at)):
        if not types[column].startswith("timestamp"):
            raise SetupError(
                f"{option}: {source.relation}.{column} is a {types[column]}, not a timestamp: convert it in a"
                " staging model (or a view) and init on that (docs/raw-data-contract.md)"
            )
    if sum(kind == "count" for _, kind, _ in spec.measures) != 1:
        raise SetupError("--measure: a pipeline has exactly one count measure (e.g. --measure reading_count=count)")


def init_project(args: Any) -> list[str]:
    """`late-data init`: the project's files, its LATE_DATA_HOME laid out, `dbt deps`, and with
    --source a first pipeline (the source created first with --create-source). Returns what to
    print."""
    directory = args.dir.resolve()
    directory.mkdir(parents=True, exist_ok=True)
    name = identifier("--name", args.name or re.sub(r"\W", "_", directory.name).strip("_") or "late_data_project")
    package = args.package or str(REPOSITORY_PACKAGE)
    profile = find_user_profile(args.profile, args.target, directory) if args.profile is not None else None
    if profile is None and args.target is not None:
        if args.target not in SHARED_CATALOG_TARGETS:
            raise SetupError(
                f"--target {args.target}: without --profile, a shared catalog's target ({' or '.join(SHARED_CATALOG_TARGETS)});"
                " a target of your own profile goes with --profile"
            )
        if args.table_format != "iceberg":
            raise SetupError(f"--target {args.target}: the shared catalog is Iceberg only (docs/cluster.md)")
    plan = plan_project(directory, name, args.table_format, package, profile)
    spec_args = _pipeline_args(args)
    if spec_args is not None:
        for path in (
            directory / "models" / f"{spec_args['name']}.sql",
            directory / "models" / f"{spec_args['name']}.yml",
        ):
            if path.exists():
                raise SetupError(f"{path} exists: late-data init writes a pipeline once (choose another --pipeline)")
    written = write_plan(plan)
    lines = [f"init: wrote {path.relative_to(directory)}" for path in written]
    os.environ["LATE_DATA_PROJECT_DIR"] = str(directory)
    os.environ["LATE_DATA_TABLE_FORMAT"] = args.table_format
    if profile is None:
        os.environ["DBT_PROFILES_DIR"] = str(directory)
        if args.target is not None:
            os.environ["LATE_DATA_TARGET"] = args.target
    else:
        # dbt reads both (its --profiles-dir and --target): this process's dbt, and the printed commands.
        os.environ["DBT_PROFILES_DIR"] = str(profile.profiles_dir)
        if profile.target is not None:
            os.environ["DBT_TARGET"] = profile.target
    environment = prepare_environment()
    lines.append(f"init: {environment.home} laid out (jars, logging); table format {args.table_format}")
    project = DbtProject(environment, hold_home=False)
    project.install_packages()
    lines.append("init: dbt deps")
    if make_class_archive(environment.class_archive):
        lines.append(f"init: {environment.class_archive} made (Spark classes mapped at a JVM start)")
    if spec_args is None:
        return [*lines, *next_steps(directory, None, environment)]
    try:
        source = spec_args["source"]
        exists = project.spark.catalog.tableExists(source.relation)
        if not exists and not (args.create_source and source.columns):
            raise SetupError(
                f"{source.relation} does not exist: create it (pass its --columns with --create-source, or"
                " docs/your-own-pipeline.md shows the DDL)"
            )
        if not exists:
            project.execute(f"create schema if not exists {source.schema}")
            project.execute(source.ddl(args.table_format))
            lines.append(f"init: created {source.relation}: {source.ddl(args.table_format)}")
        if not source.columns:
            source = SourceTable(**{**source.__dict__, "columns": tuple(project.spark.table(source.relation).dtypes)})
            lines.append(
                f"init: {source.relation} read from the {environment.profile_target} catalog: "
                + ", ".join(f"{name} {kind}" for name, kind in source.columns)
            )
    finally:
        project.close()
    spec = PipelineSpec(**{**spec_args, "source": source})
    check_spec(spec)
    pipeline_plan = InitPlan(directory)
    plan_pipeline(pipeline_plan, spec, args.table_format)
    lines += [f"init: wrote {path.relative_to(directory)}" for path in write_plan(pipeline_plan)]
    return [*lines, *next_steps(directory, spec, environment)]


PROFILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")


def _pipeline_args(args: Any) -> dict[str, Any] | None:
    """The pipeline's settings from the command line, checked; None without --source."""
    if args.source is None:
        return None
    parts = args.source.split(".")
    if len(parts) != 2:
        raise SetupError(f"--source {args.source!r} is not SCHEMA.TABLE")
    schema, table = (identifier("--source", part) for part in parts)
    if args.series_key is None:
        raise SetupError("--source needs --series-key: the column a window belongs to (e.g. meter_id)")
    measures = tuple(parse_measure(text) for text in args.measures or ("row_count=count",))
    if not any(kind == "count" for _, kind, _ in measures):
        measures = (("row_count", "count", None), *measures)
    windows = _window_args(args)
    return {
        "name": identifier("--pipeline", args.pipeline or table),
        "source": SourceTable(
            schema=schema,
            table=table,
            columns=parse_columns(args.columns) if args.columns else (),
            event_id=identifier("--event-id", args.event_id),
            event_time=identifier("--event-time", args.event_time),
            ingested_at=identifier("--ingested-at", args.ingested_at),
        ),
        "series_key": identifier("--series-key", args.series_key),
        "measures": measures,
        **windows,
        "late_window_seconds": args.late_window_seconds,
        "partition_size_seconds": args.partition_seconds,
    }


def _window_args(args: Any) -> dict[str, int | None]:
    """Fixed windows (--window-seconds, default 300) or sessions (--session-gap-seconds, optionally
    --max-session-seconds), never both."""
    if args.session_gap_seconds is None:
        if args.max_session_seconds is not None:
            raise SetupError("--max-session-seconds needs --session-gap-seconds (it cuts a session, not a window)")
        window = args.window_seconds or 300
        if args.partition_seconds % window:
            raise SetupError(
                f"--partition-seconds {args.partition_seconds} is not a multiple of --window-seconds {window}"
            )
        return {"window_size_seconds": window}
    if args.window_seconds is not None:
        raise SetupError(
            "--window-seconds and --session-gap-seconds: a pipeline has fixed windows or sessions, not both"
        )
    return {
        "window_size_seconds": None,
        "session_gap_seconds": args.session_gap_seconds,
        "max_session_seconds": args.max_session_seconds,
    }


def next_steps(directory: Path, spec: PipelineSpec | None, environment: ProjectEnvironment | None = None) -> list[str]:
    """What to do after init, in order: a pipeline (without one), the rows loaded before the first
    build (a run loads the rows stamped since the run before it), the build, the cron line that
    runs it every minute after (init tags the pipelines and histories it writes `late_data`), the
    check. Each command with the settings it needs beyond the project's defaults (run_settings)."""
    here = "" if directory == Path.cwd() else f"cd {directory} && "
    settings = run_settings(directory, environment)
    build = f'next: {here}{settings}LATE_DATA_RUN_TIME="<now, UTC>" dbt build   # the first run builds everything'
    if spec is None:
        return [
            "next: a pipeline: late-data init --source SCHEMA.TABLE --series-key COLUMN --measure NAME=KIND:COLUMN",
            build,
        ]
    return [
        f"next: load the rows you have into {spec.source.relation} first (late-data load, or your own ingestion):"
        " a run loads the rows stamped since the run before it, and a row appended later with an older stamp"
        " waits for a reconciliation (docs/your-own-pipeline.md)",
        build,
        "next: then every minute and hourly maintenance, from cron (flock on the lock late-data holds: a run is"
        " skipped while the one before it or a late-data command runs):",
        *(f"  {line}" for line in cron_lines(directory, environment)),
        "next: or from Airflow, the same command (docs/running.md#from-cron-or-airflow):",
        f"  {airflow_task(directory, environment)}",
        f"next: {settings}late-data --project-dir {directory} check --pipeline {spec.name}"
        "   # every window against a recomputation",
    ]


def run_settings(directory: Path, environment: ProjectEnvironment | None) -> str:
    """The environment a command of the project needs that its defaults do not give: the shared
    catalog's target, its LATE_DATA_HOME when not the project's .late_data, and the Spark client
    configuration with the cluster's secret (docs/cluster.md). Empty on the embedded catalog."""
    if environment is None:
        return ""
    settings = {}
    if environment.home != (directory / ".late_data").resolve():
        settings["LATE_DATA_HOME"] = str(environment.home)
    if environment.shares_catalog:
        settings["LATE_DATA_TARGET"] = environment.profile_target
        settings["SPARK_CONF_DIR"] = str(environment.home / "cluster" / "conf" / "client")
    # A profile of the user's (init --profile): where it is unless dbt's default, and its target.
    profiles_dir = os.environ.get("DBT_PROFILES_DIR")
    if profiles_dir and Path(profiles_dir).resolve() not in (directory.resolve(), (Path.home() / ".dbt").resolve()):
        settings["DBT_PROFILES_DIR"] = profiles_dir
    if os.environ.get("DBT_TARGET"):
        settings["DBT_TARGET"] = os.environ["DBT_TARGET"]
    return "".join(f"{name}={shlex.quote(value)} " for name, value in settings.items())


def airflow_task(directory: Path, environment: ProjectEnvironment | None = None) -> str:
    """The every-minute cron line's command as an Airflow task of a DAG scheduled every minute."""
    return f'BashOperator(task_id="late_data_build", bash_command={scheduled_commands(directory, environment)[0]!r})'


def cron_lines(directory: Path, environment: ProjectEnvironment | None = None) -> list[str]:
    """The crontab of a project init wrote: every minute, the pipelines and histories it tagged
    (their tests with them), and hourly the tables' maintenance, waiting for the minute's run
    (scheduled_commands)."""
    build, maintenance = scheduled_commands(directory, environment)
    return [f"* * * * * {build}", f"30 * * * * {maintenance}"]


def scheduled_commands(directory: Path, environment: ProjectEnvironment | None = None) -> tuple[str, str]:
    """The build of the pipelines and histories init tagged, and the tables' maintenance, as shell
    commands: with this environment's dbt and the settings it needs (run_settings), the output
    appended to LATE_DATA_HOME's cron.log. Each holds the lock `late-data` holds on LATE_DATA_HOME
    (late_data.runtime.environment.lock_home: one process on the Derby metastore; on a shared
    catalog it keeps this machine's runs one at a time): the build is skipped while another holds
    it, the maintenance waits for it."""
    here = f"cd {shlex.quote(str(directory.resolve()))}"
    dbt = shlex.quote(str(Path(sys.executable).parent / "dbt"))
    home = ".late_data" if environment is None else shlex.quote(os.path.relpath(environment.home, directory.resolve()))
    settings = run_settings(directory, environment)
    log = f">> {home}/cron.log 2>&1"
    return (
        f"{here} && {settings}flock -n {home}/late_data.lock {dbt} build --select tag:late_data {log}",
        f"{here} && {settings}flock {home}/late_data.lock {dbt} run-operation late_data.maintain_tables {log}",
    )
