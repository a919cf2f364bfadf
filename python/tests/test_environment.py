"""Set-up problems end in a message that says what to do."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from late_data.environment import ProjectEnvironment, SetupError, lock_home, prepare_environment, require_java
from late_data.generator import Scenario
from late_data.pipeline import next_run_time, schedule_times


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


def test_scenario_rejects_impossible_shares() -> None:
    with pytest.raises(ValueError, match="late_share must lie in"):
        Scenario(late_share=1.5)
    with pytest.raises(ValueError, match="lateness must be one of"):
        Scenario(lateness="gaussian")


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
