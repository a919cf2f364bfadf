"""The Python side's layout holds (no Spark): each subpackage of late_data imports only itself and the
packages its `__init__.py` names under "May import:", no module imports another that imports it
back (directly or around a longer circle, imports inside functions included), and late_data never
imports the benchmark (late_data_bench finds its way in through an entry point); and only the command
line prints."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

PYTHON = Path(__file__).resolve().parents[1]
PACKAGE = PYTHON / "late_data"
MAY_IMPORT = re.compile(r"^May import: (.*?)\.?$", re.MULTILINE)


def module_name(path: Path) -> str:
    parts = path.relative_to(PYTHON).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path) -> dict[str, Path]:
    return {module_name(path): path for path in sorted(root.rglob("*.py"))}


def imported(path: Path, known: set[str]) -> set[str]:
    """The late_data and late_data_bench modules `path` imports, wherever in the file: `from a.b
    import c` names module a.b.c where that is a module, else a.b."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.update(
                f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in known else node.module
                for alias in node.names
            )
    return {name for name in found if name.split(".")[0] in ("late_data", "late_data_bench")}


# Read once for the three tests: parsing every module is most of their time.
@functools.cache
def imports_graph() -> dict[str, set[str]]:
    found = {**modules(PACKAGE), **modules(PYTHON / "late_data_bench")}
    return {name: imported(path, set(found)) - {name} for name, path in found.items()}


def subpackage(module: str) -> str | None:
    """The subpackage of late_data a module belongs to (late_data.project for late_data.project.audit);
    None for late_data's own top-level modules (the command line) and the benchmark's."""
    parts = module.split(".")
    if parts[0] != "late_data" or len(parts) < 2 or not (PACKAGE / parts[1]).is_dir():
        return None
    return f"late_data.{parts[1]}"


def allowed_imports() -> dict[str, set[str]]:
    allowed = {}
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        docstring = ast.get_docstring(ast.parse(init.read_text())) or ""
        match = MAY_IMPORT.search(docstring)
        assert match, f"{init.relative_to(PYTHON)} does not say what its package may import (May import: ...)"
        names = match.group(1)
        allowed[f"late_data.{init.parent.name}"] = (
            set() if names.startswith("nothing") else {name.strip() for name in names.split(",")}
        )
    return allowed


def test_each_subpackage_imports_only_what_its_init_allows() -> None:
    allowed = allowed_imports()
    assert set(allowed) >= {"late_data.runtime", "late_data.project", "late_data.commands"}
    for package, names in allowed.items():
        assert names <= set(allowed), f"{package} may import {names - set(allowed)}, which are not packages"
    breaches = sorted(
        f"{module} imports {target}"
        for module, targets in imports_graph().items()
        if (own := subpackage(module)) is not None
        for target in targets
        if subpackage(target) not in (own, *allowed[own])
    )
    assert not breaches, "\n".join(breaches)


def test_late_data_never_imports_the_benchmark() -> None:
    breaches = sorted(
        f"{module} imports {target}"
        for module, targets in imports_graph().items()
        if module.startswith("late_data.") or module == "late_data"
        for target in targets
        if target.startswith("late_data_bench")
    )
    assert not breaches, "\n".join(breaches)


def test_no_module_imports_itself_back() -> None:
    graph = imports_graph()
    circles: list[list[str]] = []

    def walk(module: str, path: list[str]) -> None:
        for target in sorted(graph.get(module, ())):
            if target == path[0]:
                circles.append([*path, target])
            elif target not in path and target > path[0]:
                walk(target, [*path, target])

    # Each circle found once, from its alphabetically first module.
    for start in sorted(graph):
        walk(start, [start])
    assert not circles, "\n".join(" -> ".join(circle) for circle in circles)


def test_only_the_command_line_prints() -> None:
    """The commands return what they found (a result with its lines) and the command line prints it,
    so a command's work can be called and read from Python without capturing its output."""
    printing = sorted(
        f"{path.relative_to(PYTHON)}:{node.lineno}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != PACKAGE / "cli.py"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
    )
    assert not printing, "\n".join(printing)


def test_a_scripts_names_import_from_late_data_itself_and_from_where_the_docs_once_put_them() -> None:
    """The names the docs give a script (open a project, its Spark, append rows, run, check) are
    importable from `late_data`, and `late_data.dbt_project` and `late_data.environment`, where the
    docs imported from before the modules were grouped by role, still hold theirs; `import late_data`
    loads neither dbt nor Spark (a new process: this one has both)."""
    import subprocess
    import sys

    import late_data

    documented = [
        *("open_project", "append_rows", "run", "check", "pipelines_with_sources"),
        *("DbtProject", "prepare_environment", "RunReport", "PipelineCheck"),
    ]
    assert sorted(late_data.__all__) == sorted(documented)
    script = (
        "import sys, late_data\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in ('dbt', 'pyspark')]\n"
        f"from late_data import {', '.join(documented)}\n"
        "from late_data.dbt_project import DbtProject as old_project\n"
        "from late_data.environment import prepare_environment as old_environment\n"
        "assert old_project is DbtProject and old_environment is prepare_environment\n"
        "assert open_project.__module__ == 'late_data.api' and callable(append_rows) and callable(run)\n"
    )
    process = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert process.returncode == 0, process.stderr
