# The two commands of the README: `make serve` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 5000

.PHONY: serve test lint format bench bench-quick clean install install-test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Stamp files: reinstall when pyproject.toml changes.
$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

serve: install
	$(BIN)/annotator serve --host $(HOST) --port $(PORT) \
		$(if $(WORKERS),--workers $(WORKERS)) $(if $(THREADS),--threads $(THREADS))

lint: install-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache

format: install-test
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# On every core (pytest-xdist). Each test has its own tmp_path, database (file or
# PostgreSQL schema), free port and queue name, so tests run side by side; those that
# must not run at the same time as each other share an xdist_group mark and go to one
# worker (--dist loadgroup). PYTEST_XDIST= (empty) runs the suite in one process.
PYTEST_XDIST ?= -n auto --dist loadgroup
test: lint
	$(BIN)/python -m pytest $(PYTEST_XDIST) $(PYTEST_ARGS)

# Every benchmark, each figure merged into benchmarks/results.json beside its goal, then
# the table of docs/performance.md written from it (benchmarks/table.py). PostgreSQL at
# BENCH_PG; scaleout.py needs nginx (docs/performance.md).
BENCH_PG ?= postgresql://postgres@127.0.0.1:5432/test
bench: install-test
	$(BIN)/python benchmarks/import_export.py
	$(BIN)/python benchmarks/import_export.py --database-url $(BENCH_PG)
	$(BIN)/python benchmarks/metrics.py
	$(BIN)/python benchmarks/startup.py
	$(BIN)/python benchmarks/dashboard.py
	$(BIN)/python benchmarks/study_page.py
	$(BIN)/python benchmarks/rater_quality.py
	$(BIN)/python benchmarks/score_post.py --postgres-url $(BENCH_PG)
	$(BIN)/python benchmarks/load.py --postgres-url $(BENCH_PG)
	$(BIN)/python benchmarks/goals.py --postgres-url $(BENCH_PG)
	$(BIN)/python benchmarks/rating_keyboard.py
	$(BIN)/python benchmarks/jobs.py
	$(BIN)/python benchmarks/report.py
	$(BIN)/python benchmarks/report_rubric.py
	$(BIN)/python benchmarks/criteria_analysis.py
	$(BIN)/python benchmarks/alttest_replay.py
	$(BIN)/python benchmarks/first_request.py
	$(BIN)/python benchmarks/whole_process.py
	$(BIN)/python benchmarks/scaleout.py --postgres-url postgresql://postgres@127.0.0.1:5432/postgres
	$(BIN)/python benchmarks/table.py

# Every benchmark at tiny sizes, SQLite only: proves each runs (tests/test_benchmarks.py
# runs the same list); the figures go to build/bench-quick/results.json, never over
# the real ones. scaleout.py is left out: it needs nginx, installed as root.
bench-quick: install-test
	$(BIN)/python benchmarks/import_export.py --quick
	$(BIN)/python benchmarks/metrics.py --quick
	$(BIN)/python benchmarks/startup.py --quick
	$(BIN)/python benchmarks/dashboard.py --quick
	$(BIN)/python benchmarks/study_page.py --quick
	$(BIN)/python benchmarks/rater_quality.py --quick
	$(BIN)/python benchmarks/score_post.py --quick
	$(BIN)/python benchmarks/load.py --quick
	$(BIN)/python benchmarks/goals.py --quick
	$(BIN)/python benchmarks/rating_keyboard.py --quick
	$(BIN)/python benchmarks/jobs.py --quick
	$(BIN)/python benchmarks/report.py --quick
	$(BIN)/python benchmarks/report_rubric.py --quick
	$(BIN)/python benchmarks/criteria_analysis.py --quick
	$(BIN)/python benchmarks/alttest_replay.py --quick
	$(BIN)/python benchmarks/first_request.py --quick
	$(BIN)/python benchmarks/whole_process.py --quick

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache
