"""Publishing a staged backfill or apply: its thresholds checked, then what it rewrote copied from
the stage into each published table (a backfill's partitions, an apply's tables whole), one commit
per table, behind a journal row of the named versions table: a publish interrupted (kill -9) is
finished by the next `late-data publish <name>`, and every writing command refuses to run until
then; `late-data status` says which tables are new and which old."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from late_data.project.audit import undone_by
from late_data.project.audit_writes import append_audit_rows, copy_audit_rows
from late_data.project.definitions import reaches_upstream
from late_data.project.pipelines import Pipeline, select_pipelines
from late_data.publishing.named_versions import (
    NamedVersion,
    PublishRefused,
    find_version,
    record,
    require_nothing_unfinished,
    switched_tables,
)
from late_data.publishing.stage import PartitionSummary, drop_stage, read_summary, staged, touched_partitions
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.sql_text import as_moment
from late_data.runtime.timeutil import format_timestamp
from late_data.tables import versions as table_versions


@dataclass(frozen=True)
class Thresholds:
    """Acceptance thresholds of a staged backfill (meta.late_data.publish_thresholds, or the command's)."""

    max_changed_window_share: float | None = None
    max_partition_change: float | None = None
    final_windows: str = "allow"  # or "refuse"

    def over(self, overrides: dict[str, Any]) -> Thresholds:
        return Thresholds(**{**asdict(self), **{key: value for key, value in overrides.items() if value is not None}})


def violations(
    summary: list[PartitionSummary], in_range: dict[str, int], thresholds: dict[str, Thresholds]
) -> list[str]:
    """Each threshold a staged backfill exceeds, naming the threshold, the partition and the figure."""
    found = []
    for pipeline, limits in thresholds.items():
        mine = [row for row in summary if row.pipeline == pipeline]
        changed, windows = sum(row.windows_changed for row in mine), in_range.get(pipeline, 0)
        share = changed / windows if windows else (1.0 if changed else 0.0)
        if limits.max_changed_window_share is not None and share > limits.max_changed_window_share:
            found.append(
                f"{pipeline}: {changed} of the {windows} windows in range change ({share:.1%}), over"
                f" max_changed_window_share {limits.max_changed_window_share}"
            )
        for row in mine:
            if limits.max_partition_change is not None and row.relative_change > limits.max_partition_change:
                found.append(
                    f"{pipeline} partition {format_timestamp(row.partition_start)}: total {row.total_before} ->"
                    f" {row.total_after} ({row.relative_change:.1%}), over max_partition_change {limits.max_partition_change}"
                )
            if limits.final_windows == "refuse" and row.final_windows_revised:
                found.append(
                    f"{pipeline} partition {format_timestamp(row.partition_start)}: revises {row.final_windows_revised}"
                    " final windows, and final_windows is refuse"
                )
    return found


def pipeline_thresholds(pipelines: list[Pipeline], overrides: dict[str, Any]) -> dict[str, Thresholds]:
    return {pipeline.name: Thresholds(**pipeline.publish_thresholds).over(overrides) for pipeline in pipelines}


def publish(project: DbtProject, name: str, overrides: dict[str, Any]) -> NamedVersion:
    """Make a staged backfill visible in every table of every pipeline it touched (the partitions it
    rewrote), or a staged apply (every table of its pipelines, whole); finishes an interrupted
    publish of the same name."""
    version = find_version(project, name)
    require_nothing_unfinished(project, allow=name)
    undone = undone_by(project).get(name)
    if version.status == "published" and undone is not None:
        raise PublishRefused(
            f"{name} was published and then rolled back by {undone}: `late-data rollback --to {name}` returns to it"
        )
    if version.kind not in ("backfill", "apply") or version.status not in ("staged", "publishing"):
        raise PublishRefused(
            f"{name} is a {version.kind} that is {version.status}: only a staged backfill or apply is published"
        )
    pipelines = select_pipelines(project, version.pipelines)
    stage = version.detail["stage_schema"]
    if version.status == "staged":
        summary = read_summary(Path(version.detail["summary"]))
        # An apply changing no window still publishes: its tables then record the new definition.
        if version.kind == "backfill" and not any(row.windows_changed for row in summary):
            raise PublishRefused(f"{name} changes no window: nothing to publish (`late-data discard {name}` drops it)")
        refused = violations(summary, version.detail["windows_in_range"], pipeline_thresholds(pipelines, overrides))
        if refused:
            more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
            raise PublishRefused(f"{name} is refused promotion: {refused[0]}{more}")
        for table, before in version.base.items():
            now = table_versions.current_version(project, table)
            if now != before:
                raise PublishRefused(
                    f"{name} was staged on {table} at version {before}, which has moved to {now} since (a run wrote):"
                    " stage the backfill again; a staged backfill is never rebased"
                )
        version.status = "publishing"
        record(project, version)
    if version.kind == "apply":
        for table in switched_tables(version):
            replace_contents(project, staged(table, stage), table)
        deploy_upstream(project, version, pipelines)
    else:
        for pipeline in pipelines:
            for table in [pipeline.result, *pipeline.history_tables]:
                partitions = touched_partitions(
                    project, staged(table, stage), version.detail["stage_base"].get(staged(table, stage))
                )
                if partitions:
                    copy_partitions(project, staged(table, stage), table, partitions)
    copy_audit_rows(project, stage, version.detail["staged_from"])
    published: dict[str, int] = {}
    for table in version.base:
        number = table_versions.current_version(project, table)
        if number is not None:
            published[table] = number
            table_versions.tag(project, table, name, number)
    version.status, version.tables = "published", published
    append_audit_rows(project, version, "publish")
    (clock,) = project.query("select current_timestamp() as now")
    version.state_at = as_moment(clock["now"])
    record(project, version)
    drop_stage(project, stage)
    project.forget_warehouse_state()
    return version


def deploy_upstream(project: DbtProject, version: NamedVersion, pipelines: list[Pipeline]) -> None:
    """An apply that changed what its pipelines read upstream (a staging model, a macro, a var, a
    seed) deploys their upstream models and seeds, as the stage built them, where the published
    pipelines read them: their next scheduled runs, which select only the pipelines, read them as
    deployed. Idempotent: an interrupted publish deploys them again."""
    changes: dict[str, list[str]] = version.detail.get("changes") or {}
    reached = [pipeline.name for pipeline in pipelines if reaches_upstream(changes.get(pipeline.name, []))]
    if reached:
        project.invoke(
            [
                "build",
                "--full-refresh",
                "--resource-type",
                "seed",
                "--resource-type",
                "model",
                "--select",
                " ".join(f"+{name}" for name in reached),
                "--exclude",
                " ".join(f"{name}+" for name in reached),
            ]
        )


def copy_partitions(project: DbtProject, source: str, target: str, partitions: list[datetime]) -> None:
    """One commit: the target's partitions replaced by the source's (emptied where the source has none)."""
    columns = ", ".join(project.spark.table(target).columns)
    listed = ", ".join(f"timestamp'{format_timestamp(partition)}'" for partition in partitions)
    project.execute(
        f"insert into {target} replace where partition_start in ({listed})"
        f" select {columns} from {source} where partition_start in ({listed})"
    )


def replace_contents(project: DbtProject, source: str, target: str) -> None:
    """The target's rows replaced by the source's in one commit (a pipeline rebuilt by an apply),
    after its columns are made the source's: a measure added is a column added, one removed a
    column dropped (each a commit of the table's schema before it)."""
    source_columns = {field.name: field.dataType.simpleString() for field in project.spark.table(source).schema}
    target_columns = project.spark.table(target).columns
    added = [f"{name} {kind}" for name, kind in source_columns.items() if name not in target_columns]
    if added:
        project.execute(f"alter table {target} add columns ({', '.join(added)})")
    dropped = [name for name in target_columns if name not in source_columns]
    if dropped and project.environment.table_format == "delta":
        # Delta drops a column only from a table whose columns are mapped by name.
        project.execute(
            f"alter table {target} set tblproperties ('delta.columnMapping.mode' = 'name',"
            " 'delta.minReaderVersion' = '2', 'delta.minWriterVersion' = '5')"
        )
    for name in dropped:
        project.execute(f"alter table {target} drop column {name}")
    columns = ", ".join(project.spark.table(target).columns)
    project.execute(f"insert into {target} replace where true select {columns} from {source}")


def discard(project: DbtProject, name: str) -> None:
    version = find_version(project, name)
    if version.status != "staged":
        raise PublishRefused(f"{name} is {version.status}: only a staged backfill or apply is discarded")
    drop_stage(project, version.detail["stage_schema"])
    version.status = "discarded"
    record(project, version)
