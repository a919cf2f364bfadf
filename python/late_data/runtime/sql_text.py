"""Values in SQL text, and back: a string literal, a moment to the microsecond, a timestamp as a
query returns it."""

from __future__ import annotations

from datetime import datetime


def sql_string(text: str) -> str:
    """A string literal of Spark SQL: backslashes and quotes escaped."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def timestamp_literal(moment: datetime | None) -> str:
    """A moment as SQL, to the microsecond (a wall-clock moment such as a commit's, unlike a run
    time's whole seconds); null for None."""
    return f"timestamp'{moment:%Y-%m-%d %H:%M:%S.%f}'" if moment is not None else "null"


def as_moment(value: datetime | str | None) -> datetime | None:
    """A timestamp as a query returns it: a datetime from Spark, text through the Thrift Server."""
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value))
