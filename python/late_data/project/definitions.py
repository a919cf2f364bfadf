"""A pipeline's definition: everything its numbers depend on, read from the parsed project by the
package (late_data.pipeline_definition: its select, the settings that change a window, and
`upstream`, each model, seed, macro and var upstream of it), recorded in the run audit with every
run. The one home of how a recorded definition is read and how two are compared, for `plan`,
`apply` and `check`; the package compares the same way before a run (late_data.definition_changes,
kept in step by a test)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from late_data.project.audit import AUDIT
from late_data.project.raw_tables import existing_tables
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.timeutil import format_timestamp

# The definition's own parts, as a change of each is named (measures are named one by one).
CHANGE_CLASSES = {
    "select": "the select redefined",
    "window": "the window layout",
    "series_key": "the series key",
    "event_key": "the event key",
    "late_windows": "the late windows",
    "dimensions": "the dimensions",
    "tie_breaker": "the tie breaker",
    "source_column": "the source column",
}
# How a changed upstream node of each kind is named (its label in `upstream` is "<kind> <name>").
UPSTREAM_CLASSES = {"model": "the select of ", "snapshot": "the select of ", "seed": "seed ", "macro": "macro "}


def measure_changes(recorded: str | None, current: str | None) -> list[str]:
    """`measure added: x`, `measure removed: y`, `measure redefined: z`, from two definitions' measures."""
    before = {measure["name"]: measure for measure in json.loads(recorded or "[]")}
    after = {measure["name"]: measure for measure in json.loads(current or "[]")}
    return [
        *(f"measure added: {name}" for name in after if name not in before),
        *(f"measure removed: {name}" for name in before if name not in after),
        *(f"measure redefined: {name}" for name in after if name in before and after[name] != before[name]),
    ]


def upstream_change(label: str, added: bool, removed: bool) -> str:
    """How a change of one upstream part is named: "upstream: the select of stg_x", "upstream:
    seed s (contents)", "upstream: macro m", "var v", "upstream: n added" / "... no longer read"."""
    kind, name = label.split(" ", 1)
    if kind == "var":
        return f"var {name}"
    if added:
        return f"upstream: {name} added"
    if removed:
        return f"upstream: {name} no longer read"
    return f"upstream: {UPSTREAM_CLASSES[kind]}{name}" + (" (contents)" if kind == "seed" else "")


def upstream_changes(recorded: dict[str, str], current: dict[str, str]) -> list[str]:
    """Each upstream part that differs, named (upstream_change), in label order."""
    return [
        upstream_change(label, label not in recorded, label not in current)
        for label in sorted(set(recorded) | set(current))
        if recorded.get(label) != current.get(label)
    ]


def definition_changes(
    recorded: dict[str, Any], current: dict[str, Any], legacy_select: str | None = None
) -> list[str]:
    """Each change between a recorded and the current definition, classed. A definition recorded
    before the upstream was part of it (no `upstream`) is compared by the parts it had, its select
    through `legacy_select` (the select's digest as that version made it), so an upgrade of the
    package forces no rebuild."""
    legacy = "upstream" not in recorded
    changes = measure_changes(recorded.get("measures"), current.get("measures"))
    for part, named in CHANGE_CLASSES.items():
        now = legacy_select if legacy and part == "select" else current.get(part)
        if recorded.get(part) != now:
            changes.append(
                f"{named}: {recorded.get(part)} -> {current.get(part)}" if part in ("late_windows", "window") else named
            )
    if not legacy:
        changes += upstream_changes(recorded["upstream"], current.get("upstream") or {})
    return changes


def reaches_upstream(changes: list[str]) -> bool:
    """Whether a change lies upstream of the pipeline's model (an apply then deploys the upstream models)."""
    return any(change.startswith(("upstream: ", "var ")) for change in changes)


def recorded_definitions(project: DbtProject, until: datetime | None = None) -> dict[str, dict[str, Any]]:
    """Per model, the definition its last successful scheduled, reconcile or full-refresh run (at or
    before `until`) recorded: what its tables were built with. Models whose runs recorded none
    (built before the audit had a definition) are left out, and so is every model when no run has
    made the audit yet or no run of this version has added its definition column."""
    audit = f"{project.target_schema()}.{AUDIT}"
    # Through the target's own engine, as the plan's other reads: no Spark of its own on Thrift.
    if AUDIT not in existing_tables(project.query, project.target_schema()):
        return {}
    if "definition" not in {row["col_name"] for row in project.query(f"describe {audit}")}:
        return {}
    rows = project.query(
        f"""
        select model, max_by(definition, run_time) as definition
        from {audit}
        where
            outcome = 'success' and run_kind not in ('backfill', 'held') and definition is not null
            {f"and run_time <= timestamp'{format_timestamp(until)}'" if until is not None else ""}
        group by model
        """
    )
    return {row["model"]: json.loads(row["definition"]) for row in rows}
