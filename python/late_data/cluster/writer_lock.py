"""One writer per schema of the shared catalog: a PostgreSQL advisory lock, held by a psql session
that lives exactly as long as the writing process.

Why an advisory lock in the catalog's own PostgreSQL: it is there whenever the catalog is (no new
service); the lock belongs to a database session, so it is released when the session ends, and the
session ends when the process does, whatever way it ends (its psql reads the process's pipe and
exits at end of input, kill -9 included), so no stale lock outlives a crashed scheduler; it is
taken before Spark starts, so a second writer is refused in about a second. The metastore's own
lock API (HIVE_LOCKS) was the alternative: its locks must be heartbeaten, and one left by a killed
process blocks until hive.txn.timeout expires.
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
from dataclasses import dataclass

from late_data.cluster.common import ClusterSettings
from late_data.cluster.control import saved_settings
from late_data.cluster.postgres import METASTORE_DATABASE, find_psql, psql_args, psql_env
from late_data.cluster.processes import running_pid
from late_data.runtime.environment import ProjectEnvironment
from late_data.runtime.settings import SetupError

log = logging.getLogger(__name__)


@dataclass
class WriterLock:
    session: subprocess.Popen[str]
    schema: str

    def close(self) -> None:
        """Release the lock: psql ends its session at the end of its input."""
        if self.session.poll() is None and self.session.stdin is not None:
            self.session.stdin.close()
            try:
                self.session.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.session.kill()


def lock_key(schema: str) -> int:
    """A stable signed 64-bit advisory lock key for a schema."""
    digest = hashlib.sha256(f"late_data writer:{schema}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def ask(session: subprocess.Popen[str], sql: str) -> str:
    """One statement on the held session; its one-line answer."""
    assert session.stdin is not None and session.stdout is not None
    session.stdin.write(sql + "\n")
    session.stdin.flush()
    answer = session.stdout.readline()
    if not answer:
        error = session.stderr.read() if session.stderr is not None else ""
        raise SetupError(f"the writer lock could not be taken in the cluster's PostgreSQL: {error.strip()}")
    return answer.strip()


def take_writer_lock(environment: ProjectEnvironment, schema: str, command: str) -> WriterLock:
    """Hold the writer lock of `schema` for this process, or refuse naming who holds it."""
    settings = saved_settings(ClusterSettings.from_environment(environment))
    if running_pid(settings, "postgres") is None:
        raise SetupError(
            f"LATE_DATA_TARGET={environment.profile_target} writes to the shared catalog, whose writer lock is in"
            f" the local cluster's PostgreSQL ({settings.cluster_dir}), which is not running: run"
            " `late-data cluster up` with this LATE_DATA_HOME (or set LATE_DATA_WRITER_LOCK=off where something"
            " else ensures one writer per schema)"
        )
    session = subprocess.Popen(
        psql_args(find_psql(), METASTORE_DATABASE),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **psql_env(settings), "PGAPPNAME": f"late-data {command} (pid {os.getpid()})"},
        # Not in the terminal's process group: Ctrl-C reaches the writer, which then ends the session.
        start_new_session=True,
    )
    key = lock_key(schema)
    if ask(session, f"select pg_try_advisory_lock({key});") == "t":
        log.info("holding the writer lock of schema %s", schema)
        return WriterLock(session, schema)
    classid, objid = (key >> 32) & 0xFFFFFFFF, key & 0xFFFFFFFF
    holder = ask(
        session,
        "select coalesce(max(a.application_name || ', since ' || to_char(a.backend_start, 'YYYY-MM-DD HH24:MI:SS')),"
        " 'another session') from pg_locks l join pg_stat_activity a on a.pid = l.pid"
        f" where l.locktype = 'advisory' and l.granted and l.classid = {classid} and l.objid = {objid};",
    )
    WriterLock(session, schema).close()
    raise SetupError(
        f"schema {schema} of the shared catalog is being written by {holder}: one writer (schedule, backfill,"
        " reconcile, demo, bench) per schema at a time; wait for it to end or stop it"
    )
