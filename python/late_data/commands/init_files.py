"""The files `late-data init` writes, each starting with its mark (INIT_MARK): dbt_project.yml,
packages.yml, profiles.yml, the snapshot wrapper, and a pipeline's model and yml."""

from __future__ import annotations

import re

from late_data.commands.init_spec import PipelineSpec
from late_data.runtime.environment import CHECKOUT

INIT_MARK = "written by `late-data init`"
REPOSITORY_PACKAGE = CHECKOUT / "package"


def _project_name(text: str) -> str | None:
    match = re.search(r"^name:\s*['\"]?(\w+)", text, re.MULTILINE)
    return match.group(1) if match else None


def _package_entry(package: str) -> str:
    if package.startswith(("http://", "https://", "git@")):
        return f"git: {package}\n    subdirectory: package"
    return f"local: {package}"


def dbt_project_yml(name: str, table_format: str, profile: str | None = None) -> str:
    return f"""# {INIT_MARK}: the late_data package's once-per-project setup (docs/your-own-pipeline.md).
# Yours to change: init writes this file again only while this first line says it wrote it.
name: {name}
version: "1.0.0"
config-version: 2
profile: {profile or name}

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
    project's late-data histories (every other snapshot still gets dbt-spark's own), and its view
    materialization (a view dropped before it is created again: with Iceberg's session catalog,
    CREATE OR REPLACE VIEW keeps the old SQL text, and a pipeline would read a staging view as it
    was): dbt lets no package override a built-in materialization, so the project wraps them. -#}}
{{% materialization snapshot, adapter='spark' %}}
    {{{{- return(late_data.materialization_snapshot_spark()) -}}}}
{{% endmaterialization %}}

{{% materialization view, adapter='spark' %}}
    {{{{- return(late_data.materialization_view_spark()) -}}}}
{{% endmaterialization %}}
"""


def profiles_yml(name: str) -> str:
    """An embedded Spark (dbt-spark's session method) with Iceberg or Delta, its warehouse, Derby
    metastore and jars under LATE_DATA_HOME (default .late_data in the project, laid out by
    `late-data init`); the table format is LATE_DATA_TABLE_FORMAT's. And the shared catalog's
    targets, as this repository's profile has them (docs/cluster.md): `cluster` (a driver here,
    executors on a Spark standalone master, the Hive metastore service) and `thrift` (a Spark
    Thrift Server); LATE_DATA_TARGET picks one."""
    home = "{{ env_var('LATE_DATA_HOME', '.late_data') }}"
    return f"""# {INIT_MARK}: an embedded Spark for this project (dbt-spark's session method), its
# warehouse, Derby metastore (one process at a time) and jars under LATE_DATA_HOME (default
# .late_data in the project). LATE_DATA_TABLE_FORMAT picks iceberg or delta (Delta's jars: DELTA_JARS,
# local paths, else Maven). LATE_DATA_TARGET=cluster or thrift: the shared catalog (docs/cluster.md).
{name}:
  target: "{{{{ env_var('LATE_DATA_TARGET', env_var('LATE_DATA_TABLE_FORMAT', 'iceberg')) }}}}"
  outputs:
    iceberg:
      type: spark
      method: session
      host: localhost
      schema: "{{{{ env_var('LATE_DATA_SCHEMA', 'analytics') }}}}"
      server_side_parameters: &embedded
        <<: &shared
          spark.app.name: {name}
          spark.ui.enabled: "false"
          spark.ui.showConsoleProgress: "false"
          spark.sql.session.timeZone: UTC
          spark.sql.shuffle.partitions: "{{{{ env_var('LATE_DATA_SHUFFLE_PARTITIONS', '4') }}}}"
          spark.sql.sources.partitionOverwriteMode: dynamic
          spark.sql.legacy.storeAnalyzedPlanForView: "true"
          spark.sql.codegen.cache.maxEntries: "1000"
          spark.sql.warehouse.dir: "{{{{ env_var('LATE_DATA_WAREHOUSE', env_var('LATE_DATA_HOME', '.late_data') ~ '/warehouse') }}}}"
          spark.jars: "{home}/jars/iceberg-spark-runtime.jar"
          spark.sql.extensions: org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions
          spark.sql.catalog.spark_catalog: org.apache.iceberg.spark.SparkSessionCatalog
          spark.sql.catalog.spark_catalog.type: hive
          spark.sql.catalog.spark_catalog.cache-enabled: "false"
          spark.hadoop.hive.metastore.schema.verification: "false"
          spark.hadoop.hive.metastore.disallow.incompatible.col.type.changes: "false"
        spark.master: "{{{{ env_var('LATE_DATA_SPARK_MASTER', 'local[*]') }}}}"
        spark.driver.bindAddress: 127.0.0.1
        spark.driver.host: 127.0.0.1
        spark.driver.memory: "{{{{ env_var('LATE_DATA_DRIVER_MEMORY', '4g') }}}}"
        spark.hadoop.javax.jdo.option.ConnectionURL: "jdbc:derby:;databaseName={home}/metastore_db;create=true"
        spark.hadoop.datanucleus.schema.autoCreateAll: "true"
        # A short process starts faster on the class archive `late-data init` made and the JIT's quick
        # tier (with the full tier's 240 MB of code cache: the quick tier alone reserves 48 MB, which a
        # long build filled); `late-data`'s own long-lived processes set LATE_DATA_JVM_OPTIONS.
        spark.driver.extraJavaOptions: "{{{{ env_var('LATE_DATA_JVM_OPTIONS', '-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m -XX:SharedArchiveFile=' ~ env_var('LATE_DATA_HOME', '.late_data') ~ '/jvm/spark.jsa -Xshare:auto -Xlog:cds=off') }}}} -Dderby.system.home={home} -Dlog4j2.configurationFile={home}/conf/log4j2.properties"
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
    # The shared catalog of `late-data cluster up`, or one configured like it (docs/cluster.md).
    cluster:
      type: spark
      method: session
      host: localhost
      schema: "{{{{ env_var('LATE_DATA_SCHEMA', 'analytics') }}}}"
      server_side_parameters:
        <<: *shared
        spark.master: "{{{{ env_var('LATE_DATA_CLUSTER_MASTER', 'spark://' ~ env_var('LATE_DATA_CLUSTER_HOST', '127.0.0.1') ~ ':' ~ env_var('LATE_DATA_SPARK_MASTER_PORT', '17077')) }}}}"
        spark.driver.memory: "{{{{ env_var('LATE_DATA_DRIVER_MEMORY', '1g') }}}}"
        spark.executor.memory: "{{{{ env_var('LATE_DATA_EXECUTOR_MEMORY', '1g') }}}}"
        spark.cores.max: "{{{{ env_var('LATE_DATA_APP_CORES', '1') }}}}"
        spark.authenticate: "true"
        spark.driver.bindAddress: "{{{{ env_var('LATE_DATA_CLUSTER_HOST', '127.0.0.1') }}}}"
        spark.driver.host: "{{{{ env_var('LATE_DATA_CLUSTER_HOST', '127.0.0.1') }}}}"
        spark.hadoop.hive.metastore.uris: "{{{{ env_var('LATE_DATA_METASTORE_URI', 'thrift://127.0.0.1:' ~ env_var('LATE_DATA_METASTORE_PORT', '19083')) }}}}"
        spark.hadoop.iceberg.engine.hive.lock-enabled: "true"
    thrift:
      type: spark
      method: thrift
      host: "{{{{ env_var('LATE_DATA_THRIFT_HOST', env_var('LATE_DATA_CLUSTER_HOST', '127.0.0.1')) }}}}"
      port: "{{{{ env_var('LATE_DATA_THRIFT_PORT', '10015') | as_number }}}}"
      user: "{{{{ env_var('LATE_DATA_THRIFT_USER', 'late_data') }}}}"
      auth: "{{{{ env_var('LATE_DATA_THRIFT_AUTH', 'NONE') }}}}"
      schema: "{{{{ env_var('LATE_DATA_SCHEMA', 'analytics') }}}}"
      poll_interval: "{{{{ env_var('LATE_DATA_THRIFT_POLL_INTERVAL', '0') | as_number }}}}"
      connect_retries: "{{{{ env_var('LATE_DATA_THRIFT_CONNECT_RETRIES', '3') | as_number }}}}"
      connect_timeout: 5
      retry_all: true
      server_side_parameters:
        "set:hiveconf:spark.sql.session.timeZone": UTC
        "set:hiveconf:spark.sql.sources.partitionOverwriteMode": dynamic
        "set:hiveconf:spark.sql.ansi.enabled": "false"
        "set:hiveconf:spark.sql.legacy.storeAnalyzedPlanForView": "true"
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
      tags: [late_data]  # what a scheduled run selects (the cron line init printed)
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
    config: {{strategy: late_data.history, unique_key: window_key, tags: [late_data]}}
    data_tests:
      - late_data.too_late_rows: {{config: {{severity: warn}}}}
"""
