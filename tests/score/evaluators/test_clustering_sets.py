"""Legacy clustering's cluster sets: which documents mteb clusters together, on the real MasakhaNEWS.

The flat copy in ../shared/data is cut per language into mteb 1.x's 5 contiguous sets; rows with a
`cluster_set` (the Hub layout) keep theirs; the hteb protocol clusters a whole subset at once.
"""

from __future__ import annotations

import numpy as np
import pytest
from cases import CASES, biorxiv_like, masakhanews, masakhanews_cluster_sets
from evaluator_embeddings import context, evaluate, hashed_bow

from hteb_contract.errors import SourceError
from hteb_contract.sources import SourceDataset, read_source_dir
from hteb_score.evaluators.clustering import cluster_sets
from hteb_score.evaluators.protocol import HTEB, MTEB

MASAKHA = "MasakhaNEWSClusteringS2S"
# The sets with v_measure 1.0 in mteb's published all-MiniLM-L6-v2 run (embeddings-benchmark/results,
# results/sentence-transformers__all-MiniLM-L6-v2/8b3219a9.../MasakhaNEWSClusteringS2S.json, mteb
# 1.12.75): mteb scores a one-label set 1.0, so these are where its one-label sets are.
PUBLISHED_ONE_VALUED = {
    "amh": [0, 4],
    "eng": [],
    "fra": [0],
    "hau": [],
    "ibo": [3],
    "lin": [2, 3],
    "lug": [2, 3],
    "orm": [2],
    "pcm": [4],
    "run": [2, 4],
    "sna": [0, 4],
    "som": [1],
    "swa": [],
    "tir": [1, 3],
    "xho": [4],
    "yor": [0],
}


def _with_rows(dataset: SourceDataset, rows: list[dict]) -> SourceDataset:
    return SourceDataset(dataset.info, {**dataset.tables, dataset.info.eval_split: rows}, dataset.origin)


def _by_id(dataset: SourceDataset, sets: dict[str, list[list[int]]]) -> dict[str, list[list[str]]]:
    ids = dataset.ids[dataset.info.eval_split]
    return {subset: [[ids[i] for i in s] for s in subset_sets] for subset, subset_sets in sets.items()}


def test_the_flat_copy_gives_the_sets_of_mteb_published_run(shared_data):
    """Our one-label sets sit exactly where the published run has v_measure 1.0, in all 16 languages."""
    dataset = read_source_dir(shared_data / "MasakhaNEWS")
    rows = dataset.eval_rows()
    sets = cluster_sets(dataset, MTEB.clustering(MASAKHA))
    assert sets.rule == "5 contiguous per subset (np.array_split)"
    assert sorted(sets.by_subset) == sorted(PUBLISHED_ONE_VALUED)
    for lang, subset_sets in sets.by_subset.items():
        index = [i for i, r in enumerate(rows) if r["lang"] == lang]
        assert subset_sets == [part.tolist() for part in np.array_split(index, 5)]
        one_label = [n for n, s in enumerate(subset_sets) if len({rows[i]["label"] for i in s}) == 1]
        assert one_label == PUBLISHED_ONE_VALUED[lang], lang


def test_cluster_set_rows_are_grouped_in_row_order(shared_data):
    dataset = masakhanews_cluster_sets(shared_data)
    rows = dataset.eval_rows()
    sets = cluster_sets(dataset, MTEB.clustering(MASAKHA))
    assert sets.rule == "by the rows' cluster_set"
    for lang, subset_sets in sets.by_subset.items():
        index = [i for i, r in enumerate(rows) if r["lang"] == lang]
        assert subset_sets == [index[n::3] for n in range(min(3, len(index)))]


def test_a_subset_smaller_than_its_set_count_gets_empty_sets_scored_one(shared_data):
    """np.array_split of 3 rows into 5 leaves 2 empty sets; mteb scores them 1.0 (<= 1 label)."""
    base = masakhanews(shared_data)
    dataset = _with_rows(base, [r for r in base.eval_rows() if r["lang"] == "eng"][:3])
    assert [len(s) for s in cluster_sets(dataset, MTEB.clustering(MASAKHA)).by_subset["eng"]] == [1, 1, 1, 0, 0]
    assert evaluate(dataset, hashed_bow, context("mteb")).details["eng"] == {"v_measure": 1.0, "v_measure_std": 0.0}


@pytest.mark.parametrize("load", [masakhanews, masakhanews_cluster_sets])
def test_a_transformed_variant_keeps_the_sets(load, shared_data):
    dataset = load(shared_data)
    settings = MTEB.clustering(MASAKHA)
    variant = dataset.with_texts(lambda ref: ref.text.upper())
    assert variant.eval_rows() != dataset.eval_rows()
    assert _by_id(variant, cluster_sets(variant, settings).by_subset) == _by_id(
        dataset, cluster_sets(dataset, settings).by_subset
    )


def test_a_dropped_row_leaves_only_its_own_cluster_set(shared_data):
    dataset = masakhanews_cluster_sets(shared_data)
    dropped = dataset.ids["test"][0]
    variant = dataset.with_texts(lambda ref: None if ref.item_id == dropped else ref.text)
    settings = MTEB.clustering(MASAKHA)
    before = _by_id(dataset, cluster_sets(dataset, settings).by_subset)
    before["amh"][0].remove(dropped)
    assert _by_id(variant, cluster_sets(variant, settings).by_subset) == before


def test_hteb_clusters_each_subset_at_once_and_mteb_each_set(shared_data):
    flat, hub = masakhanews(shared_data), masakhanews_cluster_sets(shared_data)
    hteb = HTEB.clustering(MASAKHA)
    assert cluster_sets(hub, hteb).by_subset == cluster_sets(flat, hteb).by_subset
    hteb_flat, hteb_hub = (evaluate(d, hashed_bow, context("hteb")) for d in (flat, hub))
    mteb_flat, mteb_hub = (evaluate(d, hashed_bow, context("mteb")) for d in (flat, hub))
    assert hteb_flat.subsets == hteb_hub.subsets
    assert len({hteb_flat.value, mteb_flat.value, mteb_hub.value}) == 3


def test_biorxiv_needs_the_hub_cluster_sets(shared_data):
    dataset = biorxiv_like(shared_data)
    assert cluster_sets(dataset, MTEB.clustering("BiorxivClusteringS2S")).rule == "by the rows' cluster_set"
    flat = _with_rows(dataset, [{k: v for k, v in r.items() if k != "cluster_set"} for r in dataset.eval_rows()])
    with pytest.raises(
        SourceError,
        match=r"^BiorxivLike: mteb task BiorxivClusteringS2S clusters the sets of its "
        r"Hub rows, which only a 'cluster_set' field on every row gives",
    ):
        evaluate(flat, hashed_bow, context("mteb"))
    assert evaluate(flat, hashed_bow, context("hteb")).value == evaluate(dataset, hashed_bow, context("hteb")).value


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda rows: [
                {k: v for k, v in r.items() if k != "cluster_set"} if i == 7 else r for i, r in enumerate(rows)
            ],
            r"^MasakhaNEWS: test row 8 has no 'cluster_set' where \d+ of \d+ rows have one$",
        ),
        (
            lambda rows: [{**r, "cluster_set": "2"} if i == 3 else r for i, r in enumerate(rows)],
            r"^MasakhaNEWS: test row 4: cluster_set must be an integer, got '2'$",
        ),
        (
            lambda rows: [{**r, "cluster_set": True} if i == 0 else r for i, r in enumerate(rows)],
            r"^MasakhaNEWS: test row 1: cluster_set must be an integer, got True$",
        ),
    ],
)
def test_bad_cluster_sets_are_refused_in_one_line(change, message, shared_data):
    dataset = CASES["MasakhaNEWSClusterSets"][0](shared_data)
    with pytest.raises(SourceError, match=message):
        evaluate(_with_rows(dataset, change(dataset.eval_rows())), hashed_bow, context("mteb"))
