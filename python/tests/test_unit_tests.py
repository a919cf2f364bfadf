"""dbt's own unit tests (unit_tests: in the models' yml): windowing, version chain, too-late listing
and lateness statistics on fixed rows, without raw data or a scheduler."""

from __future__ import annotations

from tests.helpers import Pipeline, dbt_statuses


def test_dbt_unit_tests_pass(pipeline: Pipeline) -> None:
    invocation = pipeline.project.invoke(["test", "--select", "test_type:unit"])
    statuses = dbt_statuses(invocation, "unit_test")
    assert len(statuses) >= 7, statuses
    assert set(statuses.values()) == {"pass"}, statuses
