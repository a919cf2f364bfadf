"""One warm process for many dbt invocations: the Spark session and the parsed project are reused."""

from __future__ import annotations

import json
import os
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from late_data.environment import ProjectEnvironment, SetupError, lock_home

log = logging.getLogger(__name__)

# Vars that change per run and are only read at execution time, so a parsed manifest stays valid.
RUN_VARS = frozenset({"run_time", "backfill", "as_of", "reconcile"})


class DbtInvocationError(RuntimeError):
    """A dbt command failed; the message carries dbt's own error."""


@dataclass(frozen=True)
class Invocation:
    invocation_id: str
    result: Any


def format_timestamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S")


class DbtProject:
    """Runs dbt commands in this process against the project, on the profile's embedded Spark."""

    def __init__(self, environment: ProjectEnvironment, project_vars: dict[str, Any] | None = None):
        self.environment = environment
        self.project_vars = dict(project_vars or {})
        self._home_lock = lock_home(environment)
        self._manifest: Any = None

    @property
    def spark(self) -> Any:
        """The Spark session dbt's session method created (started by a first, cheap dbt call)."""
        from pyspark.sql import SparkSession

        from pyspark import SparkContext

        if SparkContext._active_spark_context is None:
            self.invoke(["run-operation", "late_data_create_raw_schema"])
        # dbt may have started the session in one of its worker threads: getOrCreate() returns that
        # session (same context and settings) rather than building another.
        session = SparkSession.builder.getOrCreate() if SparkContext._active_spark_context else None
        if session is None:
            raise SetupError("dbt did not start a Spark session: check profiles/profiles.yml")
        session.sparkContext.setLogLevel(os.environ.get("LATE_DATA_SPARK_LOG_LEVEL", "ERROR"))
        return session

    def use_vars(self, project_vars: dict[str, Any]) -> None:
        """Switch the project vars (settings such as the late window); the project is parsed again."""
        self.project_vars = dict(project_vars)
        self._manifest = None

    def manifest(self) -> Any:
        """The parsed project, with the compile state of the previous invocation cleared: dbt marks
        the nodes it compiles (ephemeral CTEs injected) and would skip that step on reuse."""
        if self._manifest is None:
            parse_args = ["parse", "--vars", json.dumps(self.project_vars)] if self.project_vars else ["parse"]
            self._manifest = self._invoke_raw(parse_args, manifest=None).result
        for node in self._manifest.nodes.values():
            if hasattr(node, "extra_ctes_injected"):
                node.compiled = False
                node.compiled_code = None
                node.extra_ctes_injected = False
                node.extra_ctes = []
                node._pre_injected_sql = None
        return self._manifest

    def invoke(self, args: list[str], run_vars: dict[str, Any] | None = None) -> Invocation:
        """Run `dbt <args>` with the project's vars plus run_vars; raise on failure."""
        unknown = set(run_vars or {}) - RUN_VARS
        if unknown:
            raise ValueError(f"vars {sorted(unknown)} change parsing: pass them as project vars")
        merged = {**self.project_vars, **(run_vars or {})}
        full_args = list(args)
        if merged:
            full_args += ["--vars", json.dumps(merged, default=str)]
        uses_manifest = args[0] not in ("parse", "debug", "deps", "clean")
        outcome = self._invoke_raw(full_args, manifest=self.manifest() if uses_manifest else None)
        invocation_id = self._invocation_id()
        return Invocation(invocation_id=invocation_id, result=outcome.result)

    def _invoke_raw(self, args: list[str], manifest: Any) -> Any:
        from dbt.cli.main import dbtRunner

        base = [
            "--project-dir", str(self.environment.project_dir),
            "--profiles-dir", str(self.environment.profiles_dir),
        ]
        command, rest = args[0], args[1:]
        full = [
            "--quiet", "--log-path", str(self.environment.dbt_log_dir),
            command, *base, *rest,
        ]
        log.debug("dbt %s", " ".join(full))
        outcome = dbtRunner(manifest=manifest).invoke(full)
        if not outcome.success:
            raise DbtInvocationError(f"dbt {' '.join(args)} failed: {describe_failure(outcome)}")
        return outcome

    @staticmethod
    def _invocation_id() -> str:
        from dbt_common.invocation import get_invocation_id

        return get_invocation_id()

    def setting(self, name: str) -> Any:
        """A project var: this process's override, else the default in dbt_project.yml."""
        if name in self.project_vars:
            return self.project_vars[name]
        import yaml

        project_file = self.environment.project_dir / "dbt_project.yml"
        return yaml.safe_load(project_file.read_text())["vars"][name]

    def target_schema(self) -> str:
        return os.environ.get("LATE_DATA_SCHEMA", "analytics")

    def raw_schema(self) -> str:
        return str(self.project_vars.get("raw_schema", "raw"))

    def close(self) -> None:
        self._home_lock.close()


def describe_failure(outcome: Any) -> str:
    if outcome.exception is not None:
        return str(outcome.exception)
    messages = []
    for node_result in getattr(outcome.result, "results", []) or []:
        if str(node_result.status) in ("error", "fail"):
            messages.append(f"{node_result.node.unique_id}: {node_result.message}")
    return "; ".join(messages) or "see the dbt log in LATE_DATA_HOME/logs"
