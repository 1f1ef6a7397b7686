"""Importing a registry's module registers nothing: the modules that fill it load on its first lookup."""

from __future__ import annotations

import json
import subprocess
import sys

PROVIDERS = {
    "hteb_generate.engine": (
        "ENGINES",
        ["hteb_generate.engine.transformers_engine", "hteb_generate.engine.vllm_engine"],
    ),
    "hteb_generate.checks.detectors": ("DETECTORS", ["hteb_generate.checks.detector_rules"]),
    "hteb_generate.sources.hub_sources": ("CONVERTERS", ["hteb_generate.sources.hub_converters"]),
}

CHECK = """
import importlib, json, sys
providers = json.loads(sys.argv[1])
for module in providers:
    importlib.import_module(module)
loaded = {m for _, (_, ms) in providers.items() for m in ms if m in sys.modules}
assert not loaded, f"imported as a side effect: {sorted(loaded)}"
for module, (registry, ms) in providers.items():
    getattr(importlib.import_module(module), registry).names()
    assert all(m in sys.modules for m in ms), module
print("ok")
"""


def test_providers_load_on_first_lookup_not_on_import():
    done = subprocess.run(
        [sys.executable, "-c", CHECK, json.dumps(PROVIDERS)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
