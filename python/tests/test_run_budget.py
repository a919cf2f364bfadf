"""What a scheduled run costs, counted (not timed): its statements, from dbt's structured events, and
its commits, from the table format's own metadata. A run pays for what it writes: one commit per
table whose content changed, none on a table that did not change, and no statement that describes
what the process already knows (raw contract, audit columns, relations, schemas) after its first run."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest

from late_data.project.raw_tables import Reading, append_readings
from late_data.running.scheduler import scenario_feed
from late_data.tables.history import commits_after
from late_data_bench.profile import EventRecorder, logged_statements
from tests.helpers import TEST_VARS, Pipeline, water_levels

ORIGIN = datetime(2026, 3, 9, 6, 0, 0)
SCENARIO = water_levels(locations=6)
VERSIONS = "int_water_level__versions"
MEANS = "water_level_window_means"
TOO_LATE = "water_level_too_late_readings"
HISTORY = "water_level_window_means_history"
AUDIT = "late_data_run_audit"
# The budgets of a warm process. The means invocation (load the arrivals, rewrite the means: what the
# benchmark times against microbatch) is the versions' stage, count and append, the means' stage,
# look and write, the staged views dropped, and the audit append: 9 (the audit's last runs are
# remembered from the previous invocation), 18 Spark jobs. The whole run of one pipeline adds the
# history's stage, look, write and drop, the version chain the means stage for the listing (a
# view, cached) and the listing drops (late_data.shared_chain), and the listing's one count of the
# chain's late versions (none: nothing to stage or write): 17, 29 Spark jobs. A stage is lazy: the
# count that looks at it first computes it (one job, not an eager cache's own and the count's).
MEANS_INVOCATION_STATEMENTS = 9
MEANS_INVOCATION_JOBS = 18
WHOLE_RUN_STATEMENTS = 17
WHOLE_RUN_JOBS = 29
# Statements that only describe what a warm process already knows.
DESCRIBING = ("describe", "show ")


def statements(recorder: EventRecorder) -> list[str]:
    return [statement.sql.lower() for statement in logged_statements(recorder.records())[0]]


@pytest.fixture(scope="module")
def steady(project: Any) -> Iterator[dict[str, Any]]:
    """A water-level pipeline past its first run (which builds the whole DAG) and one scheduled
    run, so the process knows the warehouse; then the measured runs."""
    pipeline = Pipeline(project, TEST_VARS)
    feed = scenario_feed(project, pipeline.raw_tables, ORIGIN, water_levels=SCENARIO)
    at = lambda minutes: ORIGIN + timedelta(minutes=minutes, seconds=10)
    feed(ORIGIN, at(6))
    pipeline.run(at(6))
    feed(at(6), at(9))
    pipeline.run(at(9))
    yield {"pipeline": pipeline, "feed": feed, "at": at}


def measured(pipeline: Pipeline, run: Any) -> tuple[list[str], dict[str, int]]:
    """The statements of `run` and the commits it made to each late-data table and the audit (and,
    under "spark jobs", the Spark jobs it ran)."""
    schema = pipeline.project.target_schema()
    # A history is a view: its commits are its closed versions table's.
    tables = {name: f"{schema}.{name}" for name in (VERSIONS, MEANS, TOO_LATE, AUDIT)} | {
        HISTORY: f"{schema}.{HISTORY}__closed"
    }
    before = {name: pipeline.version_of(table) for name, table in tables.items()}
    recorder = EventRecorder()
    tracker = pipeline.spark.sparkContext.statusTracker()
    jobs_before = set(tracker.getJobIdsForGroup())
    with pipeline.project.watching(recorder):
        run()
    jobs = len(set(tracker.getJobIdsForGroup()) - jobs_before)

    fmt = pipeline.project.environment.table_format
    commits = {name: len(commits_after(pipeline.spark, table, fmt, before[name])) for name, table in tables.items()}
    return statements(recorder), {**commits, "spark jobs": jobs}


def test_a_scheduled_run_commits_once_per_changed_table_within_its_statement_budget(steady: dict[str, Any]) -> None:
    pipeline, feed, at = steady["pipeline"], steady["feed"], steady["at"]
    feed(at(9), at(12))
    schema = pipeline.project.target_schema()
    versions_before = {table: pipeline.version_of(f"{schema}.{table}") for table in (VERSIONS, AUDIT)}
    sql, commits = measured(pipeline, lambda: pipeline.run(at(12)))
    report_rows = pipeline.project.query(
        f"select model, rows_written from {pipeline.project.target_schema()}.{AUDIT}"
        f" where run_time = timestamp'{at(12):%Y-%m-%d %H:%M:%S}'"
    )
    written = {row["model"]: row["rows_written"] for row in report_rows}
    # Late readings arrived: the versions, the means and their history changed, each in one commit;
    # the too-late listing got nothing new and was not committed to; the audit got one append.
    assert written[VERSIONS] > 0 and written[MEANS] > 0 and written[HISTORY] > 0 and written[TOO_LATE] == 0
    jobs = commits.pop("spark jobs")
    assert commits == {VERSIONS: 1, MEANS: 1, TOO_LATE: 0, HISTORY: 1, AUDIT: 1}, commits
    # The versions and the audit row each in one file: every later run's scan weighs each file.
    schema = pipeline.project.target_schema()
    fmt = pipeline.project.environment.table_format
    for table in (VERSIONS, AUDIT):
        (commit,) = commits_after(pipeline.spark, f"{schema}.{table}", fmt, versions_before[table])
        assert commit.files_added == 1, (table, commit)
    assert len(sql) <= WHOLE_RUN_STATEMENTS, "\n".join(sql)
    assert jobs <= WHOLE_RUN_JOBS, jobs
    # Nothing arrived late: the listing counted that on the chain, and staged nothing.
    assert not [statement for statement in sql if statement.startswith(f"cache lazy table {TOO_LATE}__staged_")]
    assert not [statement for statement in sql if statement.startswith(DESCRIBING)], sql


def test_the_means_invocation_stays_within_its_budget(steady: dict[str, Any]) -> None:
    pipeline, feed, at = steady["pipeline"], steady["feed"], steady["at"]
    feed(at(12), at(15))
    sql, commits = measured(
        pipeline,
        lambda: pipeline.project.invoke(["run", "--select", MEANS], {"run_time": f"{at(15):%Y-%m-%d %H:%M:%S}"}),
    )
    jobs = commits.pop("spark jobs")
    assert len(sql) <= MEANS_INVOCATION_STATEMENTS, "\n".join(sql)
    assert jobs <= MEANS_INVOCATION_JOBS, jobs
    assert commits == {VERSIONS: 1, MEANS: 1, TOO_LATE: 0, HISTORY: 0, AUDIT: 1}, commits


def test_a_run_with_nothing_to_write_commits_only_its_audit_row(steady: dict[str, Any]) -> None:
    pipeline, at = steady["pipeline"], steady["at"]
    pipeline.run(at(15))  # the history records what the means invocation at this run time published
    reports = []
    # The same run time again: nothing new.
    sql, commits = measured(pipeline, lambda: reports.append(pipeline.run(at(15))))
    assert {**commits, "spark jobs": 0} == {VERSIONS: 0, MEANS: 0, TOO_LATE: 0, HISTORY: 0, AUDIT: 1, "spark jobs": 0}
    assert not [statement for statement in sql if statement.startswith(("insert into analytics.int", "merge"))]
    # And says so: its report, and each model's audit row.
    (report,) = reports
    assert (report.versions_loaded, report.windows_changed, report.rows_written, report.too_late_rows) == (0, 0, 0, 0)
    audit = f"{pipeline.project.target_schema()}.{AUDIT}"
    written = pipeline.project.query(
        f"select model, rows_written from {audit} where outcome = 'success'"
        f" and invocation_id = (select invocation_id from {audit} order by recorded_at desc limit 1)"
    )
    assert {row["model"]: row["rows_written"] for row in written} == {VERSIONS: 0, MEANS: 0, TOO_LATE: 0, HISTORY: 0}


def test_a_process_that_knows_nothing_describes_once(steady: dict[str, Any]) -> None:
    """What plain dbt pays per invocation (it parses and learns the warehouse every time), and a
    warm process only once: the raw tables' and the audit's columns, the schemas and relations."""
    pipeline, feed, at = steady["pipeline"], steady["feed"], steady["at"]
    feed(at(15), at(18))
    pipeline.project.forget_warehouse_state()
    cold, _ = measured(pipeline, lambda: pipeline.run(at(18)))
    feed(at(18), at(21))
    warm, _ = measured(pipeline, lambda: pipeline.run(at(21)))
    describing = [statement for statement in cold if statement.startswith(DESCRIBING)]
    assert {statement.split()[0] for statement in describing} == {"describe", "show"}
    assert any("raw.water_level_readings" in statement for statement in describing)
    assert any(AUDIT in statement for statement in describing)
    # And the audit's last runs: a warm process remembers what its previous invocation recorded.
    audit_reads = [statement for statement in cold if statement.startswith("select model,")]
    assert len(audit_reads) == 1 and not [statement for statement in warm if statement.startswith("select model,")]
    assert len(cold) == len(warm) + len(describing) + len(audit_reads), (cold, warm)
    assert not [statement for statement in warm if statement.startswith(DESCRIBING)]


def test_the_too_late_listing_reads_the_chain_the_means_staged(steady: dict[str, Any]) -> None:
    """One scan and one chain of the versions per whole run: the listing filters the chain the means
    staged (a reading two windows too late makes it list), and the audit says the run took that
    plan; a means invocation alone stages nothing."""
    pipeline, feed, at = steady["pipeline"], steady["feed"], steady["at"]
    schema = pipeline.project.target_schema()
    plans = lambda minutes: {
        row["model"]: row["plan"]
        for row in pipeline.project.query(
            f"select model, plan from {schema}.{AUDIT} where run_time = timestamp'{at(minutes):%Y-%m-%d %H:%M:%S}'"
        )
    }
    feed(at(21), at(24))
    append_readings(pipeline.spark, pipeline.raw_table, [Reading("too-late", "harbour", at(0), 1.0, at(23))])
    sql, _ = measured(pipeline, lambda: pipeline.run(at(24)))
    chains = [
        statement for statement in sql if statement.startswith(f"cache lazy table global_temp.{VERSIONS}__chain_")
    ]
    listing = [statement for statement in sql if statement.startswith(f"cache lazy table {TOO_LATE}__staged_")]
    assert len(chains) == 1 and len(listing) == 1, sql
    chain = chains[0].split()[3]
    assert f"from {chain}" in listing[0] and f"{schema}.{VERSIONS}" not in listing[0], listing[0]
    assert f"drop view if exists {chain}" in sql
    assert plans(24)[MEANS] == "delta, broadcast lookup, chain shared with the too-late listing"
    assert (
        len([statement for statement in sql if statement.startswith(f"create global temporary view {chain[12:]} ")])
        == 1
    )
    feed(at(24), at(27))
    sql, _ = measured(
        pipeline,
        lambda: pipeline.project.invoke(["run", "--select", MEANS], {"run_time": f"{at(27):%Y-%m-%d %H:%M:%S}"}),
    )
    assert not [statement for statement in sql if "__chain_" in statement], sql
    assert plans(27)[MEANS] == "delta, broadcast lookup"


def test_a_shuffle_lookup_and_an_unshared_chain_when_the_settings_say_so(steady: dict[str, Any]) -> None:
    """More arrivals than a broadcast takes are looked up by a shuffle join; with var
    share_version_chain false (a Spark without global temporary views) the too-late listing works
    its chain out from the versions table itself."""
    pipeline, feed, at = steady["pipeline"], steady["feed"], steady["at"]
    schema = pipeline.project.target_schema()
    feed(at(30), at(33))
    pipeline.project.use_vars({**TEST_VARS, "broadcast_arrivals_max": 0, "share_version_chain": False})
    try:
        sql, _ = measured(pipeline, lambda: pipeline.run(at(33)))
    finally:
        pipeline.project.use_vars(TEST_VARS)
    plan = pipeline.project.query(
        f"select plan from {schema}.{AUDIT}"
        f" where model = '{MEANS}' and run_time = timestamp'{at(33):%Y-%m-%d %H:%M:%S}'"
    )
    assert plan[0]["plan"] == "delta, shuffle lookup", plan
    assert not [statement for statement in sql if "__chain_" in statement], sql
    listing = [statement for statement in sql if statement.startswith(f"cache lazy table {TOO_LATE}__staged_")]
    assert len(listing) == 1 and f"{schema}.{VERSIONS}" in listing[0], listing


def test_a_run_time_from_the_environment_keeps_the_parse(
    steady: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a cron job passes that changes every run: LATE_DATA_RUN_TIME, not a var (a changed var
    makes plain dbt parse the project anew). The run goes at that time."""
    pipeline, feed, at = steady["pipeline"], steady["feed"], steady["at"]
    feed(at(33), at(36))
    monkeypatch.setenv("LATE_DATA_RUN_TIME", f"{at(36):%Y-%m-%d %H:%M:%S}")
    pipeline.project.invoke(["run", "--select", MEANS])
    audited = pipeline.project.query(
        f"select count(*) as runs from {pipeline.project.target_schema()}.{AUDIT}"
        f" where model = '{MEANS}' and run_time = timestamp'{at(36):%Y-%m-%d %H:%M:%S}' and outcome = 'success'"
    )
    assert audited[0]["runs"] == 1


def scans(spark: Any, since: int) -> list[tuple[int, int, int]]:
    """(data files read, manifests read, rows read) of each SQL execution of the session after
    execution `since` that scanned an Iceberg table, in order, from Spark's own SQL metrics."""
    store = spark._jsparkSession.sharedState().statusStore()
    executions = store.executionsList()
    found = []
    for index in range(executions.size()):
        execution = executions.apply(index)
        if execution.executionId() <= since:
            continue
        names = {}
        metrics = execution.metrics().iterator()
        while metrics.hasNext():
            metric = metrics.next()
            names[metric.accumulatorId()] = metric.name()
        totals = {"number of result data files": 0, "number of scanned data manifests": 0, "number of output rows": 0}
        scanned = False
        values = store.executionMetrics(execution.executionId()).iterator()
        while values.hasNext():
            value = values.next()
            name = names.get(value._1())
            if name in totals:
                scanned = scanned or name != "number of output rows"
                totals[name] += sum(
                    int(part.replace(",", "")) for part in str(value._2()).split("\n")[:1] if part.strip()
                )
        if scanned:
            found.append(tuple(totals.values()))
    return found


def last_execution(spark: Any) -> int:
    executions = spark._jsparkSession.sharedState().statusStore().executionsList()
    return max((executions.apply(i).executionId() for i in range(executions.size())), default=-1)


@pytest.mark.skipif(os.environ.get("LATE_DATA_TABLE_FORMAT", "iceberg") != "iceberg", reason="Iceberg's scan metrics")
def test_a_run_reads_what_it_changes_not_the_runs_before_it(pipeline: Pipeline) -> None:
    """The sixteenth run reads no more than the fourth: per statement, the data files and rows it
    scans and the manifests it reads. The runs are five minutes apart, as the bounds are: each scan
    of the versions and the result reads the late window's files, the audit's last runs its quarter
    hour's, and a table's manifests are merged every 8 commits (late_data.iceberg_metadata_properties).
    Each measured run starts as a new process does, knowing nothing of the warehouse."""
    feed = scenario_feed(pipeline.project, pipeline.raw_tables, ORIGIN, water_levels=SCENARIO)
    at = lambda run: ORIGIN + timedelta(minutes=5 * run, seconds=10)
    measured_runs = {}
    previous = ORIGIN
    for run in range(1, 17):
        feed(previous, at(run))
        previous = at(run)
        if run in (4, 16):
            # As cron's new process knows nothing: the audit's last runs are read too.
            pipeline.project.forget_warehouse_state()
        since = last_execution(pipeline.spark)
        pipeline.run(at(run))
        if run in (4, 16):
            measured_runs[run] = scans(pipeline.spark, since)
    early, late = measured_runs[4], measured_runs[16]
    assert len(early) == len(late), (early, late)
    # The first scan is the audit's last runs: a file per run of its quarter hour (3 runs here).
    assert late[0][0] <= 4, late
    for statement, ((files, manifests, rows), (files_late, manifests_late, rows_late)) in enumerate(
        zip(early, late, strict=True)
    ):
        assert files_late <= files + 1 and manifests_late <= max(manifests, 8) + 1, (statement, early, late)
        assert rows_late <= 2 * rows + 100, (statement, early, late)
