"""`hteb-score MODEL` end to end with the real all-MiniLM-L6-v2 on real revisions; and its errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hteb_score.mteb_interop.layout import parse_variant_task_name

from hteb_score.encoding import encoder as encode
from hteb_score.cli import main
from hteb_contract.validation import validate
from hteb_contract.stores.local import LocalStore
from models import minilm_path
from revision_factory import build_revision, item_record, reverse_words

NAMES = ["STSBenchmark", "TwitterSemEval2015", "SciFact", "SummEval"]


@pytest.fixture(scope="module")
def store(tmp_path_factory, shared_data):
    """A local store with a real revision: 4 task types, 2 transformations x 2 seeds."""
    root = tmp_path_factory.mktemp("score")
    build_revision(
        root / "rev",
        shared_data,
        NAMES,
        label="v1",
        rows=6,
        transformations=("paraphrasing", "translation"),
        seeds=(1337, 1338),
    )
    LocalStore(root / "store").publish(root / "rev")
    return root / "store"


def _run(capsys, *args):
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def scored(store, tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    assert main([minilm_path(), "--store", str(store), "--revision", "v1", "--out", str(out), "--quiet"]) == 0
    return out


@pytest.mark.slow
def test_outputs_are_written_and_valid(scored):
    card = json.loads((scored / "result_card.json").read_text())
    validate("result_card", card, what="card")
    assert card["protocol"] == "hteb" and card["dataset"]["label"] == "v1"
    assert card["model"]["revision"].startswith("sha256:")
    combos = {(r["dataset"], r["transformation"], r["seed"]) for r in card["scores"] if r["subset"] == "all"}
    assert len(combos) == len(NAMES) * (1 + 2 * 2)
    assert {row["dataset"] for row in card["aggregates"]["per_dataset"]} == set(NAMES)
    assert card["statistics"]["per_transformation"].keys() == {"paraphrasing", "translation"}
    evaluation = card["evaluation"]
    assert (evaluation["protocol"], evaluation["mteb_version"]) == ("hteb", None)
    assert evaluation["datasets"].keys() == set(NAMES)
    assert evaluation["datasets"]["SciFact"]["ignore_identical_ids"] is False
    md = (scored / "result_card.md").read_text()
    assert "protocol: **hteb**" in md and "| STSBenchmark" in md
    assert (
        "## Evaluation settings" in md
        and "| SummEval | correlation: spearman; deprecated_evaluator: False; similarity: cosine |" in md
    )
    mteb_files = [p for p in (scored / "mteb").rglob("*.json") if p.name != "model_meta.json"]
    names = {p.stem: parse_variant_task_name(p.stem) for p in mteb_files}
    assert {v.task for v in names.values()} == {"STSBenchmark", "TwitterSemEval2015", "SciFact", "SummEval"}
    # every variant its own task file (mteb's cache keys by name), all in the model's one folder
    assert {(v.task, v.transformation, v.seed) for v in names.values()} == combos
    assert len({p.parent for p in mteb_files}) == 1


@pytest.mark.slow
def test_each_unique_text_is_embedded_once(scored, store):
    """The corpus is embedded once for all 5 variants; the counts match an independent tally."""
    card = json.loads((scored / "result_card.json").read_text())
    revision = LocalStore(store).fetch("v1")
    unique = set()
    for name in NAMES:
        source = revision.source(name)
        if name == "SciFact":
            unique |= {((d.get("title", "") + " " + d["text"]).strip(), "document") for d in source.tables["corpus"]}
        for ref in source.iter_texts():
            prompt = "query" if ref.table == "queries" else None
            unique.add((ref.text, prompt))
            unique.add((reverse_words(ref.text), prompt))
    assert card["timings"]["unique_texts"] == len(unique)
    assert card["timings"]["texts_encoded"] == len(unique)
    assert card["timings"]["texts_requested"] > 4 * len(unique)


@pytest.mark.slow
def test_embedding_cache_makes_a_rerun_encode_nothing(store, scored, tmp_path):
    cache = tmp_path / "cache"
    args = [
        minilm_path(),
        "--store",
        str(store),
        "--revision",
        "v1",
        "--datasets",
        "STSBenchmark,SciFact",
        "--cache-dir",
        str(cache),
        "--quiet",
    ]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    assert main([*args, "--out", str(tmp_path / "b")]) == 0
    first = json.loads((tmp_path / "a" / "result_card.json").read_text())
    second = json.loads((tmp_path / "b" / "result_card.json").read_text())
    assert first["timings"]["texts_encoded"] > 0 and second["timings"]["texts_encoded"] == 0
    assert first["scores"] == second["scores"]
    full = json.loads((scored / "result_card.json").read_text())
    assert [r for r in full["scores"] if r["dataset"] == "SciFact"] == [
        r for r in first["scores"] if r["dataset"] == "SciFact"
    ]


@pytest.mark.slow
def test_a_model_whose_revision_cannot_be_determined(store, tmp_path, capsys, monkeypatch):
    """The card records null, never a made-up name; the embedding cache refuses it before encoding."""
    assert encode.resolve_revision(tmp_path / "no-such-folder") is None
    assert encode.model_identity(tmp_path / "no-such-folder", backend="torch", precision="float32") is None
    monkeypatch.setattr(encode, "resolve_revision", lambda folder: None)
    monkeypatch.setattr(encode, "model_identity", lambda folder, **kwargs: None)
    args = [minilm_path(), "--store", str(store), "--revision", "v1", "--datasets", "TwitterSemEval2015", "--quiet"]
    code, _, err = _run(capsys, *args, "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "cached"))
    model = Path(minilm_path()).resolve()
    assert code == 2 and err.endswith(f"error: cannot cache embeddings of {model}: its identity cannot be determined\n")
    assert not (tmp_path / "cache").exists() and not (tmp_path / "cached").exists()
    assert main([*args, "--out", str(tmp_path / "out")]) == 0
    card = json.loads((tmp_path / "out" / "result_card.json").read_text())
    assert card["model"]["revision"] is None and card["model"]["identity"] is None
    assert {p.relative_to(tmp_path / "out" / "mteb").parts[2] for p in (tmp_path / "out" / "mteb").rglob("*.json")} == {
        "no_revision_available"
    }
    assert "model revision: `unknown`" in (tmp_path / "out" / "result_card.md").read_text()


@pytest.mark.slow
def test_error_policy(tmp_path, shared_data, capsys):
    """Items whose output kept errors: counted, and scored as the policy says."""
    from hteb_contract import revision as rev
    from hteb_contract.sources import read_source_dir
    from hteb_generate.sources.source_loading import sample_dataset

    build_revision(tmp_path / "rev", shared_data, ["STSBenchmark"], label="e1", rows=8)
    dataset = sample_dataset(read_source_dir(shared_data / "STSBenchmark"), 8)
    records = []
    for index, ref in enumerate(dataset.iter_texts()):
        errors = ["empty"] if index % 4 == 0 else []
        output = "" if errors else " ".join(ref.text.split()[:3])
        records.append(item_record(dataset, ref, "paraphrasing", 1337, output, errors))
    (tmp_path / "rev" / "data" / "STSBenchmark" / "paraphrasing_1337.parquet").unlink()
    rev.write_items(tmp_path / "rev", "STSBenchmark", "paraphrasing", 1337, records)
    manifest = json.loads((tmp_path / "rev" / "manifest.json").read_text())
    rev.seal(
        tmp_path / "rev", {k: v for k, v in manifest.items() if k not in ("schema_version", "files", "content_hash")}
    )
    LocalStore(tmp_path / "store").publish(tmp_path / "rev")
    cards = {}
    for policy in ("original", "drop", "keep"):
        out = tmp_path / policy
        assert (
            main(
                [
                    minilm_path(),
                    "--store",
                    str(tmp_path / "store"),
                    "--revision",
                    "e1",
                    "--on-error",
                    policy,
                    "--out",
                    str(out),
                    "--quiet",
                ]
            )
            == 0
        )
        cards[policy] = json.loads((out / "result_card.json").read_text())
    for policy, card in cards.items():
        assert card["error_policy"] == [
            {
                "dataset": "STSBenchmark",
                "transformation": "paraphrasing",
                "seed": 1337,
                "items": 16,
                "with_errors": 4,
                "action": policy,
            }
        ]
    values = {
        p: next(r["value"] for r in c["scores"] if r["transformation"] == "paraphrasing") for p, c in cards.items()
    }
    assert len(set(values.values())) == 3  # three policies, three different scores


@pytest.mark.slow
def test_source_dir_scores_original_only(shared_data, tmp_path, capsys):
    code, out, err = _run(
        capsys,
        minilm_path(),
        "--source-dir",
        str(shared_data),
        "--datasets",
        "TwitterSemEval2015",
        "--out",
        str(tmp_path),
        "--quiet",
    )
    assert code == 0, err
    card = json.loads((tmp_path / "result_card.json").read_text())
    assert {r["transformation"] for r in card["scores"]} == {"original"}
    assert card["dataset"]["repo_id"].startswith("local:") and card["dataset"]["revision"].startswith("sha256:")
    assert card["statistics"] is None


@pytest.mark.slow
def test_a_source_folder_in_mteb_subset_naming_scores_per_subset(tmp_path, capsys):
    """Cross-lingual (en-de), same-language (en-en) and -ext subsets: each scored, the dataset's score their mean."""
    folder = Path(__file__).resolve().parents[1] / "data" / "mteb-subsets"
    code, out, err = _run(capsys, minilm_path(), "--source-dir", str(folder), "--out", str(tmp_path), "--quiet")
    assert code == 0, err
    card = json.loads((tmp_path / "result_card.json").read_text())
    scores = {(r["dataset"], r["subset"]): r["value"] for r in card["scores"]}
    assert set(scores) == {("STSBCrossLingual", s) for s in ("all", "en-de", "en-en")} | {
        ("Banking77Ext", s) for s in ("all", "en", "en-ext")
    }
    for name, subsets in (("STSBCrossLingual", ("en-de", "en-en")), ("Banking77Ext", ("en", "en-ext"))):
        assert scores[(name, "all")] == pytest.approx(sum(scores[(name, s)] for s in subsets) / 2)
    assert scores[("STSBCrossLingual", "en-de")] > 0.5  # MiniLM still ranks the German half of the pairs


@pytest.mark.parametrize(
    "args, message",
    [
        (["/no/such/model"], "cannot load model '/no/such/model'"),
        (["--datasets", "Nope"], "has no dataset 'Nope'"),
        (["--revision", "v9"], "no revision 'v9'"),
        (["--transformations", "shouting"], "unknown transformation 'shouting'"),
        (["--transformations", "expansion"], "has no transformation 'expansion'"),
        (["--seeds", "13x7"], "--seeds must be integers"),
        (["--seeds", "42"], "has no seed 42"),
        (["--protocol", "mtbe"], "unknown protocol 'mtbe' (did you mean 'mteb'?); known: hteb, mteb"),
    ],
)
def test_bad_input_is_one_line(store, tmp_path, capsys, args, message):
    model = [] if args[0].startswith("/") else [minilm_path()]
    revision = [] if "--revision" in args else ["--revision", "v1"]
    code, out, err = _run(capsys, *model, *args, "--store", str(store), *revision, "--out", str(tmp_path), "--quiet")
    assert code == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "result_card.json").exists()


def test_corrupted_revision_and_malformed_source(store, tmp_path, shared_data, capsys):
    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    revision = LocalStore(copy).fetch("v1")
    target = revision.root / "data" / "SciFact" / "translation_1338.parquet"
    target.chmod(0o644)
    target.write_bytes(target.read_bytes()[::-1])
    code, _, err = _run(capsys, minilm_path(), "--store", str(copy), "--revision", "v1", "--out", str(tmp_path / "o"))
    assert code == 2 and "translation_1338.parquet is corrupted" in err and err.count("\n") == 1

    source = tmp_path / "src"
    shutil.copytree(shared_data / "STSBenchmark", source / "STSBenchmark")
    with open(source / "STSBenchmark" / "test.jsonl", "a") as handle:
        handle.write("{not json}\n")
    code, _, err = _run(capsys, minilm_path(), "--source-dir", str(source), "--out", str(tmp_path / "o"))
    assert code == 2 and "test.jsonl:1380: not valid JSON" in err
