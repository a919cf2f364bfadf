"""Where one dbt invocation's time goes: its statements' wall time, read from dbt's debug log."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from pathlib import Path

# A dbt log event: "HH:MM:SS.ffffff [level] [thread]: message", after an ANSI colour reset.
LOG_EVENT = re.compile(r"^(?:\x1b\[0m)?(\d\d:\d\d:\d\d\.\d+) \[\w+\s*\] \[([^\]]+)\]: (.*)")

# Statement kinds, by the first SQL line; the first match wins, {0} is the first group.
STATEMENT_KINDS = (
    (re.compile(r"insert overwrite directory '[^']*/([^/']+)'"), "compute and stage: {0}"),
    (re.compile(r"insert overwrite (?:table )?(\S+)"), "write: insert overwrite {0}"),
    (re.compile(r"merge into (\S+)"), "write: merge into {0}"),
    (re.compile(r"create (?:or replace )?table (?!if not exists)(\S+)"), "write: create table {0}"),
    (re.compile(r"insert into (?:table )?(\S+)"), "write: insert into {0}"),
    (re.compile(r"delete from (\S+)"), "write: delete from {0}"),
    (re.compile(r"select\s+model,"), "run audit: last runs"),
    (re.compile(r"select (?:partition_start|count)"), "staged rows: what to write"),
    (re.compile(r"select min\(ingested_at\)"), "recompute: earliest arrival"),
    (re.compile(r"create (?:or replace )?(?:temporary )?view"), "views: temporary and snapshot staging"),
    (
        re.compile(
            r"(?:describe|show|set|reset|drop view|drop table|create table if not exists|create schema|select \* from values)\b"
        ),
        "catalog and session: describe, show, set, drop",
    ),
)


SQL_STATUS = re.compile(r"in (\d+(?:\.\d+)?) seconds")


@dataclass(frozen=True)
class LoggedStatement:
    sql: str
    seconds: float


def read_log_slice(log_path: Path, start: int, end: int | None = None) -> list[str]:
    """The lines dbt appended to its log between two byte offsets."""
    with log_path.open("rb") as handle:
        handle.seek(start)
        data = handle.read() if end is None else handle.read(end - start)
    return data.decode("utf-8", errors="replace").splitlines()


def logged_statements(lines: list[str]) -> tuple[list[LoggedStatement], float]:
    """The SQL statements in a slice of dbt's log, each with the wall seconds from its start to the
    next event of another statement or of dbt (fetching its result included), and the slice's span."""
    events: list[list] = []  # [time, thread, message, first SQL line or None]
    for line in lines:
        match = LOG_EVENT.match(line)
        if match:
            events.append(
                [datetime.strptime(match.group(1), "%H:%M:%S.%f"), match.group(2).strip(), match.group(3), None]
            )
        elif (
            events
            and events[-1][2].startswith("On ")
            and events[-1][2].rstrip().endswith("*/")
            and line.strip()
            and not line.strip().startswith(("/*", "--"))
            and len(events[-1][3] or "") < 300
        ):
            events[-1][3] = f"{events[-1][3]} {line.strip()}" if events[-1][3] else line.strip()
    statements: list[LoggedStatement] = []
    running: dict[str, int] = {}  # thread -> index of its statement awaiting "SQL status"
    for (moment, thread, message, sql), (following, *_) in pairwise(events):
        seconds = (following - moment).total_seconds()
        if sql is not None:
            statements.append(LoggedStatement(sql, seconds))
            running[thread] = len(statements) - 1
        elif message.startswith("SQL status") and thread in running:
            # dbt's own duration of the statement (events such as "Opening a new connection" may
            # come between its start and its status), plus fetching its result.
            index = running.pop(thread)
            reported = SQL_STATUS.search(message)
            took = float(reported.group(1)) if reported else statements[index].seconds
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


def profile_lines(lines: list[str], spark_jobs: int) -> list[str]:
    """A markdown table of seconds per statement kind, dbt's own time and the Spark jobs."""
    statements, span = logged_statements(lines)
    seconds: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for statement in statements:
        kind = statement_kind(statement.sql)
        seconds[kind] += statement.seconds
        counts[kind] += 1
    rows = ["| where | statements | seconds |", "|---|---:|---:|"]
    for kind in sorted(seconds, key=seconds.get, reverse=True):
        rows.append(f"| {kind} | {counts[kind]} | {seconds[kind]:.2f} |")
    rows.append(
        f"| dbt between statements (parse reuse, compile, hooks, artifacts) | | {span - sum(seconds.values()):.2f} |"
    )
    rows.append(f"| **invocation** | {len(statements)} statements, {spark_jobs} Spark jobs | **{span:.2f}** |")
    return rows
