"""`late-data status`: what the run audit and the result tables say of the pipelines: each model's
last run, interrupted runs, the quarantine, the last reconciliation, lateness and rows no run loaded."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from late_data.project.audit import (
    AUDIT,
    interrupted_writes,
    last_reconciliation,
    last_recovery,
    last_runs,
    unfinished_runs,
)
from late_data.project.pipelines import Pipeline, compiled_select, find_pipelines
from late_data.project.raw_tables import existing_tables
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.timeutil import format_timestamp


@dataclass(frozen=True)
class Status:
    last_runs: list[dict[str, Any]]
    # Result tables holding a write (written_at) that no successful run recorded: a run killed after
    # it wrote, not yet recovered by a later run (or, on a shared catalog, one still running).
    interrupted: list[dict[str, Any]]
    # The last run that found such a write and recovered it (it ran as a reconciliation).
    last_recovery: dict[str, Any] | None
    # Runs a model or snapshot failed in (or was skipped in after a failure upstream), not yet run
    # again: their results or history were never written (resume_point's retry).
    failed: list[dict[str, Any]]
    quarantine: list[dict[str, Any]]
    last_reconciliation: dict[str, Any] | None
    # Per pipeline and source table: how late its rows arrive (the pipeline's lateness view).
    lateness: list[dict[str, Any]] = field(default_factory=list)
    # Per pipeline: delivered rows no run has loaded although stamped before its last run (unloaded_rows).
    unloaded: list[dict[str, Any]] = field(default_factory=list)

    def lines(self) -> list[str]:
        if not self.last_runs and not self.interrupted:
            return ["status: no late-data run recorded yet"]
        lines = ["last runs:"]
        for run in self.last_runs:
            lines.append(
                f"  {run['model']}: {run['outcome']} {run['run_kind']} run_time={_stamp(run['run_time'])}"
                f" rows_written={_number(run['rows_written'])} windows_changed={_number(run['windows_changed'])}"
                f" rows_quarantined={_number(run['rows_quarantined'])} seconds={_number(run['seconds'], '.2f')}"
            )
        failed_runs = sorted({run["run_time"] for run in self.failed})
        lines.append(f"interrupted runs not yet recovered: {len(self.interrupted) + len(failed_runs)}")
        for run_time in failed_runs:
            models = ", ".join(
                f"{run['model']} ({run['outcome']})" for run in self.failed if run["run_time"] == run_time
            )
            lines.append(
                f"  the run at {_stamp(run_time)} failed: {models}; the next `late-data schedule` runs it again"
            )
        for run in self.interrupted:
            lines.append(
                f"  {run['model']} holds what a run at {_stamp(run['written_until'])} wrote; its last recorded run is"
                f" {_stamp(run['recorded_until'])} (the next run reconciles it)"
            )
        if self.last_recovery is not None:
            lines.append(
                f"last recovery: the run at {_stamp(self.last_recovery['run_time'])} recovered an interrupted run at"
                f" {_stamp(self.last_recovery['recovered_from'])}"
            )
        total = sum(int(row["versions"]) for row in self.quarantine)
        lines.append(f"quarantine: {total} row versions")
        for row in self.quarantine:
            lines.append(
                f"  {row['source_table']}: {row['versions']} {row['quarantine_reason']}"
                f" (last at run {_stamp(row['last_quarantined_at'])})"
            )
        if self.lateness:
            lines.append(
                "lateness (seconds after the event; late window captures, target, recommended;"
                + (" every delivery" if self.lateness[0].get("counts_corrections") else " first deliveries")
                + "):"
            )
        for row in self.lateness:
            lines.append(
                f"  {row['pipeline']} {row['source_table']}: p50 {row['p50_lateness_seconds']:.0f}"
                f" p90 {row['p90_lateness_seconds']:.0f} p99 {row['p99_lateness_seconds']:.0f}"
                f" max {row['max_lateness_seconds']:.0f}; late window {row['configured_late_window_seconds']} s captures"
                f" {row['configured_captured_share']:.4f} (target {row['target_share']}),"
                f" recommended {row['recommended_late_window_seconds']} s"
                + ("" if row["configured_meets_target"] else ": below the target")
            )
        waiting = sum(int(row["rows"]) for row in self.unloaded)
        lines.append(f"rows delivered before the last run and not loaded: {waiting}")
        for row in self.unloaded:
            lines.append(
                f"  {row['pipeline']}: {row['rows']} rows stamped before {_stamp(row['stamped_before'])} (event times"
                f" {_stamp(row['earliest_event'])} to {_stamp(row['latest_event'])}) wait: a scheduled run loads the"
                " rows stamped since the run before it; `late-data reconcile` loads those with event times in its"
                " checked range, `dbt build --full-refresh` all of them"
            )
        if self.last_reconciliation is None:
            lines.append("last reconciliation: none")
        else:
            lines.append(
                f"last reconciliation: run_time={_stamp(self.last_reconciliation['run_time'])}"
                f" windows_repaired={_number(self.last_reconciliation['windows_repaired'])}"
            )
        return lines


def _stamp(moment: datetime | None) -> str:
    return format_timestamp(moment) if moment is not None else "-"


def _number(value: Any, spec: str = "") -> str:
    return "-" if value is None else format(value, spec)


def read_status(project: DbtProject, pipelines: list[Pipeline] | None = None) -> Status:
    """The audit's view of the pipelines (default: every pipeline of the project), and their result
    tables' own record of what wrote them (their rows carry written_at: the run time of the run
    that last wrote their partition)."""
    pipelines = find_pipelines(project) if pipelines is None else pipelines
    schema = project.target_schema()
    existing = existing_tables(project.query, schema)
    if AUDIT not in existing:
        return Status([], [], None, [], [], None)
    audit = f"{schema}.{AUDIT}"
    runs = last_runs(project)
    built = [pipeline for pipeline in pipelines if pipeline.table in existing]
    interrupted = interrupted_writes(project, {pipeline.table: pipeline.result for pipeline in built})
    quarantines = [
        # Each view has its versions' own columns: only these three are every pipeline's.
        f"select source_table, quarantine_reason, quarantined_at from {pipeline.quarantine}"
        for pipeline in pipelines
        if pipeline.quarantine and pipeline.quarantine.split(".")[-1] in existing
    ]
    quarantine = (
        project.query(
            f"""
            select source_table, quarantine_reason, count(*) as versions, max(quarantined_at) as last_quarantined_at
            from ({" union all ".join(quarantines)})
            group by source_table, quarantine_reason
            order by source_table, quarantine_reason
            """
        )
        if quarantines
        else []
    )
    lateness_views = [
        f"select '{pipeline.name}' as pipeline, * from {pipeline.lateness}"
        for pipeline in pipelines
        if pipeline.lateness and pipeline.lateness.split(".")[-1] in existing
    ]
    lateness = (
        project.query(" union all ".join(lateness_views) + " order by pipeline, source_table") if lateness_views else []
    )
    last_run_times = {run["model"]: run["run_time"] for run in runs if run["outcome"] == "success"}
    unloaded = [
        row
        for pipeline in built
        if pipeline.table in last_run_times and pipeline.versions.split(".")[-1] in existing
        for row in [unloaded_rows(project, pipeline, last_run_times[pipeline.table])]
        if row["rows"]
    ]
    return Status(
        runs,
        interrupted,
        last_recovery(project),
        unfinished_runs(project, audit),
        quarantine,
        last_reconciliation(project),
        lateness,
        unloaded,
    )


def unloaded_rows(project: DbtProject, pipeline: Pipeline, last_run_time: datetime) -> dict[str, Any]:
    """The rows the pipeline's model delivers that no run has loaded although they are stamped more
    than write_delay_seconds before its last run: appended late with an old stamp (history loaded
    after the first build), which a scheduled run, reading the rows stamped since the run before it,
    never looks at. A delivery is loaded when the versions table holds its event with its stamp,
    compared null-safely as the backfill's guard does (late_data.require_loaded)."""
    delay = _write_delay_seconds(project)
    stamped_before = last_run_time - timedelta(seconds=delay)
    stamp = "source_ingested_at" if pipeline.dimensions else "ingested_at"
    matched = " and ".join(
        [
            *(f"delivered.{key} <=> loaded.{key}" for key in pipeline.event_key),
            f"delivered.ingested_at <=> loaded.{stamp}",
        ]
    )
    (row,) = project.query(
        f"""
        select count(*) as rows, min(event_time) as earliest_event, max(event_time) as latest_event
        from ({compiled_select(project, pipeline)}) as delivered
        left anti join (select {", ".join([*pipeline.event_key, stamp])} from {pipeline.versions}) as loaded
            on {matched}
        where delivered.ingested_at < timestamp'{format_timestamp(stamped_before)}'
        """
    )
    return {"pipeline": pipeline.name, "stamped_before": stamped_before, **row}


def _write_delay_seconds(project: DbtProject) -> int:
    """var write_delay_seconds: the project's, else the package's default."""
    try:
        return int(project.setting("write_delay_seconds"))
    except (KeyError, TypeError):
        return 300
