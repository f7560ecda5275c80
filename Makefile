# The two commands of the README: `make serve` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 5000

.PHONY: serve test lint format bench clean install install-test

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

bench: install-test
	$(BIN)/python benchmarks/import_export.py
	$(BIN)/python benchmarks/metrics.py
	$(BIN)/python benchmarks/startup.py
	$(BIN)/python benchmarks/dashboard.py
	$(BIN)/python benchmarks/study_page.py
	$(BIN)/python benchmarks/score_post.py --postgres-url postgresql://postgres@127.0.0.1:5432/test
	$(BIN)/python benchmarks/load.py
	$(BIN)/python benchmarks/goals.py
	$(BIN)/python benchmarks/rating_keyboard.py
	$(BIN)/python benchmarks/rater_quality.py
	$(BIN)/python benchmarks/agreement_tables.py
	$(BIN)/python benchmarks/rater_status.py
	$(BIN)/python benchmarks/overlap_study.py --postgres-url postgresql://postgres@127.0.0.1:5432/test
	$(BIN)/python benchmarks/jobs.py
	$(BIN)/python benchmarks/scaleout.py --postgres-url postgresql://postgres@127.0.0.1:5432/postgres
	$(BIN)/python benchmarks/report.py
	$(BIN)/python benchmarks/report_rubric.py
	$(BIN)/python benchmarks/criteria_analysis.py
	$(BIN)/python benchmarks/alttest_replay.py
	$(BIN)/python benchmarks/demo.py
	$(BIN)/python benchmarks/first_request.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache
