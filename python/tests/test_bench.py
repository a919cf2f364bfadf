"""The benchmark's smoke run: every strategy runs, agrees with the others, and reports from commit metadata."""

from __future__ import annotations

from typing import Any

from late_data.benchmarks import STRATEGIES, BenchCell, bench_cell, write_bench_outputs


def test_quick_benchmark_runs_every_strategy_on_the_same_answers(project: Any, tmp_path) -> None:
    # bench_cell raises if microbatch or the floor end with other windows than the product.
    results = bench_cell(project, BenchCell(locations=10, history_hours=2.1, lateness="heavy"), runs=2)
    by_strategy = {result.strategy: result for result in results}
    assert set(by_strategy) == set(STRATEGIES)
    assert all(result.median_s > 0 and result.runs == 2 for result in results)
    # Heavy lateness: each run changes windows in the two hourly partitions inside the late window;
    # a full refresh rewrites every partition (late rows of the first minutes reach the hour before).
    partitions = project.spark.sql(
        f"select count(distinct partition_start) from {project.target_schema()}.water_level_window_means"
    ).first()[0]
    assert by_strategy["changed_partitions"].partitions_rewritten == 2
    assert by_strategy["microbatch"].partitions_rewritten == 2
    assert by_strategy["full_refresh"].partitions_rewritten == partitions == 4
    assert by_strategy["microbatch"].files_rewritten > 0
    paths = write_bench_outputs(results, tmp_path, "test machine")
    assert [path.name for path in paths] == ["results.csv", "results.md", "results.png"]
    assert len(paths[0].read_text().splitlines()) == 1 + len(STRATEGIES)
    assert "| 10 | 2.1 | heavy |" in paths[1].read_text()
