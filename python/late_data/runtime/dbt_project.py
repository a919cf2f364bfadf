"""One warm process for many dbt invocations: the Spark session and the parsed project are reused."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from late_data.runtime.dbt_errors import DbtInvocationError, NodeErrors, describe_command, describe_failure, read_from
from late_data.runtime.dbt_packages import install_packages
from late_data.runtime.delta_jars import DELTA_PACKAGE, check_delta_classpath, installed_version
from late_data.runtime.environment import CHECKOUT, ProjectEnvironment, lock_home, require_cluster_client_conf
from late_data.runtime.settings import SetupError, validated_vars

log = logging.getLogger(__name__)


# This repository's profiles.yml, whose targets take their schema from LATE_DATA_SCHEMA (default analytics).
OWN_PROFILES = CHECKOUT / "profiles"
# Vars that change per run and are only read at execution time, so a parsed manifest stays valid.
RUN_VARS = frozenset({"run_time", "backfill", "as_of", "reconcile", "late_data_explain"})
# Environment settings that dbt reads while parsing (profiles.yml, dbt_project.yml).
PARSE_SETTINGS = ("LATE_DATA_", "DELTA_JARS", "DBT_")
# Where the macros keep what they know of the warehouse across invocations (macros/late_data/state).
PROCESS_STATE = "late_data_process_state"
# The temporary views late_data.stage caches a late-data write's rows in: <model>__staged_<12 hex>.
STAGED_VIEW = re.compile(r"__staged_[0-9a-f]{12}$")
# The dbt commands that take --target-path (dbt deps does not).
TARGET_PATH_COMMANDS = frozenset(
    {"build", "compile", "list", "ls", "parse", "run", "run-operation", "seed", "show", "snapshot", "test"}
)


class Closeable(Protocol):
    def close(self) -> None: ...


@dataclass(frozen=True)
class Invocation:
    invocation_id: str
    result: Any


# The prefixes under which late_data.describe_pipelines logs each pipeline and the target.
DESCRIBED = "late-data pipeline "
TARGET = "late-data target "


class DbtProject:
    """Runs dbt commands in this process against the project, on the profile's embedded Spark."""

    def __init__(
        self,
        environment: ProjectEnvironment,
        project_vars: dict[str, Any] | None = None,
        callbacks: Sequence[Callable[[Any], None]] = (),
        hold_home: bool = True,
    ):
        """`callbacks`: called with every dbt event (an EventMsg) of every invocation, e.g. to watch
        a run's statements as they start (the fault-injection tests kill the process from one).
        `hold_home`: take LATE_DATA_HOME's lock (one process per embedded metastore); false for a
        second project in a process that holds it already (the tests' example project)."""
        self.environment = environment
        self.project_vars = validated_vars(project_vars or {})
        self.callbacks = list(callbacks)
        held = lock_home(environment) if hold_home else None
        self._held: list[Closeable] = [held] if held is not None else []
        self._manifest: Any = None
        self._manifest_key = self._parse_key()
        self._manifests: dict[str, Any] = {}
        self._thrift_cursor: Any = None
        self._classpath_checked = False
        self._var_defaults: dict[str, Any] | None = None
        self._cached: dict[str, dict[str, Any]] = {}

    @property
    def spark(self) -> Any:
        """The Spark session dbt's session method created (started by a first, cheap dbt call)."""
        from pyspark import SparkContext
        from pyspark.sql import SparkSession

        if SparkContext._active_spark_context is None:
            if self.environment.shares_catalog:
                require_cluster_client_conf()
            if self.environment.profile_target == "thrift":
                # dbt's thrift method runs no Spark in this process; raw data, oracles and audit
                # reads use a `cluster`-target session on the same shared catalog instead.
                self.install_packages()
                self._invoke_raw(
                    ["run-operation", "late_data.open_session", "--target", "cluster", *self._vars_args()],
                    manifest=None,
                )
            else:
                self.invoke(["run-operation", "late_data.open_session"])
        # dbt may have started the session in one of its worker threads: getOrCreate() returns that
        # session (same context and settings) rather than building another.
        session = SparkSession.builder.getOrCreate() if SparkContext._active_spark_context else None
        if session is None:
            raise SetupError("dbt did not start a Spark session: check profiles/profiles.yml")
        session.sparkContext.setLogLevel(os.environ.get("LATE_DATA_SPARK_LOG_LEVEL", "ERROR"))
        if self.environment.table_format == "delta" and not self._classpath_checked:
            # Once per process, one py4j call: jars from elsewhere (spark-defaults.conf, a session
            # started before dbt's) would slip past the DELTA_JARS check of prepare_environment.
            expected = os.environ.get("LATE_DATA_DELTA_VERSION") or installed_version(DELTA_PACKAGE) or ""
            check_delta_classpath(session._jvm, expected)
            self._classpath_checked = True
        return session

    def query(self, sql: str) -> list[dict[str, Any]]:
        """Rows of a query, as dicts, through the target's own engine: the Thrift Server for the
        `thrift` target (one PyHive connection kept for the process, so a warm scheduler starts no
        Spark of its own), the dbt-started Spark session otherwise."""
        if self.environment.profile_target != "thrift":
            return [row.asDict() for row in self.spark.sql(sql).collect()]
        cursor = self._cursor()
        cursor.execute(sql)
        names = [column[0].split(".")[-1] for column in cursor.description or []]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def execute(self, sql: str) -> None:
        """A statement that returns no rows (DDL), through the target's own engine like query():
        PyHive cannot fetch a result without columns."""
        if self.environment.profile_target != "thrift":
            self.spark.sql(sql)
        else:
            self._cursor().execute(sql)

    def _cursor(self) -> Any:
        if self._thrift_cursor is None:
            from pyhive import hive

            auth = os.environ.get("LATE_DATA_THRIFT_AUTH", "NONE").upper()
            self._thrift_cursor = hive.connect(
                host=os.environ.get("LATE_DATA_THRIFT_HOST", os.environ.get("LATE_DATA_CLUSTER_HOST", "127.0.0.1")),
                port=int(os.environ.get("LATE_DATA_THRIFT_PORT", "10015")),
                username=os.environ.get("LATE_DATA_THRIFT_USER", "late_data"),
                auth=auth,
                # PyHive takes a password in these modes only (and requires one there).
                password=os.environ.get("LATE_DATA_THRIFT_PASSWORD") if auth in ("LDAP", "CUSTOM") else None,
            ).cursor()
        return self._thrift_cursor

    def use_vars(self, project_vars: dict[str, Any]) -> None:
        """Switch the project vars (settings such as the late window). The project is parsed again
        when they changed; a parsed project is kept per set of vars, so switching back costs nothing."""
        self.project_vars = validated_vars(project_vars)
        self._manifest_key = self._parse_key()
        self._manifest = self._manifests.get(self._manifest_key)

    def _parse_key(self) -> str:
        """What a parsed project depends on: the vars, and the settings profiles.yml and
        dbt_project.yml read from the environment (the target schema, the table format...)."""
        settings = {name: value for name, value in os.environ.items() if name.startswith(PARSE_SETTINGS)}
        return json.dumps([self.project_vars, settings], sort_keys=True, default=str)

    def cached(self, key: str) -> Any:
        """What `cache` kept under `key` for the current project vars, or None."""
        return self._cached.get(self._parse_key(), {}).get(key)

    def cache(self, key: str, value: Any) -> None:
        """Keep something worked out from the parsed project (the pipelines), for its vars."""
        self._cached.setdefault(self._parse_key(), {})[key] = value

    def forget_warehouse_state(self) -> None:
        """Forget what the macros remember of the warehouse across invocations (its relations,
        schemas and table columns: late_data_process_state), in every parsed project: for callers
        that change the warehouse behind dbt's back (dropping schemas, altering raw tables), and
        after a failed invocation, whose cause may be such a change."""
        for manifest in self._manifests.values():
            manifest.flat_graph.pop(PROCESS_STATE, None)

    def manifest(self) -> Any:
        """The parsed project, with the compile state of the previous invocation cleared: dbt marks
        the nodes it compiles (ephemeral CTEs injected) and would skip that step on reuse, keeping
        SQL compiled with the previous run's vars.

        dbt-core has no public call that clears a node's compile state. `compiled`, `compiled_code`,
        `extra_ctes_injected` and `extra_ctes` are public fields of compiled nodes (manifest.json's
        schema). The public alternatives do not do the job: `Manifest.deepcopy()` fails on this
        project (dbt-core 1.11: its `disabled` entries are lists, which have no from_dict), and a
        `copy.deepcopy` of the parsed manifest per invocation took 0.4 to 1.2 s here (98 nodes,
        619 macros), a large share of a warm 4 s run."""
        if self._manifest is None or self._manifest_key != self._parse_key():
            self._manifest_key = self._parse_key()
            self._manifest = self._manifests.get(self._manifest_key)
        if self._manifest is None:
            self.install_packages()
            parse_args = ["parse", "--vars", json.dumps(self.project_vars)] if self.project_vars else ["parse"]
            try:
                self._manifest = self._invoke_raw(parse_args, manifest=None).result
            except DbtInvocationError:
                # dbt's partial parsing can lose a snapshot declared in yml after a macro changed
                # (dbt-labs/dbt-core#10903): a full parse of the same project succeeds.
                self._manifest = self._invoke_raw([*parse_args, "--no-partial-parse"], manifest=None).result
            self._manifests[self._manifest_key] = self._manifest
        for node in self._manifest.nodes.values():
            if hasattr(node, "extra_ctes_injected") and node.resource_type != "seed":  # a seed compiles nothing
                node.compiled = False
                node.compiled_code = None
                node.extra_ctes_injected = False
                node.extra_ctes = []
                # Private, no public way: dbt reuses it for an ephemeral model that gains no CTEs this time.
                node._pre_injected_sql = None
        return self._manifest

    def install_packages(self) -> None:
        """`dbt deps` when packages.yml and package-lock.yml hold what was not installed yet
        (dbt_packages.install_packages)."""
        install_packages(self.environment.project_dir, lambda: self._invoke_raw(["deps"], manifest=None))

    @contextmanager
    def watching(self, callback: Callable[[Any], None]) -> Iterator[None]:
        """`callback` gets every dbt event of the invocations made inside the block."""
        self.callbacks.append(callback)
        try:
            yield
        finally:
            self.callbacks.remove(callback)

    def logged(
        self, args: list[str], prefixes: tuple[str, ...], run_vars: dict[str, Any] | None = None
    ) -> list[tuple[str, Any]]:
        """Run `dbt <args>` (invoke) and return what its macros logged with dbt's log() under one of
        `prefixes`, in order: each message's prefix and the JSON after it."""
        messages: list[tuple[str, Any]] = []

        def keep(event: Any) -> None:
            if event.info.name == "JinjaLogInfo":
                message = event.data.msg
                for prefix in prefixes:
                    if message.startswith(prefix):
                        messages.append((prefix, json.loads(message[len(prefix) :])))

        with self.watching(keep):
            self.invoke(args, run_vars)
        return messages

    def invoke(self, args: list[str], run_vars: dict[str, Any] | None = None) -> Invocation:
        """Run `dbt <args>` with the project's vars plus run_vars; raise on failure."""
        unknown = set(run_vars or {}) - RUN_VARS
        if unknown:
            raise ValueError(f"vars {sorted(unknown)} change parsing: pass them as project vars")
        full_args = [*args, *self._vars_args(run_vars)]
        uses_manifest = args[0] not in ("parse", "debug", "deps", "clean")
        outcome = self._invoke_raw(full_args, manifest=self.manifest() if uses_manifest else None)
        invocation_id = self._invocation_id()
        return Invocation(invocation_id=invocation_id, result=outcome.result)

    def _vars_args(self, run_vars: dict[str, Any] | None = None) -> list[str]:
        merged = {**self.project_vars, **(run_vars or {})}
        return ["--vars", json.dumps(merged, default=str)] if merged else []

    def _invoke_raw(self, args: list[str], manifest: Any) -> Any:
        from dbt.cli.main import dbtRunner

        base = [
            "--project-dir",
            str(self.environment.project_dir),
            "--profiles-dir",
            str(self.environment.profiles_dir),
        ]
        command, rest = args[0], args[1:]
        if command in TARGET_PATH_COMMANDS and not os.environ.get("DBT_TARGET_PATH"):
            rest = ["--target-path", str(self.target_path), *rest]
        # Nothing on the console, errors included: a failure reaches the caller as one
        # DbtInvocationError (describe_failure), the whole story stays in the dbt log. No
        # manifest.json or run_results.json either: this process reads each invocation's results
        # from the invocation, and writing the whole manifest again after every one was a third of a
        # scheduled run's Python CPU (0.37 of 1.0 s, 2026-12-03).
        full = [
            "--quiet",
            "--no-write-json",
            "--log-level",
            "none",
            "--log-level-file",
            "debug",
            "--log-path",
            str(self.environment.dbt_log_dir),
            command,
            *base,
            *rest,
        ]
        log.debug("dbt %s", " ".join(full))
        dbt_log = self.environment.dbt_log_dir / "dbt.log"
        log_offset = dbt_log.stat().st_size if dbt_log.exists() else 0
        node_errors = NodeErrors()
        outcome = dbtRunner(manifest=manifest, callbacks=[*self.callbacks, node_errors]).invoke(full)
        if not outcome.success:
            self.forget_warehouse_state()
            self._drop_staged_views()
            failure = describe_failure(outcome, read_from(dbt_log, log_offset), self.environment, node_errors.by_node)
            raise DbtInvocationError(f"dbt {describe_command(args)} failed: {failure} (the whole error: {dbt_log})")
        return outcome

    @property
    def target_path(self) -> Path:
        """Where this process's dbt keeps its state (the partial parse, compiled SQL): apart from the
        project's target/, whose partial parse plain dbt on cron saved with its own environment, which
        this process's settings (the table format prepare_environment exports) would invalidate ("env
        vars used in dbt_project.yml have changed"), one folder per project in LATE_DATA_HOME."""
        project_dir = self.environment.project_dir.resolve()
        digest = hashlib.sha1(str(project_dir).encode()).hexdigest()[:8]
        return self.environment.home / "target" / f"{project_dir.name}-{digest}"

    def _drop_staged_views(self) -> None:
        """A failed write leaves its staged rows cached in this process's Spark session
        (late_data.stage): free them. Through a Thrift Server each node had a session of its own,
        which is gone with its temporary views."""
        from pyspark import SparkContext

        if self.environment.profile_target == "thrift" or SparkContext._active_spark_context is None:
            return
        session = self.spark
        for table in session.catalog.listTables():
            if table.isTemporary and STAGED_VIEW.search(table.name):
                session.catalog.dropTempView(table.name)

    @staticmethod
    def _invocation_id() -> str:
        from dbt_common.invocation import get_invocation_id

        return get_invocation_id()

    def setting(self, name: str) -> Any:
        """A project var: this process's override, else the default in dbt_project.yml."""
        if name in self.project_vars:
            return self.project_vars[name]
        if self._var_defaults is None:
            # Read once: raw_schema() is asked for inside timed bench runs.
            import yaml

            project_file = self.environment.project_dir / "dbt_project.yml"
            self._var_defaults = dict(yaml.safe_load(project_file.read_text())["vars"])
        return self._var_defaults[name]

    def target_schema(self) -> str:
        """The profile target's schema, which holds the run audit: LATE_DATA_SCHEMA (what this
        repository's profiles.yml reads), else what dbt says for the project's own profile."""
        configured = os.environ.get("LATE_DATA_SCHEMA")
        if configured or self.environment.profiles_dir.resolve() == OWN_PROFILES:
            return configured or "analytics"
        schema = next((payload["schema"] for prefix, payload in self.pipeline_descriptions() if prefix == TARGET), None)
        return str(schema or "analytics")

    def pipeline_descriptions(self) -> list[tuple[str, Any]]:
        """What `late_data.describe_pipelines` logs of the project (each pipeline under DESCRIBED, the
        target under TARGET), asked once per set of project vars; late_data.project.pipelines reads
        the pipelines from it."""
        described = self.cached("pipeline_descriptions")
        if described is None:
            described = self.logged(["run-operation", "late_data.describe_pipelines"], (DESCRIBED, TARGET))
            self.cache("pipeline_descriptions", described)
        return list(described)

    def raw_schema(self) -> str:
        """Where the raw tables live: the var `raw_schema` (dbt_project.yml's default or this
        process's override), the same value the sources and late_data_create_raw_schema read."""
        return str(self.setting("raw_schema"))

    def reset_warehouse(self) -> None:
        """Drop the raw and target schemas with everything in them: a clean warehouse for the demo,
        the benchmark and the tests."""
        # Cached plans would keep pointing at the dropped tables (Iceberg then refuses the new ones).
        self.spark.catalog.clearCache()
        for schema in (self.raw_schema(), self.target_schema()):
            self.spark.sql(f"drop schema if exists {schema} cascade")
        self.forget_warehouse_state()

    def hold(self, resource: Closeable) -> None:
        """Keep `resource` (a lock) until the project is closed."""
        self._held.append(resource)

    def close(self) -> None:
        for resource in reversed(self._held):
            resource.close()
        self._held.clear()
