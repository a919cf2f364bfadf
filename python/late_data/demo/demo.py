"""`make demo`: two hours of both scenarios, run on a simulated clock, checked against the oracles."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from late_data.commands.check import check_pipeline
from late_data.commands.status import read_status
from late_data.demo.report import write_report
from late_data.project.generator import PageScenario, Scenario
from late_data.project.pipelines import select_pipelines
from late_data.project.raw_tables import ensure_raw_tables
from late_data.running.scheduler import Upkeep, run_simulated, scenario_feed
from late_data.runtime.dbt_project import DbtProject

log = logging.getLogger(__name__)

DEMO_ORIGIN = datetime(2026, 1, 1, 0, 0, 0)
DEMO_SCENARIO = Scenario(
    locations=100,
    correction_share=0.002,
    moved_correction_share=0.25,
    too_late_share=0.001,
    # A few malformed versions (NaN, infinities, out of range, nulls): quarantined, never counted.
    malformed_share=0.0005,
)
DEMO_PAGES = PageScenario(pages=20, late_share=0.2, lateness="long_tail", too_late_share=0.001)
# Every fourth run is a reconciliation: it recomputes every checked window from raw and repairs
# (and counts) any the arrival-driven runs got wrong; the demo expects none.
DEMO_UPKEEP = Upkeep(reconcile_every=4)


@dataclass(frozen=True)
class DemoSummary:
    """What the demo found: its mismatched windows and entries (0 when all are right), and what `make
    demo` prints of it, line by line."""

    mismatched: int
    lines: tuple[str, ...]


def run_demo(project: DbtProject, hours: float, interval: timedelta, offset: timedelta) -> DemoSummary:
    project.reset_warehouse()
    tables = ensure_raw_tables(project.spark, project.raw_schema(), project.environment.table_format)
    end = DEMO_ORIGIN + timedelta(hours=hours)
    feed = scenario_feed(project, tables, DEMO_ORIGIN, water_levels=DEMO_SCENARIO, pages=DEMO_PAGES)
    reports = run_simulated(project, feed, DEMO_ORIGIN, end, interval, offset, upkeep=DEMO_UPKEEP)
    # Every window and too-late entry of both pipelines against the recomputation `late-data check` runs.
    checks = [check_pipeline(project, pipeline, None) for pipeline in select_pipelines(project)]
    seconds = sorted(report.seconds for report in reports[1:]) or [reports[0].seconds]
    log.info(
        "warm runs (both pipelines): median %.2f s, max %.2f s over %d runs",
        seconds[len(seconds) // 2],
        seconds[-1],
        len(seconds),
    )
    reconciliations = len(reports) // DEMO_UPKEEP.reconcile_every
    repaired = sum(report.windows_repaired for report in reports)
    quarantined = read_status(project).quarantine
    report = write_report(
        project.spark, project.target_schema(), project.environment.home / "report" / "late_data_report.html"
    )
    windows = sum(check.windows.windows_checked for check in checks)
    entries = sum(check.too_late.windows_checked for check in checks if check.too_late is not None)
    mismatched = sum(check.mismatched for check in checks)
    lines = (
        *(line for check in checks for line in check.lines),
        f"reconciliation: {reconciliations} runs, {repaired} windows repaired",
        f"quarantine: {sum(row['versions'] for row in quarantined)} row versions counted toward no window ("
        + ", ".join(f"{row['versions']} {row['quarantine_reason']}" for row in quarantined)
        + ")",
        revision_summary(project),
        f"report: {report}",
        f"demo: {len(reports)} runs, {windows} windows and {entries} too-late entries checked, {mismatched} mismatched",
    )
    return DemoSummary(mismatched, lines)


def revision_summary(project: DbtProject) -> str:
    """How often published numbers moved, and the largest move from first publication to final."""
    revisions = f"{project.target_schema()}.water_level_window_revisions"
    summary = project.spark.sql(
        f"""
        with per_window as (
            select
                window_start,
                location,
                max_by(mean_value, -version_number) as first_published,
                min_by(mean_value, if(is_final, version_number, null)) as first_final,
                count_if(revision_reason in ('late_data', 'correction', 'backfill')) as revisions
            from {revisions}
            group by window_start, location
        )
        select
            count_if(revisions > 0) as revised_windows,
            count(*) as windows,
            max_by(struct(window_start, location, first_published, first_final),
                abs(first_final - first_published)) as largest
        from per_window
        """
    ).first()
    largest = summary["largest"]
    return (
        f"revisions: {summary['revised_windows']} of {summary['windows']} windows revised after first publication;"
        f" largest provisional-to-final change {largest['first_final'] - largest['first_published']:+.4f}"
        f" ({largest['location']}, window {largest['window_start']}:"
        f" {largest['first_published']:.4f} -> {largest['first_final']:.4f})"
    )
