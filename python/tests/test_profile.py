"""The bench's profiler reads dbt's structured events, as its JSON log writes them (no Spark)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from late_data_bench.profile import (
    EventRecorder,
    logged_statements,
    profile_lines,
    read_json_log,
    statement_kind,
    statement_text,
)

COMMENT = '/* {"app": "dbt", "dbt_version": "1.11.16", "node_id": "model.late_data.water_level_window_means"} */'


def event(name: str, ts: str, thread: str = "Thread-1 (worker)", **data: Any) -> dict[str, Any]:
    return {"info": {"name": name, "ts": f"2026-06-01T10:00:{ts}Z", "thread": thread, "level": "debug"}, "data": data}


RECORDS = [
    event("MainReportVersion", "00.000000", thread="MainThread", version="=1.11.16"),
    event(
        "SQLQuery",
        "01.000000",
        sql=f"{COMMENT}\n\n  insert overwrite table analytics.water_level_window_means\n  select 1",
    ),
    event("NewConnection", "01.500000", thread="Thread-2 (worker)"),
    # dbt's own time of the statement is longer than the gap to the next event: it counts.
    event("SQLQueryStatus", "03.000000", status="OK", elapsed=1.75),
    event("SQLQuery", "03.250000", sql=f"{COMMENT}\n-- a comment line\nmerge into analytics.history as t"),
    event("SQLQueryStatus", "04.000000", status="OK", elapsed=0.5),
    event("CommandCompleted", "04.500000", thread="MainThread"),
]


def test_statements_come_from_sql_query_events() -> None:
    statements, span = logged_statements(RECORDS)
    assert [statement.sql for statement in statements] == [
        "insert overwrite table analytics.water_level_window_means select 1",
        "merge into analytics.history as t",
    ]
    assert [round(statement.seconds, 3) for statement in statements] == [2.0, 1.25]
    assert span == pytest.approx(4.5)


def test_profile_table_keeps_its_shape() -> None:
    assert profile_lines(RECORDS, spark_jobs=3) == [
        "| where | statements | seconds |",
        "|---|---:|---:|",
        "| write: insert overwrite analytics.water_level_window_means | 1 | 2.00 |",
        "| write: merge into analytics.history | 1 | 1.25 |",
        "| dbt between statements (parse reuse, compile, hooks, artifacts) | | 1.25 |",
        "| **invocation** | 2 statements, 3 Spark jobs | **4.50** |",
    ]


def test_kinds_read_the_sql_not_the_query_comment() -> None:
    assert statement_text(f"{COMMENT}\nselect min(ingested_at) from x") == "select min(ingested_at) from x"
    assert statement_kind(statement_text(f"{COMMENT}\nshow table extended in analytics like '*'")) == (
        "catalog and session: describe, show, set, drop"
    )
    assert statement_kind("") == "other statements"
    staged = "water_level_window_means__staged_0123456789ab"
    assert statement_kind(f"cache table {staged} as with x as (select 1) select * from x") == (
        "compute and stage: water_level_window_means"
    )
    assert statement_kind(f"select count(*) from {staged}") == "staged rows: what to write"
    assert statement_kind(f"drop view if exists {staged}") == "staged rows: freed"
    assert statement_kind("insert into analytics.water_level_window_means replace where (partition_start = 1)") == (
        "write: replace partitions of analytics.water_level_window_means"
    )


def test_a_json_log_file_reads_the_same(tmp_path: Path) -> None:
    log = tmp_path / "dbt.log"
    log.write_text("\n".join(json.dumps(record) for record in RECORDS) + "\nnot json\n")
    assert read_json_log(log) == RECORDS
    assert logged_statements(read_json_log(log)) == logged_statements(RECORDS)


def test_the_recorder_gives_json_log_records() -> None:
    from dbt.adapters.events.types import SQLQuery, SQLQueryStatus
    from dbt_common.events.base_types import msg_from_base_event

    recorder = EventRecorder()
    recorder(msg_from_base_event(SQLQuery(conn_name="model.x", sql=f"{COMMENT}\ndelete from analytics.t")))
    recorder(msg_from_base_event(SQLQueryStatus(status="OK", elapsed=0.25)))
    records = recorder.records()
    assert [record["info"]["name"] for record in records] == ["SQLQuery", "SQLQueryStatus"]
    statements, _ = logged_statements(records)
    assert [statement_kind(statement.sql) for statement in statements] == ["write: delete from analytics.t"]
