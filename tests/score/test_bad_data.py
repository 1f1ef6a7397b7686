"""Degenerate data and non-finite values in scoring (issue 10, items 4-5).

Refused: data no model could score is one line on stderr, exit 2, before the model loads, and
nothing is written (`test_refused_*`, run through the CLI on real data cut down and made
degenerate). Flagged: data scored with a caveat gives a stated flag; an undefined score is JSON
null with a flag, never NaN (`test_flagged_*`, the real evaluators with hashed bag-of-words
embeddings, and the real card writer). `test_fuzz_*`: the card writer on random values.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from fuzz import examples

sys.path.insert(0, str(Path(__file__).resolve().parent / "evaluators"))

from evaluator_embeddings import context, evaluate, hashed_bow  # noqa: E402

from hteb_contract.errors import ContractError, HtebError  # noqa: E402
from hteb_contract.sources import SourceDataset, read_jsonl, read_source_dir  # noqa: E402
from hteb_contract.validation import validate  # noqa: E402
from hteb_score.report.card.card import (  # noqa: E402
    CardResults,
    CardSubject,
    build_card,
    mteb_result_files,
    render_markdown,
)
from hteb_score.report.card.outputs import write_outputs  # noqa: E402
from hteb_score.cli import main  # noqa: E402
from hteb_score.evaluators.protocol import PROTOCOLS  # noqa: E402
from hteb_score.scoring.data import Variant, check_variants
from hteb_score.scoring.score_record import ScoreRecord  # noqa: E402
from models import minilm_path  # noqa: E402


def degenerate_dir(root: Path, shared_data: Path, name: str, rows: int, **tables: Any) -> Path:
    """A source folder of `name` in the shared/data layout: its first `rows` rows of every table,
    then each table given replaced (a list of rows) or changed (a function of the rows)."""
    folder = root / "data" / name
    folder.mkdir(parents=True)
    shutil.copy(shared_data / name / "dataset.json", folder / "dataset.json")
    for path in sorted((shared_data / name).glob("*.jsonl")):
        table = read_jsonl(path)[:rows]
        change = tables.get(path.stem)
        if change is not None:
            table = change(table) if callable(change) else change
        path_out = folder / path.name
        path_out.write_text("".join(json.dumps(r) + "\n" for r in table), encoding="utf-8")
    return folder.parent


def run(capsys, *args: Any) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_refused(code: int, err: str, *needles: str) -> None:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hteb-score: error:") and "Traceback" not in err, err
    for needle in needles:
        assert needle in lines[0], lines[0]


def _all(field: str, value: Any):
    return lambda rows: [dict(r, **{field: value}) for r in rows]


def _scifact_without_judged_docs(shared_data: Path):
    judged = {str(r["doc_id"]) for r in read_jsonl(shared_data / "SciFact" / "qrels.jsonl")}
    corpus = [d for d in read_jsonl(shared_data / "SciFact" / "corpus.jsonl") if str(d["id"]) not in judged][:30]
    return corpus


REFUSED = {
    # name: (dataset, rows kept, tables changed, what the line names)
    "sts_gold_all_equal": (
        "STSBenchmark",
        12,
        {"test": _all("score", 3.0)},
        ["STSBenchmark", "'default'", "all 12 gold scores are 3", "(variant: original)"],
    ),
    "sts_one_pair": ("STSBenchmark", 1, {}, ["STSBenchmark", "has 1 pair", "(variant: original)"]),
    "sts_empty_split": (
        "STSBenchmark",
        5,
        {"test": []},
        ["STSBenchmark", "no rows in test (an empty file?): no text to transform or score"],
    ),
    "pairs_all_negative": (
        "TwitterSemEval2015",
        12,
        {"test": _all("label", 0)},
        ["TwitterSemEval2015", "label 0", "(variant: original)"],
    ),
    "pairs_all_positive": (
        "TwitterSemEval2015",
        12,
        {"test": _all("label", 1)},
        ["TwitterSemEval2015", "label 1", "(variant: original)"],
    ),
    "classification_one_class_train": (
        "Banking77",
        30,
        {"train": _all("label", "card_arrival")},
        ["Banking77", "training rows (train) all have label 'card_arrival'", "(variant: original)"],
    ),
    "classification_empty_train": (
        "Banking77",
        30,
        {"train": []},
        ["Banking77", "no rows left in 'train'", "(variant: original)"],
    ),
    "clustering_too_few_for_mteb_fast": (
        "TwentyNewsgroups",
        20,
        {},
        ["TwentyNewsgroups", "samples none of its 20 documents"],
    ),
    "clustering_empty_split": (
        "TwentyNewsgroups",
        10,
        {"test": []},
        ["TwentyNewsgroups", "no rows in test (an empty file?)"],
    ),
    "retrieval_no_judged_query": (
        "SciFact",
        20,
        {"qrels": []},
        ["SciFact", "no rows left in 'queries'", "(variant: original)"],
    ),
}


MTEB_ONLY = {"clustering_too_few_for_mteb_fast"}  # the hteb protocol clusters every document: it scores these
CASES = [
    (case, protocol) for case in REFUSED for protocol in ("hteb", "mteb") if protocol == "mteb" or case not in MTEB_ONLY
]


@pytest.mark.parametrize(("case", "protocol"), CASES, ids=[f"{c}-{p}" for c, p in CASES])
def test_refused_degenerate_source(case, protocol, shared_data, tmp_path, capsys):
    """Refused before the model loads (this test is not `slow`: loading weights would fail it)."""
    name, rows, tables, needles = REFUSED[case]
    source = degenerate_dir(tmp_path, shared_data, name, rows, **tables)
    out = tmp_path / "out"
    code, _, err = run(capsys, minilm_path(), "--source-dir", source, "--protocol", protocol, "--out", out, "--quiet")
    assert_refused(code, err, *needles)
    assert not out.exists()


@pytest.mark.parametrize("name", ["STSBenchmark", "TwitterSemEval2015", "Banking77", "TwentyNewsgroups", "SummEval"])
def test_refused_variant_with_every_row_dropped(name, shared_data):
    """`--on-error drop` can leave a transformed variant no rows: refused before any text is embedded,
    naming the variant."""
    dataset = read_source_dir(shared_data / name)
    emptied = SourceDataset(dataset.info, {**dataset.tables, dataset.info.eval_split: []}, dataset.origin)
    groups = [[Variant(dataset, "original", None), Variant(emptied, "paraphrasing", 1337)]]
    with pytest.raises(HtebError) as raised:
        check_variants(groups, PROTOCOLS.get("hteb"))
    message = str(raised.value)
    assert raised.value.exit_code == 2 and "\n" not in message
    assert message == (
        f"{name}: no rows left in {dataset.info.eval_split!r} to score (all dropped or empty) "
        "(variant: paraphrasing seed 1337)"
    )


def test_refused_retrieval_whose_judged_documents_are_all_absent_under_hteb(shared_data, tmp_path, capsys):
    """Under mteb the same data is scored (every query 0, flagged); under hteb nothing is left to score."""
    source = degenerate_dir(tmp_path, shared_data, "SciFact", 20, corpus=_scifact_without_judged_docs(shared_data))
    out = tmp_path / "out"
    code, _, err = run(capsys, minilm_path(), "--source-dir", source, "--out", out, "--quiet")
    assert_refused(
        code, err, "SciFact", "judged documents (qrels) are absent from the corpus", "no query can be scored"
    )
    assert not out.exists()


def test_refused_on_one_language_only(shared_data, tmp_path, capsys):
    """A multilingual dataset with one degenerate subset is refused naming that subset."""

    def one_language_constant(rows):
        by_lang: dict[str, list[dict[str, Any]]] = {}
        for row in read_jsonl(shared_data / "SemRel2024" / "test.jsonl"):
            by_lang.setdefault(row["lang"], []).append(row)
        return [dict(r, score=0.5) if lang == "amh" else r for lang, rows in by_lang.items() for r in rows[:6]]

    source = degenerate_dir(tmp_path, shared_data, "SemRel2024", 40, test=one_language_constant)
    code, _, err = run(capsys, minilm_path(), "--source-dir", source, "--out", tmp_path / "out", "--quiet")
    assert_refused(code, err, "SemRel2024", "subset 'amh'", "gold scores are 0.5")


# --- flagged: the real evaluators (hashed bag-of-words embeddings) -------------------------------------------


def _dataset(shared_data: Path, name: str, rows: int, **tables: Any) -> SourceDataset:
    dataset = read_source_dir(shared_data / name)
    changed = {}
    for table, content in dataset.tables.items():
        cut = content[:rows]
        change = tables.get(table)
        changed[table] = change(cut) if callable(change) else (cut if change is None else change)
    return SourceDataset(dataset.info, changed, dataset.origin)


def _checked(dataset: SourceDataset, protocol: str):
    return check_variants([[Variant(dataset, "original", None)]], PROTOCOLS.get(protocol))


@pytest.mark.parametrize("protocol", ["hteb", "mteb"])
def test_flagged_sts_whose_predictions_are_all_equal(protocol, shared_data):
    """One sentence pair repeated with different gold scores: every cosine is equal, Spearman undefined."""

    def same_texts(rows):
        return [dict(r, sentence1=rows[0]["sentence1"], sentence2=rows[0]["sentence2"]) for r in rows]

    dataset = _dataset(shared_data, "STSBenchmark", 10, test=same_texts)
    assert _checked(dataset, protocol) == []
    result = evaluate(dataset, hashed_bow, context(protocol))
    assert result.value is None and result.subsets == {"default": None}
    [flag] = result.flags
    assert flag.code == "undefined_score" and "same similarity" in flag.message and "'default'" in flag.message


def test_flagged_clustering_of_one_label(shared_data):
    """hteb: nothing to cluster, undefined (null); mteb: 1.0 as mteb scores it, flagged before scoring."""
    dataset = _dataset(
        shared_data,
        "MasakhaNEWS",
        10_000,
        test=lambda rows: [dict(r, label="sports") for r in rows if r["lang"] == "eng"][:40],
    )
    assert _checked(dataset, "hteb") == []
    hteb = evaluate(dataset, hashed_bow, context("hteb"))
    assert hteb.value is None and [f.code for f in hteb.flags] == ["undefined_score"]
    assert "same label" in hteb.flags[0].message

    [flag] = _checked(dataset, "mteb")
    assert (flag.code, flag.dataset, flag.transformation) == ("one_cluster_label", "MasakhaNEWS", "original")
    assert "all 40 documents have label 'sports'" in flag.message and "scored 1.0 as mteb does" in flag.message
    assert evaluate(dataset, hashed_bow, context("mteb")).value == 1.0


def test_flagged_retrieval_with_judged_documents_absent_from_the_corpus(shared_data):
    """A third of the judged documents removed from the corpus: mteb keeps its number (lower: the
    missing ones count as relevant) and says how many; hteb leaves those judgements out."""
    full = read_source_dir(shared_data / "SciFact")
    queries = full.tables["queries"][:40]
    ids = {str(q["id"]) for q in queries}
    qrels = [r for r in full.tables["qrels"] if str(r["query_id"]) in ids]
    judged = sorted({str(r["doc_id"]) for r in qrels})
    removed = set(judged[::3])
    corpus = [d for d in full.tables["corpus"] if str(d["id"]) not in removed and str(d["id"]) not in judged][:20]
    corpus += [d for d in full.tables["corpus"] if str(d["id"]) in set(judged) - removed]
    dataset = SourceDataset(
        full.info, {**full.tables, "queries": queries, "qrels": qrels, "corpus": corpus}, full.origin
    )
    missing = sum(1 for r in qrels if str(r["doc_id"]) in removed)

    [mteb_flag] = _checked(dataset, "mteb")
    assert mteb_flag.code == "missing_judged_documents"
    assert (
        mteb_flag.message.startswith(f"{missing} of {len(qrels)} judged documents")
        and "as mteb does" in mteb_flag.message
    )
    [hteb_flag] = _checked(dataset, "hteb")
    assert "left out of the judgements" in hteb_flag.message

    mteb = evaluate(dataset, hashed_bow, context("mteb"))
    hteb = evaluate(dataset, hashed_bow, context("hteb"))
    kept = SourceDataset(
        dataset.info, {**dataset.tables, "qrels": [r for r in qrels if str(r["doc_id"]) not in removed]}, dataset.origin
    )
    assert hteb.value == evaluate(kept, hashed_bow, context("hteb")).value  # scored on the judgements it can hold
    assert 0 < mteb.value < hteb.value


def test_flagged_reranking_with_judged_documents_absent_from_the_corpus(shared_data):
    """A reranking set built from SciFact (reranking_cases.py) whose first relevant documents are
    gone from the corpus: flagged under both protocols; hteb leaves those judgements out."""
    from reranking_cases import scifact_reranking

    full = scifact_reranking(read_source_dir(shared_data / "SciFact"), negatives=5)
    queries = full.tables["queries"][:30]
    ids = {str(q["id"]) for q in queries}
    qrels = [r for r in full.tables["qrels"] if str(r["query_id"]) in ids]
    removed = {str(r["doc_id"]) for r in qrels if r["score"] > 0}
    removed = set(sorted(removed)[:10])
    dataset = SourceDataset(
        full.info,
        {
            **full.tables,
            "queries": queries,
            "qrels": qrels,
            "corpus": [d for d in full.tables["corpus"] if str(d["id"]) not in removed],
        },
        full.origin,
    )
    missing = sum(1 for r in qrels if str(r["doc_id"]) in removed)
    for protocol, says in (("mteb", "as mteb does"), ("hteb", "left out of the judgements")):
        [flag] = _checked(dataset, protocol)
        assert flag.code == "missing_judged_documents" and flag.message.startswith(f"{missing} of {len(qrels)}")
        assert says in flag.message
        assert evaluate(dataset, hashed_bow, context(protocol)).value is not None


def test_flagged_summarization_whose_documents_are_all_skipped(shared_data):
    """Every document's ratings equal: mteb skips each, nothing is left to average: undefined."""
    dataset = _dataset(
        shared_data, "SummEval", 3, test=lambda rows: [dict(r, relevance=[3.0] * len(r["relevance"])) for r in rows]
    )
    for protocol in ("hteb", "mteb"):
        result = evaluate(dataset, hashed_bow, context(protocol))
        assert result.value is None and "every document was skipped" in result.flags[0].message


# --- flagged: the card ---------------------------------------------------------------------------------------


def _records(values: dict[tuple[str, str, int | None], float | None]) -> list[ScoreRecord]:
    return [ScoreRecord(d, "STS", "all", t, s, "spearman", v) for (d, t, s), v in values.items()]


def _card(scores: list[ScoreRecord], protocol: str = "hteb", **extra: Any) -> dict[str, Any]:
    subject = CardSubject(
        model={"model_id": "m", "revision": "sha256:" + "a" * 64},
        encode={"batch_size": 1, "dtype": "float32", "normalize": True, "device": "cpu", "prompts": {}},
        dataset={"repo_id": "hteb/test", "label": "t", "revision": "r"},
        protocol=PROTOCOLS.get(protocol),
        on_error="original",
    )
    return build_card(subject, CardResults(**{"scores": scores, "timings": {"total_s": 1.0}, **extra}))


def test_flagged_undefined_scores_are_null_and_left_out_of_the_aggregates(tmp_path):
    scores = _records(
        {
            ("A", "original", None): 0.8,
            ("A", "paraphrasing", 1): None,
            ("A", "paraphrasing", 2): 0.6,
            ("B", "original", None): float("nan"),
            ("B", "paraphrasing", 1): 0.5,
        }
    )
    card = _card(scores)
    agg = card["aggregates"]
    assert [r["dataset"] for r in agg["per_dataset"]] == ["A"]  # B has no defined Original
    assert agg["per_dataset"][0]["transformations"]["paraphrasing"]["n_seeds"] == 1
    assert agg["original"] == pytest.approx(80.0) and agg["per_transformation"]["paraphrasing"][
        "mean"
    ] == pytest.approx(60.0)
    flags = [(f["code"], f["dataset"], f["transformation"], f["seed"]) for f in card["flags"]]
    assert flags == [
        ("undefined_score", "B", "original", None),
        ("skipped_in_aggregates", "A", "paraphrasing", 1),
        ("skipped_in_aggregates", "B", "original", None),
        ("skipped_in_aggregates", "B", None, None),
    ]
    assert "1 transformed score(s) are left out" in card["flags"][-1]["message"]
    assert [r["value"] for r in card["scores"]][3] is None

    written = write_outputs(tmp_path, card, {})
    text = written[0].read_text(encoding="utf-8")
    assert "NaN" not in text
    validate("result_card", json.loads(text, parse_constant=_no_constant), what="card")
    md = written[1].read_text(encoding="utf-8")
    assert "## Flags" in md and "| B | original | `undefined_score` |" in md and "| A | paraphrasing seed 1 |" in md
    assert "| B | - | `skipped_in_aggregates` | Original score undefined" in md


def test_flagged_mteb_json_holds_null_for_an_undefined_score(shared_data, tmp_path):
    dataset = _dataset(
        shared_data,
        "STSBenchmark",
        10,
        test=lambda rows: [dict(r, sentence1=rows[0]["sentence1"], sentence2=rows[0]["sentence2"]) for r in rows],
    )
    result = evaluate(dataset, hashed_bow, context("mteb"))
    scores = _records({("STSBenchmark", "original", None): result.value})
    card = _card(scores, flags=[f.of("STSBenchmark", "original", None) for f in result.flags], protocol="mteb")
    assert [f["code"] for f in card["flags"]] == ["undefined_score", "skipped_in_aggregates"]
    mteb = mteb_result_files(
        card, {("STSBenchmark", "original", None): result}, {"STSBenchmark": dataset.info.to_json()}
    )
    written = write_outputs(tmp_path, card, mteb)
    task = json.loads(
        next(p for p in written if p.name.startswith("STSBenchmark.hteb-")).read_text(encoding="utf-8"),
        parse_constant=_no_constant,
    )
    entry = task["scores"]["test"][0]
    assert entry["main_score"] is None and entry["cosine_spearman"] is None
    assert card["aggregates"]["original"] is None and "| **model** | - |" in render_markdown(card)


def test_refused_non_finite_number_outside_the_scores(tmp_path):
    """A NaN where no score is (a timing): the card is not written at all, and the error names where."""
    with pytest.raises(
        ContractError,
        match=r"^result card: timings/total_s: inf is not a finite number \(NaN and infinities are not JSON\)$",
    ):
        write_outputs(
            tmp_path / "out", _card(_records({("A", "original", None): 0.5}), timings={"total_s": float("inf")}), {}
        )
    assert not (tmp_path / "out").exists()


def _no_constant(name: str) -> None:
    raise ValueError(f"not strict JSON: {name}")


def test_flag_codes_are_the_schemas():
    from hteb_contract.validation import schema
    from hteb_score.flags import CODES

    assert schema("result_card")["properties"]["flags"]["items"]["properties"]["code"]["enum"] == list(CODES)


# --- fuzz: the card writer -----------------------------------------------------------------------------------

VALUES = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([float("nan"), float("inf"), float("-inf"), 0.0, 1.0]),
)
JSONISH = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), st.floats(), st.text(max_size=5)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=10,
)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    values=st.lists(VALUES, min_size=1, max_size=6),
    statistics=st.one_of(st.none(), st.dictionaries(st.text(max_size=5), JSONISH, max_size=3)),
    timing=st.floats(),
)
def test_fuzz_card_writer(values, statistics, timing, tmp_path_factory):
    """Random score values (NaN, inf, None), nested statistics and timings: either every file is
    strict JSON valid against the schema, with a flag for every null score, or the write is refused
    in one line and nothing is written."""
    out = tmp_path_factory.mktemp("fuzz") / "out"
    keys = [("A", "original", None)] + [("A", "paraphrasing", seed) for seed in range(1, len(values))]
    try:
        card = _card(_records(dict(zip(keys, values))), statistics=statistics, timings={"total_s": timing})
        nulls = {(r["dataset"], r["transformation"], r["seed"]) for r in card["scores"] if r["value"] is None}
        flagged = {
            (f["dataset"], f["transformation"], f["seed"])
            for f in card["flags"]
            if f["code"] == "skipped_in_aggregates"
        }
        assert nulls <= flagged
        written = write_outputs(out, card, {})
    except ContractError as err:
        assert "\n" not in str(err) and "is not a finite number" in str(err)
        assert not out.exists()
        return
    parsed = json.loads(written[0].read_text(encoding="utf-8"), parse_constant=_no_constant)
    validate("result_card", parsed, what="fuzzed card")
    assert all(v is None or math.isfinite(v) for v in (r["value"] for r in parsed["scores"]))


def test_refused_nan_anywhere_in_strict_json():
    """The strict writer names the first non-finite number's path; None is written as null."""
    from hteb_contract.validation import non_finite
    from hteb_score.strict_json import dumps

    assert non_finite({"a": [1.0, {"b": float("nan")}]})[0] == "a/1/b"
    with pytest.raises(ContractError, match="x: a/1/b: nan is not a finite number"):
        dumps({"a": [1.0, {"b": float("nan")}]}, what="x")
    assert json.loads(dumps({"a": None}, what="x")) == {"a": None}


@pytest.mark.slow
def test_flagged_end_to_end_with_the_real_model(shared_data, tmp_path, capsys):
    """hteb-score with all-MiniLM-L6-v2 under mteb: an STS set whose pairs are one pair repeated
    (Spearman undefined: null) and SciFact with judged documents outside the corpus (mteb's number,
    flagged). Exit 0; every file strict JSON; the flags in the card, result_card.md and the summary."""

    def same_texts(rows):
        return [dict(r, sentence1=rows[0]["sentence1"], sentence2=rows[0]["sentence2"]) for r in rows]

    degenerate_dir(tmp_path, shared_data, "STSBenchmark", 10, test=same_texts)
    source = degenerate_dir(tmp_path, shared_data, "SciFact", 40)
    out = tmp_path / "out"
    code, stdout, err = run(
        capsys, minilm_path(), "--source-dir", source, "--protocol", "mteb", "--out", out, "--quiet", "--device", "cpu"
    )
    assert code == 0, err
    assert "original" in stdout and "flag(s), see result_card.md" in stdout
    card = json.loads((out / "result_card.json").read_text(encoding="utf-8"), parse_constant=_no_constant)
    validate("result_card", card, what="card")
    codes = {(f["dataset"], f["code"]) for f in card["flags"]}
    assert codes == {
        ("STSBenchmark", "undefined_score"),
        ("STSBenchmark", "skipped_in_aggregates"),
        ("SciFact", "missing_judged_documents"),
    }
    values = {r["dataset"]: r["value"] for r in card["scores"] if r["subset"] == "all"}
    assert values["STSBenchmark"] is None and 0 <= values["SciFact"] < 1
    md = (out / "result_card.md").read_text(encoding="utf-8")
    assert "| STSBenchmark | original | `undefined_score` |" in md and "`missing_judged_documents`" in md
    for path in (out / "mteb").rglob("*.json"):
        json.loads(path.read_text(encoding="utf-8"), parse_constant=_no_constant)
