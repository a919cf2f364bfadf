"""`make mutants`: the suite's strength, measured. Each mutant in mutants.yml is one small fault in
the product (a `<=` made `<`, a key dropped from a join, a switch made in the wrong order), with the
tests that should catch it. For each, one at a time: a copy of the checkout with the fault in it,
those tests run on the copy (pytest, no xdist), and the verdict: killed (by which test, and how it
failed), survived (every named test passed) or broken (the fault's text is no longer in its file:
the mutant needs updating). Two mutants run at once, each its own pytest and Spark.

A mutant's tests are the proof that the suite still catches that fault: the list of killed mutants
is the baseline any change of the suite must keep (docs/testing.md).

    python python/tests/mutants.py [--only ID ...] [--jobs 2] [--report mutants.md]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

import yaml

CHECKOUT = Path(__file__).resolve().parents[2]
MUTANTS = Path(__file__).with_name("mutants.yml")
TIMEOUT_SECONDS = 40 * 60


@dataclass(frozen=True)
class Mutant:
    id: str
    area: str
    what: str
    file: str
    find: str
    replace: str
    tests: tuple[str, ...]


@dataclass(frozen=True)
class Verdict:
    mutant: Mutant
    outcome: str  # killed, survived, broken, timeout
    killed_by: str | None
    detail: str
    seconds: float


def load_mutants(path: Path = MUTANTS) -> list[Mutant]:
    entries = yaml.safe_load(path.read_text())
    mutants = [
        Mutant(
            id=entry["id"],
            area=entry["area"],
            what=entry["what"],
            file=entry["file"],
            find=entry["find"],
            replace=entry["replace"],
            tests=tuple(entry["tests"]),
        )
        for entry in entries
    ]
    ids = [mutant.id for mutant in mutants]
    duplicated = sorted({name for name in ids if ids.count(name) > 1})
    if duplicated:
        raise SystemExit(f"mutants.yml: ids used twice: {', '.join(duplicated)}")
    return mutants


def applies(mutant: Mutant, root: Path = CHECKOUT) -> str | None:
    """Why the mutant cannot be applied to the files under `root`, or None."""
    path = root / mutant.file
    if not path.is_file():
        return f"{mutant.file} does not exist"
    count = path.read_text().count(mutant.find)
    if count != 1:
        return f"its text occurs {count} times in {mutant.file}, not once"
    if mutant.find == mutant.replace:
        return "its replacement is its text"
    return None


def tracked_files(root: Path) -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
    return [name for name in listed.decode().split("\0") if name]


def copy_checkout(root: Path, into: Path) -> None:
    """The tracked files as they are in the working tree (uncommitted changes included)."""
    for name in tracked_files(root):
        source = root / name
        if source.is_file():
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def run_mutant(mutant: Mutant, workdir: Path) -> Verdict:
    started = time.monotonic()
    reason = applies(mutant)
    if reason is not None:
        return Verdict(mutant, "broken", None, reason, 0.0)
    copy = workdir / mutant.id
    copy_checkout(CHECKOUT, copy)
    path = copy / mutant.file
    path.write_text(path.read_text().replace(mutant.find, mutant.replace))
    report = workdir / f"{mutant.id}.xml"
    log = workdir / f"{mutant.id}.log"
    environment = {key: value for key, value in os.environ.items() if not key.startswith(("LATE_DATA_", "DBT_"))}
    environment["PYTHONPATH"] = str(copy / "python")  # before the editable install's finder: the copy's code
    command = [
        *(sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-x", "-q"),
        f"--junitxml={report}",
        *mutant.tests,
    ]
    try:
        with log.open("wb") as output:
            subprocess.run(
                command, cwd=copy, env=environment, stdout=output, stderr=subprocess.STDOUT, timeout=TIMEOUT_SECONDS
            )
    except subprocess.TimeoutExpired:
        return Verdict(mutant, "timeout", None, f"no verdict in {TIMEOUT_SECONDS} s", time.monotonic() - started)
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    outcome, killed_by, detail = judge(report, log)
    return Verdict(mutant, outcome, killed_by, detail, time.monotonic() - started)


def judge(report: Path, log: Path) -> tuple[str, str | None, str]:
    """killed (the first failing test and its message), survived (tests ran, none failed), or
    broken (no test ran: a test id that no longer exists, a collection error)."""
    if not report.is_file():
        return "broken", None, "no JUnit report: " + log.read_text(errors="replace")[-400:]
    cases = list(ElementTree.parse(report).getroot().iter("testcase"))
    for case in cases:
        for failure in (*case.iter("failure"), *case.iter("error")):
            name = f"{case.get('classname', '').replace('.', '/')}.py::{case.get('name')}"
            message = (failure.get("message") or "").strip().splitlines()
            return "killed", name.removeprefix("python/"), (message[0] if message else failure.tag)[:160]
    ran = [case for case in cases if not list(case.iter("skipped"))]
    if not ran:
        return "broken", None, "no test ran: " + log.read_text(errors="replace")[-400:]
    return "survived", None, f"{len(ran)} tests passed"


def table(verdicts: Iterable[Verdict]) -> str:
    lines = [
        "| mutant | area | the fault | verdict | killed by | seconds |",
        "|---|---|---|---|---|---:|",
    ]
    for verdict in verdicts:
        killed_by = f"`{verdict.killed_by}`" if verdict.killed_by else verdict.detail
        lines.append(
            f"| `{verdict.mutant.id}` | {verdict.mutant.area} | {verdict.mutant.what} | {verdict.outcome}"
            f" | {killed_by} | {verdict.seconds:.0f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", default=None, help="these mutant ids only")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--report", type=Path, default=None, help="write the table (markdown) here too")
    parser.add_argument("--check", action="store_true", help="only check that every mutant applies")
    args = parser.parse_args(argv)
    mutants = load_mutants()
    if args.only:
        unknown = sorted(set(args.only) - {mutant.id for mutant in mutants})
        if unknown:
            raise SystemExit(f"no mutant named {', '.join(unknown)}")
        mutants = [mutant for mutant in mutants if mutant.id in args.only]
    if args.check:
        problems = [(mutant.id, reason) for mutant in mutants if (reason := applies(mutant)) is not None]
        for name, reason in problems:
            print(f"{name}: {reason}")
        print(f"{len(mutants) - len(problems)} of {len(mutants)} mutants apply")
        return 1 if problems else 0
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mutants_") as scratch, ThreadPoolExecutor(args.jobs) as pool:
        verdicts = []
        for verdict in pool.map(lambda mutant: run_mutant(mutant, Path(scratch)), mutants):
            verdicts.append(verdict)
            print(
                f"{verdict.mutant.id}: {verdict.outcome} {verdict.killed_by or verdict.detail} ({verdict.seconds:.0f} s)",
                flush=True,
            )
    text = table(verdicts)
    killed = sum(verdict.outcome == "killed" for verdict in verdicts)
    summary = (
        f"mutants: {killed} of {len(verdicts)} killed, "
        + ", ".join(
            f"{sum(v.outcome == outcome for v in verdicts)} {outcome}" for outcome in ("survived", "broken", "timeout")
        )
        + f"; {time.monotonic() - started:.0f} s"
    )
    print(text)
    print(summary)
    if args.report:
        args.report.write_text(text + "\n\n" + summary + "\n")
    return 0 if killed == len(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
