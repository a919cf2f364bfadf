"""Where the project and its local state live, and the checks that fail early and clearly."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from late_data.runtime.delta_jars import check_delta_setup
from late_data.runtime.settings import (
    CODE_COMMIT,
    SetupError,
    refuse_unsafe_location,
    validate_location,
    validate_names_and_hosts,
    validate_ports,
)

ICEBERG_JAR_PACKAGE = "snowpark_connect_deps_iceberg"
ICEBERG_JAR_NAME = "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
TABLE_FORMATS = ("iceberg", "delta")
# This repository's checkout: the demo project, its profiles and the package.
CHECKOUT = Path(__file__).resolve().parents[3]


# Profile targets (profiles/profiles.yml). The embedded ones are named after their table format;
# `cluster` (session method on the standalone master) and `thrift` (a Spark Thrift Server) share
# one catalog, the Hive metastore service of `late-data cluster up`, and are Iceberg only.
EMBEDDED_TARGETS = TABLE_FORMATS
SHARED_CATALOG_TARGETS = ("cluster", "thrift")
TARGETS = EMBEDDED_TARGETS + SHARED_CATALOG_TARGETS


@dataclass(frozen=True)
class ProjectEnvironment:
    project_dir: Path
    home: Path
    table_format: str
    # The profile target (LATE_DATA_TARGET); None: the embedded target of the table format.
    target: str | None = None

    @property
    def profile_target(self) -> str:
        return self.target or self.table_format

    @property
    def shares_catalog(self) -> bool:
        """True for targets whose catalog other processes use at the same time (no Derby lock)."""
        return self.profile_target in SHARED_CATALOG_TARGETS

    @property
    def warehouse(self) -> str:
        return os.environ.get("LATE_DATA_WAREHOUSE") or str(self.home / "warehouse")

    @property
    def profiles_dir(self) -> Path:
        return find_profiles_dir(self.project_dir)

    @property
    def dbt_log_dir(self) -> Path:
        return self.home / "logs"

    @property
    def spark_logging(self) -> Path:
        return self.home / "conf" / "log4j2.properties"

    @property
    def iceberg_jar_link(self) -> Path:
        return self.home / "jars" / "iceberg-spark-runtime.jar"

    @property
    def class_archive(self) -> Path:
        """The JVM's archive of the classes a Spark session of this project loads (CDS), which
        `late-data setup` and `late-data init` make: a JVM that maps it starts in about half the time."""
        return self.home / "jvm" / "spark.jsa"


def find_profiles_dir(project_dir: Path) -> Path:
    """Where dbt's profiles.yml is, found as dbt finds it: DBT_PROFILES_DIR (`late-data
    --profiles-dir` sets it), the project directory, then ~/.dbt; and this repository's own
    layout, profiles/ in the project, before ~/.dbt."""
    configured = os.environ.get("DBT_PROFILES_DIR")
    if configured:
        return Path(configured)
    for candidate in (project_dir, project_dir / "profiles"):
        if (candidate / "profiles.yml").is_file():
            return candidate
    return Path.home() / ".dbt"


def find_project_dir() -> Path:
    """The dbt project: LATE_DATA_PROJECT_DIR (`late-data --project-dir` sets it), else the current
    directory when it is a dbt project (as dbt takes it: a user's ingestion script run in a project
    `late-data init` made reaches that project's warehouse), else the checkout this package lives in
    (the demo)."""
    configured = os.environ.get("LATE_DATA_PROJECT_DIR")
    if configured:
        candidate = Path(configured)
    elif (Path.cwd() / "dbt_project.yml").is_file():
        candidate = Path.cwd()
    else:
        candidate = CHECKOUT
    if not (candidate / "dbt_project.yml").is_file():
        raise SetupError(f"no dbt_project.yml in {candidate}: set LATE_DATA_PROJECT_DIR to the project root")
    return candidate


def prepare_environment() -> ProjectEnvironment:
    """Check Java, the table format, the target and its settings, lay out LATE_DATA_HOME and export
    what the profile reads."""
    project_dir = find_project_dir()
    target_setting = os.environ.get("LATE_DATA_TARGET")
    table_format = os.environ.get("LATE_DATA_TABLE_FORMAT") or (
        target_setting if target_setting in EMBEDDED_TARGETS else "iceberg"
    )
    if table_format not in TABLE_FORMATS:
        raise SetupError(f"LATE_DATA_TABLE_FORMAT={table_format!r} is not supported: use one of {TABLE_FORMATS}")
    target = validate_target(target_setting or table_format, table_format)
    validate_names_and_hosts()
    require_java()
    home = Path(os.environ.get("LATE_DATA_HOME") or project_dir / ".late_data").resolve()
    refuse_unsafe_location("LATE_DATA_HOME", str(home))
    environment = ProjectEnvironment(project_dir=project_dir, home=home, table_format=table_format, target=target)
    warehouse = validate_location("LATE_DATA_WAREHOUSE", os.environ.get("LATE_DATA_WAREHOUSE"))
    if environment.shares_catalog:
        validate_ports()
    if table_format == "delta":
        os.environ["LATE_DATA_DELTA_VERSION"] = check_delta_setup(os.environ.get("DELTA_JARS"))
    require_usable_home(home)
    link_iceberg_jar(environment)
    write_spark_logging(environment)
    if environment.shares_catalog:
        export_cluster_client_conf(home)
    os.environ["LATE_DATA_HOME"] = str(home)
    # A late-data process lives long (a scheduler, a check): the archive for its start, and the
    # JIT's every tier, unlike plain dbt's one-command processes (the profile's default).
    os.environ.setdefault("LATE_DATA_JVM_OPTIONS", jvm_options(environment.class_archive))
    os.environ["LATE_DATA_TABLE_FORMAT"] = table_format
    os.environ["LATE_DATA_TARGET"] = target
    if warehouse:
        os.environ["LATE_DATA_WAREHOUSE"] = warehouse
    os.environ["DBT_PROFILES_DIR"] = str(environment.profiles_dir)
    export_code_commit(project_dir)
    return environment


def export_code_commit(project_dir: Path) -> None:
    """LATE_DATA_CODE_COMMIT, which every run records in the audit (late_data.code_commit): the
    caller's (checked with the other settings), else the project's git commit, `-dirty` when tracked
    files differ from it, else none (no git, or not a repository)."""
    git = shutil.which("git")
    if os.environ.get("LATE_DATA_CODE_COMMIT") or git is None:
        return
    head = subprocess.run(
        [git, "-C", str(project_dir), "rev-parse", "--verify", "--quiet", "HEAD"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if head.returncode != 0 or not CODE_COMMIT.match(head.stdout.strip()):
        return
    changed = subprocess.run(
        [git, "-C", str(project_dir), "diff", "--quiet", "HEAD", "--"], capture_output=True, timeout=30, check=False
    )
    os.environ["LATE_DATA_CODE_COMMIT"] = head.stdout.strip() + ("-dirty" if changed.returncode != 0 else "")


def validate_target(target: str, table_format: str) -> str:
    if target not in TARGETS:
        raise SetupError(f"LATE_DATA_TARGET={target!r} is not a profile target: use one of {TARGETS}")
    if target in EMBEDDED_TARGETS and target != table_format:
        raise SetupError(
            f"LATE_DATA_TARGET={target!r} does not match LATE_DATA_TABLE_FORMAT={table_format!r}: "
            "the embedded targets are named after their table format; set one of them only"
        )
    if target in SHARED_CATALOG_TARGETS and table_format != "iceberg":
        raise SetupError(
            f"LATE_DATA_TARGET={target!r} supports Iceberg tables only: unset LATE_DATA_TABLE_FORMAT "
            "or set it to iceberg"
        )
    return target


def require_usable_home(home: Path) -> None:
    """LATE_DATA_HOME exists (made when missing) and this process can write in it."""
    try:
        home.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=home):
            pass
    except OSError as error:
        reason = "is a file, not a directory" if home.is_file() else f"is not usable ({error.strerror})"
        raise SetupError(f"LATE_DATA_HOME={home} {reason}: set LATE_DATA_HOME to a writable directory") from None


def cluster_client_conf_dir(home: Path) -> Path:
    """Spark's configuration for processes on the local cluster (`late-data cluster up` writes it):
    spark-defaults.conf with spark.authenticate and the cluster's secret."""
    return home / "cluster" / "conf" / "client"


def export_cluster_client_conf(home: Path) -> None:
    """A shared-catalog target's Spark reads the cluster's secret from SPARK_CONF_DIR (never from a
    command line or the environment): point it at the local cluster's client configuration,
    unless SPARK_CONF_DIR is set already."""
    conf = cluster_client_conf_dir(home)
    if "SPARK_CONF_DIR" not in os.environ and (conf / "spark-defaults.conf").is_file():
        os.environ["SPARK_CONF_DIR"] = str(conf)


def require_cluster_client_conf() -> None:
    """Before a shared-catalog target starts Spark: its SPARK_CONF_DIR carries the cluster's
    spark.authenticate secret, else the master would turn the application away."""
    conf = os.environ.get("SPARK_CONF_DIR")
    try:
        text = (Path(conf) / "spark-defaults.conf").read_text() if conf else ""
    except OSError:
        text = ""
    if not any(line.split(None, 1)[0] == "spark.authenticate.secret" for line in text.splitlines() if line.strip()):
        raise SetupError(
            f"LATE_DATA_TARGET={os.environ.get('LATE_DATA_TARGET')} starts Spark on the cluster, which requires"
            " spark.authenticate and its secret, but SPARK_CONF_DIR="
            f"{conf or '(unset)'} has no spark-defaults.conf with spark.authenticate.secret: run"
            " `late-data cluster up` with this LATE_DATA_HOME (it writes LATE_DATA_HOME/cluster/conf/client), or set"
            " SPARK_CONF_DIR to a directory whose spark-defaults.conf has the cluster's secret"
        )


def require_java() -> None:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return
    if shutil.which("java") is None:
        raise SetupError(
            "Java was not found: Spark needs a JDK 17 (or 11). Install one "
            "(Debian: apt-get install openjdk-17-jre-headless) or set JAVA_HOME."
        )


# Spark's own log (Spark, Hive, Iceberg, Delta and their stack traces) to LATE_DATA_HOME/logs, not
# the terminal: a command's user sees its one-line outcome, the log holds the details. Read by the
# embedded targets' JVM (profiles.yml, spark.driver.extraJavaOptions).
SPARK_LOGGING = """\
# Written by `late-data` (environment.write_spark_logging): Spark's log goes to a file, not the terminal.
rootLogger.level = warn
rootLogger.appenderRef.file.ref = file
appender.file.type = RollingFile
appender.file.name = file
appender.file.fileName = {logs}/spark.log
appender.file.filePattern = {logs}/spark.%i.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{{yy/MM/dd HH:mm:ss}} %p %c{{1}}: %m%n%ex
appender.file.policies.type = Policies
appender.file.policies.size.type = SizeBasedTriggeringPolicy
appender.file.policies.size.size = 50MB
appender.file.strategy.type = DefaultRolloverStrategy
appender.file.strategy.max = 3
"""


def jvm_options(archive: Path) -> str:
    """The JVM options of a long-lived late-data process: Spark's classes mapped from `archive`
    when it is there, silently without it (-Xshare:auto, CDS' log off)."""
    return f"-XX:SharedArchiveFile={archive} -Xshare:auto -Xlog:cds=off"


def write_spark_logging(environment: ProjectEnvironment) -> None:
    """LATE_DATA_HOME/conf/log4j2.properties (SPARK_LOGGING), rewritten when it differs."""
    path = environment.spark_logging
    text = SPARK_LOGGING.format(logs=environment.dbt_log_dir)
    if not path.is_file() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        environment.dbt_log_dir.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def link_iceberg_jar(environment: ProjectEnvironment) -> None:
    """The profile loads Iceberg from LATE_DATA_HOME/jars; the jar itself comes from PyPI."""
    import importlib.util

    spec = importlib.util.find_spec(ICEBERG_JAR_PACKAGE)
    if spec is None or spec.origin is None:
        if environment.table_format == "iceberg":
            raise SetupError(
                f"the Iceberg jars (PyPI package {ICEBERG_JAR_PACKAGE}) are not installed: run `make setup`"
            )
        return
    jar = Path(spec.origin).parent / "jars" / ICEBERG_JAR_NAME
    link = environment.iceberg_jar_link
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        if link.resolve() == jar.resolve():
            return
        link.unlink()
    link.symlink_to(jar)


def lock_home(environment: ProjectEnvironment) -> IO[str] | None:
    """Hold LATE_DATA_HOME for this process: its embedded Derby metastore admits one process. The
    shared-catalog targets (cluster, thrift) use no Derby and take no lock: None."""
    if environment.shares_catalog:
        return None
    held = try_lock_home(environment)
    if held is None:
        raise SetupError(
            f"{environment.home} is in use by another process (its Derby metastore admits one): "
            "wait for it to finish, stop it, or set LATE_DATA_HOME to another directory"
        )
    return held


def try_lock_home(environment: ProjectEnvironment) -> IO[str] | None:
    """LATE_DATA_HOME's lock, taken for this process (lock_home), or None while another holds it."""
    lock_file = open(environment.home / "late_data.lock", "w")  # noqa: SIM115 - held for the process
    try:
        fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock_file.close()
        return None
    return lock_file
