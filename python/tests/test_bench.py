"""The benchmark's smoke run: every strategy runs, agrees with the others, and reports from commit metadata."""

from __future__ import annotations

from typing import Any

import pytest

from late_data_bench.benchmarks import bench_cell
from late_data_bench.cells import (
    HISTORY_SNAPSHOT,
    OURS,
    PLAIN_DBT_THRIFT_WHOLE_RUN,
    STRATEGIES,
    THRIFT_WHOLE_RUN,
    WHOLE_RUN,
    BenchCell,
    BenchResult,
    CellMeasurement,
    RunProfile,
)
from late_data_bench.outputs import plot_lines, write_bench_outputs
from late_data_bench.soak import SOAK_UPKEEP, SoakRun, read_soak_runs, summarize, write_soak_outputs


def test_quick_benchmark_runs_every_strategy_on_the_same_answers(project: Any, tmp_path) -> None:
    # bench_cell raises if microbatch or the floor end with other windows than the product.
    measurement = bench_cell(project, BenchCell(locations=10, history_hours=2.1, lateness="sparse"), runs=1)
    results = measurement.results
    by_strategy = {result.strategy: result for result in results}
    assert set(by_strategy) == {*STRATEGIES, WHOLE_RUN, HISTORY_SNAPSHOT}
    assert all(result.median_s > 0 and result.runs == 1 for result in results)
    # Sparse lateness: this project rewrites the location buckets of the newest partition and of the
    # one where windows became final, a fraction of the rows microbatch rewrites (every partition
    # of its hourly batches); a full refresh rewrites every partition of the 2.1 hours of history.
    assert 1 <= by_strategy[OURS].rows_written < by_strategy["microbatch"].rows_written
    assert by_strategy["full_refresh"].partitions_rewritten >= 13
    assert by_strategy["microbatch"].files_rewritten > 0
    # The history snapshot writes only the versions of changed windows, and is part of the run.
    assert 1 <= by_strategy[WHOLE_RUN].rows_written <= by_strategy[OURS].rows_written * 2
    assert 0 < by_strategy[HISTORY_SNAPSHOT].median_s < by_strategy[WHOLE_RUN].median_s
    paths = write_bench_outputs([measurement], tmp_path, "test machine")
    assert [path.name for path in paths] == ["results.csv", "results.md", "results.png", "profile.md"]
    assert len(paths[0].read_text().splitlines()) == 1 + len(STRATEGIES) + 2
    assert "| 10 | 2.1 | 1 | sparse |" in paths[1].read_text()
    # Where the time went, from dbt's events: the means model's query and its write are there.
    profile = paths[3].read_text()
    assert "compute and stage: water_level_window_means | 1 |" in profile
    assert "write: replace partitions of analytics.water_level_window_means | 1 |" in profile
    assert all(measurement.profiles[strategy].spark_jobs > 0 for strategy in measurement.profiles)


def test_remeasured_cells_replace_only_their_own_rows(tmp_path) -> None:
    def measurement(locations: int, seconds: float) -> CellMeasurement:
        cell = BenchCell(locations=locations, history_hours=2, lateness="heavy")
        results = [
            BenchResult(locations, 2, "heavy", 1.0, strategy, 3, seconds, 1, 2, 3)
            for strategy in (*STRATEGIES, WHOLE_RUN, HISTORY_SNAPSHOT)
        ]
        return CellMeasurement(cell, results, {OURS: RunProfile([], spark_jobs=locations)})

    write_bench_outputs([measurement(100, 1.0), measurement(1_000, 2.0)], tmp_path, "test machine")
    write_bench_outputs([measurement(1_000, 3.0)], tmp_path, "test machine", keep_other_cells=True)
    rows = (tmp_path / "results.csv").read_text().splitlines()[1:]
    assert {(row.split(",")[0], row.split(",")[6]) for row in rows} == {("100", "1.0"), ("1000", "3.0")}
    assert len(rows) == 2 * (len(STRATEGIES) + 2)
    profile = (tmp_path / "profile.md").read_text()
    assert profile.count("## 100 locations") == 1 and profile.count("## 1,000 locations") == 1
    write_bench_outputs([measurement(1_000, 3.0)], tmp_path, "test machine")
    assert "| 100 |" not in (tmp_path / "results.md").read_text()


def test_a_whole_run_only_cell_writes_its_whole_run_and_no_peer(tmp_path) -> None:
    """`late-data bench --whole-run-only` (the 100,000-location cell): its rows are the whole run and
    the history's share; the tables show no ratio to peers that were not measured."""
    cell = BenchCell(locations=100_000, history_hours=2, lateness="heavy")
    results = [
        BenchResult(100_000, 2, "heavy", 1.0, strategy, 1, 50.0, 1, 2, 3) for strategy in (WHOLE_RUN, HISTORY_SNAPSHOT)
    ]
    paths = write_bench_outputs([CellMeasurement(cell, results, {})], tmp_path, "test machine")
    rows = paths[0].read_text().splitlines()[1:]
    assert [row.split(",")[4] for row in rows] == [WHOLE_RUN, HISTORY_SNAPSHOT]
    assert "| 100,000 | 2 | 1 | heavy | - | - | - | - | - | - | 50.00 | - | 50.00 | - |" in paths[1].read_text()


def test_a_whole_run_only_remeasure_keeps_the_peers_with_their_date(tmp_path) -> None:
    """Re-measuring only a cell's whole run replaces its whole-run rows and keeps the peers measured
    before, each row with its own date, both dates on the cell's line."""
    cell = BenchCell(locations=100_000, history_hours=2, lateness="heavy")

    def results(strategies: tuple[str, ...], seconds: float, day: str) -> list[BenchResult]:
        return [BenchResult(100_000, 2, "heavy", 1.0, s, 1, seconds, 1, 2, 3, day) for s in strategies]

    every = results((*STRATEGIES, WHOLE_RUN, HISTORY_SNAPSHOT), 90.0, "2026-11-26")
    profiles = {OURS: RunProfile([], spark_jobs=1), WHOLE_RUN: RunProfile([], spark_jobs=1)}
    write_bench_outputs([CellMeasurement(cell, every, profiles)], tmp_path, "test machine")
    whole = results((WHOLE_RUN, HISTORY_SNAPSHOT), 50.0, "2026-11-27")
    paths = write_bench_outputs(
        [CellMeasurement(cell, whole, {WHOLE_RUN: RunProfile([], spark_jobs=2)}, every_strategy=False)],
        tmp_path,
        "test machine",
        keep_other_cells=True,
    )
    # The means' profile stays; the whole run's is the new one.
    profile = paths[3].read_text()
    assert profile.count(f"heavy, 1 h late window: {OURS}\n") == 1
    assert profile.count(f"heavy, 1 h late window: {WHOLE_RUN}\n") == 1 and "2 Spark jobs" in profile
    assert f"{OURS}\n\nMeasured 2026-11-26." in profile and f"{WHOLE_RUN}\n\nMeasured 2026-11-27." in profile
    rows = {row.split(",")[4]: row.split(",") for row in paths[0].read_text().splitlines()[1:]}
    assert set(rows) == {*STRATEGIES, WHOLE_RUN, HISTORY_SNAPSHOT}
    assert (rows[OURS][6], rows[OURS][10]) == ("90.0", "2026-11-26")
    assert (rows[WHOLE_RUN][6], rows[WHOLE_RUN][10]) == ("50.0", "2026-11-27")
    # Ratios within a day only: the whole run against the floor of the day before is not one.
    assert "| 90.00 | 90.00 | 90.00 | 90.00 | 1.00 | 1.00 | 50.00 | - | 50.00 |" in paths[1].read_text()
    assert "| 2026-11-26, 2026-11-27 |" in paths[1].read_text()


def test_a_plot_line_joins_only_medians_of_one_date() -> None:
    """results.png: a strategy measured on two dates is two lines, each through its own date's
    medians, so no line draws one day's speed against another's."""
    rows = [
        BenchResult(1_000, 2, "heavy", 1.0, OURS, 1, 4.0, 1, 2, 3, "2026-11-26"),
        BenchResult(10_000, 2, "heavy", 1.0, OURS, 1, 9.0, 1, 2, 3, "2026-11-26"),
        BenchResult(100_000, 2, "heavy", 1.0, OURS, 1, 50.0, 1, 2, 3, "2026-11-27"),
        BenchResult(1_000, 24, "heavy", 1.0, OURS, 1, 5.0, 1, 2, 3, "2026-11-27"),  # not a 1 h growth cell
    ]
    by_key = {(*row.cell_key, row.strategy): row for row in rows}
    lines = plot_lines(by_key, sorted({row.cell_key for row in rows}), "heavy")
    assert [(strategy, date, points) for _, strategy, date, points in lines] == [
        (OURS, "2026-11-26", [(1_000, 4.0), (10_000, 9.0)]),
        (OURS, "2026-11-27", [(100_000, 50.0)]),
    ]
    assert plot_lines(by_key, sorted({row.cell_key for row in rows}), "sparse") == []


def test_thrift_rows_join_their_cell_with_plain_dbt_beside_the_warm_run(tmp_path) -> None:
    """`late-data bench --thrift`: the warm scheduler's and plain dbt's whole runs on the thrift
    target replace their own rows and keep the embedded ones; the table divides plain by warm."""
    cell = BenchCell(locations=100, history_hours=2, lateness="heavy")
    embedded = [BenchResult(100, 2, "heavy", 1.0, WHOLE_RUN, 3, 4.0, 1, 2, 3)]
    write_bench_outputs([CellMeasurement(cell, embedded, {})], tmp_path, "test machine")
    thrift = (
        BenchResult(100, 2, "heavy", 1.0, THRIFT_WHOLE_RUN, 3, 5.0, 0, 0, 0),
        BenchResult(100, 2, "heavy", 1.0, PLAIN_DBT_THRIFT_WHOLE_RUN, 3, 9.0, 0, 0, 0),
    )
    paths = write_bench_outputs([], tmp_path, "test machine", thrift_results=thrift)
    rows = paths[0].read_text().splitlines()[1:]
    assert sorted(row.split(",")[4] for row in rows) == sorted(
        [WHOLE_RUN, THRIFT_WHOLE_RUN, PLAIN_DBT_THRIFT_WHOLE_RUN]
    )
    assert "| 4.00 | - | - | - | - | 5.00 | 1.25 | 9.00 | 1.80 |" in paths[1].read_text()
    # Measuring the cell again on the embedded target keeps its thrift rows.
    write_bench_outputs([CellMeasurement(cell, embedded, {})], tmp_path, "test machine", keep_other_cells=True)
    assert "| 5.00 | 1.25 | 9.00 | 1.80 |" in paths[1].read_text()


def test_a_soak_summary_compares_the_last_hundred_runs_with_runs_100_to_200(tmp_path) -> None:
    """`late-data bench --soak`: the median of the last 100 runs over the median of runs 100 to 200,
    reconciliation runs left out of both; files and metadata as the most of each stretch; the
    runs survive a round trip through the CSV a long soak rewrites every 50 runs."""
    cell = BenchCell(locations=100, history_hours=2, lateness="heavy")

    def run(number: int) -> SoakRun:
        seconds = 2.0 if number <= 200 else 2.4  # a 1.2x slowdown after run 200
        return SoakRun(
            run=number,
            run_time=f"2026-06-01 {number // 60:02d}:{number % 60:02d}:10",
            seconds=60.0 if number % 60 == 0 else seconds,
            snapshot_seconds=1.0,
            reconciliation=number % 60 == 0,
            maintenance_seconds=5.0 if number % 60 == 0 else 0.0,
            history_data_files=20,
            history_delete_files=0,
            means_data_files=10,
            means_delete_files=0,
            data_files=100 + number,
            metadata_bytes=1_000 * number,
        )

    measured = [run(number) for number in range(1, 401)]
    summary = summarize(measured)
    assert (summary.baseline_median_s, summary.tail_median_s) == (2.0, 2.4)
    assert round(summary.ratio, 2) == 1.2
    assert (summary.baseline_max_files, summary.tail_max_files) == (300, 500)
    assert (summary.baseline_max_metadata_bytes, summary.tail_max_metadata_bytes) == (200_000, 400_000)
    paths = write_soak_outputs(measured, cell, tmp_path, "test machine", SOAK_UPKEEP)
    assert [path.name for path in paths] == ["soak_100_heavy.csv", "soak_100_heavy.md", "soak_100_heavy.png"]
    assert read_soak_runs(paths[0]) == measured
    table = paths[1].read_text()
    assert "| 2.00 | 2.40 | 1.20x (target at most 1.1x: not met) |" in table
    assert "Reconciliations: 6, median 60.00 s. Maintenance: 6 times, median 5.00 s" in table
    assert "| 301 to 400 | 2.40 | 1.00 | 20 | 10 | 500 | 0.4 |" in table
    assert "Reconciliation every 60 runs, maintenance every 60 runs keeping 15 minutes of table snapshots" in table
    with pytest.raises(ValueError, match="at least 300 runs"):
        summarize(measured[:299])


def test_a_cron_soak_projects_each_steps_slope_leaving_the_maintained_runs_out(tmp_path) -> None:
    """`late-data bench --cron-soak`: a step that grows by 0.01 s a run is projected to 1,440 and
    43,200 runs from its slope; a flat step stays at 1.0x however slow the runs that paid
    maintenance were; maintenance is reported per pass and spread over the runs."""
    from late_data_bench.cron_soak import STEPS, projection, write_outputs

    runs = []
    for number in range(1, 31):
        steps = {step: 1.0 for step in STEPS}
        steps["model"] = 2.0 + 0.01 * number
        steps["maintenance"] = 6.0 if number % 10 == 0 else 0.0
        steps["snapshot"] = 9.0 if number % 10 == 0 else 1.0  # a maintained run, slow in every step
        steps["total"] = sum(steps[step] for step in STEPS)
        steps["total_with_maintenance"] = steps["total"] + steps["maintenance"]
        runs.append({**steps, "nodes": {}, "scans": {}})
    slope, day, month = projection(runs, "model", maintain_every=10)
    baseline = 2.06  # runs 2-11 but the 10th: the median of 2.02 ... 2.09 and 2.11
    assert slope == pytest.approx(0.01)
    assert day == pytest.approx((2.0 + 0.01 * 1440) / baseline, rel=1e-3)
    assert month == pytest.approx((2.0 + 0.01 * 43200) / baseline, rel=1e-3)
    assert projection(runs, "snapshot", maintain_every=10) == pytest.approx((0.0, 1.0, 1.0))
    faster = [{**steps, "tests": 2.0 - 0.01 * number} for number, steps in enumerate(runs, start=1)]
    assert projection(faster, "tests", maintain_every=10)[1:] == (1.0, 1.0)
    summary = write_outputs(runs, tmp_path, None, maintain_every=10)[1].read_text()
    assert "Maintenance: 3 passes, median 6.00 s, 0.60 s a run" in summary
    assert "| model | +1.000 |" in summary and "| snapshot | +0.000 | 1.00 | 1.00 |" in summary
