"""`make demo`: two hours of the scenario, run on a simulated clock, checked against the oracle."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from late_data.dbt_project import DbtProject
from late_data.generator import Scenario
from late_data.oracle import WindowSettings, compare_window_means
from late_data.pipeline import run_simulated
from late_data.raw_tables import ensure_water_level_table

log = logging.getLogger(__name__)

DEMO_ORIGIN = datetime(2026, 1, 1, 0, 0, 0)
DEMO_SCENARIO = Scenario(
    locations=100,
    correction_share=0.002,
    moved_correction_share=0.25,
    too_late_share=0.001,
)


def reset_schemas(project: DbtProject) -> None:
    for schema in (project.raw_schema(), project.target_schema()):
        project.spark.sql(f"drop schema if exists {schema} cascade")


def run_demo(project: DbtProject, hours: float, interval: timedelta, offset: timedelta) -> int:
    """Returns the number of mismatched windows (0 when every window is right)."""
    reset_schemas(project)
    raw_table = ensure_water_level_table(project.spark, project.raw_schema(), project.environment.table_format)
    end = DEMO_ORIGIN + timedelta(hours=hours)
    reports = run_simulated(project, raw_table, DEMO_SCENARIO, DEMO_ORIGIN, end, interval, offset)
    final_run_time = reports[-1].run_time
    comparison = compare_window_means(
        project.spark,
        raw_table,
        f"{project.target_schema()}.water_level_window_means",
        final_run_time,
        WindowSettings(),
    )
    for example in comparison.examples:
        log.warning("mismatch: %s", example.asDict())
    seconds = sorted(report.seconds for report in reports[1:]) or [reports[0].seconds]
    log.info(
        "warm runs: median %.2f s, max %.2f s over %d runs",
        seconds[len(seconds) // 2], seconds[-1], len(seconds),
    )
    print(
        f"demo: {len(reports)} runs, {comparison.windows_checked} windows checked,"
        f" {comparison.mismatched} mismatched",
        flush=True,
    )
    return comparison.mismatched
