"""The JVM's archive of Spark's classes (class data sharing), made once per LATE_DATA_HOME by
`late-data setup` and `late-data init`: a JVM that maps it loads most of Spark's classes from it
instead of from the jars, and a plain dbt command, which starts a JVM every time, starts in about
half the time (docs/performance.md). The profiles' JVM options name it; a JVM without it, or with an
archive made by another Java, runs as before (-Xshare:auto).

Made by a process of its own, run as `python -m late_data.runtime.class_archive`: it opens the project's
Spark with -XX:ArchiveClassesAtExit, runs what a scheduled run runs (Iceberg or Delta tables created,
appended, replaced, merged, described and read) in a scratch schema it drops, and ends its JVM,
which writes the archive as it exits.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

SCRATCH = "late_data_class_archive"


def make_class_archive(archive: Path, timeout_seconds: float = 600) -> bool:
    """The archive made, unless it exists; False when this Java cannot make one, or
    LATE_DATA_CLASS_ARCHIVE is `off` (then nothing changes: the profiles run without it)."""
    if archive.is_file():
        return True
    if os.environ.get("LATE_DATA_CLASS_ARCHIVE", "on") == "off":
        return False
    archive.parent.mkdir(parents=True, exist_ok=True)
    # A LATE_DATA_HOME of its own: the project's embedded metastore admits one process, which may be
    # the caller's. Spark's classes come from pyspark's jars whatever the home.
    with tempfile.TemporaryDirectory(prefix="late_data_class_archive_") as scratch:
        env = {
            **os.environ,
            "LATE_DATA_HOME": scratch,
            # dbt's state of its own too: the project's partial parse stays as its runs left it.
            "DBT_TARGET_PATH": str(Path(scratch) / "target"),
            "LATE_DATA_JVM_OPTIONS": f"-XX:ArchiveClassesAtExit={archive} -Xlog:cds=off",
        }
        process = subprocess.run(
            [sys.executable, "-m", "late_data.runtime.class_archive"],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout_seconds,
            check=False,
        )
    if process.returncode != 0 or not archive.is_file():
        log.warning("no class archive made (plain dbt starts its JVM without one): %s", process.stderr[-500:])
        archive.unlink(missing_ok=True)
        return False
    return True


def _workload() -> None:
    from late_data.runtime.dbt_project import DbtProject
    from late_data.runtime.environment import prepare_environment

    environment = prepare_environment()
    project = DbtProject(environment)
    spark = project.spark
    table_format = environment.table_format
    spark.sql(f"create schema if not exists {SCRATCH}")
    try:
        for statement in (
            f"create table {SCRATCH}.versions (event_id string, at timestamp, value double) using {table_format}"
            " partitioned by (at)",
            f"insert into {SCRATCH}.versions values ('a', timestamp'2026-01-01 00:00:00', 1.0)",
            f"cache table {SCRATCH}_staged as select event_id, at, sum(value) over (partition by event_id) as value"
            f" from {SCRATCH}.versions",
            f"insert into {SCRATCH}.versions replace where at = timestamp'2026-01-01 00:00:00'"
            f" select * from {SCRATCH}_staged",
            f"merge into {SCRATCH}.versions as stored using {SCRATCH}_staged as staged on stored.event_id = staged.event_id"
            " when matched then update set * when not matched then insert *",
            f"describe extended {SCRATCH}.versions",
            f"show table extended in {SCRATCH} like '*'",
        ):
            spark.sql(statement).collect()
        spark.sql(f"select count(*), max(at) from {SCRATCH}.versions").collect()
    finally:
        spark.sql(f"drop schema if exists {SCRATCH} cascade")
        project.close()
    # The archive is written as the JVM exits: end it, and wait for it to be gone.
    from pyspark import SparkContext

    gateway_process = SparkContext._gateway.proc  # type: ignore[union-attr]
    jvm = spark._jvm
    spark.stop()
    with contextlib.suppress(Exception):  # the gateway goes with the JVM
        jvm.java.lang.System.exit(0)
    gateway_process.wait(timeout=300)


if __name__ == "__main__":
    _workload()
