"""A pipeline's definition covers everything its numbers depend on upstream (the models, snapshots
and seeds it reads, the macros they call, the vars they read), not formatting, descriptions or
tests; the package's comparison (run before every run) and Python's (plan, apply, check) name the
same changes. From the parsed project only: these need no Spark."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from late_data.project.definitions import definition_changes
from late_data.runtime.environment import CHECKOUT
from tests.upstream_project import edit, write_upstream_project


def dbt(folder: Path, *args: str) -> list[str]:
    """A dbt command on the project in `folder`; the messages its macros logged."""
    from dbt.cli.main import dbtRunner

    logged: list[str] = []

    def keep(event: Any) -> None:
        if event.info.name == "JinjaLogInfo":
            logged.append(event.data.msg)

    outcome = dbtRunner(callbacks=[keep]).invoke(
        ["--quiet", *args, "--project-dir", str(folder), "--profiles-dir", str(CHECKOUT / "profiles")]
    )
    assert outcome.success, outcome.exception
    return logged


def definitions(folder: Path) -> dict[str, dict[str, Any]]:
    """Each pipeline's definition and its legacy select digest, as late_data.describe_pipelines gives them."""
    prefix = "late-data pipeline "
    described = [
        json.loads(message[len(prefix) :])
        for message in dbt(folder, "run-operation", "late_data.describe_pipelines")
        if message.startswith(prefix)
    ]
    return {pipeline["name"]: {**pipeline["definition"], "legacy": pipeline["legacy_select"]} for pipeline in described}


def package_changes(folder: Path, recorded: dict[str, Any], current: dict[str, Any], legacy: str | None) -> list[str]:
    """late_data.definition_changes (what a run refuses with) on the same two definitions."""
    arguments = json.dumps({"recorded": recorded, "current": current, "legacy_select": legacy})
    prefix = "definition changes "
    [message] = [
        message
        for message in dbt(folder, "run-operation", "log_definition_changes", "--args", arguments)
        if message.startswith(prefix)
    ]
    changes: list[str] = json.loads(message[len(prefix) :])
    return changes


def without_legacy(definition: dict[str, Any]) -> dict[str, Any]:
    return {part: value for part, value in definition.items() if part != "legacy"}


def test_a_definition_covers_the_upstream_and_leaves_out_formatting_descriptions_and_tests(tmp_path: Path) -> None:
    folder = write_upstream_project(tmp_path / "project")
    dbt(folder, "deps")
    before = definitions(folder)
    assert set(before["levels"]["upstream"]) == {"model stg_readings", "macro to_meters", "var reading_scale"}
    assert set(before["group_levels"]["upstream"]) == {
        "model stg_readings",
        "seed sensor_groups",
        "macro to_meters",
        "var reading_scale",
    }

    # Formatting, a description, a test, a pipeline's own description: nothing that computes.
    edit(
        folder,
        "models/stg_readings.sql",
        "select\n    event_id,\n    sensor,",
        "-- the readings, in meters\nSELECT event_id, /* the event */ SENSOR,\n",
    )
    edit(folder, "models/stg_readings.sql", "as level,\n    ingested_at", "AS level,   ingested_at")
    edit(folder, "macros/to_meters.sql", "{{ column }} * 0.3048", "{{ column }}  *  0.3048 {# feet #}")
    edit(
        folder,
        "models/sources.yml",
        "    description: The readings in meters.",
        "    description: Each reading in meters, as the sensors sent it.\n    columns:\n"
        "      - name: event_id\n        data_tests: [not_null]",
    )
    edit(folder, "models/levels.sql", "select event_id", "-- levels per sensor\nselect   event_id")
    assert definitions(folder) == before

    # A fix in the staging model, its macro, its var and the seed: each pipeline it reaches names it.
    edit(folder, "models/stg_readings.sql", "AS level,", "* 2 AS level,")
    edit(folder, "macros/to_meters.sql", "0.3048", "0.30480")
    edit(folder, "dbt_project.yml", "reading_scale: 1", "reading_scale: 1000")
    edit(folder, "seeds/sensor_groups.csv", "s2,south", "s2,north")
    after = definitions(folder)
    shared = ["upstream: macro to_meters", "upstream: the select of stg_readings", "var reading_scale"]
    expected = {
        "levels": shared,
        "group_levels": [*shared[:2], "upstream: seed sensor_groups (contents)", shared[2]],
    }
    for name, changes in expected.items():
        recorded, current = without_legacy(before[name]), without_legacy(after[name])
        assert definition_changes(recorded, current) == changes, name
        assert package_changes(folder, recorded, current, None) == changes, name

    # A definition recorded before the upstream was part of it: its select compared as it was digested then.
    legacy_recorded = {**without_legacy(before["levels"]), "select": before["levels"]["legacy"]}
    del legacy_recorded["upstream"]
    current = without_legacy(after["levels"])
    assert definition_changes(legacy_recorded, current, after["levels"]["legacy"]) == []
    assert package_changes(folder, legacy_recorded, current, after["levels"]["legacy"]) == []
    edit(folder, "models/levels.sql", "select   event_id", "select distinct event_id")
    changed_select = definitions(folder)["levels"]
    assert definition_changes(legacy_recorded, without_legacy(changed_select), changed_select["legacy"]) == [
        "the select redefined"
    ]
