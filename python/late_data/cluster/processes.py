"""Starting, watching and stopping the cluster's processes by pid file, and who listens on which port
(from /proc, so no other tool is needed)."""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from pathlib import Path

from late_data.cluster.common import (
    MASTER_CLASS,
    METASTORE_CLASS,
    PORT_VARIABLES,
    THRIFT_SERVER_CLASS,
    WORKER_CLASS,
    ClusterSettings,
)
from late_data.runtime.settings import SetupError

log = logging.getLogger(__name__)


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
    if not pid_alive(pid):
        return None
    return pid if marker in settled_command_line(pid) else None


def settled_command_line(pid: int, attempts: int = 40) -> str:
    """The command line of a live process. It reads empty for a moment while the process execs
    (spark-class ends in `exec java ...`): a busy machine made `cluster up` take a master that was
    starting for one that had exited."""
    for _ in range(attempts):
        command = command_line(pid)
        if command or not pid_alive(pid):
            return command
        time.sleep(0.05)
    return ""


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


def exit_description(returncode: int) -> str:
    if returncode < 0:
        return f"killed by {signal.Signals(-returncode).name}"
    return f"exit code {returncode}"


def wait_until(
    what: str,
    ready: Callable[[], bool],
    settings: ClusterSettings,
    *names: str,
    started: MutableMapping[str, subprocess.Popen[bytes]] | None = None,
    restart: Mapping[str, Callable[[], subprocess.Popen[bytes]]] | None = None,
) -> None:
    """Poll `ready` until it holds; fail with the tail of the log when one of the processes `names`
    dies or time is up. A process this call `started` is judged by its handle (its exit code, not
    its pid file), and one of those in `restart` that exits before writing a line to its log is
    started once more: spark-class exits without a word when its launcher fails before Java has
    said anything, which the Thrift Server did once in CI on a machine starting a dozen JVMs."""
    started = {} if started is None else started
    restarted: set[str] = set()
    clock = time.monotonic()
    while not ready():
        for name in names:
            process = started.get(name)
            if process is None:
                if running_pid(settings, name) is None:
                    raise SetupError(f"{name} exited before {what}:\n{log_tail(settings.log_file(name))}")
                continue
            exit_code = process.poll()
            if exit_code is None:
                continue
            how = f"exited ({exit_description(exit_code)})"
            restarter = restart.get(name) if restart is not None else None
            if restarter is not None and name not in restarted and log_is_empty(settings.log_file(name)):
                log.warning("%s %s before writing a line to its log: starting it once more", name, how)
                restarted.add(name)
                started[name] = restarter()
                continue
            raise SetupError(f"{name} {how} before {what}:\n{log_tail(settings.log_file(name))}")
        if time.monotonic() - clock > settings.timeout_seconds:
            raise SetupError(
                f"{', '.join(names)}: not {what} after {settings.timeout_seconds:.0f} s (LATE_DATA_CLUSTER_TIMEOUT):\n"
                + "\n".join(log_tail(settings.log_file(name)) for name in names)
            )
        time.sleep(0.25)
    log.info("%s: %s after %.1f s", ", ".join(names), what, time.monotonic() - clock)


def log_is_empty(path: Path) -> bool:
    try:
        return not path.read_text(errors="replace").strip()
    except FileNotFoundError:
        return True


def log_tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return f"(no log at {path})"
    if not text:
        return f"--- {path} is empty"
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
