# The quick-start commands: `make play`, `make learn` and `make test`.
# Each creates .venv and installs the project with its [dev] extra when needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: play learn test slow budget lint typecheck contracts unit bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

play: $(STAMP)
	$(BIN)/tulips play

learn: $(STAMP)
	$(BIN)/tulips learn

test: lint typecheck contracts unit

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

contracts: $(STAMP)
	$(BIN)/lint-imports

# One worker more than there are cores (pytest-xdist): the tests spend part of
# their time waiting (sockets, subprocesses, a pilot's pauses), and the extra
# worker keeps the cores busy meanwhile (on 2 cores: 8m58s -> 7m26s). An idle
# worker takes tests from a busy one (worksteal: a long test started late does
# not hold the run up); --durations names the slowest tests.
WORKERS ?= $(shell $(PYTHON) -c "import os; print((os.cpu_count() or 1) + 1)")
unit: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow and not alone" -n $(WORKERS) --dist worksteal --durations=15
	$(BIN)/python -m pytest -q -m "not slow and alone"

# Soak, sweep and load tests (a few minutes); CI runs them after `make test`,
# with SLOW="slow and not soak": the biggest soaks (marked soak) repeat at
# larger counts what smaller siblings in the unit run check, and would take CI
# past its time.
SLOW ?= slow
slow: $(STAMP)
	$(BIN)/python -m pytest -q -m "($(SLOW)) and not alone" -n auto --dist worksteal --durations=15
	$(BIN)/python -m pytest -q -m "($(SLOW)) and alone"

# The deterministic budget (server/lab/budget.py): instructions, frames and bytes per
# action and memory per player, against the figures recorded in server/lab/budget.json;
# fails on a regression beyond the record's tolerance. Needs valgrind (CI installs it).
budget: $(STAMP)
	$(BIN)/python -m server.lab.budget --check

bench: $(STAMP)
	$(BIN)/python -m engine.lab.bench

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis
