"""One warm Spark session and parsed dbt project per test process (each pytest-xdist worker under
`make test`), in a LATE_DATA_HOME of its own."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.environment import CHECKOUT, jvm_options, prepare_environment
from tests import costs, delta_proofs
from tests.helpers import TEST_VARS, Pipeline

# The modules that take longest, longest first: pytest-xdist hands out whole modules in collection
# order (`make pytest`: --dist loadfile --no-loadscope-reorder), so the workers start on the long
# ones and the short ones fill in at the end. An order, not a promise: a module in the wrong place
# costs minutes, never a result.
SLOWEST_MODULES = (
    "test_cluster.py",
    "test_example_project.py",
    "test_publishing.py",
    "test_init.py",
    "test_bad_input.py",
    "test_faults.py",
    "test_error_rates.py",
    "test_arrivals.py",
    "test_scenario_oracle.py",
    "test_history.py",
    "test_failed_runs.py",
    "test_scan_horizon.py",
    "test_run_budget.py",
    "test_bench.py",
    "test_corrections.py",
    "test_definitions.py",
    "test_generator_and_dbt_tests.py",
    "test_dbt_adapter_suites.py",
)
DELTA_LOG = pytest.StashKey[Path]()
SAMPLER = pytest.StashKey[costs.CpuSampler]()
WORKER_COSTS = pytest.StashKey[dict[str, dict[str, float]]]()
TEST_CPU = pytest.StashKey[dict[str, float]]()
# Where a process started with it writes what it cost (the Delta proofs, for the controller).
COST_FILE = "TESTS_COST_FILE"


def suite_jvm_options() -> str:
    """The JVM options of every Spark this suite starts (its workers', the drivers' and commands' it
    runs as processes of their own): the checkout's archive of Spark's classes, which `make setup`
    made, and the JIT's quick tier only, as the profiles give plain dbt. A test process runs a few
    thousand small, different queries in minutes: the optimizing tier costs more CPU than it wins
    back (2026-12-01: 20 % less CPU for the same tests). The archive's absence costs only time."""
    archive = CHECKOUT / ".late_data" / "jvm" / "spark.jsa"
    return f"-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m {jvm_options(archive)}"


def pytest_configure(config: pytest.Config) -> None:
    # Set before any Spark starts, and inherited by every process the tests start.
    os.environ.setdefault("LATE_DATA_JVM_OPTIONS", suite_jvm_options())
    config.addinivalue_line("markers", "cluster: starts a local cluster (PostgreSQL, metastore, Spark, Thrift Server)")
    config.addinivalue_line("markers", "spark: needs a Spark session (`make check` leaves these to `make test`)")
    config.stash[SAMPLER] = costs.CpuSampler().start()
    config.stash[WORKER_COSTS] = {}
    config.stash[TEST_CPU] = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """Each test's CPU seconds, its fixtures' and the processes it started included."""
    sampler = item.config.stash[SAMPLER]
    before = sampler.total()
    yield
    item.config.stash[TEST_CPU][item.nodeid] = round(sampler.total() - before, 1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark what uses the shared Spark session or the cluster (tests that start Spark in processes
    of their own carry the mark themselves), so `make check` (-m "not spark") runs only what answers in seconds.
    The slowest modules first; the test that waits for the Delta proofs last: the suite works beside
    them until then."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & {"project", "late_data_project", "pipeline"} or item.get_closest_marker("cluster"):
            item.add_marker(pytest.mark.spark)

    def rank(item: pytest.Item) -> int:
        if item.nodeid.endswith(delta_proofs.TEST_ID):
            return len(SLOWEST_MODULES) + 1
        module = item.nodeid.split("::")[0].rsplit("/", 1)[-1]
        return SLOWEST_MODULES.index(module) if module in SLOWEST_MODULES else len(SLOWEST_MODULES)

    items.sort(key=rank)


def delta_proofs_wanted(selected_ids: list[str]) -> bool:
    """The Delta run starts when its test is selected and would not be skipped."""
    return (
        any(nodeid.endswith(delta_proofs.TEST_ID) for nodeid in selected_ids) and delta_proofs.not_run_because() is None
    )


def pytest_collection_finish(session: pytest.Session) -> None:
    """Without pytest-xdist, the Delta proofs start now, beside the rest of the suite
    (tests/delta_proofs.py); under it, the controller starts them (below), not every worker."""
    config = session.config
    if config.option.collectonly or hasattr(config, "workerinput"):
        return
    if delta_proofs_wanted([item.nodeid for item in session.items]):
        delta_proofs.start()


def delta_log(config: pytest.Config) -> Path:
    """Where the Delta run of this xdist session writes, chosen once by the controller."""
    if DELTA_LOG not in config.stash:
        config.stash[DELTA_LOG] = delta_proofs.new_log()
    return config.stash[DELTA_LOG]


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist's controller, for each worker: where the Delta run writes."""
    node.workerinput[delta_proofs.WORKER_INPUT_KEY] = str(delta_log(node.config))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """pytest-xdist's controller, once a worker collected: the Delta run starts (once)."""
    if delta_proofs_wanted(ids):
        delta_proofs.start(delta_log(node.config))


def pytest_sessionfinish(session: pytest.Session) -> None:
    delta_proofs.stop()
    cost = session.config.stash[SAMPLER].stop()
    tests = session.config.stash[TEST_CPU]
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["cost"] = cost
        workeroutput["test_cpu"] = tests
    elif os.environ.get(COST_FILE):
        costs.write(Path(os.environ[COST_FILE]), {**cost, "test_cpu": tests})
    session.config.stash[WORKER_COSTS]["this process" if workeroutput is None else "worker"] = cost


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist's controller, as a worker ends: what it cost."""
    output = getattr(node, "workeroutput", {})
    if output.get("cost") is not None:
        node.config.stash[WORKER_COSTS][node.gateway.id] = output["cost"]
    node.config.stash[TEST_CPU].update(output.get("test_cpu") or {})


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """What the run cost: each process's CPU seconds (its own, and the processes it started), the
    Delta proofs' among them, and the whole in one line (what CI's log shows last)."""
    if hasattr(config, "workerinput"):
        return
    measured = dict(config.stash[WORKER_COSTS])
    mine = measured.pop("this process", None)
    proofs = delta_proofs.started_cost()
    tests = dict(config.stash[TEST_CPU])
    if proofs is not None:
        tests.update({f"(delta) {nodeid}": seconds for nodeid, seconds in dict(proofs.pop("test_cpu", {})).items()})
        measured["delta proofs"] = proofs
    if mine is None:
        return
    if measured:  # under pytest-xdist: the controller's own, less what its workers and the proofs measured
        mine = {
            **mine,
            "descendants": max(0.0, mine["descendants"] - sum(c["own"] + c["descendants"] for c in measured.values())),
        }
    measured["controller" if measured else "pytest"] = mine
    terminalreporter.section("what the suite cost (CPU seconds: the process / the processes it started)")
    for name, cost in sorted(measured.items()):
        terminalreporter.write_line(f"{name}: {cost['own']:.0f} / {cost['descendants']:.0f} in {cost['wall']:.0f} s")
    terminalreporter.write_line("the ten tests that took most CPU (seconds, fixtures and processes started included):")
    for nodeid, seconds in sorted(tests.items(), key=lambda item: -item[1])[:10]:
        terminalreporter.write_line(f"  {seconds:7.1f}  {nodeid}")
    if os.environ.get("TESTS_CPU_REPORT"):
        costs.write(Path(os.environ["TESTS_CPU_REPORT"]), tests)
    stats = terminalreporter.stats
    outcome = ", ".join(
        f"{len(stats[key])} {key}" for key in ("passed", "failed", "error", "skipped") if stats.get(key)
    )
    terminalreporter.write_line(costs.line(measured, mine["wall"], outcome))


# Where a project and its profile are: exported for their process by `late-data --project-dir`,
# `open_project(folder)` and prepare_environment (DBT_PROFILES_DIR as found: ~/.dbt for a folder
# without profiles).
PROJECT_SETTINGS = ("LATE_DATA_PROJECT_DIR",)


@pytest.fixture(autouse=True)
def project_dir_stays_put() -> Iterator[None]:
    """A test that calls those in process must not move the next test's project: the shared
    session, opened later by another module, found ~/.dbt (`Path '/root/.dbt' does not exist`)."""
    before = {name: os.environ.get(name) for name in PROJECT_SETTINGS}
    yield
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def late_data_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DbtProject]:
    home: Path = tmp_path_factory.mktemp("late_data_home")
    os.environ["LATE_DATA_HOME"] = str(home)
    # The suite's project is this checkout with its profile, whatever a test before left behind.
    os.environ["LATE_DATA_PROJECT_DIR"] = str(CHECKOUT)
    os.environ["DBT_PROFILES_DIR"] = str(CHECKOUT / "profiles")
    os.environ.setdefault("LATE_DATA_SHUFFLE_PARTITIONS", "2")
    os.environ.setdefault("LATE_DATA_DRIVER_MEMORY", "2g")
    dbt_project = DbtProject(prepare_environment())
    yield dbt_project
    dbt_project.close()


@pytest.fixture(scope="session")
def project(late_data_project: DbtProject) -> DbtProject:
    """The warm project every Spark test shares (late_data_project: under this name for the modules
    whose own `project` fixture is dbt-tests-adapter's)."""
    return late_data_project


@pytest.fixture
def pipeline(project: DbtProject) -> Pipeline:
    return Pipeline(project, TEST_VARS)
