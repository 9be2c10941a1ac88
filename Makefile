# Two commands for a fresh machine: `make run` (set up + main job) and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
UV_VERSION := 0.13.9
export DAGSTER_HOME ?= $(CURDIR)/.dagster_home
export LEXPIPE_SAMPLE_DIR ?= $(abspath $(CURDIR)/../shared/data)
# Debian's Chromium, which tests/ui drives through Playwright (see `browser`)
CHROMIUM ?= /usr/bin/chromium

.PHONY: setup run test ui bench lock browser postgres
setup: $(VENV)/.installed

# Bytecode is compiled at install: uv does not by default, and where PYTHONDONTWRITEBYTECODE is set
# (as on these machines) no process ever caches it, so every Python process (each Dagster step,
# code server, CLI call) compiled dagster, sqlalchemy, pandas … from source again: importing the
# code location took 11.1–11.6 s CPU without .pyc files, 4.0–4.4 s with them (BENCHMARKS.md, "Test suite").
$(VENV)/.installed: requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q "uv==$(UV_VERSION)"
	$(BIN)/uv pip install -q --compile-bytecode --python $(BIN)/python -r requirements.lock
	$(BIN)/uv pip install -q --python $(BIN)/python --no-deps -e .
	$(BIN)/python -m compileall -q core schemas connectors pipelines assets lexpipe
	mkdir -p $(DAGSTER_HOME) && cp dagster.yaml $(DAGSTER_HOME)/dagster.yaml
	touch $@

run: setup
	$(BIN)/lexpipe run

ui: setup
	$(BIN)/lexpipe ui

# Two pytest workers (pytest-xdist), a test file per worker at a time: module fixtures (a slice
# import, a Dagster stack) are built once, and the production test's ~9 min of real processes
# overlap the rest of the suite. Files go out in collection order, longest first (tests/conftest.py:
# LONGEST_FIRST; xdist's default reorder, most tests first, ran the one-test production file last).
# TEST_WORKERS=0 runs in one process.
TEST_WORKERS ?= 2
test: setup browser postgres
	$(BIN)/python -m pytest -q --durations=20 -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

bench: setup
	$(BIN)/python bench/parse.py

# The browser test (tests/ui) drives the system Chromium; `playwright install` would download
# another one. Idempotent: nothing to do when it is there. Never fails make: without Chromium the
# test skips locally and fails under CI (CI=1), both with the command to run.
browser:
	@if [ -x "$(CHROMIUM)" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then as=""; elif command -v sudo >/dev/null 2>&1; then as="sudo -n"; else as=none; fi; \
	install="$$as env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium"; \
	if [ "$$as" != none ] && command -v apt-get >/dev/null 2>&1 && \
	   { $$install || { $$as apt-get update && $$install; }; } && [ -x "$(CHROMIUM)" ]; then \
	  echo "make browser: installed $(CHROMIUM)"; \
	else \
	  echo "make browser: could not install Chromium; run: sudo apt-get update && sudo apt-get install -y chromium" >&2; \
	fi

# The production-profile tests (tests/deploy, tests/lexpipe/test_deploy_check.py) start a throwaway
# PostgreSQL 15 cluster from Debian's `postgresql` package. As `browser`: idempotent, never fails
# make; without the binaries those tests skip locally and fail under CI (CI=1).
PG_BIN ?= /usr/lib/postgresql/15/bin
postgres:
	@if [ -x "$(PG_BIN)/initdb" ] && [ -x "$(PG_BIN)/pg_ctl" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then as=""; elif command -v sudo >/dev/null 2>&1; then as="sudo -n"; else as=none; fi; \
	install="$$as env DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql"; \
	if [ "$$as" != none ] && command -v apt-get >/dev/null 2>&1 && \
	   { $$install || { $$as apt-get update && $$install; }; } && [ -x "$(PG_BIN)/initdb" ]; then \
	  echo "make postgres: installed PostgreSQL in $(PG_BIN)"; \
	else \
	  echo "make postgres: could not install PostgreSQL; run: sudo apt-get update && sudo apt-get install -y postgresql" >&2; \
	fi

lock:  ## re-pin dependencies from pyproject.toml
	$(BIN)/uv pip compile --python-version 3.11 pyproject.toml --extra test -o requirements.lock
