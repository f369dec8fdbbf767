# The two commands of the README:
#   make demo   installs only what the demo needs, then runs it (built-in corpus, bundled model, embedded store)
#   make test   installs everything, then runs the whole test suite
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: setup demo test lint bench eval figures dist

# One stamp per set of extras: `make demo` then `make test` still installs the test tools.
$(VENV)/.installed-%: pyproject.toml scripts/setup.sh
	EXTRAS=$* bash scripts/setup.sh
	touch $@

setup: $(VENV)/.installed-dev

demo: $(VENV)/.installed-demo
	$(VENV)/bin/vrsd demo

test: $(VENV)/.installed-dev
	$(PY) -m pytest

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

bench: setup
	$(PY) benchmarks/speed.py

eval: $(VENV)/.installed-eval
	$(VENV)/bin/vrsd eval paper

# every figure the README and docs quote: the protocols and benchmarks run, their results
# files written to docs/results, the generated blocks rewritten (tests/test_docs_figures.py)
figures: $(VENV)/.installed-dev
	$(PY) scripts/figures.py

# the wheel and sdist in dist/, their metadata checked (tests/integration_tests/packaging/test_build.py)
dist: setup
	rm -rf dist
	$(PY) -m build --outdir dist .
	$(PY) -m twine check --strict dist/*
