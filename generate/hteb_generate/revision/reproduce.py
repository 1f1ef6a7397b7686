"""`hteb-generate reproduce`: rebuild a published revision's run on this machine, regenerate it
without publishing, and compare it with the published one (`hteb_contract.reproduction`).

Why the run is rebuilt from the manifest: its `config` is the content configuration (what decides
the revision's content, `GenerateConfig.content_config`), so a researcher needs nothing but the
store and the label; only this machine's options (paths, batch size, engine threads, GPU memory)
come from the command line. On the CPU path none of them changes a byte of the content. On a GPU,
vLLM's kernels depend on the batch (docs/reproducing.md: the GPU guarantee), so a regeneration is
promised only with the same GPU model, torch, vLLM build and engine settings, the same --batch-size
and an uninterrupted run; `setting_differences` names those of them that differ when it fails.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import MISSING, asdict, fields
from typing import Any

from hteb_contract.common import json_input
from hteb_contract.errors import HtebError
from hteb_contract.common.paths import default_cache_dir
from hteb_contract.specs.resolved import differences

from hteb_generate.setup.config import LLM_SETTINGS, PROFILES, GenerateConfig, build_config, default_data_dir, validate
from hteb_generate.transform.noise import FIRST_RULES, is_rule
from hteb_contract.card import FIRST_CARD


def rebuild_config(
    manifest: Mapping[str, Any], *, store: str, profile: str | None = None, machine: Mapping[str, Any] | None = None
) -> GenerateConfig:
    """The run that made the revision of `manifest`, set up to regenerate it here without publishing.

    `profile` (default: cpu for local sources, gpu for Hub sources) gives the batch size and the
    doctor's checks; `machine` holds this machine's options (data_dir, cache_dir, batch_size,
    engine_options, ray_address; None = default). A configuration this version cannot rebuild
    exactly (unknown or missing fields, another prompt set) is a one-line error before any work.
    """
    label = manifest["label"]
    made_by = f"hteb-generate {manifest.get('hteb_generate_version', '?')}"
    content = {k: tuple(v) if isinstance(v, list) else v for k, v in manifest["config"].items()}
    content.pop("prompt_set_sha256", None)  # derived from prompt_set: checked through the config hash
    content.pop("noise_rules_sha256", None)  # derived from noise_rules: checked so too
    content.pop("sensitivity_rules_sha256", None)  # likewise, from sensitivity_rules
    # derived from the installed tables' rows (a revision made before the block has none: rebuilt without)
    content["record_specs"] = content.pop("specs_sha256", None) is not None
    content.setdefault(
        "noise_rules", FIRST_RULES
    )  # a config naming no rules version was made by version 1 (noise-1339)
    content.setdefault("card", FIRST_CARD)  # a config naming no card version was made with card 1
    names = {f.name: f for f in fields(GenerateConfig)}
    unknown = sorted(content.keys() - names.keys())
    if unknown:
        raise HtebError(
            f"revision {label!r} was made by {made_by} with settings this version does not know "
            f"({', '.join(unknown)}); reproduce it with that release"
        )
    profile = profile or ("cpu" if content.get("source") == "local" else "gpu")
    if profile not in PROFILES:
        raise HtebError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
    values = {
        "profile": profile,
        "label": label,
        "store": store,
        "publish": False,
        "manifest_md": None,
        "data_dir": str(default_data_dir()),
        "cache_dir": str(default_cache_dir()),
        "batch_size": PROFILES[profile]["batch_size"],
        **{k: v for k, v in (machine or {}).items() if v is not None},
        **content,
    }
    if not any(not is_rule(t) for t in content.get("transformations", ())):
        # Rules only: the manifest leaves the model settings out (they decide nothing); the profile's stand in,
        # built on the revision's own datasets (a data folder holding only those is the folder that made it).
        given = {"data_dir": values["data_dir"], "datasets": ",".join(content.get("datasets", ()))}
        defaults = asdict(build_config(seed="1", profile=profile, overrides=given))
        values = {**{k: defaults[k] for k in LLM_SETTINGS}, **values}
    missing = sorted(
        n for n, f in names.items() if n not in values and f.default is MISSING and f.default_factory is MISSING
    )
    if missing:
        raise HtebError(
            f"revision {label!r} was made by {made_by}, whose config lacks {', '.join(missing)}; "
            "reproduce it with that release"
        )
    config = validate(GenerateConfig(**values))
    if config.record_specs and "specs" in manifest:
        changed = differences(config.specs(), manifest["specs"])
        if changed is not None:
            raise HtebError(
                f"this hteb-generate cannot rebuild the run of revision {label!r}: its tables' {changed} "
                f"differs from the row the revision was made by (made by {made_by}); reproduce it with "
                "that release"
            )
    ours, theirs = (json_input.plain(c) for c in (config.content_config(), manifest["config"]))
    if ours != theirs or config.config_hash() != manifest["config_hash"]:
        key = next((k for k in sorted(ours.keys() | theirs.keys()) if ours.get(k) != theirs.get(k)), None)
        why = (
            f"{key} is {ours.get(key)!r} here, {theirs.get(key)!r} in the revision"
            if key
            else "its config_hash does not match its config"
        )
        raise HtebError(f"this hteb-generate cannot rebuild the run of revision {label!r}: {why} (made by {made_by})")
    return config


#: The manifest's runtime settings a GPU regeneration must share with the published run (docs/reproducing.md).
GPU_SETTINGS = {
    "gpus": "GPU model",
    "torch": "torch",
    "vllm": "vLLM",
    "vllm_build": "vLLM build",
    "batch_invariant": "VLLM_BATCH_INVARIANT",
    "engines": "engine settings",
}


def setting_differences(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> list[str]:
    """The recorded settings (GPU_SETTINGS) in which manifest `ours` differs from `theirs`, as
    "GPU model ['NVIDIA A100-SXM4-80GB'] here, ['NVIDIA H100 80GB HBM3'] published"."""
    mine, published = ours.get("runtime") or {}, theirs.get("runtime") or {}
    return [
        f"{label} {json.dumps(mine.get(key))} here, {json.dumps(published.get(key))} published"
        for key, label in GPU_SETTINGS.items()
        if mine.get(key) != published.get(key)
    ]


def remade_differences(ours: Mapping[str, Any], published: Mapping[str, Any]) -> str | None:
    """None when manifest `ours` lists the very files of `published` (its content hash is theirs), else a
    line naming how many files differ and the first of them."""
    if ours["content_hash"] == published["content_hash"]:
        return None
    mine = {f["path"]: f["sha256"] for f in ours["files"]}
    theirs = {f["path"]: f["sha256"] for f in published["files"]}
    differ = sorted(p for p in mine.keys() | theirs.keys() if mine.get(p) != theirs.get(p))
    return f"{len(differ)} of its {len(theirs)} files differ (first: {differ[0]})"


def differences_line(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> str:
    """One line for a regeneration that does not reproduce: which recorded settings differ, and what
    is not recorded (the batch size and a resumed run's chunk boundaries)."""
    differ = setting_differences(ours, theirs)
    named = "; ".join(differ) if differ else "none of the recorded settings differ"
    return (
        f"settings that differ from the published run: {named} (not recorded, so check them yourself: "
        "--batch-size, and whether either run was resumed)"
    )
