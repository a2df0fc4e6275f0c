# Two entry points on a fresh machine: `make lab` and `make test`.
# Both create .venv when it is missing and install the project into it.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: lab test pytest nbval bench clean notebooks

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[lab,test]'
	touch $(STAMP)

lab: $(STAMP)
	$(BIN)/jupyter lab course/00-guide.ipynb

test: $(STAMP)
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q tests
	$(BIN)/python -m pytest -q -p no:cacheprovider --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg course labs/*/solution.ipynb

bench: $(STAMP)
	$(BIN)/python benchmarks/run_examples.py

clean:
	rm -rf $(VENV) .pytest_cache

# Re-execute every notebook in place and drop volatile execution timestamps (outputs are committed).
notebooks: $(STAMP)
	for nb in course/*.ipynb labs/*/solution.ipynb; do (cd $$(dirname $$nb) && $(CURDIR)/$(BIN)/jupyter nbconvert --to notebook --execute --inplace $$(basename $$nb)); done
	$(BIN)/python -m gpusim.labs
	$(BIN)/python .ci/strip_execution_metadata.py
