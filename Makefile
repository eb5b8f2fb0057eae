# ariadne_lc: `make demo` runs the main job, `make test` runs every test. Both set everything up first
# (a virtual environment in .venv with the project and what it needs) on a machine with only Python.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMPS := $(VENV)/.stamps

.PHONY: demo test lint typecheck bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# The project with its dev tools (pytest, the OpenTelemetry SDK, mypy, ruff).
$(STAMPS)/dev: pyproject.toml | $(PY)
	$(PIP) install --quiet -e '.[dev]'
	@mkdir -p $(STAMPS) && touch $@

# The embeddings extra, for the EmbeddingScorer tests. torch==2.13.0 is named on the command line on
# purpose: that exact version is a local CPU build here, and any other spec pulls a multi-GB CUDA one.
$(STAMPS)/embeddings: pyproject.toml | $(STAMPS)/dev
	$(PIP) install --quiet 'torch==2.13.0' -e '.[dev,embeddings]'
	@mkdir -p $(STAMPS) && touch $@

demo: $(STAMPS)/dev
	$(PY) examples/quickstart.py

test: $(STAMPS)/dev $(STAMPS)/embeddings
	@# pytest exits 5 when it collects nothing: that must fail, never pass.
	$(PY) -m pytest -p no:cacheprovider -q; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; \
	  exit $$rc
	$(MAKE) --no-print-directory lint typecheck

lint: $(STAMPS)/dev
	$(VENV)/bin/ruff check ariadne_lc tests examples benchmarks

typecheck: $(STAMPS)/dev
	$(VENV)/bin/mypy

bench: $(STAMPS)/dev
	$(PY) benchmarks/recorder_overhead.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
