"""`late-data init`: what a dbt project needs once to use the late_data package, and a first
pipeline on a source table, written into a folder (empty, or an existing dbt-spark project).

A file init writes starts with its mark (INIT_MARK): such a file is init's, and init writes it
again. A file without the mark is the user's: init never changes it. An existing project's
`dbt_project.yml` and `packages.yml` must already hold what the package needs (init says what to
add, in one line); any other file of the user's in init's way is refused in one line, and nothing
is written. A pipeline's model and yml are written once, never over an existing file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from late_data.runtime.class_archive import make_class_archive
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.environment import CHECKOUT, prepare_environment
from late_data.runtime.settings import SetupError

INIT_MARK = "written by `late-data init`"
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MEASURE_KINDS = ("count", "sum", "mean", "min", "max", "count_distinct", "median")
REPOSITORY_PACKAGE = CHECKOUT / "package"


@dataclass(frozen=True)
class SourceTable:
    """The pipeline's source table and how its columns map to the package's."""

    schema: str
    table: str
    columns: tuple[tuple[str, str], ...]  # (name, Spark SQL type)
    event_id: str = "event_id"
    event_time: str = "event_time"
    ingested_at: str = "ingested_at"

    @property
    def relation(self) -> str:
        return f"{self.schema}.{self.table}"

    def ddl(self, table_format: str) -> str:
        columns = ", ".join(f"{name} {data_type}" for name, data_type in self.columns)
        return f"create table {self.relation} ({columns}) using {table_format}"


@dataclass(frozen=True)
class PipelineSpec:
    name: str
    source: SourceTable
    series_key: str
    measures: tuple[tuple[str, str, str | None], ...]  # (result column, kind, input column)
    window_size_seconds: int | None = 300  # None for sessions
    late_window_seconds: int = 3600
    partition_size_seconds: int = 3600
    session_gap_seconds: int | None = None
    max_session_seconds: int | None = None

    def window_settings(self) -> list[str]:
        """The yml lines that shape the pipeline's windows: fixed windows' size, or a session's gap
        (and longest length)."""
        if self.session_gap_seconds is None:
            return [f"window_size_seconds: {self.window_size_seconds}"]
        lines = [f"session_gap_seconds: {self.session_gap_seconds}"]
        if self.max_session_seconds is not None:
            lines.append(f"max_session_seconds: {self.max_session_seconds}")
        return lines


@dataclass
class InitPlan:
    """The files init writes (path -> text) and the files of the user's it checked."""

    directory: Path
    files: dict[Path, str] = field(default_factory=dict)


def identifier(what: str, value: str) -> str:
    """Names reach YAML and SQL: plain identifiers only."""
    if not IDENTIFIER.match(value):
        raise SetupError(f"{what}={value!r} is not a plain identifier: letters, digits and underscores")
    return value


def parse_columns(text: str) -> tuple[tuple[str, str], ...]:
    """`name type, name type, ...` (Spark SQL types; a decimal's precision and scale in parentheses)."""
    columns = []
    for part in re.split(r",(?![^(]*\))", text):
        words = part.split()
        if len(words) != 2 or not re.match(r"^[a-z]+(\(\d+,\s*\d+\))?$", words[1].lower()):
            raise SetupError(f"--columns: {part.strip()!r} is not `name type` (e.g. `kwh double`)")
        columns.append((identifier("--columns", words[0]), words[1].lower()))
    return tuple(columns)


def parse_measure(text: str) -> tuple[str, str, str | None]:
    """`name=count` or `name=kind:column`, e.g. `kwh_sum=sum:kwh`."""
    match = re.match(r"^(\w+)=(\w+)(?::(\w+))?$", text)
    if not match or match.group(2) not in MEASURE_KINDS or (match.group(2) == "count") != (match.group(3) is None):
        raise SetupError(
            f"--measure {text!r} is not NAME=count or NAME=KIND:COLUMN with KIND one of {', '.join(MEASURE_KINDS[1:])}"
        )
    return match.group(1), match.group(2), match.group(3)


def plan_project(directory: Path, name: str, table_format: str, package: str) -> InitPlan:
    """The once-per-project files, checked against what is there."""
    identifier("--name", name)
    plan = InitPlan(directory)
    project_file = directory / "dbt_project.yml"
    if _writable(project_file):
        plan.files[project_file] = dbt_project_yml(name, table_format)
    else:
        text = project_file.read_text()
        name = _project_name(text) or name
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
    if project_file in plan.files:
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


def _project_name(text: str) -> str | None:
    match = re.search(r"^name:\s*['\"]?(\w+)", text, re.MULTILINE)
    return match.group(1) if match else None


def _package_entry(package: str) -> str:
    if package.startswith(("http://", "https://", "git@")):
        return f"git: {package}\n    subdirectory: package"
    return f"local: {package}"


def dbt_project_yml(name: str, table_format: str) -> str:
    return f"""# {INIT_MARK}: the late_data package's once-per-project setup (docs/your-own-pipeline.md).
# Yours to change: init writes this file again only while this first line says it wrote it.
name: {name}
version: "1.0.0"
config-version: 2
profile: {name}

model-paths: ["models"]
macro-paths: ["macros"]
snapshot-paths: ["snapshots"]
clean-targets: ["target", "dbt_packages"]

flags:
  send_anonymous_usage_stats: false

# Settings and sources checked before anything runs; one audit row per late-data table and run.
on-run-start:
  - "{{{{ late_data.on_run_start() }}}}"
on-run-end:
  - "{{{{ late_data.on_run_end(results) }}}}"
# dbt-spark's relation listing, right for Iceberg's session catalog and free in a warm process.
dispatch:
  - macro_namespace: dbt
    search_order: ["{name}", "late_data", "dbt"]

vars:
  # A scheduled run an hour after a pipeline's last reconciliation is one by itself: it recomputes
  # the checked windows and repairs what the arrival-driven runs missed (docs/running.md).
  reconcile_every_seconds: 3600

models:
  {name}:
    # The late-data tables need a table format with partition replacement and merge.
    +file_format: "{{{{ env_var('LATE_DATA_TABLE_FORMAT', '{table_format}') }}}}"
snapshots:
  {name}:
    +file_format: "{{{{ env_var('LATE_DATA_TABLE_FORMAT', '{table_format}') }}}}"
"""


def packages_yml(package: str) -> str:
    return f"""# {INIT_MARK}
packages:
  - {_package_entry(package)}
"""


SNAPSHOT_WRAPPER = f"""{{#- {INIT_MARK}. The late_data package's snapshot materialization for this
    project's late-data histories (every other snapshot still gets dbt-spark's own): dbt lets no
    package override a built-in materialization, so the project wraps it. -#}}
{{% materialization snapshot, adapter='spark' %}}
    {{{{- return(late_data.materialization_snapshot_spark()) -}}}}
{{% endmaterialization %}}
"""


def profiles_yml(name: str) -> str:
    """An embedded Spark (dbt-spark's session method) with Iceberg or Delta, its warehouse, Derby
    metastore and jars under LATE_DATA_HOME (default .late_data in the project, laid out by
    `late-data init`); the table format is LATE_DATA_TABLE_FORMAT's."""
    home = "{{ env_var('LATE_DATA_HOME', '.late_data') }}"
    return f"""# {INIT_MARK}: an embedded Spark for this project (dbt-spark's session method), its
# warehouse, Derby metastore (one process at a time) and jars under LATE_DATA_HOME (default
# .late_data in the project). LATE_DATA_TABLE_FORMAT picks iceberg or delta (Delta's jars: DELTA_JARS,
# local paths, else Maven). A cluster or a Thrift Server: docs/cluster.md.
{name}:
  target: "{{{{ env_var('LATE_DATA_TABLE_FORMAT', 'iceberg') }}}}"
  outputs:
    iceberg:
      type: spark
      method: session
      host: localhost
      schema: "{{{{ env_var('LATE_DATA_SCHEMA', 'analytics') }}}}"
      server_side_parameters: &embedded
        spark.app.name: {name}
        spark.master: local[*]
        spark.ui.enabled: "false"
        spark.ui.showConsoleProgress: "false"
        spark.driver.bindAddress: 127.0.0.1
        spark.driver.host: 127.0.0.1
        spark.driver.memory: "{{{{ env_var('LATE_DATA_DRIVER_MEMORY', '4g') }}}}"
        spark.sql.session.timeZone: UTC
        spark.sql.shuffle.partitions: "{{{{ env_var('LATE_DATA_SHUFFLE_PARTITIONS', '4') }}}}"
        spark.sql.sources.partitionOverwriteMode: dynamic
        spark.sql.legacy.storeAnalyzedPlanForView: "true"
        spark.sql.codegen.cache.maxEntries: "1000"
        spark.sql.warehouse.dir: "{home}/warehouse"
        spark.hadoop.javax.jdo.option.ConnectionURL: "jdbc:derby:;databaseName={home}/metastore_db;create=true"
        spark.hadoop.datanucleus.schema.autoCreateAll: "true"
        spark.hadoop.hive.metastore.schema.verification: "false"
        # A short process starts faster on the class archive `late-data init` made and the JIT's quick
        # tier (with the full tier's 240 MB of code cache: the quick tier alone reserves 48 MB, which a
        # long build filled); `late-data`'s own long-lived processes set LATE_DATA_JVM_OPTIONS.
        spark.driver.extraJavaOptions: "{{{{ env_var('LATE_DATA_JVM_OPTIONS', '-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m -XX:SharedArchiveFile=' ~ env_var('LATE_DATA_HOME', '.late_data') ~ '/jvm/spark.jsa -Xshare:auto -Xlog:cds=off') }}}} -Dderby.system.home={home} -Dlog4j2.configurationFile={home}/conf/log4j2.properties"
        spark.jars: "{home}/jars/iceberg-spark-runtime.jar"
        spark.sql.extensions: org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions
        spark.sql.catalog.spark_catalog: org.apache.iceberg.spark.SparkSessionCatalog
        spark.sql.catalog.spark_catalog.type: hive
        spark.sql.catalog.spark_catalog.cache-enabled: "false"
        spark.hadoop.iceberg.engine.hive.lock-enabled: "false"
    delta:
      type: spark
      method: session
      host: localhost
      schema: "{{{{ env_var('LATE_DATA_SCHEMA', 'analytics') }}}}"
      server_side_parameters:
        <<: *embedded
        spark.jars: "{{{{ env_var('DELTA_JARS', '') }}}}"
        spark.jars.packages: "{{{{ '' if env_var('DELTA_JARS', '') else 'io.delta:delta-spark_2.12:' ~ env_var('LATE_DATA_DELTA_VERSION', '3.3.3') }}}}"
        spark.sql.extensions: io.delta.sql.DeltaSparkSessionExtension
        spark.sql.catalog.spark_catalog: org.apache.spark.sql.delta.catalog.DeltaCatalog
        spark.databricks.delta.snapshotPartitions: "{{{{ env_var('LATE_DATA_SHUFFLE_PARTITIONS', '4') }}}}"
"""


def pipeline_sql(spec: PipelineSpec) -> str:
    source = spec.source
    selected = [
        _selected(source.event_id, source.event_id),
        _selected(spec.series_key, spec.series_key),
        _selected(source.event_time, "event_time"),
        *(_selected(column, column) for column in dict.fromkeys(c for _, _, c in spec.measures if c)),
        _selected(source.ingested_at, "ingested_at"),
    ]
    columns = ",\n    ".join(dict.fromkeys(selected))
    return f"""{{#- {INIT_MARK}: a late-data pipeline, the versions of {source.relation}, one row per delivery. -#}}
{{{{ config(materialized='late_data') }}}}

select
    {columns}
from {{{{ source('{source.schema}', '{source.table}') }}}}
"""


def _selected(column: str, alias: str) -> str:
    return column if column == alias else f"{column} as {alias}"


def pipeline_yml(spec: PipelineSpec, table_format: str, declare_source: bool = True) -> str:
    """The pipeline's yml: its source's contract (unless another yml declares it already), its
    settings, tests and history snapshot."""
    source = spec.source
    columns = "\n".join(f"          - {{name: {name}, data_type: {data_type}}}" for name, data_type in source.columns)
    measures = "\n".join(
        f"            {name}: {kind}" if column is None else f"            {name}: {{{kind}: {column}}}"
        for name, kind, column in spec.measures
    )
    event_key = f"\n          event_key: {source.event_id}" if source.event_id != "event_id" else ""
    windows = "".join(f"\n          {line}" for line in spec.window_settings())
    source_contract = f"""sources:
  - name: {source.schema}
    schema: {source.schema}
    tables:
      - name: {source.table}
        description: One row per delivery; a correction is a new row with the same {source.event_id}.
        columns:
{columns}

"""
    return f"""# {INIT_MARK}: the pipeline's settings, its source's contract, its tests and its history.
version: 2

{source_contract if declare_source else ""}models:
  - name: {spec.name}
    config:
      meta:
        late_data:
          series_key: {spec.series_key}{event_key}{windows}
          late_window_seconds: {spec.late_window_seconds}
          partition_size_seconds: {spec.partition_size_seconds}
          measures:
{measures}
    data_tests:
      - late_data.quarantine_is_empty: {{config: {{severity: warn}}}}
      - late_data.ambiguous_versions: {{config: {{severity: warn}}}}

snapshots:
  - name: {spec.name}_history
    relation: ref('{spec.name}')
    config: {{strategy: late_data.history, unique_key: window_key}}
    data_tests:
      - late_data.too_late_rows: {{config: {{severity: warn}}}}
"""


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
    if sum(kind == "count" for _, kind, _ in spec.measures) != 1:
        raise SetupError("--measure: a pipeline has exactly one count measure (e.g. --measure reading_count=count)")


def init_project(args: Any) -> list[str]:
    """`late-data init`: the project's files, its LATE_DATA_HOME laid out, `dbt deps`, and with
    --source a first pipeline (the source created first with --create-source). Returns what to
    print."""
    import os

    directory = args.dir.resolve()
    directory.mkdir(parents=True, exist_ok=True)
    name = identifier("--name", args.name or re.sub(r"\W", "_", directory.name).strip("_") or "late_data_project")
    package = args.package or str(REPOSITORY_PACKAGE)
    plan = plan_project(directory, name, args.table_format, package)
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
    os.environ["DBT_PROFILES_DIR"] = str(directory)
    os.environ["LATE_DATA_TABLE_FORMAT"] = args.table_format
    environment = prepare_environment()
    lines.append(f"init: {environment.home} laid out (jars, logging); table format {args.table_format}")
    project = DbtProject(environment, hold_home=False)
    project.install_packages()
    lines.append("init: dbt deps")
    if make_class_archive(environment.class_archive):
        lines.append(f"init: {environment.class_archive} made (Spark classes mapped at a JVM start)")
    if spec_args is None:
        return [*lines, *next_steps(directory, None)]
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
    finally:
        project.close()
    spec = PipelineSpec(**{**spec_args, "source": source})
    check_spec(spec)
    pipeline_plan = InitPlan(directory)
    plan_pipeline(pipeline_plan, spec, args.table_format)
    lines += [f"init: wrote {path.relative_to(directory)}" for path in write_plan(pipeline_plan)]
    return [*lines, *next_steps(directory, spec)]


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


def next_steps(directory: Path, spec: PipelineSpec | None) -> list[str]:
    """What to do after init, in order: a pipeline (without one), the rows loaded before the first
    build (a run loads the rows stamped since the run before it), the build, the check."""
    here = "" if directory == Path.cwd() else f"cd {directory} && "
    build = (
        f'next: {here}LATE_DATA_RUN_TIME="<now, UTC>" dbt build   # the first run builds everything; then every minute'
    )
    if spec is None:
        return [
            "next: a pipeline: late-data init --source SCHEMA.TABLE --series-key COLUMN --measure NAME=KIND:COLUMN",
            build,
        ]
    return [
        f"next: load the rows you have into {spec.source.relation} first: a run loads the rows stamped since the"
        " run before it, and a row appended later with an older stamp waits for a reconciliation"
        " (docs/your-own-pipeline.md)",
        build,
        f"next: late-data --project-dir {directory} check --pipeline {spec.name}   # every window against a recomputation",
    ]
