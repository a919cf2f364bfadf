"""What a Python script of a user's needs, importable from `late_data` itself (its `__all__` names
them) and kept there when the modules behind them move (docs/your-own-pipeline.md#from-python):

    from late_data import open_project, append_rows, run, check

    project = open_project("/srv/meters")          # its profile, warehouse and lock; project.spark
    append_rows(project, "raw.meter_readings", rows)
    report = run(project)                          # one scheduled run, as `dbt build` makes it
    found = check(project)                         # each pipeline against a recomputation
    project.close()
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from late_data.commands.check import PipelineCheck, check_pipeline
from late_data.project.audit import require_built
from late_data.project.pipelines import Pipeline, select_pipelines
from late_data.project.raw_tables import require_sources
from late_data.running.scheduler import RunReport, run_pipeline
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.environment import prepare_environment
from late_data.runtime.settings import SetupError, validate_relation


def open_project(project_dir: str | Path | None = None) -> DbtProject:
    """The dbt project in `project_dir` (default: LATE_DATA_PROJECT_DIR, else the current folder when
    it holds a dbt_project.yml), its settings checked; on the embedded targets it holds
    LATE_DATA_HOME's lock until `close()`. `project.spark` is its Spark session."""
    if project_dir is not None:
        os.environ["LATE_DATA_PROJECT_DIR"] = str(Path(project_dir).resolve())
    return DbtProject(prepare_environment())


def append_rows(project: DbtProject, table: str, rows: Iterable[Mapping[str, Any]]) -> int:
    """Rows (one mapping of column to value each) appended to the source table `table`
    (schema.table) in one commit, as they are: the pipeline's run quarantines what it cannot count.
    A row without `ingested_at` is stamped with the moment of the append, as the raw-data contract
    asks of a loader; naive datetimes are UTC. Returns how many rows were appended; a table that does not exist,
    or a column it does not have, is refused naming it, and nothing is appended."""
    relation = validate_relation("append_rows table", table)
    require_sources(project.query, [relation])
    target = project.spark.table(relation)
    columns = target.schema.fieldNames()
    timestamps = {field.name for field in target.schema.fields if field.dataType.typeName() == "timestamp"}
    stamped_at = datetime.now(UTC)
    records = []
    for row in rows:
        unknown = sorted(set(row) - set(columns))
        if unknown:
            raise SetupError(f"append_rows: {relation} has no column {', '.join(unknown)}")
        record = {column: row.get(column) for column in columns}
        if "ingested_at" in columns and record["ingested_at"] is None:
            record["ingested_at"] = stamped_at
        for column in timestamps:
            # A naive datetime is UTC here, as everywhere in the project; PySpark would read it in
            # the Python process's local time zone.
            value = record[column]
            if isinstance(value, datetime) and value.tzinfo is None:
                record[column] = value.replace(tzinfo=UTC)
        records.append(tuple(record[column] for column in columns))
    if records:
        project.spark.createDataFrame(records, target.schema).writeTo(relation).append()
    return len(records)


def run(project: DbtProject, run_time: datetime | None = None, select: str | None = None) -> RunReport:
    """One scheduled run at `run_time` (default now, UTC): `dbt build` of the project's seeds, models
    and snapshots (or the dbt selection `select`), summarised from the run audit."""
    return run_pipeline(project, run_time or datetime.now(UTC).replace(tzinfo=None), select)


def pipelines_with_sources(project: DbtProject, names: list[str] | None = None) -> list[Pipeline]:
    """The project's late-data pipelines (or those named), each source table they read there:
    a run on a missing source would read nothing and report success."""
    pipelines = select_pipelines(project, names)
    require_sources(project.query, [relation for pipeline in pipelines for _, relation in pipeline.sources])
    return pipelines


def check(
    project: DbtProject, pipelines: list[str] | None = None, run_time: datetime | None = None
) -> list[PipelineCheck]:
    """Each pipeline (or those named) against an independent recomputation from its sources, as of
    its last run at or before `run_time` (default: its last run); `late-data check` prints them.
    A project never built is refused."""
    selected = pipelines_with_sources(project, pipelines)
    require_built(project)
    return [check_pipeline(project, pipeline, run_time) for pipeline in selected]
