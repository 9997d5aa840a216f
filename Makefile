# Quick start: `make demo` runs the main batch job on a local Dask cluster, `make batch` the batch NTT
# workflow, `make test` runs the tests, `make lint` the lint, format and type checks.
# Each creates .venv with the package installed (editable) on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test,dev,plot]'
	touch $@

.PHONY: demo batch test lint format hooks install clean
install: $(BIN)/.installed

demo: $(BIN)/.installed
	$(BIN)/hebatch demo

batch: $(BIN)/.installed
	$(BIN)/hebatch run workflows/batch_ntt.toml

test: $(BIN)/.installed
	$(BIN)/python -m pytest

# The checks CI runs before the tests (settings in pyproject.toml); `make format` applies the fixes.
# All three run, so one pass shows every finding; any failure fails the target.
lint: $(BIN)/.installed
	@status=0; \
	echo "ruff check"; $(BIN)/ruff check . || status=1; \
	echo "ruff format --check"; $(BIN)/ruff format --check . || status=1; \
	echo "mypy"; $(BIN)/mypy || status=1; \
	exit $$status

format: $(BIN)/.installed
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# The same checks on every commit (.pre-commit-config.yaml).
hooks: $(BIN)/.installed
	$(BIN)/python -m pip install -q 'pre-commit>=4'
	$(BIN)/pre-commit install

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis .ruff_cache .mypy_cache
