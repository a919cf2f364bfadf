"""dbt's own adapter test suites (dbt-tests-adapter) in projects that install the late_data package
as a user's project does (packages.yml, the `dispatch` that gives it dbt-spark's relation listing,
the snapshot materialization wrapped), on the embedded Iceberg target: the package leaves dbt's
behaviour alone for models it does not own, or makes it right (a snapshot on an Iceberg table
needs its listing's real provider). Plus dbt-spark's insert_overwrite strategy on parquet tables,
which a listing that labelled every table Iceberg broke.

The suites run dbt in this process on the tests' Spark session (dbt-spark's session method
reuses it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from dbt.tests.adapter.basic.test_adapter_methods import BaseAdapterMethod
from dbt.tests.adapter.basic.test_base import BaseSimpleMaterializations
from dbt.tests.adapter.basic.test_incremental import BaseIncremental
from dbt.tests.adapter.basic.test_snapshot_check_cols import BaseSnapshotCheckCols
from dbt.tests.adapter.basic.test_snapshot_timestamp import BaseSnapshotTimestamp
from dbt.tests.fixtures.project import *  # noqa: F403 - the suites' fixtures (project, unique_schema, ...)
from dbt.tests.util import check_relations_equal, run_dbt

from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.environment import CHECKOUT

PACKAGE = CHECKOUT / "package"
SNAPSHOT_WRAPPER = """
{% materialization snapshot, adapter='spark' %}
    {{- return(late_data.materialization_snapshot_spark()) -}}
{% endmaterialization %}
"""

pytestmark = pytest.mark.spark
ICEBERG = {"+file_format": "iceberg"}


@pytest.fixture(scope="module", autouse=True)
def spark_session(late_data_project: DbtProject) -> Iterator[None]:
    """The tests' Spark session, which dbt-spark's session method reuses (one JVM, one metastore)."""
    late_data_project.spark  # noqa: B018 - started before the suites' first dbt command
    yield


@pytest.fixture(scope="class")
def dbt_profile_target() -> dict[str, Any]:
    return {"type": "spark", "method": "session", "host": "localhost", "schema": "dbt_suites", "threads": 1}


@pytest.fixture(scope="class")
def packages() -> dict[str, Any]:
    return {"packages": [{"local": str(PACKAGE)}]}


@pytest.fixture(scope="class")
def macros() -> dict[str, str]:
    return {"late_data.sql": SNAPSHOT_WRAPPER}


def installed(name: str) -> dict[str, Any]:
    """A suite project's config: the package's setup (the dispatch docs/your-own-pipeline.md has),
    and Iceberg tables, the embedded target's format. (Its session catalog drops a table of
    another format without its files, so a model rebuilt as a parquet table under the same name
    fails, whatever the package: LOCATION_ALREADY_EXISTS.)"""
    return {
        "name": name,
        "dispatch": [{"macro_namespace": "dbt", "search_order": [name, "late_data", "dbt"]}],
        "models": ICEBERG,
        "seeds": ICEBERG,
        "snapshots": ICEBERG,
    }


@pytest.fixture(scope="class", autouse=True)
def late_data_installed(project: Any) -> None:
    """`dbt deps`: the package from this repository's package/."""
    run_dbt(["deps"])


class TestSimpleMaterializations(BaseSimpleMaterializations):
    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict[str, Any]:
        return installed("base")


class TestAdapterMethod(BaseAdapterMethod):
    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict[str, Any]:
        return installed("adapter_methods")


class TestIncremental(BaseIncremental):
    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict[str, Any]:
        return installed("incremental")


class TestSnapshotCheckCols(BaseSnapshotCheckCols):
    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict[str, Any]:
        return installed("snapshot_strategy_check_cols")


class TestSnapshotTimestamp(BaseSnapshotTimestamp):
    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict[str, Any]:
        return installed("snapshot_strategy_timestamp")


# dbt-spark's insert_overwrite on parquet tables: without partitions the table is replaced, with
# them only the partitions the new rows hold (dynamic partition overwrite, the profile's setting).
OVERWRITTEN_MODEL = """
{{{{ config(materialized='incremental', incremental_strategy='insert_overwrite', file_format='parquet'{partitions}) }}}}
{{% if is_incremental() %}}
select cast(2 as bigint) as id, 'second' as msg, 'b' as part union all select 3, 'third', 'c'
{{% else %}}
select cast(1 as bigint) as id, 'first' as msg, 'a' as part union all select 2, 'second-old', 'b'
{{% endif %}}
"""


class TestInsertOverwrite:
    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict[str, Any]:
        return {**installed("insert_overwrite"), "models": {}, "seeds": {}}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "overwritten_whole.sql": OVERWRITTEN_MODEL.format(partitions=""),
            "overwritten_partitions.sql": OVERWRITTEN_MODEL.format(partitions=", partition_by=['part']"),
        }

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {
            "expected_whole.csv": "id,msg,part\n2,second,b\n3,third,c\n",
            "expected_partitions.csv": "id,msg,part\n1,first,a\n2,second,b\n3,third,c\n",
        }

    def test_insert_overwrite(self, project: Any) -> None:
        run_dbt(["seed"])
        run_dbt(["run"])
        run_dbt(["run"])
        check_relations_equal(project.adapter, ["overwritten_whole", "expected_whole"])
        check_relations_equal(project.adapter, ["overwritten_partitions", "expected_partitions"])
