"""The commit-log proofs on Delta tables: the format-aware tests run again on Delta, in a process of
their own started when the suite is collected (tests/delta_proofs.py). In a file of its own, so the
test that waits for that run is the last piece of work pytest-xdist hands out."""

from __future__ import annotations

import pytest

from tests import delta_proofs


@pytest.mark.spark
def test_the_commit_log_proofs_hold_on_delta_tables(request: pytest.FixtureRequest) -> None:
    reason = delta_proofs.not_run_because()
    if reason is not None:
        pytest.skip(reason)
    code, output = delta_proofs.started(request.config).outcome()
    assert code == 0, output
