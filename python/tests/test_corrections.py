"""Hand-made rows for the cases a random scenario may miss: corrections, emptied windows, too-late rows."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from late_data.project.raw_tables import Reading, append_readings
from late_data.runtime.dbt_project import DbtProject
from tests.helpers import TEST_VARS, Pipeline, clock

T0 = datetime(2026, 3, 2, 8, 0, 0)
at = clock(T0)


def window_row(pipeline: Pipeline, location: str, window_start: datetime) -> dict[str, Any] | None:
    return pipeline.window_row(pipeline.means_table, "location", location, window_start)


def test_same_count_correction_is_detected_and_fixed(pipeline: Pipeline) -> None:
    append_readings(
        pipeline.spark,
        pipeline.raw_table,
        [
            Reading("a", "harbour", at(0.1), 1.0, at(0.2)),
            Reading("b", "harbour", at(0.3), 2.0, at(0.4)),
            Reading("c", "dock", at(6.1), 7.0, at(6.2)),
        ],
    )
    pipeline.run(at(7))
    assert window_row(pipeline, "harbour", at(0))["mean_value"] == 1.5
    before = pipeline.version_of(pipeline.means_table)

    # A correction of "a" keeps the window's count at 2 and changes its value.
    append_readings(pipeline.spark, pipeline.raw_table, [Reading("a", "harbour", at(0.1), 3.0, at(7.5))])
    report = pipeline.run(at(8))

    corrected = window_row(pipeline, "harbour", at(0))
    assert (corrected["reading_count"], corrected["mean_value"]) == (2, 2.5)
    # Only harbour's bucket of the 08:00 partition: the 08:05 partition ("dock") and the other
    # buckets of 08:00 are left alone.
    assert pipeline.touched_since(pipeline.means_table, before) == {(at(0), pipeline.bucket_of("harbour"))}
    assert report.partitions_rewritten == 1


def test_window_emptied_by_a_correction_is_cleared(pipeline: Pipeline) -> None:
    # The only reading of partition 08:00-08:05 moves to 08:06 (another partition): a dynamic
    # overwrite alone would leave the 08:00 partition's old row in place.
    append_readings(pipeline.spark, pipeline.raw_table, [Reading("m", "pier", at(1.5), 4.0, at(1.6))])
    pipeline.run(at(2))
    assert window_row(pipeline, "pier", at(1)) is not None
    before = pipeline.version_of(pipeline.means_table)

    append_readings(pipeline.spark, pipeline.raw_table, [Reading("m", "pier", at(6.5), 4.0, at(6.6))])
    pipeline.run(at(7))

    assert window_row(pipeline, "pier", at(1)) is None
    assert window_row(pipeline, "pier", at(6))["reading_count"] == 1
    assert (at(0), pipeline.bucket_of("pier")) in pipeline.touched_since(pipeline.means_table, before)


@pytest.fixture(scope="module")
def late_for_final_windows(project: DbtProject) -> dict[str, Any]:
    """Two locations' 08:00 windows final at the run at 08:12 (1-minute window + 10-minute late
    window); then, before the run at 08:13, for quay a new reading and a correction too late for
    it, and for lock a correction moving its reading out of it into 08:11, still open. Read once:
    the tests of the module reset the warehouse."""
    pipeline = Pipeline(project, TEST_VARS)
    append_readings(
        pipeline.spark,
        pipeline.raw_table,
        [
            Reading("p", "quay", at(0.2), 1.0, at(0.3)),
            Reading("q", "quay", at(0.4), 3.0, at(0.5)),
            Reading("s", "lock", at(0.2), 2.0, at(0.3)),
        ],
    )
    pipeline.run(at(12))
    final_rows = {location: window_row(pipeline, location, at(0)) for location in ("quay", "lock")}
    before = pipeline.version_of(pipeline.means_table)
    append_readings(
        pipeline.spark,
        pipeline.raw_table,
        [
            Reading("r", "quay", at(0.6), 100.0, at(12.5)),  # a new reading, too late
            Reading("p", "quay", at(0.2), 50.0, at(12.6)),  # a correction of a final window, too late
            Reading("s", "lock", at(11.2), 2.5, at(12.5)),  # moved into window 08:11, still open
        ],
    )
    pipeline.run(at(13))
    return {
        "final_rows": final_rows,
        "rows_after": {location: window_row(pipeline, location, at(0)) for location in ("quay", "lock")},
        "lock_08_11": window_row(pipeline, "lock", at(11)),
        "touched": pipeline.touched_since(pipeline.means_table, before),
        "lock_bucket": pipeline.bucket_of("lock"),
        "listed": [row.asDict() for row in pipeline.spark.table(pipeline.too_late_table).collect()],
    }


def test_rows_later_than_the_late_window_are_kept_aside_and_change_nothing(
    late_for_final_windows: dict[str, Any],
) -> None:
    state = late_for_final_windows
    assert state["final_rows"]["quay"]["is_final"] is True
    assert state["rows_after"]["quay"] == state["final_rows"]["quay"]
    # Only lock's move into the open 08:11 window rewrote a partition: quay's 08:00 is left alone.
    assert state["touched"] == {(at(10), state["lock_bucket"])}
    listed = {
        (row["event_id"], row["too_late_reason"], row["seconds_after_final"])
        for row in state["listed"]
        if row["location"] == "quay"
    }
    assert listed == {("r", "arrived_after_final", 90), ("p", "replaces_final_version", 96)}


def test_correction_moving_a_reading_out_of_a_final_window_is_listed(late_for_final_windows: dict[str, Any]) -> None:
    state = late_for_final_windows
    # Counted in window 08:11, but window 08:00 stays final.
    assert state["rows_after"]["lock"] == state["final_rows"]["lock"]
    assert state["lock_08_11"]["mean_value"] == 2.5
    reasons = [row["too_late_reason"] for row in state["listed"] if row["location"] == "lock"]
    assert reasons == ["replaces_final_version"]
