"""A pipeline's definition (its select and the settings that change a window's value or place) is
recorded with every run; a run whose definition differs from the one its tables were built with is
refused before it writes, naming what changed, and a staged apply publishes the change."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import pytest

from late_data.commands.check import check_pipeline
from late_data.commands.plan import plan_definitions, plan_lines
from late_data.project.audit import history_as_of
from late_data.project.pipelines import select_pipelines
from late_data.project.raw_tables import Reading, append_readings
from late_data.publishing import publish as publishing
from late_data.publishing.named_versions import unfinished_lines, version_lines
from late_data.publishing.publish import publish
from late_data.publishing.rollback import rollback
from late_data.publishing.stage import stage_apply
from late_data.runtime.dbt_errors import DbtInvocationError
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.timeutil import format_timestamp
from late_data.tables import versions as table_versions
from tests.helpers import TEST_VARS, Pipeline, clock, why_versions

T0 = datetime(2026, 3, 3, 8, 0, 0)
at = clock(T0)
TABLES = ("water_level_window_means", "int_water_level__versions", "water_level_too_late_readings")


def table_state(pipeline: Pipeline) -> dict[str, int | None]:
    schema = pipeline.project.target_schema()
    return {table: table_versions.current_version(pipeline.project, f"{schema}.{table}") for table in TABLES}


def recorded(pipeline: Pipeline) -> list[tuple[str, dict[str, object]]]:
    """(run kind, definition) of each successful run of the result table, oldest first."""
    rows = pipeline.spark.sql(
        f"select run_kind, definition from {pipeline.project.target_schema()}.late_data_run_audit"
        " where model = 'water_level_window_means' and outcome = 'success' order by recorded_at"
    ).collect()
    return [(row["run_kind"], json.loads(row["definition"])) for row in rows]


def result_rows(pipeline: Pipeline, table: str | None = None) -> list[tuple[object, ...]]:
    """(location, is_final, reading_count, value_sum) of each window, in order."""
    table = table or pipeline.means_table
    rows = pipeline.spark.sql(f"select location, is_final, reading_count, value_sum from {table} order by 1").collect()
    return [tuple(row) for row in rows]


def test_a_changed_definition_is_refused_until_a_staged_apply_publishes_it(
    pipeline: Pipeline, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add = lambda *readings: append_readings(pipeline.spark, pipeline.raw_table, readings)
    add(Reading("a", "harbour", at(0.2), 1.0, at(0.3)), Reading("b", "bridge", at(0.4), 4.0, at(0.5)))
    pipeline.run(at(1))
    add(Reading("c", "harbour", at(0.5), 3.0, at(2.5)))
    before = table_state(pipeline)

    # A wider late window: each window would be final at another moment than its stored state says.
    pipeline.project.use_vars({**TEST_VARS, "late_window_seconds": 900})
    with pytest.raises(
        DbtInvocationError,
        match=r"the definition of water_level_window_means changed since its tables were built \(late_windows\)"
        r".* nothing was written\. Rebuild it from its raw sources in a stage \(late-data plan, then late-data"
        r" apply\), or in place: dbt build --full-refresh --select water_level_window_means\+",
    ):
        pipeline.run(at(3))
    assert table_state(pipeline) == before
    # The plan names the change and what applying it rebuilds and reads, counted again here.
    result = pipeline.spark.sql(
        f"select count(*), count(distinct partition_start), min(window_start), max(window_start) from {pipeline.means_table}"
    ).first()
    raw_rows = pipeline.spark.sql(f"select count(*) from {pipeline.raw_table}").first()[0]
    lines = plan_lines(plan_definitions(pipeline.project, select_pipelines(pipeline.project)))
    assert lines[-1] == "plan: 1 of 2 pipelines changed"
    assert lines[0] == "plan: page_error_rates: unchanged" or lines[0].startswith(
        "plan: page_error_rates: no definition"
    )
    assert lines[1] == (
        'plan: water_level_window_means: the late windows: {"water_level_readings": 600} ->'
        f' {{"water_level_readings": 900}}. Applying it rebuilds the pipeline whole: {result[0]:,} windows in'
        f" {result[1]:,} partitions from {result[2]} to {result[3]}, reading {raw_rows:,} rows of"
        f" {pipeline.raw_table} (`late-data apply` stages it; in place: dbt build --full-refresh --select"
        " water_level_window_means+)"
    )

    # Back to the definition the tables were built with: the same run goes through (no false alarm).
    pipeline.project.use_vars(TEST_VARS)
    pipeline.run(at(3))
    runs = recorded(pipeline)
    assert len(runs) == 2 and runs[0][1] == runs[1][1]
    assert runs[0][1]["late_windows"] == json.dumps({"water_level_readings": 600})
    assert runs[0][1]["select"]  # the model's code, digested
    assert plan_lines(
        plan_definitions(pipeline.project, select_pipelines(pipeline.project, ["water_level_window_means"]))
    ) == [
        "plan: water_level_window_means: unchanged",
        "plan: 0 of 1 pipelines changed",
    ]

    # 08:00's windows final (at 08:11, the late window of 600 s), then the new definition applied
    # at 08:13 in a stage: under 900 s they are final only at 08:16, so the rebuild publishes a
    # version of each, labelled with the change of definition. Readers see nothing of it until
    # it is published; the runs after it take the definition as it stands.
    pipeline.run(at(12))
    published, before_apply = result_rows(pipeline), table_state(pipeline)
    pipeline.project.use_vars({**TEST_VARS, "late_window_seconds": 900})
    settings = select_pipelines(pipeline.project, ["water_level_window_means"])
    version, summary = stage_apply(
        pipeline.project, settings, {"water_level_window_means": ["the late windows"]}, at(13), None, tmp_path
    )
    assert version.name == "apply_20260303_r1"
    assert (result_rows(pipeline), table_state(pipeline)) == (published, before_apply)
    staged = f"{version.detail['stage_schema']}.water_level_window_means"
    staged_rows = result_rows(pipeline, staged)
    assert staged_rows == [(location, False, *values) for location, _, *values in published]
    # Finality is not a value: the summary counts no window changed in the one partition.
    assert [(row.partition_start, row.windows_before, row.windows_changed) for row in summary] == [(at(0), 2, 0)]
    # A publish stopped after its first table (as a kill -9 leaves it: the journal row says
    # publishing, one table new, the others old) is finished by publishing again.
    replace_contents = publishing.replace_contents

    def replace_then_stop(project: DbtProject, source: str, target: str) -> None:
        replace_contents(project, source, target)
        raise KeyboardInterrupt

    monkeypatch.setattr(publishing, "replace_contents", replace_then_stop)
    with pytest.raises(KeyboardInterrupt):
        publish(pipeline.project, version.name, {})
    monkeypatch.undo()
    assert result_rows(pipeline) == staged_rows
    assert unfinished_lines(pipeline.project) == [
        f"publish apply_20260303_r1 interrupted: 1 of {len(version.base)} tables at their new version:"
        f" {pipeline.means_table}; readers see the old state of the others; `late-data publish apply_20260303_r1`"
        " finishes it"
    ]
    publish(pipeline.project, version.name, {})
    assert result_rows(pipeline) == staged_rows
    assert version_lines(pipeline.project)[0].startswith("apply_20260303_r1: apply published at")
    pipeline.run(at(14))
    assert check_pipeline(pipeline.project, settings[0], None).mismatched == 0
    runs = recorded(pipeline)
    assert [kind for kind, _ in runs[-2:]] == ["full_refresh", "scheduled"]
    assert runs[-1][1]["late_windows"] == json.dumps({"water_level_readings": 900})
    # Each version says which definition computed it (the digest of what its run recorded), and the
    # versions the full refresh published are the definition's change, every other one is not.
    digests = dict(
        pipeline.spark.sql(
            f"select run_time, substr(md5(definition), 1, 12) from {pipeline.project.target_schema()}.late_data_run_audit"
            " where model = 'water_level_window_means' and outcome = 'success'"
        ).collect()
    )
    revisions = pipeline.spark.sql(
        "select location, valid_from, is_final, revision_reason, definition_id, code_commit"
        f" from {pipeline.project.target_schema()}.water_level_window_revisions order by location, valid_from"
    ).collect()
    assert [(row["location"], row["valid_from"], row["is_final"], row["revision_reason"]) for row in revisions] == [
        ("bridge", at(1), False, "initial"),
        ("bridge", at(12), True, "finalized"),
        ("bridge", at(13), False, "definition_change"),
        ("harbour", at(1), False, "initial"),
        ("harbour", at(3), False, "late_data"),
        ("harbour", at(12), True, "finalized"),
        ("harbour", at(13), False, "definition_change"),
    ]
    assert all(row["definition_id"] == digests[row["valid_from"]] for row in revisions)
    # `late-data why` tells harbour's window the same way, each version with its definition, and
    # each version read as of its own run recomputed from the deliveries why counts for it: those
    # before the apply from the versions table as it stood then (the apply loaded every one again).
    told = why_versions(pipeline.project, "harbour", at(0))
    assert [(reason, definition) for _, reason, definition in told] == [
        ("initial", digests[at(1)]),
        ("late_data", digests[at(3)]),
        ("finalized", digests[at(12)]),
        ("definition_change", digests[at(13)]),
    ]
    # And the commit of the code each run ran: this checkout's (none where it is not a repository).
    assert {row["code_commit"] for row in revisions} == {os.environ.get("LATE_DATA_CODE_COMMIT")}
    assert version.detail["code_commit"] == os.environ.get("LATE_DATA_CODE_COMMIT")
    # Read as of a moment before the rebuild, the history gives the old definition's state.
    history = f"{pipeline.project.target_schema()}.water_level_window_means_history"
    finality = lambda moment: sorted(
        tuple(row) for row in history_as_of(pipeline.spark, history, moment, "location, is_final").collect()
    )
    assert finality(at(12.5)) == [("bridge", True), ("harbour", True)]
    assert finality(at(13.5)) == [("bridge", False), ("harbour", False)]
    assert digests[at(13)] != digests[at(12)] == digests[at(1)]
    # The as-of view (late_data.as_of) names the definition of each value it returns, on both sides.
    for moment, run in ((at(12.5), at(12)), (at(13.5), at(13))):
        shown = (
            pipeline.project.invoke(
                ["show", "--select", "water_level_window_means_as_of", "--limit", "10"],
                {"run_time": format_timestamp(at(14)), "as_of": format_timestamp(moment)},
            )
            .result.results[0]
            .agate_table
        )
        assert {row["definition_id"] for row in shown.rows} == {digests[run]}, moment

    # A rollback to the last run before the rebuild returns the tables to the old definition: a run
    # of the new one is refused again, one of the old one goes on.
    settings = select_pipelines(pipeline.project, ["water_level_window_means"])
    rollback(pipeline.project, settings, at(12), None, None, at(14.5))
    assert finality(at(14.6)) == [("bridge", True), ("harbour", True)]
    # why, after it: the versions the rollback kept (the versions table back to the loads of the
    # runs at 08:01 and 08:03), each recomputed from its deliveries.
    assert [reason for _, reason, _ in why_versions(pipeline.project, "harbour", at(0))] == [
        "initial",
        "late_data",
        "finalized",
    ]
    with pytest.raises(DbtInvocationError, match=r"changed since its tables were built \(late_windows\)"):
        pipeline.run(at(15))
    pipeline.project.use_vars(TEST_VARS)
    pipeline.run(at(15))

    # A change of the window layout rebuilds the pipeline whole: windows of 150 s from the same rows.
    pipeline.project.use_vars({**TEST_VARS, "window_size_seconds": 150})
    [wider] = select_pipelines(pipeline.project, ["water_level_window_means"])
    version, _ = stage_apply(
        pipeline.project, [wider], {wider.name: ["the window layout"]}, at(16), "wider_windows", tmp_path
    )
    publish(pipeline.project, version.name, {})
    windows = pipeline.spark.sql(
        f"select location, window_start, window_end, reading_count from {pipeline.means_table} order by 1"
    ).collect()
    assert [tuple(row) for row in windows] == [("bridge", at(0), at(2.5), 1), ("harbour", at(0), at(2.5), 2)]
    assert check_pipeline(pipeline.project, wider, None).mismatched == 0
    relabelled = pipeline.spark.sql(
        f"select location, reading_count, revision_reason from {pipeline.project.target_schema()}.water_level_window_revisions"
        f" where valid_from = timestamp'{at(16):%Y-%m-%d %H:%M:%S}' order by location"
    ).collect()
    assert [tuple(row) for row in relabelled] == [
        ("bridge", 1, "definition_change"),
        ("harbour", 2, "definition_change"),
    ]
    pipeline.run(at(17))


def test_publishing_an_apply_adds_the_columns_of_measures_added_and_drops_those_of_measures_removed(
    project: DbtProject,
) -> None:
    schema, table_format = project.target_schema(), project.environment.table_format
    source, target = f"{schema}.apply_source", f"{schema}.apply_target"
    project.execute(f"create schema if not exists {schema}")
    for table in (source, target):
        project.execute(f"drop table if exists {table}")
    project.execute(f"create table {target} (window_start timestamp, removed double, kept bigint) using {table_format}")
    project.execute(
        f"insert into {target} values (timestamp'2026-03-03 08:00:00', 1.5, 1), (timestamp'2026-03-03 08:01:00', 2.5, 2)"
    )
    project.execute(f"create table {source} (window_start timestamp, kept bigint, added double) using {table_format}")
    project.execute(f"insert into {source} values (timestamp'2026-03-03 08:00:00', 3, 0.5)")
    publishing.replace_contents(project, source, target)
    assert project.spark.table(target).columns == ["window_start", "kept", "added"]
    assert [tuple(row) for row in project.spark.table(target).collect()] == [(at(0), 3, 0.5)]
    for table in (source, target):
        project.execute(f"drop table {table}")
