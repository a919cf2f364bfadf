"""The SQL a late-data run executes, worked out now: `late-data explain`.

dbt runs each selected late-data pipeline and history as it would at the given run time, against
what the warehouse holds (the audit's last runs, the stored state), in one of three modes: a
scheduled run, a rebuild (first build or --full-refresh) or a reconciliation, with the var
`late_data_explain`: each node logs the statement of every table it would write (its versions,
its result; a history and its too-late listing) instead of running it, and nothing is written or
audited. Reads the plan needs (the audit, columns, the earliest arrival, the number of new
versions, which picks how the arrived events are looked up) still run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.timeutil import format_timestamp

MODES = ("scheduled", "rebuild", "reconcile")
NODE_HEADER = "-- node: "
EXPLAINED = "late-data explain "
_INVOCATION_ID = re.compile(r"'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'")
# A staged version chain is named after its invocation (late_data.shared_chain).
_CHAIN_NAME = re.compile(r"__chain_[0-9a-f]{12}\b")

_WHAT_RUNS = {
    "versions": "the versions that arrived since the previous run, appended (a rebuild: every version, a new table)",
    "chain": "the version chain, staged (cached) once for the windows and the too-late listing",
    "windows": "staged (cached), then written by replacing the (time partition, series bucket) pairs it holds",
    "history": "the versions this run closed (the result before its write against the result now), appended to the history's closed versions (a new history: an empty table, and the view)",
    "too_late": "merged by version_id (a new listing: created from it)",
}


@dataclass(frozen=True)
class CompiledNode:
    """One table a late-data node writes: `name` the table (or the staged view), `resource_type` the
    step (versions, chain, windows, history, too_late), `materialized` the node that writes it."""

    name: str
    resource_type: str
    materialized: str
    sql: str
    # How the result reads its versions in this run (the audit's `plan`), on the result's step.
    plan: str | None = None

    def render(self) -> str:
        what = _WHAT_RUNS.get(self.resource_type, self.resource_type)
        plan = f"-- plan: {self.plan}\n" if self.plan and self.resource_type == "windows" else ""
        return f"{NODE_HEADER}{self.name}\n-- {self.resource_type} of {self.materialized}: {what}\n{plan}{self.sql.strip()}\n"


def compile_run(project: DbtProject, run_time: datetime, mode: str, select: str) -> list[CompiledNode]:
    """The statements of the selected late-data nodes as a `mode` run at `run_time` would run them,
    in the order dbt runs them."""
    if mode not in MODES:
        raise ValueError(f"mode {mode!r} is not one of {', '.join(MODES)}")
    args = [
        "build",
        "--threads",
        "1",
        "--select",
        select,
        "--resource-type",
        "model",
        "--resource-type",
        "snapshot",
    ]
    if mode == "rebuild":
        args.append("--full-refresh")
    run_vars: dict[str, object] = {"run_time": format_timestamp(run_time), "late_data_explain": True}
    if mode == "reconcile":
        run_vars["reconcile"] = True
    steps = [step for _, step in project.logged(args, (EXPLAINED,), run_vars)]
    compiled = [
        CompiledNode(
            name=_CHAIN_NAME.sub("__chain_<invocation>", step["relation"].split(".")[-1]),
            resource_type=step["step"],
            materialized=step["node"],
            sql=_CHAIN_NAME.sub("__chain_<invocation>", _INVOCATION_ID.sub("'<invocation_id>'", step["sql"])),
            plan=step.get("plan"),
        )
        for step in steps
    ]
    if not compiled:
        raise ValueError(f"--select {select!r} selects no late-data model or snapshot")
    return compiled


def render_run(nodes: list[CompiledNode], mode: str, run_time: datetime) -> str:
    header = (
        f"-- The SQL of a {mode} run at {format_timestamp(run_time)}, as `late-data explain` works it out.\n"
        "-- Each table's select; its node stages and writes it as the line under its name says.\n"
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
    project: DbtProject, run_time: datetime, modes: tuple[str, ...], out_dir: Path, select: str
) -> list[Path]:
    """Each mode's rendered run into out_dir/<mode>.sql."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for mode in modes:
        path = out_dir / f"{mode}.sql"
        path.write_text(render_run(compile_run(project, run_time, mode, select), mode, run_time))
        paths.append(path)
    return paths
