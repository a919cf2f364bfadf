"""What several test modules share: the short test settings, the clean pipeline they run, and the
small readings of its tables. Kept out of conftest.py, which holds only hooks and fixtures: pytest
discourages importing from a conftest, and the fault driver (a process of its own) needs these too."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame

from late_data.commands.why import window_story
from late_data.oracles.demo_pipelines import WINDOW_MEANS_COLUMNS, WindowSettings
from late_data.project.audit import history_as_of
from late_data.project.generator import PageScenario, Scenario
from late_data.project.raw_tables import ensure_raw_tables
from late_data.running.scheduler import RunReport, run_pipeline, scheduled_selection
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.timeutil import floor_to, format_timestamp
from late_data.tables.history import commits_after, latest_version

# Short settings keep the scenarios small: 10-minute late window, 5-minute partitions, 4 series buckets.
TEST_VARS: dict[str, Any] = {
    "late_window_seconds": 600,
    "window_size_seconds": 60,
    "partition_size_seconds": 300,
    "series_buckets": 4,
}
# The oracle must judge windows by the settings the models ran with.
TEST_SETTINGS = WindowSettings(
    window_size_seconds=TEST_VARS["window_size_seconds"], late_window_seconds=TEST_VARS["late_window_seconds"]
)
WRITE_DELAY_SECONDS = 300  # dbt_project.yml's default


def water_levels(**overrides: Any) -> Scenario:
    """The tests' water-level scenario: a few locations, half the readings late by up to the 10-minute
    late window. A test names only what it is about (corrections, malformed rows, more locations)."""
    settings: dict[str, Any] = {
        "locations": 4,
        "late_share": 0.5,
        "max_lateness_seconds": TEST_VARS["late_window_seconds"],
        "late_window_seconds": TEST_VARS["late_window_seconds"],
    }
    return Scenario(**{**settings, **overrides})


def page_counts(**overrides: Any) -> PageScenario:
    """The tests' page scenario, on the same terms as water_levels()."""
    settings: dict[str, Any] = {
        "pages": 4,
        "late_share": 0.3,
        "max_lateness_seconds": TEST_VARS["late_window_seconds"],
        "late_window_seconds": TEST_VARS["late_window_seconds"],
    }
    return PageScenario(**{**settings, **overrides})


def clock(origin: datetime) -> Callable[[float], datetime]:
    """Moments as minutes after a test's origin, so hand-made rows and run times read as a timeline."""
    return lambda minutes: origin + timedelta(minutes=minutes)


def data_file_path(file_path: str) -> Path:
    """A data file's path on disk from a table format's file listing (Iceberg's `files`, Delta's add
    actions): as written there, escapes included (a partition folder's `:` is `%3A` on disk too)."""
    return Path(file_path.removeprefix("file:"))


def partition_of(moment: datetime) -> datetime:
    """The time partition holding `moment`, as the models compute it: what commit-log proofs compare."""
    return floor_to(moment, TEST_VARS["partition_size_seconds"])


def oracle_partitions_changed(
    new: DataFrame, old: DataFrame | None, series_column: str, columns: list[str] | None = None
) -> set[tuple[datetime, int]]:
    """(time partition, series bucket) where an oracle's windows differ between two run times (in
    `columns`, default all, or by presence): `new` and `old` are the oracle at those times, `old`
    None before the first run (every window of `new` is a change)."""
    from pyspark.sql import functions as F

    columns = columns or new.columns
    changed = (
        new
        if old is None
        else (
            new.select(columns)
            .exceptAll(old.select(columns))
            .unionByName(old.select(columns).exceptAll(new.select(columns)))
        )
    )
    buckets = F.pmod(F.xxhash64(series_column), F.lit(TEST_VARS["series_buckets"]))
    return {
        (partition_of(row["window_start"]), row["bucket"])
        for row in changed.select("window_start", buckets.alias("bucket")).distinct().collect()
    }


def dbt_statuses(invocation: Any, resource_type: str) -> dict[str, str]:
    """Each test node's outcome by name, to assert on outcomes without dbt's result objects."""
    return {
        result.node.name: str(result.status)
        for result in invocation.result.results
        if result.node.resource_type == resource_type
    }


class Pipeline:
    """Clean raw tables and target schema with the given vars, one pipeline's dbt selection, and
    helpers to run and inspect it."""

    def __init__(self, project: DbtProject, project_vars: dict[str, Any], pipeline_tag: str = "water_level"):
        self.project = project
        self.spark = project.spark
        self.pipeline_tag = pipeline_tag
        self.runs = 0
        project.use_vars(project_vars)
        project.reset_warehouse()
        self.raw_tables = ensure_raw_tables(self.spark, project.raw_schema(), project.environment.table_format)
        self.raw_table = self.raw_tables["water_level_readings"]
        schema = project.target_schema()
        self.means_table = f"{schema}.water_level_window_means"
        self.too_late_table = f"{schema}.water_level_too_late_readings"
        self.rates_table = f"{schema}.page_error_rates"

    def run(self, run_time: datetime) -> RunReport:
        """A scheduled run, as the scheduler makes it (the whole pipeline first, then its late-data nodes)."""
        self.runs += 1
        return run_pipeline(
            self.project, run_time, scheduled_selection(self.project, self.pipeline_tag, first_run=self.runs == 1)
        )

    def rows(self, table: str, order_by: str = "window_start, location") -> list[Any]:
        return self.spark.sql(f"select * from {table} order by {order_by}").collect()

    def window_row(
        self, table: str, series_column: str, series_key: str, window_start: datetime
    ) -> dict[str, Any] | None:
        """One series' window of a result table (None when the models left no row for it)."""
        rows = self.spark.sql(
            f"select * from {table}"
            f" where {series_column} = '{series_key}' and window_start = timestamp'{format_timestamp(window_start)}'"
        ).collect()
        return rows[0].asDict() if rows else None

    def bucket_of(self, series_key: str) -> int:
        """The series bucket of a location or page (late_data.series_bucket)."""
        buckets = int(self.project.setting("series_buckets"))
        return int(self.spark.sql(f"select pmod(xxhash64('{series_key}'), {buckets})").first()[0])

    def version_of(self, table: str) -> int | None:
        """The table's latest commit, to ask later what the runs since then touched."""
        return latest_version(self.spark, table, self.project.environment.table_format)

    def touched_since(self, table: str, version: int | None) -> set[tuple[datetime, int]]:
        """(time partition, series bucket) of every partition the table's commits after `version`
        touched: the table format's own record of what a run rewrote, not the run's report of it."""
        commits = commits_after(self.spark, table, self.project.environment.table_format, version)
        return set().union(*(commit.partitions_touched for commit in commits))

    def history_as_of(self, run_time: datetime) -> DataFrame:
        """The water-level means as the run at `run_time` left them, read back from the SCD2 history:
        what the history must reproduce for every past run."""
        return history_as_of(
            self.spark,
            f"{self.project.target_schema()}.water_level_window_means_history",
            run_time,
            WINDOW_MEANS_COLUMNS,
        )


def why_versions(
    project: DbtProject, series: str, window_start: datetime, model: str = "water_level_window_means"
) -> list[tuple[datetime, str, str]]:
    """(run time, reason, definition) of each version `late-data why` lists for a window of the
    means pipeline, after checking each one, read as of its own run, against the reading count and
    mean of the deliveries why marks counted then."""
    story = window_story(project, model, series, window_start)
    for version in story.published:
        then = window_story(project, model, series, window_start, version["valid_from"])
        # The same version, but for the rollbacks that returned it after that moment.
        assert {**then.published[-1], "restored_by": None} == {**version, "restored_by": None}
        values = [
            next(iter(json.loads(str(row["measures"])).values()))
            for row in then.deliveries
            if row["delivery_status"] == "counted"
        ]
        measures = json.loads(str(version["measures"]))
        assert (len(values), round(sum(values) / len(values), 9)) == (
            measures["reading_count"],
            round(measures["mean_value"], 9),
        ), (version, then.deliveries)
    return [(row["valid_from"], row["revision_reason"], row["definition_id"]) for row in story.published]
