"""Where one dbt invocation's time goes: its statements' wall time, from dbt's structured events.

dbt describes every step as an event; its JSON log (`--log-format-file json`) writes each as one
record `{"info": {"name", "ts", "thread", ...}, "data": {...}}`. A statement is a `SQLQuery` event
(`data.sql`) and, when it returns, a `SQLQueryStatus` event (`data.elapsed`, dbt's own seconds).
The bench gets the same records in process, from a dbtRunner callback (EventRecorder), so the
project's text log (LATE_DATA_HOME/logs/dbt.log) stays as users read it; `read_json_log` reads
them from a JSON log file. No regular expressions over log text: a change in dbt's wording or
colours cannot silently empty the profile.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

# Statement kinds, by the statement's first SQL text; the first match wins, {0} is the first group.
STATEMENT_KINDS = (
    (re.compile(r"cache (?:lazy )?table (\S+?)__staged_[0-9a-f]+ as"), "compute and stage: {0}"),
    # The version chain a result stages for its too-late listing (late_data.shared_chain): its
    # view, then its cache (where the chain is worked out), then its drop.
    (re.compile(r"create global temporary view (\S+?)__chain_"), "version chain: view over {0}"),
    (re.compile(r"cache (?:lazy )?table global_temp\.(\S+?)__chain_"), "version chain: compute and stage over {0}"),
    (re.compile(r"drop view if exists global_temp\.\S+__chain_"), "staged rows: freed"),
    (re.compile(r"insert into (\S+) replace where"), "write: replace partitions of {0}"),
    (re.compile(r"insert overwrite directory '[^']*/([^/']+)'"), "compute and stage: {0}"),
    (re.compile(r"insert overwrite (?:table )?(\S+)"), "write: insert overwrite {0}"),
    (re.compile(r"merge into (\S+)"), "write: merge into {0}"),
    (re.compile(r"create (?:or replace )?table (?!if not exists)(\S+)"), "write: create table {0}"),
    (re.compile(r"insert into (?:table )?(\S+)"), "write: insert into {0}"),
    (re.compile(r"delete from (\S+)"), "write: delete from {0}"),
    (re.compile(r"select\s+model,|select '\w+', null, null, null, max\(written_at\)"), "run audit: last runs"),
    (re.compile(r"select (?:partition_start|count)"), "staged rows: what to write"),
    (re.compile(r"drop view if exists \S+__staged_"), "staged rows: freed"),
    (re.compile(r"select min\(ingested_at\)"), "recompute: earliest arrival"),
    (re.compile(r"create (?:or replace )?(?:temporary )?view"), "views: temporary and snapshot staging"),
    (
        re.compile(
            r"(?:describe|show|set|reset|drop view|drop table|create table if not exists|create schema|select \* from values)\b"
        ),
        "catalog and session: describe, show, set, drop",
    ),
)

SQL_QUERY = "SQLQuery"
SQL_QUERY_STATUS = "SQLQueryStatus"
# Enough of a statement to tell its kind; the rest (a model's whole query) is not kept.
SQL_PREFIX_CHARS = 300


@dataclass(frozen=True)
class LoggedStatement:
    sql: str
    seconds: float


@dataclass
class EventRecorder:
    """A dbtRunner callback keeping every event of the invocations it is registered for. Events
    are converted to JSON-log records only when asked (`records`), outside any timed section."""

    messages: list[Any] = field(default_factory=list)

    def __call__(self, message: Any) -> None:
        self.messages.append(message)

    def records(self) -> list[dict[str, Any]]:
        """The events as the records dbt's JSON log would hold (dbt's own conversion)."""
        from dbt_common.events.functions import msg_to_dict

        return [msg_to_dict(message) for message in self.messages]


def read_json_log(log_path: Path, start: int = 0, end: int | None = None) -> list[dict[str, Any]]:
    """The records of a JSON log (dbt `--log-format-file json`) between two byte offsets; lines
    that are not JSON records (another writer, a torn last line) are skipped."""
    with log_path.open("rb") as handle:
        handle.seek(start)
        data = handle.read() if end is None else handle.read(end - start)
    records = []
    for line in data.decode("utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("info"), dict):
            records.append(record)
    return records


def _timestamp(record: dict[str, Any]) -> datetime:
    """An event's time: ISO 8601 in UTC, with up to nanoseconds (protobuf's Timestamp)."""
    text = str(record["info"]["ts"]).removesuffix("Z")
    whole, _, fraction = text.partition(".")
    return datetime.fromisoformat(f"{whole}.{(fraction + '000000')[:6]}")


def statement_text(sql: str) -> str:
    """The start of a statement's SQL on one line, without dbt's query comment (`/* {...} */`,
    prepended to every statement) and comment lines: what its kind is read from."""
    text = ""
    for line in sql.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("/*", "--")):
            continue
        text = f"{text} {stripped}" if text else stripped
        if len(text) >= SQL_PREFIX_CHARS:
            break
    return text


def logged_statements(records: list[dict[str, Any]]) -> tuple[list[LoggedStatement], float]:
    """The SQL statements among one invocation's event records, each with the wall seconds from
    its start to the next event of another statement or of dbt (fetching its result included),
    and the span of all the records."""
    events = [(_timestamp(record), record) for record in records]
    statements: list[LoggedStatement] = []
    running: dict[str, int] = {}  # thread -> index of its statement awaiting its SQLQueryStatus
    for (moment, record), (following, _) in pairwise(events):
        seconds = (following - moment).total_seconds()
        name, thread, data = record["info"]["name"], record["info"].get("thread", ""), record.get("data", {})
        if name == SQL_QUERY:
            statements.append(LoggedStatement(statement_text(str(data.get("sql", ""))), seconds))
            running[thread] = len(statements) - 1
        elif name == SQL_QUERY_STATUS and thread in running:
            # dbt's own duration of the statement (events such as a new connection may come between
            # its start and its status), plus fetching its result.
            index = running.pop(thread)
            reported = data.get("elapsed")
            took = float(reported) if reported is not None else statements[index].seconds
            statements[index] = LoggedStatement(statements[index].sql, max(took, statements[index].seconds) + seconds)
    span = (events[-1][0] - events[0][0]).total_seconds() if events else 0.0
    return statements, span


def statement_kind(sql: str) -> str:
    lowered = sql.lower().strip()
    for pattern, kind in STATEMENT_KINDS:
        match = pattern.match(lowered)
        if match:
            return kind.format(*match.groups())
    return "other statements"


def profile_lines(records: list[dict[str, Any]], spark_jobs: int) -> list[str]:
    """A markdown table of seconds per statement kind, dbt's own time and the Spark jobs."""
    statements, span = logged_statements(records)
    seconds: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for statement in statements:
        kind = statement_kind(statement.sql)
        seconds[kind] += statement.seconds
        counts[kind] += 1
    rows = ["| where | statements | seconds |", "|---|---:|---:|"]
    for kind in sorted(seconds, key=lambda kind: seconds[kind], reverse=True):
        rows.append(f"| {kind} | {counts[kind]} | {seconds[kind]:.2f} |")
    rows.append(
        f"| dbt between statements (parse reuse, compile, hooks, artifacts) | | {span - sum(seconds.values()):.2f} |"
    )
    rows.append(f"| **invocation** | {len(statements)} statements, {spark_jobs} Spark jobs | **{span:.2f}** |")
    return rows
