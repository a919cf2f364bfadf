"""The SQL a late-data run executes, compiled now: `late-data explain`.

dbt compiles each selected node as it would run at the given run time, against what the warehouse
holds (the audit's last runs, the stored state), in one of three modes: a scheduled run, a rebuild
(first build or --full-refresh) or a reconciliation. No hook runs and nothing is written. Ephemeral
models are left out: they run inside the models that select from them, where they show as CTEs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from late_data.dbt_project import DbtProject
from late_data.timeutil import format_timestamp

MODES = ("scheduled", "rebuild", "reconcile")
DEFAULT_SELECTION = "tag:late_data"
NODE_HEADER = "-- node: "
_INVOCATION_ID = re.compile(r"'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'")

_WHAT_RUNS = {
    "incremental": "staged (cached), then written by insert_overwrite into the partitions it holds",
    "snapshot": "staged against the history's open versions, then merged (macros/late_data/history)",
    "table": "written as a whole table",
    "view": "created as a view",
}


@dataclass(frozen=True)
class CompiledNode:
    name: str
    resource_type: str
    materialized: str
    sql: str

    def render(self) -> str:
        what = _WHAT_RUNS.get(self.materialized, self.materialized)
        return f"{NODE_HEADER}{self.name}\n-- {self.resource_type}, {self.materialized}: {what}\n{self.sql.strip()}\n"


def compile_run(project: DbtProject, run_time: datetime, mode: str, select: str | None = None) -> list[CompiledNode]:
    """The selected late-data nodes compiled as a `mode` run at `run_time` would run them, in the
    order dbt runs them."""
    if mode not in MODES:
        raise ValueError(f"mode {mode!r} is not one of {', '.join(MODES)}")
    args = ["compile", "--threads", "1", "--select", select or DEFAULT_SELECTION]
    if mode == "rebuild":
        args.append("--full-refresh")
    run_vars: dict[str, object] = {"run_time": format_timestamp(run_time)}
    if mode == "reconcile":
        run_vars["reconcile"] = True
    invocation = project.invoke(args, run_vars)
    compiled = [
        CompiledNode(
            name=result.node.name,
            resource_type=str(result.node.resource_type),
            materialized=result.node.config.materialized,
            sql=_INVOCATION_ID.sub("'<invocation_id>'", result.node.compiled_code or ""),
        )
        for result in invocation.result.results
        if result.node.config.materialized != "ephemeral"
    ]
    if not compiled:
        raise ValueError(f"--select {select or DEFAULT_SELECTION!r} selects no late-data model or snapshot")
    return compiled


def render_run(nodes: list[CompiledNode], mode: str, run_time: datetime) -> str:
    header = (
        f"-- The SQL of a {mode} run at {format_timestamp(run_time)}, as `late-data explain` compiles it.\n"
        "-- Each node's select; its materialization stages and writes it as the line under its name says.\n"
    )
    return header + "\n" + "\n\n".join(node.render() for node in nodes)


def parse_rendered(text: str) -> dict[str, str]:
    """Node name -> its section of a rendered run (the inverse of render_run, for comparisons)."""
    sections: dict[str, str] = {}
    for chunk in text.split("\n" + NODE_HEADER)[1:]:
        name, _, body = chunk.partition("\n")
        sections[name.strip()] = body.strip()
    return sections


def write_runs(
    project: DbtProject, run_time: datetime, modes: tuple[str, ...], out_dir: Path, select: str | None = None
) -> list[Path]:
    """Each mode's rendered run into out_dir/<mode>.sql."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for mode in modes:
        path = out_dir / f"{mode}.sql"
        path.write_text(render_run(compile_run(project, run_time, mode, select), mode, run_time))
        paths.append(path)
    return paths
