"""`late-data bench`: the benchmark's command, which late_data's command line finds through the entry
point group late_data.commands (python/pyproject.toml), so late_data never imports the benchmark."""

from __future__ import annotations

import argparse
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from late_data.arguments import positive_int
from late_data.cli import writer_lock
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.delta_jars import delta_jars_unavailable
from late_data.runtime.environment import TABLE_FORMATS, ProjectEnvironment, prepare_environment
from late_data.runtime.settings import SetupError

if TYPE_CHECKING:
    from late_data_bench.cells import BenchCell


def add_parser(commands: Any) -> None:
    """The `bench` subcommand of late-data's parser (`commands`: its subparsers)."""
    bench = commands.add_parser(
        "bench", help="changed partitions vs microbatch vs full refresh vs a hand-written floor (resets the schemas)"
    )
    bench.add_argument("--quick", action="store_true", help="a small smoke matrix instead of the full one")
    bench.add_argument(
        "--cell",
        dest="cells",
        action="append",
        type=parse_cell,
        metavar="LOCATIONS:HOURS:LATENESS[:LATE_WINDOW_HOURS]",
        help="measure only these cells, e.g. 1000:2:heavy or 1000:25:sparse:24 (repeatable)",
    )
    bench.add_argument("--runs", type=positive_int, default=None, help="timed runs per cell (default: 5, quick: 2)")
    bench.add_argument(
        "--thrift",
        action="store_true",
        help="time only the whole scheduled run with dbt through the Thrift Server (LATE_DATA_TARGET=thrift,"
        " cluster up); default cell 100:2:heavy; adds thrift_whole_run rows, keeps the others",
    )
    bench.add_argument(
        "--whole-run-only",
        action="store_true",
        help="time only this project's whole scheduled run (no microbatch, floor, full refresh or plain dbt):"
        " for cells too large to measure every strategy of, e.g. 100000:2:heavy",
    )
    bench.add_argument(
        "--soak",
        type=positive_int,
        default=None,
        metavar="RUNS",
        help="instead of the matrix: RUNS consecutive one-minute scheduled runs of one cell (default 100:2:heavy)"
        " with the scheduler's upkeep, each run's seconds, files and metadata into soak_<cell>.csv/.md/.png",
    )
    bench.add_argument(
        "--check-cost",
        action="store_true",
        help="instead of the matrix: late-data check's seconds and peak driver memory (2 GB driver) on the example"
        " project after 26 runs and on the 1000:2:sparse cell, into check_cost.csv/.md",
    )
    bench.add_argument(
        "--plain-dbt-steps",
        action="store_true",
        help="instead of the matrix: a plain dbt build of the example's meter pipeline in a new process per run,"
        " step by step (session start, parse, hooks, model, snapshot), into plain_dbt_steps.csv/.md",
    )
    bench.add_argument(
        "--cron-soak",
        type=positive_int,
        default=None,
        metavar="RUNS",
        help="instead of the matrix: RUNS plain dbt builds of the example's meter pipeline, a new process per"
        " simulated minute as the docs' crontab runs them (maintenance every 60), each step's seconds and reads,"
        " into cron_soak.csv/.md/.png",
    )
    bench.add_argument(
        "--package",
        type=Path,
        default=None,
        help="with --cron-soak: the late_data package to install (default this checkout's), e.g. another"
        " checkout's to measure before a change",
    )
    bench.add_argument(
        "--table-format",
        choices=TABLE_FORMATS,
        default=None,
        help="measure on this table format (default: LATE_DATA_TABLE_FORMAT); delta is skipped, with the reason,"
        " where Delta's jars cannot be had (DELTA_JARS, Spark's Ivy cache or LATE_DATA_DELTA_MAVEN=1)",
    )
    bench.add_argument("--out", type=Path, default=Path("bench"), help="directory for results.csv/.md/.png")
    bench.set_defaults(command_function=bench_command)


def memory_gib() -> int:
    """This machine's memory, for the benchmark's header line."""
    return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30)


def parse_cell(text: str) -> BenchCell:
    """A bench cell; the benchmark package is imported only when --cell is given."""
    from late_data_bench.cells import BENCH_LATENESS
    from late_data_bench.cells import parse_cell as parse_bench_cell

    try:
        return parse_bench_cell(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a cell: use LOCATIONS:HOURS:LATENESS[:LATE_WINDOW_HOURS] with lateness in"
            f" {sorted(BENCH_LATENESS)}"
        ) from None


def bench_command(args: argparse.Namespace) -> int:
    """The table format is set before the environment is prepared, and Delta cells end early with
    the reason where Delta's jars cannot be had: `make bench` runs them on every machine."""
    if args.table_format:
        # The format picks the profile target and the models' file_format for this process.
        reason = delta_jars_unavailable() if args.table_format == "delta" else None
        if reason is not None:
            print(f"bench: Delta cells skipped: {reason}")
            return 0
        os.environ["LATE_DATA_TABLE_FORMAT"] = args.table_format
    if args.cron_soak:
        from late_data_bench.cron_soak import run_cron_soak

        for path in run_cron_soak(args.out, args.cron_soak, args.package):
            print(f"wrote {path}")
        return 0
    if args.plain_dbt_steps:
        from late_data_bench.plain_dbt_steps import run_plain_dbt_steps

        for path in run_plain_dbt_steps(args.out, args.runs or 5):
            print(f"bench: wrote {path}")
        return 0
    if args.check_cost:
        from late_data_bench.check_cost import run_check_cost

        # Each build and check runs in a process and a LATE_DATA_HOME of its own.
        for path in run_check_cost(args.out):
            print(f"bench: wrote {path}")
        return 0
    from late_data_bench.benchmarks import run_bench

    environment = prepare_environment()
    # On a shared catalog, the schema's writer lock for the whole bench (its cells run in processes
    # of their own, which take no lock of their own).
    lock = writer_lock(environment, "bench")
    hardware = (
        f"{os.cpu_count()} cores, {memory_gib()} GiB, Spark local[*], {environment.table_format.capitalize()} tables"
    )
    # Every row and profile of the bench carries its date; this sentence says why they must.
    machine = f"On {hardware}. This machine's speed moves by up to 2x between days: compare medians of one date only."
    cells = tuple(args.cells) if args.cells else None
    try:
        if args.soak:
            return soak_command(
                environment, cells, args.soak, args.out, f"Measured {datetime.now(UTC):%Y-%m-%d} on {hardware}."
            )
        for path in run_bench(
            args.out,
            machine,
            cells,
            args.runs,
            quick=args.quick,
            thrift=args.thrift,
            whole_run_only=args.whole_run_only,
        ):
            print(f"bench: wrote {path}")
    finally:
        if lock is not None:
            lock.close()
    return 0


def soak_command(
    environment: ProjectEnvironment, cells: tuple[BenchCell, ...] | None, runs: int, out: Path, machine: str
) -> int:
    """The soak cell, in this process, with the scheduler's default upkeep, its maintenance keeping the soak's snapshot retention."""
    from late_data_bench.cells import BenchCell
    from late_data_bench.soak import SOAK_UPKEEP, run_soak

    if cells is not None and len(cells) != 1:
        raise SetupError("--soak measures one cell: give at most one --cell")
    cell = cells[0] if cells else BenchCell(100, 2, "heavy")
    project = DbtProject(environment)
    try:
        for path in run_soak(project, cell, runs, out, SOAK_UPKEEP, machine):
            print(f"bench: wrote {path}")
    finally:
        project.close()
    return 0
