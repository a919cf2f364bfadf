"""`late-data init`: from an empty folder to a checked pipeline, as a new user goes (each step a
command of its own, its own Spark on the project's own warehouse); and what it refuses to touch."""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import yaml

from late_data.arguments import build_parser
from late_data.commands.init import _pipeline_args, next_steps, plan_pipeline, plan_project, write_plan
from late_data.commands.init_files import INIT_MARK, pipeline_yml
from late_data.commands.init_spec import InitPlan, PipelineSpec, SourceTable
from late_data.runtime.settings import SetupError

BIN = Path(sys.executable).parent
ORIGIN = datetime(2026, 6, 1)
COLUMNS = "event_id string, meter_id string, event_time timestamp, kwh double, ingested_at timestamp"


def user_environment(tmp_path: Path) -> dict[str, str]:
    """A shell of a new user: none of this repository's settings, Java and the venv on the PATH; but
    the JVM options of the suite's Spark (conftest.suite_jvm_options): the checkout's class archive
    serves the same jars, where a project's own costs 40 s to make (2026-12-02: 217 -> 171 CPU s)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("LATE_DATA_", "DBT_"))}
    env["LATE_DATA_DRIVER_MEMORY"] = "1g"
    env["LATE_DATA_CLASS_ARCHIVE"] = "off"
    env["LATE_DATA_JVM_OPTIONS"] = os.environ["LATE_DATA_JVM_OPTIONS"]
    env["PATH"] = f"{BIN}:{env.get('PATH', '')}"
    env["HOME"] = str(tmp_path / "home")
    if os.environ.get("LATE_DATA_TABLE_FORMAT") == "delta":
        env["LATE_DATA_TABLE_FORMAT"] = "delta"
        env["DELTA_JARS"] = os.environ.get("DELTA_JARS", "")
    return env


def run(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    process = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False)
    errors = [line for line in process.stdout.splitlines() if "rror" in line][:20]
    assert process.returncode == 0, (
        f"{' '.join(args)}:\n{process.stdout[-3000:]}\n{process.stderr[-3000:]}\n" + "\n".join(errors)
    )
    return process.stdout


def insert(project: Path, env: dict[str, str], rows: list[dict[str, str | float]]) -> None:
    """The user's ingestion, as docs/your-own-pipeline.md shows it: rows appended to the source
    table with the project's own Spark through the names `late_data` itself exports."""
    script = (
        "import json, sys\n"
        "from datetime import datetime\n"
        "from late_data import append_rows, open_project\n"
        "rows = [{**row, 'event_time': datetime.fromisoformat(row['event_time']),"
        " 'ingested_at': datetime.fromisoformat(row['ingested_at'])} for row in json.loads(sys.argv[1])]\n"
        f"project = open_project({str(project)!r})\n"
        "assert append_rows(project, 'raw.meter_readings', rows) == len(rows)\n"
        "project.close()\n"
    )
    # A laptop's own time zone: the rows' naive datetimes are UTC all the same.
    run([sys.executable, "-c", script, json.dumps(rows)], project, {**env, "TZ": "America/New_York"})


def reading(event_id: str, meter: str, minute: float, kwh: float, arrived_minute: float) -> dict[str, str | float]:
    def at(minutes: float) -> str:
        return f"{ORIGIN + timedelta(minutes=minutes):%Y-%m-%d %H:%M:%S}"

    return {
        "event_id": event_id,
        "meter_id": meter,
        "event_time": at(minute),
        "kwh": kwh,
        "ingested_at": at(arrived_minute),
    }


def users_own_profile(env: dict[str, str]) -> None:
    """A profile of the user's in ~/.dbt, as dbt's docs lay one out: its default target a Thrift
    Server this machine cannot reach, `dev` a Spark session on the project's own warehouse (the
    embedded output of this repository's profile)."""
    ours = yaml.safe_load((Path(__file__).parents[2] / "profiles" / "profiles.yml").read_text())["late_data"]
    dev = ours["outputs"][env.get("LATE_DATA_TABLE_FORMAT", "iceberg")]
    prod = {"type": "spark", "method": "thrift", "host": "spark.prod.invalid", "port": 10000, "schema": "analytics"}
    profiles = Path(env["HOME"]) / ".dbt" / "profiles.yml"
    profiles.parent.mkdir(parents=True)
    profiles.write_text(yaml.safe_dump({"warehouse": {"target": "prod", "outputs": {"prod": prod, "dev": dev}}}))


@pytest.mark.spark
def test_init_takes_an_empty_folder_to_a_pipeline_that_builds_and_checks(tmp_path: Path) -> None:
    """With the user's own dbt profile (--profile, --target): the project uses it, writes none, and
    every command init prints reaches that target."""
    folder = tmp_path / "meters_at_home"
    env = user_environment(tmp_path)
    users_own_profile(env)
    folder.mkdir()
    out = run(
        [
            "late-data",
            "init",
            *("--profile", "warehouse", "--target", "dev"),
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
    ]
    assert "profile: warehouse" in (folder / "dbt_project.yml").read_text()
    # Every command init printed carries the target (dbt's DBT_TARGET); ~/.dbt is dbt's own default.
    printed = [line for line in out.splitlines() if "dbt build" in line or " check" in line]
    assert len(printed) == 4 and all("DBT_TARGET=dev " in line for line in printed), out
    assert "DBT_PROFILES_DIR" not in out, out
    # The user's own shell types the target for their own commands (ingestion, the first build).
    targeted = {**env, "DBT_TARGET": "dev"}
    # The user's ingestion, in one Spark: what arrives after the first build is stamped after its run
    # time (00:30:10), and a build loads only rows stamped by its own (one JVM fewer than inserting
    # between the builds, which loads the same rows at the same runs).
    insert(
        folder,
        targeted,
        [reading(f"m1-{minute}", "m1", minute, 1.0 + minute, minute + 0.1) for minute in range(0, 30, 2)]
        + [reading("m2-3", "m2", 3, 9.0, 3.2), reading("m2-3", "m2", 3, 9.0, 3.2)]  # a copy delivered together
        + [
            reading("m1-late", "m1", 7, 5.0, 31),  # late, in time
            reading("m1-4", "m1", 4, 0.5, 32),  # a correction
            reading("m2-too-late", "m2", 1, 2.0, 80),  # its window was final at 00:35
        ],
    )
    # A second pipeline on the same source, as sessions, from init's arguments (what init writes once
    # it has found the source, without a second Spark: the first init proved that part): no window size.
    arguments = build_parser().parse_args(
        [
            *("init", "--source", "raw.meter_readings", "--pipeline", "meter_sessions", "--columns", COLUMNS),
            *("--series-key", "meter_id", "--session-gap-seconds", "600", "--max-session-seconds", "3600"),
            *("--late-window-seconds", "1800"),
        ]
    )
    sessions = InitPlan(folder)
    plan_pipeline(sessions, PipelineSpec(**_pipeline_args(arguments)), "iceberg")
    write_plan(sessions)
    session_settings = (folder / "models" / "meter_sessions.yml").read_text()
    assert "session_gap_seconds: 600" in session_settings and "window_size_seconds" not in session_settings
    # The run time in the environment, as the docs and init's next lines pass it.
    run(["dbt", "build"], folder, {**targeted, "LATE_DATA_RUN_TIME": "2026-06-01 00:30:10"})
    # Then the crontab line init printed, as cron runs it (the run time here is pinned; cron's is the
    # invocation's start), twice: the tagged pipeline, its tests and its history, one at a time.
    every_minute, hourly = [line.strip().split(" ", 5)[5] for line in out.splitlines() if " * * * * " in line]
    # While a late-data command holds the project's home, the minute's run is skipped at once.
    with open(folder / ".late_data" / "late_data.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        skipped = subprocess.run(["sh", "-c", every_minute], cwd=folder, env=env, timeout=60, check=False)
    assert skipped.returncode == 1 and not (folder / ".late_data" / "cron.log").read_text().strip()
    for run_time in ("2026-06-01 01:21:10", "2026-06-01 01:22:10"):
        run(["sh", "-c", every_minute], folder, {**env, "LATE_DATA_RUN_TIME": run_time})
    run(["sh", "-c", hourly], folder, env)
    cron_log = (folder / ".late_data" / "cron.log").read_text()
    # Both pipelines (init tags each) and their histories, each run, with no error; then maintenance.
    assert cron_log.count("ERROR=0 SKIP=0") == 2 and cron_log.count("OK snapshotted") == 4, cron_log[-3000:]
    assert "late_data.maintain_tables" in cron_log and "Encountered an error" not in cron_log, cron_log[-3000:]
    # The run time changed between the builds and dbt did not parse the project again.
    assert "Unable to do partial parsing" not in cron_log, cron_log
    # init's printed check, for both pipelines (it names the one init wrote).
    check = next(line for line in out.splitlines() if " check " in line).removeprefix("next: ").split("   #")[0]
    check = check.replace(" --pipeline meter_readings", "")
    checked = run(["sh", "-c", check], folder, env)
    assert checked.splitlines()[-1] == "check: 9 windows, 2 too-late entries checked, 0 mismatched", checked


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


def test_init_writes_a_session_pipeline_without_a_window_size() -> None:
    """--session-gap-seconds (and --max-session-seconds) make a session pipeline: no window size in
    its yml, which a session pipeline refuses; fixed windows and sessions together are refused."""
    source = SourceTable("raw", "meter_readings", (("meter_id", "string"),))
    spec = PipelineSpec(
        "meter_sessions",
        source,
        "meter_id",
        (("reading_count", "count", None),),
        None,
        session_gap_seconds=600,
        max_session_seconds=3600,
    )
    settings = yaml.safe_load(pipeline_yml(spec, "iceberg"))["models"][0]["config"]["meta"]["late_data"]
    assert settings == {
        "series_key": "meter_id",
        "session_gap_seconds": 600,
        "max_session_seconds": 3600,
        "late_window_seconds": 3600,
        "partition_size_seconds": 3600,
        "measures": {"reading_count": "count"},
    }
    arguments = build_parser().parse_args(["init", "--source", "raw.t", "--series-key", "k"])
    for given, message in (
        ({"session_gap_seconds": 600, "window_seconds": 60}, "--window-seconds and --session-gap-seconds"),
        ({"max_session_seconds": 3600}, "--max-session-seconds needs --session-gap-seconds"),
    ):
        with pytest.raises(SetupError, match=message):
            _pipeline_args(argparse.Namespace(**{**vars(arguments), **given}))


def test_a_second_pipeline_on_a_source_reads_the_first_ones_declaration(tmp_path: Path) -> None:
    """dbt refuses a source declared twice: the second pipeline's yml leaves it to the first's."""
    source = SourceTable("raw", "meter_readings", (("meter_id", "string"),))
    for name in ("meter_readings", "meter_sessions"):
        plan = InitPlan(tmp_path)
        plan_pipeline(plan, PipelineSpec(name, source, "meter_id", (("reading_count", "count", None),)), "iceberg")
        write_plan(plan)
    first, second = (
        yaml.safe_load((tmp_path / "models" / f"{name}.yml").read_text())
        for name in ("meter_readings", "meter_sessions")
    )
    assert [table["name"] for table in first["sources"][0]["tables"]] == ["meter_readings"]
    assert "sources" not in second and second["models"][0]["name"] == "meter_sessions"


def test_init_next_lines_load_before_the_first_build_with_the_run_time_in_the_environment(tmp_path: Path) -> None:
    source = SourceTable("raw", "meter_readings", (("meter_id", "string"),))
    spec = PipelineSpec("meter_readings", source, "meter_id", (("reading_count", "count", None),))
    lines = next_steps(tmp_path, spec)
    assert lines[0].startswith("next: load the rows you have into raw.meter_readings first")
    assert 'LATE_DATA_RUN_TIME="<now, UTC>" dbt build' in lines[1] and "--vars" not in "".join(lines)
    # The crontab selects what init tagged, with this environment's dbt (cron's PATH has none), one
    # run at a time; its maintenance waits for the minute's run.
    every_minute, hourly = (line.strip() for line in lines if " * * * * " in line)
    dbt = str(Path(sys.executable).parent / "dbt")
    assert every_minute.endswith(
        f"flock -n .late_data/late_data.lock {dbt} build --select tag:late_data >> .late_data/cron.log 2>&1"
    )
    assert (
        hourly.startswith("30 * * * * ")
        and f"flock .late_data/late_data.lock {dbt} run-operation late_data.maintain_tables" in hourly
    )
    # Airflow's task runs the same command, lock included.
    airflow = lines[lines.index("next: or from Airflow, the same command (docs/running.md#from-cron-or-airflow):") + 1]
    assert airflow.strip() == f'BashOperator(task_id="late_data_build", bash_command={every_minute.split(" ", 5)[5]!r})'
    written = yaml.safe_load(pipeline_yml(spec, "iceberg"))
    assert written["models"][0]["config"]["tags"] == ["late_data"] == written["snapshots"][0]["config"]["tags"]


def test_init_writes_its_own_files_again_and_the_same(tmp_path: Path) -> None:
    first = write_plan(plan_project(tmp_path, "meters", "iceberg", "/opt/late_data/package"))
    texts = {path: path.read_text() for path in first}
    assert all(INIT_MARK in text.splitlines()[0] for text in texts.values())
    again = write_plan(plan_project(tmp_path, "meters", "iceberg", "/opt/late_data/package"))
    assert {path: path.read_text() for path in again} == texts


def test_init_refuses_a_profile_it_cannot_use_in_one_line_before_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--profile and --target are checked against the user's profiles.yml before anything is written."""
    from late_data.commands.init import find_user_profile, init_project

    monkeypatch.setenv("DBT_PROFILES_DIR", str(tmp_path / "profiles"))
    with pytest.raises(SetupError, match=r"--profile warehouse: no .*profiles\.yml \(set DBT_PROFILES_DIR"):
        find_user_profile("warehouse", None, tmp_path)
    (tmp_path / "profiles").mkdir()
    session = {"type": "spark", "method": "session", "host": "localhost", "schema": "analytics"}
    outputs = {
        "dev": session,
        "prod": {**session, "method": "thrift"},
        "pg": {"type": "postgres"},
        "ci": {**session, "method": "{{ env_var('SPARK_METHOD') }}"},
    }
    (tmp_path / "profiles" / "profiles.yml").write_text(
        yaml.safe_dump({"warehouse": {"target": "prod", "outputs": outputs}, "config": {}})
    )
    for name, target, message in (
        ("shop", None, re.escape("has no profile shop (it has: warehouse)")),
        ("warehouse", "qa", r"--target qa: the profile warehouse in .* has no target qa \(it has: ci, dev, pg, prod\)"),
        ("warehouse", None, "its target prod uses method thrift; the late-data commands need a Spark session"),
        ("warehouse", "pg", "its target pg is type postgres"),
        ("ware house", None, "a dbt profile's name is letters"),
    ):
        with pytest.raises(SetupError, match=message):
            find_user_profile(name, target, tmp_path)
    assert find_user_profile("warehouse", "dev", tmp_path).target == "dev"
    assert (
        find_user_profile("warehouse", "ci", tmp_path).profiles_dir == (tmp_path / "profiles").resolve()
    )  # dbt renders it
    # Without --profile, --target names a shared catalog; refused before a file is written.
    folder = tmp_path / "project"
    arguments = build_parser().parse_args(["init", "--dir", str(folder), "--target", "dev"])
    with pytest.raises(SetupError, match="--target dev: without --profile, a shared catalog's target"):
        init_project(arguments)
    arguments = build_parser().parse_args(["init", "--dir", str(folder), "--profile", "warehouse"])
    with pytest.raises(SetupError, match="uses method thrift"):
        init_project(arguments)
    assert not any(folder.iterdir())
    # An existing project keeps its own profile: --profile naming another is refused.
    (folder / "dbt_project.yml").write_text(
        'name: shop\nprofile: shop\non-run-start: ["{{ late_data.on_run_start() }}"]\n'
        'on-run-end: ["{{ late_data.on_run_end(results) }}"]\n'
    )
    with pytest.raises(SetupError, match=r"--profile warehouse: .* uses the profile shop"):
        plan_project(folder, "shop", "iceberg", "../package", find_user_profile("warehouse", "dev", folder))
