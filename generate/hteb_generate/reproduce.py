"""`hteb-generate reproduce`: regenerate a published revision from its manifest and say whether this
machine reproduces it (`hteb_contract.reproduction` states what reproducing means)."""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hteb_contract.errors import HtebError
from hteb_contract.reproduction import Reproduction, compare_revisions
from hteb_contract.revision import Revision
from hteb_contract.stores import open_store

from .config import PROFILES, GenerateConfig, default_cache_dir, default_data_dir, validate


def config_from_manifest(manifest: dict[str, Any], *, data_dir: str | None, cache_dir: str | None,
                         store: str) -> GenerateConfig:
    """The run configuration a revision was made with (its manifest's `config`), on this machine's paths."""
    content = dict(manifest["config"])
    prompt_sha = content.pop("prompt_set_sha256", None)
    profile = "cpu" if content.get("source") == "local" else "gpu"
    for key in ("seeds", "datasets", "transformations"):
        content[key] = tuple(content[key])
    names = {f.name for f in dataclasses.fields(GenerateConfig)}
    unknown = sorted(set(content) - names)
    if unknown:
        raise HtebError(f"revision {manifest['label']}: its config has {', '.join(unknown)}, which this release does "
                        "not know; reproduce it with the release that made it "
                        f"(hteb-generate {manifest['hteb_generate_version']})")
    config = validate(GenerateConfig(
        **content, profile=profile, data_dir=data_dir or str(default_data_dir()), store=store,
        label=manifest["label"], cache_dir=cache_dir or str(default_cache_dir()), publish=False,
        batch_size=PROFILES[profile]["batch_size"], manifest_md=None,
    ))
    if config.config_hash() != manifest["config_hash"] or (
            prompt_sha is not None and config.content_config()["prompt_set_sha256"] != prompt_sha):
        raise HtebError(f"revision {manifest['label']}: this release's prompt set {config.prompt_set!r} or defaults "
                        "differ from the ones that made it; reproduce it with hteb-generate "
                        f"{manifest['hteb_generate_version']}")
    return config


def reproduce(store: str, ref: str, *, candidate: Path | None = None, data_dir: str | None = None,
              cache_dir: str | None = None, parapluie_tolerance: float, rating_tolerance: float,
              log: Callable[[str], None] = print) -> Reproduction:
    """Compare revision `ref` of `store` with `candidate` (a revision folder), or with a regeneration
    of it on this machine (publishing nothing)."""
    reference = open_store(store).fetch(ref)
    if candidate is not None:
        regenerated = Revision.open(candidate)
    else:
        from .pipeline import run

        config = config_from_manifest(reference.manifest, data_dir=data_dir, cache_dir=cache_dir,
                                      store=tempfile.gettempdir())
        regenerated = Revision.open(run(config, log=log).folder)
    return compare_revisions(regenerated, reference, parapluie_tolerance=parapluie_tolerance,
                             rating_tolerance=rating_tolerance)
