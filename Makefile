# The two set-up commands of the README: `make demo` and `make test`.  Both create .venv with
# Python 3.11+ and install the project from PyPI; nothing else is needed on the machine.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
RB     := $(VENV)/bin/rulebook

.PHONY: demo test bench install clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

install: $(VENV)/.installed

demo: $(VENV)/.installed
	@echo "== rulebook check les-5-tours"; $(RB) check les-5-tours
	@echo; echo "== rulebook solve examples/puzzles/lou.json"; $(RB) solve examples/puzzles/lou.json
	@echo; echo "== rulebook examples les-5-tours"; $(RB) examples les-5-tours
	@echo; echo "== rulebook prove les-5-tours --depth 2   (about 3 minutes)"; $(RB) prove les-5-tours --depth 2
	@echo; echo "== rulebook play les-5-tours --players 4 --seed 7"; $(RB) play les-5-tours --players 4 --seed 7

test: $(VENV)/.installed
	$(PY) -m pytest

bench: $(VENV)/.installed
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
