"""Per-item measures and the item explorer (issue 36 items 2 and 3; issue 42 item 4), scored with the
hashed bag-of-words encoder (scored_parts.py): the card's `item_measures` against a direct numpy and
scipy computation on the same embeddings (the oracle) on the bundled sample and on real Noise revisions
made by the generator; the pair order's rank invariance as a property over generated similarities; the
calibration across a model and its narrow-cone twin; the top-10 change on the full-size SciFact;
items.parquet read by pandas and `datasets.load_dataset("parquet")`, and report.html's explorer with a
hostile text escaped."""

from __future__ import annotations

import itertools
import warnings
from collections import defaultdict
from collections.abc import Callable, Sequence
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import cdist, pdist
from scipy.spatial.distance import cosine as cosine_distance
from scipy.stats import spearmanr

from hteb_contract.source_values import subset_of
from hteb_score import SAMPLE_REVISION, SAMPLE_STORE
from hteb_score.encoding.encoder import EmbeddingTable
from hteb_score.evaluators.protocol import PROTOCOLS
from hteb_score.report.compare.explorer_html import HTML_TOP_N, chosen
from hteb_score.report.card.run_outputs import publish
from hteb_score.scoring.data import read_data
from hteb_score.scoring.item_measures import (
    CALIBRATED_PASS,
    EXPLORER_TOP_N,
    PASS_DRIFT,
    QUANTILES,
    TOP_K,
    item_measures_block,
    order_discordance,
)
from hteb_score.scoring.options import ScoreOptions
from hteb_score.scoring.run import score_variants
from refusal import run
from revision_factory import install
from scored_parts import SMALL, hashed_bow, scored_part

HOSTILE = "<script>alert('x')</script> & <img src=x onerror=alert(1)>"
SAMPLE = {"store": f"file://{SAMPLE_STORE}", "ref": SAMPLE_REVISION}
PAIR_TYPES = ("STS", "STR", "PairClassification")
Embed = Callable[[Sequence[str], "str | None"], np.ndarray]


def embed(texts: Sequence[str], prompt: str | None) -> np.ndarray:
    return hashed_bow(texts, prompt, dim=64).astype(np.float64)  # scored_parts.HashedBow's vectors


def _options(datasets: list[str], where: dict[str, str]) -> ScoreOptions:
    return ScoreOptions(
        model_id=None,
        protocol=PROTOCOLS.get("hteb"),
        encoder="sentence-transformers",
        datasets=datasets,
        quiet=True,
        **where,
    )


def oracle(
    datasets: list[str],
    where: dict[str, str] = SAMPLE,
    left_out: dict[tuple[str, str], set[str]] | None = None,
    vectors: Embed = embed,
) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Every transformed text of `datasets`, measured here from the definitions (`left_out`: the subsets each
    (dataset, transformation)'s figure leaves out, as the card's coverage states them):
    (transformation, dataset) -> [{drift, counted, changed, applicable, baseline, top10_changed, pair, quality}]."""
    left_out = left_out or {}
    found: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for variants in read_data(_options(datasets, where)).groups:
        original = next(v.dataset for v in variants if v.transformation == "original")
        columns = original.text_columns()
        language = dict(zip(zip(columns["table"], columns["item_id"], columns["field"]), columns["language"]))
        baseline = _baselines(variants, language, vectors)
        for variant in variants:
            items = variant.items
            if not items:
                continue
            task, dataset = variant.dataset.info, variant.dataset
            prompts = ["query" if split == "queries" else None for split in items.split]
            drift = [
                cosine_distance(vectors([o], p)[0], vectors([t], p)[0])
                for o, t, p in zip(items.original_text, items.transformed_text, prompts)
            ]
            top10: list[bool | None] = [None] * len(items)
            if task.task_type == "Retrieval":
                docs = vectors([_doc(d) for d in dataset.tables["corpus"]], "document")
                queries = [at for at, p in enumerate(prompts) if p == "query"]
                for at, before, after in zip(
                    queries,
                    nearest(vectors([items.original_text[at] for at in queries], "query"), docs),
                    nearest(vectors([items.transformed_text[at] for at in queries], "query"), docs),
                ):
                    top10[at] = before != after
            out = left_out.get((items.dataset, items.transformation), set())
            rows = []
            for at, ref in enumerate(items.refs()):
                changed, applicable = items.original_text[at] != items.transformed_text[at], items.subset[at] not in out
                rows.append(
                    {
                        "drift": drift[at],
                        "changed": changed,
                        "applicable": applicable,
                        "counted": changed and applicable,
                        "baseline": baseline.get(language[ref]),
                        "top10_changed": top10[at],
                        "pair": None,
                        "quality": items.quality[at],
                    }
                )
            if task.task_type in PAIR_TYPES:
                shares = pair_shares(
                    original, dataset, vectors, {i for i, r in zip(items.item_id, rows) if r["counted"]}
                )
                carried = set()
                for item_id, row in zip(items.item_id, rows):
                    if row["counted"] and item_id in shares and item_id not in carried:
                        row["pair"] = shares[item_id]
                        carried.add(item_id)
            found[(items.transformation, items.dataset)].extend(rows)
    return found


def _baselines(variants: list[Any], language: dict[tuple[str, str, str], str], vectors: Embed) -> dict[str, float]:
    """Per language: the mean of 1 - cos over every pair of distinct original texts of the items (scipy's pdist)."""
    pools: dict[str, set[tuple[str, str | None]]] = defaultdict(set)
    for variant in variants:
        if variant.items:
            for ref, text in zip(variant.items.refs(), variant.items.original_text):
                pools[language[ref]].add((text, "query" if ref[0] == "queries" else None))
    return {
        lang: float(
            np.mean(
                np.nan_to_num(
                    pdist(np.vstack([vectors([t], p)[0] for t, p in sorted(pool, key=str)]), "cosine"), nan=1.0
                )
            )
        )
        for lang, pool in pools.items()
        if len(pool) > 1
    }


def _doc(d: dict[str, Any]) -> str:
    return f"{d['title']} {d['text']}".strip() if d.get("title") else d["text"].strip()


def nearest(queries: np.ndarray, docs: np.ndarray) -> list[set[int]]:
    """Each query's TOP_K documents of highest cosine (scipy's cdist; a zero vector: cosine 0), ties by corpus order."""
    sims = np.round(np.nan_to_num(1 - cdist(queries, docs, "cosine"), nan=0.0), 9)
    return [set(np.lexsort((np.arange(len(docs)), -row))[:TOP_K].tolist()) for row in sims]


def pair_shares(original: Any, dataset: Any, vectors: Embed, chosen_ids: set[str]) -> dict[str, float]:
    """Item id -> the share of the other pairs of its subset whose order with it reversed, pair by pair."""
    split = dataset.info.eval_split
    before = dict(zip(original.ids[split], original.tables[split]))
    rows = [(i, r) for i, r in zip(dataset.ids[split], dataset.tables[split]) if i in before]

    def similarity(row: dict[str, Any]) -> float:
        return round(1 - cosine_distance(vectors([row["sentence1"]], None)[0], vectors([row["sentence2"]], None)[0]), 6)

    s0, s1 = ({i: similarity(r) for i, r in pairs} for pairs in ([(i, before[i]) for i, _ in rows], rows))
    shares = {}
    for i, r in rows:
        peers = [j for j, q in rows if j != i and subset_of(q) == subset_of(r)]
        if i in chosen_ids and peers:
            shares[i] = sum((s0[i] - s0[j]) * (s1[i] - s1[j]) < 0 for j in peers) / len(peers)
    return shares


def rho(values: list[Any], quality: list[Any]) -> float | None:
    rated = [(float(v), q) for v, q in zip(values, quality) if v is not None and q is not None]
    if len(rated) < 3:
        return None
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant input: undefined, as the card says with None
        found = spearmanr(*zip(*rated)).statistic
    return None if np.isnan(found) else float(found)


def assert_summary(s: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """One (transformation, dataset)'s figures against the oracle's rows."""
    kept = [r for r in rows if r["counted"]]
    drift = np.round([r["drift"] for r in kept], 6)
    assert s["n_items"] == len(rows) and s["n_counted"] == len(kept)
    assert s["unchanged_share"] == pytest.approx(np.mean([not r["changed"] for r in rows]))
    assert s["left_out_share"] == pytest.approx(np.mean([not r["applicable"] for r in rows]))
    if not kept:
        assert s["drift_mean"] is None and s["pass_rate"] is None and s["calibrated_pass_rate"] is None
        return
    assert s["drift_mean"] == pytest.approx(drift.mean(), abs=1e-6)
    for q in QUANTILES:
        assert s[f"drift_p{q}"] == pytest.approx(np.quantile(drift, q / 100), abs=1e-6)
    assert s["pass_rate"] == pytest.approx(np.mean(drift <= PASS_DRIFT))
    baselines = {r["baseline"] for r in kept}
    for value in s["baseline_drift"].values():
        assert any(value == pytest.approx(b, abs=2e-6) for b in baselines)
    calibrated = [r["drift"] / r["baseline"] for r in kept if r["baseline"]]
    assert s["n_calibrated"] == len(calibrated)
    assert s["calibrated_drift_mean"] == pytest.approx(np.mean(calibrated), abs=1e-5)
    assert s["calibrated_pass_rate"] == pytest.approx(np.mean(np.round(calibrated, 6) <= CALIBRATED_PASS))
    queries = [r["top10_changed"] for r in kept if r["top10_changed"] is not None]
    assert s["n_query_items"] == len(queries)
    assert s["top10_changed_share"] == (float(np.mean(queries)) if queries else None)
    pairs = [r["pair"] for r in kept if r["pair"] is not None]
    assert s["n_pair_items"] == len(pairs)
    assert s["order_discordance"] == (pytest.approx(np.mean(pairs)) if pairs else None)
    quality = [r["quality"] for r in kept]
    expected = rho(drift.tolist(), quality)
    assert s["quality_spearman"]["drift"] == (None if expected is None else pytest.approx(expected, abs=1e-9))
    rated = sum(q is not None for q in quality)
    if expected is None:
        assert "quality_spearman_interval" not in s
    elif rated < 10 or abs(expected) == pytest.approx(1.0):
        assert s["quality_spearman_interval"] == {"drift": None}
    else:  # Bonett & Wright: Fisher z with se sqrt((1 + rho^2 / 2) / (n - 3))
        half = 1.959964 * np.sqrt((1 + expected**2 / 2) / (rated - 3))
        interval = np.tanh(np.arctanh(expected) + np.array([-half, half]))
        assert s["quality_spearman_interval"]["drift"] == pytest.approx(interval.tolist(), abs=1e-6)


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("item-measures") / "hashed-bow"
    return folder, publish(scored_part(None), folder)


def test_measures_equal_the_oracle(published):
    _, card = published
    block = card["item_measures"]
    expected = oracle(SMALL)
    got = {(t, d): s for t, by_d in block["per_transformation"].items() for d, s in by_d.items()}
    assert set(got) == set(expected) and len(got) > 20
    for key, rows in expected.items():
        assert_summary(got[key], rows)
    shares = [s["order_discordance"] for s in got.values() if s["order_discordance"] is not None]
    assert [s for s in got.values() if s["top10_changed_share"] is not None] and shares
    assert 0 < max(shares) and min(shares) < 1  # the definition discriminates on the sample
    assert block["sign"] == "drift" and "drift" in card["statistics"]["method"]  # one sign: the statistics' drift


def test_a_pair_counts_once(published):
    """An STS pair whose two sentences both changed is one item of the order figure, not two."""
    _, card = published
    for (t, d), rows in oracle(SMALL).items():
        s = card["item_measures"]["per_transformation"][t][d]
        if s["n_pair_items"]:
            texts = sum(r["counted"] for r in rows)
            assert s["n_pair_items"] < texts and s["n_pair_items"] == sum(r["pair"] is not None for r in rows)


# ---- the pair order: rank discordance, a property over generated similarities


def naive(before: Sequence[float], after: Sequence[float], groups: Sequence[str]) -> list[float]:
    b, a = np.round(before, 6), np.round(after, 6)
    out = []
    for i in range(len(b)):
        peers = [j for j in range(len(b)) if j != i and groups[j] == groups[i]]
        out.append(sum((b[i] - b[j]) * (a[i] - a[j]) < 0 for j in peers) / len(peers) if peers else float("nan"))
    return out


MONOTONE = {
    "shift -0.1": lambda x: x - 0.1,
    "shift -0.4": lambda x: x - 0.4,
    "affine": lambda x: 0.3 * x + 0.2,
    "tanh": lambda x: np.tanh(3 * x),
    "cube": lambda x: x**3,
    "exp": np.exp,
    "floor": lambda x: np.floor(4 * x),
}
similarities = st.lists(st.floats(-1, 1, allow_nan=False), min_size=2, max_size=40)


@settings(max_examples=200, deadline=None)
@given(similarities, st.lists(st.sampled_from("ab"), min_size=40, max_size=40), st.sampled_from(sorted(MONOTONE)))
def test_a_monotone_change_of_every_similarity_flips_no_pair(before, labels, name):
    """A uniform shift (the -0.1 that read 13% flips and the -0.4 that read 50% under the median rule) and any
    other non-decreasing map keep every order: 0 for every pair."""
    s = np.array(before)
    groups = labels[: len(s)]
    shares = order_discordance(s, MONOTONE[name](s), groups, range(len(s)))
    assert np.nan_to_num(shares, nan=0.0).tolist() == [0.0] * len(s)


@settings(max_examples=200, deadline=None)
@given(similarities, st.data())
def test_a_real_swap_flips_pairs_and_every_share_is_the_naive_count(before, data):
    s = np.array(before)
    groups = data.draw(st.lists(st.sampled_from("ab"), min_size=len(s), max_size=len(s)))
    after = np.array(data.draw(st.lists(st.floats(-1, 1, allow_nan=False), min_size=len(s), max_size=len(s))))
    assert order_discordance(s, after, groups, range(len(s))) == pytest.approx(naive(s, after, groups), nan_ok=True)
    pairs = [
        (i, j)
        for i, j in itertools.combinations(range(len(s)), 2)
        if groups[i] == groups[j] and round(s[i], 6) != round(s[j], 6)
    ]
    if pairs:
        i, j = data.draw(st.sampled_from(pairs))
        swapped = s.copy()
        swapped[[i, j]] = s[[j, i]]
        shares = order_discordance(s, swapped, groups, [i, j])
        assert (shares > 0).all()  # each of the two now ranks on the other side of the other


# ---- changed texts only, in the subsets the figure counts: a real Noise revision


NOISE_SEED = 1339


def _generated(
    tmp: Path, shared_data: Path, datasets: list[str], rules: list[str], label: str, sample: int | None
) -> dict[str, str]:
    """A Noise revision made by the generator (rules version 2), installed in a store: where to read it."""
    from hteb_generate.run.pipeline import run as generate
    from hteb_generate.setup.config import build_config

    cfg = build_config(
        seed=str(NOISE_SEED),
        profile="noise",
        overrides={
            "datasets": ",".join(datasets),
            "transformations": ",".join(rules),
            "label": label,
            "cache_dir": str(tmp / "cache"),
            "data_dir": str(shared_data),
            "publish": False,
            **({} if sample is None else {"sample": sample}),
        },
    )  # the profile's default: every row
    install(tmp / "store", generate(cfg, log=lambda m: None).folder)
    return {"store": f"file://{tmp / 'store'}", "ref": label}


@pytest.fixture(scope="module")
def numerised(tmp_path_factory, shared_data) -> tuple[dict[str, str], dict[str, Any]]:
    """SemRel2024 (12 languages, 8 rows each) under numerisation: scripts without look-alike digits are
    left out of the figure, and texts without a digit-like letter come back unchanged."""
    tmp = tmp_path_factory.mktemp("numerisation")
    where = _generated(tmp, shared_data, ["SemRel2024"], ["numerisation"], "num", 8)
    return where, publish(scored_part(None, planned=["SemRel2024"], **where), tmp / "out")


def test_pass_rates_count_only_changed_texts_in_the_subsets_the_figure_keeps(numerised):
    where, card = numerised
    coverage = next(c for c in card["coverage"] if c["transformation"] == "numerisation")
    left = {e["subset"] for e in coverage["left_out"]}
    rows = oracle(["SemRel2024"], where, {("SemRel2024", "numerisation"): left})[("numerisation", "SemRel2024")]
    s = card["item_measures"]["per_transformation"]["numerisation"]["SemRel2024"]
    assert_summary(s, rows)
    unchanged, out = [r for r in rows if not r["changed"]], [r for r in rows if not r["applicable"]]
    assert unchanged and out and s["unchanged_share"] > 0 and s["left_out_share"] > 0  # both cases are there
    every = np.mean(np.round([r["drift"] for r in rows], 6) <= PASS_DRIFT)
    assert s["pass_rate"] < every  # over all items, the unchanged texts would pass as robust
    assert s["pass_rate"] == pytest.approx(np.mean([round(r["drift"], 6) <= PASS_DRIFT for r in rows if r["counted"]]))
    drift = card["statistics"]["drift"]["numerisation"]
    assert drift["n_items"] == s["n_counted"]  # the statistics' drift counts the same texts
    assert drift["drift_mean"] == pytest.approx(np.mean([r["drift"] for r in rows if r["counted"]]), abs=1e-6)


# ---- calibrated drift: a model and its narrow-cone twin


CONE = 4.0  # the squared length of the component every embedding of the twin shares


class Unit:
    """Hashed bag-of-words vectors scaled to length 1; `cone`: each with one more dimension, sqrt(cone),
    that every text shares, so cos' = (cos + cone) / (1 + cone): the same order, all cosines high (an
    e5-like narrow cone)."""

    def __init__(self, cone: float = 0.0) -> None:
        self.cone = cone
        self.identity = self.model_id = f"unit-bow-{cone}"

    def prompt_key(self, task: Any, prompt_type: str | None) -> str | None:
        return prompt_type

    def encode(self, texts: Sequence[str], prompt_type: str | None, *, task: Any = None) -> np.ndarray:
        vectors = hashed_bow(texts, prompt_type, dim=64).astype(np.float64)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors /= np.where(norms == 0, 1.0, norms)
        if self.cone:
            vectors = np.hstack([vectors, np.full((len(texts), 1), np.sqrt(self.cone))])
        return vectors.astype(np.float32)


def _block(encoder: Unit) -> dict[str, Any]:
    data = read_data(_options(SMALL, SAMPLE))
    scored = score_variants(
        data.groups, EmbeddingTable(encoder), protocol=PROTOCOLS.get("hteb"), progress=False, flags=data.checked
    )
    block = item_measures_block(scored.drift)
    assert block is not None
    return block["per_transformation"]


def test_calibrated_drift_compares_a_model_with_its_narrow_cone_twin():
    plain, cone = _block(Unit()), _block(Unit(CONE))
    raised = 0
    for t, by_d in plain.items():
        for d, s in by_d.items():
            twin = cone[t][d]
            for lang, value in s["baseline_drift"].items():
                assert twin["baseline_drift"][lang] == pytest.approx(value / (1 + CONE), abs=2e-6)
            assert twin["drift_mean"] == pytest.approx(s["drift_mean"] / (1 + CONE), abs=2e-6)
            assert twin["calibrated_drift_mean"] == pytest.approx(s["calibrated_drift_mean"], abs=1e-4)
            assert twin["calibrated_pass_rate"] == s["calibrated_pass_rate"]
            assert twin["order_discordance"] == s["order_discordance"]  # the same order of every pair
            raised += twin["pass_rate"] > s["pass_rate"]
    assert raised > 5  # raw cosines pass the twin where the calibrated figures do not


# ---- top-10 on a real full-size retrieval unit


def test_top10_change_on_the_full_size_scifact(tmp_path, shared_data):
    """SciFact at full size (5183 documents, 300 queries) under punctuation loss and random capitalisation: each
    query's top-10 documents by exact search over the whole corpus, as scipy finds them. The hashed bag of words
    lower-cases, so random capitalisation moves no query and changes no top-10, while a lost full stop moves a
    word to another bucket and changes most of them, not all."""
    rules = ("punctuation_casing_loss", "random_capitalisation")
    where = _generated(tmp_path, shared_data, ["SciFact"], list(rules), "sci", None)
    part = scored_part(None, planned=["SciFact"], **where)
    block = item_measures_block([row for unit in part.units for row in unit.drift])
    assert block is not None
    expected = oracle(["SciFact"], where)
    for rule in rules:
        rows, s = expected[(rule, "SciFact")], block["per_transformation"][rule]["SciFact"]
        assert len(rows) == 300 and s["n_query_items"] == sum(r["counted"] for r in rows) > 250
        assert_summary(s, rows)
    assert 0.5 < block["per_transformation"]["punctuation_casing_loss"]["SciFact"]["top10_changed_share"] < 1
    caps = block["per_transformation"]["random_capitalisation"]["SciFact"]
    assert caps["top10_changed_share"] == 0 and caps["drift_mean"] == pytest.approx(0, abs=1e-6)


# ---- the card, the explorer and report.html


def test_measures_are_apart_from_the_totals_and_timed(published):
    folder, card = published
    assert "item_measures" not in card["aggregates"] and card["timings"]["item_measures_s"] > 0
    text = (folder / "result_card.md").read_text(encoding="utf-8")
    assert "## Per-item measures" in text and "; per-item measures " in text.splitlines()[-1]
    section = text.split("## Per-item measures", 1)[1]
    s = card["item_measures"]["per_transformation"]["paraphrasing"]["STSBenchmark"]
    row = next(line for line in section.splitlines() if line.startswith("| paraphrasing | STSBenchmark |"))
    assert f"| {s['drift_mean']:.3f} |" in row and f"| {s['calibrated_pass_rate']:.3f} |" in row


def test_the_explorer_parquet_loads_with_pandas_and_datasets(published):
    from datasets import load_dataset

    folder, card = published
    path = folder / "items.parquet"
    frame = pd.read_parquet(path)
    loaded = load_dataset("parquet", data_files=str(path), split="train", cache_dir=str(folder / "hf-cache"))
    assert len(frame) == len(loaded) > 0 and list(frame.columns) == loaded.column_names
    assert set(frame["model"]) == {card["model"]["model_id"]}
    expected = oracle(SMALL)
    for (t, d, seed), rows in frame.groupby(["transformation", "dataset", "seed"]):
        assert len(rows) <= 2 * EXPLORER_TOP_N
        lowest = np.sort([1 - r["drift"] for r in expected[(t, d)]])  # one seed in the sample
        moved = np.sort(rows.loc[rows["moved_most"], "cosine"].to_numpy())
        assert moved == pytest.approx(lowest[:EXPLORER_TOP_N], abs=1e-6)
    flipped = frame[frame["outcome_flipped"]]
    assert len(flipped) > 0 and (flipped["top10_changed"].fillna(False) | flipped["order_flipped"].fillna(False)).all()
    assert (frame["original_text"] != frame["transformed_text"]).any()


class Texts(HTMLParser):
    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.data: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.data.append(data)


def test_report_html_has_the_explorer_and_escapes_texts(published, tmp_path):
    folder, _ = published
    table = pq.read_table(folder / "items.parquet")
    rows = table.to_pylist()
    chosen(rows)[0]["original_text"] = HOSTILE  # a row the page shows
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    (hostile / "result_card.json").write_bytes((folder / "result_card.json").read_bytes())
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), hostile / "items.parquet")
    code, _, err = run("compare", hostile / "result_card.json", "--out", tmp_path / "cmp")
    assert code == 0, err
    html = (tmp_path / "cmp" / "report.html").read_text(encoding="utf-8")
    assert 'id="explorer"' in html and 'id="explorer-search"' in html
    assert run("compare", folder / "result_card.json", "--out", tmp_path / "clean")[0] == 0
    page, clean = Texts(html), Texts((tmp_path / "clean" / "report.html").read_text(encoding="utf-8"))
    assert page.tags == clean.tags  # the hostile markup is text, not markup
    assert HOSTILE in "".join(page.data)
    shown = chosen(rows)
    table_html = html.split('id="explorer"', 1)[1].split("</table>", 1)[0]
    assert HTML_TOP_N < len(shown) < len(rows) and table_html.count("<tr>") == len(shown) + 1  # + the header
    assert all(r["transformed_text"] in "".join(page.data) for r in shown)


def test_a_damaged_items_parquet_is_one_line(published, tmp_path):
    folder, _ = published
    (tmp_path / "result_card.json").write_bytes((folder / "result_card.json").read_bytes())
    (tmp_path / "items.parquet").write_bytes(b"not parquet")
    code, _, err = run("compare", tmp_path / "result_card.json", "--out", tmp_path / "cmp")
    assert code != 0 and "items.parquet: not a readable parquet file" in err and "Traceback" not in err


def test_a_drift_rho_over_enough_rated_items_carries_its_interval_into_the_card():
    """Generated rows of one variant, 40 of them rated (a judge's 1-5 scores falling as drift grows): the summary's
    interval is Bonett-Wright's over the rated items, and the card prints rho, interval and count; a variant with
    9 rated items gets no interval and says it rests on 9."""
    from hteb_score.report.card.card_sections import item_measures_lines
    from hteb_score.scoring.item_measures import item_measures_block
    from hteb_score.stats.ranking import spearman_interval

    rng = np.random.default_rng(3)
    rows = []
    for dataset, rated in (("many", 40), ("few", 9)):
        drift = rng.uniform(0, 1, 60)
        quality = np.clip(np.round(5 - 4 * drift + rng.normal(0, 1, 60)), 1, 5)
        rows += [
            {
                "transformation": "paraphrasing",
                "dataset": dataset,
                "drift": float(d),
                "changed": True,
                "applicable": True,
                "quality": float(q) if i < rated else None,
                "language": "eng",
                "baseline_drift": 0.9,
            }
            for i, (d, q) in enumerate(zip(drift, quality))
        ]
    block = item_measures_block(rows)
    assert block is not None
    many, few = block["per_transformation"]["paraphrasing"]["many"], block["per_transformation"]["paraphrasing"]["few"]
    rho = many["quality_spearman"]["drift"]
    assert many["n_rated"] == 40 and rho < -0.3
    assert many["quality_spearman_interval"]["drift"] == pytest.approx(list(spearman_interval(rho, 40)))
    assert few["n_rated"] == 9 and few["quality_spearman_interval"] == {"drift": None}
    low, high = many["quality_spearman_interval"]["drift"]
    lines = item_measures_lines(block)
    assert any(line.endswith(f"| {rho:.3f} [{low:+.2f}, {high:+.2f}] (40) |") for line in lines), lines
    assert any(line.endswith(f"| {few['quality_spearman']['drift']:.3f} (9) |") for line in lines), lines
