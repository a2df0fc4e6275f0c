# Two entry points on a fresh machine: `make lab` and `make test`.
# Both create .venv when it is missing and install the project into it.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: lab test pytest nbval bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[lab,test]'
	touch $(STAMP)

lab: $(STAMP)
	$(BIN)/jupyter lab course/00-guide.ipynb

test: $(STAMP)
	$(BIN)/python -m pytest -q tests
	$(BIN)/python -m pytest -q -p no:cacheprovider --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg course labs

bench: $(STAMP)
	$(BIN)/python benchmarks/run_examples.py

clean:
	rm -rf $(VENV) .pytest_cache
