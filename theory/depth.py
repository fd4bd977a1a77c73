"""How deep the searches of ``fr theory`` run: quick and deterministic by default, ``--deep`` on demand.

The default run is reproducible: every search draws from a fixed seed with a small example
budget. ``fr theory --deep`` (:func:`set_depth`) raises every budget (:data:`DEEP_EXAMPLES` per
search) and draws a fresh, nondeterministic seed, which every search records in its witness so
a finding can be replayed.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

#: Example budget of one search under ``--deep``.
DEEP_EXAMPLES = 10_000


@dataclass(frozen=True)
class Depth:
    """``deep``: the large budget; ``seed``: the seed every search derives its own from
    (None: each search's fixed default seed)."""

    deep: bool = False
    seed: int | None = None

    def examples(self, default: int) -> int:
        """The example budget of a search whose quick budget is ``default``."""
        return DEEP_EXAMPLES if self.deep else int(default)

    def seed_for(self, default: int) -> int:
        """The seed of a search whose fixed seed is ``default`` (offset by the deep seed)."""
        return int(default) if self.seed is None else (int(default) ^ int(self.seed)) % 2**32

    def record(self, default_examples: int, default_seed: int) -> dict:
        """What a search reports of its depth: mode, budget, seed, and whether it is replayable
        without the seed (deterministic)."""
        return {
            "mode": "deep" if self.deep else "quick",
            "examples": self.examples(default_examples),
            "seed": self.seed_for(default_seed),
            "deterministic": self.seed is None,
        }


_CURRENT = Depth()


def current() -> Depth:
    """The depth in force (default: quick and deterministic)."""
    return _CURRENT


def set_depth(deep: bool, seed: int | None = None) -> Depth:
    """Set the depth for every following search; with ``deep`` and no seed, a random one is drawn
    (and recorded by each search). Returns the new depth."""
    global _CURRENT
    if deep and seed is None:
        seed = secrets.randbits(32)
    _CURRENT = Depth(bool(deep), None if seed is None else int(seed))
    return _CURRENT
