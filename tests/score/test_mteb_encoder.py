"""`hteb-score MODEL --encoder mteb|auto`: a model of mteb's registry is encoded through mteb, and
the texts reach the model with exactly the prompts mteb's rules give each task.

The model is the PyPI-shipped all-MiniLM-L6-v2 under an mteb ModelMeta of our own, put into
mteb's real registry (`MODEL_REGISTRY`), whose `model_prompts` name prompts by task name + prompt
type, task type + prompt type, task type and prompt type: mteb's priority picks one per text.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from hteb_score.cli import main
from hteb_score.evaluators import EVALUATORS
from models import minilm_path

mteb = pytest.importorskip("mteb")

NAME = "hteb-test/prompted-minilm"
PROMPTS = {
    "SciFact-query": "Given a scientific claim, retrieve documents that support or refute the claim: ",
    "Retrieval-document": "Represent the scientific document: ",
    "STS": "Represent the sentence for similarity: ",
    "query": "query: ",
    "document": "document: ",
}
#: (dataset, prompt type) -> the prompt mteb's priority picks from PROMPTS (written out by hand: the oracle)
EXPECTED = {
    ("SciFact", "query"): PROMPTS["SciFact-query"],  # task name + prompt type beats everything
    ("SciFact", "document"): PROMPTS["Retrieval-document"],  # task type + prompt type beats prompt type
    ("STSBenchmark", None): PROMPTS["STS"],  # task type
}


def _load_prompted_minilm(name: str, revision: str | None = None, device: str | None = None, **kwargs):
    """The meta's loader: mteb's own sentence-transformers wrapper around the local MiniLM folder."""
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

    return SentenceTransformerEncoderWrapper(minilm_path(), revision=revision, device=device, **kwargs)


@pytest.fixture
def registered(monkeypatch):
    """NAME in mteb's registry, prompts in its loader_kwargs as mteb's own entries keep them."""
    from mteb.models.model_implementations import MODEL_REGISTRY

    base = mteb.get_model_meta("sentence-transformers/all-MiniLM-L6-v2")
    meta = base.model_copy(
        update={
            "name": NAME,
            "revision": None,
            "loader": _load_prompted_minilm,
            "loader_kwargs": {"model_prompts": PROMPTS},
            "use_instructions": True,
        }
    )
    monkeypatch.setitem(MODEL_REGISTRY, NAME, meta)
    return meta


@pytest.fixture
def seen(monkeypatch):
    """Every text the SentenceTransformer turns into model input, its prompt prepended as it does."""
    from sentence_transformers import SentenceTransformer

    texts: list[str] = []
    real = SentenceTransformer.preprocess

    def preprocess(self, inputs, prompt=None, **kwargs):
        texts.extend((prompt or "") + text for text in inputs)
        return real(self, inputs, prompt=prompt, **kwargs)

    monkeypatch.setattr(SentenceTransformer, "preprocess", preprocess)
    return texts


def _asked(datasets: list[str]) -> set[tuple[str, str, str | None]]:
    """(dataset, text, prompt type) of every text the evaluators of the sample revision list, and
    of every transformed item (its drift is measured even where --on-error scores the original)."""
    from hteb_score.evaluators.protocol import PROTOCOLS
    from hteb_score import SAMPLE_REVISION, SAMPLE_STORE
    from hteb_score.scoring.data import read_revision
    from hteb_score.scoring.options import ScoreOptions
    from hteb_score.scoring.item_measures import QUERY_TABLES

    groups = read_revision(
        ScoreOptions(
            model_id=None,
            protocol=PROTOCOLS.get("hteb"),
            encoder="sentence-transformers",
            store=f"file://{SAMPLE_STORE}",
            ref=SAMPLE_REVISION,
            datasets=datasets,
        )
    ).groups
    asked = set()
    for variants in groups:
        for variant in variants:
            evaluator = EVALUATORS.get(variant.dataset.info.task_type)
            asked |= {(variant.dataset.name, text, kind) for text, kind in evaluator.texts(variant.dataset)}
            items = variant.items
            if items is not None:
                for split, original, transformed in zip(items.split, items.original_text, items.transformed_text):
                    kind = "query" if split in QUERY_TABLES else None
                    asked |= {(variant.dataset.name, original, kind), (variant.dataset.name, transformed, kind)}
    return asked


@pytest.mark.slow
def test_texts_reach_the_model_with_mtebs_prompts(registered, seen, tmp_path):
    """auto picks mteb for a registered name; every text the model saw is a text the evaluators
    asked for with the prompt mteb's priority gives its task and prompt type, and nothing else."""
    datasets = ["STSBenchmark", "SciFact"]
    assert main([NAME, "--datasets", ",".join(datasets), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    expected = {EXPECTED[(dataset, kind)] + text for dataset, text, kind in _asked(datasets)}
    assert set(seen) == expected
    assert len(seen) == len(expected)  # each (text, prompt) embedded once

    card = json.loads((tmp_path / "out" / "result_card.json").read_text())
    model = card["model"]
    assert (model["model_id"], model["encoder"], model["embedding_dim"]) == (NAME, "mteb", 384)
    assert model["identity"].startswith("sha256:") and model["revision"].startswith("sha256:")
    assert model["mteb"]["name"] == NAME and model["mteb"]["model_prompts"] == PROMPTS
    assert model["mteb"]["mteb_version"] == mteb.__version__
    assert model["mteb"]["prompts"] == {
        "SciFact": {
            "type": "Retrieval",
            "query": EXPECTED[("SciFact", "query")],
            "document": EXPECTED[("SciFact", "document")],
        },
        "STSBenchmark": {"type": "STS", "default": EXPECTED[("STSBenchmark", None)]},
    }
    assert card["encode"]["prompts"]["SciFact/query"] == EXPECTED[("SciFact", "query")]
    md = (tmp_path / "out" / "result_card.md").read_text()
    assert f"encoded through mteb: `{NAME}`" in md
    assert f'SciFact (Retrieval): document "{EXPECTED[("SciFact", "document")]}"' in md


@pytest.mark.slow
def test_an_mteb_embedding_is_the_model_given_prompt_and_text(registered):
    """Oracle: mteb's encoding of a text equals sentence-transformers encoding prompt + text itself;
    the identity changes with the entry's prompts and differs from the plain model's."""
    from sentence_transformers import SentenceTransformer

    from hteb_contract.sources import DatasetInfo
    from hteb_score.encoding.encoder import Encoder
    from hteb_score.encoding.mteb_encoder import MtebEncoder

    text = "A man is playing a flute."
    sts = DatasetInfo(
        name="STSBenchmark", task_type="STS", eval_split="test", languages=("eng",), mteb_task="STSBenchmark"
    )
    encoder = MtebEncoder.load(NAME, device="cpu", progress=False)
    got = encoder.encode([text], None, task=sts)
    want = SentenceTransformer(minilm_path(), device="cpu").encode([EXPECTED[("STSBenchmark", None)] + text])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    assert not np.allclose(got, SentenceTransformer(minilm_path(), device="cpu").encode([text]), atol=1e-3)

    plain = Encoder.load(minilm_path(), device="cpu", progress=False)
    other = registered.model_copy(update={"loader_kwargs": {"model_prompts": {**PROMPTS, "STS": "other: "}}})
    from mteb.models.model_implementations import MODEL_REGISTRY

    MODEL_REGISTRY[NAME] = other  # the fixture's monkeypatch restores the registry afterwards
    changed = MtebEncoder.load(NAME, device="cpu", progress=False)
    assert len({encoder.identity, changed.identity, plain.identity}) == 3


@pytest.mark.slow  # a fresh interpreter
def test_help_does_not_import_mteb():
    """`hteb-score --help` stays fast: mteb (seconds to import) is imported only to find or load a model."""
    code = (
        "import sys; from hteb_score.cli import main; rc = main(['score', '--help']); print('mteb' in sys.modules, rc)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "--encoder [auto|sentence-transformers|mteb|python|null]" in done.stdout, done.stderr
    assert done.stdout.strip().endswith("False 0"), done.stdout[-200:]


def test_auto_keeps_sentence_transformers_for_folders_and_unregistered_names(tmp_path):
    from hteb_score.encoding.choice import choose

    assert choose("auto", None).kind == "sentence-transformers"
    assert choose("auto", minilm_path()).kind == "sentence-transformers"
    assert choose("auto", "hteb-test/not-in-mteb").kind == "sentence-transformers"
    assert choose("auto", "intfloat/e5-small-v2").kind == "mteb"
    assert choose("sentence-transformers", "intfloat/e5-small-v2").kind == "sentence-transformers"


def test_a_wrapper_whose_encode_is_its_own_has_no_known_prompt_rule():
    """mteb's rule is read only where mteb's own `encode` runs: a subclass that overrides it may
    prompt otherwise, so its texts are keyed by task (never shared) and the card says so."""
    from mteb.models.instruct_wrapper import InstructSentenceTransformerModel
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

    from hteb_score.encoding.mteb_encoder import PROMPT_RULES, prompt_rule

    class Inherits(SentenceTransformerEncoderWrapper):
        pass

    class Overrides(SentenceTransformerEncoderWrapper):
        def encode(self, inputs, **kwargs):
            return super().encode(inputs, **kwargs)

    def bare(cls):
        return object.__new__(cls)  # a wrapper's class decides the rule; nothing is loaded

    assert prompt_rule(bare(SentenceTransformerEncoderWrapper)) is PROMPT_RULES["SentenceTransformerEncoderWrapper"]
    assert prompt_rule(bare(Inherits)) is PROMPT_RULES["SentenceTransformerEncoderWrapper"]
    assert prompt_rule(bare(InstructSentenceTransformerModel)) is PROMPT_RULES["InstructSentenceTransformerModel"]
    assert prompt_rule(bare(Overrides)) is None


def _load_instruct_minilm(name: str, revision: str | None = None, device: str | None = None, **kwargs):
    """An instruction-tuned entry's loader: mteb's InstructSentenceTransformerModel around the local MiniLM."""
    from mteb.models.instruct_wrapper import InstructSentenceTransformerModel

    return InstructSentenceTransformerModel(minilm_path(), revision, device=device, **kwargs)


@pytest.mark.slow
def test_an_instruct_model_gets_mtebs_instruction_and_none_on_passages(monkeypatch, seen):
    """InstructSentenceTransformerModel: the task's instruction in the entry's template on queries,
    nothing on passages when `apply_instruction_to_passages` is off; the model sees exactly that."""
    from mteb.models.model_implementations import MODEL_REGISTRY

    from hteb_contract.sources import DatasetInfo
    from hteb_score.encoding.encoder import EmbeddingTable
    from hteb_score.encoding.mteb_encoder import MtebEncoder

    instruction = "Given a scientific claim, retrieve documents that support or refute the claim"
    kwargs = {
        "instruction_template": "Instruct: {instruction}\nQuery: ",
        "apply_instruction_to_passages": False,
        "prompts_dict": {"SciFact": instruction},
    }
    base = mteb.get_model_meta("sentence-transformers/all-MiniLM-L6-v2")
    name = "hteb-test/instruct-minilm"
    monkeypatch.setitem(
        MODEL_REGISTRY,
        name,
        base.model_copy(
            update={"name": name, "revision": None, "loader": _load_instruct_minilm, "loader_kwargs": kwargs}
        ),
    )
    scifact = DatasetInfo(
        name="SciFact", task_type="Retrieval", eval_split="test", languages=("eng",), mteb_task="SciFact"
    )
    table = EmbeddingTable(MtebEncoder.load(name, device="cpu", progress=False))
    table.fill([(scifact, "a claim", "query"), (scifact, "a document", "document")], progress=False)
    assert sorted(seen) == ["Instruct: " + instruction + "\nQuery: a claim", "a document"]
    assert table.encoder.applied == {
        "SciFact": {"type": "Retrieval", "query": f"Instruct: {instruction}\nQuery: ", "document": None}
    }
