"""Per-item measures and the item explorer (issue 36 items 2 and 3) on the bundled sample, scored with
the hashed bag-of-words encoder (scored_parts.py): the card's `item_measures` against a direct numpy
and scipy computation on the same embeddings (the oracle), items.parquet read by pandas and
`datasets.load_dataset("parquet")`, and report.html's explorer with a hostile text escaped."""

from __future__ import annotations

import warnings
from collections import defaultdict
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy.spatial.distance import cosine as cosine_distance
from scipy.stats import spearmanr

from hteb_score import SAMPLE_REVISION, SAMPLE_STORE
from hteb_score.evaluators.protocol import PROTOCOLS
from hteb_score.report.explorer_html import HTML_TOP_N, chosen
from hteb_score.report.run_outputs import publish
from hteb_score.scoring.data import read_data
from hteb_score.scoring.item_measures import EXPLORER_TOP_N, PASS_COSINE, QUANTILES, TOP_K
from hteb_score.scoring.options import ScoreOptions
from refusal import run
from scored_parts import SMALL, hashed_bow, scored_part

HOSTILE = "<script>alert('x')</script> & <img src=x onerror=alert(1)>"


def embed(texts: list[str], prompt: str | None) -> np.ndarray:
    return hashed_bow(texts, prompt, dim=64).astype(np.float64)  # scored_parts.HashedBow's vectors


def oracle() -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Every transformed text of the sample's small datasets, measured here from the definitions:
    (transformation, dataset) -> [{cosine, top10_changed, order_flipped, quality}]."""
    options = ScoreOptions(model_id=None, protocol=PROTOCOLS.get("hteb"), encoder="sentence-transformers",
                           datasets=SMALL, quiet=True, store=f"file://{SAMPLE_STORE}", ref=SAMPLE_REVISION)
    found: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for variants in read_data(options).groups:
        original = next(v.dataset for v in variants if v.transformation == "original")
        for variant in variants:
            items = variant.items
            if not items:
                continue
            task, dataset = variant.dataset.info, variant.dataset
            prompts = ["query" if split == "queries" else None for split in items.split]
            cos = [1 - cosine_distance(embed([o], p)[0], embed([t], p)[0])
                   for o, t, p in zip(items.original_text, items.transformed_text, prompts)]
            top10: list[bool | None] = [None] * len(items)
            if task.task_type == "Retrieval":
                docs = embed([f"{d['title']} {d['text']}".strip() if d.get("title") else d["text"].strip()
                              for d in dataset.tables["corpus"]], "document")
                for at, p in enumerate(prompts):
                    if p == "query":
                        top10[at] = nearest(embed([items.original_text[at]], p)[0], docs) != \
                            nearest(embed([items.transformed_text[at]], p)[0], docs)
            flips: dict[str, bool] = {}
            if task.task_type in ("STS", "STR", "PairClassification"):
                split = task.eval_split
                before = dict(zip(original.ids[split], original.tables[split]))
                median = np.median([similarity(r) for r in before.values()])
                flips = {i: bool((similarity(before[i]) > median) != (similarity(r) > median))
                         for i, r in zip(dataset.ids[split], dataset.tables[split])}
            for at in range(len(items)):
                found[(items.transformation, items.dataset)].append(
                    {"cosine": cos[at], "top10_changed": top10[at], "order_flipped": flips.get(items.item_id[at]),
                     "quality": items.quality[at]})
    return found


def nearest(query: np.ndarray, docs: np.ndarray) -> set[int]:
    sims = np.round([1 - cosine_distance(query, d) if d.any() else 0.0 for d in docs], 9)
    return set(np.lexsort((np.arange(len(docs)), -sims))[:TOP_K].tolist())


def similarity(row: dict[str, Any]) -> float:
    return round(1 - cosine_distance(embed([row["sentence1"]], None)[0], embed([row["sentence2"]], None)[0]), 9)


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("item-measures") / "hashed-bow"
    return folder, publish(scored_part(None), folder)


def share(values: list[bool | None]) -> float | None:
    defined = [v for v in values if v is not None]
    return float(np.mean(defined)) if defined else None


def test_measures_equal_the_oracle(published):
    _, card = published
    block = card["item_measures"]
    expected = oracle()
    got = {(t, d): s for t, by_d in block["per_transformation"].items() for d, s in by_d.items()}
    assert set(got) == set(expected) and len(got) > 20
    kinds = {"top10": 0, "flip": 0}
    for key, rows in expected.items():
        s, cos = got[key], np.array([r["cosine"] for r in rows])
        assert s["n_items"] == len(rows)
        assert s["cosine_mean"] == pytest.approx(cos.mean(), abs=1e-6)
        for q in QUANTILES:
            assert s[f"cosine_p{q}"] == pytest.approx(np.quantile(cos, q / 100), abs=1e-6)
        assert s["pass_rate"] == pytest.approx(np.mean(np.round(cos, 6) >= PASS_COSINE))
        assert s["top10_changed_share"] == share([r["top10_changed"] for r in rows])
        assert s["order_flipped_share"] == share([r["order_flipped"] for r in rows])
        kinds["top10"] += s["top10_changed_share"] is not None
        kinds["flip"] += s["order_flipped_share"] is not None
        rated = [(round(r["cosine"], 6), r["quality"]) for r in rows if r["quality"] is not None]
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a constant input: undefined, as the card says with None
            rho = spearmanr(*zip(*rated)).statistic if len(rated) >= 3 else None
        if rho is None or np.isnan(rho):
            assert s["quality_spearman"]["cosine"] is None
        else:
            assert s["quality_spearman"]["cosine"] == pytest.approx(rho, abs=1e-9)
    assert kinds["top10"] > 0 and kinds["flip"] > 0  # retrieval and pair datasets both measured
    flips = [s["order_flipped_share"] for s in got.values() if s["order_flipped_share"] is not None]
    assert 0 < max(flips) and min(flips) < 1  # the definition discriminates on the sample


def test_measures_are_apart_from_the_totals_and_timed(published):
    folder, card = published
    assert "item_measures" not in card["aggregates"] and card["timings"]["item_measures_s"] > 0
    text = (folder / "result_card.md").read_text(encoding="utf-8")
    assert "## Per-item measures" in text and "; per-item measures " in text.splitlines()[-1]


def test_the_explorer_parquet_loads_with_pandas_and_datasets(published):
    from datasets import load_dataset

    folder, card = published
    path = folder / "items.parquet"
    frame = pd.read_parquet(path)
    loaded = load_dataset("parquet", data_files=str(path), split="train", cache_dir=str(folder / "hf-cache"))
    assert len(frame) == len(loaded) > 0 and list(frame.columns) == loaded.column_names
    assert set(frame["model"]) == {card["model"]["model_id"]}
    expected = oracle()
    for (t, d, seed), rows in frame.groupby(["transformation", "dataset", "seed"]):
        assert len(rows) <= 2 * EXPLORER_TOP_N
        lowest = np.sort([r["cosine"] for r in expected[(t, d)]])  # one seed in the sample
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
    rows[0]["original_text"] = HOSTILE
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
    assert code != 0 and "items.parquet: not a readable Parquet file" in err and "Traceback" not in err
