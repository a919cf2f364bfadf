"""The project's dbt packages installed once per content of packages.yml and package-lock.yml: `dbt
deps` when either changed since the last install, one process at a time."""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Callable
from pathlib import Path

# In dbt_packages/ (a file, which dbt's package loading skips): what packages.yml and
# package-lock.yml held when `dbt deps` last installed them.
INSTALLED_STAMP = ".late_data_installed"


def packages_fingerprint(project_dir: Path) -> str:
    """A digest of what packages.yml and package-lock.yml hold (the lock may not exist yet)."""
    digest = hashlib.sha256()
    for name in ("packages.yml", "package-lock.yml"):
        path = project_dir / name
        digest.update(name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"") + b"\0")
    return digest.hexdigest()


def packages_installed(project_dir: Path) -> bool:
    """dbt_packages/ holds what packages.yml and package-lock.yml say, as `dbt deps` left it."""
    stamp = project_dir / "dbt_packages" / INSTALLED_STAMP
    return stamp.is_file() and stamp.read_text() == packages_fingerprint(project_dir)


def install_packages(project_dir: Path, run_deps: Callable[[], object]) -> None:
    """`dbt deps` (`run_deps`) once per content of packages.yml and package-lock.yml: not installed
    yet, or either file changed since. By content, not file times: a fresh clone writes the two
    files in any order. One process at a time, the others waiting: `dbt deps` replaces the
    packages' links, and a process parsing the project meanwhile would find the package's macros
    gone."""
    if not (project_dir / "packages.yml").is_file() or packages_installed(project_dir):
        return
    directory = os.open(project_dir, os.O_RDONLY)
    try:
        fcntl.flock(directory, fcntl.LOCK_EX)
        if not packages_installed(project_dir):  # unless the process it waited for installed them
            run_deps()
            (project_dir / "dbt_packages" / INSTALLED_STAMP).write_text(packages_fingerprint(project_dir))
    finally:
        os.close(directory)  # releases the lock
