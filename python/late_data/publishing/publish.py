"""Safe publishing: staged backfills with a validation summary, acceptance thresholds, publish, named
versions and rollback (docs/publishing.md).

- A staged backfill runs in a schema of its own, `<schema>__stage_<name>`, holding a clone of every
  table of the target schema (metadata only: Iceberg registers the current metadata under a second
  name, Delta makes shallow clones): what readers of the published tables see does not change.
- Publishing copies the partitions the backfill rewrote from the stage into each published table,
  one commit per table, behind a journal row of the named versions table: a publish interrupted
  (kill -9) is finished by the next `late-data publish <name>`, and every writing command refuses
  to run until then; `late-data status` says which tables are new and which old.
- A named version records, for each table of the pipelines it covers, the table-format version
  holding its state (an Iceberg snapshot, also tagged with the name; a Delta version).
- A rollback puts each table back to its version after a run (or a named version) and marks the
  audit rows of the runs it undid `rolled_back`, so the next scheduled run goes on from that run.
"""

from __future__ import annotations

import csv
import json
import logging
import math
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from late_data.project.pipelines import Pipeline, select_pipelines
from late_data.project.raw_tables import existing_tables
from late_data.running.backfill import run_backfill
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.timeutil import format_timestamp
from late_data.tables import versions as table_versions
from late_data.tables.history import commits_after
from late_data.tables.versions import as_moment, timestamp_literal

log = logging.getLogger(__name__)

NAMED_VERSIONS = "late_data_named_versions"
NAME = re.compile(r"^[a-z][a-z0-9_]{0,47}$")
# Journal states: a command that died in one of them left work that must be finished first.
UNFINISHED = ("publishing", "rolling_back")
AUDIT = "late_data_run_audit"


class PublishRefused(ValueError):
    """A refusal in one line (the command exits 2 and changes nothing)."""


@dataclass(frozen=True)
class Thresholds:
    """Acceptance thresholds of a staged backfill (meta.late_data.publish_thresholds, or the command's)."""

    max_changed_window_share: float | None = None
    max_partition_change: float | None = None
    final_windows: str = "allow"  # or "refuse"

    def over(self, overrides: dict[str, Any]) -> Thresholds:
        return Thresholds(**{**asdict(self), **{key: value for key, value in overrides.items() if value is not None}})


@dataclass(frozen=True)
class PartitionSummary:
    pipeline: str
    partition_start: datetime
    windows_before: int
    windows_after: int
    windows_changed: int
    final_windows_revised: int
    rows_before: int
    rows_after: int
    total_before: float | None
    total_after: float | None

    @property
    def relative_change(self) -> float:
        """|after - before| / |before| of the partition's total (its summed measures, else its rows)."""
        before, after = self.total_before or 0.0, self.total_after or 0.0
        if before == after:
            return 0.0
        return math.inf if before == 0 else abs(after - before) / abs(before)


@dataclass
class NamedVersion:
    name: str
    kind: str  # backfill or rollback
    status: str  # staged, publishing, published, rolling_back, rolled_back
    pipelines: list[str]
    run_time: datetime | None  # the run whose state it holds (a backfill: its run time)
    recorded_at: datetime | None = None
    state_at: datetime | None = None  # when its state was current (the audit as of then goes with it)
    tables: dict[str, int] = field(default_factory=dict)  # table -> version holding this state
    base: dict[str, int] = field(default_factory=dict)  # table -> version before it
    detail: dict[str, Any] = field(default_factory=dict)


def registry(project: DbtProject) -> str:
    return f"{project.target_schema()}.{NAMED_VERSIONS}"


def validate_name(name: str) -> str:
    if not NAME.match(name):
        raise PublishRefused(
            f"{name!r} is not a version name: use lower-case letters, digits and underscores, starting with a letter"
            " (at most 48)"
        )
    return name


def _sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def audit_model(table: str) -> str:
    """The audit's `model` for a late-data table (schema.table): its name, except that a history's
    closed versions are recorded under the history's own name (the snapshot node's)."""
    return table.split(".")[-1].removesuffix("__closed")


def _models(tables: list[str]) -> str:
    """The audit's `model` values of schema.table names, as an SQL list."""
    return ", ".join(_sql_string(audit_model(table)) for table in dict.fromkeys(tables))


def _ensure_registry(project: DbtProject) -> None:
    project.execute(
        f"""
        create table if not exists {registry(project)} (
            name string, kind string, status string, pipelines array<string>, run_time timestamp,
            recorded_at timestamp, state_at timestamp, tables string, base string, detail string
        ) using {project.environment.table_format}
        """
    )


def record(project: DbtProject, version: NamedVersion) -> None:
    """Append the version's row (one commit: the journal's step)."""
    _ensure_registry(project)

    pipelines = ", ".join(_sql_string(name) for name in version.pipelines)
    project.execute(
        f"""
        insert into {registry(project)} values (
            {_sql_string(version.name)}, {_sql_string(version.kind)}, {_sql_string(version.status)},
            array({pipelines}), {timestamp_literal(version.run_time)}, current_timestamp(), {timestamp_literal(version.state_at)},
            {_sql_string(json.dumps(version.tables))}, {_sql_string(json.dumps(version.base))},
            {_sql_string(json.dumps(version.detail, default=str))}
        )
        """
    )


def named_versions(project: DbtProject) -> list[NamedVersion]:
    """Every named version as its last row says, oldest first."""
    if NAMED_VERSIONS not in existing_tables(project.query, project.target_schema()):
        return []
    rows = project.query(
        f"""
        select * from (
            select *, row_number() over (partition by name order by recorded_at desc) as newest
            from {registry(project)}
        )
        where newest = 1
        order by recorded_at
        """
    )
    return [
        NamedVersion(
            name=row["name"],
            kind=row["kind"],
            status=row["status"],
            # An array through the Thrift Server is JSON text.
            pipelines=json.loads(row["pipelines"]) if isinstance(row["pipelines"], str) else list(row["pipelines"]),
            run_time=as_moment(row["run_time"]),
            recorded_at=as_moment(row["recorded_at"]),
            state_at=as_moment(row["state_at"]),
            tables={table: int(version) for table, version in json.loads(row["tables"]).items()},
            base={table: int(version) for table, version in json.loads(row["base"]).items()},
            detail=json.loads(row["detail"]),
        )
        for row in rows
    ]


def undone_by(project: DbtProject) -> dict[str, str]:
    """Published backfills that a rollback undid (the audit's publish rows of them are rolled back),
    each with the name of the rollback that did."""
    if AUDIT not in existing_tables(project.query, project.target_schema()):
        return {}
    rows = project.query(
        f"select invocation_id, max(rolled_back_by) as rolled_back_by from {project.target_schema()}.{AUDIT}"
        " where run_kind = 'publish' and outcome = 'rolled_back' group by invocation_id"
    )
    return {row["invocation_id"]: row["rolled_back_by"] for row in rows}


def state_label(version: NamedVersion, undone: dict[str, str]) -> str:
    """A version's status as `late-data versions` says it: a published backfill a rollback undid
    says so."""
    if version.status == "published" and version.name in undone:
        return f"published, then rolled back by {undone[version.name]}"
    return version.status


def find_version(project: DbtProject, name: str) -> NamedVersion:
    validate_name(name)
    found = [version for version in named_versions(project) if version.name == name]
    if not found:
        raise PublishRefused(f"no version named {name} (`late-data versions` lists them)")
    return found[0]


def unfinished(project: DbtProject) -> NamedVersion | None:
    return next((version for version in named_versions(project) if version.status in UNFINISHED), None)


def require_nothing_unfinished(project: DbtProject, allow: str | None = None) -> None:
    """Writers refuse to build on a half-published backfill or a half-done rollback."""
    pending = unfinished(project)
    if pending is not None and pending.name != allow:
        again = "late-data publish " + pending.name if pending.kind == "backfill" else "late-data rollback again"
        raise PublishRefused(
            f"{'publishing' if pending.kind == 'backfill' else 'the rollback'} {pending.name} was interrupted"
            f" ({describe_switched(project, pending)}): run `{again}` to finish it first"
        )


def switched_tables(version: NamedVersion) -> list[str]:
    """The tables a publish or a rollback switches to their new version: a rollback every table of
    its pipelines, a publish the result and history tables (it copies their partitions; a version
    staged before this was recorded: every table it staged)."""
    return list(version.detail.get("publishes") or version.base)


def describe_switched(project: DbtProject, version: NamedVersion) -> str:
    """How far an interrupted publish or rollback got: its tables at their new version and at their old."""
    tables = switched_tables(version)
    new = [table for table in tables if table_versions.current_version(project, table) != version.base.get(table)]
    return f"{len(new)} of {len(tables)} tables at their new version" + (f": {', '.join(new)}" if new else "")


def next_name(project: DbtProject, kind: str, moment: datetime) -> str:
    """`<kind>_<yyyymmdd>_r<n>`: n counts the versions of that kind named for that day."""
    prefix = f"{kind}_{moment:%Y%m%d}_r"
    taken = [version.name for version in named_versions(project) if version.name.startswith(prefix)]
    return f"{prefix}{len(taken) + 1}"


def tables_only(project: DbtProject, schema: str) -> list[str]:
    """The tables (not views) of a schema, lower case."""
    names = {str(row["tableName"]).lower() for row in project.query(f"show tables in {schema}")}
    views = {str(row["viewName"]).lower() for row in project.query(f"show views in {schema}")}
    return sorted(names - views)


def pipeline_tables(project: DbtProject, pipeline: Pipeline) -> list[str]:
    """Every late-data table of a pipeline that exists: result, versions, histories, too-late
    listing, quarantine and the dimension rows it applied."""
    candidates = [
        pipeline.result,
        pipeline.versions,
        *pipeline.history_tables,
        *(relation for relation in (pipeline.too_late, pipeline.quarantine) if relation),
        *(dimension.applied for dimension in pipeline.dimensions),
    ]
    existing: dict[str, list[str]] = {}
    for relation in candidates:
        schema = relation.split(".")[0]
        if schema not in existing:
            existing[schema] = tables_only(project, schema)
    return [relation for relation in candidates if relation.split(".")[-1].lower() in existing[relation.split(".")[0]]]


@contextmanager
def target_schema(project: DbtProject, schema: str) -> Iterator[None]:
    """dbt invocations in this block build into `schema` (the profile reads LATE_DATA_SCHEMA)."""
    before = os.environ.get("LATE_DATA_SCHEMA")
    os.environ["LATE_DATA_SCHEMA"] = schema
    project.forget_warehouse_state()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("LATE_DATA_SCHEMA", None)
        else:
            os.environ["LATE_DATA_SCHEMA"] = before
        project.forget_warehouse_state()


def stage_schema(project: DbtProject, name: str) -> str:
    return f"{project.target_schema()}__stage_{name}"


def staged(relation: str, schema: str) -> str:
    return f"{schema}.{relation.split('.')[-1]}"


def stage_backfill(
    project: DbtProject,
    pipelines: list[Pipeline],
    start: datetime,
    end: datetime,
    chunk: timedelta,
    include_too_late: bool,
    run_time: datetime,
    name: str | None,
    home: Path,
) -> tuple[NamedVersion, list[PartitionSummary]]:
    """The backfill computed in a stage schema; the published tables unchanged. Writes the change
    manifest and the validation summary under `home`/backfills/<name>/ and records the staged
    version (its base: each published table's version now)."""
    require_nothing_unfinished(project)
    name = validate_name(name) if name else next_name(project, "backfill", run_time)
    if any(version.name == name for version in named_versions(project)):
        raise PublishRefused(f"a version named {name} exists already: choose another --name")
    schema = project.target_schema()
    stage = stage_schema(project, name)
    tables = [table for pipeline in pipelines for table in pipeline_tables(project, pipeline)]
    for table in sorted(set(tables)):
        table_versions.hold_for_named_version(project, table)
    base = {table: table_versions.current_version(project, table) for table in tables}
    (now,) = project.query("select current_timestamp() as now")
    project.execute(f"create schema {stage}")
    try:
        for table in tables_only(project, schema):
            if table != NAMED_VERSIONS:
                table_versions.clone(project, f"{schema}.{table}", f"{stage}.{table}")
        stage_base = {
            staged(table, stage): table_versions.current_version(project, staged(table, stage)) for table in base
        }
        with target_schema(project, stage):
            staged_pipelines = select_pipelines(project, [pipeline.name for pipeline in pipelines])
            if any(not pipeline.result.startswith(stage + ".") for pipeline in staged_pipelines):
                raise PublishRefused(
                    "the dbt profile's schema does not follow LATE_DATA_SCHEMA, which staging needs: set"
                    " schema: \"{{ env_var('LATE_DATA_SCHEMA', '...') }}\" in its target (docs/publishing.md)"
                )
            _, manifest = run_backfill(
                project, staged_pipelines, start, end, chunk, include_too_late, run_time, home / "backfills" / name
            )
    except BaseException:
        drop_stage(project, stage)
        raise
    summary = summarize(project, pipelines, stage, stage_base, start, end)
    summary_path = manifest.parent / "validation_summary.csv"
    write_summary(summary, summary_path)
    version = NamedVersion(
        name=name,
        kind="backfill",
        status="staged",
        pipelines=[pipeline.name for pipeline in pipelines],
        run_time=run_time,
        base={table: version for table, version in base.items() if version is not None},
        detail={
            "from": format_timestamp(start),
            "to": format_timestamp(end),
            "include_too_late": include_too_late,
            "stage_schema": stage,
            "stage_base": stage_base,
            "staged_from": str(now["now"]),
            "manifest": str(manifest),
            "summary": str(summary_path),
            "windows_in_range": windows_in_range(project, pipelines, start, end),
            "publishes": [
                table
                for pipeline in pipelines
                for table in (pipeline.result, *pipeline.history_tables)
                if table in base
            ],
        },
    )
    record(project, version)
    return version, summary


def windows_in_range(project: DbtProject, pipelines: list[Pipeline], start: datetime, end: datetime) -> dict[str, int]:
    return {
        pipeline.name: int(
            project.query(
                f"select count(*) as windows from {pipeline.result} where window_start >= timestamp'{format_timestamp(start)}'"
                f" and window_start < timestamp'{format_timestamp(end)}'"
            )[0]["windows"]
        )
        for pipeline in pipelines
    }


def touched_partitions(project: DbtProject, table: str, since: int | None) -> list[datetime]:
    """The time partitions the commits to `table` after version `since` wrote, from its commit metadata."""
    commits = commits_after(project.spark, table, project.environment.table_format, since)
    return sorted({partition for commit in commits for partition in commit.time_partitions_touched})


def summarize(
    project: DbtProject,
    pipelines: list[Pipeline],
    stage: str,
    stage_base: dict[str, int | None],
    start: datetime,
    end: datetime,
) -> list[PartitionSummary]:
    """Per pipeline and partition the backfill rewrote: windows, changed windows (digest), final
    windows it revises, rows and totals, published against staged."""
    summary = []
    for pipeline in pipelines:
        after_table = staged(pipeline.result, stage)
        partitions = touched_partitions(project, after_table, stage_base.get(after_table))
        if not partitions:
            continue
        sums = " + ".join(measure.name for measure in pipeline.measures if measure.kind == "sum")
        key = ", ".join(["window_start", *pipeline.series_key])
        listed = ", ".join(f"timestamp'{format_timestamp(partition)}'" for partition in partitions)
        select = (
            f"select {key}, partition_start, {pipeline.digest} as digest, is_final, {pipeline.count_column} as counted,"
            f" {sums or 'cast(null as double)'} as total from {{table}} where partition_start in ({listed})"
        )
        rows = project.query(
            f"""
            with before as ({select.format(table=pipeline.result)}),
            after as ({select.format(table=after_table)})
            select
                coalesce(before.partition_start, after.partition_start) as partition_start,
                count(before.digest) as windows_before,
                count(after.digest) as windows_after,
                count_if(not (before.digest <=> after.digest)) as windows_changed,
                count_if(not (before.digest <=> after.digest) and before.is_final) as final_windows_revised,
                coalesce(sum(before.counted), 0) as rows_before,
                coalesce(sum(after.counted), 0) as rows_after,
                cast(coalesce(sum(before.total), sum(before.counted)) as double) as total_before,
                cast(coalesce(sum(after.total), sum(after.counted)) as double) as total_after
            from before full outer join after using ({key})
            group by 1
            order by 1
            """
        )
        summary += [PartitionSummary(pipeline.name, **row) for row in rows]
    return summary


def write_summary(summary: list[PartitionSummary], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*PartitionSummary.__dataclass_fields__, "relative_change"])
        for row in summary:
            writer.writerow([*asdict(row).values(), row.relative_change])


def read_summary(path: Path) -> list[PartitionSummary]:
    with path.open() as handle:
        rows = list(csv.DictReader(handle))

    def number(text: str) -> float | None:
        return float(text) if text not in ("", "None") else None

    return [
        PartitionSummary(
            row["pipeline"],
            datetime.fromisoformat(row["partition_start"]),
            int(row["windows_before"]),
            int(row["windows_after"]),
            int(row["windows_changed"]),
            int(row["final_windows_revised"]),
            int(row["rows_before"]),
            int(row["rows_after"]),
            number(row["total_before"]),
            number(row["total_after"]),
        )
        for row in rows
    ]


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
    """Make a staged backfill visible in every table of every pipeline it touched; finishes an
    interrupted publish of the same name."""
    version = find_version(project, name)
    require_nothing_unfinished(project, allow=name)
    undone = undone_by(project).get(name)
    if version.status == "published" and undone is not None:
        raise PublishRefused(
            f"{name} was published and then rolled back by {undone}: `late-data rollback --to {name}` returns to it"
        )
    if version.kind != "backfill" or version.status not in ("staged", "publishing"):
        raise PublishRefused(
            f"{name} is a {version.kind} that is {version.status}: only a staged backfill is published"
        )
    pipelines = select_pipelines(project, version.pipelines)
    stage = version.detail["stage_schema"]
    if version.status == "staged":
        summary = read_summary(Path(version.detail["summary"]))
        if not any(row.windows_changed for row in summary):
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


def copy_partitions(project: DbtProject, source: str, target: str, partitions: list[datetime]) -> None:
    """One commit: the target's partitions replaced by the source's (emptied where the source has none)."""
    columns = ", ".join(project.spark.table(target).columns)
    listed = ", ".join(f"timestamp'{format_timestamp(partition)}'" for partition in partitions)
    project.execute(
        f"insert into {target} replace where partition_start in ({listed})"
        f" select {columns} from {source} where partition_start in ({listed})"
    )


def copy_audit_rows(project: DbtProject, stage: str, staged_from: str) -> None:
    """The staged backfill's audit rows, appended to the audit once (a resumed publish adds none twice)."""
    audit = f"{project.target_schema()}.{AUDIT}"
    columns = ", ".join(project.spark.table(audit).columns)
    project.execute(
        f"""
        insert into {audit}
        select {columns} from {stage}.{AUDIT} as staged
        where recorded_at >= timestamp'{staged_from}'
            and not exists (
                select 1 from {audit} as published
                where published.invocation_id = staged.invocation_id and published.model = staged.model
            )
        """
    )


def drop_stage(project: DbtProject, stage: str) -> None:
    """The stage schema and its clones; `drop table` does not purge, so an Iceberg clone's shared files stay."""
    if not project.query(f"show schemas like '{stage}'"):
        return
    for table in tables_only(project, stage):
        project.execute(f"drop table {stage}.{table}")
    project.execute(f"drop schema {stage} cascade")


def discard(project: DbtProject, name: str) -> None:
    version = find_version(project, name)
    if version.status != "staged":
        raise PublishRefused(f"{name} is {version.status}: only a staged backfill is discarded")
    drop_stage(project, version.detail["stage_schema"])
    version.status = "discarded"
    record(project, version)


def run_state_moment(project: DbtProject, pipelines: list[Pipeline], run_time: datetime) -> datetime:
    """When the run at `run_time` of the pipelines was last recorded: their tables' versions then are its state."""
    models = _models([table for pipeline in pipelines for table in pipeline_tables(project, pipeline)])
    (row,) = project.query(
        f"""
        select max(recorded_at) as recorded_at from {project.target_schema()}.{AUDIT}
        where model in ({models}) and run_time = timestamp'{format_timestamp(run_time)}'
            and run_kind in ('scheduled', 'reconcile', 'full_refresh')
            and (outcome = 'success' or (outcome = 'rolled_back' and rolled_back_outcome = 'success'))
        """
    )
    if row["recorded_at"] is None:
        raise PublishRefused(
            f"no run of {', '.join(p.name for p in pipelines)} at {format_timestamp(run_time)} succeeded"
            " (`late-data status` lists the last runs)"
        )
    return as_moment(row["recorded_at"])  # type: ignore[return-value]


def ensure_audit_columns(project: DbtProject) -> None:
    """The audit's rollback columns (late_data.run_audit_columns adds them too, on a dbt run)."""
    audit = f"{project.target_schema()}.{AUDIT}"
    present = set(project.spark.table(audit).columns)
    missing = [f"{name} string" for name in ("rolled_back_by", "rolled_back_outcome") if name not in present]
    if missing:
        project.execute(f"alter table {audit} add columns ({', '.join(missing)})")


def rollback(
    project: DbtProject,
    pipelines: list[Pipeline],
    to_run_time: datetime | None,
    to_version: str | None,
    name: str | None,
    now: datetime,
) -> NamedVersion:
    """Every late-data table of the pipelines back to its version after the run at `to_run_time`
    (or a named version's), the audit's later runs of those tables marked rolled back (and runs a
    later rollback marked, restored), recorded as a named version of its own. An interrupted
    rollback is finished first (and is what this call does)."""
    ensure_audit_columns(project)
    pending = unfinished(project)
    if pending is not None and pending.kind != "rollback":
        require_nothing_unfinished(project)
    version = pending if pending is not None else plan_rollback(project, pipelines, to_run_time, to_version, name, now)
    for table, number in version.tables.items():
        table_versions.restore(project, table, number)
    mark_audit(project, version)
    for table, number in version.tables.items():
        table_versions.tag(project, table, version.name, number)
    version.status = "rolled_back"
    record(project, version)
    project.forget_warehouse_state()
    return version


def plan_rollback(
    project: DbtProject,
    pipelines: list[Pipeline],
    to_run_time: datetime | None,
    to_version: str | None,
    name: str | None,
    now: datetime,
) -> NamedVersion:
    """The rollback's versions per table, checked (the target known, every version still kept), and
    journaled (status rolling_back) before anything changes."""
    tables = [table for pipeline in pipelines for table in pipeline_tables(project, pipeline)]
    versions: dict[str, int | None]
    if to_version is not None:
        target = find_version(project, to_version)
        if target.status not in ("published", "rolled_back"):
            raise PublishRefused(
                f"{to_version} is {target.status}: only a published or rolled-back version is returned to"
            )
        missing = [table for table in tables if table not in target.tables]
        if missing:
            raise PublishRefused(f"{to_version} holds no version of {', '.join(missing)}: select its pipelines only")
        state_at, run_time = target.state_at, target.run_time
        versions = {table: target.tables[table] for table in tables}
    elif to_run_time is not None:
        state_at, run_time = run_state_moment(project, pipelines, to_run_time), to_run_time
        versions = {table: table_versions.version_at(project, table, state_at) for table in tables}
    else:
        raise PublishRefused("a rollback needs a run time or a version name to go back to")
    described = to_version or format_timestamp(to_run_time or now)
    # A version the log no longer holds (None: gone from the snapshot log too) cannot be returned to.
    kept = {
        table: version
        for table, version in versions.items()
        if version is not None and table_versions.is_kept(project, table, version)
    }
    expired = [table for table in versions if table not in kept]
    if expired:
        raise PublishRefused(
            f"the state after {described} is no longer kept: {expired[0]}'s version of then has expired"
            f" (late_data.maintain_tables keeps {keep_description(project)}; named versions are kept as long as"
            " their tag on Iceberg)"
        )
    if all(table_versions.state_version(project, table) == number for table, number in kept.items()):
        raise PublishRefused(
            f"nothing to roll back: every table of {', '.join(p.name for p in pipelines)} holds {described}'s state"
        )
    version = NamedVersion(
        name=validate_name(name) if name else next_name(project, "rollback", now),
        kind="rollback",
        status="rolling_back",
        pipelines=[pipeline.name for pipeline in pipelines],
        run_time=run_time,
        state_at=state_at,
        tables=kept,
        base={
            table: number for table in kept if (number := table_versions.current_version(project, table)) is not None
        },
        detail={"to": described},
    )
    if any(existing.name == version.name for existing in named_versions(project)):
        raise PublishRefused(f"a version named {version.name} exists already: choose another --name")
    record(project, version)
    return version


def audit_rollback_rows(
    project: DbtProject, tables: list[str], state_at: datetime | None, rollback_name: str
) -> tuple[str, str]:
    """Predicates on the audit: the rows of `tables` the rollback `rollback_name` to `state_at`
    marks rolled back (recorded later), and those it restores: recorded by then and marked by
    another rollback made after then (a row a rollback marked before then stays marked: it was
    undone in that state too)."""
    stamp, models = timestamp_literal(state_at), _models(tables)
    later_rollbacks = [
        row["invocation_id"]
        for row in project.query(
            f"select distinct invocation_id from {project.target_schema()}.{AUDIT}"
            f" where run_kind = 'rollback' and recorded_at > {stamp} and invocation_id != {_sql_string(rollback_name)}"
        )
    ]
    return (
        f"model in ({models}) and recorded_at > {stamp} and run_kind != 'rollback' and outcome != 'rolled_back'",
        f"model in ({models}) and recorded_at <= {stamp} and outcome = 'rolled_back'"
        f" and rolled_back_by in ({', '.join(_sql_string(name) for name in later_rollbacks) or 'null'})",
    )


def mark_audit(project: DbtProject, version: NamedVersion) -> None:
    """The audit of the version's tables as it stood at its state_at: rows recorded later marked
    rolled back by it, rows a later rollback marked restored; then one `rollback` row per table."""
    audit = f"{project.target_schema()}.{AUDIT}"
    marked, restored = audit_rollback_rows(project, list(version.tables), version.state_at, version.name)
    project.execute(
        f"update {audit} set rolled_back_outcome = outcome, outcome = 'rolled_back',"
        f" rolled_back_by = {_sql_string(version.name)} where {marked}"
    )
    project.execute(
        f"update {audit} set outcome = rolled_back_outcome, rolled_back_outcome = null, rolled_back_by = null"
        f" where {restored}"
    )
    append_audit_rows(project, version, "rollback")


def append_audit_rows(project: DbtProject, version: NamedVersion, kind: str) -> None:
    """One audit row per table of a publish or a rollback (run_kind and outcome `kind`, invocation_id
    its name, plan the table's version and the manifest), once (a resumed command adds none twice)."""
    audit = f"{project.target_schema()}.{AUDIT}"
    given = {
        "invocation_id": _sql_string(version.name),
        "run_kind": _sql_string(kind),
        "run_time": f"timestamp'{format_timestamp(version.run_time)}'" if version.run_time else "null",
        "outcome": _sql_string(kind),
        "recorded_at": "current_timestamp()",
    }
    fields = project.spark.table(audit).schema.fields
    rows = " union all ".join(
        "select "
        + ", ".join(
            {
                **given,
                "model": _sql_string(audit_model(table)),
                "plan": _sql_string(json.dumps({"version": number, "manifest": version.detail.get("manifest")})),
            }.get(column.name, f"cast(null as {column.dataType.simpleString()})")
            + f" as {column.name}"
            for column in fields
        )
        for table, number in version.tables.items()
    )
    project.execute(
        f"insert into {audit} select * from ({rows}) as listed"
        f" where not exists (select 1 from {audit} as a where a.invocation_id = listed.invocation_id"
        " and a.model = listed.model)"
    )


def keep_description(project: DbtProject) -> str:
    if project.environment.table_format == "iceberg":
        return "Iceberg snapshots 24 hours and at least the last 100 (keep_hours, keep_snapshots)"
    return (
        "Delta's files and log 24 hours (keep_hours), 168 hours on a table a named version of the last 168 hours"
        " holds (delta.deletedFileRetentionDuration, delta.logRetentionDuration)"
    )


def version_lines(project: DbtProject) -> list[str]:
    """`late-data versions`: each named version, what it holds and how to read it."""
    versions = named_versions(project)
    if not versions:
        return ["versions: none named yet (a published backfill or a rollback names one)"]
    lines = []
    undone = undone_by(project)
    for version in versions:
        stamp = format_timestamp(version.recorded_at) if version.recorded_at else "-"
        to = str(version.detail.get("to", ""))
        held = (
            ""
            if version.kind != "rollback"
            else (f", version {to}'s state" if NAME.match(to) else f", the state after the run at {to}")
        )
        again = f"; `late-data rollback --to {version.name}` returns to it" if version.name in undone else ""
        lines.append(
            f"{version.name}: {version.kind} {state_label(version, undone)} at {stamp}{held}{again};"
            f" pipelines {', '.join(version.pipelines)}"
        )
        for table, number in version.tables.items():
            lines.append(f"  select * from {table_versions.read_as_of(project, table, number, version.name)}")
    return lines


def unfinished_lines(project: DbtProject) -> list[str]:
    """For `late-data status`: an interrupted publish or rollback, and which tables it switched."""
    pending = unfinished(project)
    if pending is None:
        published = [v for v in named_versions(project) if v.status in ("published", "rolled_back")]
        if not published:
            return []
        return [f"last named version: {published[-1].name} ({state_label(published[-1], undone_by(project))})"]
    command = f"late-data publish {pending.name}" if pending.kind == "backfill" else "late-data rollback"
    return [
        f"{'publish' if pending.kind == 'backfill' else 'rollback'} {pending.name} interrupted:"
        f" {describe_switched(project, pending)}; readers see the old state of the others; `{command}` finishes it"
    ]
