"""Where the project and its local state live, and the checks that fail early and clearly."""

from __future__ import annotations

import fcntl
import ipaddress
import os
import re
import shutil
import socket
import tempfile
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import IO, Any

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
# Settings the shared-catalog targets read, with the defaults profiles.yml and `late-data cluster`
# use; each must be a TCP port.
PORT_SETTINGS = {
    "LATE_DATA_POSTGRES_PORT": 15432,
    "LATE_DATA_METASTORE_PORT": 19083,
    "LATE_DATA_SPARK_MASTER_PORT": 17077,
    "LATE_DATA_SPARK_UI_PORT": 18080,
    "LATE_DATA_THRIFT_PORT": 10015,
}
URI_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
# Names that reach SQL unquoted (schemas) and values that reach Spark settings or command lines.
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
HOST_NAME = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
)
USER_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.@-]{0,63}$")
MEMORY = re.compile(r"^[1-9][0-9]*[kKmMgGtT]?$")
# A path or URI ends up in Spark settings unescaped: the warehouse directory, the comma-separated
# spark.jars and the space-separated spark.driver.extraJavaOptions (LATE_DATA_HOME).
UNSAFE_IN_LOCATION = re.compile(r"[\s'\"`\\,;]")
# Free-form settings copied into Spark settings (master URLs, the metastore URI); commas separate
# several masters or metastores.
UNSAFE_IN_SETTING = re.compile(r"[\s'\"`\\;]")
LOG_LEVELS = ("ALL", "DEBUG", "ERROR", "FATAL", "INFO", "OFF", "TRACE", "WARN")
# The Thrift Server's hive.server2.authentication modes (server and `thrift` clients); NONE takes any
# user name and no password.
THRIFT_AUTH_MODES = ("NONE", "LDAP", "KERBEROS", "CUSTOM")
# Delta: the Python package (requirements.txt pins it) and the jars Spark loads must be one release.
# PySpark 3.5 is built for Scala 2.12. The profile's Maven coordinate takes the version from
# LATE_DATA_DELTA_VERSION, which prepare_environment sets from the installed package.
DELTA_PACKAGE = "delta-spark"
DELTA_SCALA = "2.12"
DELTA_SPARK_JAR = re.compile(r"^delta-spark_(?P<scala>\d+\.\d+)-(?P<version>\d[^/]*)\.jar$")
DELTA_STORAGE_JAR = re.compile(r"^delta-storage-(?P<version>\d[^/]*)\.jar$")
# Since Spark 3.5.6 (apache/spark#50739) REPLACE TABLE AS SELECT runs as truncate-and-overwrite,
# which Delta's staged table declares only from 3.3.3 (delta-io/delta#4919): with an older Delta,
# dbt-spark's first build of every incremental model fails ("does not support truncate in batch mode").
FIRST_DELTA_FOR_SPARK_3_5_6 = (3, 3, 3)


class SetupError(RuntimeError):
    """Something the machine or the configuration lacks; the message says what to do."""


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
    return environment


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


def validate_location(name: str, value: str | None) -> str | None:
    """A warehouse location: an absolute path (made a plain absolute path) or a URI
    such as hdfs://namenode/warehouse or s3a://bucket/warehouse. Spark would resolve a relative
    path against each process's working directory, so it is refused."""
    if not value:
        return None
    refuse_unsafe_location(name, value)
    if URI_SCHEME.match(value) or value.startswith("file:/"):
        return value
    if not os.path.isabs(value):
        raise SetupError(
            f"{name}={value!r} is relative: use an absolute path or a URI every Spark process reaches "
            "(hdfs://..., s3a://...)"
        )
    return os.path.normpath(value)


def refuse_unsafe_location(name: str, value: str) -> None:
    if UNSAFE_IN_LOCATION.search(value):
        raise SetupError(
            f"{name}={value!r} holds a space, quote, backslash, comma or semicolon: it reaches SQL and Spark"
            " settings unescaped; use a path or URI without them"
        )


def validate_ports() -> None:
    """The cluster and thrift targets: every port setting is a TCP port."""
    for name in PORT_SETTINGS:
        port_setting(name)


def validate_names_and_hosts() -> None:
    """Every name and host from the environment that reaches SQL, a Spark setting or a command line,
    checked once before anything starts (each refused naming the variable and its value)."""
    identifier_setting("LATE_DATA_SCHEMA", "analytics")
    for name in ("LATE_DATA_CLUSTER_HOST", "LATE_DATA_THRIFT_HOST"):
        host_setting(name)
    pattern_setting("LATE_DATA_THRIFT_USER", "late_data", USER_NAME, "a user name (letters, digits, _ . @ -)")
    for name in ("LATE_DATA_DRIVER_MEMORY", "LATE_DATA_EXECUTOR_MEMORY"):
        memory_setting(name, "1g")
    for name in ("LATE_DATA_SHUFFLE_PARTITIONS", "LATE_DATA_APP_CORES"):
        count_setting(name, 1, minimum=1)
    for name in ("LATE_DATA_THRIFT_POLL_INTERVAL", "LATE_DATA_THRIFT_CONNECT_RETRIES"):
        count_setting(name, 0, minimum=0)
    for name in ("LATE_DATA_SPARK_MASTER", "LATE_DATA_CLUSTER_MASTER", "LATE_DATA_METASTORE_URI"):
        value = os.environ.get(name)
        if value is not None and (not value or UNSAFE_IN_SETTING.search(value)):
            raise SetupError(f"{name}={value!r} is not a URL: no spaces, quotes, backslashes or semicolons")
    thrift_auth = os.environ.get("LATE_DATA_THRIFT_AUTH")
    if thrift_auth is not None:
        if thrift_auth.upper() not in THRIFT_AUTH_MODES:
            raise SetupError(f"LATE_DATA_THRIFT_AUTH={thrift_auth!r} is not one of {THRIFT_AUTH_MODES}")
        # dbt-spark compares the profile's `auth` in upper case.
        os.environ["LATE_DATA_THRIFT_AUTH"] = thrift_auth.upper()
    writer_lock = os.environ.get("LATE_DATA_WRITER_LOCK")
    if writer_lock is not None and writer_lock not in ("on", "off"):
        raise SetupError(f"LATE_DATA_WRITER_LOCK={writer_lock!r} is not on or off")
    level = os.environ.get("LATE_DATA_SPARK_LOG_LEVEL")
    if level is not None and level.upper() not in LOG_LEVELS:
        raise SetupError(f"LATE_DATA_SPARK_LOG_LEVEL={level!r} is not a log level: use one of {LOG_LEVELS}")


def validate_identifier(name: str, value: str) -> str:
    """A schema name spliced into SQL: letters, digits and underscores, not starting with a digit."""
    if not IDENTIFIER.match(value):
        raise SetupError(
            f"{name}={value!r} is not a plain identifier: use letters, digits and underscores, starting"
            " with a letter or underscore"
        )
    return value


def identifier_setting(name: str, default: str) -> str:
    return validate_identifier(name, os.environ.get(name, default))


def host_setting(name: str, default: str = "127.0.0.1") -> str:
    """A host name or IPv4 address from the environment: it reaches Spark URLs and the servers'
    command lines."""
    value = os.environ.get(name) or default
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        address = None
    if (address is not None and address.version != 4) or (address is None and not HOST_NAME.match(value)):
        raise SetupError(f"{name}={value!r} is not a host name or an IPv4 address")
    return value


def is_loopback(host: str) -> bool:
    """True when every address `host` names is a loopback address (127.0.0.0/8, ::1)."""
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)}
    except socket.gaierror:
        return False
    return bool(addresses) and all(ipaddress.ip_address(address).is_loopback for address in addresses)


def pattern_setting(name: str, default: str, pattern: re.Pattern[str], what: str) -> str:
    value = os.environ.get(name) or default
    if not pattern.match(value):
        raise SetupError(f"{name}={value!r} is not {what}")
    return value


def memory_setting(name: str, default: str) -> str:
    return pattern_setting(name, default, MEMORY, "an amount of memory (e.g. 512m, 2g)")


def count_setting(name: str, default: int, minimum: int = 1, maximum: int | None = None) -> int:
    text = os.environ.get(name) or str(default)
    if not text.isdigit() or int(text) < minimum or (maximum is not None and int(text) > maximum):
        bound = f"{minimum}-{maximum}" if maximum is not None else f"{minimum} or more"
        raise SetupError(f"{name}={text!r} is not a whole number ({bound})")
    return int(text)


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


def port_setting(name: str) -> int:
    """A TCP port from the environment (default: PORT_SETTINGS), refused by name when it is not one."""
    text = os.environ.get(name) or str(PORT_SETTINGS[name])
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise SetupError(f"{name}={text!r} is not a TCP port (1-65535)")
    return int(text)


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


def release(version: str) -> tuple[int, ...]:
    """(3, 3, 3) from '3.3.3' (a suffix such as '3.3.3rc1' or '3.5.9.dev0' ends the numbers)."""
    numbers = []
    for part in version.split("."):
        digits = re.match(r"\d+", part)
        if digits is None:
            break
        numbers.append(int(digits.group()))
        if digits.group() != part:
            break
    return tuple(numbers)


def installed_version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def check_delta_setup(delta_jars: str | None) -> str:
    """The Delta release this process must load: the installed delta-spark, checked against
    PySpark and against the jars in DELTA_JARS (when set). Returns its version."""
    delta = installed_version(DELTA_PACKAGE)
    if delta is None:
        raise SetupError(f"LATE_DATA_TABLE_FORMAT=delta needs the Python package {DELTA_PACKAGE}: run `make setup`")
    check_delta_spark_pair(delta, installed_version("pyspark") or "")
    if delta_jars:
        check_delta_jars(delta_jars, delta)
    return delta


def check_delta_spark_pair(delta: str, pyspark: str) -> None:
    if release(pyspark) >= (3, 5, 6) and release(delta) < FIRST_DELTA_FOR_SPARK_3_5_6:
        raise SetupError(
            f"{DELTA_PACKAGE}=={delta} does not work with pyspark=={pyspark}: since Spark 3.5.6 REPLACE TABLE"
            " AS SELECT truncates first, which Delta supports from 3.3.3 on (delta-io/delta#4919); every"
            " first build of an incremental model would fail with 'does not support truncate in batch mode'."
            f" Install {DELTA_PACKAGE}==3.3.3 (requirements.txt) and its jars"
        )


def check_delta_jars(delta_jars: str, expected: str) -> list[Path]:
    """DELTA_JARS (comma-separated paths) must name existing delta-spark (Scala 2.12) and
    delta-storage jars of the installed delta-spark's release. A jar named otherwise is judged by
    its manifest's Implementation-Version."""
    paths = [Path(entry.strip()) for entry in delta_jars.split(",") if entry.strip()]
    found: dict[str, tuple[Path, str]] = {}
    for path in paths:
        if not path.is_file():
            raise SetupError(f"DELTA_JARS names {path}, which does not exist")
        kind, scala, version = delta_jar_identity(path)
        if kind is None:
            continue  # another jar on the list (a dependency): not Delta's to check
        if kind == "delta-spark" and scala != DELTA_SCALA:
            raise SetupError(
                f"DELTA_JARS holds {path.name}, built for Scala {scala}; PySpark 3.5 needs"
                f" delta-spark_{DELTA_SCALA}-{expected}.jar"
            )
        if version != expected:
            raise SetupError(
                f"DELTA_JARS holds {path.name} (Delta {version}) but the installed Python package"
                f" {DELTA_PACKAGE} is {expected}: set DELTA_JARS to delta-spark_{DELTA_SCALA}-{expected}.jar"
                f" and delta-storage-{expected}.jar (or install {DELTA_PACKAGE}=={version} where that pair works)"
            )
        found[kind] = (path, version)
    for kind, name in (("delta-spark", f"delta-spark_{DELTA_SCALA}"), ("delta-storage", "delta-storage")):
        if kind not in found:
            raise SetupError(
                f"DELTA_JARS={delta_jars!r} has no {kind} jar: it needs {name}-{expected}.jar"
                f" (both delta-spark_{DELTA_SCALA}-{expected}.jar and delta-storage-{expected}.jar)"
            )
    return [found["delta-spark"][0], found["delta-storage"][0]]


def delta_jar_identity(path: Path) -> tuple[str | None, str | None, str | None]:
    """(kind, Scala version, Delta version) of a jar: from Maven's file name, else from the jar's
    manifest and a class only that jar has; (None, None, None) for a jar that is not Delta's."""
    if match := DELTA_SPARK_JAR.match(path.name):
        return "delta-spark", match["scala"], match["version"]
    if match := DELTA_STORAGE_JAR.match(path.name):
        return "delta-storage", None, match["version"]
    try:
        with zipfile.ZipFile(path) as jar:
            names = set(jar.namelist())
            manifest = (
                jar.read("META-INF/MANIFEST.MF").decode(errors="replace") if "META-INF/MANIFEST.MF" in names else ""
            )
    except zipfile.BadZipFile:
        raise SetupError(f"DELTA_JARS names {path}, which is not a jar") from None
    kind = (
        "delta-spark"
        if "io/delta/sql/DeltaSparkSessionExtension.class" in names
        else "delta-storage"
        if "io/delta/storage/LogStore.class" in names
        else None
    )
    if kind is None:
        return None, None, None
    version = re.search(r"^Implementation-Version:\s*(\S+)", manifest, re.MULTILINE)
    if version is None:
        raise SetupError(
            f"DELTA_JARS holds {path.name}, a {kind} jar whose version cannot be told (no Implementation-Version"
            f" in its manifest): name it as Maven does, e.g. {kind}{'_' + DELTA_SCALA if kind == 'delta-spark' else ''}-<version>.jar"
        )
    return kind, DELTA_SCALA if kind == "delta-spark" else None, version.group(1)


def jvm_delta_version(jvm: Any) -> str | None:
    """The Delta release on Spark's classpath (io.delta.VERSION, which Delta's build generates),
    None when Delta's classes are not there."""
    try:
        return str(jvm.io.delta.package.VERSION())
    except Exception:  # py4j: a class that is not there is a JavaPackage, which is not callable
        return None


def check_delta_classpath(jvm: Any, expected: str) -> None:
    """After the session started: the Delta classes Spark loaded are the pinned release."""
    loaded = jvm_delta_version(jvm)
    if loaded is None:
        raise SetupError(
            "LATE_DATA_TABLE_FORMAT=delta but Delta's classes are not on Spark's classpath: set DELTA_JARS to"
            f" delta-spark_{DELTA_SCALA}-{expected}.jar,delta-storage-{expected}.jar or let Spark fetch"
            f" io.delta:delta-spark_{DELTA_SCALA}:{expected} from Maven (DELTA_JARS unset)"
        )
    if loaded != expected:
        raise SetupError(
            f"Spark loaded Delta {loaded} but the installed Python package {DELTA_PACKAGE} is {expected}:"
            f" DELTA_JARS={os.environ.get('DELTA_JARS', '')!r}; a Spark session started elsewhere (spark.jars,"
            " spark-defaults.conf, PYSPARK_SUBMIT_ARGS) may bring other jars"
        )


def delta_jars_unavailable(version: str | None = None) -> str | None:
    """Why Delta's jars cannot be had on this machine, or None when they can: DELTA_JARS is set,
    Spark's Ivy cache holds the release (an earlier fetch from Maven), or LATE_DATA_DELTA_MAVEN=1
    says Maven is reachable. Used to skip Delta tests and benchmark cells with that reason; no
    network is probed."""
    version = version or installed_version(DELTA_PACKAGE) or "?"
    if os.environ.get("DELTA_JARS") or os.environ.get("LATE_DATA_DELTA_MAVEN") == "1":
        return None
    ivy_jars = Path(os.environ.get("LATE_DATA_IVY_DIR", Path.home() / ".ivy2")) / "jars"
    cached = [
        ivy_jars / f"io.delta_delta-spark_{DELTA_SCALA}-{version}.jar",
        ivy_jars / f"io.delta_delta-storage-{version}.jar",
    ]
    if all(path.is_file() for path in cached):
        return None
    return (
        f"Delta's jars are not available (DELTA_JARS unset, Delta {version} not in Spark's Ivy cache"
        f" {ivy_jars}, LATE_DATA_DELTA_MAVEN unset): set DELTA_JARS=/path/delta-spark_{DELTA_SCALA}-{version}.jar,"
        f"/path/delta-storage-{version}.jar, or LATE_DATA_DELTA_MAVEN=1 where Maven Central is reachable"
    )


def lock_home(environment: ProjectEnvironment) -> IO[str] | None:
    """Hold LATE_DATA_HOME for this process: its embedded Derby metastore admits one process. The
    shared-catalog targets (cluster, thrift) use no Derby and take no lock: None."""
    if environment.shares_catalog:
        return None
    lock_file = open(environment.home / "late_data.lock", "w")  # noqa: SIM115 - held for the process
    try:
        fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock_file.close()
        raise SetupError(
            f"{environment.home} is in use by another process (its Derby metastore admits one): "
            "wait for it to finish, stop it, or set LATE_DATA_HOME to another directory"
        ) from None
    return lock_file
