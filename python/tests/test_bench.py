"""The benchmark's smoke run: every strategy runs, agrees with the others, and reports from commit metadata."""

from __future__ import annotations

from typing import Any

from late_data.benchmarks import HISTORY_SNAPSHOT, SCHEDULED_RUN, STRATEGIES, BenchCell, bench_cell, write_bench_outputs


def test_quick_benchmark_runs_every_strategy_on_the_same_answers(project: Any, tmp_path) -> None:
    # bench_cell raises if microbatch or the floor end with other windows than the product.
    results = bench_cell(project, BenchCell(locations=10, history_hours=2.1, lateness="sparse"), runs=2)
    by_strategy = {result.strategy: result for result in results}
    assert set(by_strategy) == {*STRATEGIES, SCHEDULED_RUN, HISTORY_SNAPSHOT}
    assert all(result.median_s > 0 and result.runs == 2 for result in results)
    # Sparse lateness: a run changes the newest partition and the one where a window became final;
    # microbatch rewrites every partition of its hourly batches, a full refresh every 10-minute
    # partition of the 2.1 hours of history and more.
    assert 1 <= by_strategy["changed_partitions"].partitions_rewritten < by_strategy["microbatch"].partitions_rewritten
    assert by_strategy["full_refresh"].partitions_rewritten >= 13 > by_strategy["microbatch"].partitions_rewritten
    assert by_strategy["microbatch"].files_rewritten > 0
    # The history snapshot writes only into the partitions the run checked, and is part of the run.
    assert 1 <= by_strategy[SCHEDULED_RUN].partitions_rewritten <= by_strategy["microbatch"].partitions_rewritten
    assert 0 < by_strategy[HISTORY_SNAPSHOT].median_s < by_strategy[SCHEDULED_RUN].median_s
    paths = write_bench_outputs(results, tmp_path, "test machine")
    assert [path.name for path in paths] == ["results.csv", "results.md", "results.png"]
    assert len(paths[0].read_text().splitlines()) == 1 + len(STRATEGIES) + 2
    assert "| 10 | 2.1 | sparse |" in paths[1].read_text()
