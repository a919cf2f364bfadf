"""`late-data cluster up|down|status`: a shared catalog and a Spark cluster on this machine.

PostgreSQL (a project-local instance under LATE_DATA_HOME/cluster) holds the Hive metastore; a Hive
metastore service (Spark's own Hive 2.3.9 jars) serves it over thrift to every Spark process; a
Spark standalone master with workers runs the executors; a Spark Thrift Server answers SQL for
dbt-spark's thrift method. Ports, memory and worker count come from LATE_DATA_* settings
(docs/cluster.md); every process logs to LATE_DATA_HOME/cluster/logs and has a pid file in
LATE_DATA_HOME/cluster/run.
"""

from __future__ import annotations

import contextlib
import glob
import json
import logging
import os
import pwd
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from late_data.environment import ProjectEnvironment, SetupError, port_setting, validate_location

log = logging.getLogger(__name__)

INSTALL_POSTGRES = "apt-get install postgresql libpostgresql-jdbc-java"
METASTORE_DATABASE = "metastore"
METASTORE_USER = "late_data"
METASTORE_CLASS = "org.apache.hadoop.hive.metastore.HiveMetaStore"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
THRIFT_SERVER_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
TXN_TABLES_SQL = "cluster/hive-txn-tables.postgres.sql"


@dataclass(frozen=True)
class ClusterSettings:
    home: Path
    warehouse: str
    host: str
    postgres_port: int
    metastore_port: int
    master_port: int
    ui_port: int
    thrift_port: int
    workers: int
    worker_memory: str
    server_memory: str
    metastore_password: str
    timeout_seconds: float

    @classmethod
    def from_environment(cls, environment: ProjectEnvironment) -> ClusterSettings:
        workers = os.environ.get("LATE_DATA_WORKERS", "2")
        timeout = os.environ.get("LATE_DATA_CLUSTER_TIMEOUT", "180")
        if not workers.isdigit() or not 1 <= int(workers) <= 8:
            raise SetupError(f"LATE_DATA_WORKERS={workers!r} is not a worker count (1-8)")
        if not timeout.isdigit() or int(timeout) == 0:
            raise SetupError(f"LATE_DATA_CLUSTER_TIMEOUT={timeout!r} is not a number of seconds")
        return cls(
            home=environment.home,
            warehouse=validate_location("LATE_DATA_WAREHOUSE", environment.warehouse) or "",
            host=os.environ.get("LATE_DATA_CLUSTER_HOST", "127.0.0.1"),
            postgres_port=port_setting("LATE_DATA_POSTGRES_PORT"),
            metastore_port=port_setting("LATE_DATA_METASTORE_PORT"),
            master_port=port_setting("LATE_DATA_SPARK_MASTER_PORT"),
            ui_port=port_setting("LATE_DATA_SPARK_UI_PORT"),
            thrift_port=port_setting("LATE_DATA_THRIFT_PORT"),
            workers=int(workers),
            worker_memory=os.environ.get("LATE_DATA_WORKER_MEMORY", "1g"),
            server_memory=os.environ.get("LATE_DATA_SERVER_MEMORY", "1g"),
            metastore_password=os.environ.get("LATE_DATA_METASTORE_PASSWORD", "late_data"),
            timeout_seconds=float(timeout),
        )

    @property
    def cluster_dir(self) -> Path:
        return self.home / "cluster"

    @property
    def logs_dir(self) -> Path:
        return self.cluster_dir / "logs"

    @property
    def run_dir(self) -> Path:
        return self.cluster_dir / "run"

    @property
    def conf_dir(self) -> Path:
        return self.cluster_dir / "conf"

    @property
    def postgres_data(self) -> Path:
        return self.cluster_dir / "postgres"

    @property
    def state_file(self) -> Path:
        return self.cluster_dir / "cluster.json"

    @property
    def master_url(self) -> str:
        return f"spark://{self.host}:{self.master_port}"

    @property
    def metastore_uri(self) -> str:
        return f"thrift://{self.host}:{self.metastore_port}"

    @property
    def jdbc_url(self) -> str:
        return f"jdbc:postgresql://{self.host}:{self.postgres_port}/{METASTORE_DATABASE}"

    def ports(self) -> dict[str, int]:
        """Component -> the port it listens on (workers: their web UI)."""
        ports = {
            "postgres": self.postgres_port,
            "metastore": self.metastore_port,
            "master": self.master_port,
            "master-ui": self.ui_port,
        }
        ports.update({f"worker-{i}": self.ui_port + i for i in range(1, self.workers + 1)})
        ports["thriftserver"] = self.thrift_port
        return ports

    def component_names(self) -> list[str]:
        return ["postgres", "metastore", "master", *self.worker_names(), "thriftserver"]

    def worker_names(self) -> list[str]:
        return [f"worker-{i}" for i in range(1, self.workers + 1)]

    def log_file(self, name: str) -> Path:
        return self.logs_dir / f"{name}.log"

    def pid_file(self, name: str) -> Path:
        return self.run_dir / f"{name}.pid"

    def to_json(self) -> str:
        return json.dumps(
            {key: str(value) if isinstance(value, Path) else value for key, value in asdict(self).items()}
        )

    @classmethod
    def from_json(cls, text: str) -> ClusterSettings:
        values = json.loads(text)
        values["home"] = Path(values["home"])
        return cls(**values)


@dataclass(frozen=True)
class Tools:
    java: str
    spark_home: Path
    postgres_bin: Path
    psql: str
    jdbc_jar: Path
    iceberg_jar: Path
    # PostgreSQL refuses to run as root: when this process is root, the server runs as this user.
    postgres_os_user: str | None


@dataclass(frozen=True)
class ComponentStatus:
    name: str
    pid: int | None
    port: int
    answering: bool
    log_file: Path

    @property
    def running(self) -> bool:
        return self.pid is not None


# --- what the machine must have ---------------------------------------------------------------


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


def find_java() -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return str(Path(java_home) / "bin" / "java")
    java = shutil.which("java")
    if java is None:
        raise SetupError(
            "Java was not found: the cluster needs a JDK 17 (or 11). Install one "
            "(Debian: apt-get install openjdk-17-jre-headless) or set JAVA_HOME."
        )
    return java


def find_spark_home() -> Path:
    import pyspark

    spark_home = Path(pyspark.__file__).parent
    if not (spark_home / "bin" / "spark-class").exists():
        raise SetupError(f"pyspark in {spark_home} has no bin/spark-class: run `make setup`")
    return spark_home


def find_postgres_bin() -> Path:
    """LATE_DATA_POSTGRES_BIN, else Debian's /usr/lib/postgresql/<version>/bin (newest), else PATH."""
    configured = os.environ.get("LATE_DATA_POSTGRES_BIN")
    candidates = [Path(configured)] if configured else []
    if not configured:
        versions = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda path: _version_key(Path(path).parent.name))
        candidates += [Path(path) for path in reversed(versions)]
        on_path = shutil.which("pg_ctl")
        if on_path:
            candidates.append(Path(on_path).parent)
    for candidate in candidates:
        if all((candidate / tool).exists() for tool in ("initdb", "pg_ctl", "postgres")):
            return candidate
    where = f"LATE_DATA_POSTGRES_BIN={configured}" if configured else "/usr/lib/postgresql/*/bin or PATH"
    raise SetupError(
        f"the PostgreSQL server binaries (initdb, pg_ctl, postgres) are not in {where}: "
        f"install them ({INSTALL_POSTGRES}) or set LATE_DATA_POSTGRES_BIN to their directory"
    )


def _version_key(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())


def find_psql() -> str:
    for candidate in (find_postgres_bin() / "psql", shutil.which("psql")):
        if candidate and Path(candidate).exists():
            return str(candidate)
    raise SetupError(f"the PostgreSQL client psql was not found: install it ({INSTALL_POSTGRES})")


def find_jdbc_jar() -> Path:
    jar = Path(os.environ.get("LATE_DATA_POSTGRES_JDBC_JAR", "/usr/share/java/postgresql.jar"))
    if not jar.is_file():
        raise SetupError(
            f"the PostgreSQL JDBC driver {jar} is missing (the metastore needs it): install it "
            f"({INSTALL_POSTGRES}) or set LATE_DATA_POSTGRES_JDBC_JAR to the jar"
        )
    return jar


def postgres_os_user() -> str | None:
    if os.geteuid() != 0:
        return None
    name = os.environ.get("LATE_DATA_POSTGRES_OS_USER", "postgres")
    try:
        pwd.getpwnam(name)
    except KeyError:
        raise SetupError(
            f"running as root, but PostgreSQL refuses root and there is no user {name!r} to run it as: "
            f"install PostgreSQL ({INSTALL_POSTGRES}, which creates `postgres`), set "
            "LATE_DATA_POSTGRES_OS_USER, or run as a normal user"
        ) from None
    if shutil.which("runuser") is None:
        raise SetupError("running as root needs `runuser` (util-linux) to start PostgreSQL as another user")
    return name


# --- processes and ports ----------------------------------------------------------------------


def pid_alive(pid: int) -> bool:
    """True while the process exists and is not a zombie (reaped here when it is our child)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError, ProcessLookupError):
        return False
    if state == "Z":
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        return False
    return True


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except (FileNotFoundError, ProcessLookupError):
        return ""


def port_owner(port: int) -> str | None:
    """Who listens on a TCP port: 'pid N (command)', 'a process of another user' or None."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except FileNotFoundError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(fields[9])
    if not inodes:
        return None
    targets = {f"socket:[{inode}]" for inode in inodes}
    for fd_dir in glob.glob("/proc/[0-9]*/fd"):
        try:
            if any(os.readlink(os.path.join(fd_dir, fd)) in targets for fd in os.listdir(fd_dir)):
                pid = int(fd_dir.split("/")[2])
                return f"pid {pid} ({command_line(pid)[:120]})"
        except (FileNotFoundError, PermissionError, ProcessLookupError):
            continue
    return "a process of another user"


def port_answers(host: str, port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def require_free_port(name: str, host: str, port: int) -> None:
    """Refuse to start `name` when its port is taken, naming the process that holds it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
            return
        except OSError:
            pass
    owner = port_owner(port) or "another process"
    raise SetupError(
        f"port {port} for the {name} is taken by {owner}: stop it, or choose another port ({port_variable(name)}=...)"
    )


def port_variable(name: str) -> str:
    if name.startswith("worker") or name == "master-ui":
        return "LATE_DATA_SPARK_UI_PORT"
    return {
        "postgres": "LATE_DATA_POSTGRES_PORT",
        "metastore": "LATE_DATA_METASTORE_PORT",
        "master": "LATE_DATA_SPARK_MASTER_PORT",
        "thriftserver": "LATE_DATA_THRIFT_PORT",
    }[name]


def running_pid(settings: ClusterSettings, name: str) -> int | None:
    """The pid of a component this cluster started, if it still runs."""
    if name == "postgres":
        pid_file = settings.postgres_data / "postmaster.pid"
        marker = "postgres"
    else:
        pid_file = settings.pid_file(name)
        marker = COMPONENT_MARKERS[name]
    try:
        pid = int(pid_file.read_text().split()[0])
    except (FileNotFoundError, ValueError, IndexError):
        return None
    return pid if pid_alive(pid) and marker in command_line(pid) else None


COMPONENT_MARKERS = {
    "metastore": METASTORE_CLASS,
    "master": MASTER_CLASS,
    "thriftserver": THRIFT_SERVER_CLASS,
    **{f"worker-{i}": WORKER_CLASS for i in range(1, 9)},
}


def launch(
    settings: ClusterSettings, name: str, args: list[str], env: dict[str, str], cwd: Path | None = None
) -> subprocess.Popen[bytes]:
    """Start a long-running process in its own session (in `cwd`, default the run directory),
    output to its log, pid to its pid file."""
    with open(settings.log_file(name), "ab") as out:
        process = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=cwd or settings.run_dir,
            env={**os.environ, **env},
            start_new_session=True,
        )
    settings.pid_file(name).write_text(f"{process.pid}\n")
    log.info("started %s (pid %d), log %s", name, process.pid, settings.log_file(name))
    return process


def wait_until(what: str, ready: Callable[[], bool], settings: ClusterSettings, *names: str) -> None:
    """Poll `ready` until it holds; fail with the tail of the log when one of the processes `names`
    dies or time is up."""
    started = time.monotonic()
    while not ready():
        for name in names:
            if running_pid(settings, name) is None:
                raise SetupError(f"{name} exited before {what}:\n{log_tail(settings.log_file(name))}")
        if time.monotonic() - started > settings.timeout_seconds:
            raise SetupError(
                f"{', '.join(names)}: not {what} after {settings.timeout_seconds:.0f} s (LATE_DATA_CLUSTER_TIMEOUT):\n"
                + "\n".join(log_tail(settings.log_file(name)) for name in names)
            )
        time.sleep(0.25)
    log.info("%s: %s after %.1f s", ", ".join(names), what, time.monotonic() - started)


def log_tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return f"(no log at {path})"
    return "\n".join([f"--- last lines of {path}:", *text[-lines:]])


def stop_process(settings: ClusterSettings, name: str, grace_seconds: float = 30.0) -> bool:
    """SIGTERM to the component's process group (its executors too), SIGKILL after the grace time."""
    pid = running_pid(settings, name)
    settings.pid_file(name).unlink(missing_ok=True)
    if pid is None:
        return False
    os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_seconds
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if pid_alive(pid):
        log.warning("%s (pid %d) ignored SIGTERM for %.0f s: killing it", name, pid, grace_seconds)
        os.killpg(pid, signal.SIGKILL)
    log.info("stopped %s (pid %d)", name, pid)
    return True


# --- PostgreSQL --------------------------------------------------------------------------------


def as_postgres_user(tools: Tools, args: list[str]) -> list[str]:
    return ["runuser", "-u", tools.postgres_os_user, "--", *args] if tools.postgres_os_user else args


def give_to_postgres_user(tools: Tools, path: Path) -> None:
    if tools.postgres_os_user:
        account = pwd.getpwnam(tools.postgres_os_user)
        os.chown(path, account.pw_uid, account.pw_gid)


def run(args: list[str], what: str, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(args, check=False, capture_output=True, text=True, env={**os.environ, **(env or {})})
    if result.returncode != 0:
        raise SetupError(
            f"{what} failed ({' '.join(args[:4])} ...):\n{(result.stdout + result.stderr).strip()[-2000:]}"
        )
    return result.stdout


def init_postgres(settings: ClusterSettings, tools: Tools) -> None:
    """A new PostgreSQL data directory (first start only), owned by the user the server runs as."""
    data = settings.postgres_data
    if (data / "PG_VERSION").exists():
        return
    data.mkdir(mode=0o700, parents=True, exist_ok=True)
    give_to_postgres_user(tools, data)
    reachable = subprocess.run(as_postgres_user(tools, ["test", "-w", str(data)]), check=False).returncode == 0
    if tools.postgres_os_user and not reachable:
        closed = [str(parent) for parent in data.parents if not os.stat(parent).st_mode & 0o001]
        raise SetupError(
            f"PostgreSQL runs as {tools.postgres_os_user!r} (it refuses root), who cannot reach {data}: "
            f"let others traverse {', '.join(closed) or 'its parent directories'} (chmod o+x) or set "
            "LATE_DATA_HOME to a directory it can reach"
        )
    password_file = settings.cluster_dir / "postgres-password"
    password_file.write_text(settings.metastore_password + "\n")
    password_file.chmod(0o600)
    give_to_postgres_user(tools, password_file)
    try:
        run(
            as_postgres_user(
                tools,
                [
                    str(tools.postgres_bin / "initdb"),
                    "-D",
                    str(data),
                    "-U",
                    METASTORE_USER,
                    f"--pwfile={password_file}",
                    "--auth=scram-sha-256",
                    "--encoding=UTF8",
                    "--no-locale",
                ],
            ),
            "initdb",
        )
    finally:
        password_file.unlink(missing_ok=True)
    log.info("initialised PostgreSQL in %s", data)


def start_postgres(settings: ClusterSettings, tools: Tools) -> None:
    log_file = settings.log_file("postgres")
    log_file.touch()
    give_to_postgres_user(tools, log_file)
    options = (
        f"-p {settings.postgres_port} -c listen_addresses={settings.host} -c unix_socket_directories='' "
        "-c shared_buffers=32MB -c max_connections=60"
    )
    run(
        as_postgres_user(
            tools,
            [
                str(tools.postgres_bin / "pg_ctl"),
                "-D",
                str(settings.postgres_data),
                "-l",
                str(log_file),
                "-w",
                "-t",
                str(int(settings.timeout_seconds)),
                "-o",
                options,
                "start",
            ],
        ),
        f"starting PostgreSQL (log {log_file})",
    )


def psql(settings: ClusterSettings, tools: Tools, database: str, *args: str) -> str:
    env = {
        "PGHOST": settings.host,
        "PGPORT": str(settings.postgres_port),
        "PGUSER": METASTORE_USER,
        "PGPASSWORD": settings.metastore_password,
        "PGOPTIONS": "-c client_min_messages=warning",
    }
    return run([tools.psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", "-d", database, *args], "psql", env)


def prepare_metastore_database(settings: ClusterSettings, tools: Tools, project_dir: Path) -> None:
    """The metastore database and the lock tables of Hive's transaction handler (idempotent); the
    catalog tables themselves are created by the metastore service (DataNucleus)."""
    exists = psql(
        settings, tools, "postgres", "-c", f"select 1 from pg_database where datname = '{METASTORE_DATABASE}'"
    )
    if not exists.strip():
        psql(settings, tools, "postgres", "-c", f"create database {METASTORE_DATABASE}")
    psql(settings, tools, METASTORE_DATABASE, "-f", str(project_dir / TXN_TABLES_SQL))


def stop_postgres(settings: ClusterSettings, tools: Tools | None) -> bool:
    pid = running_pid(settings, "postgres")
    if pid is None:
        return False
    if tools is not None:
        run(
            as_postgres_user(
                tools,
                [
                    str(tools.postgres_bin / "pg_ctl"),
                    "-D",
                    str(settings.postgres_data),
                    "-m",
                    "fast",
                    "-w",
                    "stop",
                ],
            ),
            "stopping PostgreSQL",
        )
    else:  # the binaries are gone: postgres shuts down fast on SIGINT
        os.kill(pid, signal.SIGINT)
    log.info("stopped postgres (pid %d)", pid)
    return True


# --- Hive metastore service --------------------------------------------------------------------


def write_metastore_conf(settings: ClusterSettings) -> Path:
    """hive-site.xml (PostgreSQL, warehouse) and a console log4j2 config for the metastore service."""
    conf = settings.conf_dir / "metastore"
    conf.mkdir(parents=True, exist_ok=True)
    properties = {
        "javax.jdo.option.ConnectionURL": settings.jdbc_url,
        "javax.jdo.option.ConnectionDriverName": "org.postgresql.Driver",
        "javax.jdo.option.ConnectionUserName": METASTORE_USER,
        "javax.jdo.option.ConnectionPassword": settings.metastore_password,
        # The service, and only it, creates the catalog tables (DBS, TBLS, ...) as they are first used.
        "datanucleus.schema.autoCreateAll": "true",
        "hive.metastore.schema.verification": "false",
        "hive.metastore.warehouse.dir": settings.warehouse,
        # Hive's default async logging needs the LMAX disruptor, which Spark's jars lack.
        "hive.async.log.enabled": "false",
    }
    body = "\n".join(
        f"  <property><name>{escape(key)}</name><value>{escape(value)}</value></property>"
        for key, value in properties.items()
    )
    (conf / "hive-site.xml").write_text(f'<?xml version="1.0"?>\n<configuration>\n{body}\n</configuration>\n')
    (conf / "hive-log4j2.properties").write_text(
        "status = WARN\nappender.console.type = Console\nappender.console.name = console\n"
        "appender.console.layout.type = PatternLayout\n"
        "appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n\n"
        "rootLogger.level = INFO\nrootLogger.appenderRef.console.ref = console\n"
        # A health check that only opens the port makes the thrift server log an error; not one.
        "logger.thrift.name = org.apache.thrift.server.TThreadPoolServer\nlogger.thrift.level = OFF\n"
    )
    (conf / "hive-site.xml").chmod(0o600)  # holds the metastore password
    return conf


def start_metastore(settings: ClusterSettings, tools: Tools) -> subprocess.Popen[bytes]:
    conf = write_metastore_conf(settings)
    classpath = f"{conf}:{tools.spark_home / 'jars'}/*:{tools.jdbc_jar}"
    memory = os.environ.get("LATE_DATA_METASTORE_MEMORY", "512m")
    return launch(
        settings,
        "metastore",
        [
            tools.java,
            f"-Xmx{memory}",
            "-cp",
            classpath,
            METASTORE_CLASS,
            "-p",
            str(settings.metastore_port),
        ],
        {},
    )


# --- Spark standalone and the Thrift Server ----------------------------------------------------


def spark_env(settings: ClusterSettings, tools: Tools) -> dict[str, str]:
    return {
        "SPARK_HOME": str(tools.spark_home),
        "SPARK_LOCAL_IP": settings.host,
        "SPARK_DAEMON_MEMORY": os.environ.get("LATE_DATA_DAEMON_MEMORY", "512m"),
        "SPARK_CONF_DIR": str(settings.conf_dir / "spark"),
    }


def write_spark_conf(settings: ClusterSettings) -> None:
    """SPARK_CONF_DIR of the cluster's processes: Spark's default console logging, minus the error
    a health check's bare connect makes the thrift servers log."""
    conf = settings.conf_dir / "spark"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "log4j2.properties").write_text(
        "rootLogger.level = info\nrootLogger.appenderRef.stdout.ref = console\n"
        "appender.console.type = Console\nappender.console.name = console\nappender.console.target = SYSTEM_ERR\n"
        "appender.console.layout.type = PatternLayout\n"
        "appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex\n"
        "logger.thrift.name = org.apache.thrift.server.TThreadPoolServer\nlogger.thrift.level = off\n"
    )


def start_master(settings: ClusterSettings, tools: Tools) -> subprocess.Popen[bytes]:
    write_spark_conf(settings)
    return launch(
        settings,
        "master",
        [
            str(tools.spark_home / "bin" / "spark-class"),
            MASTER_CLASS,
            "--host",
            settings.host,
            "--port",
            str(settings.master_port),
            "--webui-port",
            str(settings.ui_port),
        ],
        spark_env(settings, tools),
    )


def start_worker(settings: ClusterSettings, tools: Tools, index: int) -> subprocess.Popen[bytes]:
    write_spark_conf(settings)
    name = f"worker-{index}"
    work_dir = settings.cluster_dir / "work" / name
    work_dir.mkdir(parents=True, exist_ok=True)
    return launch(
        settings,
        name,
        [
            str(tools.spark_home / "bin" / "spark-class"),
            WORKER_CLASS,
            "--host",
            settings.host,
            "--cores",
            "1",
            "--memory",
            settings.worker_memory,
            "--webui-port",
            str(settings.ui_port + index),
            "--work-dir",
            str(work_dir),
            settings.master_url,
        ],
        {
            **spark_env(settings, tools),
            # Every application leaves its jars and executor logs (about 45 MB) in the work directory:
            # remove those of applications finished more than a day ago (checked every 30 minutes).
            "SPARK_WORKER_OPTS": "-Dspark.worker.cleanup.enabled=true -Dspark.worker.cleanup.appDataTtl=86400",
        },
    )


def alive_workers(settings: ClusterSettings) -> int:
    """Workers the master counts as ALIVE (its web UI's JSON)."""
    try:
        with urllib.request.urlopen(f"http://{settings.host}:{settings.ui_port}/json/", timeout=2) as response:
            state = json.load(response)
    except (OSError, ValueError):
        return 0
    return sum(1 for worker in state.get("workers", []) if worker.get("state") == "ALIVE")


def profile_spark_settings(environment: ProjectEnvironment, target: str = "cluster") -> dict[str, str]:
    """The server_side_parameters of a profiles.yml target, rendered like dbt does (env_var)."""
    import jinja2
    import yaml

    profile = yaml.safe_load((environment.profiles_dir / "profiles.yml").read_text())["late_data"]
    parameters: dict[str, Any] = profile["outputs"][target]["server_side_parameters"]
    missing = object()

    def env_var(name: str, default: Any = missing) -> str:
        if name in os.environ:
            return os.environ[name]
        if default is missing:
            raise SetupError(f"profiles.yml target {target} needs the environment variable {name}")
        return str(default)

    renderer = jinja2.Environment(undefined=jinja2.StrictUndefined)
    renderer.globals["env_var"] = env_var
    renderer.filters["as_number"] = lambda value: value
    return {key: renderer.from_string(str(value)).render() for key, value in parameters.items()}


def thriftserver_properties(settings: ClusterSettings, environment: ProjectEnvironment) -> dict[str, str]:
    """The `cluster` target's settings (table format, catalog, warehouse) for the Thrift Server,
    pinned to this cluster's ports."""
    properties = profile_spark_settings(environment, "cluster")
    properties.update(
        {
            "spark.master": settings.master_url,
            "spark.app.name": "late_data_thriftserver",
            "spark.driver.memory": settings.server_memory,
            "spark.sql.warehouse.dir": settings.warehouse,
            "spark.hadoop.hive.metastore.uris": settings.metastore_uri,
            # dbt-spark turns ANSI off per session, which this server ignores (plain session keys).
            "spark.sql.ansi.enabled": "false",
        }
    )
    return properties


def start_thriftserver(
    settings: ClusterSettings, tools: Tools, environment: ProjectEnvironment
) -> subprocess.Popen[bytes]:
    """The server runs in the project directory: a relative path in SQL (LATE_DATA_SCRATCH's default
    when dbt runs with a relative LATE_DATA_HOME) means what it means to dbt run from there."""
    write_spark_conf(settings)
    properties_file = settings.conf_dir / "thriftserver.conf"
    properties = thriftserver_properties(settings, environment)
    properties_file.write_text("".join(f"{key} {value}\n" for key, value in sorted(properties.items())))
    return launch(
        settings,
        "thriftserver",
        [
            str(tools.spark_home / "bin" / "spark-submit"),
            "--class",
            THRIFT_SERVER_CLASS,
            "--name",
            properties["spark.app.name"],
            "--properties-file",
            str(properties_file),
            # Iceberg's classes must be visible to the driver's own class loader, not only added later.
            "--driver-class-path",
            str(tools.iceberg_jar),
            "spark-internal",
            "--hiveconf",
            f"hive.server2.thrift.bind.host={settings.host}",
            "--hiveconf",
            f"hive.server2.thrift.port={settings.thrift_port}",
        ],
        spark_env(settings, tools),
        cwd=environment.project_dir,
    )


def thrift_answers(settings: ClusterSettings) -> bool:
    """The Thrift Server runs `select 1` through PyHive (what dbt's thrift method uses)."""
    if not port_answers(settings.host, settings.thrift_port):
        return False
    from pyhive import hive

    try:
        connection = hive.connect(
            host=settings.host,
            port=settings.thrift_port,
            username=os.environ.get("LATE_DATA_THRIFT_USER", "late_data"),
        )
        try:
            cursor = connection.cursor()
            cursor.execute("select 1")
            return cursor.fetchall() == [(1,)]
        finally:
            connection.close()
    except Exception as error:
        log.debug("thrift server not ready: %s", error)
        return False


# --- the subcommands ---------------------------------------------------------------------------


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
            # Hive 2.3's metastore cannot bind one address: it takes the port on every address.
            require_free_port(port_name, "0.0.0.0" if name == "metastore" else settings.host, port)


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
    if needs("metastore"):
        start_metastore(settings, tools)
        launched.append("metastore")
    if needs("master"):
        start_master(settings, tools)
        launched.append("master")
    wait_until("answering on its port", lambda: port_answers(settings.host, settings.master_port), settings, "master")
    for index, name in enumerate(settings.worker_names(), start=1):
        if needs(name):
            start_worker(settings, tools, index)
            launched.append(name)
    wait_until(
        "answering on its port", lambda: port_answers(settings.host, settings.metastore_port), settings, "metastore"
    )
    if needs("thriftserver"):
        start_thriftserver(settings, tools, environment)
        launched.append("thriftserver")
    wait_until(
        "registered with the master",
        lambda: alive_workers(settings) >= settings.workers,
        settings,
        "master",
        *settings.worker_names(),
    )
    wait_until("answering `select 1`", lambda: thrift_answers(settings), settings, "thriftserver")


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
            answering=port_answers(settings.host, ports[name]),
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
            f"master web UI: http://{settings.host}:{settings.ui_port} ({alive_workers(settings)} workers alive)",
            f"warehouse: {settings.warehouse}",
            "targets: LATE_DATA_TARGET=thrift (dbt through the Thrift Server) or cluster (driver in-process), with:",
            (
                f"  LATE_DATA_CLUSTER_HOST={settings.host} LATE_DATA_THRIFT_PORT={settings.thrift_port}"
                f" LATE_DATA_METASTORE_PORT={settings.metastore_port} LATE_DATA_SPARK_MASTER_PORT={settings.master_port}"
                f" LATE_DATA_WAREHOUSE={settings.warehouse}"
            ),
        ]
    return "\n".join(lines)
