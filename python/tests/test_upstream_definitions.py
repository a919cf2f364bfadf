"""A pipeline's definition covers everything its numbers depend on upstream (the models, snapshots
and seeds it reads, the macros they call, the vars they read), not formatting, descriptions or
tests; the package's comparison (run before every run) and Python's (plan, apply, check) name the
same changes, from the parsed project only (the first test needs no Spark); and a fix upstream is
refused, planned, applied and published for every pipeline it reaches."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from late_data.commands.check import check_pipeline
from late_data.commands.plan import plan_definitions, plan_lines
from late_data.project.definitions import definition_changes
from late_data.project.pipelines import select_pipelines
from late_data.publishing.publish import publish
from late_data.publishing.rollback import rollback
from late_data.publishing.stage import stage_apply
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.environment import CHECKOUT, prepare_environment
from late_data.runtime.timeutil import format_timestamp
from late_data.tables import versions as table_versions
from tests.helpers import clock
from tests.upstream_project import RAW_SCHEMA, READINGS, edit, write_upstream_project


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


def test_an_upstream_fix_is_refused_before_anything_is_built_and_applied_to_every_pipeline_it_reaches(
    project: DbtProject, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The staging model both pipelines read fixed (its level doubled), as a user would: plain dbt
    refuses in on-run-start naming both (the view not rebuilt, no table written); the plan names the
    node and the pipelines it reaches; one stage applies both, the publish deploys the view, and both
    check right. A rollback brings the refusal back; code back as it was, the view deployed from
    the fix is refused as deployed until it is built from the code again."""
    spark = project.spark
    table_format = project.environment.table_format
    for schema in (SCHEMA, RAW_SCHEMA):
        spark.sql(f"drop schema if exists {schema} cascade")
    spark.sql(f"create schema {RAW_SCHEMA}")
    spark.sql(f"create table {RAW_SCHEMA}.readings ({READINGS}) using {table_format}")
    add = lambda *rows: spark.createDataFrame(list(rows), READINGS).writeTo(f"{RAW_SCHEMA}.readings").append()
    add(("a", "s1", at(0.2), 10.0, at(0.5)), ("b", "s2", at(0.4), 20.0, at(0.5)))
    folder = write_upstream_project(tmp_path / "project")
    monkeypatch.setenv("LATE_DATA_SCHEMA", SCHEMA)
    monkeypatch.setenv("LATE_DATA_PROJECT_DIR", str(folder))
    # The folder has no profiles: the checkout's, as its plain dbt commands pass them.
    monkeypatch.setenv("DBT_PROFILES_DIR", str(CHECKOUT / "profiles"))
    upstream = DbtProject(prepare_environment(), hold_home=False)
    build = ["build", "--resource-type", "seed", "--resource-type", "model"]
    scheduled = ["build", "--select", "levels group_levels"]
    try:
        dbt(folder, "deps")
        plain_dbt(folder, *build, run_time=at(1))
        add(("c", "s1", at(0.6), 30.0, at(1.5)))
        plain_dbt(folder, *scheduled, run_time=at(2))
        before = {table: table_versions.current_version(upstream, f"{SCHEMA}.{table}") for table in RESULTS}

        edit(folder, "models/stg_readings.sql", "as level,", "* 2 as level,")
        for command in (build, scheduled):
            outcome = plain_dbt(folder, *command, run_time=at(3), succeeds=False)
            message = str(outcome.exception)
            assert (
                "late-data: the definition of group_levels changed since its tables were built (upstream: the select of"
                " stg_readings); the definition of levels changed since its tables were built (upstream: the select"
                " of stg_readings): a run would mix two definitions in one table, so nothing was written." in message
            ), message
            assert "dbt build --full-refresh --select +group_levels+ +levels+" in message
        assert {table: table_versions.current_version(upstream, f"{SCHEMA}.{table}") for table in RESULTS} == before
        assert "* 2" not in deployed_view(upstream)

        pipelines = select_pipelines(upstream)
        lines = plan_lines(plan_definitions(upstream, pipelines))
        assert lines[-2:] == [
            "plan: upstream: the select of stg_readings reaches group_levels, levels",
            "plan: 2 of 2 pipelines changed",
        ]
        version, _ = stage_apply(
            upstream,
            pipelines,
            {pipeline.name: ["upstream: the select of stg_readings"] for pipeline in pipelines},
            at(4),
            None,
            tmp_path,
        )
        assert "* 2" not in deployed_view(upstream)
        publish(upstream, version.name, {})
        assert "* 2" in deployed_view(upstream)
        assert levels(upstream) == [("s1", 2, 80.0 * FEET), ("s2", 1, 40.0 * FEET)]
        for pipeline in pipelines:
            assert check_pipeline(upstream, pipeline, None).mismatched == 0, pipeline.name
        add(("d", "s2", at(0.8), 5.0, at(4.5)))
        plain_dbt(folder, *scheduled, run_time=at(5))
        assert levels(upstream) == [("s1", 2, 80.0 * FEET), ("s2", 2, 50.0 * FEET)]

        # Rolled back to before the apply: the fixed code is refused again, naming the node.
        rollback(upstream, pipelines, at(2), None, None, at(5.5))
        outcome = plain_dbt(folder, *scheduled, run_time=at(6), succeeds=False)
        assert "(upstream: the select of stg_readings" in str(outcome.exception)
        # The code back as it was: the view deployed from the fix would still be read.
        edit(folder, "models/stg_readings.sql", "* 2 as level,", "as level,")
        outcome = plain_dbt(folder, *scheduled, run_time=at(6), succeeds=False)
        assert "(upstream: stg_readings as deployed)" in str(outcome.exception)
        assert "(dbt build --select stg_readings)" in str(outcome.exception)
        plain_dbt(folder, "build", "--select", "stg_readings", run_time=at(6))
        plain_dbt(folder, *scheduled, run_time=at(6))
        assert levels(upstream) == [("s1", 2, 40.0 * FEET), ("s2", 2, 25.0 * FEET)]
        # A command of its own parses the project as the code now is.
        upstream = DbtProject(prepare_environment(), hold_home=False)
        for pipeline in select_pipelines(upstream):
            assert check_pipeline(upstream, pipeline, None).mismatched == 0, pipeline.name
    finally:
        monkeypatch.undo()
        prepare_environment()


SCHEMA = "upstream_example"
RESULTS = ("levels", "levels__versions", "group_levels", "group_levels__versions")
FEET = 0.3048
at = clock(datetime(2026, 4, 4, 8, 0, 0))


def plain_dbt(folder: Path, *args: str, run_time: datetime, succeeds: bool = True) -> Any:
    """A dbt command on the project in `folder` as cron types it, its run time in the environment."""
    from dbt.cli.main import dbtRunner

    with pytest.MonkeyPatch.context() as environment:
        environment.setenv("LATE_DATA_RUN_TIME", format_timestamp(run_time))
        outcome = dbtRunner().invoke(
            ["--quiet", *args, "--project-dir", str(folder), "--profiles-dir", str(CHECKOUT / "profiles")]
        )
    assert outcome.success == succeeds, outcome.exception
    return outcome


def deployed_view(project: DbtProject) -> str:
    return str(project.query(f"show create table {SCHEMA}.stg_readings")[0]["createtab_stmt"])


def levels(project: DbtProject) -> list[tuple[Any, ...]]:
    """(sensor, readings, their sum) of the levels pipeline's one window per sensor."""
    rows = project.query(f"select sensor, reading_count, level_sum from {SCHEMA}.levels order by sensor")
    return [(row["sensor"], row["reading_count"], pytest.approx(float(row["level_sum"]))) for row in rows]
