"""A history that appends the versions it closes (and reads its open ones from the result) holds,
version for version, what the history that kept every version in one table held: the same scenario
of scheduled runs, reconciliations and a --full-refresh build, run on the package before the change,
wrote python/tests/data/history_before_appending.csv (LATE_DATA_HISTORY_FIXTURE=write, with
LATE_DATA_PROJECT_DIR at a checkout of that package); this test runs it again and compares every
version of every window and every revision, column by column."""

from __future__ import annotations

import csv
import os
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from late_data.pipeline import Upkeep, run_simulated, scenario_feed
from late_data.timeutil import format_timestamp
from tests.helpers import TEST_VARS, Pipeline, water_levels

ORIGIN = datetime(2026, 3, 2, 12, 0, 0)
SCENARIO = water_levels(locations=6, correction_share=0.05, moved_correction_share=0.5, too_late_share=0.02)
FIXTURE = Path(__file__).parent / "data" / "history_before_appending.csv"
# The run that published a version, by its dbt invocation: a new id on every run of the scenario.
UNREPEATABLE = {"invocation_id"}


def relation_rows(pipeline: Pipeline, relation: str) -> list[list[str]]:
    frame = pipeline.spark.table(f"{pipeline.project.target_schema()}.{relation}")
    columns = [column for column in frame.columns if column not in UNREPEATABLE]
    rows = [[relation, *columns]]
    rows.extend(sorted([relation, *(str(value) for value in row)] for row in frame.select(*columns).collect()))
    return rows


def test_the_history_holds_every_version_the_one_table_history_held(project: Any) -> None:
    pipeline = Pipeline(project, TEST_VARS)
    end = ORIGIN + timedelta(minutes=30)
    feed = scenario_feed(pipeline.project, pipeline.raw_tables, ORIGIN, water_levels=SCENARIO)
    select = pipeline.pipeline_tag
    run_simulated(
        project,
        feed,
        ORIGIN,
        end,
        timedelta(minutes=3),
        timedelta(seconds=10),
        pipeline_tag=select,
        upkeep=Upkeep(reconcile_every=4),
    )
    project.invoke(
        ["build", "--full-refresh", "--select", f"+tag:{select}"],
        {"run_time": format_timestamp(end + timedelta(minutes=1))},
    )
    run_simulated(
        project,
        feed,
        ORIGIN,
        end + timedelta(minutes=12),
        timedelta(minutes=3),
        timedelta(seconds=10),
        pipeline_tag=select,
    )
    rows = relation_rows(pipeline, "water_level_window_means_history") + relation_rows(
        pipeline, "water_level_window_revisions"
    )
    if os.environ.get("LATE_DATA_HISTORY_FIXTURE") == "write":
        with FIXTURE.open("w", newline="") as out:
            csv.writer(out).writerows(rows)
    with FIXTURE.open(newline="") as recorded:
        before = list(csv.reader(recorded))
    closed = [row for row in rows if row[0] == "water_level_window_means_history" and row[-1] == "False"]
    assert len(closed) > 20  # versions were closed: late data, corrections, vanished windows
    assert len(rows) == len(before)
    for now, then in zip(rows, before, strict=True):
        assert now == then
