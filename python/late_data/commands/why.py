"""`late-data why`: one window's story, from the rows the macro late_data.why selects (each
published version of the window, each delivery of an event in it and whether it counts), printed
as text or as the same rows in JSON."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from late_data.project.pipelines import select_pipelines
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.settings import SetupError
from late_data.runtime.sql_text import as_moment, sql_string
from late_data.runtime.timeutil import format_timestamp

EXPIRED_VERSION = ("Cannot find a snapshot older than", "before the earliest version available")


class UnknownWindow(SetupError):
    """The window, series or moment asked for is not there: said in one line (exit 2)."""


@dataclass(frozen=True)
class Story:
    pipeline: str
    series: str
    window_start: datetime
    rows: list[dict[str, Any]]

    @property
    def published(self) -> list[dict[str, Any]]:
        return [row for row in self.rows if row["kind"] == "published"]

    @property
    def deliveries(self) -> list[dict[str, Any]]:
        return [row for row in self.rows if row["kind"] == "delivery"]

    @property
    def dimension_rows(self) -> list[dict[str, Any]]:
        return [row for row in self.rows if row["kind"] == "dimension"]

    def lines(self) -> list[str]:
        head = f"why: {self.pipeline}, series {self.series}, window {format_timestamp(self.window_start)}"
        lines = [head, "published versions:"]
        for row in self.published:
            lines.append(
                f"  v{row['version_number']} at {_moment(row['valid_from'])}: {row['measures']}"
                f" {'final' if row['is_final'] else 'provisional'}, {row['revision_reason']}"
                f" (definition {row['definition_id'] or '-'}, code {row['code_commit'] or '-'})"
                + (f", made by {row['made_by']}" if row["made_by"] else "")
                + (f", restored by {row['restored_by']}" if row["restored_by"] else "")
            )
        lines.append("deliveries (event, event time, ingested at, loaded by the run at, seconds late: values, status):")
        for row in self.deliveries:
            status = row["delivery_status"]
            if row["quarantine_reason"]:
                status += f" ({row['quarantine_reason']})"
            if row["replaced_ingested_at"] is not None:
                status += f", corrects the version ingested at {_moment(row['replaced_ingested_at'])}"
            lines.append(
                f"  {row['event_key']} {_moment(row['event_time'])} {_moment(row['ingested_at'])}"
                f" {_moment(row['loaded_at'])} {row['seconds_late']:.0f}: {row['measures']} {status}"
            )
        if self.dimension_rows:
            lines.append(
                "dimension rows applied to them (dimension, key, valid from, valid to, applied by the run at): row"
            )
        for row in self.dimension_rows:
            lines.append(
                f"  {row['dimension']} {row['event_key']} {_moment(row['valid_from'])} {_moment(row['valid_to'])}"
                f" {_moment(row['loaded_at'])}: {row['measures']}"
            )
        lines.append(self.summary())
        return lines

    def summary(self) -> str:
        if not self.published:
            return "why: nothing published for this window yet"
        last = self.published[-1]
        counted = sum(row["delivery_status"] == "counted" for row in self.deliveries)
        return (
            f"why: now {last['measures']}, {'final' if last['is_final'] else 'provisional'}, from {counted}"
            f" deliveries; last change at {_moment(last['valid_from'])}: {last['revision_reason']}"
        )

    def json_rows(self) -> str:
        return json.dumps(
            self.rows, default=lambda value: _moment(value) if isinstance(value, datetime) else str(value)
        )


def window_story(
    project: DbtProject, pipeline: str, series: str, window_start: datetime, at: datetime | None = None
) -> Story:
    """The rows of late_data.why for one window, as of `at` (default: now); a pipeline, series or
    window the tables do not hold, or a moment before the pipeline's first run, is refused in one
    line."""
    (found,) = select_pipelines(project, [pipeline])
    if found.session_gap_seconds:
        raise UnknownWindow(f"why: {pipeline} has session windows, which why does not tell yet")
    arguments = [sql_string(pipeline), sql_string(series), sql_string(format_timestamp(window_start))]
    if at is not None:
        arguments.append(sql_string(format_timestamp(at)))
    invocation = project.invoke(["compile", "--inline", "{{ late_data.why(" + ", ".join(arguments) + ") }}"])
    (result,) = invocation.result.results
    try:
        rows = project.query(result.node.compiled_code)
    except Exception as error:
        # As of a moment before a rebuild, why reads the versions table as it stood then (time
        # travel): a version maintenance expired is said in one line (Iceberg's words, Delta's).
        if at is not None and any(words in str(error) for words in EXPIRED_VERSION):
            raise UnknownWindow(
                f"why: {pipeline} as of {format_timestamp(at)}: its versions table as it stood then, before the"
                " rebuild since, is no longer kept (late_data.maintain_tables keeps keep_hours of table versions)"
            ) from None
        raise
    for row in rows:
        for column in (
            *("valid_from", "valid_to", "event_time", "ingested_at", "loaded_at", "replaced_ingested_at"),
            "window_start",
        ):
            row[column] = as_moment(row[column])
    story = Story(pipeline, series, window_start, sorted(rows, key=_order))
    if not story.rows:
        series_text = "concat_ws('|', " + ", ".join(f"cast({key} as string)" for key in found.series_key) + ")"
        series_known = project.query(f"select 1 from {found.result} where {series_text} = {sql_string(series)} limit 1")
        if not series_known:
            raise UnknownWindow(f"why: {pipeline} has no series {series!r}")
        raise UnknownWindow(
            f"why: {pipeline} has no window of {series} starting {format_timestamp(window_start)}"
            + (f" as of {format_timestamp(at)}" if at is not None else "")
        )
    return story


def _order(row: dict[str, Any]) -> tuple[Any, ...]:
    if row["kind"] == "published":
        return (0, row["version_number"])
    if row["kind"] == "dimension":
        return (2, row["dimension"], row["event_key"] or "", row["valid_from"] or datetime.min)
    return (1, row["ingested_at"] or datetime.min, row["event_key"] or "")


def _moment(value: datetime | None) -> str:
    return "-" if value is None else value.isoformat(sep=" ")
