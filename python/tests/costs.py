"""What a test process cost in CPU, its own and that of every process it started (its Spark JVM,
the fault drivers, a local cluster's servers): a thread reads /proc each second and keeps, for
every process descended from this one, the CPU seconds it last showed. A process once seen stays
counted after it is re-parented (a daemon whose starter exited); a process that lives under a
second between two readings is missed, so the figure is a floor.

`make test` prints, at its end, each process's seconds and the suite's in one line
(conftest.pytest_terminal_summary): the pytest-xdist workers send theirs to the controller, the Delta
proofs write theirs beside their log."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds user + system) of a live process, or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


class CpuSampler:
    """CPU seconds of this process and its descendants, read each `interval` seconds."""

    def __init__(self, interval: float = 1.0) -> None:
        self.root = os.getpid()
        self.interval = interval
        self.started = time.monotonic()
        self.seconds: dict[int, float] = {}  # pid -> CPU seconds it last showed
        # The sampling thread and the test hooks (total(), per test) both read and update `seconds`.
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cpu-sampler", daemon=True)

    def start(self) -> CpuSampler:
        if Path("/proc/self/stat").exists():
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def sample(self) -> None:
        stats = {}
        for entry in os.scandir("/proc"):
            if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None:
                stats[int(entry.name)] = stat
        with self._lock:
            tracked = set(self.seconds) | {self.root}
            grown = True
            while grown:  # descendants of anything tracked, however deep
                new = {pid for pid, (parent, _) in stats.items() if parent in tracked and pid not in tracked}
                tracked |= new
                grown = bool(new)
            for pid in tracked:
                if pid in stats:
                    self.seconds[pid] = max(self.seconds.get(pid, 0.0), stats[pid][1])

    def total(self) -> float:
        """CPU seconds of this process and its descendants so far (read now)."""
        self.sample()
        with self._lock:
            return sum(self.seconds.values())

    def stop(self) -> dict[str, float]:
        """Stop sampling; wall seconds, this process's CPU seconds and its descendants'."""
        self.sample()
        self._stop.set()
        with self._lock:
            own = self.seconds.get(self.root, 0.0)
            descendants = sum(self.seconds.values()) - own
        return {
            "wall": round(time.monotonic() - self.started, 1),
            "own": round(own, 1),
            "descendants": round(descendants, 1),
        }


def write(path: Path, cost: dict[str, Any]) -> None:
    path.write_text(json.dumps(cost))


def read(path: Path) -> dict[str, Any] | None:
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return None


def line(costs: dict[str, dict[str, float]], wall: float, outcome: str) -> str:
    """The suite's cost in one line: wall time, CPU in all and per process."""
    cpu = {name: cost["own"] + cost["descendants"] for name, cost in costs.items()}
    parts = ", ".join(f"{name} {seconds / 60:.1f}" for name, seconds in sorted(cpu.items()))
    return f"suite cost: {wall / 60:.1f} min wall, {sum(cpu.values()) / 60:.1f} CPU-min ({parts}); {outcome}"
