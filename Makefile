# envpipeline — the two commands of the README are `make run` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export LITELLM_LOCAL_MODEL_COST_MAP := True

.PHONY: setup lock trainers-env test-trainers system-deps sandbox-ready run test test-full lint ui bench bench-run base-image image base-rootfs harbor-validate clean

LOCK := requirements.lock
TRAINERS_VENV := .venv-trainers
TRAINERS_LIBS := $(TRAINERS_VENV)/.libraries-installed
VERL_OVERLAY := $(abspath $(TRAINERS_VENV))/verl-overlay
TRAINERS_STAMP := $(TRAINERS_VENV)/.installed

# the application: every extra, each version pinned by the lock (pyproject.toml keeps ranges)
$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c $(LOCK) -e ".[all,dev]"
	touch $(STAMP)

setup: $(STAMP) ## create .venv and install the application with the versions of requirements.lock

lock: ## rewrite requirements.lock from what .venv has installed (after changing pyproject.toml)
	$(BIN)/pip install --quiet -e ".[all,dev]"
	$(BIN)/python scripts/lock.py > $(LOCK).new && mv $(LOCK).new $(LOCK)

# a trainer's environment: the pinned trainer libraries (TRAINERS_LIBS, built once), then the lean
# core with no extras on top (TRAINERS_STAMP, again after a change to pyproject.toml); the freeze
# taken before the core first went in lets tests/trainers check that it downgraded nothing
$(TRAINERS_LIBS): requirements-trainers.txt requirements-trainers-nodeps.txt requirements-trainers-verl-overlay.txt
	rm -rf $(TRAINERS_VENV)
	$(PYTHON) -m venv $(TRAINERS_VENV)
	$(TRAINERS_VENV)/bin/pip install --quiet --upgrade pip
	$(TRAINERS_VENV)/bin/pip install --quiet -r requirements-trainers.txt
	$(TRAINERS_VENV)/bin/pip install --quiet --no-deps -r requirements-trainers-nodeps.txt
	$(TRAINERS_VENV)/bin/pip install --quiet --no-deps --target $(VERL_OVERLAY) -r requirements-trainers-verl-overlay.txt
	@# verl's and OpenRLHF's wheels install their own test suites as a top-level `tests` package,
	@# which would shadow this repository's tests/ (tests.export_fixture, tests.trainers)
	rm -rf "$$($(TRAINERS_VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/tests"
	$(TRAINERS_VENV)/bin/pip freeze --all > $(TRAINERS_VENV)/freeze-before-envpipeline.txt
	touch $(TRAINERS_LIBS)

$(TRAINERS_STAMP): $(TRAINERS_LIBS) pyproject.toml
	$(TRAINERS_VENV)/bin/pip install --quiet -e .
	touch $(TRAINERS_STAMP)

trainers-env: $(TRAINERS_STAMP) ## .venv-trainers: torch, transformers, TRL, datasets, SkyRL, verifiers, verl, OpenRLHF + the lean core

test-trainers: $(TRAINERS_STAMP) ## the tests that need the real trainer libraries (tests/trainers), in .venv-trainers
	HF_HUB_OFFLINE=1 ENVPIPELINE_VERL_OVERLAY=$(VERL_OVERLAY) $(TRAINERS_VENV)/bin/python -m pytest tests/trainers; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests in tests/trainers" >&2; exit 1; fi; exit $$rc

system-deps: ## bubblewrap for the local sandbox, chromium for the browser tests, the PostgreSQL server for the Postgres instance test (apt, when running as root)
	@{ command -v bwrap && command -v chromium && { command -v initdb || ls /usr/lib/postgresql/*/bin/initdb; }; } >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && apt-get install -y -qq bubblewrap chromium postgresql >/dev/null; \
	  else echo "warning: bubblewrap, chromium or postgresql is missing; install them for the local sandbox, browser and Postgres instance tests" >&2; fi; }

sandbox-ready: system-deps ## the local sandbox and its root filesystem, plus the Docker base image wherever an engine answers
	@if docker info >/dev/null 2>&1; then $(MAKE) --no-print-directory base-image; \
	else echo "no Docker engine: bundles run in the local sandbox"; fi
	@$(MAKE) --no-print-directory base-rootfs || \
	  echo "warning: no base root filesystem: the local sandbox runs on the host's /usr (and says so in verdicts)" >&2

run: $(STAMP) sandbox-ready ## materialize the whole asset graph offline and print a summary
	$(BIN)/envpipeline run

TRAINERS_LOG := .venv-trainers.log
# test files spread over this many workers (pytest-xdist; a file's tests stay on one worker, so
# module fixtures are built once): most tests wait on sandboxes and subprocesses. Files go out in
# collection order (dagster/, docker/, e2e/, then unit/), not xdist's default of the most tests
# first, which left the one-test files (an image build, a daemon chain, the default job) for last
# on one worker while the other idled (20.9 min for 18.7 min of work per worker)
PYTEST_WORKERS ?= 2
PYTEST_PARALLEL := -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder
test: $(STAMP) sandbox-ready ## lint, format check, type check, every test; tests/trainers in .venv-trainers alongside
	$(MAKE) --no-print-directory lint
	@# the trainers' environment (mostly downloads) and its tests run beside the main suite
	$(MAKE) --no-print-directory test-trainers > $(TRAINERS_LOG) 2>&1 & trainers=$$!; \
	$(BIN)/python -m pytest $(PYTEST_PARALLEL); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests" >&2; rc=1; fi; \
	wait $$trainers; trc=$$?; echo "--- tests/trainers (.venv-trainers) ---"; cat $(TRAINERS_LOG); \
	if [ $$trc -ne 0 ]; then echo "tests/trainers failed ($$trc)" >&2; [ $$rc -ne 0 ] || rc=1; fi; exit $$rc

test-full: $(STAMP) sandbox-ready ## every test, including the full matrices CI samples (full_matrix)
	$(BIN)/python -m pytest $(PYTEST_PARALLEL) -m "full_matrix or not full_matrix"

lint: $(STAMP) ## ruff check, ruff format --check, and basedpyright (standard) on envpipeline/, assets/, resources/
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/basedpyright

ui: $(STAMP) ## the Dagster UI with run history kept in ./dagster_home
	@# the instance settings follow dagster.yaml while the copy keeps its envpipeline-managed line
	mkdir -p dagster_home
	if [ ! -f dagster_home/dagster.yaml ] || grep -q envpipeline-managed dagster_home/dagster.yaml; then \
		cp dagster.yaml dagster_home/dagster.yaml; fi
	DAGSTER_HOME=$(CURDIR)/dagster_home ENVPIPELINE_HOME=$${ENVPIPELINE_HOME:-$(CURDIR)/data} \
		PYTHONPATH=$(CURDIR)$${PYTHONPATH:+:$$PYTHONPATH} $(BIN)/dagster dev -w workspace.yaml

bench: $(STAMP) ## print throughput figures
	$(BIN)/python bench/compose_throughput.py
	$(BIN)/python bench/redteam_compose.py --candidates 1000
	$(BIN)/python bench/sandbox_bench.py
	$(BIN)/pip install --quiet -c $(LOCK) -e ".[bench]"
	$(BIN)/python bench/milp_bench.py
	$(BIN)/python bench/world_bench.py --gates

bench-run: $(STAMP) sandbox-ready ## the default job queued (run queue + daemon) against the serial loop, same run
	ENVPIPELINE_SANDBOX=$${ENVPIPELINE_SANDBOX:-local} $(BIN)/python bench/default_run.py

base-image: ## build the offline Docker base image envpipeline/base:bookworm (no-op when current)
	scripts/build-base-image.sh

image: $(STAMP) base-image ## the project image envpipeline-project:<hash> (+ :latest) the runs of deploy/docker-local run in (no-op when current)
	@PYTHON=$(BIN)/python scripts/build-project-image.sh

HARBOR_SAMPLE ?= out/harbor-sample
harbor-validate: $(STAMP) ## export every terminal family, composed and world tasks (offline and portable); bundle check, verify (offline), Harbor's validator
	rm -rf $(HARBOR_SAMPLE)
	$(BIN)/python -m envpipeline.export.harbor_sample $(HARBOR_SAMPLE)
	$(BIN)/envpipeline bundle check $(HARBOR_SAMPLE)/*
	$(BIN)/envpipeline bundle verify --sandbox $${ENVPIPELINE_SANDBOX:-local} $(HARBOR_SAMPLE)/*
	scripts/harbor-validate.sh $(HARBOR_SAMPLE)
	rm -rf $(HARBOR_SAMPLE)-portable
	$(BIN)/python -m envpipeline.export.harbor_sample $(HARBOR_SAMPLE)-portable --mode portable
	$(BIN)/envpipeline bundle check $(HARBOR_SAMPLE)-portable/*
	scripts/harbor-validate.sh $(HARBOR_SAMPLE)-portable

base-rootfs: $(STAMP) ## the base image's root filesystem for the local sandbox (docker export, else mmdebstrap; cached per image, no-op when current)
	$(BIN)/python -m envpipeline.sandbox.rootfs

clean:
	rm -rf data dagster_home .pytest_cache .ruff_cache
