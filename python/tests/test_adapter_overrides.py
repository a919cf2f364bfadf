"""The package's and the demo's overrides of dbt-spark and dbt-adapters follow code that an upgrade
may change under them. Each override file names, in `upstream:` lines, the upstream macros and
Python it follows with a fingerprint of their text; these tests fail when the installed text
differs (the override must be compared with the new upstream and its fingerprint updated), when
an upstream piece is gone, or when a macro of the package or the demo shadows an upstream one
without naming it."""

from __future__ import annotations

import hashlib
import importlib
import importlib.resources
import inspect
import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.environment import find_project_dir

if TYPE_CHECKING:
    from dbt.cli.main import dbtRunnerResult

PROJECT_DIR = find_project_dir()
# The package's macros and the demo's own.
MACRO_DIRS = (PROJECT_DIR / "package" / "macros", PROJECT_DIR / "macros")
UPSTREAM_LINE = re.compile(
    r"upstream: (?P<package>dbt-spark|dbt-adapters) (?P<location>\S+) (?P<name>\S+) (?P<fingerprint>[0-9a-f]+)"
)
MACRO_START = re.compile(r"{%-?\s*macro\s+(?P<name>\w+)\s*\(")
MATERIALIZATION_START = re.compile(
    r"{%-?\s*materialization\s+(?P<name>\w+)\s*,\s*(?:adapter\s*=\s*['\"](?P<adapter>\w+)['\"]|(?P<default>default))"
)
# Where each package keeps its macros (both install into the dbt.include namespace).
INCLUDE_DIRS = {"dbt-spark": "spark", "dbt-adapters": "global_project"}


@dataclass(frozen=True)
class Upstream:
    """One `upstream:` line of an override file."""

    override_file: str
    package: str
    location: str  # a path under dbt/include (where both packages install their macros), or `python`
    name: str  # a macro name, `materialization:<name>:<adapter>`, or a dotted Python name
    fingerprint: str


def fingerprint(text: str) -> str:
    """12 hex digits of the text's SHA-256 with white space folded (reindenting changes nothing)."""
    return hashlib.sha256(" ".join(text.split()).encode()).hexdigest()[:12]


def block_name(match: re.Match[str]) -> str:
    if match.re is MACRO_START:
        return match["name"]
    return f"materialization:{match['name']}:{match['adapter'] or 'default'}"


def jinja_blocks(text: str) -> dict[str, str]:
    """Every macro and materialization of a Jinja file, by name, with its text up to its end tag."""
    blocks: dict[str, str] = {}
    for match in sorted([*MACRO_START.finditer(text), *MATERIALIZATION_START.finditer(text)], key=lambda m: m.start()):
        end_tag = "endmacro" if match.re is MACRO_START else "endmaterialization"
        end = re.compile(r"{%-?\s*" + end_tag + r"\s*-?%}").search(text, match.end())
        assert end is not None, f"no {end_tag} after {block_name(match)}"
        blocks[block_name(match)] = text[match.start() : end.end()]
    return blocks


def dbt_include() -> Path:
    return Path(str(importlib.resources.files("dbt.include")))


def upstream_text(upstream: Upstream) -> str | None:
    """The installed text of an upstream piece, or None when it is gone."""
    if upstream.location == "python":
        module_name, _, attribute_path = upstream.name.partition(":")
        target = importlib.import_module(module_name)
        for attribute in attribute_path.split("."):
            target = getattr(target, attribute, None)
            if target is None:
                return None
        return inspect.getsource(target)
    path = dbt_include() / upstream.location
    return jinja_blocks(path.read_text()).get(upstream.name) if path.exists() else None


def macro_files() -> list[Path]:
    return sorted(path for directory in MACRO_DIRS for path in directory.rglob("*.sql"))


def declared_upstreams() -> list[Upstream]:
    return [
        Upstream(str(path.relative_to(PROJECT_DIR)), **match.groupdict())
        for path in macro_files()
        for match in UPSTREAM_LINE.finditer(path.read_text())
    ]


def installed_block_names() -> set[str]:
    return {
        name
        for include in INCLUDE_DIRS.values()
        for path in (dbt_include() / include).rglob("*.sql")
        for name in jinja_blocks(path.read_text())
    }


def upstream_shadowed_by(name: str, upstream_names: set[str]) -> str | None:
    """The upstream piece a project macro replaces: the same name, or for `spark__x` the `default__x`
    it takes precedence over in dbt's dispatch; None when it replaces nothing."""
    if name in upstream_names:
        return name
    if name.startswith("spark__") and "default__" + name.removeprefix("spark__") in upstream_names:
        return "default__" + name.removeprefix("spark__")
    return None


@pytest.mark.parametrize("upstream", declared_upstreams(), ids=lambda upstream: upstream.name)
def test_each_override_follows_the_installed_upstream(upstream: Upstream) -> None:
    text = upstream_text(upstream)
    assert text is not None, (
        f"{upstream.package} no longer has {upstream.name} ({upstream.location}): the override in "
        f"{upstream.override_file} follows something that is gone"
    )
    assert fingerprint(text) == upstream.fingerprint, (
        f"{upstream.package}'s {upstream.name} changed since {upstream.override_file} "
        f"followed it (fingerprint {upstream.fingerprint}, installed {fingerprint(text)}): compare the "
        "override with the installed text, carry the change over, then update the fingerprint"
    )


def test_every_override_names_what_it_replaces() -> None:
    upstream_names = installed_block_names()
    declared = {(upstream.override_file, upstream.name) for upstream in declared_upstreams()}
    undeclared = [
        f"{path.relative_to(PROJECT_DIR)}: {name} replaces {shadowed}"
        for path in macro_files()
        for name in jinja_blocks(path.read_text())
        if (shadowed := upstream_shadowed_by(name, upstream_names))
        and (str(path.relative_to(PROJECT_DIR)), shadowed) not in declared
    ]
    assert undeclared == [], "every override names what it follows, in an upstream: line of its file"


def test_the_fingerprint_reader_finds_a_known_macro() -> None:
    """The reader sees through white space but not a change of a single token."""
    text = "{% macro m(a) -%}\n  select {{ a }}\n{%- endmacro %}\n{% materialization view, adapter='spark' %}x{% endmaterialization %}"
    blocks = jinja_blocks(text)
    assert set(blocks) == {"m", "materialization:view:spark"}
    assert fingerprint(blocks["m"]) == fingerprint(blocks["m"].replace("\n  ", "\n\t\t"))
    assert fingerprint(blocks["m"]) != fingerprint(blocks["m"].replace("select", "selects"))


# Behaviour, on the suite's Spark: a copy of the project with a plain snapshot and a plain view
# (neither a late-data node), built in a schema of their own.
PLAIN_SNAPSHOT = """{% snapshot plain_snapshot %}
{{ config(
    unique_key='id', strategy='check', check_cols=['value'], hard_deletes='invalidate',
    dbt_valid_to_current="to_timestamp('9999-12-31 00:00:00')",
    file_format=env_var('LATE_DATA_TABLE_FORMAT', 'iceberg'),
) }}
select 1 as id, {{ var('plain_value') }} as value
{% endsnapshot %}
"""
PLAIN_VIEW = "select {{ var('plain_value') }} as value\n"
# Far from the wall clock: a plain snapshot stamped with it would show the late-data override leaking.
RUN_TIME = "2031-01-01 00:00:00"


@pytest.fixture(scope="module")
def project_copy(project: DbtProject, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    copy = tmp_path_factory.mktemp("overrides") / "project"
    shutil.copytree(
        PROJECT_DIR,
        copy,
        ignore=shutil.ignore_patterns(".git", ".venv", ".late_data", "target", "logs", "python", "dbt_packages"),
    )
    (copy / "snapshots" / "plain_snapshot.sql").write_text(PLAIN_SNAPSHOT)
    (copy / "models" / "plain_view.sql").write_text(PLAIN_VIEW)
    assert dbt_in(copy, "deps").success  # the late_data package, from the copy's package/
    project.spark  # noqa: B018 - starts the session the copy's dbt invocations reuse
    previous_schema = os.environ.get("LATE_DATA_SCHEMA")
    os.environ["LATE_DATA_SCHEMA"] = "adapter_overrides"
    yield copy
    project.spark.sql("drop schema if exists adapter_overrides cascade")
    if previous_schema is None:
        os.environ.pop("LATE_DATA_SCHEMA")
    else:
        os.environ["LATE_DATA_SCHEMA"] = previous_schema


def dbt_in(copy: Path, *args: str, **project_vars: object) -> dbtRunnerResult:
    from dbt.cli.main import dbtRunner

    vars_args = ["--vars", json.dumps({"run_time": RUN_TIME, **project_vars})]
    return dbtRunner().invoke(
        ["--quiet", *args, "--project-dir", str(copy), "--profiles-dir", str(copy / "profiles"), *vars_args]
    )


def test_a_plain_snapshot_keeps_dbt_spark_behaviour(project: DbtProject, project_copy: Path) -> None:
    """Wall-clock stamps (the run-time stamping is for late-data histories only) and dbt-spark's
    merge with dbt_valid_to_current: the open version is closed when its value changes."""
    for value in (1, 2):
        assert dbt_in(project_copy, "snapshot", "--select", "plain_snapshot", plain_value=value).success
    versions = project.spark.sql(
        "select value, dbt_valid_from, dbt_valid_to from adapter_overrides.plain_snapshot order by dbt_valid_from"
    ).collect()
    assert [row["value"] for row in versions] == [1, 2]
    first, second = versions
    assert first["dbt_valid_to"] == second["dbt_valid_from"] < datetime(2031, 1, 1)
    assert second["dbt_valid_to"] == datetime(9999, 12, 31)


def test_a_changed_view_serves_its_new_query(project: DbtProject, project_copy: Path) -> None:
    for value in (1, 2):
        assert dbt_in(project_copy, "run", "--select", "plain_view", plain_value=value).success
        assert project.spark.sql("select value from adapter_overrides.plain_view").first()["value"] == value


@pytest.mark.parametrize(
    ("setting", "added"),
    [
        ("dbt_valid_to_current", "dbt_valid_to_current: \"to_timestamp('9999-12-31')\""),
        ("hard_deletes", "hard_deletes: new_record"),
        ("snapshot_meta_column_names", "snapshot_meta_column_names: {dbt_valid_from: valid_from}"),
    ],
)
def test_a_history_with_a_setting_it_cannot_honour_is_refused(project_copy: Path, setting: str, added: str) -> None:
    histories = project_copy / "snapshots" / "_snapshots.yml"
    original = histories.read_text()
    configured = "      unique_key: window_key\n      tags: [late_data, water_level]\n"
    assert configured in original
    histories.write_text(original.replace(configured, configured + "      " + added + "\n"))
    try:
        outcome = dbt_in(project_copy, "snapshot", "--select", "water_level_window_means_history")
    finally:
        histories.write_text(original)
    assert not outcome.success
    # Refused before anything runs (on-run-start), and again by the snapshot itself.
    assert outcome.result is None and f"snapshot setting {setting}" in str(outcome.exception), outcome.exception
