# Two commands for a fresh machine: `make run` (set up + main job) and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
UV_VERSION := 0.13.9
export DAGSTER_HOME ?= $(CURDIR)/.dagster_home
export LEXPIPE_SAMPLE_DIR ?= $(abspath $(CURDIR)/../shared/data)

.PHONY: setup run test ui bench lock
setup: $(VENV)/.installed

$(VENV)/.installed: requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q "uv==$(UV_VERSION)"
	$(BIN)/uv pip install -q --python $(BIN)/python -r requirements.lock
	$(BIN)/uv pip install -q --python $(BIN)/python --no-deps -e .
	mkdir -p $(DAGSTER_HOME) && cp dagster.yaml $(DAGSTER_HOME)/dagster.yaml
	touch $@

run: setup
	$(BIN)/lexpipe run

ui: setup
	$(BIN)/lexpipe ui

test: setup
	$(BIN)/python -m pytest -q

bench: setup
	$(BIN)/python bench/parse.py

lock:  ## re-pin dependencies from pyproject.toml
	$(BIN)/uv pip compile --python-version 3.11 pyproject.toml --extra test -o requirements.lock
