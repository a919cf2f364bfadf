"""The one time module: flooring, parsing and formatting as the dbt macros do (no Spark)."""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta

import pytest

from late_data.arguments import parse_time
from late_data.runtime.timeutil import ceil_to, epoch_seconds, floor_to, format_timestamp, parse_timestamp


def test_floor_to_counts_cells_from_the_epoch() -> None:
    moment = datetime(2026, 1, 1, 9, 7, 31, 250_000)
    assert floor_to(moment, 300) == datetime(2026, 1, 1, 9, 5)
    assert floor_to(moment, timedelta(minutes=1)) == datetime(2026, 1, 1, 9, 7)
    # 11 hours does not divide a day: cells count from 1970-01-01, not from midnight.
    assert floor_to(datetime(2026, 1, 1, 3), timedelta(hours=11)) == datetime(2026, 1, 1, 1)
    assert floor_to(datetime(2026, 1, 1, 9, 5), 300) == datetime(2026, 1, 1, 9, 5)


def test_ceil_to_keeps_grid_points() -> None:
    assert ceil_to(datetime(2026, 1, 1, 9), timedelta(hours=1)) == datetime(2026, 1, 1, 9)
    assert ceil_to(datetime(2026, 1, 1, 9, 0, 1), timedelta(hours=1)) == datetime(2026, 1, 1, 10)


def test_floor_to_rejects_an_empty_step() -> None:
    with pytest.raises(ValueError, match="must be positive"):
        floor_to(datetime(2026, 1, 1), 0)


def test_epoch_seconds_reads_naive_times_as_utc() -> None:
    assert epoch_seconds(datetime(1970, 1, 1, 0, 1, 40)) == 100


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-01 02:00:00", datetime(2026, 1, 1, 2)),
        ("2026-01-01T02:00:00", datetime(2026, 1, 1, 2)),
        ("2026-01-01 02:00:00Z", datetime(2026, 1, 1, 2)),
        # An offset is converted to UTC, as late_data.parse_time does for dbt vars, not dropped.
        ("2026-01-01 02:00:00+02:00", datetime(2026, 1, 1, 0)),
        ("2026-01-01T00:30:00-01:00", datetime(2026, 1, 1, 1, 30)),
        ("2026-01-01 01:00:00+02:00", datetime(2025, 12, 31, 23)),
        ("2026-01-01", datetime(2026, 1, 1)),
    ],
)
def test_parse_timestamp_gives_naive_utc(text: str, expected: datetime) -> None:
    assert parse_timestamp(text) == expected
    assert parse_timestamp(text).tzinfo is None


def test_cli_times_keep_their_offset() -> None:
    assert parse_time("2026-01-01 02:00:00+02:00") == datetime(2026, 1, 1, 0)
    assert parse_time("2026-01-01T02:00:00Z") == datetime(2026, 1, 1, 2)
    with pytest.raises(argparse.ArgumentTypeError, match="is not a time"):
        parse_time("yesterday")


def test_format_timestamp_is_what_dbt_vars_take() -> None:
    moment = datetime(2026, 1, 1, 0, 0, 10, 999_999)
    assert format_timestamp(moment) == "2026-01-01 00:00:10"
    assert parse_timestamp(format_timestamp(moment)) == moment.replace(microsecond=0)
