"""Every random choice the generator makes is read off sha256 of what it is about, and of nothing else.

A translation's target or pivot language (transform/languages.py), a Noise rule's draws (transform/noise.py)
and the sampling seed an engine gets for each attempt (run/generation.py) are functions of (run seed,
dataset, transformation, item or text, ...) alone: never of batch order, sharding, the number of engines,
a resume or the machine. So any part of a run, made again anywhere, draws the same, and two equal texts of
one run get the same noise (the dataset card states the rule: revision/card.py).

>>> derive_int(1339, "STSBenchmark", "translation", "order", "deu") == derive_int(1339, "STSBenchmark", "translation", "order", "deu")
True
>>> 0 <= engine_seed(1339, "x", "attempt", 2) < SEED_MODULUS
True
"""

from __future__ import annotations

import hashlib

#: engines take 32-bit seeds (vLLM's SamplingParams.seed, torch's manual_seed)
SEED_MODULUS = 2**31 - 1


def derive_int(*parts: object) -> int:
    """A 63-bit integer read off sha256 of the parts (joined by the unit separator, so no two tuples collide
    by concatenation): the one source of randomness."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def engine_seed(*parts: object) -> int:
    """An engine's sampling seed for the unit and attempt the parts name."""
    return derive_int(*parts) % SEED_MODULUS
