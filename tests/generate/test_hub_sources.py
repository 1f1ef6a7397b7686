"""Hub datasets as mteb 2.26.24 reads them -> the source layout, for every task type.

The Hub cannot be reached here: each test builds, from real local rows, the `DatasetDict` that
`datasets.load_dataset(path, config, revision=...)` returns for each config of the pinned repo (the
layouts are mteb's loaders', as hteb_generate.sources.hub_sources describes them), and passes it through
`convert`, the function `load_hub_dataset` hands the downloaded configs to. Two tests run
`load_hub_dataset` itself on a local folder laid out like the Hub repo.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hteb_generate.sources import hub_sources
from hteb_generate.sources.hub_sources import (
    RetrievalConfigs,
    convert,
    hub_configs,
    load_hub_dataset,
    retrieval_configs,
)
from hteb_generate.sources.sources_table import lookup_source
from hteb_contract.specs.datasets import DatasetSpec
from hteb_contract.errors import SourceError
from hteb_contract.common.registry import Registry
from hteb_contract.sources import read_source_dir


def _with(spec: DatasetSpec, **info: object) -> DatasetSpec:
    """`spec` with facts of its DatasetInfo replaced (a subset list or Hub path of a test's own)."""
    return replace(spec, info=replace(spec.info, **info))


datasets = pytest.importorskip("datasets")
Dataset, DatasetDict = datasets.Dataset, datasets.DatasetDict
MTEB_NAMED = Path(__file__).resolve().parents[1] / "data" / "mteb-subsets"
SCIFACT = "mteb/scifact@d56462d0e63a25450459c4f213e49ffdb866f7f9"


def _dd(**splits: list[dict]) -> DatasetDict:
    """What load_dataset returns for one config: its splits."""
    return DatasetDict({split: Dataset.from_list(rows) for split, rows in splits.items()})


def _local(shared_data: Path, name: str):
    return read_source_dir(shared_data / name)


def _languages(dataset) -> dict[tuple[str, str], tuple[str, str]]:
    """(item, field) -> (subset, language) of every transformed text."""
    return {(r.item_id, r.field): (r.subset, r.language) for r in dataset.iter_texts()}


# -- retrieval and reranking ------------------------------------------------------------------------


def _scifact_hub(shared_data: Path, *, queries: int = 6, unjudged: int = 2) -> dict:
    """mteb/scifact's BEIR layout: corpus and queries in configs whose only split is named after them,
    qrels in `default` (train and test): `queries` judged test queries plus `unjudged` ones."""
    local = _local(shared_data, "SciFact")
    judged = local.tables["queries"][:queries]
    qrels = [r for r in local.tables["qrels"] if r["query_id"] in {q["id"] for q in judged}]
    docs = {r["doc_id"] for r in qrels}
    corpus = [d for d in local.tables["corpus"] if d["id"] in docs] + local.tables["corpus"][:5]
    asked = local.tables["queries"][len(local.tables["queries"]) - unjudged :]
    extra = [{"_id": f"train-{i}", "text": q["text"] + " (asked again)"} for i, q in enumerate(asked)]
    hub_qrels = [{"query-id": r["query_id"], "corpus-id": r["doc_id"], "score": r["score"]} for r in qrels]
    return {
        "corpus": _dd(corpus=[{"_id": d["id"], "title": d.get("title", ""), "text": d["text"]} for d in corpus]),
        "queries": _dd(queries=[{"_id": q["id"], "text": q["text"]} for q in judged] + extra),
        "default": _dd(train=[{"query-id": "train-0", "corpus-id": corpus[0]["id"], "score": 1}], test=hub_qrels),
    }


def test_beir_layout_reads_single_split_configs_and_drops_queries_without_qrels(shared_data):
    raw = _scifact_hub(shared_data)
    converted = convert(lookup_source("SciFact"), raw)
    local = _local(shared_data, "SciFact")
    assert [q["id"] for q in converted.tables["queries"]] == [q["id"] for q in local.tables["queries"][:6]]
    assert all(set(q) == {"id", "text"} for q in converted.tables["queries"])
    assert {d["id"] for d in converted.tables["corpus"]} == {d["_id"] for d in raw["corpus"]["corpus"]}
    assert all(
        isinstance(r["query_id"], str) and isinstance(r["doc_id"], str) and type(r["score"]) is int
        for r in converted.tables["qrels"]
    )
    assert len(converted.tables["qrels"]) == raw["default"]["test"].num_rows  # the test split, not train's
    assert [(t.table, t.subset, t.language) for t in converted.iter_texts()] == [("queries", "default", "eng")] * 6


def test_qrels_are_cast_as_mteb_casts_them_and_a_repeated_pair_counts_once(shared_data):
    raw = _scifact_hub(shared_data, queries=1, unjudged=0)
    qrel = raw["default"]["test"][0]
    raw["default"] = _dd(
        test=[
            {"query-id": int(qrel["query-id"]), "corpus-id": int(qrel["corpus-id"]), "score": 1.0},
            {"query-id": int(qrel["query-id"]), "corpus-id": int(qrel["corpus-id"]), "score": 2.0},
        ]
    )
    raw["queries"] = _dd(queries=[{"_id": int(q["_id"]), "text": q["text"]} for q in raw["queries"]["queries"]])
    converted = convert(lookup_source("SciFact"), raw)
    assert converted.tables["qrels"] == [{"query_id": qrel["query-id"], "doc_id": qrel["corpus-id"], "score": 2}]
    assert [q["id"] for q in converted.tables["queries"]] == [qrel["query-id"]]


def test_reranking_reads_top_ranked_and_keeps_score_0_candidates(shared_data):
    """mteb/AskUbuntuDupQuestions' layout (corpus, queries, default, top_ranked; all split `test`),
    filled with real SciFact rows."""
    local = _local(shared_data, "SciFact")
    queries, docs = local.tables["queries"][:3], local.tables["corpus"][:12]
    qrels, top = [], []
    for i, query in enumerate(queries):
        candidates = [d["id"] for d in docs[4 * i : 4 * i + 4]]
        qrels += [{"query-id": query["id"], "corpus-id": d, "score": int(j == 0)} for j, d in enumerate(candidates)]
        top.append({"query-id": query["id"], "corpus-ids": candidates})
    raw = {
        "corpus": _dd(test=[{"_id": d["id"], "title": d.get("title", ""), "text": d["text"]} for d in docs]),
        "queries": _dd(test=[{"_id": q["id"], "text": q["text"]} for q in queries]),
        "default": _dd(test=qrels),
        "top_ranked": _dd(test=top),
    }
    converted = convert(lookup_source("AskUbuntuDupQuestions"), raw)
    assert converted.tables["top_ranked"] == [{"query_id": t["query-id"], "doc_ids": t["corpus-ids"]} for t in top]
    assert sorted(r["score"] for r in converted.tables["qrels"]) == [0] * 9 + [1] * 3
    assert len(converted.tables["queries"]) == 3


def test_retrieval_configs_are_picked_as_mteb_picks_them():
    scifact, rerank = lookup_source("SciFact"), lookup_source("AskUbuntuDupQuestions")
    assert hub_configs(scifact, ["corpus", "queries", "default"]) == ["corpus", "queries", "default"]
    assert hub_configs(scifact, ["corpus", "queries", "qrels"]) == ["corpus", "queries", "qrels"]
    assert hub_configs(scifact, ["corpus", "query", "default", "qrels"]) == ["corpus", "query", "default"]
    assert hub_configs(rerank, ["corpus", "queries", "default", "top_ranked"])[-1] == "top_ranked"
    multilingual = replace(scifact, info=replace(scifact.info, subsets={"de": ("deu",), "fr": ("fra",)}))
    assert retrieval_configs(multilingual, ["de-corpus", "de-queries", "de-qrels", "de-top_ranked"])[
        "de"
    ] == RetrievalConfigs(corpus="de-corpus", queries="de-queries", qrels="de-qrels", top_ranked="de-top_ranked")
    with pytest.raises(SourceError, match="queries with instructions \\(config instruction\\) are not supported"):
        hub_configs(scifact, ["corpus", "queries", "default", "instruction"])


def test_multilingual_retrieval_reads_subset_configs(shared_data):
    beir = _scifact_hub(shared_data, queries=4, unjudged=1)
    entry = _with(lookup_source("SciFact"), subsets={"en": ("eng",), "en-ext": ("eng",)})
    raw = {
        f"{subset}-{part}": config
        for subset in ("en", "en-ext")
        for part, config in (("corpus", beir["corpus"]), ("queries", beir["queries"]), ("qrels", beir["default"]))
    }
    assert hub_configs(entry, list(raw)) == list(raw)
    with pytest.raises(SourceError, match="duplicate id"):  # one queries table: ids must not repeat across subsets
        convert(entry, raw)
    raw["en-ext-queries"] = _dd(
        queries=[{"_id": f"x{q['_id']}", "text": q["text"]} for q in beir["queries"]["queries"]]
    )
    raw["en-ext-qrels"] = _dd(test=[{**r, "query-id": f"x{r['query-id']}"} for r in beir["default"]["test"]])
    converted = convert(entry, raw)
    assert [q["lang"] for q in converted.tables["queries"]] == ["en"] * 4 + ["en-ext"] * 4
    assert len(converted.tables["corpus"]) == beir["corpus"]["corpus"].num_rows  # the same documents once


def test_a_config_with_several_splits_but_not_the_eval_split_is_refused(shared_data):
    raw = _scifact_hub(shared_data)
    raw["queries"] = _dd(train=list(raw["queries"]["queries"]), dev=list(raw["queries"]["queries"]))
    with pytest.raises(SourceError) as refused:
        convert(lookup_source("SciFact"), raw)
    assert str(refused.value) == f"{SCIFACT}: no split 'test' in config 'queries' (has: dev, train)"


def _hub_folder(root: Path, configs: dict[str, dict[str, list[dict]]]) -> Path:
    """A local folder laid out like a Hub dataset repo: one JSON Lines file per config and split, and the
    card's `configs:` front matter naming them (what load_dataset and get_dataset_config_names read)."""
    import yaml

    cards = []
    for config, splits in configs.items():
        files = []
        for split, rows in splits.items():
            path = root / config / f"{split}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
            files.append({"split": split, "path": f"{config}/{split}.jsonl"})
        cards.append({"config_name": config, "data_files": files})
    (root / "README.md").write_text("---\n" + yaml.safe_dump({"configs": cards}) + "---\n", encoding="utf-8")
    return root


def test_load_hub_dataset_reads_a_repo_in_the_beir_layout(shared_data, tmp_path):
    raw = _scifact_hub(shared_data)
    folder = _hub_folder(tmp_path / "scifact", {c: {s: list(d) for s, d in dd.items()} for c, dd in raw.items()})
    loaded = load_hub_dataset(_with(lookup_source("SciFact"), hf_path=str(folder)))
    expected = convert(lookup_source("SciFact"), raw)
    assert loaded.tables == expected.tables and len(loaded.tables["queries"]) == 6


def test_load_hub_dataset_reads_a_monolingual_task_from_its_default_config(shared_data, tmp_path):
    rows = _local(shared_data, "TwitterSemEval2015").eval_rows()[:5]
    one_row = {
        "sent1": [r["sentence1"] for r in rows],
        "sent2": [r["sentence2"] for r in rows],
        "labels": [r["label"] for r in rows],
    }
    folder = _hub_folder(tmp_path / "twitter", {"default": {"test": [one_row]}})
    loaded = load_hub_dataset(_with(lookup_source("TwitterSemEval2015"), hf_path=str(folder)))
    assert [(r["sentence1"], r["label"]) for r in loaded.eval_rows()] == [(r["sentence1"], r["label"]) for r in rows]
    with pytest.raises(SourceError, match=f"cannot load {tmp_path / 'none'}@.* config 'default': "):
        load_hub_dataset(_with(lookup_source("TwitterSemEval2015"), hf_path=str(tmp_path / "none")))


# -- the other task types ---------------------------------------------------------------------------


def test_sts_rows_map_one_to_one(shared_data):
    rows = _local(shared_data, "STSBenchmark").eval_rows()[:5]
    converted = convert(lookup_source("STSBenchmark"), {"default": _dd(train=rows[:1], validation=rows[:1], test=rows)})
    assert converted.eval_rows() == rows
    assert converted.origin.startswith("hf://mteb/stsbenchmark-sts@b0fddb5")


def test_cross_lingual_sts_fast_loading_gives_each_side_of_a_pair_its_language():
    """STS17 at its pinned revision: one default config whose rows name their pair in `lang`."""
    rows = read_source_dir(MTEB_NAMED / "STSBCrossLingual").eval_rows()
    hub_rows = [{k: r[k] for k in ("sentence1", "sentence2", "score", "lang")} for r in rows]
    entry = _with(lookup_source("STS17"), subsets={"en-de": ("eng", "deu"), "en-en": ("eng",)})  # hf_subsets=[...]
    stray = {**hub_rows[0], "lang": "fr-en"}  # a subset the task does not evaluate: mteb drops it
    converted = convert(entry, {"default": _dd(test=[*hub_rows, stray])})
    assert converted.eval_rows() == [{k: r[k] for k in ("sentence1", "sentence2", "score", "lang")} for r in rows]
    languages = _languages(converted)
    assert languages[("0", "sentence1")] == ("en-de", "eng") and languages[("0", "sentence2")] == ("en-de", "deu")
    assert languages[("12", "sentence2")] == ("en-en", "eng")
    with pytest.raises(
        SourceError, match="no row of subset 'ko-ko' in the 'lang' column of config 'default' split 'test'"
    ):
        convert(lookup_source("STS17"), {"default": _dd(test=hub_rows)})


def test_language_subsets_are_read_from_one_config_each(shared_data):
    local = _local(shared_data, "SemRel2024")
    raw = {}
    for subset in lookup_source("SemRel2024").subsets:
        found = [
            {k: r[k] for k in ("sentence1", "sentence2", "score")} for r in local.eval_rows() if r["lang"] == subset
        ]
        raw[subset] = _dd(test=found[:3])
    converted = convert(lookup_source("SemRel2024"), raw)
    assert {r["lang"] for r in converted.eval_rows()} == set(raw)
    assert {(r.subset, r.language) for r in converted.iter_texts()} == {(s, s) for s in raw}
    english = convert(lookup_source("SemRel2024-eng"), {"eng": raw["eng"]})
    assert (english.name, {r["lang"] for r in english.eval_rows()}) == ("SemRel2024-eng", {"eng"})


def test_pair_classification_one_row_of_lists_with_the_tasks_renames(shared_data):
    """TwitterSemEval2015's test split is one row of lists named sent1/sent2/labels."""
    rows = _local(shared_data, "TwitterSemEval2015").eval_rows()[:6]
    hub = {
        "sent1": [r["sentence1"] for r in rows],
        "sent2": [r["sentence2"] for r in rows],
        "labels": [r["label"] for r in rows],
    }
    converted = convert(lookup_source("TwitterSemEval2015"), {"default": _dd(test=[hub])})
    assert converted.eval_rows() == [
        {"sentence1": r["sentence1"], "sentence2": r["sentence2"], "label": r["label"]} for r in rows
    ]
    with pytest.raises(SourceError, match="no column 'sentence1' in config 'de' \\(has: labels, sent1, sent2\\)"):
        convert(lookup_source("RTE3"), {s: _dd(test=[hub]) for s in ("de", "en", "fr", "it")})  # RTE3 renames nothing


def test_pair_classification_rows_per_language_config(shared_data):
    rows = _local(shared_data, "TwitterSemEval2015").eval_rows()[:4]
    hub = [{"sentence1": r["sentence1"], "sentence2": r["sentence2"], "labels": r["label"]} for r in rows]
    converted = convert(lookup_source("RTE3"), {s: _dd(test=hub) for s in ("de", "en", "fr", "it")})
    assert [r["lang"] for r in converted.eval_rows()] == [s for s in ("de", "en", "fr", "it") for _ in rows]
    assert {(r.subset, r.language) for r in converted.iter_texts()} == {
        ("de", "deu"),
        ("en", "eng"),
        ("fr", "fra"),
        ("it", "ita"),
    }


def test_classification_with_en_and_en_ext_subsets():
    """AmazonCounterfactual: configs en-ext, en, de, ja, each with train/validation/test; rows
    {text, label (int), label_text}. The English entry reads en-ext and en only."""
    local = read_source_dir(MTEB_NAMED / "Banking77Ext")
    labels = sorted({r["label"] for r in local.eval_rows()})

    def split(table: str, subset: str) -> list[dict]:
        return [
            {"text": r["text"], "label": labels.index(r["label"]), "label_text": r["label"]}
            for r in local.tables[table]
            if r["lang"] == subset
        ]

    raw = {
        s: _dd(train=split("train", s), validation=split("test", s)[:2], test=split("test", s))
        for s in ("en-ext", "en")
    }
    converted = convert(lookup_source("AmazonCounterfactualClassification"), raw)
    assert [r["lang"] for r in converted.eval_rows()] == ["en-ext"] * 12 + ["en"] * 12
    assert len(converted.tables["train"]) == 48 and set(converted.eval_rows()[0]) == {"text", "label", "lang"}
    assert {(r.subset, r.language) for r in converted.iter_texts()} == {("en", "eng"), ("en-ext", "eng")}


def test_classification_fast_loading_keeps_the_tasks_subsets(shared_data):
    """MassiveIntent: one default config whose rows name their language subset (`en`, `de`, ...)."""
    local = _local(shared_data, "Banking77")
    rows = {
        t: [{"text": r["text"], "label": r["label"], "lang": "en"} for r in local.tables[t][:6]]
        for t in ("train", "test")
    }
    german = {"text": "Wo ist meine Karte?", "label": "card_arrival", "lang": "de"}
    converted = convert(
        lookup_source("MassiveIntentClassification"),
        {"default": _dd(train=rows["train"] + [german], test=rows["test"] + [german])},
    )
    assert converted.eval_rows() == rows["test"] and converted.tables["train"] == rows["train"]


def test_classification_reads_eval_and_train(shared_data):
    local = _local(shared_data, "Banking77")
    raw = {"default": _dd(test=local.tables["test"][:4], train=local.tables["train"][:4])}
    converted = convert(lookup_source("Banking77"), raw)
    assert converted.tables["train"] == local.tables["train"][:4] and converted.eval_rows() == local.tables["test"][:4]
    zulu = _local(shared_data, "IsiZuluNews")
    converted = convert(lookup_source("IsiZuluNews"), {"default": _dd(train=zulu.eval_rows()[:5])})
    assert list(converted.tables) == ["train"] and {r.language for r in converted.iter_texts()} == {"zul"}


def _cluster_sets(rows: list[dict], sets: int) -> list[dict]:
    """Rows -> mteb's legacy cluster-set rows: np.array_split of the texts and labels, in order."""
    return [
        {"sentences": [r["text"] for r in chunk], "labels": [r["label"] for r in chunk]}
        for chunk in np.array_split(np.array(rows, dtype=object), sets)
    ]


def test_legacy_clustering_keeps_each_set_as_a_cluster_set(shared_data):
    """MasakhaNEWSClusteringS2S: one config per language, its test split 5 rows of lists."""
    local = _local(shared_data, "MasakhaNEWS")
    by_language = {s: [r for r in local.eval_rows() if r["lang"] == s] for s in lookup_source("MasakhaNEWS").subsets}
    raw = {s: _dd(test=_cluster_sets(rows, 5)) for s, rows in by_language.items()}
    converted = convert(lookup_source("MasakhaNEWS"), raw)
    assert [{k: r[k] for k in ("text", "label", "lang")} for r in converted.eval_rows()] == local.eval_rows()
    amharic = [r["cluster_set"] for r in converted.eval_rows() if r["lang"] == "amh"]
    assert amharic == [i for i, chunk in enumerate(np.array_split(np.arange(376), 5)) for _ in chunk]
    assert {(r.subset, r.language) for r in converted.iter_texts()} == {(s, s) for s in raw}


def test_v2_clustering_flattens_the_sets_and_flat_rows_stay(shared_data):
    rows = _local(shared_data, "TwentyNewsgroups").eval_rows()[:40]
    converted = convert(lookup_source("TwentyNewsgroups"), {"default": _dd(test=_cluster_sets(rows, 4))})
    assert converted.eval_rows() == [{"text": r["text"], "label": r["label"]} for r in rows]  # no cluster_set
    flat = [{"sentences": r["text"], "labels": r["label"]} for r in rows]
    converted = convert(lookup_source("PlscClusteringS2S"), {"default": _dd(test=flat)})
    assert [r["text"] for r in converted.eval_rows()] == [r["text"] for r in rows]
    assert {r.language for r in converted.iter_texts()} == {"pol"}
    legacy = convert(lookup_source("BiorxivClusteringS2S"), {"default": _dd(test=_cluster_sets(rows, 4))})
    assert [r["cluster_set"] for r in legacy.eval_rows()] == [0] * 10 + [1] * 10 + [2] * 10 + [3] * 10


def test_summarization_keeps_the_summaries_and_relevance(shared_data):
    rows = _local(shared_data, "SummEval").eval_rows()[:2]
    hub = [
        {
            k: r[k]
            for k in (
                "id",
                "text",
                "machine_summaries",
                "human_summaries",
                "relevance",
                "coherence",
                "consistency",
                "fluency",
            )
        }
        for r in rows
    ]
    converted = convert(lookup_source("SummEval"), {"default": _dd(test=hub)})
    assert converted.eval_rows() == [
        {k: r[k] for k in ("id", "text", "human_summaries", "machine_summaries", "relevance")} for r in rows
    ]
    assert len(list(converted.iter_texts())) == 2 * (11 + 16)


# -- errors -----------------------------------------------------------------------------------------


def _refused(entry_name: str, raw: dict) -> str:
    with pytest.raises(SourceError) as refused:
        convert(lookup_source(entry_name), raw)
    assert "\n" not in str(refused.value)
    return str(refused.value)


def test_a_missing_config_is_named(shared_data):
    raw = _scifact_hub(shared_data)
    del raw["queries"]
    assert _refused("SciFact", raw) == f"{SCIFACT}: no config 'queries' (has: corpus, default)"


def test_a_missing_column_is_named_with_its_config(shared_data):
    raw = _scifact_hub(shared_data)
    raw["queries"] = _dd(queries=[{"_id": "1", "question": "A query?"}])
    assert _refused("SciFact", raw) == f"{SCIFACT}: no column 'text' in config 'queries' (has: _id, id, question)"
    raw["queries"] = _dd(queries=[{"key": "1", "text": "A query?"}])
    assert _refused("SciFact", raw) == f"{SCIFACT}: no column 'id' in config 'queries' (has: key, text)"
    sts = {"default": _dd(test=[{"sentence1": "a", "sentence2": "b"}])}
    assert _refused("STSBenchmark", sts).endswith("no column 'score' in config 'default' (has: sentence1, sentence2)")


def test_an_empty_split_and_uneven_lists_are_named():
    assert _refused("TwitterSemEval2015", {"default": {"test": []}}).endswith(
        "split 'test' of config 'default' has no rows"
    )
    uneven = {"sent1": ["a", "b"], "sent2": ["c"], "labels": [1, 0]}
    assert _refused("TwitterSemEval2015", {"default": _dd(test=[uneven])}).endswith(
        "config 'default': a row of lists must hold lists of one length in sentence1, sentence2, label"
    )


def test_a_key_error_inside_a_converter_is_not_reported_as_missing_data(monkeypatch):
    def broken(hub):
        return {}["bug"]

    monkeypatch.setattr(hub_sources, "CONVERTERS", Registry("Hub task type", entries={"STS": broken}))
    with pytest.raises(KeyError, match="bug"):
        convert(lookup_source("STSBenchmark"), {"default": {"test": []}})
