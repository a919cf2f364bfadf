"""PostgreSQL: the database under the Hive metastore (a project-local instance, loopback only, a
generated password), and the advisory locks of the writer lock."""

from __future__ import annotations

import glob
import logging
import os
import pwd
import shutil
import signal
import subprocess
from pathlib import Path

from late_data.cluster.common import INSTALL_POSTGRES, LOOPBACK, ClusterSettings, Tools, secret, write_private
from late_data.cluster.processes import run, running_pid
from late_data.runtime.settings import SetupError

log = logging.getLogger(__name__)

METASTORE_DATABASE = "metastore"
METASTORE_USER = "late_data"
TXN_TABLES_SQL = "cluster/hive-txn-tables.postgres.sql"


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


def metastore_password(settings: ClusterSettings) -> str:
    """LATE_DATA_METASTORE_PASSWORD, else the password generated when the data directory was made."""
    configured = os.environ.get("LATE_DATA_METASTORE_PASSWORD")
    if configured is not None:
        if not configured or "\n" in configured:
            raise SetupError("LATE_DATA_METASTORE_PASSWORD is empty or holds a line break")
        return configured
    generated = settings.secrets_dir / "postgres-password"
    if not generated.exists() and (settings.postgres_data / "PG_VERSION").exists():
        raise SetupError(
            f"{settings.postgres_data} was initialised with a password this cluster did not generate (before"
            " passwords were generated, it was a fixed one): set LATE_DATA_METASTORE_PASSWORD to it, or run"
            f" `late-data cluster down`, remove {settings.postgres_data} (its catalog is lost) and run"
            " `late-data cluster up` again"
        )
    return secret(settings, "postgres-password")


def as_postgres_user(tools: Tools, args: list[str]) -> list[str]:
    return ["runuser", "-u", tools.postgres_os_user, "--", *args] if tools.postgres_os_user else args


def give_to_postgres_user(tools: Tools, path: Path) -> None:
    if tools.postgres_os_user:
        account = pwd.getpwnam(tools.postgres_os_user)
        os.chown(path, account.pw_uid, account.pw_gid)


def init_postgres(settings: ClusterSettings, tools: Tools) -> None:
    """A new PostgreSQL data directory (first start only), owned by the user the server runs as."""
    data = settings.postgres_data
    if (data / "PG_VERSION").exists():
        return
    password = metastore_password(settings)
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
    # initdb reads the password from a file the server's user can read, removed right after.
    password_file = write_private(settings.cluster_dir / "initdb-password", password + "\n")
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
    """Loopback only, no Unix socket: its one client is the metastore service on this machine."""
    log_file = settings.log_file("postgres")
    log_file.touch()
    give_to_postgres_user(tools, log_file)
    options = (
        f"-p {settings.postgres_port} -c listen_addresses={LOOPBACK} -c unix_socket_directories='' "
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


def psql_env(settings: ClusterSettings) -> dict[str, str]:
    """libpq's settings for this cluster's database; the password from a 0600 password file, not
    from the environment or the command line."""
    password = metastore_password(settings).replace("\\", "\\\\").replace(":", "\\:")
    entry = f"{LOOPBACK}:{settings.postgres_port}:*:{METASTORE_USER}:{password}\n"
    passfile = settings.secrets_dir / "pgpass"
    if not passfile.exists() or passfile.read_text() != entry:
        write_private(passfile, entry)
    return {
        "PGHOST": LOOPBACK,
        "PGPORT": str(settings.postgres_port),
        "PGUSER": METASTORE_USER,
        "PGPASSFILE": str(passfile),
        "PGOPTIONS": "-c client_min_messages=warning",
    }


def psql_args(tools_psql: str, database: str) -> list[str]:
    return [tools_psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", "-d", database]


def psql(settings: ClusterSettings, tools: Tools, database: str, *args: str) -> str:
    return run([*psql_args(tools.psql, database), *args], "psql", psql_env(settings))


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
