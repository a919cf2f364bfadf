"""Delta's jars and Python package as one release: where the jars come from (DELTA_JARS, Spark's Ivy
cache or Maven), that the classes Spark loads are that release, and why Delta cannot run when not."""

from __future__ import annotations

import os
import re
import zipfile
from importlib import metadata
from pathlib import Path
from typing import Any

from late_data.runtime.settings import SetupError

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
