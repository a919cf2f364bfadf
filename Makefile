# Two commands: `make demo` and `make test`. Each sets itself up on a fresh machine.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
UV_VERSION ?= 0.13.10

.PHONY: setup demo test check lint docs macro-docs sql-docs pytest pytest-cluster mutants cluster-packages bench bench-quick bench-soak bench-soak-delta bench-cron-soak cluster-up cluster-down cluster-status cluster-demo clean

setup: $(INSTALLED)

$(INSTALLED): requirements.txt python/pyproject.toml
	@command -v java >/dev/null 2>&1 || [ -x "$${JAVA_HOME:-/nonexistent}/bin/java" ] || { \
		echo "Java not found: Spark needs a JDK 17 (Debian: apt-get install openjdk-17-jre-headless) or JAVA_HOME set." >&2; \
		exit 1; }
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "$(PYTHON) not found: install Python 3.11 or pass PYTHON=..." >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	# What installs is what python/pyproject.toml declares (with its dev extra); requirements.txt is the
	# lock those declarations resolve against (-c: pins versions, adds nothing of its own). uv installs
	# the same set as pip (compared with pip freeze) in under half the time (26 against 60 s without a
	# cache, 2026-12-07); pip does it where uv cannot be installed.
	if $(BIN)/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION); then \
		$(BIN)/uv pip install --quiet --python $(BIN)/python -c requirements.txt -e 'python[dev]'; \
	else \
		$(BIN)/pip install --quiet --disable-pip-version-check -c requirements.txt -e 'python[dev]'; \
	fi
	$(BIN)/late-data setup
	touch $(INSTALLED)

demo: setup
	$(BIN)/late-data demo

lint: setup
	$(BIN)/sqlfluff lint models tests bench/models
	$(BIN)/ruff check python
	$(BIN)/ruff format --check python
	cd python && ../$(BIN)/mypy

# Delta's jars for the tests, the demo and the benchmarks where a folder of them sits beside the
# project (machines without Maven: ../shared/deltajars/README.md). DELTA_JARS from the environment
# wins; without either, the Delta proofs are skipped with the reason and Delta needs Maven's jars.
DELTA_JARS_DIR ?= $(wildcard $(CURDIR)/../shared/deltajars)
ifneq ($(DELTA_JARS_DIR),)
comma := ,
export DELTA_JARS ?= $(subst $(eval) ,$(comma),$(strip $(wildcard $(DELTA_JARS_DIR)/delta-spark_*.jar) $(wildcard $(DELTA_JARS_DIR)/delta-storage-*.jar)))
endif

# The whole suite in worker processes (pytest-xdist), each with its own Spark session and
# warehouse, handed whole modules, the slowest first (python/tests/conftest.py), the Delta proofs
# beside them in one more; at the end, the ten slowest tests and what each process cost
# (docs/testing.md). Two workers on this 2-core machine: three cost more than they filled in
# (2026-12-02, the same commit back to back: 2,104 s and 3,958 CPU s with three, 2,053 and 3,757 with two).
PYTEST_WORKERS ?= 2
pytest: setup cluster-packages
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=10 python/tests

# Its last line: how long the whole took.
test:
	@started=$$(date +%s); $(MAKE) --no-print-directory lint docs pytest; status=$$?; \
		echo "make test: $$(( $$(date +%s) - started )) s wall, exit $$status"; exit $$status

# The inner loop, in about a minute: lint and every test that needs no Spark session (`make test`
# runs the rest, dbt's unit tests among them).
check: lint
	$(BIN)/pytest -q -m "not spark" python/tests

# The suite's strength: each mutant of python/tests/mutants.yml (a small fault in the product) run
# against the tests it names, reported killed (by which test) or survived, into target/mutants.md.
# Not part of `make test`: about an hour on 2 cores (docs/testing.md).
mutants: setup
	@mkdir -p target
	$(BIN)/python python/tests/mutants.py --report target/mutants.md

# dbt's docs site (target/index.html, manifest.json, catalog.json), compiled against a scratch
# LATE_DATA_HOME of its own (the embedded Derby metastore admits one process at a time), embedded
# Iceberg whatever the environment picks, the Iceberg jar shared. `dbt docs serve` shows it.
docs: setup
	@home=$$(mktemp -d) && ln -s "$${LATE_DATA_HOME:-$(CURDIR)/.late_data}/jars" "$$home/jars" && \
		ln -s "$${LATE_DATA_HOME:-$(CURDIR)/.late_data}/jvm" "$$home/jvm" && \
		LATE_DATA_HOME="$$home" LATE_DATA_TABLE_FORMAT=iceberg LATE_DATA_TARGET=iceberg \
		$(BIN)/dbt docs generate --project-dir . --profiles-dir profiles; \
		status=$$?; rm -rf "$$home"; exit $$status

# Each folder's _<folder>__macros.yml written from its macros' comments (a macro's doc lives in its
# comment; make check fails when a yml differs), public macros shown on dbt's docs site, the rest hidden.
macro-docs: setup
	$(BIN)/python python/tests/macro_docs.py

# The SQL a scheduled, a rebuild and a reconcile run execute, compiled on an hour of the demo's data
# in a scratch LATE_DATA_HOME, into docs/sql/. test_scenario_oracle compiles the same nodes on its own
# warehouse and fails when they no longer match: re-run this after changing what a run executes.
SQL_DOCS_RUN_TIME = 2026-01-01 01:15:10
sql-docs: setup
	@home=$$(mktemp -d) && ln -s "$${LATE_DATA_HOME:-$(CURDIR)/.late_data}/jars" "$$home/jars" && \
		ln -s "$${LATE_DATA_HOME:-$(CURDIR)/.late_data}/jvm" "$$home/jvm" && \
		export LATE_DATA_HOME="$$home" LATE_DATA_TABLE_FORMAT=iceberg LATE_DATA_TARGET=iceberg && \
		$(BIN)/late-data demo --hours 1 && \
		$(BIN)/late-data explain --run-time "$(SQL_DOCS_RUN_TIME)" --mode scheduled --mode rebuild --mode reconcile --out docs/sql; \
		status=$$?; rm -rf "$$home"; exit $$status

# Changed partitions vs microbatch vs full refresh vs the floor; writes bench/results.{csv,md,png}.
# Then Delta cells into bench/delta where Delta's jars can be had (DELTA_JARS, Spark's Ivy cache or
# LATE_DATA_DELTA_MAVEN=1; otherwise skipped with the reason), in a LATE_DATA_HOME of their own (one
# Derby metastore per table format).
DELTA_HOME = $${LATE_DATA_HOME:-$(CURDIR)/.late_data}/delta
DELTA_CELLS = --cell 100:2:heavy --cell 1000:2:sparse

bench: setup
	$(BIN)/late-data bench --out bench
	LATE_DATA_HOME=$(DELTA_HOME) $(BIN)/late-data bench --table-format delta $(DELTA_CELLS) --out bench/delta
	$(BIN)/late-data bench --check-cost --out bench
	$(BIN)/late-data bench --plain-dbt-steps --out bench
	$(MAKE) bench-soak

# A day of one-minute scheduled runs (1,000 at 100 heavy series, the scheduler's upkeep on): each
# run's seconds, files and metadata into bench/soak_100_heavy.{csv,md,png}. About 2 hours here
# (1,000 runs took 108 minutes on 2026-11-27).
# SOAK_RUNS=300 for a shorter soak.
SOAK_RUNS = 1000
bench-soak: setup
	$(BIN)/late-data bench --soak $(SOAK_RUNS) --cell 100:2:heavy --out bench

# The same day of runs on Delta (where Delta's jars can be had) into bench/delta/soak_100_heavy.*.
# Not part of `make bench`: 300 runs took 84 minutes here on 2026-11-28, so 1,000 would take about
# four and a half hours (extrapolated, not run).
bench-soak-delta: setup
	LATE_DATA_HOME=$(DELTA_HOME) $(BIN)/late-data bench --table-format delta --soak $(SOAK_RUNS) --cell 100:2:heavy --out bench/delta

# The cron path soaked: the example's meter pipeline built by a plain `dbt build` in a new process
# per simulated minute, `late_data.maintain_tables` after every 60th run, each step's seconds and
# reads into bench/cron_soak.{csv,md,png}. About 26 s a run here (2026-12-07): 300 runs, 2 hours.
# CRON_SOAK_PACKAGE=<another checkout>/package measures that package on the same data.
CRON_SOAK_RUNS = 300
bench-cron-soak: setup
	$(BIN)/late-data bench --cron-soak $(CRON_SOAK_RUNS) $(if $(CRON_SOAK_PACKAGE),--package $(CRON_SOAK_PACKAGE)) --out bench

bench-quick: setup
	$(BIN)/late-data bench --quick --out bench/quick
	LATE_DATA_HOME=$(DELTA_HOME) $(BIN)/late-data bench --quick --table-format delta --out bench/quick/delta

# A shared catalog (PostgreSQL + Hive metastore service), a Spark standalone master with two workers
# and a Spark Thrift Server on this machine, state in LATE_DATA_HOME/cluster (docs/cluster.md).
# The local cluster's catalog lives in PostgreSQL: Debian's server binaries and JDBC driver, installed
# with apt-get (sudo when not root) when missing.
cluster-packages:
	@if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || [ ! -f /usr/share/java/postgresql.jar ]; then \
		sudo=""; if [ "$$(id -u)" != 0 ]; then sudo="sudo"; fi; \
		echo "installing postgresql and libpostgresql-jdbc-java (the local cluster's catalog)"; \
		$$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends \
			postgresql libpostgresql-jdbc-java; \
	fi

cluster-up: setup cluster-packages
	$(BIN)/late-data cluster up

cluster-down: setup
	$(BIN)/late-data cluster down

cluster-status: setup
	$(BIN)/late-data cluster status

# The demo with dbt going through the Thrift Server (the Python side on a `cluster` session).
cluster-demo: cluster-up
	LATE_DATA_TARGET=thrift $(BIN)/late-data demo

# Only the cluster test (brings a cluster up in a temporary LATE_DATA_HOME and down again).
pytest-cluster: setup cluster-packages
	$(BIN)/pytest python/tests -m cluster

clean:
	@if [ -x $(BIN)/late-data ]; then $(BIN)/late-data cluster down; fi
	rm -rf $(VENV) .late_data target logs
