"""`late-data init`: from an empty folder to a checked pipeline, as a new user goes (each step a
command of its own, its own Spark on the project's own warehouse); and what it refuses to touch."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from late_data.environment import SetupError
from late_data.init import INIT_MARK, plan_project, write_plan

BIN = Path(sys.executable).parent
ORIGIN = datetime(2026, 6, 1)
COLUMNS = "event_id string, meter_id string, event_time timestamp, kwh double, ingested_at timestamp"


def user_environment(tmp_path: Path) -> dict[str, str]:
    """A shell of a new user: none of this repository's settings, Java and the venv on the PATH."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("LATE_DATA_", "DBT_"))}
    env["LATE_DATA_DRIVER_MEMORY"] = "1g"
    env["LATE_DATA_CLASS_ARCHIVE"] = "off"  # 40 s a project; its JVM runs the same without
    env["PATH"] = f"{BIN}:{env.get('PATH', '')}"
    env["HOME"] = str(tmp_path / "home")
    if os.environ.get("LATE_DATA_TABLE_FORMAT") == "delta":
        env["LATE_DATA_TABLE_FORMAT"] = "delta"
        env["DELTA_JARS"] = os.environ.get("DELTA_JARS", "")
    return env


def run(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    process = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert process.returncode == 0, f"{' '.join(args)}:\n{process.stdout[-3000:]}\n{process.stderr[-3000:]}"
    return process.stdout


def insert(project: Path, env: dict[str, str], rows: list[str]) -> None:
    """The user's ingestion: rows appended to the source table with the project's own Spark."""
    sql = f"insert into raw.meter_readings values {', '.join(rows)}"
    script = (
        "from late_data.dbt_project import DbtProject\n"
        "from late_data.environment import prepare_environment\n"
        "project = DbtProject(prepare_environment())\n"
        f"project.execute({sql!r})\n"
        "project.close()\n"
    )
    run([sys.executable, "-c", script], project, {**env, "LATE_DATA_PROJECT_DIR": str(project)})


def reading(event_id: str, meter: str, minute: float, kwh: float, arrived_minute: float) -> str:
    def at(minutes: float) -> str:
        return f"timestamp'{ORIGIN + timedelta(minutes=minutes):%Y-%m-%d %H:%M:%S}'"

    return f"('{event_id}', '{meter}', {at(minute)}, {kwh}, {at(arrived_minute)})"


@pytest.mark.spark
def test_init_takes_an_empty_folder_to_a_pipeline_that_builds_and_checks(tmp_path: Path) -> None:
    folder = tmp_path / "meters_at_home"
    env = user_environment(tmp_path)
    folder.mkdir()
    out = run(
        [
            "late-data",
            "init",
            "--source",
            "raw.meter_readings",
            "--columns",
            COLUMNS,
            "--create-source",
            "--series-key",
            "meter_id",
            "--measure",
            "reading_count=count",
            "--measure",
            "kwh_sum=sum:kwh",
            "--measure",
            "kwh_max=max:kwh",
            "--late-window-seconds",
            "1800",
        ],
        folder,
        env,
    )
    assert "init: created raw.meter_readings" in out and "init: wrote models/meter_readings.yml" in out
    written = [path.relative_to(folder) for path in folder.rglob("*") if path.suffix in (".sql", ".yml")]
    assert sorted(str(path) for path in written if path.parts[0] not in (".late_data", "dbt_packages")) == [
        "dbt_project.yml",
        "macros/late_data.sql",
        "models/meter_readings.sql",
        "models/meter_readings.yml",
        "package-lock.yml",  # dbt deps'
        "packages.yml",
        "profiles.yml",
    ]
    insert(
        folder,
        env,
        [reading(f"m1-{minute}", "m1", minute, 1.0 + minute, minute + 0.1) for minute in range(0, 30, 2)]
        + [reading("m2-3", "m2", 3, 9.0, 3.2), reading("m2-3", "m2", 3, 9.0, 3.2)],  # a copy delivered together
    )
    run(["dbt", "build", "--vars", json.dumps({"run_time": "2026-06-01 00:30:10"})], folder, env)
    insert(
        folder,
        env,
        [
            reading("m1-late", "m1", 7, 5.0, 31),  # late, in time
            reading("m1-4", "m1", 4, 0.5, 32),  # a correction
            reading("m2-too-late", "m2", 1, 2.0, 80),  # its window was final at 00:35
        ],
    )
    run(["dbt", "build", "--vars", json.dumps({"run_time": "2026-06-01 01:21:10"})], folder, env)
    checked = run(["late-data", "--project-dir", str(folder), "check"], folder, env)
    assert checked.splitlines()[-1] == "check: 7 windows, 1 too-late entries checked, 0 mismatched", checked


def test_init_writes_nothing_over_a_file_of_yours(tmp_path: Path) -> None:
    """In an existing project init checks what it needs and refuses in one line, writing nothing."""
    (tmp_path / "dbt_project.yml").write_text("name: shop\nprofile: shop\n")
    with pytest.raises(SetupError, match="lacks the late_data hooks: add on-run-start"):
        plan_project(tmp_path, "shop", "iceberg", "../late_data/package")
    (tmp_path / "dbt_project.yml").write_text(
        'name: shop\nprofile: shop\non-run-start: ["{{ late_data.on_run_start() }}"]\n'
        'on-run-end: ["{{ late_data.on_run_end(results) }}"]\n'
    )
    (tmp_path / "packages.yml").write_text("packages:\n  - package: dbt-labs/dbt_utils\n")
    with pytest.raises(
        SetupError, match=re.escape("does not install the late_data package: add `- local: ../late_data/package`")
    ):
        plan_project(tmp_path, "shop", "iceberg", "../late_data/package")
    (tmp_path / "packages.yml").write_text("packages:\n  - local: ../late_data/package\n")
    (tmp_path / "macros").mkdir()
    (tmp_path / "macros" / "late_data.sql").write_text("-- my own\n")
    with pytest.raises(SetupError, match=re.escape("late_data.sql exists and is not late-data init's")):
        plan_project(tmp_path, "shop", "iceberg", "../late_data/package")
    (tmp_path / "macros" / "late_data.sql").unlink()
    plan = plan_project(tmp_path, "shop", "iceberg", "../late_data/package")
    # Only the snapshot wrapper: the project's files and its profile stay the user's.
    assert list(plan.files) == [tmp_path / "macros" / "late_data.sql"]


def test_init_writes_its_own_files_again_and_the_same(tmp_path: Path) -> None:
    first = write_plan(plan_project(tmp_path, "meters", "iceberg", "/opt/late_data/package"))
    texts = {path: path.read_text() for path in first}
    assert all(INIT_MARK in text.splitlines()[0] for text in texts.values())
    again = write_plan(plan_project(tmp_path, "meters", "iceberg", "/opt/late_data/package"))
    assert {path: path.read_text() for path in again} == texts
