"""One warm Spark session and parsed dbt project for the whole test run, in its own LATE_DATA_HOME."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from late_data.dbt_project import DbtProject
from late_data.environment import delta_jars_unavailable, prepare_environment
from tests import delta_proofs
from tests.helpers import TEST_VARS, Pipeline


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cluster: starts a local cluster (PostgreSQL, metastore, Spark, Thrift Server)")
    config.addinivalue_line("markers", "spark: needs a Spark session (`make check` leaves these to `make test`)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark what uses the shared Spark session or the cluster (tests that start Spark in processes
    of their own carry the mark themselves), so `make check` (-m "not spark") runs only what answers in seconds.
    The test that waits for the Delta proofs goes last: the suite works beside them until then."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & {"project", "late_data_project", "pipeline"} or item.get_closest_marker("cluster"):
            item.add_marker(pytest.mark.spark)
    items.sort(key=lambda item: item.nodeid.endswith(delta_proofs.TEST_ID))


def pytest_collection_finish(session: pytest.Session) -> None:
    """The Delta proofs start now, beside the rest of the suite, when their test is selected and
    this session is not itself on Delta (tests/delta_proofs.py)."""
    if session.config.option.collectonly:
        return
    selected = any(item.nodeid.endswith(delta_proofs.TEST_ID) for item in session.items)
    if selected and os.environ.get("LATE_DATA_TABLE_FORMAT") != "delta" and delta_jars_unavailable() is None:
        delta_proofs.start()


def pytest_sessionfinish(session: pytest.Session) -> None:
    delta_proofs.stop()


@pytest.fixture(scope="session")
def late_data_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DbtProject]:
    home: Path = tmp_path_factory.mktemp("late_data_home")
    os.environ["LATE_DATA_HOME"] = str(home)
    os.environ.setdefault("LATE_DATA_SHUFFLE_PARTITIONS", "2")
    os.environ.setdefault("LATE_DATA_DRIVER_MEMORY", "2g")
    dbt_project = DbtProject(prepare_environment())
    yield dbt_project
    dbt_project.close()


@pytest.fixture(scope="session")
def project(late_data_project: DbtProject) -> DbtProject:
    """The warm project every Spark test shares (late_data_project: under this name for the modules
    whose own `project` fixture is dbt-tests-adapter's)."""
    return late_data_project


@pytest.fixture
def pipeline(project: DbtProject) -> Pipeline:
    return Pipeline(project, TEST_VARS)
