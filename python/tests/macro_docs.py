"""`make macro-docs`: each folder's `_<folder>__macros.yml` written from its macros, so a macro's doc is
written once. A macro's description is its Jinja comment (the `{#- ... -#}` right under its `{% macro
%}` line), reflowed; a macro without one keeps the description its yml entry holds. Its arguments
are its signature's. Every macro but those a user may call (PUBLIC) is hidden from dbt's docs site
(`docs: show: false`), so the site lists what a project may use. `test_conventions.py` fails when a
yml is not what this writes."""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from pathlib import Path

import yaml

PROJECT = Path(__file__).resolve().parents[2]
PACKAGE_MACROS = PROJECT / "package" / "macros"
# The macros a project calls (docs/your-own-pipeline.md, the example project, the demo's models and
# macros): the hooks, the generic tests, the as-of and revision reads, the lateness views,
# maintenance, and the bounds and checks the demo's staging uses.
PUBLIC = frozenset(
    {
        "on_run_start",
        "on_run_end",
        "test_quarantine_is_empty",
        "test_too_late_rows",
        "test_ambiguous_versions",
        "test_valid_intervals",
        "test_late_window_meets_target",
        "as_of",
        "window_revisions",
        "why",
        "arrivals",
        "counted_arrivals",
        "windowed",
        "lateness",
        "recommended_late_windows",
        "maintain_tables",
        "describe_pipelines",
        "run_time",
        "exact_sum_bound",
        "count_bound",
        "plain_identifier",
    }
)
MACRO = re.compile(
    r"^\{%-? *(macro|test) ([a-z_0-9]+)\((.*?)\) *-?%\}\n(?:[ \t]*\{#-?(.*?)-?#\})?", re.MULTILINE | re.DOTALL
)
WIDTH = 100


def arguments(signature: str) -> list[str]:
    """The argument names of a macro's signature (defaults dropped)."""
    names, depth, current = [], 0, ""
    for char in signature:
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0:
            names.append(current)
            current = ""
        else:
            current += char
    names.append(current)
    return [name.split("=")[0].strip() for name in names if name.strip()]


def folder_macros(folder: Path) -> list[tuple[str, list[str], str | None]]:
    """(name, arguments, comment) of each macro of the folder's files, in file and then text order."""
    found = []
    for path in sorted(folder.glob("*.sql")):
        for match in MACRO.finditer(path.read_text()):
            kind, name, signature, comment = match.groups()
            if name.startswith("default__"):
                continue  # an adapter's implementation, documented with the macro it dispatches for
            found.append((f"test_{name}" if kind == "test" else name, arguments(signature), comment))
    return found


def described(text: str) -> str:
    return textwrap.fill(
        " ".join(text.split()),
        width=WIDTH,
        initial_indent=" " * 6,
        subsequent_indent=" " * 6,
        break_long_words=False,
        break_on_hyphens=False,
    )


def written_yml(folder: Path) -> str:
    """The yml of `folder` as this writes it: the entries in their current order, then any new macro."""
    path = folder / f"_{folder.name}__macros.yml"
    current = {
        entry["name"]: entry
        for entry in (yaml.safe_load(path.read_text()) if path.exists() else {}).get("macros") or []
    }
    macros = {name: (args, comment) for name, args, comment in folder_macros(folder)}
    order = [name for name in current if name in macros] + [name for name in macros if name not in current]
    lines = ["version: 2", "", "macros:"]
    for name in order:
        args, comment = macros[name]
        text = comment if comment is not None else current.get(name, {}).get("description") or ""
        lines += [f"  - name: {name}", "    description: >", described(text)]
        if args:
            lines += ["    arguments:", *(f"      - name: {arg}" for arg in args)]
        if name not in PUBLIC:
            lines += ["    docs:", "      show: false"]
    return "\n".join(lines) + "\n"


def folders() -> list[Path]:
    return sorted(path for path in PACKAGE_MACROS.iterdir() if path.is_dir() and any(path.glob("*.sql")))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1, naming them, when a yml is not what this writes")
    args = parser.parse_args()
    stale = []
    for folder in folders():
        path = folder / f"_{folder.name}__macros.yml"
        text = written_yml(folder)
        if not path.exists() or path.read_text() != text:
            stale.append(path)
            if not args.check:
                path.write_text(text)
    if args.check and stale:
        print("not written by `make macro-docs`: " + ", ".join(str(path.relative_to(PROJECT)) for path in stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
