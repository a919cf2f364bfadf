"""dbt's own unit tests (unit_tests: in the models' yml): windowing and lateness statistics on fixed
rows, without raw data or a scheduler. (The version chain and the too-late listing run inside the
late_data materialization, which a dbt unit test does not reach: the oracle tests check them.)"""

from __future__ import annotations

from tests.helpers import Pipeline, dbt_statuses


def test_dbt_unit_tests_pass(pipeline: Pipeline) -> None:
    invocation = pipeline.project.invoke(["test", "--select", "test_type:unit"])
    statuses = dbt_statuses(invocation, "unit_test")
    assert len(statuses) >= 4, statuses
    assert set(statuses.values()) == {"pass"}, statuses
