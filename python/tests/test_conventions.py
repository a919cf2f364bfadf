"""The macro rules a reader relies on, checked without Spark: every macro of the package and of the
demo short enough to hold in one's head, and documented in the yml of its folder (dbt-utils'
layout); the package's macros call each other through its namespace (late_data.), as dbt-utils'
do, so they work from a project that installs it."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from tests import macro_docs

PROJECT = Path(__file__).resolve().parents[2]
PACKAGE_MACROS = PROJECT / "package" / "macros"
MACRO_DIRS = (PACKAGE_MACROS, PROJECT / "macros")
MAX_MACRO_LINES = 60
MACRO = re.compile(r"{%-?\s*(macro|test)\s+(\w+)")
END_MACRO = re.compile(r"{%-?\s*end(?:macro|test)")


def macro_lengths() -> dict[tuple[str, str], int]:
    """(file, macro) -> its lines, from `{% macro` to `{% endmacro` inclusive."""
    lengths = {}
    for path in sorted(path for directory in MACRO_DIRS for path in directory.rglob("*.sql")):
        started: tuple[str, int] | None = None
        for number, line in enumerate(path.read_text().splitlines()):
            if (opened := MACRO.search(line)) is not None:
                # A generic test's macro is test_<name>, as dbt names it.
                started = (("test_" if opened.group(1) == "test" else "") + opened.group(2), number)
            elif END_MACRO.search(line) and started is not None:
                lengths[(str(path.relative_to(PROJECT)), started[0])] = number - started[1] + 1
                started = None
    return lengths


def test_the_macro_finder_finds_every_macro() -> None:
    lengths = macro_lengths()
    assert len(lengths) > 100
    assert ("package/macros/windows/windows_to_write.sql", "windows_to_write") in lengths


def test_no_macro_is_longer_than_sixty_lines() -> None:
    long = {key: lines for key, lines in macro_lengths().items() if lines > MAX_MACRO_LINES}
    assert not long, f"split these macros (at most {MAX_MACRO_LINES} lines): {long}"


def test_every_macro_is_documented_once_in_the_yml_of_its_folder() -> None:
    documented: dict[str, list[Path]] = {}
    for path in (path for directory in MACRO_DIRS for path in directory.rglob("_*__macros.yml")):
        for entry in yaml.safe_load(path.read_text()).get("macros", []):
            documented.setdefault(entry["name"], []).append(path.parent)
    for file, name in macro_lengths():
        if name.startswith("default__"):
            continue  # an adapter's implementation of a dispatched macro, documented with it
        assert name in documented, f"{name} ({file}) has no entry in a _*__macros.yml"
        assert documented[name] == [(PROJECT / file).parent], (
            f"{name}: documented in {documented[name]}, once beside it"
        )


def test_each_macros_doc_is_written_once_in_its_comment_and_the_yml_follows() -> None:
    """The yml of every folder is what `make macro-docs` writes from the macros' comments: a macro's
    text changes in one place, and only what a project may call shows on dbt's docs site."""
    stale = [
        folder.name
        for folder in macro_docs.folders()
        if (folder / f"_{folder.name}__macros.yml").read_text() != macro_docs.written_yml(folder)
    ]
    assert not stale, f"run `make macro-docs`: the yml of {stale} differs from the macros' comments"
    shown = {
        entry["name"]
        for path in PACKAGE_MACROS.glob("*/_*__macros.yml")
        for entry in yaml.safe_load(path.read_text())["macros"]
        if entry.get("docs", {}).get("show", True)
    }
    assert shown == macro_docs.PUBLIC


# Names the package's macros may call without its namespace: Jinja's, dbt's context and its
# global macros (the project that installs the package has them too).
DBT_CONTEXT = {
    "adapter",
    "api",
    "config",
    "exceptions",
    "fromjson",
    "tojson",
    "log",
    "modules",
    "return",
    "run_query",
    "statement",
    "store_raw_result",
    "load_relation",
    "var",
    "env_var",
    "local_md5",
    "persist_docs",
    "apply_grants",
    "caller",
    "dict",
    "range",
    "zip",
    "namespace",
    "lipsum",
    "cycler",
    "joiner",
}
CALL = re.compile(r"(?<![\w.'\"])([a-z_][a-z0-9_]*)\(")


def test_the_package_calls_its_own_macros_through_its_namespace() -> None:
    """A package macro run from a user's model sees the user's namespace, not the package's: an
    unprefixed call of a package macro fails there ('x is undefined')."""
    own = {name for file, name in macro_lengths() if file.startswith("package/")}
    unprefixed = []
    for path in sorted(PACKAGE_MACROS.rglob("*.sql")):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            code = line.split("{#")[0] if "{#" in line and "#}" not in line else line
            for name in CALL.findall(code):
                if name in own and not re.search(r"(macro|test)\s+" + name + r"\(", code):
                    unprefixed.append(f"{path.relative_to(PROJECT)}:{number}: {name}(")
    assert unprefixed == [], unprefixed
