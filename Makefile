# The two set-up commands of the README: `make demo` and `make test`.  Both create .venv with
# Python 3.11+ and install the project from PyPI; nothing else is needed on the machine.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
RB     := $(VENV)/bin/rulebook

.PHONY: demo test bench install clean docs docs-browser web-browser fuzz

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
	@echo; echo "== rulebook prove torres on its smallest board (2x2, 2 players, stacks of 1): live, some 15 s on two cores"
	@echo "   (the proof on the game's own 8x8 board took hours: it is stored in docs/proofs/torres-8x8.json)"
	@$(RB) prove torres --param w=2 --param h=2 --players 2 --param stack=1
	@echo; echo "== rulebook play les-5-tours --players 4 --seed 7"; $(RB) play les-5-tours --players 4 --seed 7

# On every core (pytest-xdist); the slow tests are spread by work stealing.
test: $(VENV)/.installed
	$(PY) -m pytest -n auto --dist worksteal

# The documentation site (docs/_build/html), warnings as errors; game pages come from spec/.
$(VENV)/.docs-installed: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[test,docs]'
	touch $@

docs: $(VENV)/.docs-installed
	$(PY) -m sphinx -W --keep-going -q -b html docs docs/_build/html

# The site in headless Chromium (/usr/bin/chromium): the screenshot goes to build/artefacts/.
docs-browser: docs
	RULEBOOK_DOCS_HTML=docs/_build/html $(PY) -m pytest -q -m docs tests/docs/test_docs_browser.py \
	  tests/cli/test_long_check.py

# The explorer (rulebook serve) in headless Chromium (/usr/bin/chromium, /usr/bin/chromedriver);
# the screenshots go to build/artefacts/.
web-browser: $(VENV)/.installed
	$(PY) -m pytest -q -m browser tests/web/test_browser.py

# Fuzzing with a large budget (tests/fuzz, docs/cli.rst): FUZZ_ROUNDS rounds of every stream
# of generated inputs (puzzle, state and rules files, every command's options, playouts), each
# stream taking its share of FUZZ_ROUND_SECONDS of processor time per round, on one core
# (FUZZ_JOBS=2: on two).  One line per command in build/fuzz/log.jsonl, each failing input
# whole in build/fuzz/failures/; run it again to resume after a stop (rm -rf build/fuzz to
# start afresh).  About 40,000 commands an hour of one core.
FUZZ_ROUNDS ?= 15
FUZZ_ROUND_SECONDS ?= 240
FUZZ_JOBS ?= 0
fuzz: $(VENV)/.installed
	RULEBOOK_FUZZ_ROUNDS=$(FUZZ_ROUNDS) RULEBOOK_FUZZ_ROUND_SECONDS=$(FUZZ_ROUND_SECONDS) \
	  RULEBOOK_FUZZ_LOG=$(CURDIR)/build/fuzz/log.jsonl nice -n 10 $(PY) -m pytest -q \
	  -p no:cacheprovider -n $(FUZZ_JOBS) tests/fuzz/test_fuzz.py::test_fuzz; \
	status=$$?; $(PY) tests/support/fuzzreport.py build/fuzz/log.jsonl; exit $$status

bench: $(VENV)/.installed
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
