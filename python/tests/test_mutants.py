"""`make mutants` stays runnable as the code moves (no Spark): every mutant's fault still applies to
exactly one place in its file, and every test it names exists. A mutant whose text moved or whose
test was renamed would otherwise report `broken` only when someone runs the long target."""

from __future__ import annotations

import ast

from tests.mutants import CHECKOUT, applies, load_mutants


def defined_tests(module: str) -> set[str]:
    tree = ast.parse((CHECKOUT / module).read_text())
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


def test_every_mutant_applies_once_and_names_tests_that_exist() -> None:
    mutants = load_mutants()
    assert len(mutants) >= 30
    problems = [f"{mutant.id}: {reason}" for mutant in mutants if (reason := applies(mutant)) is not None]
    for mutant in mutants:
        assert mutant.tests, f"{mutant.id} names no test"
        for test in mutant.tests:
            module, _, name = test.partition("::")
            if not (CHECKOUT / module).is_file():
                problems.append(f"{mutant.id}: {module} does not exist")
            elif name and name.split("[")[0] not in defined_tests(module):
                problems.append(f"{mutant.id}: {module} has no {name.split('[')[0]}")
    assert not problems, "\n".join(problems)
