"""Reading the real shared/data layout, and what each task type transforms."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from hteb_contract.errors import SourceError
from hteb_contract.source_values import subset_languages
from hteb_contract.sources import list_source_dirs, read_source_dir, read_source_parquet, write_source_parquet
from hteb_generate.sources.source_loading import sample_dataset

MTEB_NAMED = Path(__file__).resolve().parents[1] / "data" / "mteb-subsets"


def expected_rows(shared_data: Path) -> dict[tuple[str, str], int]:
    """(dataset, table) -> row count, as shared/data/SOURCES.md's table states them ("test.jsonl (1379)")."""
    counts = {}
    for line in (shared_data / "SOURCES.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 4:
            for table, rows in re.findall(r"(\w+)\.jsonl \((\d+)\b", cells[1]):
                counts[(cells[0], table)] = int(rows)
    return counts


def test_every_shared_dataset_reads(shared_data):
    expected = expected_rows(shared_data)
    assert len(expected) >= 18 and ("SummEval", "test") in expected and expected[("Banking77", "train")] == 10003
    names = list_source_dirs(shared_data)
    assert {"STSBenchmark", "SciFact", "SummEval", "STS12"} <= set(names)
    for name in names:
        dataset = read_source_dir(shared_data / name)
        assert dataset.name == name
        for (ds, table), rows in expected.items():
            if ds == name:
                assert len(dataset.tables[table]) == rows


def test_texts_transformed_per_task_type(shared_data):
    scifact = read_source_dir(shared_data / "SciFact")
    refs = list(scifact.iter_texts())
    assert len(refs) == 300 and {r.table for r in refs} == {"queries"}
    assert refs[0].item_id == "1" and refs[0].field == "text" and refs[0].language == "eng"

    summeval = read_source_dir(shared_data / "SummEval")
    refs = list(summeval.iter_texts())
    assert len(refs) == 100 * (11 + 16)
    assert refs[0].field == "human_summaries[0]"
    assert refs[-1].field == "machine_summaries[15]"

    banking = read_source_dir(shared_data / "Banking77")
    refs = list(banking.iter_texts())
    assert len(refs) == 3080 and {r.table for r in refs} == {"test"}

    semrel = read_source_dir(shared_data / "SemRel2024")
    refs = list(semrel.iter_texts())
    assert len(refs) == 2 * 7498
    assert refs[0].item_id == "AFR-test-1" and refs[0].language == "afr"
    assert {r.field for r in refs} == {"sentence1", "sentence2"}


def test_with_texts_replaces_and_drops(shared_data):
    stsb = sample_dataset(read_source_dir(shared_data / "STSBenchmark"), 4)
    upper = stsb.with_texts(lambda ref: ref.text.upper())
    assert [r["sentence1"] for r in upper.eval_rows()] == [r["sentence1"].upper() for r in stsb.eval_rows()]
    assert [r["score"] for r in upper.eval_rows()] == [r["score"] for r in stsb.eval_rows()]
    assert stsb.eval_rows()[0]["sentence1"] != upper.eval_rows()[0]["sentence1"]  # original untouched
    dropped = stsb.with_texts(lambda ref: None if ref.item_id == "1" else ref.text)
    assert dropped.ids["test"] == ["0", "2", "3"]

    summ = sample_dataset(read_source_dir(shared_data / "SummEval"), 2)
    changed = summ.with_texts(lambda ref: ref.field)
    assert changed.eval_rows()[0]["machine_summaries"][3] == "machine_summaries[3]"
    assert changed.eval_rows()[0]["text"] == summ.eval_rows()[0]["text"]


def test_sample_keeps_every_language_and_every_positive(shared_data):
    semrel = sample_dataset(read_source_dir(shared_data / "SemRel2024"), 3)
    langs = [r["lang"] for r in semrel.eval_rows()]
    assert len(langs) == 3 * 12 and len(set(langs)) == 12

    scifact = sample_dataset(read_source_dir(shared_data / "SciFact"), 5)
    docs = {d["id"] for d in scifact.tables["corpus"]}
    assert len(scifact.tables["queries"]) == 5
    assert all(q["doc_id"] in docs for q in scifact.tables["qrels"])
    assert len(docs) >= 50


def test_parquet_round_trip(tmp_path, shared_data):
    for name in ("SummEval", "SciFact", "Banking77", "SemRel2024"):
        dataset = sample_dataset(read_source_dir(shared_data / name), 3)
        write_source_parquet(dataset, tmp_path / name)
        back = read_source_parquet(tmp_path / name)
        assert back.info == dataset.info
        assert back.tables == dataset.tables
        assert json.loads((tmp_path / name / "dataset.json").read_text())["subsets"] == {
            subset: list(codes) for subset, codes in dataset.info.subsets.items()
        }


@pytest.fixture
def broken(tmp_path, shared_data):
    folder = tmp_path / "STSBenchmark"
    shutil.copytree(shared_data / "STSBenchmark", folder)
    return folder


def test_malformed_json_line_is_named(broken):
    with open(broken / "test.jsonl", "a", encoding="utf-8") as handle:
        handle.write('{"sentence1": "a", \n')
    with pytest.raises(SourceError, match=r"test.jsonl:1380: not valid JSON"):
        read_source_dir(broken)


def test_missing_field_is_named(broken):
    with open(broken / "test.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"sentence1": "a", "sentence2": "b"}) + "\n")
    with pytest.raises(SourceError, match=r"test row 1380: missing field 'score'"):
        read_source_dir(broken)


def test_unknown_task_type_and_missing_metadata(broken):
    meta = json.loads((broken / "dataset.json").read_text())
    (broken / "dataset.json").write_text(json.dumps(dict(meta, task_type="Translation")))
    with pytest.raises(SourceError, match="unknown task type 'Translation'"):
        read_source_dir(broken)
    (broken / "dataset.json").unlink()
    with pytest.raises(SourceError, match="no dataset.json"):
        read_source_dir(broken)


def test_missing_table_file(broken):
    (broken / "test.jsonl").unlink()
    with pytest.raises(SourceError, match="missing test.jsonl"):
        read_source_dir(broken)


def test_sampled_item_ids_are_those_of_the_full_dataset(tmp_path, shared_data):
    full = read_source_dir(shared_data / "SemRel2024")
    sample = sample_dataset(full, 2)
    by_id = dict(zip(full.ids["test"], full.eval_rows()))
    assert all(by_id[i] == row for i, row in zip(sample.ids["test"], sample.eval_rows()))
    masakha = sample_dataset(read_source_dir(shared_data / "MasakhaNEWS"), 2)
    assert masakha.ids["test"][:3] == ["0", "81", "376"]  # row 81 is amh's second label; eng starts at row 376
    write_source_parquet(masakha, tmp_path / "m")
    back = read_source_parquet(tmp_path / "m")
    assert back.ids == masakha.ids and back.tables == masakha.tables
    assert "_hteb_item_id" not in back.eval_rows()[0]


@pytest.mark.parametrize(("name", "labels"), [("TwitterSemEval2015", 2), ("Banking77", 4), ("TwentyNewsgroups", 4)])
def test_sample_deals_rows_out_label_by_label(shared_data, name, labels):
    """These sources are sorted by label: the first 4 rows would hold a single class."""
    full = read_source_dir(shared_data / name)
    assert len({r["label"] for r in full.eval_rows()[:4]}) == 1
    sample = sample_dataset(full, 4)
    assert len({r["label"] for r in sample.eval_rows()}) == labels
    position = {i: n for n, i in enumerate(full.ids[full.info.eval_split])}
    assert [position[i] for i in sample.ids[sample.info.eval_split]] == sorted(
        position[i] for i in sample.ids[sample.info.eval_split]
    )


def test_a_folder_in_mteb_subset_naming_gives_each_text_its_own_language():
    sts = read_source_dir(MTEB_NAMED / "STSBCrossLingual")
    assert sts.info.subsets == {"en-de": ("eng", "deu"), "en-en": ("eng",)} and sts.info.languages == ("deu", "eng")
    by_ref = {(r.item_id, r.field): r for r in sts.iter_texts()}
    first, second = by_ref[("stsb-test-0-en-de", "sentence1")], by_ref[("stsb-test-0-en-de", "sentence2")]
    assert (first.subset, first.language, second.subset, second.language) == ("en-de", "eng", "en-de", "deu")
    assert second.text == "Ein Mädchen bürstet sich die Haare."
    assert {r.language for r in sts.iter_texts() if r.subset == "en-en"} == {"eng"}
    classification = read_source_dir(MTEB_NAMED / "Banking77Ext")
    assert {(r.subset, r.language) for r in classification.iter_texts()} == {("en", "eng"), ("en-ext", "eng")}


def test_subset_names_spell_their_languages():
    assert subset_languages("en-de") == ("eng", "deu") and subset_languages("es-en") == ("spa", "eng")
    assert subset_languages("en-en") == subset_languages("en-ext") == subset_languages("en") == ("eng",)
    assert subset_languages("afr") == ("afr",) and subset_languages("ko-ko") == ("kor",)
    for name in ("zh-TW", "default", "xx", "en-de-fr"):
        with pytest.raises(SourceError, match=f"cannot tell the languages of subset '{name}' from its name; declare"):
            subset_languages(name)


def test_a_folder_without_declared_subsets_takes_them_from_its_rows(shared_data):
    semrel = read_source_dir(shared_data / "SemRel2024")
    assert len(semrel.info.subsets) == 12 and semrel.info.subsets["arq"] == ("arq",)
    assert read_source_dir(shared_data / "STS12").info.subsets == {"default": ("eng",)}
    english = semrel.select_subsets(["eng"], name="SemRel2024-eng")
    assert (english.name, english.info.subsets, english.info.languages) == (
        "SemRel2024-eng",
        {"eng": ("eng",)},
        ("eng",),
    )
    assert {r["lang"] for r in english.eval_rows()} == {"eng"} and len(english.eval_rows()) == 2600
    assert all(item_id.startswith("ENG") for item_id in english.ids["test"])
    with pytest.raises(SourceError, match="no subset 'en'; it has: afr, amh"):
        semrel.select_subsets(["en"])


@pytest.fixture
def crosslingual(tmp_path):
    folder = tmp_path / "STSBCrossLingual"
    shutil.copytree(MTEB_NAMED / "STSBCrossLingual", folder)
    return folder


def _edit(folder, *, meta=None, row=None):
    if meta is not None:
        old = json.loads((folder / "dataset.json").read_text())
        (folder / "dataset.json").write_text(json.dumps({**old, **meta}))
    if row is not None:
        with open(folder / "test.jsonl", "a", encoding="utf-8") as handle:
            handle.write(json.dumps(row) + "\n")


def _refused(folder) -> str:
    with pytest.raises(SourceError) as err:
        read_source_dir(folder)
    assert "\n" not in str(err.value)
    return str(err.value)


PAIR = {"sentence1": "A man is cycling.", "sentence2": "Ein Mann spricht.", "score": 0.6}


def test_a_row_of_an_undeclared_subset_is_named(crosslingual):
    _edit(crosslingual, row={"lang": "en-fr", **PAIR})
    assert _refused(crosslingual).endswith(
        "test row 25: subset 'en-fr' is not declared in dataset.json subsets (en-de, en-en)"
    )
    _edit(
        crosslingual,
        meta={
            "subsets": {"en-de": ["eng", "deu"], "en-en": ["eng"], "en-fr": ["eng", "fra"]},
            "languages": ["deu", "eng", "fra"],
        },
    )
    assert read_source_dir(crosslingual).info.language_of("en-fr", 1) == "fra"
    _edit(crosslingual, row=PAIR)
    assert _refused(crosslingual).endswith(
        "test row 26: subset 'default' is not declared in dataset.json subsets (en-de, en-en, en-fr)"
    )


@pytest.mark.parametrize(
    "meta, message",
    [
        ({"subsets": {"en de": ["eng"]}}, "subset name 'en de' is not an mteb subset name"),
        (
            {"subsets": {"en-de": ["english", "deu"]}},
            "subset 'en-de': languages must be ISO 639-3 codes, got ['english', 'deu']",
        ),
        (
            {"subsets": {"en-de": ["eng", "deu", "fra"]}},
            "subset 'en-de' lists 3 languages; a STS text has 2 position(s)",
        ),
        ({"subsets": {"en-de": "eng"}}, "subset 'en-de' must list its languages, got 'eng'"),
        ({"subsets": {}}, "subsets must be a non-empty object"),
        ({"languages": ["eng"]}, "languages ['eng'] are not the languages of the subsets ['deu', 'eng']"),
        ({"languages": ["en"]}, "languages must be ISO 639-3 codes, got ['en']"),
    ],
)
def test_a_bad_subsets_declaration_is_one_line(crosslingual, meta, message):
    _edit(crosslingual, meta=meta)
    assert message in _refused(crosslingual)


def test_undeclared_subsets_must_spell_their_languages(broken):
    _edit(broken, row={"lang": "zh-TW", **PAIR})
    assert "cannot tell the languages of subset 'zh-TW' from its name" in _refused(broken)
    (broken / "test.jsonl").write_text(json.dumps(PAIR) + "\n")
    _edit(broken, meta={"languages": ["eng", "deu"]})
    assert "rows without a 'lang' field need a single language in dataset.json (it lists ['eng', 'deu'])" in _refused(
        broken
    )
