"""What every service of the local cluster shares: its settings, the tools it runs, its secrets and
its logging configuration (processes and ports: processes.py)."""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from late_data.runtime.environment import ProjectEnvironment, cluster_client_conf_dir
from late_data.runtime.settings import (
    SetupError,
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
            # Checked (one of THRIFT_AUTH_MODES) and upper-cased by prepare_environment.
            thrift_auth=os.environ.get("LATE_DATA_THRIFT_AUTH", "NONE"),
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


def write_log4j_conf(directory: Path) -> None:
    """Console logging for a service, minus the error a health check's bare connect makes a thrift
    server log."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "log4j2.properties").write_text(
        "rootLogger.level = info\nrootLogger.appenderRef.stdout.ref = console\n"
        "appender.console.type = Console\nappender.console.name = console\nappender.console.target = SYSTEM_ERR\n"
        "appender.console.layout.type = PatternLayout\n"
        "appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex\n"
        "logger.thrift.name = org.apache.thrift.server.TThreadPoolServer\nlogger.thrift.level = off\n"
    )
