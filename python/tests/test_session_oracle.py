"""The sessions' contract on a few rows (python/late_data/oracles/sessions.py): what a late event
merges, extends or is too late for, what a correction splits, how a long burst is cut. No Spark:
the oracle is plain Python, so these cases cost milliseconds."""

from __future__ import annotations

from datetime import datetime, timedelta

from late_data.oracles.sessions import (
    ARRIVED_AFTER_FINAL,
    REPLACES_FINAL_VERSION,
    SessionVersion,
    sessions_of,
)

T0 = datetime(2026, 6, 1, 12, 0, 0)
GAP = 30 * 60
LATE = 3600


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def version(event: str, minutes: float, arrived: float, visitor: str = "v1") -> SessionVersion:
    return SessionVersion(
        event=(event,),
        series=(visitor,),
        event_time=at(minutes),
        ingested_at=at(arrived),
        chain_key=(at(arrived), at(minutes), visitor),
    )


def bounds(versions: list[SessionVersion], run_minutes: float, max_session_seconds: int | None = None):
    sessions, too_late = sessions_of(versions, at(run_minutes), GAP, LATE, max_session_seconds)
    shown = sorted((s.series[0], s.start, s.end, len(s.events)) for s in sessions)
    return shown, too_late


def test_a_late_event_in_the_gap_merges_two_sessions() -> None:
    views = [version("a", 0, 1), version("b", 10, 11), version("c", 60, 61), version("d", 70, 71)]
    before, _ = bounds(views, 80)
    assert before == [("v1", at(0), at(40), 2), ("v1", at(60), at(100), 2)]
    after, too_late = bounds([*views, version("late", 35, 85)], 90)
    assert after == [("v1", at(0), at(100), 5)]
    assert too_late == []


def test_an_event_before_the_first_extends_the_session_backwards() -> None:
    views = [version("a", 60, 61), version("b", 70, 71)]
    after, _ = bounds([*views, version("early", 40, 80)], 90)
    assert after == [("v1", at(40), at(100), 3)]


def test_a_correction_moving_the_bridging_event_splits_the_session() -> None:
    views = [version("a", 0, 1), version("bridge", 25, 26), version("c", 50, 51)]
    before, _ = bounds(views, 60)
    assert before == [("v1", at(0), at(80), 3)]
    moved = version("bridge", 200, 65)  # the same event, corrected: it happened much later
    after, _ = bounds([*views, moved], 70)
    assert after == [("v1", at(0), at(30), 1), ("v1", at(50), at(80), 1), ("v1", at(200), at(230), 1)]


def test_a_correction_moving_an_event_to_another_series_shrinks_its_old_session() -> None:
    views = [version("a", 0, 1), version("b", 10, 11)]
    moved = version("b", 10, 20, visitor="v2")
    after, _ = bounds([*views, moved], 30)
    assert after == [("v1", at(0), at(30), 1), ("v2", at(10), at(40), 1)]


def test_an_event_later_than_its_late_window_is_too_late_and_changes_nothing() -> None:
    views = [version("a", 0, 1), version("b", 10, 11)]
    late = version("late", 20, 20 + 61)  # one minute after its event time's late window
    after, too_late = bounds([*views, late], 90)
    assert after == [("v1", at(0), at(40), 2)]
    assert [(t.version.event, t.reason, t.seconds_after_final) for t in too_late] == [
        (("late",), ARRIVED_AFTER_FINAL, 60)
    ]


def test_a_correction_after_the_replaced_version_became_final_leaves_it_counting() -> None:
    views = [version("a", 0, 1), version("b", 10, 11)]
    correction = version("b", 50, 75)  # in time for its own event time, not for the version it replaces
    after, too_late = bounds([*views, correction], 80)
    # As with fixed windows: the old version stays in its final moment's session, the new one counts in its own.
    assert after == [("v1", at(0), at(40), 2), ("v1", at(50), at(80), 1)]
    assert [(t.reason, t.seconds_after_final, t.missed_moment) for t in too_late] == [
        (REPLACES_FINAL_VERSION, 5 * 60, at(10))
    ]


def test_a_correction_too_late_for_both_moments_has_two_entries() -> None:
    views = [version("a", 0, 1), version("b", 10, 11)]
    correction = version("b", 5, 90)
    after, too_late = bounds([*views, correction], 95)
    assert after == [("v1", at(0), at(40), 2)]
    assert sorted((t.reason, t.seconds_after_final, t.missed_moment) for t in too_late) == [
        (ARRIVED_AFTER_FINAL, 25 * 60, at(5)),
        (REPLACES_FINAL_VERSION, 20 * 60, at(10)),
    ]


def test_copies_delivered_together_count_once() -> None:
    views = [version("a", 0, 1), version("a", 0, 1), version("b", 10, 11)]
    after, _ = bounds(views, 20)
    assert after == [("v1", at(0), at(40), 2)]


def test_a_long_burst_is_cut_at_multiples_of_the_maximum_after_its_first_event() -> None:
    views = [version(str(minute), minute, minute + 1) for minute in range(0, 100, 20)]  # 0, 20, ... 80
    after, _ = bounds(views, 101, max_session_seconds=45 * 60)
    # Cuts at 45 and 90 minutes after the burst's first event.
    assert after == [("v1", at(0), at(70), 3), ("v1", at(60), at(110), 2)]
    # An event before the first moves every cut: 35, 80 and 125 minutes after it.
    extended, _ = bounds([*views, version("early", -10, 30)], 102, max_session_seconds=45 * 60)
    assert extended == [("v1", at(-10), at(50), 3), ("v1", at(40), at(90), 2), ("v1", at(80), at(110), 1)]


def test_a_session_is_final_once_its_end_and_the_late_window_have_passed() -> None:
    views = [version("a", 0, 1), version("b", 10, 11)]
    sessions, _ = sessions_of(views, at(101), GAP, LATE)
    (session,) = sessions
    assert session.final_at(LATE) == at(40 + 60)
    # The last version that could still count and touch it: an event at its end, arriving a late
    # window later, which is the session's final moment.
    touching = version("edge", 40, 100)
    touched, too_late = sessions_of([*views, touching], at(101), GAP, LATE)
    assert [len(s.events) for s in touched] == [3] and too_late == []


def at_exact(minutes: float, microseconds: int = 0) -> datetime:
    return at(minutes) + timedelta(microseconds=microseconds)


def exact_version(event: str, event_time: datetime, ingested_at: datetime) -> SessionVersion:
    return SessionVersion((event,), ("v1",), event_time, ingested_at, (ingested_at, event_time, "v1"))


def test_the_gap_is_compared_to_the_microsecond() -> None:
    """Events at 0, 30 min and 60 min + d (gap 30 min): one session when d is at most 0, two when
    the last is a microsecond beyond the gap, as the macros compare unix_micros."""

    def sessions_with_last_at(microseconds: int) -> list[int]:
        views = [
            exact_version("a", at(0), at(1)),
            exact_version("b", at(30), at(31)),
            exact_version("c", at_exact(60, microseconds), at(62)),
        ]
        sessions, _ = sessions_of(views, at(63), GAP, LATE)
        return sorted(len(s.events) for s in sessions)

    assert sessions_with_last_at(-1) == [3]  # a microsecond inside the gap
    assert sessions_with_last_at(0) == [3]  # exactly the gap
    assert sessions_with_last_at(1) == [1, 2]  # a microsecond beyond it


def test_a_long_burst_is_cut_to_the_microsecond() -> None:
    """With a 20-minute maximum, an event exactly 20 minutes after the burst's first starts the
    second session; one a microsecond earlier stays in the first."""
    first = exact_version("a", at(0), at(1))
    under = exact_version("b", at_exact(20, -1), at(21))
    at_cut = exact_version("c", at(20), at(21))
    sessions, _ = sessions_of([first, under], at(22), GAP, LATE, max_session_seconds=20 * 60)
    assert [len(s.events) for s in sessions] == [2]
    sessions, _ = sessions_of([first, at_cut], at(22), GAP, LATE, max_session_seconds=20 * 60)
    assert [len(s.events) for s in sessions] == [1, 1]


def test_seconds_after_final_is_the_exact_lateness_rounded_up() -> None:
    """One rule for the listing and the oracle (timeutil.seconds_after): 1,890.74 s is 1,891; a
    whole 60 s is 60; a microsecond is 1."""
    for lateness, listed in (
        (timedelta(seconds=1890, microseconds=740000), 1891),
        (timedelta(seconds=60), 60),
        (timedelta(microseconds=1), 1),
    ):
        late = exact_version("late", at(0), at(60) + lateness)  # its final moment: event time + 60 min
        _, too_late = sessions_of([late], at(200), GAP, LATE)
        assert [(t.reason, t.seconds_after_final) for t in too_late] == [(ARRIVED_AFTER_FINAL, listed)]
