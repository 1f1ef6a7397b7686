"""Null models (issue 42): `hteb:random` scores at chance on every task type whatever the length of its
vectors, `hteb:constant` is flagged `collapsed` in every card and never measured as robust.

Real data: the shared/data datasets at full size (IsiZuluNews is the single-split classification set
whose training accuracy a model of random vectors once scaled to 100%) and a reranking set built from
SciFact (reranking_cases.py), scored through the command line.

Oracle of chance: a model that knows nothing but which texts are equal, drawn here (numpy, not the
engine) and scored by scipy and scikit-learn straight from the dataset's rows: one random vector per
distinct text (so STS12's 79 pairs of identical sentences, or TwentyNewsgroups' repeated "Re:" titles,
are known to it as to any model), DRAWS times. The engine's score must lie within BOUND standard
deviations of the oracle's mean. Classification: accuracy not significantly above the majority share
(one-sided binomial test), and at or below it on IsiZuluNews.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest, spearmanr
from sklearn.cluster import MiniBatchKMeans
from sklearn.metrics import average_precision_score, label_ranking_average_precision_score, ndcg_score, v_measure_score
from sklearn.metrics.pairwise import cosine_similarity
from threadpoolctl import threadpool_limits

from hteb_contract.source_values import subset_of
from hteb_contract.sources import SourceDataset, read_source_dir
from hteb_contract.tasks import TASK_TYPES
from hteb_score.encoding.null_models import MIN_NORM, NullModel, NullSettings, parse
from hteb_score.report.card.card import render_markdown
from hteb_score.scoring.collapse import mean_pairwise_cosine
from refusal import assert_one_line, run

sys.path.insert(0, str(Path(__file__).resolve().parent / "evaluators"))

from reranking_cases import scifact_reranking  # noqa: E402

SHARED = (
    "STSBenchmark",
    "STS12",
    "SemRel2024",
    "SummEval",
    "TwitterSemEval2015",
    "IsiZuluNews",
    "Banking77",
    "TwentyNewsgroups",
    "MasakhaNEWS",
    "SciFact",
)
RERANKING = "SciFactReranking"
DATASETS = (*SHARED, RERANKING)
NORMS = (MIN_NORM, 1, 1 / MIN_NORM)  # the least and the most a null model may have, and the default
DRAWS = 20
BOUND = 5  # oracle standard deviations
ALPHA = 1e-3  # the binomial test's level: above the majority share by more than chance allows
DIM = 384


# --- the data and the runs ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    """A folder of dataset folders (shared/data layout): the shared ones linked, SciFactReranking written."""
    root = tmp_path_factory.mktemp("null-source")
    for name in SHARED:
        (root / name).symlink_to(shared_data / name)
    built = scifact_reranking(read_source_dir(shared_data / "SciFact"))
    folder = root / built.name
    folder.mkdir()
    (folder / "dataset.json").write_text(json.dumps(built.info.to_json()), encoding="utf-8")
    for table, rows in built.tables.items():
        (folder / f"{table}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def datasets(source: Path) -> dict[str, SourceDataset]:
    return {name: read_source_dir(source / name) for name in DATASETS}


def _score(model: str, out: Path, *args: object) -> dict[str, Any]:
    code, _, err = run(model, *args, "--out", out, "--quiet")
    assert code == 0 and "Traceback" not in err, err
    return json.loads((out / "result_card.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def random_cards(source: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict[str, Any]]:
    """hteb:random at each of NORMS, on the original data of every dataset (default protocol)."""
    out = tmp_path_factory.mktemp("random")
    return {norm: _score(f"hteb:random?norm={norm}", out / str(norm), "--source-dir", source) for norm in NORMS}


def _main_score(card: dict[str, Any], dataset: str) -> tuple[str, float | None]:
    [record] = [r for r in card["scores"] if r["dataset"] == dataset and r["subset"] == "all"]
    return record["metric"], record["value"]


# --- the oracle: a model that knows only which texts are equal -------------------------------------------------


def _unit_vectors(texts: Sequence[str], rng: np.random.Generator) -> dict[str, np.ndarray]:
    distinct = list(dict.fromkeys(texts))
    vectors = rng.standard_normal((len(distinct), DIM))
    return dict(zip(distinct, vectors / np.linalg.norm(vectors, axis=1, keepdims=True)))


def _pair_cosines(rows: Sequence[dict[str, Any]], rng: np.random.Generator) -> np.ndarray:
    vectors = _unit_vectors([t for r in rows for t in (r["sentence1"], r["sentence2"])], rng)
    return np.array([vectors[r["sentence1"]] @ vectors[r["sentence2"]] for r in rows])


def _by_subset(rows: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(subset_of(row), []).append(row)
    return list(groups.values())


Draw = Callable[[np.random.Generator], float]  # one draw of the oracle's score


def _sts(dataset: SourceDataset) -> Draw:
    """Spearman of the pairs' cosines with the gold scores, mean over subsets."""
    subsets = _by_subset(dataset.tables[dataset.info.eval_split])
    return lambda rng: float(
        np.mean([spearmanr(_pair_cosines(rows, rng), [r["score"] for r in rows]).statistic for rows in subsets])
    )


def _pair_ap(dataset: SourceDataset) -> Draw:
    """Average precision of the pairs' cosines, mean over subsets."""
    subsets = _by_subset(dataset.tables[dataset.info.eval_split])
    return lambda rng: float(
        np.mean([average_precision_score([r["label"] for r in rows], _pair_cosines(rows, rng)) for rows in subsets])
    )


def _summarization(dataset: SourceDataset, with_p_values: bool = False) -> Draw:
    """Per document, Spearman of each machine summary's best cosine to a human one with its relevance
    (documents whose relevance or scores are all equal skipped), mean over documents; `with_p_values`:
    the mean of each document's Spearman and its p-value, as mteb's deprecated evaluator takes it."""

    def draw(rng: np.random.Generator) -> float:
        rhos = []
        for row in dataset.tables[dataset.info.eval_split]:
            vectors = _unit_vectors([*row["human_summaries"], *row["machine_summaries"]], rng)
            humans = np.stack([vectors[t] for t in row["human_summaries"]])
            scores = [float(np.max(humans @ vectors[t])) for t in row["machine_summaries"]]
            if len(set(row["relevance"])) > 1 and len(set(scores)) > 1:
                result = spearmanr(scores, row["relevance"])
                rhos.append((result.statistic + result.pvalue) / 2 if with_p_values else result.statistic)
        return float(np.mean(rhos))

    return draw


def _clustering(dataset: SourceDataset) -> Draw:
    """V-measure of k-means (k = the subset's labels) on the vectors, mean over subsets."""
    subsets = _by_subset(dataset.tables[dataset.info.eval_split])

    def draw(rng: np.random.Generator) -> float:
        values = []
        for rows in subsets:
            vectors = _unit_vectors([r["text"] for r in rows], rng)
            labels = [r["label"] for r in rows]
            kmeans = MiniBatchKMeans(
                n_clusters=len(set(labels)), batch_size=500, n_init="auto", random_state=int(rng.integers(1 << 31))
            )
            with threadpool_limits(1):  # k-means threads on a shared machine: 25 times slower
                found = kmeans.fit(np.stack([vectors[r["text"]] for r in rows])).labels_
            values.append(v_measure_score(labels, found))
        return float(np.mean(values))

    return draw


def _relevance(dataset: SourceDataset) -> dict[str, dict[str, float]]:
    judged: dict[str, dict[str, float]] = {}
    for row in dataset.tables["qrels"]:
        judged.setdefault(str(row["query_id"]), {})[str(row["doc_id"])] = float(row["score"])
    return judged


def _retrieval(dataset: SourceDataset) -> Draw:
    """nDCG@10 of a random order of the whole corpus, mean over judged queries."""
    judged, docs = _relevance(dataset), [str(d["id"]) for d in dataset.tables["corpus"]]
    truth = np.array(
        [[judged[str(q["id"])].get(d, 0.0) for d in docs] for q in dataset.tables["queries"] if str(q["id"]) in judged]
    )
    return lambda rng: float(ndcg_score(truth, rng.random(truth.shape), k=10))


def _reranking(dataset: SourceDataset) -> Draw:
    """Average precision of a random order of each query's candidates, mean over queries (scikit-learn's
    label ranking average precision is that mean; a query's row is padded with non-relevant candidates
    that rank below all of its own)."""
    judged = _relevance(dataset)
    relevant = [
        [judged[str(r["query_id"])].get(str(d), 0.0) > 0 for d in r["doc_ids"]] for r in dataset.tables["top_ranked"]
    ]
    width = max(map(len, relevant))
    truth = np.array([row + [False] * (width - len(row)) for row in relevant])
    padding = np.array([[False] * len(row) + [True] * (width - len(row)) for row in relevant])
    return lambda rng: float(
        label_ranking_average_precision_score(truth, np.where(padding, -1.0, rng.random(truth.shape)))
    )


ORACLES: dict[str, Callable[[SourceDataset], Draw]] = {
    "STS": _sts,
    "STR": _sts,
    "PairClassification": _pair_ap,
    "Summarization": _summarization,
    "Clustering": _clustering,
    "Retrieval": _retrieval,
    "Reranking": _reranking,
}


_NULLS: dict[str, tuple[float, float]] = {}


def _null(dataset: SourceDataset) -> tuple[float, float]:
    """The oracle's mean and standard deviation over DRAWS draws (drawn once per dataset: two tests read it)."""
    if dataset.name not in _NULLS:
        _NULLS[dataset.name] = _spread(ORACLES[dataset.info.task_type](dataset))
    return _NULLS[dataset.name]


def _spread(draw: Draw) -> tuple[float, float]:
    values = [draw(np.random.default_rng(seed)) for seed in range(DRAWS)]
    return float(np.mean(values)), float(np.std(values, ddof=1))


def _majority(dataset: SourceDataset) -> tuple[float, int]:
    """The majority label's share of the evaluation rows (mean over subsets) and how many rows there are."""
    rows = dataset.tables[dataset.info.eval_split]
    shares = [pd.Series([r["label"] for r in group]).value_counts(normalize=True).iloc[0] for group in _by_subset(rows)]
    return float(np.mean(shares)), len(rows)


# --- hteb:random ----------------------------------------------------------------------------------------------


def test_the_datasets_cover_every_task_type(datasets):
    assert {d.info.task_type for d in datasets.values()} == set(TASK_TYPES.names())


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in DATASETS if n not in ("IsiZuluNews", "Banking77")])
def test_random_model_scores_at_chance(name, datasets, random_cards):
    """Within BOUND sds of the oracle's chance, at every norm, and the same at every norm (cosine,
    k-means and ranks do not see the length of vectors that all have one)."""
    mean, sd = _null(datasets[name])
    values = [_main_score(random_cards[norm], name)[1] for norm in NORMS]
    for norm, value in zip(NORMS, values):
        assert value is not None and abs(value - mean) <= BOUND * sd, (name, norm, value, mean, sd)
    assert values == pytest.approx([values[NORMS.index(1)]] * len(NORMS), abs=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["IsiZuluNews", "Banking77"])
def test_random_model_classifies_no_better_than_the_majority_label(name, datasets, random_cards):
    """Accuracy at every norm is not significantly above the majority share. Under the default
    protocol a dataset of one split (IsiZuluNews) is predicted out of fold: no row by a classifier
    fitted on it, so a longer random vector can no longer memorise its way up."""
    majority, n = _majority(datasets[name])
    for norm in NORMS:
        metric, accuracy = _main_score(random_cards[norm], name)
        assert metric == "accuracy" and accuracy is not None
        above = binomtest(round(accuracy * n), n, majority, alternative="greater").pvalue
        assert above >= ALPHA, (name, norm, accuracy, majority, above)
        if datasets[name].info.train_split == datasets[name].info.eval_split:
            assert accuracy <= majority, (name, norm, accuracy, majority)


@pytest.mark.slow
def test_random_model_is_not_collapsed(random_cards):
    for card in random_cards.values():
        assert not [f for f in card["flags"] if f["code"] == "collapsed"]
        assert card["model"]["encoder"] == "null" and card["model"]["null"]["engine"] == "random"
    assert [card["model"]["null"]["norm"] for card in random_cards.values()] == list(NORMS)
    assert [card["model"]["model_id"] == "hteb:random" for card in random_cards.values()] == [n == 1 for n in NORMS]
    assert len({card["model"]["identity"] for card in random_cards.values()}) == len(NORMS)


@pytest.mark.slow
def test_random_model_under_the_mteb_protocol_scores_summevals_chance_and_the_card_says_why(
    source, datasets, random_cards, tmp_path
):
    """mteb's deprecated SummEval evaluator averages each document's Spearman with its p-value: chance is the
    oracle's mean of the two, near a quarter (half the mean p-value of no correlation), and the card marks the
    score and says why; the hteb protocol's card, whose chance is near 0, marks nothing. mteb's clustering,
    on fewer documents, puts random vectors' V-measure above the paper protocol's chance."""
    card = _score(
        "hteb:random",
        tmp_path / "out",
        "--source-dir",
        source,
        "--datasets",
        "SummEval,TwentyNewsgroups,MasakhaNEWS",
        "--protocol",
        "mteb",
    )
    mean, sd = _spread(_summarization(datasets["SummEval"], with_p_values=True))
    metric, value = _main_score(card, "SummEval")
    assert metric == "cosine_spearman" and value is not None and abs(value - mean) <= BOUND * sd, (value, mean, sd)
    assert 0.2 < mean < 0.3
    markdown = (tmp_path / "out" / "result_card.md").read_text(encoding="utf-8")
    assert "| SummEval (cosine_spearman†) |" in markdown
    assert "\n† SummEval: mteb's deprecated summarization evaluator" in markdown
    assert "near 25 here, not 0" in markdown
    assert "†" not in render_markdown(random_cards[1])
    for name in ("TwentyNewsgroups", "MasakhaNEWS"):  # docs/protocols.md: fewer documents, a V-measure further from 0
        mean, sd = _null(datasets[name])
        assert _main_score(card, name)[1] > mean + BOUND * sd, name


# --- hteb:constant --------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_constant_model_is_flagged_collapsed_on_every_dataset(source, datasets, tmp_path):
    card = _score("hteb:constant", tmp_path / "out", "--source-dir", source)
    flagged = {f["dataset"] for f in card["flags"] if f["code"] == "collapsed"}
    assert flagged == set(DATASETS)
    for name in ("IsiZuluNews", "Banking77"):  # one vector: one class predicted for every row
        assert _main_score(card, name)[1] <= _majority(datasets[name])[0]
    undefined = {f["dataset"] for f in card["flags"] if f["code"] == "undefined_score"}
    for name in set(DATASETS) - {"IsiZuluNews", "Banking77"}:  # never above chance where a score is defined
        value = _main_score(card, name)[1]
        if value is None:
            assert name in undefined and datasets[name].info.task_type in ("STS", "STR", "Summarization"), name
            continue
        mean, sd = _null(datasets[name])  # k-means once split one vector by the rows' order: by label
        assert value <= mean + BOUND * sd, (name, value, mean, sd)  # one cluster: V-measure 0, below chance
    markdown = (tmp_path / "out" / "result_card.md").read_text(encoding="utf-8")
    assert f"**Collapsed on {len(DATASETS)} of {len(DATASETS)} datasets**" in markdown


@pytest.mark.slow
def test_constant_model_is_collapsed_in_merged_cards_and_never_measured_robust(tmp_path):
    """On the bundled revision (every transformation), scored in parts and merged: every dataset
    flagged, no per-item measure (its cosine of 1 would pass every item) and no explorer row."""
    parts = []
    for name in ("STSBenchmark", "Banking77", "SciFact"):
        parts.append(tmp_path / name)
        code, _, err = run(
            "hteb:constant?dim=8",
            "--datasets",
            "STSBenchmark,Banking77,SciFact",
            "--part",
            name,
            "--out",
            parts[-1],
            "--quiet",
        )
        assert code == 0, err
    code, _, err = run("merge", *parts, "--out", tmp_path / "merged")
    assert code == 0, err
    card = json.loads((tmp_path / "merged" / "result_card.json").read_text(encoding="utf-8"))
    assert {f["dataset"] for f in card["flags"] if f["code"] == "collapsed"} == {"STSBenchmark", "Banking77", "SciFact"}
    assert "item_measures" not in card
    assert any(r["transformation"] != "original" for r in card["scores"])
    items = tmp_path / "merged" / "items.parquet"
    assert not items.exists() or pd.read_parquet(items).empty
    markdown = (tmp_path / "merged" / "result_card.md").read_text(encoding="utf-8")
    assert "**Collapsed on 3 of 3 datasets**" in markdown and "Per-item measures" not in markdown


# --- the engines themselves -----------------------------------------------------------------------------------


TEXTS = ["A man is playing a guitar.", "Un homme joue de la guitare.", "", "A man is playing a guitar."]


@pytest.mark.slow
def test_random_vectors_are_the_same_in_another_process_and_have_their_norm():
    here = NullModel("random", NullSettings(seed=3, norm=10)).encode(TEXTS)
    code = (
        "import sys, json; from hteb_score.encoding.null_models import parse; "
        "sys.stdout.write(parse('hteb:random?seed=3&norm=10').encode(json.loads(sys.argv[1])).tobytes().hex())"
    )
    there = subprocess.run(
        [sys.executable, "-c", code, json.dumps(TEXTS)],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "1", "PATH": ""},
    ).stdout
    assert here.tobytes().hex() == there
    assert np.linalg.norm(here, axis=1) == pytest.approx(10, rel=1e-6)
    assert (here[0] == here[3]).all() and not (here[0] == here[1]).all()
    assert not (here == NullModel("random", NullSettings(seed=4, norm=10)).encode(TEXTS)).all()


def test_constant_vectors_are_one_vector():
    vectors = parse("hteb:constant?norm=2&dim=5").encode(TEXTS)
    assert vectors.shape == (4, 5) and (vectors == vectors[0]).all()
    assert np.linalg.norm(vectors[0]) == pytest.approx(2)


def test_model_id_names_the_settings_that_differ_from_the_defaults():
    assert parse("hteb:random?seed=0&norm=10.0&dim=384").model_id == "hteb:random?norm=10"
    assert parse("hteb:random?dim=64&seed=7&norm=0.5").model_id == "hteb:random?seed=7&norm=0.5&dim=64"
    assert parse("hteb:constant").model_id == "hteb:constant"


def test_mean_pairwise_cosine_equals_scikit_learn():
    vectors = np.random.default_rng(0).standard_normal((50, 7)) + 2
    vectors[3] = 0
    similarities = cosine_similarity(vectors)
    off_diagonal = similarities[~np.eye(50, dtype=bool)]
    assert mean_pairwise_cosine(vectors) == pytest.approx(off_diagonal.mean())


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (("hteb:nothing",), ("unknown null model 'nothing'", "random, constant")),
        (("hteb:random?norm=0",), ("norm must be a number from 1e-06 to 1e+06", "'0'")),
        (("hteb:random?norm=nan",), ("norm must be a number from",)),
        (("hteb:random?dim=0",), ("dim must be an integer from 1",)),
        (("hteb:random?seed=-1",), ("seed must be an integer from 0",)),
        (("hteb:random?seed=1&seed=2",), ("gives seed twice",)),
        (("hteb:random?norm",), ("KEY=VALUE",)),
        (("hteb:constant?seed=1",), ("hteb:constant takes no setting 'seed'", "norm, dim")),
        (("org/model", "--encoder", "null"), ("is not hteb:ENGINE",)),
        (("--encoder", "null"), ("--encoder null needs a MODEL_ID",)),
        (("hteb:random", "--model-revision", "main"), ("--model-revision pins a Hub model", "null model")),
        (("hteb:random", "--backend", "onnx"), ("a null model computes its vectors itself",)),
    ],
)
def test_refused_null_model_options(args, needles, tmp_path):
    code, _, err = run(*args, "--out", tmp_path / "out")
    assert_one_line(code, err, *needles)
    assert not (tmp_path / "out").exists()
