# The two commands of the README:
#   make demo   installs what the demo needs, then runs it (built-in corpus, bundled model, embedded store)
#   make test   installs everything, then runs the whole test suite
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: setup demo test lint bench eval

$(VENV)/.installed: pyproject.toml scripts/setup.sh
	bash scripts/setup.sh
	touch $@

setup: $(VENV)/.installed

demo: setup
	$(VENV)/bin/vrsd demo

test: setup
	$(PY) -m pytest

lint: setup
	$(VENV)/bin/ruff check vrsd_core vrsd_langchain vrsd_llamaindex tests benchmarks examples
	$(VENV)/bin/mypy

bench: setup
	$(PY) benchmarks/speed.py

eval: setup
	$(VENV)/bin/vrsd eval
