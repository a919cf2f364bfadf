"""`late-data plan`: for each pipeline, whether its definition (late_data.project.definitions: its
select, the settings that change a window and everything upstream of it) differs from the one its
tables were built with, the class of each change, and what applying it rebuilds and reads. A run
refuses such a change (late_data.check_definitions); the plan says what the rebuild that applies it
will cost first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from late_data.project.definitions import definition_changes, reaches_upstream, recorded_definitions
from late_data.project.pipelines import Pipeline
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.timeutil import format_timestamp


@dataclass(frozen=True)
class PipelinePlan:
    name: str
    changes: list[str]  # empty: unchanged
    recorded: bool  # whether a run recorded a definition for its tables
    windows: int = 0
    partitions: int = 0
    first_window: Any = None
    last_window: Any = None
    raw_rows: dict[str, int] | None = None

    def line(self) -> str:
        if not self.recorded:
            return f"{self.name}: no definition recorded yet (not built, or built before runs recorded one)"
        if not self.changes:
            return f"{self.name}: unchanged"
        reads = ", ".join(f"{rows:,} rows of {table}" for table, rows in (self.raw_rows or {}).items())
        span = (
            f" from {format_timestamp(self.first_window)} to {format_timestamp(self.last_window)}"
            if self.first_window is not None
            else ""
        )
        return (
            f"{self.name}: {'; '.join(self.changes)}. Applying it rebuilds the pipeline whole: {self.windows:,}"
            f" windows in {self.partitions:,} partitions{span}, reading {reads or 'no raw rows'}"
            f" (`late-data apply` stages it; in place: dbt build --full-refresh --select"
            f" {'+' if reaches_upstream(self.changes) else ''}{self.name}+)"
        )


def plan_pipeline(project: DbtProject, pipeline: Pipeline, recorded: dict[str, Any] | None) -> PipelinePlan:
    if recorded is None:
        return PipelinePlan(pipeline.name, [], recorded=False)
    changes = definition_changes(recorded, pipeline.definition, pipeline.legacy_select)
    if not changes:
        return PipelinePlan(pipeline.name, [], recorded=True)
    [scope] = project.query(
        f"select count(*) as windows, count(distinct partition_start) as partitions,"
        f" min(window_start) as first_window, max(window_start) as last_window from {pipeline.result}"
    )
    raw_rows = {
        relation: int(project.query(f"select count(*) as n from {relation}")[0]["n"])
        for _, relation in pipeline.sources
    }
    return PipelinePlan(pipeline.name, changes, True, raw_rows=raw_rows, **scope)


def plan_definitions(project: DbtProject, pipelines: list[Pipeline]) -> list[PipelinePlan]:
    recorded = recorded_definitions(project)
    return [plan_pipeline(project, pipeline, recorded.get(pipeline.table)) for pipeline in pipelines]


def plan_lines(plans: list[PipelinePlan]) -> list[str]:
    """What `late-data plan` prints: a line per pipeline, a line per upstream change naming every
    pipeline it reaches (applied together), then how many changed."""
    changed = sum(1 for plan in plans if plan.changes)
    reached: dict[str, list[str]] = {}
    for plan in plans:
        for change in plan.changes:
            if reaches_upstream([change]):
                reached.setdefault(change, []).append(plan.name)
    return [
        *(f"plan: {plan.line()}" for plan in plans),
        *(f"plan: {change} reaches {', '.join(names)}" for change, names in reached.items()),
        f"plan: {changed} of {len(plans)} pipelines changed",
    ]
