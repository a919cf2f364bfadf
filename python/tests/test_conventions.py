"""The macro rules a reader relies on, checked without Spark: every macro short enough to hold in
one's head, and documented in the yml of its folder (dbt-utils' layout)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

MACROS = Path(__file__).resolve().parents[2] / "macros"
MAX_MACRO_LINES = 60
MACRO = re.compile(r"{%-?\s*macro\s+(\w+)")
END_MACRO = re.compile(r"{%-?\s*endmacro")


def macro_lengths() -> dict[tuple[str, str], int]:
    """(file, macro) -> its lines, from `{% macro` to `{% endmacro` inclusive."""
    lengths = {}
    for path in sorted(MACROS.rglob("*.sql")):
        started: tuple[str, int] | None = None
        for number, line in enumerate(path.read_text().splitlines()):
            if (opened := MACRO.search(line)) is not None:
                started = (opened.group(1), number)
            elif END_MACRO.search(line) and started is not None:
                lengths[(str(path.relative_to(MACROS)), started[0])] = number - started[1] + 1
                started = None
    return lengths


def test_the_macro_finder_finds_every_macro() -> None:
    lengths = macro_lengths()
    assert len(lengths) > 100
    assert ("late_data/windows/windows_to_write.sql", "late_data_windows_to_write") in lengths


def test_no_macro_is_longer_than_sixty_lines() -> None:
    long = {key: lines for key, lines in macro_lengths().items() if lines > MAX_MACRO_LINES}
    assert not long, f"split these macros (at most {MAX_MACRO_LINES} lines): {long}"


def test_every_macro_is_documented_once_in_the_yml_of_its_folder() -> None:
    documented: dict[str, list[Path]] = {}
    for path in MACROS.rglob("_*__macros.yml"):
        for entry in yaml.safe_load(path.read_text()).get("macros", []):
            documented.setdefault(entry["name"], []).append(path.parent)
    for file, name in macro_lengths():
        if name.startswith("default__"):
            continue  # an adapter's implementation of a dispatched macro, documented with it
        assert name in documented, f"{name} ({file}) has no entry in a _*__macros.yml"
        assert documented[name] == [(MACROS / file).parent], f"{name}: documented in {documented[name]}, once beside it"
