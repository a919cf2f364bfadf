"""Scheduled runs of the dbt pipeline in one warm process: real clock or simulated clock."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from tqdm import tqdm

from late_data.loading.inbox import load_waiting, waiting
from late_data.project.audit import fed_until, invocation_totals, resume_point
from late_data.project.generator import PageScenario, Scenario, generate, generate_page_counts
from late_data.project.pipelines import scheduled_nodes, select_pipelines
from late_data.runtime.dbt_errors import DbtInvocationError, condense
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.settings import SetupError
from late_data.runtime.timeutil import floor_to, format_timestamp

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunReport:
    run_time: datetime
    versions_loaded: int
    windows_changed: int
    windows_repaired: int
    partitions_rewritten: int
    rows_written: int
    too_late_rows: int
    seconds: float

    def line(self) -> str:
        return (
            f"run_time={format_timestamp(self.run_time)} versions_loaded={self.versions_loaded}"
            f" windows_changed={self.windows_changed} windows_repaired={self.windows_repaired}"
            f" partitions_rewritten={self.partitions_rewritten} rows_written={self.rows_written}"
            f" too_late_rows={self.too_late_rows} seconds={self.seconds:.2f}"
        )


# Seeds (series_catalogue, read by the marts users query), models and snapshots in one invocation
# (data tests run separately: `dbt test`).
SCHEDULED_BUILD = ["build", "--resource-type", "seed", "--resource-type", "model", "--resource-type", "snapshot"]

# Appends the raw rows that arrive in [start, end).
Feed = Callable[[datetime, datetime], None]


def scheduled_selection(project: DbtProject, pipeline_tag: str | None = None, first_run: bool = False) -> str | None:
    """What a scheduled run builds. The first run of a process builds the whole DAG (views too, so
    a changed model or setting takes effect); later runs only the late-data pipelines and their
    histories, the only nodes whose content depends on the run time. `pipeline_tag` (a dbt tag,
    e.g. the demo's water_level) limits both to the nodes tagged with it."""
    if first_run:
        return f"+tag:{pipeline_tag}" if pipeline_tag else None
    if pipeline_tag:
        return tagged_selection(pipeline_tag)
    return scheduled_nodes(select_pipelines(project))


def tagged_selection(pipeline_tag: str | None) -> str:
    """A scheduled run's nodes by their dbt tags (the demo tags its pipelines and histories
    late_data, and each with its pipeline's name)."""
    return f"tag:{pipeline_tag},tag:late_data" if pipeline_tag else "tag:late_data"


def run_pipeline(
    project: DbtProject, run_time: datetime, select: str | None = None, reconcile: bool = False
) -> RunReport:
    """One run: `dbt build` of models and snapshots at run_time (all of them, or the dbt selection
    `select`, e.g. "+tag:water_level"), summarised from the audit. `reconcile`: recompute every
    checked window from the raw rows and repair what the arrival-driven path got wrong."""
    started = time.perf_counter()
    args = SCHEDULED_BUILD + (["--select", select] if select else [])
    run_vars: dict[str, object] = {"run_time": format_timestamp(run_time)}
    if reconcile:
        run_vars["reconcile"] = True
    invocation = project.invoke(args, run_vars)
    seconds = time.perf_counter() - started
    audit = invocation_totals(project, invocation.invocation_id)
    return RunReport(
        run_time=run_time,
        versions_loaded=int(audit["versions_loaded"]),
        windows_changed=int(audit["windows_changed"]),
        windows_repaired=int(audit["windows_repaired"]),
        partitions_rewritten=int(audit["partitions_rewritten"]),
        rows_written=int(audit["rows_written"]),
        too_late_rows=int(audit["too_late_rows"]),
        seconds=seconds,
    )


def schedule_times(start: datetime, end: datetime, interval: timedelta, offset: timedelta) -> Iterator[datetime]:
    """Run times `offset` after each interval boundary in (start, end]."""
    moment = floor_to(start, interval) + offset
    while moment <= end:
        if moment > start:
            yield moment
        moment += interval


def scenario_feed(
    project: DbtProject,
    tables: dict[str, str],
    origin: datetime,
    water_levels: Scenario | None = None,
    pages: PageScenario | None = None,
) -> Feed:
    """A feed writing the given scenarios (origin: their first tick) into the raw tables."""

    def feed(start: datetime, end: datetime) -> None:
        try:
            if water_levels is not None:
                generate(project.spark, tables["water_level_readings"], water_levels, origin, start, end)
            if pages is not None:
                generate_page_counts(project.spark, tables, pages, origin, start, end)
        except Exception as error:  # Spark's, py4j's or the file system's: the feed is a command's setup
            raise SetupError(
                f"could not append the generated rows arriving in [{format_timestamp(start)}, {format_timestamp(end)})"
                f" to the raw tables ({', '.join(tables.values())}): {condense(str(error))}"
            ) from error

    return feed


def maintain_tables(project: DbtProject, keep_hours: float | None = None) -> None:
    """Expire old table snapshots and compact (macro late_data.maintain_tables), keeping
    `keep_hours` of snapshots (default: the macro's, 24)."""
    started = time.perf_counter()
    arguments = [] if keep_hours is None else ["--args", json.dumps({"keep_hours": keep_hours})]
    project.invoke(["run-operation", "late_data.maintain_tables", *arguments])
    log.info("maintained the late-data tables in %.2f s", time.perf_counter() - started)


def load_handed_files(project: DbtProject) -> None:
    """What waits in the inbox (late_data.loading.inbox) appended to its sources, before a run."""
    if not waiting(project.environment.home):
        return
    for outcome in load_waiting(project.spark, project.environment.home):
        (log.warning if outcome.reasons else log.info)(outcome.line())


@dataclass(frozen=True)
class Upkeep:
    """What a scheduler does besides its runs: every `reconcile_every`-th run is a reconciliation
    (recompute every checked window from raw, repair and count what the arrival-driven path got
    wrong), and after every `maintain_every`-th run the tables are maintained, keeping
    `keep_hours` of snapshots (default: the macro's). 0 turns either off."""

    reconcile_every: int = 0
    maintain_every: int = 0
    keep_hours: float | None = None

    def __post_init__(self) -> None:
        if self.reconcile_every < 0 or self.maintain_every < 0:
            raise ValueError("--reconcile-every and --maintain-every must be 0 (never) or a positive number of runs")
        if self.keep_hours is not None and self.keep_hours < 0:
            raise ValueError("keep_hours must be 0 or more hours of table snapshots to keep")

    def reconciles(self, run_number: int) -> bool:
        """Whether scheduled run number `run_number` (from 1) is a reconciliation."""
        return bool(self.reconcile_every) and run_number % self.reconcile_every == 0

    def maintains(self, run_number: int) -> bool:
        """Whether the tables are maintained after scheduled run number `run_number`."""
        return bool(self.maintain_every) and run_number % self.maintain_every == 0

    def run(self, project: DbtProject, run_time: datetime, select: str | None, run_number: int) -> RunReport:
        """The files `late-data load` handed over, then scheduled run number `run_number` (from 1),
        then the maintenance due after it."""
        load_handed_files(project)
        try:
            report = run_pipeline(project, run_time, select, reconcile=self.reconciles(run_number))
        except DbtInvocationError as error:
            raise DbtInvocationError(
                f"the run at {format_timestamp(run_time)} failed: {error}. `late-data status` lists it;"
                " the next `late-data schedule` runs it again"
            ) from error
        if self.maintains(run_number):
            maintain_tables(project, self.keep_hours)
        return report


def run_simulated(
    project: DbtProject,
    feed: Feed,
    origin: datetime,
    end: datetime,
    interval: timedelta,
    offset: timedelta,
    after_run: Callable[[RunReport], None] | None = None,
    pipeline_tag: str | None = None,
    upkeep: Upkeep = Upkeep(),
) -> list[RunReport]:
    """Generator batches and runs interleaved; the run time advances by `interval` per run. A schedule
    restarted with the same origin first runs again a run that did not finish (a model or snapshot
    failed in it: status.resume_point), else resumes after the last run the audit records as
    successful (runs never go back in time), and feeds only what no earlier process fed
    (status.fed_until: an interrupted run may have fed its rows and died)."""
    reports: list[RunReport] = []
    times = list(schedule_times(origin, end, interval, offset))
    resume = resume_point(project)
    generated_until = origin
    if resume.retry is not None:
        times = [resume.retry, *(moment for moment in times if moment > resume.retry)]
        log.info(
            "the run at %s did not finish (`late-data status` says why): running it again first",
            format_timestamp(resume.retry),
        )
    elif resume.last_success is not None:
        times = [moment for moment in times if moment > resume.last_success]
        if not times:
            refuse_finished_schedule(resume.last_success, end)
        log.info(
            "resuming after run_time %s, the last successful run in the audit (%d runs left)",
            format_timestamp(resume.last_success),
            len(times),
        )
    if resume.last_recorded is not None:
        later = next((moment for moment in times if moment > resume.last_recorded), None)
        generated_until = max(origin, fed_until(project, later, resume.last_recorded))
    # A context, so a failed run clears the bar before its error line is printed.
    with tqdm(times, desc="simulated runs", unit="run", leave=False) as progress:
        for run_time in progress:
            if run_time > generated_until:
                feed(generated_until, run_time)
                generated_until = run_time
            select = scheduled_selection(project, pipeline_tag, first_run=not reports)
            report = upkeep.run(project, run_time, select, run_number=len(reports) + 1)
            tqdm.write(report.line())
            reports.append(report)
            if after_run is not None:
                after_run(report)
    return reports


def refuse_finished_schedule(last_run: datetime, end: datetime) -> None:
    """A schedule with no run left: done when its last run is the audit's last, refused when the
    audit's last run lies after --end (runs only move forward, so none of its runs can happen)."""
    if last_run > end:
        raise SetupError(
            f"the audit's last run is at {format_timestamp(last_run)}, after --end {format_timestamp(end)}: no run"
            " of this schedule is left, as runs only move forward. A dbt command without LATE_DATA_RUN_TIME (or"
            " --vars '{run_time: ...}') runs at the wall clock; pass a later --end, or start over in a new schema (LATE_DATA_SCHEMA)"
        )
    log.info("nothing left to run: the last run, at %s, is the schedule's last", format_timestamp(last_run))


def next_run_time(now: datetime, interval: timedelta, offset: timedelta) -> datetime:
    """The first moment after `now` that lies `offset` after an interval boundary."""
    return floor_to(now - offset, interval) + interval + offset


def run_real_clock(
    project: DbtProject,
    interval: timedelta,
    offset: timedelta,
    runs: int | None,
    feed: Feed | None = None,
    fed_from: datetime | None = None,
    upkeep: Upkeep = Upkeep(),
    on_report: Callable[[RunReport], None] = lambda report: None,
) -> list[RunReport]:
    """Every `interval`, `offset` after the boundary (e.g. 10 s after each minute), run at now (UTC);
    before each run, `feed` appends what arrived since the previous one (first: since `fed_from`,
    or since what an earlier process fed, status.fed_until). A run that did not finish
    (status.resume_point) is run again first, at its own run time. `on_report` is given each run's
    report as it ends (the command prints it: this schedule may never end)."""
    reports: list[RunReport] = []
    resume = resume_point(project)
    fed_until_then = fed_from
    if resume.last_recorded is not None:
        later = next_run_time(resume.last_recorded, interval, offset)
        fed_until_then = max(fed_from or resume.last_recorded, fed_until(project, later, resume.last_recorded))
    if resume.retry is not None:
        log.info(
            "the run at %s did not finish (`late-data status` says why): running it again first",
            format_timestamp(resume.retry),
        )
        report = upkeep.run(project, resume.retry, scheduled_selection(project, first_run=True), 1)
        on_report(report)
        reports.append(report)
    while runs is None or len(reports) < runs:
        now = datetime.now(UTC).replace(tzinfo=None)
        run_time = next_run_time(now, interval, offset)
        time.sleep(max(0.0, (run_time - now).total_seconds()))
        if feed is not None:
            feed(fed_until_then or run_time, run_time)
            fed_until_then = run_time
        report = upkeep.run(project, run_time, scheduled_selection(project, first_run=not reports), len(reports) + 1)
        on_report(report)
        reports.append(report)
    return reports
