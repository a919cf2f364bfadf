"""The benchmark's smoke run: every strategy runs, agrees with the others, and reports from commit metadata."""

from __future__ import annotations

from typing import Any

from late_data.benchmarks import SCHEDULED_RUN, STRATEGIES, BenchCell, bench_cell, write_bench_outputs


def test_quick_benchmark_runs_every_strategy_on_the_same_answers(project: Any, tmp_path) -> None:
    # bench_cell raises if microbatch or the floor end with other windows than the product.
    results = bench_cell(project, BenchCell(locations=10, history_hours=2.1, lateness="sparse"), runs=2)
    by_strategy = {result.strategy: result for result in results}
    assert set(by_strategy) == {*STRATEGIES, SCHEDULED_RUN}
    assert all(result.median_s > 0 and result.runs == 2 for result in results)
    partitions = project.spark.sql(
        f"select count(distinct partition_start) from {project.target_schema()}.water_level_window_means"
    ).first()[0]
    # Sparse lateness: a run changes the newest partition and the one where a window became final;
    # microbatch rewrites every partition of its hourly batches, a full refresh all of them.
    assert 1 <= by_strategy["changed_partitions"].partitions_rewritten < by_strategy["microbatch"].partitions_rewritten
    assert by_strategy["full_refresh"].partitions_rewritten == partitions > by_strategy["microbatch"].partitions_rewritten
    assert by_strategy["microbatch"].files_rewritten > 0
    # The history snapshot writes only into the partitions the run checked.
    assert 1 <= by_strategy[SCHEDULED_RUN].partitions_rewritten <= by_strategy["microbatch"].partitions_rewritten
    paths = write_bench_outputs(results, tmp_path, "test machine")
    assert [path.name for path in paths] == ["results.csv", "results.md", "results.png"]
    assert len(paths[0].read_text().splitlines()) == 1 + len(STRATEGIES) + 1
    assert "| 10 | 2.1 | sparse |" in paths[1].read_text()
