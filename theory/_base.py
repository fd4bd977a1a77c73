"""Claim records and the registry shared by every theory module."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

CLAIMS: dict[str, "Claim"] = {}


@dataclass(frozen=True)
class ClaimResult:
    """What a check returns: our figure, pass/fail, and the witness or certificate (JSON-able)."""

    ours: str
    passed: bool
    witness: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Claim:
    """A paper result: identifier, title, the paper's statement or figure, and a check.

    ``check(corpus)`` receives a corpus (or ``None`` for claims that need none) and returns a
    :class:`ClaimResult`. ``needs_corpus`` marks claims computed on data.
    """

    id: str
    title: str
    paper: str
    check: Callable[..., ClaimResult]
    needs_corpus: bool = False


def claim(id: str, title: str, paper: str, *, needs_corpus: bool = False):
    """Decorator registering a check function as a :class:`Claim` in :data:`CLAIMS`."""

    def register(fn: Callable[..., ClaimResult]) -> Callable[..., ClaimResult]:
        if id in CLAIMS:
            raise ValueError(f"duplicate claim id {id!r}")
        CLAIMS[id] = Claim(id, title, paper, fn, needs_corpus)
        return fn

    return register
