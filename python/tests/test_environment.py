"""Set-up problems end in a message that says what to do."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from late_data import cli
from late_data.project.generator import Scenario
from late_data.running.scheduler import next_run_time, schedule_times
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.environment import (
    CHECKOUT,
    ProjectEnvironment,
    export_code_commit,
    find_project_dir,
    lock_home,
    prepare_environment,
    require_java,
)
from late_data.runtime.settings import SetupError


def test_missing_java_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SetupError, match="Java was not found"):
        require_java()


def test_unknown_table_format_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LATE_DATA_TABLE_FORMAT", "hudi")
    with pytest.raises(SetupError, match="LATE_DATA_TABLE_FORMAT='hudi' is not supported"):
        prepare_environment()


def test_a_second_process_on_the_same_home_is_refused(tmp_path: Path) -> None:
    environment = ProjectEnvironment(project_dir=tmp_path, home=tmp_path, table_format="iceberg")
    held = lock_home(environment)
    try:
        with pytest.raises(SetupError, match="in use by another process"):
            lock_home(environment)
    finally:
        held.close()
    lock_home(environment).close()  # free again once the holder is gone


def test_the_project_is_the_setting_else_the_dbt_project_in_the_current_directory_else_the_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ingestion script run in a project of one's own (docs/your-own-pipeline.md) reaches that
    project's warehouse, not the demo's."""
    own, elsewhere = tmp_path / "meters", tmp_path / "elsewhere"
    own.mkdir()
    elsewhere.mkdir()
    (own / "dbt_project.yml").write_text("name: meters\n")
    monkeypatch.delenv("LATE_DATA_PROJECT_DIR", raising=False)
    monkeypatch.chdir(own)
    assert find_project_dir() == own
    monkeypatch.chdir(elsewhere)
    assert find_project_dir() == CHECKOUT
    monkeypatch.setenv("LATE_DATA_PROJECT_DIR", str(elsewhere))
    monkeypatch.chdir(own)
    with pytest.raises(SetupError, match=r"no dbt_project.yml in .*elsewhere: set LATE_DATA_PROJECT_DIR"):
        find_project_dir()


def test_scenario_rejects_impossible_shares() -> None:
    with pytest.raises(ValueError, match="late_share must lie in"):
        Scenario(late_share=1.5)
    with pytest.raises(ValueError, match="lateness must be one of"):
        Scenario(lateness="gaussian")
    with pytest.raises(ValueError, match="active_seconds=600 and idle_seconds=0: both positive or both 0"):
        Scenario(active_seconds=600)


def test_real_clock_runs_ten_seconds_after_each_minute() -> None:
    minute, offset = timedelta(minutes=1), timedelta(seconds=10)
    assert next_run_time(datetime(2026, 1, 1, 9, 0, 5), minute, offset) == datetime(2026, 1, 1, 9, 0, 10)
    assert next_run_time(datetime(2026, 1, 1, 9, 0, 10), minute, offset) == datetime(2026, 1, 1, 9, 1, 10)
    assert next_run_time(datetime(2026, 1, 1, 9, 0, 50), minute, offset) == datetime(2026, 1, 1, 9, 1, 10)


def test_simulated_schedule_covers_the_span() -> None:
    times = list(
        schedule_times(datetime(2026, 1, 1), datetime(2026, 1, 1, 0, 30), timedelta(minutes=5), timedelta(seconds=10))
    )
    assert times[0] == datetime(2026, 1, 1, 0, 0, 10)
    assert times[-1] == datetime(2026, 1, 1, 0, 25, 10)
    assert len(times) == 6


def test_dbt_deps_runs_once_per_content_of_the_package_files_one_process_at_a_time(tmp_path: Path) -> None:
    """A fresh clone writes package-lock.yml and packages.yml in either order: the files' times say
    nothing. `dbt deps` replaces the package's link, so a second project (another process of the
    suite) that ran it again while the first parsed would take the package's macros away from it."""
    (tmp_path / "packages.yml").write_text("packages:\n  - local: package\n")
    (tmp_path / "package-lock.yml").write_text("packages:\n  - local: package\n")
    os.utime(tmp_path / "package-lock.yml", (0, 0))  # older than packages.yml, as after a clone
    deps_started: list[float] = []

    def project() -> DbtProject:
        environment = ProjectEnvironment(project_dir=tmp_path, home=tmp_path, table_format="iceberg")
        opened = DbtProject(environment, hold_home=False)

        def fake_deps(args: list[str], manifest: object) -> None:
            assert args == ["deps"]
            deps_started.append(time.monotonic())
            time.sleep(0.5)  # the other thread asks meanwhile, and must wait for this one
            (tmp_path / "dbt_packages" / "late_data").mkdir(parents=True, exist_ok=True)

        opened._invoke_raw = fake_deps  # type: ignore[method-assign]
        return opened

    both = [threading.Thread(target=project().install_packages) for _ in range(2)]
    for thread in both:
        thread.start()
    for thread in both:
        thread.join()
    project().install_packages()  # a later process
    assert len(deps_started) == 1
    (tmp_path / "packages.yml").write_text("packages:\n  - local: ../elsewhere\n")
    project().install_packages()
    assert len(deps_started) == 2  # packages.yml changed: installed again


@pytest.fixture
def fresh_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A fresh LATE_DATA_HOME and none of the settings below; what prepare_environment exports is undone."""
    for name in (*CHECKED_SETTINGS, "LATE_DATA_TARGET", "LATE_DATA_TABLE_FORMAT", "SPARK_CONF_DIR"):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    monkeypatch.setenv("LATE_DATA_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


CHECKED_SETTINGS = (
    "LATE_DATA_SCHEMA",
    "LATE_DATA_CLUSTER_HOST",
    "LATE_DATA_THRIFT_HOST",
    "LATE_DATA_THRIFT_USER",
    "LATE_DATA_DRIVER_MEMORY",
    "LATE_DATA_EXECUTOR_MEMORY",
    "LATE_DATA_SHUFFLE_PARTITIONS",
    "LATE_DATA_APP_CORES",
    "LATE_DATA_THRIFT_POLL_INTERVAL",
    "LATE_DATA_METASTORE_URI",
    "LATE_DATA_CLUSTER_MASTER",
    "LATE_DATA_WAREHOUSE",
    "LATE_DATA_WRITER_LOCK",
    "LATE_DATA_SPARK_LOG_LEVEL",
    "LATE_DATA_CODE_COMMIT",
)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("LATE_DATA_SCHEMA", "an'a lytics", 'LATE_DATA_SCHEMA="an\'a lytics" is not a plain identifier'),
        ("LATE_DATA_SCHEMA", "1st", "LATE_DATA_SCHEMA='1st' is not a plain identifier"),
        ("LATE_DATA_SCHEMA", "analytics;drop", "LATE_DATA_SCHEMA='analytics;drop' is not a plain identifier"),
        (
            "LATE_DATA_CLUSTER_HOST",
            "127.0.0.1 -c ssl=off",
            "LATE_DATA_CLUSTER_HOST='127.0.0.1 -c ssl=off' is not a host",
        ),
        ("LATE_DATA_CLUSTER_HOST", "node_1", "LATE_DATA_CLUSTER_HOST='node_1' is not a host"),
        ("LATE_DATA_CLUSTER_HOST", "::1", "LATE_DATA_CLUSTER_HOST='::1' is not a host name or an IPv4"),
        ("LATE_DATA_THRIFT_HOST", "$(reboot)", r"LATE_DATA_THRIFT_HOST='\$\(reboot\)' is not a host"),
        ("LATE_DATA_THRIFT_USER", "ana lyst", "LATE_DATA_THRIFT_USER='ana lyst' is not a user name"),
        ("LATE_DATA_DRIVER_MEMORY", "8g -Dx=1", "LATE_DATA_DRIVER_MEMORY='8g -Dx=1' is not an amount of memory"),
        ("LATE_DATA_SHUFFLE_PARTITIONS", "0", r"LATE_DATA_SHUFFLE_PARTITIONS='0' is not a whole number \(1 or more\)"),
        ("LATE_DATA_THRIFT_POLL_INTERVAL", "-1", "LATE_DATA_THRIFT_POLL_INTERVAL='-1' is not a whole number"),
        ("LATE_DATA_METASTORE_URI", "thrift://h:1 --x", "LATE_DATA_METASTORE_URI='thrift://h:1 --x' is not a URL"),
        ("LATE_DATA_WAREHOUSE", "/tmp/it's", 'LATE_DATA_WAREHOUSE="/tmp/it\'s" holds a space, quote'),
        ("LATE_DATA_WAREHOUSE", "/data/a,b", "LATE_DATA_WAREHOUSE='/data/a,b' holds a space, quote"),
        ("LATE_DATA_WRITER_LOCK", "maybe", "LATE_DATA_WRITER_LOCK='maybe' is not on or off"),
        ("LATE_DATA_SPARK_LOG_LEVEL", "loud", "LATE_DATA_SPARK_LOG_LEVEL='loud' is not a log level"),
        ("LATE_DATA_CODE_COMMIT", "main; drop", "LATE_DATA_CODE_COMMIT='main; drop' is not a git commit"),
    ],
)
def test_names_and_hosts_are_refused_at_start_up_naming_the_variable(
    fresh_home: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str, message: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SetupError, match=message):
        prepare_environment()
    assert not fresh_home.exists()  # refused before anything was laid out


def test_well_formed_names_and_hosts_pass(fresh_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "LATE_DATA_SCHEMA": "_replay_2",
        "LATE_DATA_CLUSTER_HOST": "spark-1.example.org",
        "LATE_DATA_THRIFT_HOST": "10.0.0.5",
        "LATE_DATA_THRIFT_USER": "ana.lyst@example.org",
        "LATE_DATA_DRIVER_MEMORY": "1536m",
        "LATE_DATA_METASTORE_URI": "thrift://a:9083,thrift://b:9083",
        "LATE_DATA_CODE_COMMIT": "5bcb7b5-dirty",
    }.items():
        monkeypatch.setenv(name, value)
    assert prepare_environment().home == fresh_home


def test_the_raw_schema_var_is_refused_when_it_is_not_an_identifier(fresh_home: Path) -> None:
    environment = prepare_environment()
    with pytest.raises(SetupError, match="var raw_schema='raw; drop table x' is not a plain identifier"):
        DbtProject(environment, project_vars={"raw_schema": "raw; drop table x"})
    project = DbtProject(environment, project_vars={"raw_schema": "raw_replay"})
    try:
        assert project.raw_schema() == "raw_replay"
        with pytest.raises(SetupError, match="var raw_schema"):
            project.use_vars({"raw_schema": "x'y"})
    finally:
        project.close()


def unusable_homes(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    read_only = tmp_path / "read_only"
    read_only.mkdir(mode=0o500)
    # root writes into a 0500 directory: there, a directory of sysfs stands for a read-only one.
    if os.geteuid() == 0:
        read_only = Path("/sys/fs")
    return {
        "a file": (a_file, "is a file, not a directory"),
        "under a file": (a_file / "home", "is not usable"),
        "read-only": (read_only, "is not usable"),
    }


@pytest.mark.parametrize("kind", ["a file", "under a file", "read-only"])
def test_an_unusable_home_is_one_line_naming_late_data_home(
    kind: str, fresh_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home, reason = unusable_homes(fresh_home.parent)[kind]
    monkeypatch.setenv("LATE_DATA_HOME", str(home))
    with pytest.raises(SetupError, match=f"LATE_DATA_HOME={home} {reason}"):
        prepare_environment()
    assert cli.main(["status"]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"late-data: LATE_DATA_HOME={home}") and len(error.strip().splitlines()) == 1


def test_makes_check_for_the_clusters_packages_runs_under_sh_and_sees_what_is_installed() -> None:
    """make runs recipes with /bin/sh, which has no bash builtins (compgen made the "installed?"
    test fail every time, so `make test` ran apt-get on every call): the recipe's condition, run
    as make runs it, must answer what the file system says."""
    import glob
    import re
    import subprocess

    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text()
    condition = re.search(r"^cluster-packages:\n\t@if (.+?); then", makefile, re.MULTILINE)
    assert condition is not None
    probe = subprocess.run(
        ["/bin/sh", "-c", f"if {condition.group(1)}; then echo missing; else echo installed; fi"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert probe.stderr == ""
    installed = bool(glob.glob("/usr/lib/postgresql/*/bin/initdb")) and Path("/usr/share/java/postgresql.jar").is_file()
    assert probe.stdout.strip() == ("installed" if installed else "missing")


def test_the_code_commit_is_the_projects_git_commit_marked_dirty_while_tracked_files_differ(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LATE_DATA_CODE_COMMIT", raising=False)
    export_code_commit(tmp_path)  # not a repository: none
    assert "LATE_DATA_CODE_COMMIT" not in os.environ
    git = lambda *args: subprocess.run(
        ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    git("init", "-q")
    (tmp_path / "model.sql").write_text("select 1 as reading_value\n")
    git("add", "model.sql")
    git("commit", "-q", "-m", "a model")
    head = git("rev-parse", "HEAD")
    export_code_commit(tmp_path)
    assert os.environ["LATE_DATA_CODE_COMMIT"] == head
    monkeypatch.delenv("LATE_DATA_CODE_COMMIT")
    (tmp_path / "model.sql").write_text("select 0.3048 as reading_value\n")
    export_code_commit(tmp_path)
    assert os.environ["LATE_DATA_CODE_COMMIT"] == f"{head}-dirty"
    # The caller's own, once checked, is kept.
    monkeypatch.setenv("LATE_DATA_CODE_COMMIT", "abcdef1")
    export_code_commit(tmp_path)
    assert os.environ["LATE_DATA_CODE_COMMIT"] == "abcdef1"
