"""What `make bench` writes: bench/results.csv, its Markdown table with each cell's profile, and its
plots, each row and figure carrying its date."""

from __future__ import annotations

import itertools
from dataclasses import asdict
from pathlib import Path
from typing import Any

from late_data_bench.cells import (
    FULL_REFRESH_SESSIONS,
    HISTORY_SNAPSHOT,
    MICROBATCH_DAILY,
    MICROBATCH_PERCENTILES,
    MICROBATCH_SESSIONS,
    OURS,
    OURS_DAILY,
    OURS_EXTREMES,
    OURS_PERCENTILES,
    OURS_SESSIONS,
    PLAIN_DBT_THRIFT_WHOLE_RUN,
    PLAIN_DBT_WHOLE_RUN,
    STRATEGIES,
    THRIFT_STRATEGIES,
    THRIFT_WHOLE_RUN,
    WHOLE_RUN,
    BenchCell,
    BenchResult,
    CellMeasurement,
)
from late_data_bench.profile import profile_lines


def write_bench_outputs(
    measurements: list[CellMeasurement],
    out_dir: Path,
    machine: str,
    keep_other_cells: bool = False,
    thrift_results: tuple[BenchResult, ...] = (),
) -> list[Path]:
    """bench/results.csv, bench/results.md (table and ratios), bench/results.png and
    bench/profile.md (where this project's runs spend their time). With `keep_other_cells`, the
    rows of cells not measured now stay as results.csv had them (re-measuring some cells).
    `thrift_results` replace the `thrift_whole_run` rows of their cells; other rows stay."""
    import csv

    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, md_path, png_path = out_dir / "results.csv", out_dir / "results.md", out_dir / "results.png"
    results = [result for measurement in measurements for result in measurement.results]
    if (keep_other_cells or thrift_results) and csv_path.exists():
        measured = {measurement.cell.key for measurement in measurements if measurement.every_strategy}
        replaced = {(*result.cell_key, result.strategy) for result in (*results, *thrift_results)}
        results = [
            result
            for result in _read_results(csv_path)
            # A cell measured again keeps its thrift rows, which `--thrift` measures on its own.
            if (result.cell_key not in measured or result.strategy in THRIFT_STRATEGIES)
            and (*result.cell_key, result.strategy) not in replaced
        ] + results
    results += thrift_results
    results.sort(key=lambda result: result.cell_key)
    with csv_path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(BenchResult.__dataclass_fields__))
        writer.writeheader()
        writer.writerows(asdict(result) for result in results)
    cells = sorted({r.cell_key for r in results if r.strategy in (OURS, WHOLE_RUN)})
    by_key = {(*r.cell_key, r.strategy): r for r in results}
    lines = [
        f"# Benchmark: this project against the alternatives\n\n{machine}\n",
        "Median seconds per warm run (one Spark session). Per cell, the four ways to keep"
        " `water_level_window_means` right ran on the same data and run times, one dbt invocation each"
        " (the floor: one Spark statement): `late_data` (load the versions that arrived, then the means"
        " model), dbt's `microbatch` over the late window, a full refresh from raw, and the floor. Then"
        " `whole run`: this project's whole scheduled run (versions, means, too-late listing, history"
        " snapshot, audit) on the following minutes, with the snapshot's share of it; `plain dbt`: the"
        " same run as cron makes it, `dbt build` in a new process each time (JVM start included, dbt's"
        " partial parse from the run before kept); `thrift whole run`: with dbt through the local"
        " cluster's Spark Thrift Server from the warm scheduler (`late-data bench --thrift`), and"
        " `plain thrift`: that run as cron makes it on the thrift target. `-`: not measured (the runs"
        " table says how many runs each median has), or a ratio of medians measured on different days."
        " `measured`: the UTC dates of the row's medians; re-measuring some cells, or only a cell's whole"
        " run (`--whole-run-only`), keeps the other medians with their dates.\n",
        "| locations | history h | late window h | lateness | late_data | microbatch | full refresh | floor"
        " | ours / microbatch | ours / floor | whole run | whole / floor | of which history | plain dbt whole run"
        " | plain / warm | thrift whole run | thrift / embedded | plain thrift whole run | plain thrift / thrift"
        " | measured |",
        "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]

    def median(cell: tuple[Any, ...], strategy: str) -> BenchResult | None:
        return by_key.get((*cell, strategy))

    def shown(result: BenchResult | None) -> str:
        return "-" if result is None else f"{result.median_s:.2f}"

    def ratio(numerator: BenchResult | None, denominator: BenchResult | None) -> str:
        """`-` also for medians of different days: this machine's speed moves by up to 2x between them."""
        if numerator is None or denominator is None or not denominator.median_s:
            return "-"
        if numerator.measured_on != denominator.measured_on:
            return "-"
        return f"{numerator.median_s / denominator.median_s:.2f}"

    def measured_on(cell: tuple[Any, ...]) -> str:
        """The dates of a cell's rows: two where some of its strategies were measured again."""
        return ", ".join(sorted({r.measured_on for r in results if r.cell_key == cell and r.measured_on})) or "-"

    for cell in cells:
        ours, micro, full, floor, whole, history, plain, thrift, plain_thrift = (
            median(cell, strategy)
            for strategy in (
                *STRATEGIES,
                WHOLE_RUN,
                HISTORY_SNAPSHOT,
                PLAIN_DBT_WHOLE_RUN,
                THRIFT_WHOLE_RUN,
                PLAIN_DBT_THRIFT_WHOLE_RUN,
            )
        )
        lines.append(
            f"| {cell[0]:,} | {cell[1]:g} | {cell[3]:g} | {cell[2]} | {shown(ours)} | {shown(micro)} | {shown(full)}"
            f" | {shown(floor)} | {ratio(ours, micro)} | {ratio(ours, floor)} | {shown(whole)} | {ratio(whole, floor)}"
            f" | {shown(history)} | {shown(plain)} | {ratio(plain, whole)} | {shown(thrift)} | {ratio(thrift, whole)}"
            f" | {shown(plain_thrift)} | {ratio(plain_thrift, thrift)} | {measured_on(cell)} |"
        )

    def peer_table(text: str, columns: dict[str, str], ratios: dict[str, tuple[str, str]]) -> list[str]:
        """A section of one pipeline against its peers: `columns` {heading: strategy}, `ratios`
        {heading: (numerator strategy, denominator strategy)}; nothing when none was measured."""
        peer_cells = sorted({r.cell_key for r in results if r.strategy in columns.values()})
        if not peer_cells:
            return []
        headings = [*columns, *ratios]
        section = [
            "",
            text,
            "",
            "| locations | history h | late window h | lateness | " + " | ".join(headings) + " |",
            "|---:|---:|---:|---|" + "---:|" * len(headings),
        ]
        for cell in peer_cells:
            shown_columns = [shown(median(cell, strategy)) for strategy in columns.values()]
            shown_ratios = [ratio(median(cell, top), median(cell, bottom)) for top, bottom in ratios.values()]
            section.append(
                f"| {cell[0]:,} | {cell[1]:g} | {cell[3]:g} | {cell[2]} | "
                + " | ".join(shown_columns + shown_ratios)
                + " |"
            )
        return section

    lines += peer_table(
        "Measures no checksum updates, on the same readings and run times (median seconds per warm run):"
        " `late_data percentiles` keeps the median and 95th percentile per location and minute, recomputing"
        " only the windows whose versions changed; `microbatch percentiles` computes the same percentiles"
        " over every hourly batch of the late window; `late_data min/max` keeps the minimum and maximum.",
        {
            "late_data percentiles": OURS_PERCENTILES,
            "microbatch percentiles": MICROBATCH_PERCENTILES,
            "late_data min/max": OURS_EXTREMES,
        },
        {"ours / microbatch": (OURS_PERCENTILES, MICROBATCH_PERCENTILES)},
    )
    lines += peer_table(
        "Long windows (median seconds per warm run): distinct water levels per location and day, 48-hour late"
        " window; `late_data` updates each day's distinct count from the values that arrived, `microbatch`"
        " recomputes every daily batch of the late window.",
        {"late_data": OURS_DAILY, "microbatch": MICROBATCH_DAILY},
        {"ours / microbatch": (OURS_DAILY, MICROBATCH_DAILY)},
    )
    lines += peer_table(
        "Sessions (median seconds per warm run): each location's water levels in sessions with a 2-minute"
        " gap, readings sent 20 minutes on, 20 off; heavy: one reading in ten sent late again within the"
        " late window, sparse: one in a hundred, long-tailed. `late_data` recomputes the sessions that"
        " end within the late window and a gap of the run, read from their stored starts; `microbatch`"
        " recomputes every hourly batch of the late window, a gap and one hour more (it cannot know where"
        " a session that can still change started), each batch read from one gap before it to the run"
        " time; `full refresh`: the same microbatch model over every batch since the start.",
        {"late_data": OURS_SESSIONS, "microbatch": MICROBATCH_SESSIONS, "full refresh": FULL_REFRESH_SESSIONS},
        {
            "ours / microbatch": (OURS_SESSIONS, MICROBATCH_SESSIONS),
            "ours / full refresh": (OURS_SESSIONS, FULL_REFRESH_SESSIONS),
        },
    )
    lines += [
        "",
        "Partitions, files and rows written per run (medians, from the table format's commit metadata;"
        " `late_data` and `full_refresh` partitions are time partition x location bucket, the peers' time"
        " partitions only; for `whole_run` and `history_snapshot`, the history table), and runs measured:",
        "",
        "| locations | history h | late window h | lateness | strategy | runs | partitions | files | rows |",
        "|---:|---:|---:|---|---|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r.locations:,} | {r.history_hours:g} | {r.late_window_hours:g} | {r.lateness} | {r.strategy} | {r.runs}"
        f" | {r.partitions_rewritten:g} | {r.files_rewritten:g} | {r.rows_written:,.0f} |"
        for r in results
    ]
    md_path.write_text("\n".join(lines) + "\n\n![medians](results.png)\n")
    _plot_bench(by_key, cells, png_path)
    profile_path = out_dir / "profile.md"
    kept = keep_other_cells or bool(thrift_results)
    kept_sections = _other_cells_profile_sections(profile_path, measurements) if kept else []
    profile_path.write_text(_profile_markdown(measurements, machine, kept_sections))
    return [csv_path, md_path, png_path, profile_path]


def _read_results(csv_path: Path) -> list[BenchResult]:
    import csv

    with csv_path.open(newline="") as handle:
        return [
            BenchResult(
                locations=int(row["locations"]),
                history_hours=float(row["history_hours"]),
                lateness=row["lateness"],
                late_window_hours=float(row["late_window_hours"]),
                strategy=row["strategy"],
                runs=int(row["runs"]),
                median_s=float(row["median_s"]),
                partitions_rewritten=float(row["partitions_rewritten"]),
                files_rewritten=float(row["files_rewritten"]),
                rows_written=float(row["rows_written"]),
                measured_on=row.get("measured_on") or "",
            )
            for row in csv.DictReader(handle)
        ]


def _profile_heading(cell: BenchCell) -> str:
    return f"## {cell}: "


def _other_cells_profile_sections(profile_path: Path, measurements: list[CellMeasurement]) -> list[str]:
    """The sections of an existing profile.md whose cell and strategy were not profiled now (a cell's
    whole run measured alone keeps the profile of its means)."""
    if not profile_path.exists():
        return []
    profiled = {
        f"{_profile_heading(measurement.cell)}{strategy}"
        for measurement in measurements
        for strategy in measurement.profiles
    }
    sections = ["## " + section.strip() + "\n" for section in profile_path.read_text().split("\n## ")[1:]]
    return [section for section in sections if section.splitlines()[0] not in profiled]


def _profile_markdown(measurements: list[CellMeasurement], machine: str, kept_sections: list[str]) -> str:
    lines = [
        f"# Where the time goes\n\n{machine}\n",
        "The last timed run of each cell, per kind of statement: wall seconds from a statement's start"
        " to dbt's next event (fetching its result included), from dbt's structured events (the records"
        " of its JSON log: SQLQuery, SQLQueryStatus); Spark jobs from"
        " Spark's job tracker. `late_data` loads the versions that arrived and runs the means model;"
        " `whole_run` is the whole scheduled run (versions, means, too-late listing, history snapshot,"
        " audit); `late_data_percentiles`, `late_data_extremes` and `late_data_daily_distinct`: the bench's"
        " percentile, min/max and daily distinct-count pipelines, where measured.\n",
        *kept_sections,
    ]
    for measurement in measurements:
        cell = measurement.cell
        measured_on = {result.strategy: result.measured_on for result in measurement.results}
        for strategy, profile in measurement.profiles.items():
            lines += [
                f"{_profile_heading(cell)}{strategy}\n",
                f"Measured {measured_on.get(strategy) or 'on an unrecorded date'}.\n",
                *profile_lines(profile.events, profile.spark_jobs),
                "",
            ]
    return "\n".join(lines)


def plot_lines(
    by_key: dict[tuple[Any, ...], BenchResult], cells: list[tuple[int, float, str, float]], lateness: str
) -> list[tuple[int, str, str, list[tuple[int, float]]]]:
    """(strategy number, strategy, date, [(series, median s)]) for each line of a lateness's panel:
    the 1 h late window's cells, one line per strategy and measurement date (this machine's speed
    drifts between days, so a line joins only medians of one date)."""
    growth = sorted(cell for cell in cells if cell[2] == lateness and cell[3] == 1.0 and cell[1] <= 2)
    dates = sorted({result.measured_on for result in by_key.values()})
    lines = []
    for (number, strategy), date in itertools.product(enumerate((*STRATEGIES, WHOLE_RUN, PLAIN_DBT_WHOLE_RUN)), dates):
        results = [(cell[0], by_key.get((*cell, strategy))) for cell in growth]
        points = [(series, result.median_s) for series, result in results if result and result.measured_on == date]
        if points:
            lines.append((number, strategy, date, points))
    return lines


def _plot_bench(
    by_key: dict[tuple[Any, ...], BenchResult], cells: list[tuple[int, float, str, float]], path: Path
) -> None:
    """How each strategy's median grows with the number of series, at a 1 h late window: one panel
    per lateness, log-log; a strategy keeps its colour, the newest date is drawn solid."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    newest = max((result.measured_on for result in by_key.values()), default="")
    for axis, lateness in zip(axes, ("heavy", "sparse"), strict=True):
        for number, strategy, date, points in plot_lines(by_key, cells, lateness):
            axis.plot(
                *zip(*points, strict=True),
                marker="o",
                color=f"C{number}",
                linestyle="-" if date == newest else ":",
                label=f"{strategy} ({date or 'undated'})",
            )
        axis.set(xscale="log", yscale="log", xlabel="series (locations)", title=f"{lateness} lateness, 1 h late window")
        axis.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("median seconds per run")
    if axes[0].get_lines():
        axes[0].legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)
