"""The shared catalog and the local cluster (`late-data cluster up|status|down`, the `cluster` and
`thrift` targets), and the error paths of bringing one up.

The tests marked `cluster` share one cluster (a module fixture): PostgreSQL, the Hive metastore
service, a Spark master, three workers and a Thrift Server in a temporary LATE_DATA_HOME on free
ports (`pytest -m cluster`, about five minutes); the others start no server."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from late_data import cluster
from late_data.cluster import writer_lock
from late_data.runtime.dbt_errors import describe_failure
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.environment import CHECKOUT, ProjectEnvironment, lock_home, prepare_environment
from late_data.runtime.settings import SetupError

PROJECT_DIR = CHECKOUT
BIN = Path(sys.executable).parent
# Everything prepare_environment exports or the cluster reads: saved and restored around each test.
SETTINGS = (
    "LATE_DATA_HOME",
    "LATE_DATA_TABLE_FORMAT",
    "LATE_DATA_TARGET",
    "LATE_DATA_WAREHOUSE",
    "DBT_PROFILES_DIR",
    "LATE_DATA_POSTGRES_PORT",
    "LATE_DATA_METASTORE_PORT",
    "LATE_DATA_SPARK_MASTER_PORT",
    "LATE_DATA_SPARK_UI_PORT",
    "LATE_DATA_THRIFT_PORT",
    "LATE_DATA_POSTGRES_BIN",
    "LATE_DATA_POSTGRES_JDBC_JAR",
    "LATE_DATA_CLUSTER_HOST",
    "LATE_DATA_THRIFT_AUTH",
    "LATE_DATA_THRIFT_AUTH_SITE",
    "LATE_DATA_METASTORE_PASSWORD",
    "LATE_DATA_SCHEMA",
    "LATE_DATA_WRITER_LOCK",
    "LATE_DATA_WORKER_MEMORY",
    "SPARK_CONF_DIR",
)


@pytest.fixture
def clean_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No LATE_DATA_* settings but a fresh LATE_DATA_HOME; whatever a test exports is undone (set
    first, so that monkeypatch restores a variable prepare_environment exports though it was unset)."""
    for name in SETTINGS:
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    monkeypatch.setenv("LATE_DATA_HOME", str(tmp_path))
    return tmp_path


def fake_tools(tmp_path: Path) -> cluster.Tools:
    return cluster.Tools(
        java="java",
        spark_home=tmp_path,
        postgres_bin=tmp_path,
        psql="psql",
        jdbc_jar=tmp_path / "postgresql.jar",
        iceberg_jar=tmp_path / "iceberg.jar",
        postgres_os_user=None,
    )


# --- error paths, no servers -------------------------------------------------------------------


def test_a_taken_port_names_the_process_holding_it() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        assert cluster.port_owner(port) is not None and f"pid {os.getpid()}" in cluster.port_owner(port)
        with pytest.raises(
            SetupError,
            match=rf"port {port} for the thriftserver is taken by pid {os.getpid()} .*"
            r"LATE_DATA_THRIFT_PORT",
        ):
            cluster.require_free_port("thriftserver", "127.0.0.1", port)
    cluster.require_free_port("thriftserver", "127.0.0.1", port)  # free once the holder is gone


def test_cluster_up_refuses_a_taken_port_before_starting_anything(
    clean_settings: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cluster.control, "find_tools", lambda environment: fake_tools(clean_settings))
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        monkeypatch.setenv("LATE_DATA_POSTGRES_PORT", str(holder.getsockname()[1]))
        with pytest.raises(SetupError, match=r"for the postgres is taken by pid .*LATE_DATA_POSTGRES_PORT"):
            cluster.cluster_up(prepare_environment())
    assert not list((clean_settings / "cluster" / "run").glob("*.pid"))
    assert not (clean_settings / "cluster" / "postgres").exists()


def test_a_process_that_exits_without_a_word_is_started_once_more_then_named_with_its_exit_code(
    clean_settings: Path,
) -> None:
    """spark-class exits 1 with an empty log when its launcher JVM fails: the thrift server did so
    once in CI on a starved machine. Judged by its handle, such a start is tried once more; a second
    silent exit, or any exit that wrote a line, fails naming its exit code and its log."""
    from late_data.cluster.processes import launch, wait_until

    settings = cluster.ClusterSettings.from_environment(prepare_environment())
    for directory in (settings.logs_dir, settings.run_dir):
        directory.mkdir(parents=True)
    starts: list[str] = []

    def start(script: str) -> subprocess.Popen[bytes]:
        starts.append(script)
        return launch(settings, "thriftserver", ["sh", "-c", script], {})

    scripts = iter(["exit 1", "touch ready; sleep 30"])
    started = {"thriftserver": start(next(scripts))}
    ready = settings.run_dir / "ready"
    wait_until(
        "ready",
        ready.exists,
        settings,
        "thriftserver",
        started=started,
        restart={"thriftserver": lambda: start(next(scripts))},
    )
    assert len(starts) == 2
    started["thriftserver"].kill()
    started["thriftserver"].wait()

    started = {"thriftserver": start("echo cannot bind; exit 3")}
    with pytest.raises(SetupError, match=r"(?s)thriftserver exited \(exit code 3\) before answering.*cannot bind"):
        wait_until(
            "answering",
            lambda: False,
            settings,
            "thriftserver",
            started=started,
            restart={"thriftserver": lambda: start("exit 0")},
        )
    assert len(starts) == 3


def test_missing_postgresql_binaries_say_what_to_install(clean_settings: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LATE_DATA_POSTGRES_BIN", str(clean_settings))
    with pytest.raises(SetupError, match="apt-get install postgresql libpostgresql-jdbc-java"):
        cluster.find_postgres_bin()
    with pytest.raises(SetupError, match="PostgreSQL server binaries"):
        cluster.cluster_up(prepare_environment())
    assert not (clean_settings / "cluster" / "run").exists()


def test_missing_jdbc_driver_says_what_to_install(clean_settings: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LATE_DATA_POSTGRES_JDBC_JAR", str(clean_settings / "nowhere.jar"))
    with pytest.raises(SetupError, match=r"JDBC driver .*nowhere.jar is missing .*libpostgresql-jdbc-java"):
        cluster.find_jdbc_jar()


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"LATE_DATA_TARGET": "yarn"}, "LATE_DATA_TARGET='yarn' is not a profile target"),
        ({"LATE_DATA_TARGET": "thrift", "LATE_DATA_TABLE_FORMAT": "delta"}, "supports Iceberg tables only"),
        ({"LATE_DATA_TARGET": "delta", "LATE_DATA_TABLE_FORMAT": "iceberg"}, "does not match LATE_DATA_TABLE_FORMAT"),
        (
            {"LATE_DATA_TARGET": "thrift", "LATE_DATA_THRIFT_PORT": "10o15"},
            "LATE_DATA_THRIFT_PORT='10o15' is not a TCP",
        ),
        ({"LATE_DATA_TARGET": "cluster", "LATE_DATA_METASTORE_PORT": "70000"}, "LATE_DATA_METASTORE_PORT='70000'"),
        ({"LATE_DATA_WAREHOUSE": "warehouse"}, "LATE_DATA_WAREHOUSE='warehouse' is relative"),
    ],
)
def test_bad_settings_are_refused_by_name(
    clean_settings: Path, monkeypatch: pytest.MonkeyPatch, settings: dict[str, str], message: str
) -> None:
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SetupError, match=message):
        prepare_environment()


def test_targets_and_locations_are_exported(clean_settings: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    environment = prepare_environment()
    assert (environment.profile_target, environment.shares_catalog) == ("iceberg", False)
    assert environment.warehouse == str(clean_settings / "warehouse")
    monkeypatch.setenv("LATE_DATA_TARGET", "thrift")
    monkeypatch.setenv("LATE_DATA_WAREHOUSE", "s3a://lake/warehouse")
    environment = prepare_environment()
    assert (environment.profile_target, environment.shares_catalog) == ("thrift", True)
    assert (os.environ["LATE_DATA_TARGET"], environment.warehouse) == ("thrift", "s3a://lake/warehouse")


def test_the_derby_lock_does_not_apply_to_shared_catalog_targets(tmp_path: Path) -> None:
    for target in ("cluster", "thrift"):
        environment = ProjectEnvironment(project_dir=tmp_path, home=tmp_path, table_format="iceberg", target=target)
        assert lock_home(environment) is None and lock_home(environment) is None
    embedded = ProjectEnvironment(project_dir=tmp_path, home=tmp_path, table_format="iceberg")
    held = lock_home(embedded)
    try:
        with pytest.raises(SetupError, match="in use by another process"):
            lock_home(embedded)
    finally:
        assert held is not None
        held.close()


def test_a_taken_derby_metastore_is_described_not_crashed_on(tmp_path: Path) -> None:
    """dbt's results for a run-operation have no `.node`; a second process that cannot boot Derby
    gets one such result without a message, and the cause only in the log."""
    outcome = SimpleNamespace(
        exception=None,
        result=SimpleNamespace(
            results=[
                SimpleNamespace(status="error", unique_id="macro.late_data.late_data_create_raw_schema", message=None),
            ]
        ),
    )
    log_text = "Runtime Error\n  Unable to instantiate org.apache.hadoop.hive.ql.metadata.SessionHiveMetaStoreClient"
    environment = ProjectEnvironment(project_dir=tmp_path, home=tmp_path, table_format="iceberg")
    message = describe_failure(outcome, log_text, environment)
    assert f"embedded Derby database {tmp_path}/metastore_db is in use by another process" in message
    assert "macro.late_data.late_data_create_raw_schema: failed without a message" in message
    shared = ProjectEnvironment(project_dir=tmp_path, home=tmp_path, table_format="iceberg", target="cluster")
    assert "late-data cluster status" in describe_failure(outcome, log_text, shared)
    ordinary = SimpleNamespace(
        exception=None,
        result=SimpleNamespace(
            results=[
                SimpleNamespace(status="error", node=SimpleNamespace(unique_id="model.late_data.m"), message="boom"),
                SimpleNamespace(status="success", node=SimpleNamespace(unique_id="model.late_data.n"), message=None),
            ]
        ),
    )
    assert describe_failure(ordinary) == "model.late_data.m: boom"
    skipped = "Compilation Error in model.late_data.m, caused by compilation error in referenced ephemeral model model.late_data.e"
    after_an_ephemeral = SimpleNamespace(
        exception=None,
        result=SimpleNamespace(
            results=[
                SimpleNamespace(status="skipped", node=SimpleNamespace(unique_id="model.late_data.m"), message=skipped)
            ]
        ),
    )
    errors = {"model.late_data.e": "var series_buckets=6 differs", "model.late_data.other": "not this one"}
    assert (
        describe_failure(after_an_ephemeral, node_errors=errors)
        == f"model.late_data.m: {skipped}; var series_buckets=6 differs"
    )


def test_the_thrift_server_gets_the_cluster_targets_table_settings(clean_settings: Path) -> None:
    environment = prepare_environment()
    settings = cluster.ClusterSettings.from_environment(environment)
    properties = cluster.thriftserver_properties(settings, environment)
    assert properties["spark.sql.catalog.spark_catalog"] == "org.apache.iceberg.spark.SparkSessionCatalog"
    assert properties["spark.sql.catalog.spark_catalog.type"] == "hive"
    assert properties["spark.sql.extensions"] == "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
    assert properties["spark.hadoop.iceberg.engine.hive.lock-enabled"] == "true"
    assert properties["spark.sql.session.timeZone"] == "UTC"
    assert properties["spark.sql.sources.partitionOverwriteMode"] == "dynamic"
    assert properties["spark.sql.warehouse.dir"] == str(clean_settings / "warehouse")
    assert properties["spark.hadoop.hive.metastore.uris"] == "thrift://127.0.0.1:19083"
    assert properties["spark.master"] == "spark://127.0.0.1:17077"
    assert properties["spark.jars"] == f"{clean_settings}/jars/iceberg-spark-runtime.jar"
    embedded = cluster.profile_spark_settings(environment, "iceberg")
    assert (
        embedded["spark.master"] == "local[*]" and embedded["spark.hadoop.iceberg.engine.hive.lock-enabled"] == "false"
    )
    assert "derby" in embedded["spark.hadoop.javax.jdo.option.ConnectionURL"]


def test_the_cluster_reads_its_secrets_from_private_files(clean_settings: Path) -> None:
    """The Spark secret and the PostgreSQL password are generated (not a default), 0600, kept across
    starts, and reach the Thrift Server and every Spark client through files, never a command line."""
    environment = prepare_environment()
    settings = cluster.ClusterSettings.from_environment(environment)
    properties = cluster.thriftserver_properties(settings, environment)
    spark_secret = (clean_settings / "cluster" / "secrets" / "spark-authenticate").read_text().strip()
    assert properties["spark.authenticate"] == "true" and properties["spark.authenticate.secret"] == spark_secret
    assert len(spark_secret) >= 40 and spark_secret == cluster.common.spark_secret(settings)
    password = cluster.postgres.metastore_password(settings)
    assert password not in ("", "late_data") and password == cluster.postgres.metastore_password(settings)
    cluster.spark.write_spark_confs(settings)
    cluster.thriftserver.write_thriftserver_conf(settings, environment)
    cluster.metastore.write_metastore_conf(settings)
    cluster.postgres.psql_env(settings)
    holders = {
        "secrets/spark-authenticate": spark_secret,
        "secrets/postgres-password": password,
        "secrets/pgpass": password,
        "conf/spark/spark-defaults.conf": spark_secret,
        "conf/client/spark-defaults.conf": spark_secret,
        "conf/thriftserver/thriftserver.conf": spark_secret,
        "conf/metastore/hive-site.xml": password,
    }
    for name, held in holders.items():
        path = clean_settings / "cluster" / name
        assert held in path.read_text(), name
        assert path.stat().st_mode & 0o777 == 0o600, name
    assert "password" not in settings.to_json().lower() and spark_secret not in settings.to_json()
    # A client of the `cluster` target finds the secret through SPARK_CONF_DIR once `cluster up` wrote it.
    os.environ["LATE_DATA_TARGET"] = "cluster"
    prepare_environment()
    assert os.environ["SPARK_CONF_DIR"] == str(clean_settings / "cluster" / "conf" / "client")
    embedded = cluster.profile_spark_settings(environment, "iceberg")
    assert (embedded["spark.driver.bindAddress"], embedded["spark.driver.host"]) == ("127.0.0.1", "127.0.0.1")


def test_a_data_directory_made_with_another_password_is_not_silently_reused(clean_settings: Path) -> None:
    settings = cluster.ClusterSettings.from_environment(prepare_environment())
    (settings.postgres_data).mkdir(parents=True)
    (settings.postgres_data / "PG_VERSION").write_text("15\n")
    with pytest.raises(SetupError, match=r"initialised with a password .* LATE_DATA_METASTORE_PASSWORD"):
        cluster.postgres.metastore_password(settings)


def test_a_cluster_without_its_secret_is_refused_before_spark_starts(
    clean_settings: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyspark import SparkContext

    monkeypatch.setenv("LATE_DATA_TARGET", "cluster")
    # As in a new process: the suite's embedded session, if one is up, must not stand in for the cluster's.
    monkeypatch.setattr(SparkContext, "_active_spark_context", None)
    project = DbtProject(prepare_environment())
    with pytest.raises(SetupError, match=r"spark.authenticate.secret: run `late-data cluster up`"):
        project.spark  # noqa: B018 - the property starts Spark


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"LATE_DATA_CLUSTER_HOST": "192.0.2.10"},
            "LATE_DATA_CLUSTER_HOST=192.0.2.10 opens the cluster .*LATE_DATA_THRIFT_AUTH",
        ),
        ({"LATE_DATA_THRIFT_AUTH": "LDAP"}, "LATE_DATA_THRIFT_AUTH=LDAP needs LATE_DATA_THRIFT_AUTH_SITE"),
        ({"LATE_DATA_THRIFT_AUTH": "basic"}, "LATE_DATA_THRIFT_AUTH='basic' is not one of"),
        (
            {"LATE_DATA_CLUSTER_HOST": "127.0.0.1 -c ssl=off"},
            "LATE_DATA_CLUSTER_HOST='127.0.0.1 -c ssl=off' is not a host",
        ),
        ({"LATE_DATA_WORKER_MEMORY": "1g -Dx=y"}, "LATE_DATA_WORKER_MEMORY='1g -Dx=y' is not an amount of memory"),
        ({"LATE_DATA_WORKERS": "9"}, r"LATE_DATA_WORKERS='9' is not a whole number \(1-8\)"),
    ],
)
def test_cluster_up_refuses_to_open_or_start_on_bad_settings(
    clean_settings: Path, monkeypatch: pytest.MonkeyPatch, settings: dict[str, str], message: str
) -> None:
    monkeypatch.setattr(cluster.control, "find_tools", lambda environment: fake_tools(clean_settings))
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SetupError, match=message):
        cluster.cluster_up(prepare_environment())
    assert not (clean_settings / "cluster").exists()


def test_an_authentication_mode_needs_its_settings(clean_settings: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = clean_settings / "auth-site.xml"
    monkeypatch.setenv("LATE_DATA_THRIFT_AUTH", "ldap")
    monkeypatch.setenv("LATE_DATA_THRIFT_AUTH_SITE", str(site))
    site.write_text("<configuration><property><name>x</name><value>y</value></property></configuration>")
    settings = cluster.ClusterSettings.from_environment(prepare_environment())
    with pytest.raises(SetupError, match=r"does not set hive.server2.authentication.ldap.url"):
        cluster.thriftserver.authentication_site(settings)
    url = (
        "<property><name>hive.server2.authentication.ldap.url</name><value>ldaps://ldap.example.org</value></property>"
    )
    site.write_text(f"<configuration>{url}</configuration>")
    assert cluster.thriftserver.authentication_site(settings) == {
        "hive.server2.authentication.ldap.url": "ldaps://ldap.example.org",
        "hive.server2.authentication": "LDAP",
    }
    # With authentication configured, the cluster may listen on another address.
    monkeypatch.setenv("LATE_DATA_CLUSTER_HOST", "192.0.2.10")
    opened = cluster.ClusterSettings.from_environment(prepare_environment())
    cluster.thriftserver.require_authentication(opened)
    assert opened.opened and cluster.spark.authentication_properties(opened)["spark.network.crypto.enabled"] == "true"
    assert (
        cluster.thriftserver.thriftserver_properties(opened, prepare_environment())["spark.driver.host"] == "192.0.2.10"
    )


def test_a_writer_without_the_clusters_database_is_refused(
    clean_settings: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer lock lives in the cluster's PostgreSQL: a writer on a shared catalog without it
    stops, saying how to go on, rather than writing unguarded."""
    monkeypatch.setenv("LATE_DATA_TARGET", "thrift")
    with pytest.raises(
        SetupError, match=r"writer lock is in the local cluster's PostgreSQL .* not running: run `late-data cluster up`"
    ):
        writer_lock.take_writer_lock(prepare_environment(), "analytics", "schedule")
    assert writer_lock.lock_key("analytics") == writer_lock.lock_key("analytics") != writer_lock.lock_key("replay")


# --- a cluster, up and down --------------------------------------------------------------------


def free_ports(count: int, consecutive: int = 1) -> list[int]:
    """`count` free ports, each the first of `consecutive` free ones (the UI port and the workers')."""
    chosen: list[int] = []
    while len(chosen) < count:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        span = range(base, base + consecutive)
        if base + consecutive < 65536 and not set(span) & set(chosen) and all(port_free(port) for port in span):
            chosen.append(base)
    return chosen


def port_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("0.0.0.0", port))
            return True
        except OSError:
            return False


# Three applications at once in the pipeline part (the Thrift Server, the scheduler's generator and
# a reader), one core each.
WORKERS = 3


@dataclass(frozen=True)
class RunningCluster:
    env: dict[str, str]
    home: Path
    up_seconds: float
    pids: dict[str, int]


@pytest.fixture(scope="module")
def running_cluster() -> Iterator[RunningCluster]:
    """One cluster for every test marked `cluster`, in a temporary LATE_DATA_HOME on free ports. The
    home is world-traversable: run as root, PostgreSQL runs as `postgres` and must reach its data."""
    home = Path(tempfile.mkdtemp(prefix="late_data_cluster_"))
    home.chmod(0o755)
    postgres, metastore, master, thrift = free_ports(4)
    (ui,) = free_ports(1, consecutive=1 + WORKERS)
    env = {key: value for key, value in os.environ.items() if key not in SETTINGS}
    env.update(
        {
            "LATE_DATA_HOME": str(home),
            "LATE_DATA_POSTGRES_PORT": str(postgres),
            "LATE_DATA_METASTORE_PORT": str(metastore),
            "LATE_DATA_SPARK_MASTER_PORT": str(master),
            "LATE_DATA_SPARK_UI_PORT": str(ui),
            "LATE_DATA_THRIFT_PORT": str(thrift),
            "DBT_PROFILES_DIR": str(PROJECT_DIR / "profiles"),
            "DBT_TARGET_PATH": str(home / "target"),
            "DBT_USE_COLORS": "false",
            "LATE_DATA_DRIVER_MEMORY": "1g",
            "LATE_DATA_WORKERS": str(WORKERS),
            # The JIT's quick tier for every JVM of these tests (the metastore, master, workers, the
            # Thrift Server, through the workers their executors, and the drivers on the cluster), as
            # the suite's other JVMs run: they live minutes here, where the optimizing tier costs more
            # CPU than it wins back (2026-12-02: the scheduled-runs test, its cluster's start
            # included, 422 -> 270 CPU s). Every `java` launched reads JDK_JAVA_OPTIONS.
            "JDK_JAVA_OPTIONS": "-XX:TieredStopAtLevel=1",
        }
    )
    try:
        started = time.monotonic()
        up = late_data(env, "cluster", "up")
        assert up.returncode == 0, up.stderr[-3000:]
        up_seconds = time.monotonic() - started
        status = late_data(env, "cluster", "status")
        assert status.returncode == 0, status.stdout + status.stderr
        assert status.stdout.count(" running ") == 4 + WORKERS and f"{WORKERS} workers alive" in status.stdout
        rows = [line.split() for line in status.stdout.splitlines()[1 : 5 + WORKERS]]
        yield RunningCluster(env, home, up_seconds, {row[0]: int(row[2]) for row in rows})
    finally:
        late_data(env, "cluster", "down")  # whatever happened
        shutil.rmtree(home, ignore_errors=True)


def late_data(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "late_data.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def thrift_cursor(env: dict[str, str]) -> Any:
    from pyhive import hive

    return hive.connect(host="127.0.0.1", port=int(env["LATE_DATA_THRIFT_PORT"]), username="late_data").cursor()


def dbt_process(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    """dbt on the thrift target, started; its output in stdout (stderr with it)."""
    return subprocess.Popen(
        [str(BIN / "dbt"), *args, "--project-dir", str(PROJECT_DIR), "--log-path", f"{env['LATE_DATA_HOME']}/logs"],
        env={**env, "LATE_DATA_TARGET": "thrift"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def late_data_process(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "late_data.cli", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    stdout, stderr = process.communicate(timeout=timeout)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr or "")


def is_loopback_address(address: str) -> bool:
    parsed = ipaddress.ip_address(address)
    mapped = getattr(parsed, "ipv4_mapped", None)
    return (mapped or parsed).is_loopback


def listening(pids: Iterable[int]) -> list[tuple[int, str, int, str]]:
    """(pid, address, port, command) of every listening socket of `pids` and the processes they started."""
    tree = cluster.process_tree(pids)
    return sorted(
        (pid, address, port, cluster.command_line(pid)[:60])
        for pid, sockets in cluster.listening_addresses(tree).items()
        for address, port in sockets
    )


@pytest.mark.cluster
def test_cluster_up_listens_on_loopback_only_and_keeps_its_secrets_off_command_lines(
    running_cluster: RunningCluster,
) -> None:
    env, pids = running_cluster.env, running_cluster.pids
    sockets = listening(pids.values())
    print("\n".join(f"{address}:{port}  pid {pid}  {command}" for pid, address, port, command in sockets))
    assert sockets, "no listening socket found for the cluster's processes"
    assert not [entry for entry in sockets if not is_loopback_address(entry[1])], sockets
    expected = {int(env[name]) for name in cluster.common.PORT_VARIABLES.values()}
    expected |= {int(env["LATE_DATA_SPARK_UI_PORT"]) + i for i in range(1, WORKERS + 1)}
    assert expected <= {port for _, _, port, _ in sockets}
    secrets = [
        (running_cluster.home / "cluster" / "secrets" / name).read_text().strip()
        for name in ("spark-authenticate", "postgres-password")
    ]
    for pid in cluster.process_tree(pids.values()):
        assert not [held for held in secrets if held in cluster.command_line(pid)], cluster.command_line(pid)
        # An executor gets the secret in its environment from its worker (_SPARK_AUTH_SECRET, Spark's
        # own hand-over); no service started by `cluster up` has it there.
        if "CoarseGrainedExecutorBackend" not in cluster.command_line(pid):
            with contextlib.suppress(ProcessLookupError, FileNotFoundError):  # a process that just ended
                environ = Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace")
                assert not [held for held in secrets if held in environ], cluster.command_line(pid)
    # The password that used to be the default is not PostgreSQL's.
    port = env["LATE_DATA_POSTGRES_PORT"]
    psql = subprocess.run(
        [cluster.postgres.find_psql(), "-X", "-h", "127.0.0.1", "-p", port, "-U", "late_data", "-c", "select 1"],
        env={**env, "PGPASSWORD": "late_data"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert psql.returncode != 0 and "password authentication failed" in psql.stderr


# A Spark application that does not know the cluster's secret, as any process on the machine might start.
UNAUTHENTICATED_APP = """
import sys
from pyspark.sql import SparkSession
SparkSession.builder.master(sys.argv[1]).config("spark.driver.bindAddress", "127.0.0.1").config(
    "spark.driver.host", "127.0.0.1").config("spark.ui.enabled", "false").getOrCreate()
"""


@pytest.mark.cluster
def test_the_master_turns_away_an_application_without_the_secret(running_cluster: RunningCluster) -> None:
    env = {key: value for key, value in running_cluster.env.items() if key != "SPARK_CONF_DIR"}
    master = f"spark://127.0.0.1:{env['LATE_DATA_SPARK_MASTER_PORT']}"
    app = subprocess.Popen(
        [sys.executable, "-c", UNAUTHENTICATED_APP, master], env=env, stderr=subprocess.PIPE, text=True
    )
    refused, lines = False, []
    try:
        for line in app.stderr or []:
            lines.append(line)
            if "Expected SaslMessage" in line:
                refused = True
                break
    finally:
        app.kill()
        app.wait()
    assert refused, "".join(lines[-30:])


# Another process on the shared catalog: the `cluster` target's Spark session (driver there,
# executors on the workers), started the way the scheduler starts it, through dbt. One for the
# module (a Spark application costs a JVM and a dbt parse): it runs the commands the tests send,
# one JSON line each, and answers each with one JSON line.
CLIENT_PROCESS = """
import contextlib, io, json, os, sys, time
from late_data import cli
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.environment import prepare_environment
spark = DbtProject(prepare_environment()).spark

def watch(stop):
    # Reads the published windows and the audit until told to stop; the audit is created when the
    # first build starts, the result tables as it goes on. Every ten seconds: each poll is a Spark
    # job on the same two cores the scheduled runs need.
    seen = set()
    while not os.path.exists(stop):
        if all(spark.catalog.tableExists(f"analytics.{t}") for t in ("late_data_run_audit", "water_level_window_means")):
            seen.add(str(spark.sql("select max(run_time) from analytics.late_data_run_audit where outcome = 'success'").first()[0]))
            spark.sql("select count(*), sum(reading_count) from analytics.water_level_window_means").collect()
        time.sleep(10)
    return sorted(seen)

def late_data(args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(args)
    return {"exit": code, "stdout": out.getvalue()}

def run(command):
    if "sql" in command:
        return [[list(row) for row in spark.sql(sql).collect()] for sql in command["sql"]]
    return watch(command["watch"]) if "watch" in command else late_data(command["late_data"])

print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    try:
        answer = {"ok": run(json.loads(line))}
    except Exception as error:
        answer = {"error": repr(error)}
    print(json.dumps(answer, default=str), flush=True)
"""


class ClusterClient:
    """CLIENT_PROCESS, started; send() a command, receive() its answer."""

    def __init__(self, env: dict[str, str], log_path: Path) -> None:
        # Its log to a file: a pipe nobody reads until the end would fill and stall its JVM.
        self.log_path = log_path
        with open(log_path, "w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-c", CLIENT_PROCESS],
                env={**env, "LATE_DATA_TARGET": "cluster"},
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
            )
        self.started = False

    def send(self, command: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        if not self.started:
            self.receive()  # ready: its Spark application is up
            self.started = True
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()

    def receive(self) -> Any:
        """The next answer (lines that are not one, e.g. from a library, skipped); raises on an error."""
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with contextlib.suppress(ValueError):
                answer = json.loads(line)
                if isinstance(answer, dict) and answer.keys() & {"ok", "error", "ready"}:
                    assert "error" not in answer, answer["error"]
                    return answer.get("ok")
        lines = self.log_path.read_text().splitlines()
        causes = [line for line in lines if not line.lstrip().startswith("at ")]
        raise AssertionError("the client ended: " + "\n".join(causes)[-3000:])

    def ask(self, command: dict[str, Any]) -> Any:
        self.send(command)
        return self.receive()

    def close(self) -> None:
        if self.process.stdin is not None and not self.process.stdin.closed:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()


@pytest.fixture(scope="module")
def cluster_client(running_cluster: RunningCluster) -> Iterator[ClusterClient]:
    client = ClusterClient(running_cluster.env, running_cluster.home / "client.log")
    yield client
    client.close()


@pytest.mark.cluster
def test_one_catalog_for_the_thrift_server_spark_and_dbt(
    running_cluster: RunningCluster, cluster_client: ClusterClient
) -> None:
    env, burst = running_cluster.env, 3
    # Written through the Thrift Server...
    cursor = thrift_cursor(env)
    cursor.execute("create schema if not exists shared")
    # Two writers committing at once retry on conflict (Iceberg's optimistic commits); on a loaded
    # 2-core machine the default 4 retries ran out once, so this table allows more.
    cursor.execute(
        "create table shared.events (id bigint, source string) using iceberg"
        " tblproperties ('commit.retry.num-retries' = '20', 'commit.retry.min-wait-ms' = '200')"
    )
    cursor.execute("insert into shared.events values (1, 'thrift')")
    # dbt's thrift method, meanwhile: the connection, and a query with the server's settings (UTC).
    show = dbt_process(
        env, "show", "--inline", "select count(*) as events, current_timezone() as tz from shared.events where id = 1"
    )
    # ... read by another Spark process, which writes too; then both commit to the table at once.
    seen, _ = cluster_client.ask(
        {
            "sql": [
                "select source, count(*) from shared.events group by source",
                "insert into shared.events values (2, 'cluster')",
            ]
        }
    )
    assert seen == [["thrift", 1]]
    cluster_client.send(
        {"sql": [f"insert into shared.events values ({100 + i}, 'cluster-burst')" for i in range(burst)]}
    )
    for i in range(burst):
        cursor.execute(f"insert into shared.events values ({200 + i}, 'thrift-burst')")
    cluster_client.receive()
    cursor.execute("select source, count(*) from shared.events group by source order by source")
    assert cursor.fetchall() == [("cluster", 1), ("cluster-burst", burst), ("thrift", 1), ("thrift-burst", burst)]
    # Every commit kept: Hive locks in PostgreSQL serialise them (no commit lost, none failed).
    cursor.execute("select count(*) from shared.events.snapshots")
    assert cursor.fetchall() == [(2 + 2 * burst,)]

    shown, _ = show.communicate(timeout=300)
    assert show.returncode == 0 and "|      1 | UTC |" in shown, shown[-3000:]


SCHEDULE = [
    "schedule",
    "--clock",
    "simulated",
    "--origin",
    "2026-05-01 00:00:00",
    "--end",
    "2026-05-01 00:20:00",
    "--interval",
    "600",
    "--locations",
    "3",
    "--pages",
    "1",
    "--reconcile-every",
    "0",
]


class Stopwatch:
    """Prints how long each part of a test took (pytest -s shows it)."""

    def __init__(self) -> None:
        self.last = time.monotonic()

    def lap(self, what: str) -> None:
        now = time.monotonic()
        print(f"{what}: {now - self.last:.1f} s")
        self.last = now


def wait_for_line(path: Path, text: str, process: subprocess.Popen[str], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while text not in (path.read_text() if path.exists() else ""):
        assert process.poll() is None, path.read_text()[-3000:]
        assert time.monotonic() < deadline, f"no {text!r} in {path} after {timeout} s"
        time.sleep(0.5)


@pytest.mark.cluster
def test_scheduled_runs_through_thrift_one_writer_at_a_time_while_another_process_reads(
    running_cluster: RunningCluster, cluster_client: ClusterClient
) -> None:
    """`late-data schedule` with dbt on the thrift target (its generator on a `cluster` session), a
    second scheduler and a backfill refused meanwhile by the writer lock, another process reading
    the results, then the oracle (`late-data check`) from that other process: 0 mismatched."""
    env, home = {**running_cluster.env, "LATE_DATA_TARGET": "thrift"}, running_cluster.home
    clock = Stopwatch()
    setup = late_data(env, "setup")
    assert setup.returncode == 0 and "raw tables raw.water_level_readings" in setup.stdout, setup.stderr[-3000:]
    stop = home / "stop_reading"
    log_path = home / "schedule.log"
    with open(log_path, "w") as log:
        # Unbuffered: the test watches its output as it comes.
        scheduler = subprocess.Popen(
            [sys.executable, "-m", "late_data.cli", *SCHEDULE],
            env={**env, "PYTHONUNBUFFERED": "1"},
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )
    cluster_client.send({"watch": str(stop)})
    try:
        wait_for_line(log_path, "holding the writer lock of schema analytics", scheduler)
        clock.lap("setup, scheduler holds the lock")
        refusals = [
            late_data_process(env, *SCHEDULE),
            late_data_process(env, "backfill", "--from", "2026-05-01 00:00:00", "--to", "2026-05-01 00:10:00"),
        ]
        holder = f"is being written by late-data schedule (pid {scheduler.pid})"
        for refused in map(finish, refusals):
            assert refused.returncode == 2 and holder in refused.stderr, refused.stderr[-3000:]
            assert "Traceback" not in refused.stderr
        clock.lap("second scheduler and backfill refused")
        # Once a run is done, the scheduler's generator has its Spark application up: it and the
        # client's listen on loopback too (driver, block manager), and their command lines carry
        # no secret (spark-submit reads it from SPARK_CONF_DIR).
        wait_for_line(log_path, "run_time=", scheduler, timeout=600)
        clients = listening([scheduler.pid, cluster_client.process.pid])
        assert len({pid for pid, _, _, command in clients if "java" in command}) >= 2, clients
        assert not [entry for entry in clients if not is_loopback_address(entry[1])], clients
        spark_secret = (home / "cluster" / "secrets" / "spark-authenticate").read_text().strip()
        tree = cluster.process_tree([scheduler.pid, cluster_client.process.pid])
        assert not [pid for pid in tree if spark_secret in cluster.command_line(pid)]
        scheduler.wait(timeout=600)
        clock.lap("two scheduled runs")
    finally:
        stop.touch()
        if scheduler.poll() is None:
            scheduler.kill()
    seen = cluster_client.receive()
    schedule_output = log_path.read_text()
    assert scheduler.returncode == 0, schedule_output[-5000:]
    run_lines = [line for line in schedule_output.splitlines() if line.startswith("run_time=")]
    assert len(run_lines) >= 2, schedule_output[-5000:]
    # The client saw the runs' audit as they landed, at least one of them while the scheduler ran.
    assert seen, seen
    # The oracle, while the data tests run through the Thrift Server. Not dbt's unit tests: its
    # unit-test materialization runs a row-less statement with run_query, which PyHive's fetch
    # cannot take through a Thrift Server; they run embedded (test_unit_tests.py).
    last_run = run_lines[-1].split()[0].removeprefix("run_time=") + " " + run_lines[-1].split()[1]
    cluster_client.send({"late_data": ["check", "--run-time", last_run]})
    # A pipeline's data tests (the package's generic tests and its keys' tests), four threads: each
    # test is a small query, most of its time the round trips of a Thrift session.
    tests = finish(
        dbt_process(
            env, "test", "--select", "water_level_window_means+", "--exclude", "test_type:unit", "--threads", "4"
        )
    )
    clock.lap("dbt test")
    assert tests.returncode == 0 and "ERROR=0" in tests.stdout, tests.stdout[-3000:]
    checked = cluster_client.receive()
    clock.lap("late-data check")
    assert checked["exit"] == 0 and " 0 mismatched" in checked["stdout"], checked
    assert int(checked["stdout"].strip().splitlines()[-1].split("check: ")[1].split()[0]) > 50
    # A rollback through the Thrift Server: every late-data table and the audit back to the first
    # run's state, listed as a named version, and the oracle agrees (0 mismatched) right after.
    first_run = " ".join(run_lines[0].split()[:2]).removeprefix("run_time=")
    rolled = finish(late_data_process(env, "rollback", "--to", first_run))
    clock.lap("late-data rollback")
    assert rolled.returncode == 0 and f"back to the state after the run at {first_run}" in rolled.stdout, rolled.stderr[
        -3000:
    ]
    listed = late_data(env, "versions")
    assert listed.returncode == 0 and "rollback_" in listed.stdout and " version as of 'rollback_" in listed.stdout
    cluster_client.send({"late_data": ["check"]})
    checked = cluster_client.receive()
    clock.lap("late-data check after the rollback")
    assert checked["exit"] == 0 and " 0 mismatched" in checked["stdout"], checked
    # Table maintenance last: it expires snapshots whose files the oracle may still have been reading.
    maintain = finish(dbt_process(env, "run-operation", "late_data.maintain_tables"))
    clock.lap("table maintenance")
    assert maintain.returncode == 0, maintain.stdout[-3000:]


@pytest.mark.cluster
def test_init_starts_from_a_table_in_the_shared_catalog_and_its_cron_line_runs_there(
    running_cluster: RunningCluster, tmp_path: Path
) -> None:
    """A newcomer whose readings already sit in the shared catalog: init on that table (its columns
    read through the cluster target), the printed cron line run twice as cron runs it, a late row
    between them, then check."""
    env = {
        key: value for key, value in running_cluster.env.items() if key not in ("DBT_PROFILES_DIR", "DBT_TARGET_PATH")
    }
    env.update({"LATE_DATA_SCHEMA": "init_cluster", "PATH": f"{BIN}:{env['PATH']}"})
    cursor = thrift_cursor(env)
    cursor.execute("create schema if not exists landing")
    cursor.execute(
        "create table landing.meter_readings (event_id string, meter_id string, event_time timestamp,"
        " kwh double, ingested_at timestamp) using iceberg"
    )
    cursor.execute(
        "insert into landing.meter_readings values"
        " ('a1', 'm1', timestamp'2026-06-01 00:00:10', 1.0, timestamp'2026-06-01 00:00:20'),"
        " ('a2', 'm1', timestamp'2026-06-01 00:01:10', 2.0, timestamp'2026-06-01 00:01:20'),"
        " ('b1', 'm2', timestamp'2026-06-01 00:00:30', 3.0, timestamp'2026-06-01 00:02:00')"
    )
    folder = tmp_path / "meters"
    folder.mkdir()
    init = subprocess.run(
        [
            *(str(BIN / "late-data"), "init", "--target", "cluster", "--source", "landing.meter_readings"),
            *("--series-key", "meter_id", "--measure", "reading_count=count", "--measure", "kwh_sum=sum:kwh"),
            *("--window-seconds", "60"),
        ],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert init.returncode == 0, init.stdout[-3000:] + init.stderr[-3000:]
    assert (
        "init: landing.meter_readings read from the cluster catalog: event_id string, meter_id string,"
        " event_time timestamp, kwh double, ingested_at timestamp" in init.stdout
    ), init.stdout
    every_minute = next(line.strip().split(" ", 5)[5] for line in init.stdout.splitlines() if " * * * * " in line)
    assert "LATE_DATA_TARGET=cluster SPARK_CONF_DIR=" in every_minute, every_minute
    for run_time in ("2026-06-01 00:05:10", "2026-06-01 00:06:10"):
        cron = subprocess.run(
            ["sh", "-c", every_minute],
            cwd=folder,
            env={**env, "LATE_DATA_RUN_TIME": run_time},
            timeout=900,
            check=False,
        )
        assert cron.returncode == 0, (running_cluster.home / "cron.log").read_text()[-3000:]
        if run_time.endswith("05:10"):  # late, in time: it changes m1's first window at the second run
            cursor.execute(
                "insert into landing.meter_readings values"
                " ('a3', 'm1', timestamp'2026-06-01 00:00:40', 5.0, timestamp'2026-06-01 00:05:30')"
            )
    cron_log = (running_cluster.home / "cron.log").read_text()
    assert cron_log.count("ERROR=0 SKIP=0") == 2 and cron_log.count("OK snapshotted") == 2, cron_log[-3000:]
    checked = late_data({**env, "LATE_DATA_TARGET": "cluster"}, "--project-dir", str(folder), "check")
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]
    assert checked.stdout.splitlines()[-1] == "check: 3 windows, 0 too-late entries checked, 0 mismatched", (
        checked.stdout
    )
    cursor.execute("select kwh_sum from init_cluster.meter_readings where meter_id = 'm1' order by window_start")
    assert cursor.fetchall() == [(6.0,), (2.0,)]


@pytest.mark.cluster
def test_cluster_down_stops_everything_it_started(
    running_cluster: RunningCluster, cluster_client: ClusterClient
) -> None:
    cluster_client.close()  # an application of its own, not the cluster's to stop
    env, pids = running_cluster.env, list(running_cluster.pids.values())
    down = late_data(env, "cluster", "down")
    assert down.returncode == 0, down.stderr[-3000:]
    assert "stopped thriftserver" in down.stdout and down.stdout.rstrip().endswith("postgres")
    assert not [pid for pid in pids if cluster.pid_alive(pid)]
    assert not [pid for pid in running_pids() if env["LATE_DATA_HOME"] in cluster.command_line(pid)]
    assert late_data(env, "cluster", "status").returncode == 1
    assert late_data(env, "cluster", "down").stdout.strip() == "cluster: nothing was running"
    print(f"cluster up took {running_cluster.up_seconds:.1f} s")


def running_pids() -> list[int]:
    return [int(entry) for entry in os.listdir("/proc") if entry.isdigit() and cluster.pid_alive(int(entry))]
