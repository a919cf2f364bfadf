"""`late-data why`: one window's story. Its published versions are the history's, with their
reasons, and the deliveries it marks counted recompute every version it lists, as of each moment:
after a late row, corrections (one written after the run its stamp precedes), a quarantined row,
finalization and a row too late."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from late_data.commands.why import UnknownWindow, window_story
from late_data.project.raw_tables import Reading, append_readings
from late_data.runtime.dbt_project import DbtProject
from tests.helpers import Pipeline, clock, why_versions

T0 = datetime(2026, 3, 2, 8, 0, 0)
at = clock(T0)
MEANS = "water_level_window_means"


def recomputed(deliveries: list[dict[str, object]]) -> tuple[int, float]:
    """Count and mean of the deliveries marked counted, from their own values."""
    values = [
        next(iter(json.loads(str(row["measures"])).values()))
        for row in deliveries
        if row["delivery_status"] == "counted"
    ]
    return len(values), sum(values) / len(values)


@pytest.mark.spark
def test_why_lists_each_version_and_the_deliveries_that_recompute_it(pipeline: Pipeline, project: DbtProject) -> None:
    def deliver(*readings: Reading) -> None:
        append_readings(pipeline.spark, pipeline.raw_table, list(readings))

    deliver(Reading("a", "harbour", at(0.1), 1.0, at(0.2)), Reading("b", "harbour", at(0.3), 2.0, at(0.4)))
    deliver(Reading("h", "quay", at(0.2), 3.0, at(0.3)), Reading("g", "quay", at(0.8), 7.0, at(0.9)))
    pipeline.run(at(2))
    deliver(Reading("c", "harbour", at(0.5), 6.0, at(3)))  # late, in time
    deliver(Reading("g", "quay", at(1.5), 7.0, at(3)))  # g corrected into 08:01's window
    pipeline.run(at(4))
    # A correction of b stamped before the run at 08:04 but written after it (the next run loads it:
    # write_delay_seconds), and one of a.
    deliver(Reading("b", "harbour", at(0.3), 5.0, at(3.5)), Reading("a", "harbour", at(0.1), 4.0, at(5)))
    pipeline.run(at(6))
    deliver(Reading("d", "harbour", at(0.6), float("nan"), at(6.5)))  # quarantined: not a number
    pipeline.run(at(7))
    pipeline.run(at(12))  # final at 08:11
    deliver(Reading("e", "harbour", at(0.7), 9.0, at(12.5)))  # too late
    pipeline.run(at(13))

    story = window_story(project, MEANS, "harbour", at(0))
    published = story.published
    assert [row["revision_reason"] for row in published] == ["initial", "late_data", "correction", "finalized"]
    assert [row["valid_from"] for row in published] == [at(2), at(4), at(6), at(12)]
    assert [row["is_final"] for row in published] == [False, False, False, True]
    statuses = {(row["event_key"], row["ingested_at"]): row["delivery_status"] for row in story.deliveries}
    assert statuses == {
        ("a", at(0.2)): "superseded",
        ("b", at(0.4)): "superseded",
        ("c", at(3)): "counted",
        ("b", at(3.5)): "counted",
        ("a", at(5)): "counted",
        ("d", at(6.5)): "quarantined",
        ("e", at(12.5)): "too_late",
    }
    correction = next(row for row in story.deliveries if row["ingested_at"] == at(5))
    assert correction["replaced_ingested_at"] == at(0.2) and correction["loaded_at"] == at(6)
    assert next(row for row in story.deliveries if row["event_key"] == "d")["quarantine_reason"]
    # Each version, read as of its own run, is what its counted deliveries recompute.
    for version in published:
        then = window_story(project, MEANS, "harbour", at(0), version["valid_from"])
        assert then.published[-1] == version
        measures = json.loads(str(version["measures"]))
        count, mean = recomputed(then.deliveries)
        assert (count, round(mean, 9)) == (measures["reading_count"], round(measures["mean_value"], 9))
    assert story.lines()[-1] == (
        'why: now {"reading_count":3,"mean_value":5.0,"value_sum":15.000000000}, final, from 3 deliveries;'
        f" last change at {at(12).isoformat(sep=' ')}: finalized"
    )
    assert json.loads(story.json_rows())[0]["kind"] == "published"
    # quay's 08:00 window lost g to a correction that moved it to 08:01: g's first version is
    # superseded there by the version in the other window, and every version recomputes.
    assert [reason for _, reason, _ in why_versions(project, "quay", at(0))] == ["initial", "correction", "finalized"]
    moved = {row["event_key"]: row["delivery_status"] for row in window_story(project, MEANS, "quay", at(0)).deliveries}
    assert moved == {"h": "counted", "g": "superseded"}
    with pytest.raises(UnknownWindow, match="has no series 'nowhere'"):
        window_story(project, MEANS, "nowhere", at(0))
    with pytest.raises(UnknownWindow, match="no window of harbour starting 2026-03-02 07:00:00"):
        window_story(project, MEANS, "harbour", at(-60))
