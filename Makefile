# pitree — every target sets up what it needs (a virtualenv in .venv) on a fresh clone.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
FILE ?=

.PHONY: run test check bench bench-quick clean

# What running pitree needs (the summarizers' and --serve's packages included); `make run` stops here.
$(VENV)/.runtime: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[llm,serve]"
	touch $@

# Plus the test tools (pytest, ruff, mypy, playwright) for `make test`, `make check` and `make bench`.
$(VENV)/.installed: $(VENV)/.runtime
	$(PY) -m pip install --quiet -e ".[test,llm,serve]"
	touch $@

# Open a session (`make run FILE=path/to/session.jsonl`), or the bundled demo.
run: $(VENV)/.runtime
	@if [ -n "$(FILE)" ]; then $(VENV)/bin/pitree "$(FILE)"; else $(VENV)/bin/pitree --demo; fi

# The whole test suite. Pi-parity tests need Node.js: Pi 0.73.1 goes into bench/node_modules, Pi 1.6.0 and its
# Node 22 into bench/pi1/node_modules (bench/setup_node.sh).
test: $(VENV)/.installed
	-@bash bench/setup_node.sh >/dev/null 2>&1 || echo "note: Pi's npm packages not (all) installed; their parity tests will skip"
	$(PY) -m pytest

check: test
	$(VENV)/bin/ruff check app widgets tests bench
	$(VENV)/bin/mypy

# Every benchmark (half an hour or more with the 1M-entry session and the 3,000-session store; files generated once into
# bench/out); writes the README's figures.
bench: $(VENV)/.installed
	bash bench/setup_node.sh
	$(PY) bench/run_all.py

# Every benchmark at small sizes (~3 min); writes bench/out/results.quick.md and leaves README.md alone.
bench-quick: $(VENV)/.installed
	-@bash bench/setup_node.sh >/dev/null 2>&1 || echo "note: Pi's npm package not installed; Pi columns will say so"
	$(PY) bench/run_all.py --quick

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache bench/out
