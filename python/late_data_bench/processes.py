"""What the bench's process-per-measurement cells share: an environment of their own (a
LATE_DATA_HOME each, the jars of this checkout's) and a function run in a spawned process with it
(one embedded Derby metastore per process)."""

from __future__ import annotations

import logging
import multiprocessing
import os
from pathlib import Path
from typing import Any

from late_data.runtime.environment import CHECKOUT


def environment_for(home: Path, project_dir: Path, schema: str, driver_memory: str = "2g") -> dict[str, str]:
    """This process's environment without its LATE_DATA_ settings (the table format and target
    kept), on LATE_DATA_HOME=`home` (linked to this checkout's jars), `project_dir` and `schema`,
    the driver's memory `driver_memory`. A project without a profile of its own (the example) runs
    on this repository's."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("LATE_DATA_")}
    for name in ("LATE_DATA_TABLE_FORMAT", "LATE_DATA_TARGET"):
        if name in os.environ:
            env[name] = os.environ[name]
    home.mkdir(parents=True, exist_ok=True)
    # The checkout's jars and the JVM's class archive (late-data setup made it), as cron would find them.
    for shared in ("jars", "jvm"):
        source = Path(os.environ.get("LATE_DATA_HOME", CHECKOUT / ".late_data")) / shared
        if source.exists() and not (home / shared).exists():
            (home / shared).symlink_to(source)
    env.update(
        {
            "LATE_DATA_HOME": str(home),
            "LATE_DATA_PROJECT_DIR": str(project_dir),
            "LATE_DATA_SCHEMA": schema,
            "LATE_DATA_DRIVER_MEMORY": driver_memory,
            "DBT_TARGET_PATH": str(home / "target"),
            "DBT_PROFILES_DIR": str(project_dir if (project_dir / "profiles.yml").is_file() else CHECKOUT / "profiles"),
        }
    )
    return env


def in_own_process(target: Any, env: dict[str, str], *args: Any) -> Any:
    """`target(*args)` in a spawned process with `env` (one Derby metastore per process)."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_spawned, args=(target, env, args, queue))
    child.start()
    outcome, value = queue.get()
    child.join()
    if outcome != "ok":
        raise RuntimeError(value)
    return value


def _spawned(target: Any, env: dict[str, str], args: tuple[Any, ...], queue: Any) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    os.environ.clear()
    os.environ.update(env)
    try:
        queue.put(("ok", target(*args)))
    except BaseException as error:
        queue.put(("error", f"{type(error).__name__}: {error}"))
