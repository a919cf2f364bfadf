"""What `late-data init` is asked to make: the source table (its columns, event key, times), the
pipeline (window, late window, series key, measures), each name checked before it reaches SQL."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from late_data.runtime.settings import SetupError

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MEASURE_KINDS = ("count", "sum", "mean", "min", "max", "count_distinct", "median")


@dataclass(frozen=True)
class SourceTable:
    """The pipeline's source table and how its columns map to the package's."""

    schema: str
    table: str
    columns: tuple[tuple[str, str], ...]  # (name, Spark SQL type)
    event_id: str = "event_id"
    event_time: str = "event_time"
    ingested_at: str = "ingested_at"

    @property
    def relation(self) -> str:
        return f"{self.schema}.{self.table}"

    def ddl(self, table_format: str) -> str:
        columns = ", ".join(f"{name} {data_type}" for name, data_type in self.columns)
        return f"create table {self.relation} ({columns}) using {table_format}"


@dataclass(frozen=True)
class PipelineSpec:
    name: str
    source: SourceTable
    series_key: str
    measures: tuple[tuple[str, str, str | None], ...]  # (result column, kind, input column)
    window_size_seconds: int | None = 300  # None for sessions
    late_window_seconds: int = 3600
    partition_size_seconds: int = 3600
    session_gap_seconds: int | None = None
    max_session_seconds: int | None = None

    def window_settings(self) -> list[str]:
        """The yml lines that shape the pipeline's windows: fixed windows' size, or a session's gap
        (and longest length)."""
        if self.session_gap_seconds is None:
            return [f"window_size_seconds: {self.window_size_seconds}"]
        lines = [f"session_gap_seconds: {self.session_gap_seconds}"]
        if self.max_session_seconds is not None:
            lines.append(f"max_session_seconds: {self.max_session_seconds}")
        return lines


@dataclass
class InitPlan:
    """The files init writes (path -> text) and the files of the user's it checked."""

    directory: Path
    files: dict[Path, str] = field(default_factory=dict)


def identifier(what: str, value: str) -> str:
    """Names reach YAML and SQL: plain identifiers only."""
    if not IDENTIFIER.match(value):
        raise SetupError(f"{what}={value!r} is not a plain identifier: letters, digits and underscores")
    return value


def parse_columns(text: str) -> tuple[tuple[str, str], ...]:
    """`name type, name type, ...` (Spark SQL types; a decimal's precision and scale in parentheses)."""
    columns = []
    for part in re.split(r",(?![^(]*\))", text):
        words = part.split()
        if len(words) != 2 or not re.match(r"^[a-z]+(\(\d+,\s*\d+\))?$", words[1].lower()):
            raise SetupError(f"--columns: {part.strip()!r} is not `name type` (e.g. `kwh double`)")
        columns.append((identifier("--columns", words[0]), words[1].lower()))
    return tuple(columns)


def parse_measure(text: str) -> tuple[str, str, str | None]:
    """`name=count` or `name=kind:column`, e.g. `kwh_sum=sum:kwh`."""
    match = re.match(r"^(\w+)=(\w+)(?::(\w+))?$", text)
    if not match or match.group(2) not in MEASURE_KINDS or (match.group(2) == "count") != (match.group(3) is None):
        raise SetupError(
            f"--measure {text!r} is not NAME=count or NAME=KIND:COLUMN with KIND one of {', '.join(MEASURE_KINDS[1:])}"
        )
    return match.group(1), match.group(2), match.group(3)
