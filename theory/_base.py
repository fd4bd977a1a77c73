"""Claim records and the registry shared by every theory module."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .verdict import Rule, check_kind

CLAIMS: dict[str, Claim] = {}

#: How a claim establishes its statement (the ``method`` of every ``fr theory --json`` record):
#: a SymPy proof for symbolic parameters, hand-built witnesses scored by frcore, numbers computed
#: on seeded draws or a corpus, or a search for counterexamples.
METHODS: tuple[str, ...] = ("symbolic", "witness", "numeric", "search")


@dataclass(frozen=True)
class ClaimResult:
    """What a check returns: our figure, whether the check passed (the computation ran and every
    certificate re-verified — *not* whether the paper's statement holds), and the witness or
    certificate (JSON-able). The verdict against the paper is decided from the witness by the
    claim's :class:`~theory.verdict.Rule`."""

    ours: str
    passed: bool
    witness: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Claim:
    """A paper result: identifier, title, the paper's statement or figure, a check, and the rule
    that turns the check's witness into a verdict against the paper.

    ``check(corpus)`` receives a corpus (or ``None`` for claims that need none) and returns a
    :class:`ClaimResult`. ``kind`` (:data:`~theory.verdict.KINDS`) says whether the verdict rests on a
    proof, witness or the paper's own figures (``formal``) or on a measurement of a suite
    (``empirical``). ``needs_corpus`` marks claims computed on data. ``diagnose(context,
    witness)``, when given, runs for a verdict other than *reproduced* and returns a JSON-able
    diagnosis of the difference (see :mod:`theory.diagnose`). ``method`` (one of
    :data:`METHODS`) and ``range`` say how and over what the statement is established (a
    witness may override ``range`` with what a run actually covered).
    """

    id: str
    title: str
    paper: str
    check: Callable[..., ClaimResult]
    rule: Rule
    kind: str
    needs_corpus: bool = False
    diagnose: Callable[..., Mapping[str, Any]] | None = None
    method: str = "numeric"
    range: str = ""


def claim(
    id: str,
    title: str,
    paper: str,
    *,
    kind: str,
    rule: Rule,
    needs_corpus: bool = False,
    diagnose: Callable[..., Mapping[str, Any]] | None = None,
    method: str = "numeric",
    range: str = "",
):
    """Decorator registering a check function as a :class:`Claim` in :data:`CLAIMS`."""
    if not isinstance(rule, Rule):
        raise TypeError(f"claim {id!r}: rule must be a theory.verdict.Rule, got {type(rule).__name__}")
    check_kind(f"claim {id!r}", kind)
    if method not in METHODS:
        raise ValueError(f"claim {id!r}: method {method!r} is not one of {METHODS}")

    def register(fn: Callable[..., ClaimResult]) -> Callable[..., ClaimResult]:
        if id in CLAIMS:
            raise ValueError(f"duplicate claim id {id!r}")
        CLAIMS[id] = Claim(id, title, paper, fn, rule, kind, needs_corpus, diagnose, method, range)
        return fn

    return register
