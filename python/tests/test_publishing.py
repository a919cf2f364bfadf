"""Safe publishing: a staged backfill is invisible until published, thresholds refuse promotion,
publish survives kill -9, rollback returns every late-data table (and the audit) to a run's state,
named versions are listed and read by name. Runs on Iceberg, and on Delta in test_delta.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from late_data.arguments import build_parser
from late_data.commands.check import check_pipeline
from late_data.commands.why import window_story
from late_data.project.audit import audit_model, history_as_of, resume_point
from late_data.project.pipelines import Pipeline as PipelineSettings
from late_data.project.pipelines import select_pipelines
from late_data.project.raw_tables import Reading, append_readings
from late_data.publishing.named_versions import PublishRefused, named_versions, unfinished_lines, version_lines
from late_data.publishing.publish import publish
from late_data.publishing.rollback import rollback
from late_data.publishing.stage import pipeline_tables, stage_backfill
from late_data.running.scheduler import run_simulated
from late_data.runtime.dbt_errors import DbtInvocationError
from late_data.tables import versions as table_versions
from tests.helpers import Pipeline, clock, why_versions

T0 = datetime(2026, 3, 3, 8, 0, 0)
at = clock(T0)
COLUMNS = "window_start, location, reading_count, mean_value, is_final"


def result(pipeline: Pipeline, table: str | None = None) -> list[tuple[Any, ...]]:
    table = table or f"{pipeline.project.target_schema()}.water_level_window_means"
    return [tuple(row) for row in pipeline.spark.sql(f"select {COLUMNS} from {table} order by 1, 2").collect()]


def history(pipeline: Pipeline, run_time: datetime) -> list[tuple[Any, ...]]:
    table = f"{pipeline.project.target_schema()}.water_level_window_means_history"
    return sorted(tuple(row) for row in history_as_of(pipeline.spark, table, run_time, COLUMNS).collect())


def water_level(pipeline: Pipeline) -> PipelineSettings:
    return select_pipelines(pipeline.project, ["water_level_window_means"])[0]


def versions_now(pipeline: Pipeline) -> dict[str, int | None]:
    settings = water_level(pipeline)
    return {
        table: table_versions.current_version(pipeline.project, table)
        for table in pipeline_tables(pipeline.project, settings)
    }


def mismatched(pipeline: Pipeline) -> int:
    return check_pipeline(pipeline.project, water_level(pipeline), None).mismatched


def built(pipeline: Pipeline) -> Pipeline:
    """Two locations, a final window 08:00, then a partner's bad resend arriving too late for it."""
    add = lambda *readings: append_readings(pipeline.spark, pipeline.raw_table, readings)
    add(Reading("a", "harbour", at(0.2), 1.0, at(0.3)), Reading("b", "bridge", at(0.4), 4.0, at(0.5)))
    pipeline.run(at(1))
    add(Reading("c", "harbour", at(0.5), 3.0, at(2.5)), Reading("d", "bridge", at(15.5), 6.0, at(16)))
    pipeline.run(at(12))  # loads c; 08:00 is final (since 08:11)
    add(Reading("e", "bridge", at(17), 8.0, at(17.5)))
    # Too late for 08:00: the run lists it, only a backfill including too-late rows counts it.
    add(Reading("bad", "harbour", at(0.6), 1000.0, at(19.5)))
    pipeline.run(at(20))
    return pipeline


def test_a_staged_backfill_is_invisible_until_published_and_a_rollback_restores_every_table(
    pipeline: Pipeline, tmp_path: Path
) -> None:
    project = built(pipeline)
    before, base = result(pipeline), versions_now(pipeline)
    settings = [water_level(pipeline)]
    version, summary = stage_backfill(
        project.project, settings, at(0), at(5), timedelta(hours=1), True, at(20.5), None, tmp_path
    )
    assert version.name == "backfill_20260303_r1"
    # Readers of the published tables see nothing of it: same rows, same table versions.
    assert result(pipeline) == before
    assert versions_now(pipeline) == base
    staged = f"{version.detail['stage_schema']}.water_level_window_means"
    assert result(pipeline, staged) != before
    [harbour] = [row for row in summary if row.windows_changed]
    assert (harbour.partition_start, harbour.windows_changed, harbour.final_windows_revised) == (at(0), 1, 1)
    assert (harbour.rows_before, harbour.rows_after) == (3, 4)
    assert Path(version.detail["manifest"]).exists() and Path(version.detail["summary"]).exists()

    # Thresholds refuse promotion, naming the threshold, the partition and the figure; nothing changes.
    with pytest.raises(
        PublishRefused, match=r"partition 2026-03-03 08:00:00: revises 1 final windows, and final_windows is refuse"
    ):
        publish(project.project, version.name, {"final_windows": "refuse"})
    with pytest.raises(
        PublishRefused, match=r"partition 2026-03-03 08:00:00: total 8.0 -> 1008.0 .*over max_partition_change 0.5"
    ):
        publish(project.project, version.name, {"max_partition_change": 0.5})
    assert versions_now(pipeline) == base

    published = publish(project.project, version.name, {})
    after_publish = result(pipeline)
    assert after_publish == result(pipeline, None) and after_publish != before
    assert next(row for row in after_publish if row[1] == "harbour" and row[0] == at(0))[2] == 3
    assert not project.spark.sql(f"show schemas like '{version.detail['stage_schema']}'").collect()
    # Listed, and readable by its name (an Iceberg tag, a Delta version number).
    lines = version_lines(project.project)
    assert lines[0].startswith(f"{version.name}: backfill published at")
    read = next(line for line in lines if "water_level_window_means version as of" in line).split("select * from ")[1]
    assert result(pipeline, read) == after_publish
    assert published.tables == versions_now(pipeline)
    # late-data why: the backfill's version, which counted a too-late row on purpose, recomputes
    # from the deliveries why counts as the backfill judged them; those before it as their runs did.
    assert [reason for _, reason, _ in why_versions(project.project, "harbour", at(0))] == [
        "initial",
        "late_data",
        "backfill",
    ]
    told = window_story(project.project, "water_level_window_means", "harbour", at(0))
    assert [(row["made_by"], row["restored_by"]) for row in told.published] == [
        (None, None),
        (None, None),
        (version.name, None),
    ]
    assert told.lines()[4].endswith(f", made by {version.name}")
    # The audit records what was published, when, and its manifest.
    audit = f"{project.project.target_schema()}.late_data_run_audit"
    recorded = project.spark.sql(f"select model, plan from {audit} where run_kind = 'publish'").collect()
    assert {row["model"] for row in recorded} == {audit_model(table) for table in published.tables}
    assert {json.loads(row["plan"])["manifest"] for row in recorded} == {version.detail["manifest"]}

    # The next scheduled run loads a row that arrived meanwhile; then the backfill turns out bad.
    add = lambda *readings: append_readings(pipeline.spark, pipeline.raw_table, readings)
    add(Reading("f", "bridge", at(17.2), 10.0, at(20.7)))
    pipeline.run(at(21))
    history_at_12 = history(pipeline, at(12))
    undone = rollback(project.project, settings, at(20), None, None, at(21.5))
    assert result(pipeline) == before
    assert mismatched(pipeline) == 0
    assert history(pipeline, at(12)) == history_at_12
    assert [reason for _, reason, _ in why_versions(project.project, "harbour", at(0))] == ["initial", "late_data"]
    # The rollback returned the tables to the run at 08:20, when 08:12's version was the window's.
    told = window_story(project.project, "water_level_window_means", "harbour", at(0))
    assert [row["restored_by"] for row in told.published] == [None, undone.name]
    # Every audit row of the undone run is marked, the history's and the listing's included (they
    # are recorded under the snapshot's and the listing's names), and so is the published backfill.
    schema = project.project.target_schema()
    marked = project.spark.sql(
        f"select model, outcome, rolled_back_by from {schema}.late_data_run_audit"
        " where run_time = timestamp'2026-03-03 08:21:00' or run_kind = 'publish'"
    ).collect()
    assert {row["model"] for row in marked} == {
        "water_level_window_means",
        "int_water_level__versions",
        "water_level_window_means_history",
        "water_level_too_late_readings",
    }
    assert {(row["outcome"], row["rolled_back_by"]) for row in marked} == {("rolled_back", undone.name)}
    assert resume_point(project.project).last_success == at(20)
    assert version_lines(project.project)[0].startswith(
        f"{version.name}: backfill published, then rolled back by {undone.name} at"
    )
    if project.project.environment.table_format != "iceberg":
        # The rest runs no code of a table format's but the restores the rollback above ran (a
        # rollback to a named version restores the versions the name recorded, as one to a run
        # time restores the versions the audit gives): Iceberg's run proves it.
        return
    with pytest.raises(PublishRefused, match=f"rolled back by {undone.name}: `late-data rollback --to {version.name}`"):
        publish(project.project, version.name, {})
    # Nothing to undo: a rollback to the state already current changes nothing, the audit included.
    audit = lambda: sorted(map(repr, project.spark.sql(f"select * from {schema}.late_data_run_audit").collect()))
    audit_before = audit()
    with pytest.raises(PublishRefused, match="nothing to roll back"):
        rollback(project.project, settings, None, undone.name, None, at(21.6))
    assert audit() == audit_before
    # The restarted schedule runs the undone run time again and loads again what arrived since (row
    # f), exactly.
    reports = run_simulated(
        project.project,
        lambda start, end: None,
        T0,
        at(21),
        timedelta(minutes=1),
        timedelta(0),
        pipeline_tag="water_level",
    )
    assert [report.run_time for report in reports] == [at(21)]
    assert mismatched(pipeline) == 0
    assert next(row for row in result(pipeline) if row[1] == "bridge" and row[0] == at(17))[2] == 2

    # A rollback is rolled back: to the published backfill's version by name.
    rollback(project.project, settings, None, version.name, None, at(22.5))
    assert result(pipeline) == after_publish
    assert why_versions(project.project, "harbour", at(0))[-1][1] == "backfill"
    told = window_story(project.project, "water_level_window_means", "harbour", at(0))
    assert [row["restored_by"] for row in told.published] == [None, undone.name, "rollback_20260303_r2"]
    # The scheduled runs' oracle leaves too-late rows out: the backfill counted one on purpose.
    assert mismatched(pipeline) == 1
    # No command reports success on nothing: the same rollback again.
    with pytest.raises(
        PublishRefused,
        match=f"nothing to roll back: every table of water_level_window_means holds {version.name}'s state",
    ):
        rollback(project.project, settings, None, version.name, None, at(22.6))
    assert [(v.name, v.status) for v in named_versions(project.project)] == [
        (version.name, "published"),
        (undone.name, "rolled_back"),
        ("rollback_20260303_r2", "rolled_back"),
    ]
    assert unfinished_lines(project.project) == ["last named version: rollback_20260303_r2 (rolled_back)"]

    # Unknown versions, bad names, versions that expired: one line, nothing changed.
    now = versions_now(pipeline)
    with pytest.raises(PublishRefused, match="no version named nope"):
        rollback(project.project, settings, None, "nope", None, at(23))
    with pytest.raises(PublishRefused, match="is not a version name"):
        rollback(project.project, settings, None, "Bad-Name", None, at(23))
    with pytest.raises(PublishRefused, match="no run of water_level_window_means at 2026-03-03 08:02:00"):
        rollback(project.project, settings, at(2), None, None, at(23))
    (moment,) = project.spark.sql("select current_timestamp() + interval 1 second").first()
    for table in now:
        project.spark.sql(
            f"call spark_catalog.system.expire_snapshots(table => '{table}', older_than => timestamp'{moment}',"
            " retain_last => 1)"
        )
    with pytest.raises(PublishRefused, match=r"is no longer kept: .* has expired \(late_data.maintain_tables keeps"):
        rollback(project.project, settings, at(1), None, None, at(23))
    # A named version's snapshots are tagged: expiry keeps them.
    rollback(project.project, settings, None, undone.name, None, at(23))
    assert result(pipeline) == before
    assert mismatched(pipeline) == 0


def test_a_backfill_refuses_a_resend_no_run_has_loaded_and_stages_it_once_a_run_has(
    pipeline: Pipeline, tmp_path: Path
) -> None:
    """A partner's resend delivered after the last run: a backfill of its range is refused in one
    line naming how many rows are not loaded and how to load them, leaving no stage and no
    version. Loaded by a run (listed as too late), it is staged and published. A row stamped after
    that run and before the backfill's run time is still loaded by the next run: a backfill, which
    loads nothing, does not move the versions' load on. A quarantined row with a null event key
    counts as loaded once a run has loaded it (the guard compares keys null-safely)."""
    project = pipeline.project
    add = lambda *readings: append_readings(pipeline.spark, pipeline.raw_table, readings)
    add(Reading("a", "harbour", at(0.2), 1.0, at(0.3)))
    pipeline.run(at(1))
    pipeline.run(at(20))  # 08:00 final since 08:11
    add(
        Reading("a", "harbour", at(0.2), 5.0, at(20.5)),
        Reading("r", "harbour", at(0.4), 2.0, at(20.5)),
        Reading(None, "harbour", at(0.3), 2.0, at(20.5)),  # type: ignore[arg-type]  # quarantined: null_event_id
    )
    settings = [water_level(pipeline)]
    with pytest.raises(DbtInvocationError) as refused:
        stage_backfill(project, settings, at(0), at(5), timedelta(hours=1), True, at(21), "resend", tmp_path)
    assert (
        "backfill of water_level_window_means: 3 rows delivered by run_time 2026-03-03 08:21:00 with event times in"
        " [2026-03-03 08:00:00, 2026-03-03 08:05:00) are not loaded yet" in str(refused.value)
    )
    assert not named_versions(project)
    assert not pipeline.spark.sql(f"show schemas like '{project.target_schema()}__stage_resend'").collect()

    pipeline.run(at(21))
    listed = pipeline.spark.sql(f"select event_id, too_late_reason from {pipeline.too_late_table}").collect()
    assert sorted(tuple(row) for row in listed) == [("a", "replaces_final_version"), ("r", "arrived_after_final")]
    add(Reading("late", "bridge", at(21.1), 4.0, at(21.2)))  # stamped after the run, before the backfill
    version, summary = stage_backfill(
        project, settings, at(0), at(5), timedelta(hours=1), True, at(28), "resend", tmp_path
    )
    [harbour] = [row for row in summary if row.windows_changed]
    assert (harbour.rows_before, harbour.rows_after) == (1, 2)
    publish(project, version.name, {})
    assert window_row(pipeline, "harbour", at(0))[2:4] == (2, 3.5)  # the corrected a (5.0) and r (2.0)
    pipeline.run(at(29))
    assert window_row(pipeline, "bridge", at(21))[2] == 1


def window_row(pipeline: Pipeline, location: str, window_start: datetime) -> tuple[Any, ...]:
    return next(row for row in result(pipeline) if row[1] == location and row[0] == window_start)


def drive(home: Path, step: str) -> tuple[int, list[dict[str, Any]], str]:
    """One process of tests.publish_driver in LATE_DATA_HOME=`home`."""
    env = {key: value for key, value in os.environ.items() if key not in ("LATE_DATA_HOME", "LATE_DATA_WAREHOUSE")}
    env.update({"LATE_DATA_HOME": str(home), "DBT_TARGET_PATH": str(home / "target"), "LATE_DATA_DRIVER_MEMORY": "1g"})
    process = subprocess.run(
        [sys.executable, "-m", "tests.publish_driver", step],
        cwd=Path(__file__).resolve().parents[1],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    records = [json.loads(line) for line in process.stdout.splitlines() if line.startswith("{")]
    return process.returncode, records, process.stderr


@pytest.mark.spark
@pytest.mark.skipif(
    os.environ.get("LATE_DATA_TABLE_FORMAT") == "delta",
    reason="two processes of a minute each: run on Iceberg (a commit is whole on either format)",
)
def test_publish_killed_by_sigkill_leaves_each_table_old_or_new_and_publishing_again_finishes_it(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    code, records, stderr = drive(home, "publish_killed")
    assert code == -9, stderr[-3000:]
    staged = records[0]["tables"]
    assert records[-1]["killing"] == "after the first table's commit"
    code, records, stderr = drive(home, "finish")
    assert code == 0, stderr[-3000:]
    left, refused, finished = records
    # The killed publish left one table new (its commit landed whole), the others old.
    assert [table for table, version in left["tables"].items() if version != staged[table]] == [
        "analytics.water_level_window_means"
    ]
    assert left["status"][0].startswith("publish resend interrupted: 1 of 2 tables at their new version")
    assert refused["refused"].startswith("publishing resend was interrupted")
    assert finished["status"] == ["last named version: resend (published)"]
    moved = {table for table, version in finished["tables"].items() if version != staged[table]}
    assert moved == {"analytics.water_level_window_means", "analytics.water_level_window_means_history__closed"}


def test_version_names_are_checked_before_anything_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """A malformed name is refused in one line naming it, before any Spark or dbt starts."""
    parser = build_parser()
    for argv in (
        ["publish", "Bad-Name"],
        ["backfill", "--from", "2026-01-01", "--to", "2026-01-02", "--stage", "--name", "x y"],
    ):
        with pytest.raises(SystemExit) as exit_info:
            parser.parse_args(argv)
        assert exit_info.value.code == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert line.startswith("late-data: argument ") and "is not a version name" in line, line
        assert line.endswith(f"(`late-data {argv[0]} --help` lists the arguments)"), line


def test_commits_to_an_iceberg_stage_copy_never_delete_the_source_tables_metadata(project: Any) -> None:
    """A stage's Iceberg copy inherits its source's metadata log; the package's tables delete
    metadata files that leave their log, so without the copy's own setting 21 commits to the copy
    would delete the source's current metadata file and break the published table."""
    if project.environment.table_format != "iceberg":
        pytest.skip("Delta stages are shallow clones with a log of their own")
    schema = project.target_schema()
    source, copy = f"{schema}.clone_source", f"{schema}.clone_copy"
    project.execute(f"create schema if not exists {schema}")
    for table in (copy, source):
        project.execute(f"drop table if exists {table}")
    project.execute(
        f"create table {source} (reading int) using iceberg tblproperties"
        " ('write.metadata.delete-after-commit.enabled' = 'true', 'write.metadata.previous-versions-max' = '20')"
    )
    project.execute(f"insert into {source} values (1)")
    current = table_versions.current_metadata_file(project, source)
    table_versions.clone(project, source, copy)
    for number in range(25):
        project.execute(f"alter table {copy} set tblproperties ('late_data.test_commit' = '{number}')")
    assert Path(current.removeprefix("file:")).exists()
    assert [row["reading"] for row in project.query(f"select reading from {source}")] == [1]
    for table in (copy, source):
        project.execute(f"drop table {table}")
