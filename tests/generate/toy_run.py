"""A generator run and a scoring run in a fresh interpreter, for a checkout that has just been
extended (tests/generate/test_adding_a_transformation.py): `python toy_run.py WORK TRANSFORMATION
DATA`. The generator's model is a stand-in that needs no weights (it keeps the first two thirds of
each text's words and prefers "yes"), the scorer's a hashed bag of words given as a factory of
`--encoder python`; both run through the real pipeline, judge, detectors, revision writer,
evaluators and card, under both protocols (WORK/out, WORK/out-mteb). Prints what the test checks, as JSON: the prompt set's sha256, the system
prompts the model was sent, and the revision's transformations and records as this checkout reads
them (the test's own interpreter does not know the new transformation).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hteb_contract.stores import open_store
from hteb_generate.run import pipeline
from hteb_generate.setup.config import build_config
from hteb_generate.engine import ChatResult, Engine
from hteb_generate.transform.transformations import PROMPT_SETS

PROMPT_SET = "smollm2-fewshot"  # the cpu profile's
PROTOCOLS = {"hteb": "out", "mteb": "out-mteb"}  # each protocol's card folder under WORK
ENCODER = '''
import hashlib

import numpy as np


class BagOfWords:
    """Hashed bag of words, 64 dimensions, L2-normalised: deterministic and needs no weights."""

    identity = "hashed-bag-of-words-64"

    def encode(self, inputs, *, task_metadata, hf_split, hf_subset, prompt_type=None, **kwargs):
        rows = []
        for batch in inputs:
            for text in batch["text"]:
                row = np.zeros(64, dtype=np.float32)
                for word in text.lower().split():
                    row[int(hashlib.sha256(word.encode()).hexdigest(), 16) % 64] += 1.0
                rows.append(row / max(float(np.linalg.norm(row)), 1e-9))
        return np.stack(rows) if rows else np.empty((0, 64), dtype=np.float32)
'''


class Shortener(Engine):
    """Answers with the first two thirds of the text's words; prefers "yes"; keeps every system prompt."""

    def __init__(self) -> None:
        self.systems: list[str] = []

    def chat_results(self, requests):
        self.systems += [r.messages[0][1] for r in requests if r.messages[0][0] == "system"]
        answers = []
        for request in requests:
            words = request.messages[-1][1].split()
            answers.append(ChatResult(" ".join(words[: max(1, 2 * len(words) // 3)]), "stop"))
        return answers

    def next_token_logprobs(self, conversations, candidates):
        return [{c: -1.0 if c.strip().lower() == "yes" else -2.0 for c in candidates} for _ in conversations]


def main(work: Path, transformation: str, data: Path) -> None:
    model = work / "model"
    model.mkdir()
    (model / "config.json").write_text("{}", encoding="utf-8")
    engine = Shortener()
    pipeline.create_engine = lambda name, **options: engine
    cfg = build_config(
        seed="1339",
        profile="cpu",
        overrides={
            "datasets": "STSBenchmark",
            "transformations": transformation,
            "max_texts": 8,
            "prompt_set": PROMPT_SET,
            "model": str(model),
            "judge_model": str(model),
            "cache_dir": str(work / "cache"),
            "store": str(work / "store"),
            "data_dir": str(data),
            "label": "toy",
            "manifest_md": str(work / "MANIFEST.md"),
        },
    )
    pipeline.run(cfg, log=lambda message: None)

    from hteb_score.cli import main as score

    (work / "bag_of_words.py").write_text(ENCODER, encoding="utf-8")
    for protocol, out in PROTOCOLS.items():
        code = score(
            [
                f"{work / 'bag_of_words.py'}:BagOfWords",
                "--encoder",
                "python",
                "--store",
                f"file://{work / 'store'}",
                "--revision",
                "toy",
                "--protocol",
                protocol,
                "--out",
                str(work / out),
                "--quiet",
            ]
        )
        if code:
            raise SystemExit(f"hteb-score --protocol {protocol} exited with {code}")
    revision = open_store(f"file://{work / 'store'}").fetch("toy")
    records = [
        {
            "original": r.original_text,
            "transformed": r.transformed_text,
            "template_id": r.prompt_template_id,
            "errors": list(r.errors),
            "parapluie": r.judge.parapluie,
        }
        for r in revision.items("STSBenchmark", transformation, 1339)
    ]
    print(
        json.dumps(
            {
                "prompt_set_sha256": PROMPT_SETS.get(PROMPT_SET).sha256,
                "systems": sorted(set(engine.systems)),
                "transformations": revision.manifest["transformations"],
                "records": records,
            }
        )
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]))
