"""This project against a peer on the same data and run times: the daily distinct counts and the
sessions against their microbatch models and full refreshes, and the percentiles' and extremes'
peers."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

from tqdm import tqdm

from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.timeutil import ceil_to, floor_to
from late_data.runtime.timeutil import format_timestamp as _stamp
from late_data_bench.cells import (
    BENCH_ORIGIN,
    DAILY,
    DAILY_MICROBATCH,
    EXTREMES,
    FLOOR,
    FULL_REFRESH_SESSIONS,
    MEANS,
    MICROBATCH,
    MICROBATCH_DAILY,
    MICROBATCH_SESSIONS,
    OURS_DAILY,
    OURS_SESSIONS,
    PERCENTILES,
    PERCENTILES_MICROBATCH,
    SESSION_GAP_SECONDS,
    SESSIONS,
    SESSIONS_MICROBATCH,
    BenchCell,
    RunProfile,
)
from late_data_bench.timing import _check_strategies_agree, _Feed, _timed, _timed_runs, _Timing

log = logging.getLogger(__name__)


def _timed_peers(
    project: DbtProject,
    cell: BenchCell,
    feed: _Feed,
    history_end: datetime,
    minutes: list[int],
    profiles: dict[str, RunProfile],
    measures: tuple[str, ...] = (),
) -> dict[str, list[_Timing]]:
    """Every strategy's timed runs over the hour after `history_end` (_timed_runs), from the same
    starting table, and the check that their answers agree; with `measures`, the percentile and
    min/max pipelines too."""
    spark, schema = project.spark, project.target_schema()
    table_format = project.environment.table_format
    # The peers start from the same table (built batch by batch, a week of history would take hours).
    for table in (MICROBATCH, FLOOR):
        spark.sql(
            f"create table {schema}.{table} using {table_format} partitioned by (partition_start)"
            f" as select window_start, location, partition_start, reading_count, mean_value, is_final from {schema}.{MEANS}"
        )
    if measures:
        project.invoke(
            ["run", "--select", PERCENTILES, EXTREMES], {"run_time": _stamp(history_end + timedelta(seconds=10))}
        )
        spark.sql(
            f"create table {schema}.{PERCENTILES_MICROBATCH} using {table_format} partitioned by (partition_start)"
            f" as select window_start, location, partition_start, reading_count, p50_value, p95_value, is_final"
            f" from {schema}.{PERCENTILES}"
        )
    try:
        timings = _timed_runs(
            project, cell, feed, [history_end + timedelta(minutes=m, seconds=10) for m in minutes], profiles, measures
        )
    finally:
        spark.catalog.dropTempView("bench_changed_windows")
    _check_strategies_agree(spark, schema, measures)
    return timings


@dataclass(frozen=True)
class _PeerComparison:
    """A pipeline of the bench's own against dbt's microbatch computing the same rows (and, where
    `full_refresh` names a strategy, the same microbatch model over every batch since the start)."""

    ours: str  # the late_data model and its strategy name
    ours_strategy: str
    peer: str  # the microbatch model and its strategy name
    peer_strategy: str
    peer_partitioned_by: str
    peer_columns: str  # the peer model's columns, in its order: its table is first copied from ours
    columns: str  # compared between the two tables at the end
    batch: timedelta  # the microbatch model's batch size
    lookback: Callable[[BenchCell], timedelta]  # how far before the run microbatch recomputes
    full_refresh: str | None = None

    @property
    def strategies(self) -> tuple[str, ...]:
        return (self.ours_strategy, self.peer_strategy, *([self.full_refresh] if self.full_refresh else []))


DAILY_COMPARISON = _PeerComparison(
    ours=DAILY,
    ours_strategy=OURS_DAILY,
    peer=DAILY_MICROBATCH,
    peer_strategy=MICROBATCH_DAILY,
    peer_partitioned_by="window_start",
    peer_columns="window_start, location, reading_count, distinct_levels, is_final",
    columns="window_start, location, reading_count, distinct_levels, is_final",
    batch=timedelta(days=1),
    lookback=lambda cell: timedelta(seconds=cell.late_window_seconds) + timedelta(days=1),
)
SESSIONS_COMPARISON = _PeerComparison(
    ours=SESSIONS,
    ours_strategy=OURS_SESSIONS,
    peer=SESSIONS_MICROBATCH,
    peer_strategy=MICROBATCH_SESSIONS,
    peer_partitioned_by="partition_start",
    peer_columns="window_start, location, partition_start, window_end, reading_count, mean_value, is_final",
    columns="window_start, location, window_end, reading_count, round(mean_value, 9), is_final",
    batch=timedelta(hours=1),
    # Sessions that end within the late window and a gap of the run can still change; the peer
    # cannot know where they started, so it recomputes an hour more (the data's spells are 20
    # minutes; a longer session would show as a difference at the end).
    lookback=lambda cell: timedelta(seconds=cell.late_window_seconds + SESSION_GAP_SECONDS) + timedelta(hours=1),
    full_refresh=FULL_REFRESH_SESSIONS,
)


def _timed_against_peer(
    project: DbtProject,
    cell: BenchCell,
    feed: _Feed,
    run_times: list[datetime],
    profiles: dict[str, RunProfile],
    comparison: _PeerComparison,
) -> dict[str, list[_Timing]]:
    """The pipeline and its microbatch peer (_PeerComparison): built once from the same history
    (untimed), then at each of `run_times` a timed run of each, after an untimed one a minute
    earlier; their answers checked equal. `profiles` gets this project's last timed run."""
    spark, schema = project.spark, project.target_schema()
    # Fed up to the build's run time first: rows fed later but stamped before it by more than
    # write_delay_seconds would be written late (the raw data contract), which only a
    # reconciliation picks up, while microbatch reads whatever is there.
    built_at = run_times[0] - timedelta(minutes=2)
    feed.until(built_at)
    project.invoke(["run", "--select", comparison.ours], {"run_time": _stamp(built_at)})
    spark.sql(
        f"create table {schema}.{comparison.peer} using {project.environment.table_format}"
        f" partitioned by ({comparison.peer_partitioned_by})"
        f" as select {comparison.peer_columns} from {schema}.{comparison.ours}"
    )
    timings: dict[str, list[_Timing]] = {strategy: [] for strategy in comparison.strategies}
    tables = {comparison.ours_strategy: comparison.ours}
    previous = built_at
    for run_time in tqdm(run_times, desc=f"{comparison.ours} runs {cell}", unit="run", leave=False):
        for moment, timed in ((run_time - timedelta(minutes=1), False), (run_time, True)):
            feed.until(moment)
            for strategy in comparison.strategies:
                if strategy == comparison.full_refresh and not timed:
                    continue
                run = partial(_run_against_peer, project, cell, comparison, strategy, previous, moment)
                if timed:
                    timing, profile = _timed(project, f"{schema}.{tables.get(strategy, comparison.peer)}", run)
                    timings[strategy].append(timing)
                    if strategy == comparison.ours_strategy:
                        profiles[strategy] = profile
                    log.info("%s %s: %s", cell, strategy, timing)
                else:
                    run()
            previous = moment
    ours, peer = (
        spark.sql(f"select {comparison.columns} from {schema}.{table}") for table in (comparison.ours, comparison.peer)
    )
    differing = ours.exceptAll(peer).count() + peer.exceptAll(ours).count()
    if differing:
        raise RuntimeError(f"benchmark: {comparison.peer} differs from {comparison.ours} in {differing} rows")
    return timings


def _run_against_peer(
    project: DbtProject,
    cell: BenchCell,
    comparison: _PeerComparison,
    strategy: str,
    previous: datetime,
    run_time: datetime,
) -> None:
    at = {"run_time": _stamp(run_time)}
    if strategy == comparison.ours_strategy:
        project.invoke(["run", "--select", comparison.ours], at)
        return
    start = BENCH_ORIGIN if strategy == comparison.full_refresh else min(previous, run_time) - comparison.lookback(cell)
    project.invoke(
        [
            "run",
            "--select",
            comparison.peer,
            "--event-time-start",
            _stamp(floor_to(start, comparison.batch)),
            "--event-time-end",
            _stamp(ceil_to(run_time, comparison.batch)),
        ],
        at,
    )
