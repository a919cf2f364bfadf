"""What every service of the local cluster shares: its settings, the tools it runs, its secrets, and
starting, watching and stopping processes by pid file and port."""

from __future__ import annotations

import contextlib
import glob
import json
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from late_data.environment import (
    THRIFT_AUTH_MODES,
    ProjectEnvironment,
    SetupError,
    cluster_client_conf_dir,
    count_setting,
    host_setting,
    is_loopback,
    memory_setting,
    port_setting,
    validate_location,
)

log = logging.getLogger(__name__)

INSTALL_POSTGRES = "apt-get install postgresql libpostgresql-jdbc-java"
LOOPBACK = "127.0.0.1"
METASTORE_CLASS = "BoundMetastore"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
THRIFT_SERVER_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
# What a Thrift Server authentication mode needs in LATE_DATA_THRIFT_AUTH_SITE besides the mode.
THRIFT_AUTH_REQUIRES = {
    "LDAP": ("hive.server2.authentication.ldap.url",),
    "KERBEROS": ("hive.server2.authentication.kerberos.principal", "hive.server2.authentication.kerberos.keytab"),
    "CUSTOM": ("hive.server2.custom.authentication.class",),
}
# Components and the setting of their port; worker-N web UIs are the UI port + N.
PORT_VARIABLES = {
    "postgres": "LATE_DATA_POSTGRES_PORT",
    "metastore": "LATE_DATA_METASTORE_PORT",
    "master": "LATE_DATA_SPARK_MASTER_PORT",
    "master-ui": "LATE_DATA_SPARK_UI_PORT",
    "thriftserver": "LATE_DATA_THRIFT_PORT",
}


@dataclass(frozen=True)
class ClusterSettings:
    """Everything `cluster up` was asked for; saved to cluster.json (no secrets), so that status and
    down act on the cluster that runs."""

    home: Path
    warehouse: str
    # Where Spark (master, workers, executors, drivers) and the Thrift Server listen. PostgreSQL, the
    # metastore and the web UIs, which have no authentication of their own, stay on loopback.
    host: str
    postgres_port: int
    metastore_port: int
    master_port: int
    ui_port: int
    thrift_port: int
    workers: int
    worker_memory: str
    server_memory: str
    metastore_memory: str
    daemon_memory: str
    thrift_auth: str
    thrift_auth_site: str | None
    timeout_seconds: float

    @classmethod
    def from_environment(cls, environment: ProjectEnvironment) -> ClusterSettings:
        thrift_auth = os.environ.get("LATE_DATA_THRIFT_AUTH", "NONE").upper()
        if thrift_auth not in THRIFT_AUTH_MODES:
            raise SetupError(f"LATE_DATA_THRIFT_AUTH={thrift_auth!r} is not one of {THRIFT_AUTH_MODES}")
        auth_site = os.environ.get("LATE_DATA_THRIFT_AUTH_SITE") or None
        return cls(
            home=environment.home,
            warehouse=validate_location("LATE_DATA_WAREHOUSE", environment.warehouse) or "",
            host=host_setting("LATE_DATA_CLUSTER_HOST"),
            postgres_port=port_setting("LATE_DATA_POSTGRES_PORT"),
            metastore_port=port_setting("LATE_DATA_METASTORE_PORT"),
            master_port=port_setting("LATE_DATA_SPARK_MASTER_PORT"),
            ui_port=port_setting("LATE_DATA_SPARK_UI_PORT"),
            thrift_port=port_setting("LATE_DATA_THRIFT_PORT"),
            workers=count_setting("LATE_DATA_WORKERS", 2, minimum=1, maximum=8),
            worker_memory=memory_setting("LATE_DATA_WORKER_MEMORY", "1g"),
            server_memory=memory_setting("LATE_DATA_SERVER_MEMORY", "1g"),
            metastore_memory=memory_setting("LATE_DATA_METASTORE_MEMORY", "512m"),
            daemon_memory=memory_setting("LATE_DATA_DAEMON_MEMORY", "512m"),
            thrift_auth=thrift_auth,
            thrift_auth_site=str(Path(auth_site).resolve()) if auth_site else None,
            timeout_seconds=float(count_setting("LATE_DATA_CLUSTER_TIMEOUT", 180, minimum=1)),
        )

    @property
    def opened(self) -> bool:
        """True when Spark and the Thrift Server listen where other hosts reach them."""
        return not is_loopback(self.host)

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
    def client_conf_dir(self) -> Path:
        return cluster_client_conf_dir(self.home)

    @property
    def secrets_dir(self) -> Path:
        return self.cluster_dir / "secrets"

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
        return f"thrift://{LOOPBACK}:{self.metastore_port}"

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

    def address(self, port_name: str) -> str:
        """The address a component's port is bound to."""
        return self.host if port_name in ("master", "thriftserver") else LOOPBACK

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


# --- secrets -----------------------------------------------------------------------------------


def write_private(path: Path, text: str) -> Path:
    """Write a file only its owner reads: 0600 from its creation (mkstemp), never readable by others
    for a moment, and replaced whole, so a process reading it meanwhile sees the old or new text."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(descriptor, "w") as file:
        file.write(text)
    os.replace(temporary, path)
    return path


def secret(settings: ClusterSettings, name: str) -> str:
    """A secret of this cluster (LATE_DATA_HOME/cluster/secrets/<name>), generated on first use."""
    path = settings.secrets_dir / name
    if not path.exists():
        write_private(path, secrets.token_urlsafe(32) + "\n")
        log.info("generated %s", path)
    return path.read_text().strip()


def spark_secret(settings: ClusterSettings) -> str:
    """The shared secret of spark.authenticate: master, workers, executors and every driver."""
    return secret(settings, "spark-authenticate")


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


def listening_sockets() -> dict[str, tuple[str, int]]:
    """Socket inode -> (address, port) of every listening TCP socket on this machine."""
    sockets = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except FileNotFoundError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A":
                address, port = fields[1].rsplit(":", 1)
                sockets[fields[9]] = (_proc_net_address(address), int(port, 16))
    return sockets


def _proc_net_address(text: str) -> str:
    """An address as /proc/net/tcp{,6} writes it (32-bit words in host byte order) as text."""
    raw = bytes.fromhex(text)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return socket.inet_ntop(socket.AF_INET if len(words) == 4 else socket.AF_INET6, words)


def socket_inodes(pid: int) -> set[str]:
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(FileNotFoundError):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
    except (FileNotFoundError, PermissionError, ProcessLookupError):
        pass
    return inodes


def listening_addresses(pids: Iterable[int]) -> dict[int, list[tuple[str, int]]]:
    """Pid -> the (address, port) pairs it listens on."""
    listening = listening_sockets()
    return {pid: sorted(listening[inode] for inode in socket_inodes(pid) if inode in listening) for pid in pids}


def process_tree(roots: Iterable[int]) -> set[int]:
    """The processes `roots` started, directly or not (a worker's executors, postgres' backends)."""
    children: dict[int, list[int]] = {}
    for stat in glob.glob("/proc/[0-9]*/stat"):
        with contextlib.suppress(FileNotFoundError, IndexError, ValueError):
            parent = int(Path(stat).read_text().rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(stat.split("/")[2]))
    found, pending = set(), list(roots)
    while pending:
        pid = pending.pop()
        if pid not in found:
            found.add(pid)
            pending.extend(children.get(pid, []))
    return found


def port_owner(port: int) -> str | None:
    """Who listens on a TCP port: 'pid N (command)', 'a process of another user' or None."""
    targets = {inode for inode, (_, listened) in listening_sockets().items() if listened == port}
    if not targets:
        return None
    for fd_dir in glob.glob("/proc/[0-9]*/fd"):
        pid = int(fd_dir.split("/")[2])
        if socket_inodes(pid) & targets:
            return f"pid {pid} ({command_line(pid)[:120]})"
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
    return PORT_VARIABLES["master-ui" if name.startswith("worker") else name]


COMPONENT_MARKERS = {
    "metastore": METASTORE_CLASS,
    "master": MASTER_CLASS,
    "thriftserver": THRIFT_SERVER_CLASS,
    **{f"worker-{i}": WORKER_CLASS for i in range(1, 9)},
}


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


def run(args: list[str], what: str, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(args, check=False, capture_output=True, text=True, env={**os.environ, **(env or {})})
    if result.returncode != 0:
        raise SetupError(
            f"{what} failed ({' '.join(args[:4])} ...):\n{(result.stdout + result.stderr).strip()[-2000:]}"
        )
    return result.stdout


def write_log4j_conf(directory: Path, root_level: str = "info") -> None:
    """Console logging for a service, minus the error a health check's bare connect makes a thrift
    server log."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "log4j2.properties").write_text(
        f"rootLogger.level = {root_level}\nrootLogger.appenderRef.stdout.ref = console\n"
        "appender.console.type = Console\nappender.console.name = console\nappender.console.target = SYSTEM_ERR\n"
        "appender.console.layout.type = PatternLayout\n"
        "appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex\n"
        "logger.thrift.name = org.apache.thrift.server.TThreadPoolServer\nlogger.thrift.level = off\n"
    )
