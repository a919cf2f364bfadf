"""Where the project and its local state live, and the checks that fail early and clearly."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import IO, Any

ICEBERG_JAR_PACKAGE = "snowpark_connect_deps_iceberg"
ICEBERG_JAR_NAME = "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
TABLE_FORMATS = ("iceberg", "delta")
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
        return self.project_dir / "profiles"

    @property
    def dbt_log_dir(self) -> Path:
        return self.home / "logs"

    @property
    def iceberg_jar_link(self) -> Path:
        return self.home / "jars" / "iceberg-spark-runtime.jar"


def find_project_dir() -> Path:
    """The dbt project: LATE_DATA_PROJECT_DIR, else the checkout this package lives in."""
    configured = os.environ.get("LATE_DATA_PROJECT_DIR")
    candidate = Path(configured) if configured else Path(__file__).resolve().parents[2]
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
    require_java()
    home = Path(os.environ.get("LATE_DATA_HOME", project_dir / ".late_data")).resolve()
    environment = ProjectEnvironment(project_dir=project_dir, home=home, table_format=table_format, target=target)
    warehouse = validate_location("LATE_DATA_WAREHOUSE", os.environ.get("LATE_DATA_WAREHOUSE"))
    scratch = validate_location("LATE_DATA_SCRATCH", os.environ.get("LATE_DATA_SCRATCH"))
    if environment.shares_catalog:
        validate_shared_settings(warehouse, scratch)
    if table_format == "delta":
        os.environ["LATE_DATA_DELTA_VERSION"] = check_delta_setup(os.environ.get("DELTA_JARS"))
    home.mkdir(parents=True, exist_ok=True)
    link_iceberg_jar(environment)
    os.environ["LATE_DATA_HOME"] = str(home)
    os.environ["LATE_DATA_TABLE_FORMAT"] = table_format
    os.environ["LATE_DATA_TARGET"] = target
    if warehouse:
        os.environ["LATE_DATA_WAREHOUSE"] = warehouse
    if scratch:
        os.environ["LATE_DATA_SCRATCH"] = scratch
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
    """A warehouse or scratch location: an absolute path (made a plain absolute path) or a URI
    such as hdfs://namenode/warehouse or s3a://bucket/warehouse. Spark would resolve a relative
    path against each process's working directory, so it is refused."""
    if not value:
        return None
    if URI_SCHEME.match(value) or value.startswith("file:/"):
        return value
    if not os.path.isabs(value):
        raise SetupError(
            f"{name}={value!r} is relative: use an absolute path or a URI every Spark process reaches "
            "(hdfs://..., s3a://...)"
        )
    return os.path.normpath(value)


def is_local_location(location: str) -> bool:
    return not URI_SCHEME.match(location) or location.startswith("file:")


def validate_shared_settings(warehouse: str | None, scratch: str | None) -> None:
    """The cluster and thrift targets: ports are ports, and a non-local warehouse needs a scratch
    location that is not local either (the executors write a model's staged rows there)."""
    for name in PORT_SETTINGS:
        port_setting(name)
    if warehouse and not is_local_location(warehouse) and (scratch is None or is_local_location(scratch)):
        raise SetupError(
            f"LATE_DATA_WAREHOUSE={warehouse!r} is not on the local disk but LATE_DATA_SCRATCH is "
            f"{scratch or 'unset (LATE_DATA_HOME/scratch)'}: set LATE_DATA_SCRATCH to a location every executor "
            "reaches, e.g. next to the warehouse"
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
