"""`late-data check`: a pipeline's published windows, and its too-late listing, against an
independent recomputation from its source (late_data.oracles.windows; with dimensions,
late_data.oracles.dimensions)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from late_data.oracles.compare import Comparison
from late_data.oracles.dimensions import replayed_versions
from late_data.oracles.windows import compare_too_late, compare_windows, expected_too_late, windows_of
from late_data.project.audit import history_as_of, load_runs, published_run
from late_data.project.definitions import definition_changes, recorded_definitions
from late_data.project.pipelines import Pipeline, compiled_select
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.settings import SetupError
from late_data.runtime.timeutil import format_timestamp


@dataclass(frozen=True)
class PipelineCheck:
    """What a check of one pipeline found: its windows, and its too-late listing (None when the
    listing was not compared: the pipeline has none, an earlier run was checked, or the listing's
    history snapshot has not run since the result's last run); and what `late-data check` prints of
    it, line by line."""

    windows: Comparison
    too_late: Comparison | None
    lines: tuple[str, ...] = ()

    @property
    def mismatched(self) -> int:
        return self.windows.mismatched + (self.too_late.mismatched if self.too_late else 0)


def check_pipeline(project: DbtProject, pipeline: Pipeline, run_time: datetime | None) -> PipelineCheck:
    """One pipeline against its oracle as of its last run at or before `run_time`: the result table
    holds its last run; an earlier one is read from its history, as that run left it. As of the
    last run, its too-late listing is compared entry for entry too."""
    lines: list[str] = []
    model = pipeline.table
    run = published_run(project, model, run_time)
    if run.at is None:
        raise SetupError(
            f"no run wrote {model} by {format_timestamp(run_time) if run_time else 'now'}"
            + (f": its first run is later; its last is at {format_timestamp(run.latest)}" if run.latest else "")
        )
    recorded = recorded_definitions(project, run.at).get(model)
    changed = definition_changes(recorded, pipeline.definition, pipeline.legacy_select) if recorded is not None else []
    if changed:
        raise SetupError(
            f"{pipeline.name}: the run at {format_timestamp(run.at)} was computed by another definition than the"
            f" code's ({', '.join(changed)}), and check recomputes through the code's: "
            + (
                "apply the change first (late-data plan, then late-data apply), then check"
                if run.at == run.latest
                else "check a run since the change"
            )
        )
    if run_time is not None and run.at != run_time:
        lines.append(
            f"check: {pipeline.name}: no run at {format_timestamp(run_time)}; checking the last one before it, at {run.at}"
        )
    if run.at == run.latest:
        stored = project.spark.table(pipeline.result)
    elif pipeline.history is not None:
        bounds = ["window_end"] if pipeline.session_gap_seconds else []
        columns = ", ".join(
            ["window_start", *bounds, *pipeline.series_key, *(m.name for m in pipeline.measures), "is_final"]
        )
        stored = history_as_of(project.spark, pipeline.history, run.at, columns)
    else:
        raise SetupError(f"{pipeline.name} has no history snapshot: only its last run ({run.latest}) can be checked")
    delivered = delivered_versions(project, pipeline, run.at)
    windows = compare_windows(windows_of(pipeline, delivered, run.at), stored, pipeline)
    lines.append(f"check: {pipeline.name}: {windows.windows_checked} windows checked, {windows.mismatched} mismatched")
    for example in windows.examples[:3]:
        lines.append(f"  mismatched: {example.asDict()}")
    too_late = None
    if pipeline.too_late is not None and run.at == run.latest:
        listed_at = published_run(project, pipeline.too_late.split(".")[-1], None).latest
        if listed_at != run.at:
            lines.append(
                f"check: {pipeline.name}: too-late listing not compared: last written at"
                f" {format_timestamp(listed_at) if listed_at else 'no run'}, the result at {format_timestamp(run.at)}"
                " (its history snapshot has not run since)"
            )
        else:
            too_late = compare_too_late(
                expected_too_late(pipeline, delivered, run.at), project.spark.table(pipeline.too_late), pipeline
            )
            lines.append(
                f"check: {pipeline.name}: too-late listing: {too_late.windows_checked} entries checked,"
                f" {too_late.mismatched} mismatched"
            )
            for example in too_late.examples[:3]:
                lines.append(f"  mismatched: {example.asDict()}")
    return PipelineCheck(windows, too_late, tuple(lines))


def delivered_versions(project: DbtProject, pipeline: Pipeline, run_time: datetime) -> Any:
    """Every version of the pipeline's events as of the run at `run_time`: its model's rows, or,
    with dimensions, as the runs up to then made them (dimension_oracle.replayed_versions)."""
    sql = compiled_select(project, pipeline)
    if pipeline.dimensions:
        return replayed_versions(project.spark, pipeline, sql, load_runs(project, pipeline.table, run_time))
    return project.spark.sql(sql)
