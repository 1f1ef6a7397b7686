"""--corpus-noise (issue 12, item 3): the retrieval corpora under each noise rule, written as a part
of their own in a revision (corpus/<dataset>/<transformation>_<seed>.parquet), deterministically;
without the flag a revision is what it was, byte for byte."""

from __future__ import annotations

import random
from operator import attrgetter
from dataclasses import replace

from hteb_contract.revision import CORPUS_TASK_TYPES
from hteb_contract.sources import SourceDataset, read_source_dir
from hteb_contract.stores import open_store
from hteb_contract.item_table import table_records
from hteb_generate.transform.noise import PERTURBATIONS, noise_tables, perturb

SEED = 1339


def noise_records(seed, name, dataset, rules, *, corpus=False):
    """The records of every rule's table."""
    return [
        r for table in noise_tables(seed, name, dataset, rules, corpus=corpus).values() for r in table_records(table)
    ]


def _config(tmp_path, shared_data, **overrides):
    from hteb_generate.setup.config import build_config

    given = {
        "datasets": "SciFact,STSBenchmark",
        "sample": 3,
        "cache_dir": str(tmp_path / "cache"),
        "store": str(tmp_path / "store"),
        "data_dir": str(shared_data),
        "manifest_md": str(tmp_path / "M.md"),
        **overrides,
    }
    return build_config(seed=str(SEED), profile="noise", overrides=given)


def _scifact(shared_data, documents: int = 150) -> SourceDataset:
    """SciFact with its first `documents` corpus rows (the rules' speed is not what is tested)."""
    scifact = read_source_dir(shared_data / "SciFact")
    return SourceDataset(
        scifact.info, {**scifact.tables, "corpus": scifact.tables["corpus"][:documents]}, scifact.origin
    )


def _shuffled(dataset: SourceDataset, table: str) -> SourceDataset:
    """The dataset with the rows of `table` (and their ids) in another order."""
    pairs = list(zip(dataset.ids[table], dataset.tables[table]))
    random.Random(7).shuffle(pairs)
    return SourceDataset(
        dataset.info,
        {**dataset.tables, table: [r for _, r in pairs]},
        dataset.origin,
        {**dataset.ids, table: [i for i, _ in pairs]},
    )


def test_corpus_records_are_every_title_and_text_under_each_rule_whatever_the_row_order(shared_data):
    scifact = _scifact(shared_data)
    rules = list(PERTURBATIONS.names())
    records = noise_records(SEED, "SciFact", scifact, rules, corpus=True)
    documents = scifact.tables["corpus"]
    with_title = sum(1 for d in documents if d.get("title"))
    assert len(records) == len(rules) * (len(documents) + with_title)
    assert {r.split for r in records} == {"corpus"} and {r.field for r in records} == {"title", "text"}
    for record in records:
        assert record.transformed_text == perturb(
            record.transformation,
            record.original_text,
            key=(SEED, "SciFact", record.transformation, record.original_text),
        )
    again = noise_records(SEED, "SciFact", _shuffled(scifact, "corpus"), rules, corpus=True)
    order = attrgetter("transformation", "ref")
    assert sorted(again, key=order) == sorted(records, key=order)


def test_a_corpus_text_is_perturbed_as_an_equal_query_would_be(shared_data):
    """Same rules, same per-text key: a text equal in the queries and the corpus gets equal noise."""
    scifact = _scifact(shared_data, documents=5)
    text = scifact.tables["corpus"][0]["text"]
    queries = [dict(scifact.tables["queries"][0], text=text)] + scifact.tables["queries"][1:]
    dataset = SourceDataset(scifact.info, {**scifact.tables, "queries": queries}, scifact.origin)
    query = next(r for r in noise_records(SEED, "SciFact", dataset, ["keyboard_typos"]) if r.original_text == text)
    document = next(
        r for r in noise_records(SEED, "SciFact", dataset, ["keyboard_typos"], corpus=True) if r.original_text == text
    )
    assert query.transformed_text == document.transformed_text != text


def test_a_corpus_noise_revision_is_verified_and_rebuilt_identically(tmp_path, shared_data):
    from hteb_generate.run.pipeline import run

    cfg = _config(tmp_path, shared_data, corpus_noise=True)
    first = run(cfg, log=lambda m: None)
    revision = open_store(cfg.store).fetch(cfg.label)
    checked = revision.check_content()
    assert revision.corpus_perturbed and revision.manifest["config"]["corpus_noise"] is True
    assert revision.corpus_variants("SciFact") == [(t, SEED) for t in PERTURBATIONS.names()]
    assert revision.corpus_variants("STSBenchmark") == []  # only CORPUS_TASK_TYPES have a corpus
    assert revision.source("SciFact").info.task_type in CORPUS_TASK_TYPES
    documents = revision.source("SciFact").tables["corpus"]
    corpus_texts = len(list(revision.source("SciFact").iter_corpus_texts()))
    assert corpus_texts >= len(documents)
    items = sum(len(revision.items(n, t, s)) for n in revision.dataset_names() for t, s in revision.variants(n))
    assert checked.records == items + len(PERTURBATIONS.names()) * corpus_texts
    for transformation, seed in revision.corpus_variants("SciFact"):
        for record in revision.corpus_items("SciFact", transformation, seed):
            assert record.transformed_text == perturb(
                transformation, record.original_text, key=(seed, "SciFact", transformation, record.original_text)
            )
    card = (revision.root / "README.md").read_text(encoding="utf-8")
    assert "Corpus perturbed (`--corpus-noise`)" in card and "config_name: SciFact-corpus" in card

    # Another batch size and a fresh cache (no staged revision to reuse): the same bytes.
    again = run(replace(cfg, batch_size=1, cache_dir=str(tmp_path / "cache2"), publish=False), log=lambda m: None)
    assert again.manifest["content_hash"] == first.manifest["content_hash"]


def test_without_the_flag_the_revision_is_what_it_was(tmp_path, shared_data):
    """Off, nothing changes but the corpus files and their card lines: the items and sources are the
    same files, the content config has no corpus_noise key (so the config hash is the old one)."""
    from hteb_generate.run.pipeline import run

    off_cfg = _config(tmp_path / "off", shared_data, publish=False)
    on_cfg = _config(tmp_path / "on", shared_data, publish=False, corpus_noise=True)
    assert "corpus_noise" not in off_cfg.content_config() and off_cfg.corpus_noise is False
    assert off_cfg.config_hash() != on_cfg.config_hash()
    off, on = run(off_cfg, log=lambda m: None), run(on_cfg, log=lambda m: None)
    assert off.manifest["corpus_perturbed"] is False
    off_files = {f["path"]: f["sha256"] for f in off.manifest["files"]}
    on_files = {f["path"]: f["sha256"] for f in on.manifest["files"]}
    assert not any(p.startswith("corpus/") for p in off_files)
    assert {p: h for p, h in on_files.items() if not p.startswith("corpus/") and p != "README.md"} == {
        p: h for p, h in off_files.items() if p != "README.md"
    }
    off_card = (off.folder / "README.md").read_text(encoding="utf-8")
    front = off_card.split("---\n", 2)[1]
    assert "path: corpus/" not in front and "config_name: SciFact-corpus\n" not in front
    assert "Corpus perturbed" not in off_card
    assert "config_name: SciFact-original-corpus" in front  # the source's corpus, untouched


def test_the_cli_flag_reaches_the_config(tmp_path, shared_data):
    from click.testing import CliRunner

    from hteb_generate.cli.app import cli

    common = [
        "validate",
        "--seed",
        str(SEED),
        "--profile",
        "noise",
        "--datasets",
        "SciFact,STSBenchmark",
        "--sample",
        "3",
        "--data-dir",
        str(shared_data),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--store",
        str(tmp_path / "store"),
        "--manifest-md",
        str(tmp_path / "M.md"),
    ]
    for extra, corpus_noise in (([], False), (["--corpus-noise"], True)):
        result = CliRunner().invoke(cli, [*common, *extra])
        assert result.exit_code == 0, result.output
        expected = _config(tmp_path, shared_data, corpus_noise=corpus_noise or None).config_hash()[:12]
        assert f"config {expected}" in result.output
