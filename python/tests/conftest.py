"""One warm Spark session and parsed dbt project for the whole test run, in its own LATE_DATA_HOME."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from late_data.dbt_project import DbtProject
from late_data.demo import reset_schemas
from late_data.environment import prepare_environment
from late_data.pipeline import RunReport, run_pipeline, scheduled_selection
from late_data.raw_tables import ensure_raw_tables

# Short settings keep the scenarios small: 10-minute late window, 5-minute partitions, 4 series buckets.
TEST_VARS: dict[str, Any] = {
    "late_window_seconds": 600,
    "window_size_seconds": 60,
    "partition_size_seconds": 300,
    "series_buckets": 4,
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cluster: starts a local cluster (PostgreSQL, metastore, Spark, Thrift Server)")


@pytest.fixture(scope="session")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DbtProject]:
    home: Path = tmp_path_factory.mktemp("late_data_home")
    os.environ["LATE_DATA_HOME"] = str(home)
    os.environ.setdefault("LATE_DATA_SHUFFLE_PARTITIONS", "2")
    os.environ.setdefault("LATE_DATA_DRIVER_MEMORY", "2g")
    dbt_project = DbtProject(prepare_environment())
    yield dbt_project
    dbt_project.close()


class Pipeline:
    """Clean raw tables and target schema with the given vars, one pipeline's dbt selection, and
    helpers to run and inspect it."""

    def __init__(self, project: DbtProject, project_vars: dict[str, Any], pipeline_tag: str = "water_level"):
        self.project = project
        self.spark = project.spark
        self.pipeline_tag = pipeline_tag
        self.runs = 0
        reset_schemas(project)
        project.use_vars(project_vars)
        self.raw_tables = ensure_raw_tables(self.spark, project.raw_schema(), project.environment.table_format)
        self.raw_table = self.raw_tables["water_level_readings"]
        schema = project.target_schema()
        self.means_table = f"{schema}.water_level_window_means"
        self.too_late_table = f"{schema}.water_level_too_late_readings"
        self.rates_table = f"{schema}.page_error_rates"

    def run(self, run_time: datetime) -> RunReport:
        """A scheduled run, as the scheduler makes it (the whole pipeline first, then its late-data nodes)."""
        self.runs += 1
        return run_pipeline(self.project, run_time, scheduled_selection(self.pipeline_tag, first_run=self.runs == 1))

    def rows(self, table: str, order_by: str = "window_start, location") -> list[Any]:
        return self.spark.sql(f"select * from {table} order by {order_by}").collect()

    def bucket_of(self, series_key: str) -> int:
        """The series bucket of a location or page (the models' late_data_series_bucket)."""
        buckets = int(self.project.setting("series_buckets"))
        return int(self.spark.sql(f"select pmod(xxhash64('{series_key}'), {buckets})").first()[0])


@pytest.fixture
def pipeline(project: DbtProject) -> Pipeline:
    return Pipeline(project, TEST_VARS)
