"""A staged backfill, or a staged apply of a changed definition: it runs in a schema of its own,
`<schema>__stage_<name>`, holding a clone of every table of the target schema (metadata only:
Iceberg registers the current metadata under a second name, Delta makes shallow clones), so what
readers of the published tables see does not change; then its validation summary, per partition,
against the published tables."""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TypeVar

from late_data.project.pipelines import Pipeline, select_pipelines
from late_data.publishing.named_versions import (
    NAMED_VERSIONS,
    NamedVersion,
    PublishRefused,
    named_versions,
    next_name,
    record,
    require_nothing_unfinished,
    validate_name,
)
from late_data.running.backfill import run_backfill
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.timeutil import format_timestamp
from late_data.tables import versions as table_versions
from late_data.tables.history import commits_after


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


@dataclass(frozen=True)
class Stage:
    """A stage schema, built: the published tables' versions when it began (its base, held against
    expiry), its own tables' versions before its computation, and that moment."""

    schema: str
    base: dict[str, int | None]
    stage_base: dict[str, int | None]
    staged_from: str

    def record(
        self,
        project: DbtProject,
        kind: str,
        name: str,
        pipelines: list[Pipeline],
        run_time: datetime,
        detail: dict[str, object],
    ) -> NamedVersion:
        """The staged version of `kind`, recorded: its base and stage with the kind's own `detail`."""
        version = NamedVersion(
            name=name,
            kind=kind,
            status="staged",
            pipelines=[pipeline.name for pipeline in pipelines],
            run_time=run_time,
            base={table: version for table, version in self.base.items() if version is not None},
            detail={
                **detail,
                "stage_schema": self.schema,
                "stage_base": self.stage_base,
                "staged_from": self.staged_from,
            },
        )
        record(project, version)
        return version


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
    name = new_version_name(project, name, "backfill", run_time)
    stage, (_, manifest) = build_stage(
        project,
        pipelines,
        name,
        lambda staged_pipelines: run_backfill(
            project, staged_pipelines, start, end, chunk, include_too_late, run_time, home / "backfills" / name
        ),
    )
    summary = summarize(project, pipelines, stage.schema, stage.stage_base, start, end)
    summary_path = manifest.parent / "validation_summary.csv"
    write_summary(summary, summary_path)
    version = stage.record(
        project,
        "backfill",
        name,
        pipelines,
        run_time,
        {
            "from": format_timestamp(start),
            "to": format_timestamp(end),
            "include_too_late": include_too_late,
            "manifest": str(manifest),
            "summary": str(summary_path),
            "windows_in_range": windows_in_range(project, pipelines, start, end),
            "publishes": [
                table
                for pipeline in pipelines
                for table in (pipeline.result, *pipeline.history_tables)
                if table in stage.base
            ],
        },
    )
    return version, summary


def stage_apply(
    project: DbtProject,
    pipelines: list[Pipeline],
    changes: dict[str, list[str]],
    run_time: datetime,
    name: str | None,
    home: Path,
) -> tuple[NamedVersion, list[PartitionSummary]]:
    """A change of the pipelines' definitions applied in a stage schema: each rebuilt from its raw
    sources through its definition as the code now has it (dbt build --full-refresh: the versions
    table, the result, the too-late listing, and the history, which closes every window whose
    value changed as `definition_change`), at `run_time`; the published tables unchanged. Writes
    the changes and the validation summary under `home`/applies/<name>/ and records the staged
    version; `publish` replaces every table of the pipelines with its stage's, together."""
    name = new_version_name(project, name, "apply", run_time)
    folder = home / "applies" / name
    stage, _ = build_stage(
        project,
        pipelines,
        name,
        lambda staged_pipelines: project.invoke(
            [*APPLY_RUN, " ".join(f"+{node}" for pipeline in staged_pipelines for node in pipeline.node_names)],
            {"run_time": format_timestamp(run_time)},
        ),
    )
    ranges = [published_range(project, pipeline) for pipeline in pipelines]
    start = min((first for first, _ in ranges if first is not None), default=run_time)
    # Window starts are whole seconds: the range [first, last + 1 s) holds every published window.
    end = max((last for _, last in ranges if last is not None), default=run_time) + timedelta(seconds=1)
    summary = summarize(project, pipelines, stage.schema, stage.stage_base, start, end)
    write_summary(summary, folder / "validation_summary.csv")
    manifest = folder / "definition_changes.txt"
    manifest.write_text("".join(f"{pipeline}: {change}\n" for pipeline, listed in changes.items() for change in listed))
    version = stage.record(
        project,
        "apply",
        name,
        pipelines,
        run_time,
        {
            "changes": changes,
            "definitions": {pipeline.name: pipeline.definition for pipeline in pipelines},
            "code_commit": os.environ.get("LATE_DATA_CODE_COMMIT"),
            "manifest": str(manifest),
            "summary": str(folder / "validation_summary.csv"),
            "windows_in_range": windows_in_range(project, pipelines, start, end),
            "publishes": [table for table, number in stage.base.items() if number is not None],
        },
    )
    return version, summary


# A pipeline rebuilt from its raw sources: its models (the views it reads included), the seeds they
# read and its history snapshot, not its data tests (the stage is checked by its summary; `dbt test`
# runs after publish).
APPLY_RUN = [
    "build",
    "--full-refresh",
    "--resource-type",
    "seed",
    "--resource-type",
    "model",
    "--resource-type",
    "snapshot",
    "--select",
]


def new_version_name(project: DbtProject, name: str | None, kind: str, run_time: datetime) -> str:
    require_nothing_unfinished(project)
    name = validate_name(name) if name else next_name(project, kind, run_time)
    if any(version.name == name for version in named_versions(project)):
        raise PublishRefused(f"a version named {name} exists already: choose another --name")
    return name


Computed = TypeVar("Computed")


def build_stage(
    project: DbtProject, pipelines: list[Pipeline], name: str, compute: Callable[[list[Pipeline]], Computed]
) -> tuple[Stage, Computed]:
    """The stage schema of version `name`: a clone of every table of the target schema, then
    `compute` run on the pipelines as dbt sees them inside it (its result returned with the
    stage); a failure drops the stage."""
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
            computed = compute(staged_pipelines)
    except BaseException:
        drop_stage(project, stage)
        raise
    return Stage(stage, base, stage_base, str(now["now"])), computed


def published_range(project: DbtProject, pipeline: Pipeline) -> tuple[datetime | None, datetime | None]:
    """The first and last window start of a pipeline's published result."""
    [row] = project.query(f"select min(window_start) as first, max(window_start) as last from {pipeline.result}")
    return row["first"], row["last"]


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


def drop_stage(project: DbtProject, stage: str) -> None:
    """The stage schema and its clones; `drop table` does not purge, so an Iceberg clone's shared files stay."""
    if not project.query(f"show schemas like '{stage}'"):
        return
    for table in tables_only(project, stage):
        project.execute(f"drop table {stage}.{table}")
    project.execute(f"drop schema {stage} cascade")
