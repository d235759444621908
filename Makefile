# Feedback Analytics: everyday commands. `make help` lists them.
#
#   make demo         demo data -> warehouse -> dbt build -> dashboard on :8501
#                     (make demo DASHBOARD_PORT=8502 AS_OF=2026-05-01: another port, another day)
#   make test         the test suite (installs PostgreSQL, chromium, Java 17 and the CJK and emoji
#                     fonts with apt-get when missing: scripts/install-system-packages)
#   make lint         ruff + sqlfluff, as CI would
#
# Every target that runs project code depends on `venv`, which creates
# .venv and installs the project with its dev extras, and re-installs only
# when pyproject.toml changed since the last install.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
VENV_STAMP := $(VENV)/.installed-from-pyproject

# As-of date for the demo data and the build, today in UTC unless given:
#   make demo AS_OF=2026-05-01
AS_OF ?= $(shell date -u +%F)
AS_OF := $(AS_OF)
DEMO_DIR := demo-data
DASHBOARD_PORT ?= 8501

PYTHON_PATHS := $(wildcard warehouse cli demo ingest operations dashboards tests bench scripts)
SQL_PATHS := $(wildcard models tests/dbt)
MACRO_PATHS := $(wildcard macros)
PYTEST_ARGS ?=
# pytest-xdist workers: each takes whole test files (their module fixtures, such as a built warehouse, are
# built once), and each builds the session's shared demo warehouse for itself. TEST_WORKERS=0: one process.
TEST_WORKERS ?= 2

.PHONY: help venv demo test system-packages lint bench clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

venv: $(VENV_STAMP)  ## create .venv and install the project (pip runs again only when pyproject.toml changes)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,spark]'
	touch $@

demo: venv  ## generate demo data as of AS_OF, ingest it, build the models, start the dashboard
	$(BIN)/feedback-analytics demo-data $(DEMO_DIR) --as-of $(AS_OF)
	$(BIN)/feedback-analytics ingest --config $(DEMO_DIR)/sources.toml
	$(BIN)/feedback-analytics build --as-of $(AS_OF)
	$(BIN)/feedback-analytics dashboard --port $(DASHBOARD_PORT)

# System packages first (PostgreSQL, chromium: apt-get, when root or sudo allows;
# otherwise their suites are skipped and listed at the end, and fail under CI).
# pytest's own exit codes pass through: 5 ("no tests collected") fails too.
test: system-packages venv  ## install missing system packages, run the test suite on TEST_WORKERS=2 workers (PYTEST_ARGS='-k dbt -x')
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

system-packages:  ## apt-get install what the suites need and the machine lacks (postgresql, chromium, python3-venv, Java 17, CJK and emoji fonts)
	scripts/install-system-packages

# sqlfluff's dbt templater compiles the project through profiles.yml; an
# in-memory database keeps it off the real warehouse file (and its lock).
# It lints dbt nodes only and skips macro files, so macros/ gets a second run
# with the jinja templater (macros/.sqlfluff says what that checks).
lint: venv  ## ruff check + format check on the Python code, sqlfluff on the dbt SQL and macros
	$(BIN)/ruff check $(PYTHON_PATHS)
	$(BIN)/ruff format --check $(PYTHON_PATHS)
	@if [ -n "$(SQL_PATHS)" ] && [ -n "$$(find $(SQL_PATHS) -name '*.sql' -print -quit)" ]; then \
		echo "FEEDBACK_DB=:memory: $(BIN)/sqlfluff lint $(SQL_PATHS)"; \
		FEEDBACK_DB=:memory: $(BIN)/sqlfluff lint $(SQL_PATHS); \
	else \
		echo "sqlfluff: no SQL files under models/ or tests/dbt/ yet, skipped"; \
	fi
	@if [ -n "$(MACRO_PATHS)" ] && [ -n "$$(find $(MACRO_PATHS) -name '*.sql' -print -quit)" ]; then \
		echo "$(BIN)/sqlfluff lint --templater jinja $(MACRO_PATHS)"; \
		$(BIN)/sqlfluff lint --templater jinja $(MACRO_PATHS); \
	else \
		echo "sqlfluff: no SQL files under macros/ yet, skipped"; \
	fi

bench: venv  ## run the benchmarks (bench/run.py)
	$(BIN)/python -m bench.run

# Generated files only: the warehouse (feedback.duckdb) may hold real data and
# the venv is expensive to rebuild, so both stay; delete them by hand.
clean:  ## remove build output, caches and demo data
	rm -rf target dbt_packages logs $(DEMO_DIR) bench/out tests/artifacts
	rm -rf .pytest_cache .ruff_cache build *.egg-info
	find . \( -path ./$(VENV) -o -path ./.git \) -prune -o -type d -name __pycache__ -prune -exec rm -rf {} +
