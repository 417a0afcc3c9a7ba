# The two entry points of the README.  Both create .venv when it is missing
# and install the project with the versions of requirements/test.lock (the
# library itself keeps compatible ranges; the lock makes a fresh machine run
# the tests under the versions the seeded pins were made with).  `make lock`
# refreshes the lock from the newest versions the ranges allow; `make
# test-latest` runs the suite without it, in .venv-latest.  `make docs`
# builds the documentation site into site/ (strict: warnings, broken links
# and anchors are errors).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
LOCK   := requirements/test.lock
LATEST := .venv-latest
DOCS_STAMP := $(VENV)/.docs-stamp

.PHONY: demo test test-all test-latest lock bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): pyproject.toml setup.py $(LOCK) | $(BIN)/python
	$(BIN)/python -m pip install -q -c $(LOCK) -e ".[test]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/synthdp demo

# Two processes (the CI machine's two cores), each test file on one of them (module fixtures built once).
PARALLEL := -n 2 --dist loadfile

test: $(STAMP)
	$(BIN)/python -m pytest -q $(PARALLEL) --durations=20

test-all: $(STAMP)
	$(BIN)/python -m pytest -q $(PARALLEL) -m ""

# The suite against the newest versions the ranges allow (no lock): what a user installing today gets.
test-latest:
	rm -rf $(LATEST)
	$(PYTHON) -m venv $(LATEST)
	$(LATEST)/bin/python -m pip install -q --upgrade pip
	$(LATEST)/bin/python -m pip install -q -e ".[test]"
	$(LATEST)/bin/python -m pip list --format=freeze | grep -i -E '^(numpy|pandas|numba|scipy|ortools)=='
	$(LATEST)/bin/python -m pytest -q $(PARALLEL)

# Refresh requirements/test.lock: the newest versions the ranges allow, resolved in a scratch venv.
lock:
	rm -rf .venv-lock
	$(PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install -q --upgrade pip
	.venv-lock/bin/python -m pip install -q ".[test,docs]"
	.venv-lock/bin/python -m pip freeze --all --exclude-editable | grep -v -i -E '^(synthdp|pip|setuptools|wheel)( @ |==)' \
		| sort -f > $(LOCK).new
	mv $(LOCK).new $(LOCK)
	rm -rf .venv-lock

bench: $(STAMP)
	$(BIN)/synthdp bench oracles

$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -c $(LOCK) -e ".[docs]"
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) $(LATEST) results .pytest_cache site
