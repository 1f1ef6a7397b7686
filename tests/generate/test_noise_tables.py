"""The noise rules' item tables, built column by column, against their definition: one
`single_attempt` record per text, as `write_items` wrote them (the same table, the same file bytes)."""

from __future__ import annotations

import pytest

from hteb_contract import revision as rev
from hteb_contract.item_table import records_table
from hteb_contract.records import single_attempt
from hteb_contract.sources import read_source_dir
from hteb_generate.transform.noise import PERTURBATIONS, RULES_MODEL, definitions_hash, noise_tables, perturb
from hteb_generate.sources.source_loading import sample_dataset

SEED = 1339


def _records(name, dataset, rule, *, corpus=False):
    """The definition: a single-attempt record per text, sorted by ref as a file holds them."""
    refs = dataset.iter_corpus_texts() if corpus else dataset.iter_texts()
    rules_hash = definitions_hash()  # hashes the whole script table: once, not per text
    return sorted(
        (
            single_attempt(
                dataset=name,
                task_type=dataset.info.task_type,
                subset=ref.subset,
                ref=(ref.table, ref.item_id, ref.field),
                source_language=ref.language,
                transformation=rule,
                seed=SEED,
                original_text=ref.text,
                output=perturb(rule, ref.text, key=(SEED, name, rule, ref.text), language=ref.language),
                generator_model=RULES_MODEL,
                prompt_hash=rules_hash,
            )
            for ref in refs
        ),
        key=lambda r: r.ref,
    )


@pytest.mark.parametrize(
    "name, corpus",
    [("STS12", False), ("SemRel2024", False), ("MasakhaNEWS", False), ("SciFact", False), ("SciFact", True)],
)
def test_each_rule_table_is_the_table_of_its_single_attempt_records(tmp_path, shared_data, name, corpus):
    dataset = sample_dataset(read_source_dir(shared_data / name), 40)
    rules = list(PERTURBATIONS.names())
    tables = noise_tables(SEED, name, dataset, rules, corpus=corpus)
    assert list(tables) == rules
    for rule, table in tables.items():
        records = _records(name, dataset, rule, corpus=corpus)
        assert len(records) > 0 and table.equals(records_table(records))
        by_table = rev.write_item_table(tmp_path / "table", name, rule, SEED, table, corpus=corpus)
        by_records = rev.write_items(tmp_path / "records", name, rule, SEED, records, corpus=corpus)
        assert by_table.read_bytes() == by_records.read_bytes()
