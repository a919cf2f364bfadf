"""The late-data pipelines of a dbt project, as the package works them out: `late-data` finds them in
the project (every model materialized as late_data), never by name.

The settings come from the package itself (`dbt run-operation late_data.describe_pipelines`, which
logs each pipeline as late_data.pipeline resolves it: its meta.late_data over the project's vars
over the package's defaults), so Python and the models cannot disagree on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from late_data.runtime.dbt_project import DESCRIBED, DbtProject


@dataclass(frozen=True)
class Measure:
    name: str
    kind: str  # count, sum, mean, min, max, count_distinct, percentile, median or expression
    column: str | None
    expression: str | None
    p: float | None = None  # the percentile's (median: 0.5)


@dataclass(frozen=True)
class Dimension:
    """A dimension a pipeline's select joins at event time (meta.late_data.dimensions)."""

    name: str
    relation: str  # schema.table the model reads
    key: str
    fact_key: str  # the model's column holding the key
    valid_from: str
    valid_to: str
    applied: str  # schema.table of the rows each run applied


@dataclass(frozen=True)
class Pipeline:
    """One late-data pipeline: its result model and what it keeps beside it."""

    name: str
    unique_id: str
    result: str  # schema.table of the result
    versions: str
    too_late: str | None
    quarantine: str | None
    histories: tuple[tuple[str, str], ...]  # (snapshot name, schema.table)
    sources: tuple[tuple[str, str], ...]  # (source table name, schema.table) it reads
    tags: tuple[str, ...]
    series_key: tuple[str, ...]
    event_key: tuple[str, ...]
    source_column: str | None
    window_size_seconds: int
    window_slide_seconds: int  # the window size itself for tumbling windows; sessions: the gap
    partition_size_seconds: int
    series_buckets: int
    late_window_seconds: int
    late_window_by_source: dict[str, int]
    measures: tuple[Measure, ...]
    count_column: str
    digest: str
    tie_breaker: tuple[str, ...]
    dimensions: tuple[Dimension, ...] = ()
    lateness: str | None = None  # schema.view of its lateness per source
    # Acceptance thresholds of a staged backfill: max_changed_window_share, max_partition_change, final_windows.
    publish_thresholds: dict[str, Any] = field(default_factory=dict)
    # Session windows (docs/design.md, "Sessions"): the gap that ends one and the longest one; None for fixed windows.
    session_gap_seconds: int | None = None
    max_session_seconds: int | None = None
    # What computes its numbers (late_data.project.definitions): the select's digest, the settings
    # that change a window and everything upstream of it, by part; what the run audit records with
    # every run. legacy_select: the select's digest as the package made it before (definition_changes).
    definition: dict[str, Any] = field(default_factory=dict)
    legacy_select: str | None = None

    @property
    def table(self) -> str:
        """The result table's name without its schema: how the run audit names the pipeline's model."""
        return self.result.split(".")[-1]

    @property
    def history(self) -> str | None:
        """The first history snapshot's table, if the pipeline has one."""
        return self.histories[0][1] if self.histories else None

    @property
    def history_tables(self) -> tuple[str, ...]:
        """The tables of the histories' closed versions: a history is a view of its table and the result."""
        return tuple(f"{relation}__closed" for _, relation in self.histories)

    @property
    def node_names(self) -> list[str]:
        """The dbt nodes a scheduled run of the pipeline builds: its result model and histories."""
        return [self.name, *(name for name, _ in self.histories)]

    def measure(self, kind: str) -> Measure | None:
        """The first measure of a kind, if any."""
        return next((measure for measure in self.measures if measure.kind == kind), None)


def from_description(described: dict[str, Any]) -> Pipeline:
    relations = described["relations"]
    return Pipeline(
        name=described["name"],
        unique_id=described["unique_id"],
        result=relations["result"],
        versions=relations["versions"],
        too_late=relations.get("too_late"),
        quarantine=relations.get("quarantine"),
        lateness=relations.get("lateness"),
        histories=tuple((history["name"], history["relation"]) for history in described["histories"]),
        sources=tuple((source["name"], source["relation"]) for source in described["sources"]),
        tags=tuple(described.get("tags") or ()),
        series_key=tuple(described["series_key"]),
        event_key=tuple(described["event_key"]),
        source_column=described.get("source_column"),
        window_size_seconds=int(described["window_size"]),
        window_slide_seconds=int(described.get("window_slide") or described["window_size"]),
        partition_size_seconds=int(described["partition_size"]),
        series_buckets=int(described["series_buckets"]),
        late_window_seconds=int(described["late_window"]),
        late_window_by_source={name: int(seconds) for name, seconds in described["late_window_by_source"].items()},
        measures=tuple(
            Measure(
                measure["name"], measure["kind"], measure.get("column"), measure.get("expression"), measure.get("p")
            )
            for measure in described["measures"]
        ),
        count_column=described["count_column"],
        digest=described["digest"],
        tie_breaker=tuple(described["tie_breaker"]),
        publish_thresholds=dict(described.get("publish_thresholds") or {}),
        session_gap_seconds=described.get("session_gap"),
        max_session_seconds=described.get("max_session"),
        definition=dict(described.get("definition") or {}),
        legacy_select=described.get("legacy_select"),
        dimensions=tuple(
            Dimension(
                name=dimension["name"],
                relation=dimension["relation"],
                key=dimension["key"],
                fact_key=dimension["fact_key"],
                valid_from=dimension["valid_from"],
                valid_to=dimension["valid_to"],
                applied=f"{relations['result'].rsplit('.', 1)[0]}.{dimension['applied']}",
            )
            for dimension in described.get("dimensions") or ()
        ),
    )


def find_pipelines(project: DbtProject) -> list[Pipeline]:
    """Every late-data pipeline of the project, in name order (read once per set of project vars)."""
    cached = project.cached("pipelines")
    if cached is not None:
        return list(cached)
    described = [
        from_description(payload) for prefix, payload in project.pipeline_descriptions() if prefix == DESCRIBED
    ]
    pipelines = sorted(described, key=lambda pipeline: pipeline.name)
    project.cache("pipelines", pipelines)
    return pipelines


def select_pipelines(project: DbtProject, names: list[str] | None = None) -> list[Pipeline]:
    """The project's pipelines, or those named (refused naming any unknown one); refused when the
    project has none."""
    pipelines = find_pipelines(project)
    if not pipelines:
        raise ValueError(
            f"the dbt project in {project.environment.project_dir} has no late-data pipeline (a model with"
            " materialized='late_data'): docs/your-own-pipeline.md"
        )
    if not names:
        return pipelines
    known = {pipeline.name: pipeline for pipeline in pipelines}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValueError(f"no late-data pipeline named {', '.join(unknown)} (the project has {', '.join(known)})")
    return [known[name] for name in names]


def scheduled_nodes(pipelines: list[Pipeline]) -> str:
    """A dbt selection of what a scheduled run builds: every pipeline's result and histories."""
    return " ".join(name for pipeline in pipelines for name in pipeline.node_names)


def compiled_select(project: DbtProject, pipeline: Pipeline) -> str:
    """The SQL of a pipeline's model (its select of the source's versions), compiled."""
    invocation = project.invoke(["compile", "--select", pipeline.name])
    (result,) = [result for result in invocation.result.results if result.node.unique_id == pipeline.unique_id]
    sql: str = result.node.compiled_code
    return sql
