"""Revisions whose perturbed corpus (--corpus-noise) was resealed with bad content: every sha256
matches, so only the reader's checks can refuse them. `verify` and the reader of the scorer's
--corpus-robustness must both end in one line naming the file, never accept it."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hteb_contract.arrow import arrow_schema
from hteb_contract.errors import HtebError
from hteb_contract.revision import Revision
from hteb_score.cli import main
from hteb_score.scoring.corpus_robustness import corpus_variants
from revision_factory import install, reseal

SEED = 1339
CORPUS = f"corpus/SciFact/numerisation_{SEED}.parquet"


@pytest.fixture(scope="module")
def base(tmp_path_factory, shared_data) -> Path:
    """A real revision made by the generator: SciFact (2 queries) and STSBenchmark, two rules, --corpus-noise."""
    from hteb_generate.setup.config import build_config
    from hteb_generate.run.pipeline import run

    root = tmp_path_factory.mktemp("corpus-base")
    cfg = build_config(
        seed=str(SEED),
        profile="noise",
        overrides={
            "datasets": "SciFact,STSBenchmark",
            "transformations": "numerisation,character_deletion",
            "sample": 2,
            "corpus_noise": True,
            "label": "bad",
            "cache_dir": str(root / "cache"),
            "data_dir": str(shared_data),
            "publish": False,
        },
    )
    folder = run(cfg, log=lambda m: None).folder
    revision = Revision.open(folder)  # sound as made: each refusal below is its corruption's
    assert len(corpus_variants(revision, revision.dataset_names(), transformations=None, seeds=None)) == 2
    assert revision.check_content().item_files == 2 * 2 + 2  # two datasets x two rules, and two corpus files
    return folder


def rows(edit: Callable[[list[dict]], None], rel: str = CORPUS):
    def corrupt(root: Path) -> None:
        found = pq.read_table(root / rel).to_pylist()
        edit(found)
        pq.write_table(pa.Table.from_pylist(found, schema=arrow_schema("item")), root / rel)

    return corrupt


def copy(rel: str, to: str, *, remove: bool = False):
    def corrupt(root: Path) -> None:
        (root / to).parent.mkdir(parents=True, exist_ok=True)
        (shutil.move if remove else shutil.copy)(root / rel, root / to)

    return corrupt


def query_rows_in_the_corpus_file(root: Path) -> None:
    shutil.copy(root / f"data/SciFact/numerisation_{SEED}.parquet", root / CORPUS)


#: id -> (corruption, or manifest fields to reseal with; what the one line must say)
CASES: dict[str, tuple[Callable[[Path], None] | dict, str]] = {
    "undeclared": ({"corpus_perturbed": False}, "does not say corpus_perturbed"),
    "of-an-sts-dataset": (
        copy(CORPUS, f"corpus/STSBenchmark/numerisation_{SEED}.parquet"),
        "a STS dataset has no perturbed corpus",
    ),
    "undeclared-transformation": (
        copy(CORPUS, f"corpus/SciFact/keyboard_typos_{SEED}.parquet", remove=True),
        "not named <transformation>_<seed>.parquet after a declared transformation",
    ),
    "original-text-edited": (rows(lambda r: r[0].update(original_text="edited")), "original_text of corpus/"),
    "unknown-document": (
        rows(lambda r: r[0].update(item_id="no-such-document")),
        "corpus/no-such-document/text is not a text of the source of SciFact",
    ),
    "document-missing": (rows(lambda r: r.pop()), f"{CORPUS}: no record for corpus/"),
    "document-twice": (
        rows(
            lambda r: r.append(
                dict(r[0], transformed_text="other", attempts=[dict(r[0]["attempts"][0], output="other")])
            )
        ),
        "a second record for corpus/",
    ),
    "query-records": (query_rows_in_the_corpus_file, "is not a text of the source of SciFact"),
    "wrong-transformation": (
        rows(lambda r: [x.update(transformation="character_deletion") for x in r]),
        "a record of SciFact/Retrieval/character_deletion/1339 in the file of",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_refused_resealed_corpus(base, tmp_path, capsys, case):
    corrupt, expected = CASES[case]
    root = tmp_path / "rev"
    shutil.copytree(base, root)
    if isinstance(corrupt, dict):
        reseal(root, **corrupt)
    else:
        corrupt(root)
        reseal(root)
    store = tmp_path / "store"
    install(store, root)
    before = sorted(p.relative_to(store) for p in store.rglob("*"))

    assert main(["verify", "--store", str(store), "--revision", "bad"]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err, captured.err
    assert captured.err.startswith("hteb-score: error: ") and expected in captured.err, captured.err
    assert sorted(p.relative_to(store) for p in store.rglob("*")) == before

    with pytest.raises(HtebError) as refused:  # the reader of --corpus-robustness refuses it as well
        revision = Revision.open(root)
        corpus_variants(revision, revision.dataset_names(), transformations=None, seeds=None)
        revision.check_content()
    assert "\n" not in str(refused.value) and refused.value.exit_code == 2
