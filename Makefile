# Quick start: `make demo` runs the demo batch job, `make batch` the batch NTT workflow on a local
# cluster, `make test` runs the tests.
# Each creates .venv with the package installed (editable) on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $@

.PHONY: demo batch test install clean
install: $(BIN)/.installed

demo: $(BIN)/.installed
	$(BIN)/hebatch demo

batch: $(BIN)/.installed
	$(BIN)/hebatch run workflows/batch_ntt.toml

test: $(BIN)/.installed
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
