"""The docs hold to the code (no Spark): every `late-data` subcommand and option they show exists,
every LATE_DATA_ setting they name is read somewhere and every one read is in docs/settings.md,
every `make` target they name is in the Makefile, every link between them lands on a file and a
heading, and together they stay short enough to read (README at most 250 lines, all at most 2,500)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from late_data.arguments import build_parser
from late_data.runtime.environment import CHECKOUT

DOCS = [CHECKOUT / "README.md", *sorted((CHECKOUT / "docs").glob("*.md"))]
SETTING = re.compile(r"\bLATE_DATA_[A-Z0-9_]+\b")
# Where a setting can be read: the Python side, the package's macros, the profiles, the Makefile.
READERS = ["python/late_data", "python/late_data_bench", "package/macros", "profiles", "integration_tests"]


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    return dict(action.choices)


def options(parser: argparse.ArgumentParser) -> set[str]:
    return {option for action in parser._actions for option in action.option_strings}


def code_lines() -> list[tuple[Path, str]]:
    """Every line of the docs' code blocks and inline code, with its file."""
    found = []
    for path in DOCS:
        text = path.read_text()
        for block in re.findall(r"```[^\n]*\n(.*?)```", text, re.S):
            found.extend((path, line) for line in block.splitlines())
        found.extend((path, span) for span in re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S)))
    return found


# `late-data` as a command: at the start of a line or span, or after a shell's `&&`, `;`, `|` or
# `$`, with VAR=value settings before it; what follows, up to the next command or comment.
COMMAND = re.compile(
    r"(?:^|&&|;|\||\$)\s*(?:[A-Z_]+=\S+\s+)*late-data((?:\s+--[\w-]+(?:\s+(?!-)\S+)?)*)\s+([a-z][\w-]*)(.*?)(?=&&|;|\||#|\bdbt\b|$)"
)


def test_every_late_data_command_and_option_in_the_docs_exists() -> None:
    parser = build_parser()
    commands = subparsers(parser)
    top = options(parser)
    wrong = []
    for path, line in code_lines():
        if re.match(r"\s*late-data[\w ]*(\([^)]*\))?:", line):  # what a command printed
            continue
        for _, command, rest in COMMAND.findall(line):
            if command not in commands:
                wrong.append(f"{path.name}: `late-data {command}` is no subcommand")
                continue
            for option in re.findall(r"(?<![\w-])(--[a-z][\w]*(?:-[\w]+)*)(?![\w.-])", rest):
                if option not in options(commands[command]) | top:
                    wrong.append(f"{path.name}: `late-data {command}` has no option {option}")
    assert not wrong, "\n".join(sorted(set(wrong)))


def test_every_setting_the_docs_name_is_read_and_every_one_read_is_in_settings_md() -> None:
    named = {setting for path in DOCS for setting in SETTING.findall(path.read_text())}
    read: set[str] = set()
    for folder in READERS:
        for path in (CHECKOUT / folder).rglob("*"):
            if path.is_file() and path.suffix in (".py", ".sql", ".yml", ".properties", ".sh"):
                read |= set(SETTING.findall(path.read_text(errors="replace")))
    read |= set(SETTING.findall((CHECKOUT / "Makefile").read_text()))
    in_settings = set(SETTING.findall((CHECKOUT / "docs" / "settings.md").read_text()))
    # A setting the docs name only to say it is no longer read.
    retired = {"LATE_DATA_SCRATCH"}
    assert named - read - retired == set(), "named in the docs, read nowhere"
    cluster = set(SETTING.findall((CHECKOUT / "docs" / "cluster.md").read_text()))
    assert read - in_settings - cluster == set(), "read by the code, in neither settings.md nor cluster.md"


def test_every_make_target_the_docs_name_is_in_the_makefile() -> None:
    makefile = (CHECKOUT / "Makefile").read_text()
    targets = set(re.findall(r"^([\w-]+):", makefile, re.M))
    named = {target for _, line in code_lines() for target in re.findall(r"(?<![\w-])make ([a-z][\w-]*)", line)}
    assert named - targets == set()


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but - and _ dropped, spaces to -."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def test_every_link_between_the_docs_lands_on_a_file_and_a_heading() -> None:
    broken = []
    for path in DOCS:
        for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text()):
            if re.match(r"[a-z]+:", target):
                continue
            file_part, _, anchor = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            if not linked.exists():
                broken.append(f"{path.name}: {target} (no such file)")
            elif anchor and linked.suffix == ".md":
                headings = {slug(line.lstrip("#")) for line in linked.read_text().splitlines() if line.startswith("#")}
                if anchor not in headings:
                    broken.append(f"{path.name}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_the_docs_stay_short_enough_to_read() -> None:
    lines = {path.name: len(path.read_text().splitlines()) for path in DOCS}
    assert lines["README.md"] <= 250
    assert sum(lines.values()) <= 2500, lines
