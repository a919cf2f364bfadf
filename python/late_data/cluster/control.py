"""`late-data cluster up|down|status`: bring the services up in order, down in reverse, and say
what runs."""

from __future__ import annotations

import functools
import logging
import subprocess
import time
from collections.abc import Callable
from dataclasses import replace

from late_data.cluster.common import LOOPBACK, ClusterSettings, ComponentStatus, Tools, find_java, find_spark_home
from late_data.cluster.metastore import start_metastore
from late_data.cluster.postgres import (
    find_jdbc_jar,
    find_postgres_bin,
    find_psql,
    init_postgres,
    postgres_os_user,
    prepare_metastore_database,
    start_postgres,
    stop_postgres,
)
from late_data.cluster.processes import port_answers, require_free_port, running_pid, stop_process, wait_until
from late_data.cluster.spark import alive_workers, start_master, start_worker, write_spark_confs
from late_data.cluster.thriftserver import (
    authentication_site,
    require_authentication,
    start_thriftserver,
    thrift_answers,
)
from late_data.runtime.environment import ProjectEnvironment
from late_data.runtime.settings import SetupError

log = logging.getLogger(__name__)


def find_tools(environment: ProjectEnvironment) -> Tools:
    """Java, Spark (pip's pyspark), the PostgreSQL server binaries and its JDBC driver, or a
    SetupError saying how to install what is missing."""
    return Tools(
        java=find_java(),
        spark_home=find_spark_home(),
        postgres_bin=find_postgres_bin(),
        psql=find_psql(),
        jdbc_jar=find_jdbc_jar(),
        iceberg_jar=environment.iceberg_jar_link,
        postgres_os_user=postgres_os_user(),
    )


def saved_settings(settings: ClusterSettings) -> ClusterSettings:
    """The settings the running cluster was started with (status and down use them), else these."""
    try:
        return ClusterSettings.from_json(settings.state_file.read_text())
    except (FileNotFoundError, ValueError, TypeError, KeyError):
        return settings


def cluster_up(environment: ProjectEnvironment) -> tuple[ClusterSettings, float]:
    """Start whatever of the cluster is not running; returns the settings and the seconds it took.
    On a failure, stops what this call started."""
    started = time.monotonic()
    requested = ClusterSettings.from_environment(environment)
    require_authentication(requested)
    authentication_site(requested)
    tools = find_tools(environment)
    running = [name for name in requested.component_names() if running_pid(saved_settings(requested), name)]
    settings = saved_settings(requested) if running else requested
    if running and replace(settings, timeout_seconds=requested.timeout_seconds) != requested:
        raise SetupError(
            f"the cluster in {requested.cluster_dir} runs with other settings ({', '.join(running)} up): "
            "run `late-data cluster down` first"
        )
    for directory in (settings.logs_dir, settings.run_dir, settings.conf_dir):
        directory.mkdir(parents=True, exist_ok=True)
    settings.state_file.write_text(settings.to_json())
    launched: list[str] = []
    try:
        bring_up(settings, tools, environment, launched)
    except BaseException:
        for name in reversed(launched):
            stop_component(settings, tools, name)
        raise
    return settings, time.monotonic() - started


def require_free_ports(settings: ClusterSettings) -> None:
    """Before starting anything: every port of a component that is not running must be free."""
    for port_name, port in settings.ports().items():
        name = "master" if port_name == "master-ui" else port_name
        if running_pid(settings, name) is None:
            require_free_port(port_name, settings.address(port_name), port)


def bring_up(settings: ClusterSettings, tools: Tools, environment: ProjectEnvironment, launched: list[str]) -> None:
    require_free_ports(settings)

    def needs(name: str) -> bool:
        if running_pid(settings, name):
            log.info("%s is already running", name)
            return False
        return True

    if needs("postgres"):
        init_postgres(settings, tools)
        start_postgres(settings, tools)
        launched.append("postgres")
    prepare_metastore_database(settings, tools, environment.project_dir)
    started: dict[str, subprocess.Popen[bytes]] = {}
    if needs("metastore"):
        started["metastore"] = start_metastore(settings, tools, environment.project_dir)
        launched.append("metastore")
    write_spark_confs(settings)
    # What spark-class starts, so what its launcher's silent exit can end: started once more then.
    spark_class_starts: dict[str, Callable[[], subprocess.Popen[bytes]]] = {
        "master": lambda: start_master(settings, tools),
        **{
            name: functools.partial(start_worker, settings, tools, index)
            for index, name in enumerate(settings.worker_names(), start=1)
        },
        "thriftserver": lambda: start_thriftserver(settings, tools, environment),
    }

    def start(*names: str) -> None:
        for name in names:
            if needs(name):
                started[name] = spark_class_starts[name]()
                launched.append(name)

    def wait(what: str, ready: Callable[[], bool], *names: str) -> None:
        wait_until(what, ready, settings, *names, started=started, restart=spark_class_starts)

    start("master")
    wait("answering on its port", lambda: port_answers(settings.host, settings.master_port), "master")
    start(*settings.worker_names())
    wait("answering on its port", lambda: port_answers(LOOPBACK, settings.metastore_port), "metastore")
    start("thriftserver")
    wait(
        "registered with the master",
        lambda: alive_workers(settings) >= settings.workers,
        "master",
        *settings.worker_names(),
    )
    wait("answering `select 1`", lambda: thrift_answers(settings), "thriftserver")


def stop_component(settings: ClusterSettings, tools: Tools | None, name: str) -> bool:
    try:
        return stop_postgres(settings, tools) if name == "postgres" else stop_process(settings, name)
    except (SetupError, OSError) as error:
        log.warning("could not stop %s: %s", name, error)
        return False


def cluster_down(environment: ProjectEnvironment) -> list[str]:
    """Stop every component that runs (Thrift Server first, PostgreSQL last); the names stopped."""
    settings = saved_settings(ClusterSettings.from_environment(environment))
    try:
        tools: Tools | None = find_tools(environment)
    except SetupError:
        tools = None  # still stop what runs
    return [name for name in reversed(settings.component_names()) if stop_component(settings, tools, name)]


def cluster_status(environment: ProjectEnvironment) -> tuple[ClusterSettings, list[ComponentStatus]]:
    settings = saved_settings(ClusterSettings.from_environment(environment))
    ports = settings.ports()
    return settings, [
        ComponentStatus(
            name=name,
            pid=running_pid(settings, name),
            port=ports[name],
            answering=port_answers(settings.address(name), ports[name]),
            log_file=settings.log_file(name),
        )
        for name in settings.component_names()
    ]


def describe(settings: ClusterSettings, statuses: list[ComponentStatus]) -> str:
    lines = [f"{'component':<13} {'state':<8} {'pid':>7}  {'port':>5} {'answers':<7}  log"]
    for status in statuses:
        state = "running" if status.running else "stopped"
        pid = str(status.pid) if status.pid else "-"
        lines.append(
            f"{status.name:<13} {state:<8} {pid:>7}  {status.port:>5} {'yes' if status.answering else 'no':<7}  {status.log_file}"
        )
    if any(status.running for status in statuses):
        lines += [
            f"master web UI: http://{LOOPBACK}:{settings.ui_port} ({alive_workers(settings)} workers alive)",
            f"warehouse: {settings.warehouse}",
            f"Spark clients: SPARK_CONF_DIR={settings.client_conf_dir} (spark.authenticate and the cluster's secret)",
            "targets: LATE_DATA_TARGET=thrift (dbt through the Thrift Server) or cluster (driver in-process), with:",
            (
                f"  LATE_DATA_CLUSTER_HOST={settings.host} LATE_DATA_THRIFT_PORT={settings.thrift_port}"
                f" LATE_DATA_METASTORE_PORT={settings.metastore_port} LATE_DATA_SPARK_MASTER_PORT={settings.master_port}"
                f" LATE_DATA_WAREHOUSE={settings.warehouse}"
            ),
        ]
    return "\n".join(lines)
