# pitree — every target sets up what it needs (a virtualenv in .venv) on a fresh clone.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
FILE ?=

.PHONY: run test check bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test,llm,serve]"
	touch $@

# Open a session (`make run FILE=path/to/session.jsonl`), or the bundled demo.
run: $(VENV)/.installed
	@if [ -n "$(FILE)" ]; then $(VENV)/bin/pitree "$(FILE)"; else $(VENV)/bin/pitree --demo; fi

# The whole test suite. Pi-parity tests need Node.js and install Pi's npm package into bench/node_modules.
test: $(VENV)/.installed
	-@bash bench/setup_node.sh >/dev/null 2>&1 || echo "note: Pi's npm package not installed; Pi-parity tests will skip"
	$(PY) -m pytest

check: test
	$(VENV)/bin/ruff check app widgets tests bench
	$(VENV)/bin/mypy

bench: $(VENV)/.installed
	bash bench/setup_node.sh
	$(PY) bench/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache bench/out
