# Two entry points on a fresh machine: `make lab` and `make test`.
# Both create .venv when it is missing and install the project into it.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: lab test pytest nbval bench clean notebooks binder-url site

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[lab,test]'
	touch $(STAMP)

# JupyterLab serves the repository root (course/, labs/ and examples/ in its file browser) and opens the guide.
# The kernel finds `gpusim` on PATH (`!gpusim run ../examples/...` in a notebook). As root (containers, many
# cloud notebooks) JupyterLab needs --allow-root; JUPYTER_ARGS passes any other flag, e.g.
#   make lab JUPYTER_ARGS="--no-browser --ip=0.0.0.0 --port=8888"
JUPYTER_ARGS ?=
ALLOW_ROOT := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)

lab: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/jupyter lab --ServerApp.root_dir="$(CURDIR)" $(ALLOW_ROOT) $(JUPYTER_ARGS) course/00-guide.ipynb

# One pytest-xdist session runs the test files and the notebooks on every core (--dist loadfile: a file's tests,
# and its module fixtures, stay on one worker; a notebook is one file, so its cells run in order on one worker and
# one kernel, as nbval's loadscope mode would group them; one session instead of two lets the notebooks fill the
# cores while the slowest test files finish: 209 s against 130 + 105 s on this 2-core VM). Files go out longest first
# (tests/longest_first.py; --no-loadscope-reorder keeps that order instead of xdist's by-number-of-tests one).
# `make site` runs in the background meanwhile (12 s from scratch, otherwise a serial tail).
# compileall first: where PYTHONDONTWRITEBYTECODE is set (many CI images) no process would cache the package's
# bytecode, and each of the session's ~40 kernels and many CLI subprocesses would compile it again (0.4 s each).
# tests/nbval_kernel_retry.py starts a kernel again when it dies on startup, as parallel kernels racing for a port
# can. PYTEST_WORKERS=0 runs everything in this process.
PYTEST_WORKERS ?= auto
test: $(STAMP)
	$(BIN)/lint-imports
	$(BIN)/python -m compileall -q gpusim > /dev/null
	@mkdir -p build
	@# the site (which reads only committed files) builds alongside the tests; its log follows theirs
	$(MAKE) --no-print-directory site > build/site.log 2>&1 & site=$$!; \
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder -p tests.longest_first -p tests.nbval_kernel_retry --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg tests course labs/*/solution.ipynb; \
	tests=$$?; wait $$site; built=$$?; cat build/site.log; \
	[ $$built -eq 0 ] || echo "make site failed"; [ $$tests -eq 0 ] && [ $$built -eq 0 ]

# The course as a static site (build/site/course/index.html), from the committed outputs; any warning
# (a broken link, a missing image, a document outside the table of contents) fails the build.
site: $(STAMP)
	$(BIN)/sphinx-build -q -W --keep-going -b html -c course . build/site

bench: $(STAMP)
	$(BIN)/python benchmarks/run_examples.py

clean:
	rm -rf $(VENV) .pytest_cache

# Re-execute every notebook in place and drop volatile execution timestamps (outputs are committed).
notebooks: $(STAMP)
	for nb in course/*.ipynb labs/*/solution.ipynb; do (cd $$(dirname $$nb) && $(CURDIR)/$(BIN)/jupyter nbconvert --to notebook --execute --inplace $$(basename $$nb)); done
	$(BIN)/python -m gpusim.labs
	$(BIN)/python .ci/strip_execution_metadata.py

# The Binder link of this repository, formed from its GitHub remote (https or ssh form of `origin`).
BINDER_PATH := course%2F00-guide.ipynb
binder-url:
	@url=$$(git remote get-url origin 2>/dev/null) || { echo "no git remote origin: the link is https://mybinder.org/v2/gh/OWNER/REPO/HEAD?labpath=$(BINDER_PATH) with the repository's GitHub OWNER/REPO" >&2; exit 1; }; \
	slug=$$(printf '%s' "$$url" | sed -E 's#^(https://github\.com/|git@github\.com:|ssh://git@github\.com/)##; s#\.git$$##; s#/$$##'); \
	echo "https://mybinder.org/v2/gh/$$slug/HEAD?labpath=$(BINDER_PATH)"
