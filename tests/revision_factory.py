"""Build small, real revisions for tests: real source rows from shared/data, real item records
through the real writer, sealed and published with the real store code.

The transformed text here is made by a plain rule (word order reversed), not an LLM: the tests of
the format, the stores and the scorer need a real revision, not a good one.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from hteb_contract import revision as rev
from hteb_contract.records import ItemRecord, single_attempt
from hteb_contract.sources import SourceDataset, read_source_dir
from hteb_generate.sources.source_loading import sample_dataset
from hteb_contract.tasks import TextRef


def reverse_words(text: str) -> str:
    return " ".join(reversed(text.split()))


def item_record(
    dataset: SourceDataset, ref: TextRef, transformation: str, seed: int, output: str, errors: Iterable[str] = ()
) -> ItemRecord:
    """A schema-valid item record for one text, with a single attempt."""
    return single_attempt(
        dataset=dataset.name,
        task_type=dataset.info.task_type,
        subset=ref.subset,
        ref=(ref.table, ref.item_id, ref.field),
        source_language=ref.language,
        transformation=transformation,
        seed=seed,
        original_text=ref.text,
        output=output,
        generator_model="rule/reverse-words",
        prompt_hash=hashlib.sha256(f"rule:{transformation}".encode()).hexdigest(),
        errors=tuple(errors),
    )


def build_revision(
    root: Path,
    data_dir: Path,
    names: list[str],
    *,
    label: str = "test-1",
    rows: int = 5,
    transformations: tuple[str, ...] = ("paraphrasing",),
    seeds: tuple[int, ...] = (1337,),
    rule: Callable[[str], str] = reverse_words,
    edit: Callable[[ItemRecord], ItemRecord] = lambda record: record,
    config: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write and seal a revision folder at `root`; returns its manifest. `edit` may change each record;
    `config`: the manifest's config (default: the rows)."""
    datasets = [sample_dataset(read_source_dir(data_dir / name), rows) for name in names]
    records = [
        edit(item_record(dataset, ref, transformation, seed, rule(ref.text)))
        for dataset in datasets
        for transformation in transformations
        for seed in seeds
        for ref in dataset.iter_texts()
    ]
    sources = [
        rev.manifest_source(dataset.info, origin=str(data_dir / dataset.name), sample=rows) for dataset in datasets
    ]
    fields = {
        "repo_id": "file://test",
        "label": label,
        "created": "2026-11-22T00:00:00+00:00",
        "hteb_generate_version": "test",
        "config": config or {"rows": rows},
        "config_hash": rev.config_hash(config or {"rows": rows}),
        "sources": sources,
        "transformations": list(transformations),
        "seeds": list(seeds),
        "generator": {"model_id": "rule/reverse-words", "revision": "", "engine": "rule"},
        "judge": None,
        "counters": {"items": 0, "llm_calls": 0, "cache_hits": 0, "errors": {}},
    }
    return rev.write_revision(root, datasets, records, fields, "\n# Test revision\n")


def reseal(root: Path, **fields: Any) -> dict[str, Any]:
    """Seal a changed revision folder again, as a forger or a faulty writer would: every sha256 then
    matches, the content need not. The manifest is read as plain JSON (not `load_manifest`), so a
    folder whose layout the reader refuses can be resealed too; `fields` replace manifest fields."""
    manifest = json.loads((Path(root) / rev.MANIFEST).read_text(encoding="utf-8"))
    keep = {k: v for k, v in manifest.items() if k not in ("schema_version", "files", "content_hash")}
    sealed = {**keep, **fields}
    if "config_hash" not in fields:  # a config given anew is hashed as the generator hashes it
        sealed["config_hash"] = rev.config_hash(sealed["config"])
    return rev.seal(root, sealed)


def install(store: Path, folder: Path) -> str:
    """Put a sealed folder into a local store under its label, laid out as `publish` does but without
    its checks, so that a bad revision reaches the reader; returns the content hash."""
    manifest = json.loads((Path(folder) / rev.MANIFEST).read_text(encoding="utf-8"))
    digest = manifest["content_hash"]
    shutil.copytree(folder, Path(store) / "objects" / digest)
    (Path(store) / "labels").mkdir(parents=True, exist_ok=True)
    record = {"label": manifest["label"], "content_hash": digest, "published": "2026-11-22T00:00:00+00:00"}
    (Path(store) / "labels" / f"{manifest['label']}.json").write_text(json.dumps(record), encoding="utf-8")
    return digest


def reproduce(store: str, label: str, data_dir: Path, cache_dir: Path) -> str:
    """`hteb-generate reproduce` of a published revision, as a user runs it (a process of its own, offline): what it
    printed; a non-zero exit fails the calling test with the end of its stderr."""
    import os
    import subprocess
    import sys

    command = [sys.executable, "-c", "import sys; from hteb_generate.cli import main; sys.exit(main())", "reproduce"]
    command += ["--store", store, "--revision", label, "--data-dir", str(data_dir), "--cache-dir", str(cache_dir)]
    done = subprocess.run(
        command, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout + done.stderr
