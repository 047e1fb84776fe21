# Two set-up-and-go commands: `make demo` (the main job) and `make test` (the tests).
PY ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXTRAS ?= dev,interp,browser
export OMP_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1
export OPENBLAS_NUM_THREADS ?= 1
# pytest-xdist workers for `make test` / `make coverage`: one per CPU core (each single-threaded).
TEST_WORKERS ?= auto

.PHONY: demo test coverage lint format bench clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[$(EXTRAS)]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/demo.py

test: $(STAMP)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS)

# The same test run as `make test`, under coverage.py (line coverage of src/rasplab, CLI and
# worker subprocesses included, the pytest-xdist workers too; settings in pyproject.toml). Costs
# ~2.4x the CPU of `make test` on Python 3.11 (no sys.monitoring core there), so CI runs it
# instead of `make test`.
coverage: export COVERAGE_FILE = $(CURDIR)/.coverage
coverage: $(STAMP)
	$(BIN)/python -m coverage erase
	$(BIN)/python -m coverage run -m pytest -q -n $(TEST_WORKERS)
	$(BIN)/python -m coverage combine -q
	$(BIN)/python -m coverage report --sort=cover
	@echo "line coverage (total): $$($(BIN)/python -m coverage report --format=total)%"

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples

format: $(STAMP)
	$(BIN)/ruff check --fix src tests benchmarks examples
	$(BIN)/ruff format src tests benchmarks examples

clean:
	rm -rf $(VENV) build dist src/*.egg-info .coverage .coverage.* htmlcov
