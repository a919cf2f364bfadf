"""Measurements on this machine: per-run cost of the scheduled path as history grows."""

from __future__ import annotations

import logging
import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta

from tqdm import tqdm

from late_data.dbt_project import DbtProject
from late_data.demo import reset_schemas
from late_data.generator import Scenario, generate
from late_data.pipeline import run_pipeline
from late_data.raw_tables import ensure_raw_tables

log = logging.getLogger(__name__)

HISTORY_ORIGIN = datetime(2026, 2, 1)
WATER_LEVEL = "+tag:water_level"
SPARSE_SCENARIO = Scenario(locations=100, late_share=0.01, lateness="long_tail")


@dataclass(frozen=True)
class HistoryCost:
    days: float
    raw_rows: int
    history_versions: int
    runs: int
    median_snapshot_seconds: float
    median_model_seconds: float
    median_run_seconds: float

    def line(self) -> str:
        return (
            f"history={self.days:g} days raw_rows={self.raw_rows} history_versions={self.history_versions}"
            f" runs={self.runs} median_snapshot_s={self.median_snapshot_seconds:.2f}"
            f" median_means_model_s={self.median_model_seconds:.2f} median_run_s={self.median_run_seconds:.2f}"
        )


def measure_history_cost(project: DbtProject, days: float, runs: int, scenario: Scenario = SPARSE_SCENARIO) -> HistoryCost:
    """Build `days` of history, then time `runs` warm scheduled runs one minute apart."""
    reset_schemas(project)
    raw_table = ensure_raw_tables(project.spark, project.raw_schema(), project.environment.table_format)[
        "water_level_readings"
    ]
    history_end = HISTORY_ORIGIN + timedelta(days=days)
    day = HISTORY_ORIGIN
    with tqdm(total=days, desc=f"generate {days:g} days", unit="day", leave=False) as progress:
        while day < history_end:
            next_day = min(day + timedelta(days=1), history_end)
            generate(project.spark, raw_table, scenario, HISTORY_ORIGIN, day, next_day)
            progress.update((next_day - day) / timedelta(days=1))
            day = next_day
    run_pipeline(project, history_end, WATER_LEVEL)  # first build: everything from raw, the initial versions
    audit = f"{project.target_schema()}.late_data_run_audit"
    snapshot_seconds, model_seconds, run_seconds = [], [], []
    previous = history_end
    for step in range(1, runs + 1):
        run_time = history_end + timedelta(minutes=step)
        generate(project.spark, raw_table, scenario, HISTORY_ORIGIN, previous, run_time)
        previous = run_time
        report = run_pipeline(project, run_time, WATER_LEVEL)
        seconds = {
            row["model_role"]: row["seconds"]
            for row in project.spark.sql(
                f"select model_role, seconds from {audit} where run_time = timestamp'{run_time:%Y-%m-%d %H:%M:%S}'"
            ).collect()
        }
        snapshot_seconds.append(seconds["history"])
        model_seconds.append(seconds["windows"])
        run_seconds.append(report.seconds)
        log.info("%s snapshot %.2f s, means model %.2f s", report.line(), seconds["history"], seconds["windows"])
    return HistoryCost(
        days=days,
        raw_rows=project.spark.table(raw_table).count(),
        history_versions=project.spark.table(f"{project.target_schema()}.water_level_window_means_history").count(),
        runs=runs,
        median_snapshot_seconds=statistics.median(snapshot_seconds),
        median_model_seconds=statistics.median(model_seconds),
        median_run_seconds=statistics.median(run_seconds),
    )
