"""A pipeline's definition (its select and the settings that change a window's value or place) is
recorded with every run; a run whose definition differs from the one its tables were built with is
refused before it writes, naming what changed, and a full refresh applies the change."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from late_data.commands.plan import plan_definitions, plan_lines
from late_data.project.pipelines import select_pipelines
from late_data.project.raw_tables import Reading, append_readings
from late_data.runtime.dbt_errors import DbtInvocationError
from late_data.tables import versions as table_versions
from tests.helpers import TEST_VARS, Pipeline, clock

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


def test_a_changed_definition_is_refused_until_a_full_refresh_applies_it(pipeline: Pipeline) -> None:
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
        r".* nothing was written\. Rebuild it from its raw sources: dbt build --full-refresh"
        r" --select water_level_window_means\+",
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
        f" {pipeline.raw_table} (dbt build --full-refresh --select water_level_window_means+)"
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

    # A full refresh applies the new definition; the runs after it take it as it stands.
    pipeline.project.use_vars({**TEST_VARS, "late_window_seconds": 900})
    pipeline.project.invoke(
        [
            "build",
            "--full-refresh",
            "--select",
            "tag:water_level",
            "--exclude",
            "resource_type:test",
            "resource_type:unit_test",
        ],
        {"run_time": "2026-03-03 08:04:00"},
    )
    pipeline.run(at(5))
    runs = recorded(pipeline)
    assert [kind for kind, _ in runs[-2:]] == ["full_refresh", "scheduled"]
    assert runs[-1][1]["late_windows"] == json.dumps({"water_level_readings": 900})
