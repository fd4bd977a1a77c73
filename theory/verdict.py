"""Verdicts against the paper, kept apart from whether a check ran.

Every claim and every ledger row has a **kind** (:data:`KINDS`: formal or empirical) and reports
two results, never merged (SPEC §8):

* **check** — ``pass``: our computation ran and every certificate re-verified; ``fail``: it ran
  but a certificate did not verify (or a precondition of the measurement is missing);
  ``error``: it raised.
* **verdict** — whether the paper's statement holds on our data: ``reproduced``,
  ``partly reproduced``, ``not reproduced``, or ``not comparable``; decided by a :class:`Rule`
  written into the claim's definition before the claim runs, and printed beside it.

A rule splits the paper's statement into named :class:`Part` s, each compared with an explicit
tolerance or direction. ``reproduced`` ⇔ every part holds; ``not reproduced`` ⇔ no part holds,
or a *core* part (the qualitative statement the figures illustrate) fails; ``partly reproduced``
otherwise. A rule may instead declare the statement ``not comparable`` (e.g. absolute pass rates
measured with an LLM judge against our judge-free scoring), with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

REPRODUCED = "reproduced"
PARTLY = "partly reproduced"
NOT_REPRODUCED = "not reproduced"
NOT_COMPARABLE = "not comparable"
VERDICTS = (REPRODUCED, PARTLY, NOT_REPRODUCED, NOT_COMPARABLE)

PASS, FAIL, ERROR = "pass", "fail", "error"
CHECKS = (PASS, FAIL, ERROR)

#: What a claim's verdict rests on: ``formal`` — a proof, a witness, an identity or a computation on
#: the paper's own figures (true of the mathematics or of frcore's kernel, whatever the data);
#: ``empirical`` — a measurement on a suite (our data, our machine). The two are counted apart.
FORMAL, EMPIRICAL = "formal", "empirical"
KINDS = (EMPIRICAL, FORMAL)


def check_kind(owner: str, kind: object) -> None:
    """Raise unless ``kind`` is one of :data:`KINDS` (``owner`` names the claim in the message)."""
    if kind not in KINDS:
        raise ValueError(f"{owner}: kind {kind!r} is not one of {KINDS}")


@dataclass(frozen=True)
class Part:
    """One comparable piece of a paper statement: does it hold on our data, and the numbers."""

    name: str
    holds: bool
    detail: str
    core: bool = False

    def as_dict(self) -> dict:
        return {"name": self.name, "holds": bool(self.holds), "detail": self.detail, "core": self.core}


@dataclass(frozen=True)
class Verdict:
    """A rule's decision: the verdict, a one-line reason, and the parts it was decided from."""

    verdict: str
    reason: str
    parts: tuple[Part, ...] = ()

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict: {self.verdict!r} is not one of {VERDICTS}")

    def as_dict(self) -> dict:
        return {"verdict": self.verdict, "reason": self.reason, "parts": [p.as_dict() for p in self.parts]}


def decide(parts: Sequence[Part]) -> Verdict:
    """The verdict of a list of parts (see the module docstring)."""
    parts = tuple(parts)
    if not parts:
        raise ValueError("parts: a rule must compare at least one part")
    held = [p for p in parts if p.holds]
    core_failed = [p for p in parts if p.core and not p.holds]
    if len(held) == len(parts):
        v = REPRODUCED
    elif not held or core_failed:
        v = NOT_REPRODUCED
    else:
        v = PARTLY
    reason = "; ".join(f"{p.name} {'holds' if p.holds else 'does not hold'} ({p.detail})" for p in parts)
    return Verdict(v, reason, parts)


@dataclass(frozen=True)
class Rule:
    """How a claim's verdict is decided: ``text`` states it in words (printed with the claim);
    ``parts(witness)`` builds the comparisons from what the check measured. With
    ``not_comparable`` set, the verdict is always ``not comparable`` for that reason."""

    text: str
    parts: Callable[[Mapping[str, Any]], Sequence[Part]] | None = None
    not_comparable: str | None = None

    def __post_init__(self) -> None:
        if (self.parts is None) == (self.not_comparable is None):
            raise ValueError("Rule: give exactly one of parts= or not_comparable=")

    def decide(self, witness: Mapping[str, Any]) -> Verdict:
        """The verdict; a witness carrying ``not_measurable`` (the data lack what the statement
        is about, e.g. no FINANCIAL preservation pairs) is ``not comparable`` for that reason."""
        if self.not_comparable is not None:
            return Verdict(NOT_COMPARABLE, self.not_comparable)
        if witness.get("not_measurable"):
            return Verdict(NOT_COMPARABLE, f"not measurable on this data: {witness['not_measurable']}")
        assert self.parts is not None  # __post_init__: exactly one of parts= and not_comparable=
        return decide(self.parts(witness))


# --------------------------------------------------------------------------- part builders


def _fmt(x: Any) -> str:
    if isinstance(x, bool) or x is None:
        return str(x)
    if isinstance(x, (int,)):
        return f"{x:,}"
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    a = abs(x)
    return f"{x:.3g}" if (a >= 1e-2 and a < 1e4) or a == 0 else f"{x:.2e}"


def within(
    name: str,
    ours: float | None,
    paper: float,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    unit: str = "",
    core: bool = False,
    scale: float = 1.0,
) -> Part:
    """``|ours − paper| ≤ atol`` or ``≤ rtol·|paper|`` (``scale`` multiplies both for display,
    e.g. 100 for percentages; tolerances are in the unscaled units)."""
    if atol is not None and rtol is None:
        tol, tol_txt = atol, f"±{_fmt(atol * scale)}{unit}"
    elif rtol is not None and atol is None:
        tol, tol_txt = rtol * abs(paper), f"±{100 * rtol:.0f}%"
    else:
        raise ValueError(f"{name}: give exactly one of rtol= or atol=")
    ok = ours is not None and math.isfinite(float(ours)) and abs(float(ours) - paper) <= tol + 1e-12
    o = "–" if ours is None else f"{_fmt(float(ours) * scale)}{unit}"
    return Part(name, bool(ok), f"ours {o}, paper {_fmt(paper * scale)}{unit}, tolerance {tol_txt}", core)


def holds(name: str, ok: bool, detail: str, *, core: bool = False) -> Part:
    """A part that is a statement checked directly (a direction, an exact equality, a bound)."""
    return Part(name, bool(ok), detail, core)


def statements(text: str, names: Sequence[str], *, core: Sequence[str] = ()) -> Rule:
    """A rule over boolean sub-statements the check stores in ``witness["statement"][name]``
    (and optionally a detail string in ``witness["statement_detail"][name]``)."""
    core = tuple(core)

    def parts(w: Mapping[str, Any]) -> list[Part]:
        st = w.get("statement") or {}
        det = w.get("statement_detail") or {}
        missing = [n for n in names if n not in st]
        if missing:
            raise KeyError(f"witness.statement lacks {missing}")
        return [
            Part(n, bool(st[n]), str(det.get(n, "true on our witness" if st[n] else "false on our witness")), n in core)
            for n in names
        ]

    return Rule(text, parts)


def unverified(check: str, why: str) -> Verdict:
    """The verdict when the check did not pass: no statement about the paper can be made."""
    return Verdict(NOT_COMPARABLE, f"no verdict: the check {'errored' if check == ERROR else 'failed'} ({why})")


def headline(records: Sequence[Mapping[str, Any]]) -> str:
    """The counts by kind, empirical first: ``empirical: a of b reproduced (p partly, n not, c not
    comparable); formal: c of d verified (…)`` over records carrying ``kind`` and ``verdict``
    (a formal claim *reproduced* is a verified proof, witness or identity)."""
    out = []
    for kind, word in ((EMPIRICAL, "reproduced"), (FORMAL, "verified")):
        vs = [r["verdict"] for r in records if r.get("kind") == kind]
        n = {v: vs.count(v) for v in VERDICTS}
        out.append(
            f"{kind}: {n[REPRODUCED]} of {len(vs)} {word} ({n[PARTLY]} partly, {n[NOT_REPRODUCED]} not, "
            f"{n[NOT_COMPARABLE]} not comparable)"
        )
    return "; ".join(out)
