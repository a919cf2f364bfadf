"""`late-data load`: files of rows into a pipeline's source, each whole or refused row by row,
stamped once, handed to the scheduler that holds the project and loaded by it between runs."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from late_data.loading.inbox import PENDING, hand_over, hand_over_table, inbox, load_waiting, waiting
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.sql_text import timestamp_literal
from tests.test_init import COLUMNS, run, user_environment

SOURCE = "load_test.meter_readings"


@pytest.fixture
def source(project: DbtProject) -> str:
    project.spark.sql("create schema if not exists load_test")
    project.spark.sql(f"drop table if exists {SOURCE}")
    project.spark.sql(f"create table {SOURCE} ({COLUMNS}) using {project.environment.table_format}")
    return SOURCE


def rows(project: DbtProject) -> list[tuple[str, str, str, float | None, datetime]]:
    return [
        (row.event_id, row.meter_id, f"{row.event_time:%H:%M:%S}", row.kwh, row.ingested_at)
        for row in project.spark.sql(f"select * from {SOURCE} order by ingested_at, event_id").collect()
    ]


@pytest.mark.spark
def test_a_file_loads_whole_with_one_stamp_or_is_refused_naming_each_row(
    project: DbtProject, source: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (tmp_path / "good.csv").write_text(
        "meter_id,event_id,event_time,kwh\nm1,c1,2026-06-01 00:00:10,1.5\nm1,c2,2026-06-01T00:01:10Z,\n"
    )
    (tmp_path / "good.jsonl").write_text(
        '{"event_id": "j1", "meter_id": "m2", "event_time": "2026-06-01 00:02:10", "kwh": 2}\n'
    )
    (tmp_path / "bad.csv").write_text(
        "event_id,meter_id,event_time,kwh\nb1,m1,2026-06-01 00:00:10,abc\nb2,m1,2026-06-01 00:00:20,1\n"
        "b3,m1,2026-06-01 00:00:30,1,surplus\n"
    )
    (tmp_path / "stamped.jsonl").write_text(
        '{"event_id": "s1", "meter_id": "m2", "event_time": "2026-06-01 00:02:10", "kwh": 2, "ingested_at": "2026-06-01"}\n'
    )
    project.spark.sql(
        "select 'p1' as event_id, 'm3' as meter_id, timestamp'2026-06-01 00:03:10' as event_time, 4.0d as kwh"
    ).coalesce(1).write.parquet(str(tmp_path / "parquet"))
    parquet = next((tmp_path / "parquet").glob("*.parquet"))
    files = [tmp_path / "good.csv", tmp_path / "bad.csv", tmp_path / "good.jsonl", parquet, tmp_path / "stamped.jsonl"]
    hand_over(home, source, files)
    # A copy killed before its rename is nobody's file.
    (inbox(home) / source / ".00000000000000000001-deadbeef.csv.x.csv.partial").write_text("event_id\nx\n")
    outcomes = {outcome.name: outcome for outcome in load_waiting(project.spark, home)}
    assert [(name, outcome.rows) for name, outcome in outcomes.items()] == [
        ("good.csv", 2),
        ("bad.csv", 0),
        ("good.jsonl", 1),
        (parquet.name, 1),
        ("stamped.jsonl", 0),
    ]
    assert outcomes["bad.csv"].reasons == (
        'row {"event_id":"b1","meter_id":"m1","event_time":"2026-06-01 00:00:10","kwh":"abc"}: kwh=\'abc\' is not a double',
        "a row that is not csv: b3,m1,2026-06-01 00:00:30,1,surplus",
    )
    assert outcomes["stamped.jsonl"].reasons == (
        "has the column ingested_at: a load stamps every row with the moment it loads it",
    )
    stamps = [outcomes[name].stamp for name in ("good.csv", "good.jsonl", parquet.name)]
    assert stamps == sorted(stamps) and len(set(stamps)) == 3
    # Each file's rows, as they were, with its own stamp; nothing of the refused files.
    assert rows(project) == [
        ("c1", "m1", "00:00:10", 1.5, stamps[0]),
        ("c2", "m1", "00:01:10", None, stamps[0]),
        ("j1", "m2", "00:02:10", 2.0, stamps[1]),
        ("p1", "m3", "00:03:10", 4.0, stamps[2]),
    ]
    refused = inbox(home) / "refused" / source
    assert sorted(path.name.split(".", 2)[-1] for path in refused.iterdir()) == [
        "bad.csv",
        "bad.csv.reasons",
        "stamped.jsonl",
        "stamped.jsonl.reasons",
    ]
    assert waiting(home) == [] and load_waiting(project.spark, home) == []


@pytest.mark.spark
def test_a_loader_killed_after_its_commit_loads_nothing_twice_and_one_killed_before_it_loads_again(
    project: DbtProject, source: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (tmp_path / "committed.csv").write_text("event_id,meter_id,event_time,kwh\nk1,m1,2026-06-01 00:00:10,1\n")
    (tmp_path / "not_committed.csv").write_text("event_id,meter_id,event_time,kwh\nk2,m1,2026-06-01 00:00:20,2\n")
    committed, not_committed = hand_over(home, source, [tmp_path / "committed.csv", tmp_path / "not_committed.csv"])
    # As a loader leaves them when killed: each file's stamp written, the first one's rows committed.
    first, second = datetime(2026, 12, 7, 10, 0, 0, 123456), datetime(2026, 12, 7, 10, 0, 1)
    for path, stamp in ((committed, first), (not_committed, second)):
        path.with_name(f".{path.name}.stamp").write_text(json.dumps({"stamp": stamp.isoformat(sep=" "), "upper": None}))
    project.spark.sql(
        f"insert into {source} values ('k1', 'm1', timestamp'2026-06-01 00:00:10', 1.0, {timestamp_literal(first)})"
    )
    later = datetime(2026, 12, 7, 10, 5)
    outcomes = load_waiting(project.spark, home, now=lambda: later)
    assert [(outcome.name, outcome.rows) for outcome in outcomes] == [("not_committed.csv", 1)]
    assert rows(project) == [("k1", "m1", "00:00:10", 1.0, first), ("k2", "m1", "00:00:20", 2.0, later)]
    assert sorted(path.name for path in (inbox(home) / source).iterdir()) == []


@pytest.mark.spark
def test_files_loaded_while_the_scheduler_runs_count_in_every_window(tmp_path: Path) -> None:
    """As typed: init, a first file loaded, the scheduler started, two files loaded while it holds the
    project (handed to it), one it cannot read; then every window checked against the source."""
    folder = tmp_path / "meters"
    folder.mkdir()
    env = user_environment(tmp_path)
    run(
        [
            *("late-data", "init", "--source", "raw.meter_readings", "--columns", COLUMNS, "--create-source"),
            *("--series-key", "meter_id", "--measure", "reading_count=count", "--measure", "kwh_sum=sum:kwh"),
            *("--window-seconds", "60"),
        ],
        folder,
        env,
    )
    now = datetime.now(UTC).replace(tzinfo=None, microsecond=0)

    def readings(name: str, meter: str, minutes_ago: list[int]) -> Path:
        lines = ["event_id,meter_id,event_time,kwh"] + [
            f"{meter}-{minute},{meter},{now - timedelta(minutes=minute):%Y-%m-%d %H:%M:%S},{minute / 10}"
            for minute in minutes_ago
        ]
        (tmp_path / name).write_text("\n".join(lines) + "\n")
        return tmp_path / name

    first = run(["late-data", "load", "raw.meter_readings", str(readings("first.csv", "m1", [9, 8, 7]))], folder, env)
    assert first.splitlines()[-1].startswith("load: 3 rows of first.csv into raw.meter_readings, ingested_at ")
    scheduler = subprocess.Popen(
        [*("late-data", "schedule", "--no-generate", "--interval", "5", "--offset", "0", "--runs", "5")],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert scheduler.stdout is not None
        output = []
        for line in scheduler.stdout:  # its first run's report: it holds the project
            output.append(line)
            if line.startswith("run_time="):
                break
        handed = run(
            ["late-data", "load", "raw.meter_readings", str(readings("second.csv", "m2", [6, 5, 5, 4]))], folder, env
        )
        assert handed.startswith("load: 1 files handed to the scheduler (pid "), handed
        (tmp_path / "broken.csv").write_text("event_id,meter_id,event_time,kwh\nx,m3,yesterday,1\n")
        run(["late-data", "load", "raw.meter_readings", str(tmp_path / "broken.csv")], folder, env)
        output.extend(scheduler.stdout)
        assert scheduler.wait(timeout=600) == 0, "".join(output)[-3000:]
    finally:
        scheduler.kill()
    log = "".join(output)
    assert "load: 4 rows of second.csv into raw.meter_readings" in log, log[-3000:]
    assert "load: refused broken.csv for raw.meter_readings" in log and "event_time='yesterday'" in log, log[-3000:]
    # 7 readings of 6 minutes (m2's two at 5 minutes ago share a window): 6 windows, each checked.
    checked = run(["late-data", "check"], folder, env)
    assert checked.splitlines()[-1] == "check: 6 windows, 0 too-late entries checked, 0 mismatched", checked
    assert not [path for path in (folder / ".late_data" / "inbox" / "raw.meter_readings").iterdir()]
    assert PENDING.match(next((folder / ".late_data" / "inbox" / "refused" / "raw.meter_readings").iterdir()).name)


@pytest.mark.spark
def test_a_tables_new_rows_load_once_each_after_the_mark_of_the_load_before(
    project: DbtProject, source: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    project.spark.sql("drop table if exists load_test.landing")
    project.spark.sql(
        f"create table load_test.landing ({COLUMNS}, landed_at timestamp, batch string)"
        f" using {project.environment.table_format}"
    )

    def land(event_id: str, landed_minute: int) -> None:
        project.spark.sql(
            f"insert into load_test.landing values ('{event_id}', 'm1', timestamp'2026-06-01 00:00:10', 1.0,"
            f" timestamp'2026-01-01', timestamp'2026-06-01 01:{landed_minute:02d}:00', 'b')"
        )

    def load() -> list[tuple[str, int]]:
        hand_over_table(home, source, "load_test.landing", "landed_at")
        return [
            (outcome.line().split(" ingested_at")[0], outcome.rows) for outcome in load_waiting(project.spark, home)
        ]

    land("t1", 1)
    land("t2", 2)
    first = load()
    assert first == [("load: 2 rows of load_test.landing.landed_at into load_test.meter_readings,", 2)]
    land("t3", 3)
    # A loader killed after its commit: the next one moves the mark on and loads nothing twice.
    killed = hand_over_table(home, source, "load_test.landing", "landed_at")
    left = datetime(2026, 12, 7, 11, 0, 0, 5)
    killed.with_name(f".{killed.name}.stamp").write_text(
        json.dumps({"stamp": left.isoformat(sep=" "), "upper": "2026-06-01 01:03:00"})
    )
    project.spark.sql(
        f"insert into {source} values ('t3', 'm1', timestamp'2026-06-01 00:00:10', 1.0, {timestamp_literal(left)})"
    )
    assert load_waiting(project.spark, home) == []
    assert load() == [("load: nothing new in load_test.landing.landed_at for load_test.meter_readings", 0)]
    land("t4", 4)
    assert load()[0][1] == 1
    assert sorted(row[0] for row in rows(project)) == ["t1", "t2", "t3", "t4"]
