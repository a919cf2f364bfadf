"""Where the project and its local state live, and the checks that fail early and clearly."""

from __future__ import annotations

import fcntl
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import IO

ICEBERG_JAR_PACKAGE = "snowpark_connect_deps_iceberg"
ICEBERG_JAR_NAME = "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
TABLE_FORMATS = ("iceberg", "delta")


class SetupError(RuntimeError):
    """Something the machine or the configuration lacks; the message says what to do."""


@dataclass(frozen=True)
class ProjectEnvironment:
    project_dir: Path
    home: Path
    table_format: str

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
        raise SetupError(
            f"no dbt_project.yml in {candidate}: set LATE_DATA_PROJECT_DIR to the project root"
        )
    return candidate


def prepare_environment() -> ProjectEnvironment:
    """Check Java and the table format, lay out LATE_DATA_HOME and export what the profile reads."""
    project_dir = find_project_dir()
    table_format = os.environ.get("LATE_DATA_TABLE_FORMAT", "iceberg")
    if table_format not in TABLE_FORMATS:
        raise SetupError(
            f"LATE_DATA_TABLE_FORMAT={table_format!r} is not supported: use one of {TABLE_FORMATS}"
        )
    require_java()
    home = Path(os.environ.get("LATE_DATA_HOME", project_dir / ".late_data")).resolve()
    environment = ProjectEnvironment(project_dir=project_dir, home=home, table_format=table_format)
    home.mkdir(parents=True, exist_ok=True)
    link_iceberg_jar(environment)
    os.environ["LATE_DATA_HOME"] = str(home)
    os.environ["LATE_DATA_TABLE_FORMAT"] = table_format
    os.environ["DBT_PROFILES_DIR"] = str(environment.profiles_dir)
    return environment


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


def lock_home(environment: ProjectEnvironment) -> IO[str]:
    """Hold LATE_DATA_HOME for this process: its embedded Derby metastore admits one process."""
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
