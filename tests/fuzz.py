"""How many examples each Hypothesis fuzzer draws: all it asks for in `make test`, a quarter in the
fast loop (`pytest -m "not slow"`), as Hypothesis users keep a quick dev profile beside a thorough CI
one. tests/conftest.py sets the share before any test module is imported."""

from __future__ import annotations

FAST_LOOP_SHARE = 0.25
share = 1.0


def examples(n: int) -> int:
    """`n` examples, or the fast loop's share of them (at least 10)."""
    return max(10, round(n * share))
