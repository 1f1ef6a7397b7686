"""Work units of the bundled sample scored without a model: the real read, scoring and part code
with a deterministic hashed bag-of-words encoder (tests/score/evaluators/evaluator_embeddings.py),
so merge tests need no model and run in seconds."""

from __future__ import annotations

import dataclasses
import hashlib
import random
import sys
from pathlib import Path
from typing import Any

from hteb_score import SAMPLE_REVISION, SAMPLE_STORE
from hteb_score.encoding.encoder import EmbeddingTable
from hteb_score.evaluators.protocol import PROTOCOLS
from hteb_score.report.card.card import package_versions
from hteb_score.scoring.data import read_data
from hteb_score.scoring.options import ScoreOptions
from hteb_score.scoring.parts import ScorePart, run_identity, units_of_run
from hteb_score.scoring.run import score_variants

sys.path.insert(0, str(Path(__file__).parent / "evaluators"))
from evaluator_embeddings import hashed_bow  # noqa: E402

#: the sample's small datasets (Banking77 is slow), in the revision's order
SMALL = ["STSBenchmark", "SemRel2024", "TwitterSemEval2015", "SciFact"]

MODEL = {
    "model_id": "hashed-bow",
    "revision": None,
    "embedding_dim": 64,
    "similarity": "cosine",
    "identity": "sha256:" + hashlib.sha256(b"hashed-bow-64").hexdigest(),
}
ENCODE = {
    "batch_size": 32,
    "dtype": "float32",
    "normalize": False,
    "device": "cpu",
    "max_seq_length": None,
    "prompts": {},
    "trust_remote_code": False,
    "backend": "torch",
    "precision": "fp32",
    "max_diff_vs_torch_fp32": None,
    "token_budget": None,
}


class HashedBow:
    """Word counts hashed into 64 buckets, queries apart from documents."""

    identity = MODEL["identity"]
    model_id = MODEL["model_id"]

    def prompt_key(self, task, prompt_type):
        return prompt_type

    def encode(self, texts, prompt_type, *, task=None):
        return hashed_bow(texts, prompt_type, dim=64)


_SCORED: dict[str, ScorePart] = {}


def scored_part(
    part: list[str] | None, *, planned: list[str] = SMALL, encode: dict[str, Any] | None = None, **settings: Any
) -> ScorePart:
    """The part of `planned` that `part` names (None: all of it), scored as `hteb-score --part` does;
    `settings`: ScoreOptions fields (protocol by name; source_dir for dataset folders, or store and ref for
    another revision, instead of the sample).
    Scored once per test session: a part is never changed in place (`with_identity` makes a new one)."""
    key = repr((part, planned, encode, sorted(settings.items())))
    if key not in _SCORED:
        _SCORED[key] = _scored_part(part, planned=planned, encode=encode, **settings)
    return _SCORED[key]


def _scored_part(
    part: list[str] | None, *, planned: list[str], encode: dict[str, Any] | None, **settings: Any
) -> ScorePart:
    protocol = PROTOCOLS.get(settings.pop("protocol", "hteb"))
    data = (
        {} if {"source_dir", "store"} & set(settings) else {"store": f"file://{SAMPLE_STORE}", "ref": SAMPLE_REVISION}
    )
    options = ScoreOptions(
        model_id=None,
        protocol=protocol,
        encoder="sentence-transformers",
        datasets=planned,
        part=part,
        quiet=True,
        **data,
        **settings,
    )
    data = read_data(options)
    run = score_variants(
        data.groups,
        EmbeddingTable(HashedBow()),
        protocol=protocol,
        progress=False,
        filtered=options.min_judge is not None,
        flags=data.checked,
    )
    tasks = {info.name: info.to_json() for info in data.groups.infos}
    identity = run_identity(
        options,
        data.planned,
        data.provenance,
        MODEL,
        encode or ENCODE,
        package_versions(),
        chosen=data.chosen,
        taxonomy=data.taxonomy,
    )
    return ScorePart(identity, units_of_run(run, tasks, data.error_policy, None), {"total_s": 1.0})


def write_part(part: ScorePart, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    part.write(folder)
    return folder


def with_identity(part: ScorePart, **changes: Any) -> ScorePart:
    """The part as if made under another identity (a field of it changed)."""
    return dataclasses.replace(part, identity=dataclasses.replace(part.identity, **changes))


def another_release(rng: random.Random, installed: str | None) -> str:
    """A generated release number that is not `installed`: the version another machine's install took."""
    while True:
        version = f"{rng.randrange(1, 40)}.{rng.randrange(0, 30)}.{rng.randrange(0, 9)}"
        if version != installed:
            return version
