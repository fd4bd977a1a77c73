"""The derivation rules (docs/derive.md): updates, retractions, tentative statements, event times.

:func:`derive` is pure: given the earlier turns (a :class:`TurnIndex`) and new turns, it returns
each derivable new turn's :class:`Derived` metadata with its :class:`Evidence`. A turn is only
ever linked to turns said strictly before it, so the result does not depend on the order of
turns sharing a timestamp.
"""

from __future__ import annotations

import datetime as _dt
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ._text import (
    MONTHS,
    TENTATIVE_CUES,
    UPDATE_CUES,
    WEEKDAYS,
    Claim,
    claims,
    has_phrase,
    is_statement,
    opens_with,
    sentences,
    statement_head,
    words,
)
from ._times import event_time

#: Update link confidences (docs/derive.md, "Updates").
CUE_CONFIDENCE = 0.9
VALUE_CONFIDENCE = 0.8
TENTATIVE_CONFIDENCE = 0.5
#: Same attribute: at least this many shared key words and this Jaccard index of key words.
MIN_SHARED_KEYS = 2
MIN_KEY_JACCARD = 0.5
#: Soft updates (docs/derive.md, "Soft updates"): a term is *rare* for a user while at most
#: this many earlier turns of theirs said it; a turn gets at most MAX_SUPERSEDES update links
#: and MAX_SOFT_LINKS soft ones (the strongest evidence first).
RARE_TURNS = 3
MIN_SHARED_TERMS = 2
MAX_SUPERSEDES = 3
MAX_SOFT_LINKS = 3
#: Same attribute, by meaning: with an embedder (the bank's), a link of either update rule is
#: kept only when the two statements' vectors have at least this cosine (docs/derive.md).
SAME_ATTRIBUTE_COSINE = 0.7
#: Bounds of the search for earlier turns: the most recent postings of a key word read by the
#: update rule, and the most recent earlier turns read by a retraction.
MAX_POSTINGS = 32
RETRACTION_WINDOW = 256
#: Retraction openers (docs/derive.md, "Retractions"); the object is what follows.
RETRACTION_CUES: tuple[str, ...] = (
    "forget what i said about", "forget about", "forget that", "scratch that", "never mind",
    "ignore what i said about", "disregard what i said about", "disregard", "i take that back",
    "that's not true", "that is not true", "that was wrong", "i was wrong about",
    "i cancelled", "i canceled", "i've cancelled", "i've canceled", "i had to cancel", "we cancelled",
    "we canceled", "we had to cancel", "i called off", "we called off",
)  # fmt: skip


@dataclass(frozen=True)
class DeriveConfig:
    """Which derivation rules run (docs/derive.md); ``DeriveConfig()`` runs every rule but the
    soft updates."""

    updates: bool = True
    retractions: bool = True
    tentative: bool = True
    event_times: bool = True
    #: off by default: on the first LongMemEval development part 14 of its 49 links were right
    #: and no knowledge-update question gained (docs/derive.md, "Soft updates")
    soft_updates: bool = False

    def name(self) -> str:
        off = [n for n in ("updates", "retractions", "tentative", "event_times") if not getattr(self, n)]
        name = "all" if not off else "no-" + "-".join(o.replace("_", "-") for o in off)
        return name + "+soft-updates" if self.soft_updates else name


@dataclass(frozen=True)
class Turn:
    """What derivation reads of a turn: id, text, when it was said, whose it is."""

    id: str
    text: str
    said_at: _dt.datetime
    user: str = ""


@dataclass(frozen=True)
class Evidence:
    """Why one field was derived: the rule and what it read (JSON-able ``detail``)."""

    field: str
    rule: str
    target: str | None
    detail: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "rule": self.rule, "target": self.target, **dict(self.detail)}


@dataclass(frozen=True)
class Derived:
    """The lifecycle metadata derived for one turn."""

    id: str
    links: Mapping[str, tuple[str, ...]]
    confidence: float
    event_time: _dt.datetime | None
    evidence: tuple[Evidence, ...]

    @property
    def empty(self) -> bool:
        return not self.links and self.confidence == 1.0 and self.event_time is None


_TIME_VALUES = frozenset(WEEKDAYS) | frozenset(MONTHS) | {"am", "pm"}


@dataclass(frozen=True)
class Said:
    """What a statement says for the soft-update rule: its terms (key words and names), its
    quantities (values with a digit, number words, weekdays, months) and its update cue."""

    terms: frozenset[str]
    quantities: frozenset[str]
    cue: str | None


def said(statement: str) -> Said:
    """The :class:`Said` of one statement (docs/derive.md, "Soft updates")."""
    keys, values = words(statement)
    quantities = frozenset(v for v in values if v in _TIME_VALUES or any(ch.isdigit() for ch in v))
    return Said(keys | (values - quantities), quantities, has_phrase(statement, UPDATE_CUES))


@dataclass(frozen=True)
class Reading:
    """What derivation reads of a turn's text: its statements, its retraction sentences (with
    their objects), each statement's claims and what each says."""

    statements: list[str]
    retractions: list[tuple[str, str]]
    claims: list[list[Claim]]
    said: list[Said] = field(default_factory=list)


@dataclass
class _Entry:
    """An earlier turn in a :class:`TurnIndex`: the turn, its reading and its claims (flat)."""

    turn: Turn
    reading: Reading
    claims: tuple[Claim, ...]


def _reading(text: str) -> tuple[list[str], list[tuple[str, str]]]:
    """(statements, retraction sentences as (sentence, object)) of a text."""
    states, retractions = [], []
    for s in sentences(text):
        cue = opens_with(s, RETRACTION_CUES)
        if cue is not None:
            low = s.lower()
            retractions.append((s, s[low.index(cue) + len(cue) :].strip(" ,.;:!?")))
        else:
            head = statement_head(s)
            if head is not None and is_statement(head):
                states.append(head)
    return states, retractions


@dataclass
class TurnIndex:
    """The earlier turns of a bank, by user, with a postings list of their claims' key words and,
    for each term of their statements, the earlier turns that said it while it is rare (a term
    said in more than :data:`RARE_TURNS` turns keeps only the mark ``None``)."""

    entries: dict[str, list[_Entry]] = field(default_factory=dict)
    postings: dict[str, dict[str, list[tuple[int, int]]]] = field(default_factory=dict)
    rare: dict[str, dict[str, list[int] | None]] = field(default_factory=dict)

    #: (id, text) → :class:`Reading`: each turn read once, kept across indexes
    memo: dict[tuple[str, str], Reading] = field(default_factory=dict)
    #: texts → vectors (the bank's embedder), or None: the update rules read words only
    embed: Callable[[list[str]], Any] | None = None
    #: statement → unit vector, each statement embedded once (kept across indexes, like ``memo``)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    #: whether the index keeps what the soft-update rule reads (statements' terms, rare lists)
    soft: bool = True

    @classmethod
    def build(
        cls,
        turns: Iterable[Turn],
        memo: dict | None = None,
        embed=None,
        vectors: dict | None = None,
        soft: bool = True,
    ) -> TurnIndex:
        """An index of ``turns``; ``memo`` (another index's) saves reading a turn twice; ``embed``
        (and its cache ``vectors``) gives the update rules the meaning test of "same attribute";
        ``soft``: keep what the soft-update rule reads."""
        idx = cls(
            memo=memo if memo is not None else {},
            embed=embed,
            vectors=vectors if vectors is not None else {},
            soft=soft,
        )
        for t in turns:
            idx.add(t)
        return idx

    def reading(self, turn: Turn) -> Reading:
        """The turn's statements, retraction sentences and claims (read once per text)."""
        key = (turn.id, turn.text)
        got = self.memo.get(key)
        if got is None:
            states, retractions = _reading(turn.text)
            what = [said(s) for s in states] if self.soft else []
            got = Reading(states, retractions, [claims(s) for s in states], what)
            self.memo[key] = got
        elif self.soft and len(got.said) != len(got.statements):  # read before without the soft rule
            got = self.memo[key] = replace(got, said=[said(s) for s in got.statements])
        return got

    def add(self, turn: Turn) -> None:
        r = self.reading(turn)
        cl = tuple(c for cs in r.claims for c in cs)
        entries = self.entries.setdefault(turn.user, [])
        post = self.postings.setdefault(turn.user, defaultdict(list))
        rare = self.rare.setdefault(turn.user, {})
        e = len(entries)
        entries.append(_Entry(turn, r, cl))
        for j, c in enumerate(cl):
            for k in c.keys:
                post[k].append((e, j))
        for t in frozenset().union(*(x.terms for x in r.said)) if self.soft else ():
            turns = rare.setdefault(t, [])
            if turns is not None:
                turns.append(e)
                if len(turns) > RARE_TURNS:
                    rare[t] = None

    def earlier(self, user: str, said_at: _dt.datetime, window: int = RETRACTION_WINDOW) -> list[_Entry]:
        """The last ``window`` turns of ``user`` said before ``said_at`` (most recent last)."""
        out: list[_Entry] = []
        for e in reversed(self.entries.get(user, [])):
            if e.turn.said_at < said_at:
                out.append(e)
                if len(out) >= window:
                    break
        return out[::-1]

    def cosines(self, pairs: Sequence[tuple[str, str]]) -> list[float] | None:
        """The cosine of each pair of statements (their unit vectors; each statement embedded
        once, those not yet seen in one call), or None without an embedder."""
        if self.embed is None:
            return None
        new = list(dict.fromkeys(t for pair in pairs for t in pair if t not in self.vectors))
        if new:
            v = np.asarray(self.embed(new), dtype=np.float64)
            norms = np.linalg.norm(v, axis=1, keepdims=True)
            v = v / np.where(norms > 0, norms, 1.0)
            self.vectors.update(zip(new, v))
        return [float(self.vectors[a] @ self.vectors[b]) for a, b in pairs]

    def rare_earlier(self, user: str, term: str, said_at: _dt.datetime) -> list[_Entry]:
        """The earlier turns of ``user`` that said ``term``, while it is rare (else none)."""
        turns = self.rare.get(user, {}).get(term)
        entries = self.entries.get(user, [])
        return [entries[e] for e in turns or () if entries[e].turn.said_at < said_at]

    def matches(self, user: str, claim: Claim, said_at: _dt.datetime) -> list[tuple[_Entry, Claim, frozenset[str]]]:
        """Earlier claims of the same attribute as ``claim`` (rule 1 of "Updates")."""
        entries = self.entries.get(user, [])
        post = self.postings.get(user, {})
        shared: dict[tuple[int, int], int] = defaultdict(int)
        for k in claim.keys:
            for ej in post.get(k, ())[-MAX_POSTINGS:]:
                shared[ej] += 1
        out = []
        for (e, j), n in shared.items():
            if n < MIN_SHARED_KEYS or entries[e].turn.said_at >= said_at:
                continue
            other = entries[e].claims[j]
            both = claim.keys & other.keys
            if len(both) / len(claim.keys | other.keys) >= MIN_KEY_JACCARD:
                out.append((entries[e], other, both))
        return out


def _gated(
    index: TurnIndex, found: list[tuple[str, _dt.datetime, tuple, Evidence, str, str]], cap: int
) -> dict[str, Evidence]:
    """Of candidate links (target id, target said-at, strength, evidence, statement, earlier
    statement): with an embedder, those whose statements have cosine ≥
    :data:`SAME_ATTRIBUTE_COSINE` (the cosine joins the evidence); then the strongest per target;
    then the ``cap`` strongest targets (then the latest, then the smaller id)."""
    cos = index.cosines([(a, b) for *_, a, b in found])
    best: dict[str, tuple[tuple, _dt.datetime, Evidence]] = {}
    for i, (target, when, strength, ev, _, _) in enumerate(found):
        if cos is not None:
            if cos[i] < SAME_ATTRIBUTE_COSINE:
                continue
            ev = Evidence(ev.field, ev.rule, ev.target, {**ev.detail, "cosine": round(cos[i], 3)})
        old = best.get(target)
        if old is None or strength > old[0]:
            best[target] = (strength, when, ev)
    ranked = sorted(best, key=lambda t: (best[t][0], best[t][1], _neg(t)), reverse=True)
    return {t: best[t][2] for t in ranked[:cap]}


def _updates(turn: Turn, reading: Reading, index: TurnIndex, cfg: DeriveConfig) -> dict[str, Evidence]:
    """Rule ``updates``: the earlier turns each claim of ``turn`` updates, with evidence."""
    found = []
    for s, cs in zip(reading.statements, reading.claims):
        cue = has_phrase(s, UPDATE_CUES)
        for c in cs:
            tentative = cfg.tentative and has_phrase(c.text, TENTATIVE_CUES) is not None
            for entry, other, both in index.matches(turn.user, c, turn.said_at):
                new_value = bool(c.values) and bool(other.values) and not c.values <= other.values
                if cue is None and not new_value:
                    continue
                conf = TENTATIVE_CONFIDENCE if tentative else CUE_CONFIDENCE if cue is not None else VALUE_CONFIDENCE
                ev = Evidence(
                    "supersedes",
                    "updates",
                    entry.turn.id,
                    {
                        "claim": c.text,
                        "earlier_claim": other.text,
                        "shared_key_words": sorted(both),
                        "values": sorted(c.values),
                        "earlier_values": sorted(other.values),
                        "cue": cue,
                        "tentative": tentative,
                        "confidence": conf,
                    },
                )
                found.append((entry.turn.id, entry.turn.said_at, (conf, len(both)), ev, s, other.sentence))
    return _gated(index, found, MAX_SUPERSEDES)


def _soft_updates(turn: Turn, reading: Reading, index: TurnIndex, linked: Collection[str]) -> dict[str, Evidence]:
    """Rule ``soft_updates``: the earlier turns a statement of ``turn`` restates on a rare term,
    with an update cue or other quantities (docs/derive.md, "Soft updates")."""
    found = []
    seen: set[tuple[str, str, str]] = set()
    for s, mine in zip(reading.statements, reading.said):
        for term in sorted(mine.terms):
            for entry in index.rare_earlier(turn.user, term, turn.said_at):
                if entry.turn.id in linked:
                    continue
                for e, theirs in zip(entry.reading.statements, entry.reading.said):
                    if term not in theirs.terms or (s, entry.turn.id, e) in seen:
                        continue
                    seen.add((s, entry.turn.id, e))
                    other = not mine.quantities <= theirs.quantities
                    if mine.cue is None and not (mine.quantities and theirs.quantities and other):
                        continue
                    shared = sorted(mine.terms & theirs.terms)
                    if len(shared) < MIN_SHARED_TERMS:
                        continue
                    ev = Evidence(
                        "tentative_for",
                        "soft_updates",
                        entry.turn.id,
                        {
                            "statement": s,
                            "earlier_statement": e,
                            "shared_terms": shared,
                            "quantities": sorted(mine.quantities),
                            "earlier_quantities": sorted(theirs.quantities),
                            "cue": mine.cue,
                        },
                    )
                    found.append((entry.turn.id, entry.turn.said_at, (len(shared),), ev, s, e))
    return _gated(index, found, MAX_SOFT_LINKS)


def _retraction(turn: Turn, sentence: str, obj: str, index: TurnIndex) -> Evidence | None:
    """Rule ``retractions``: the earlier turn a retraction sentence takes back."""
    earlier = index.earlier(turn.user, turn.said_at)
    keys = words(obj)[0] if obj else frozenset()
    pick = None
    if keys:
        scored = []
        for e in earlier:
            n = max((len(keys & c.keys) for c in e.claims), default=0)
            if n:
                scored.append((n, e.turn.said_at, _neg(e.turn.id), e))
        if scored:
            pick = max(scored, key=lambda x: x[:3])[3]
    else:
        with_statement = [e for e in earlier if e.reading.statements]
        if with_statement:
            pick = max(with_statement, key=lambda e: (e.turn.said_at, _neg(e.turn.id)))
    if pick is None:
        return None
    shared = sorted(keys & frozenset(k for c in pick.claims for k in c.keys))
    return Evidence("retracts", "retractions", pick.turn.id, {"sentence": sentence, "object_key_words": shared})


def _neg(text: str) -> tuple[int, ...]:
    """A key that orders strings in reverse (the smaller id wins a tie under ``max``)."""
    return tuple(-ord(ch) for ch in text) + (0,)


def derive_one(turn: Turn, index: TurnIndex, cfg: DeriveConfig) -> Derived:
    """The derived metadata of one turn against the earlier turns of ``index``."""
    reading = index.reading(turn)
    states, retractions = reading.statements, reading.retractions
    evidence: list[Evidence] = []
    links: dict[str, tuple[str, ...]] = {}
    if cfg.updates:
        ups = _updates(turn, reading, index, cfg)
        if ups:
            links["supersedes"] = tuple(sorted(ups))
            evidence += [ups[t] for t in sorted(ups)]
    if cfg.soft_updates:
        soft = _soft_updates(turn, reading, index, links.get("supersedes", ()))
        if soft:
            links["tentative_for"] = tuple(sorted(soft))
            evidence += [soft[t] for t in sorted(soft)]
    if cfg.retractions:
        targets = []
        for s, obj in retractions:
            ev = _retraction(turn, s, obj, index)
            if ev is not None and ev.target not in targets:
                targets.append(ev.target)
                evidence.append(ev)
        if targets:
            links["retracts"] = tuple(sorted(str(t) for t in targets))
    confidence = 1.0
    if "supersedes" in links:
        confidence = max(float(e.detail["confidence"]) for e in evidence if e.field == "supersedes")
    elif cfg.tentative and states and all(has_phrase(s, TENTATIVE_CUES) for s in states):
        confidence = TENTATIVE_CONFIDENCE
        evidence.append(Evidence("confidence", "tentative", None, {"statements": states}))
    when = None
    if cfg.event_times:
        for s in states:
            got = event_time(s, turn.said_at)
            if got is not None:
                when = got[0]
                evidence.append(Evidence("event_time", "event_times", None, {"expression": got[2], "kind": got[1]}))
                break
    return Derived(turn.id, links, confidence, when, tuple(evidence))


def derive(
    index: TurnIndex, turns: Sequence[Turn], cfg: DeriveConfig | None = None, only: Collection[str] | None = None
) -> dict[str, Derived]:
    """Derive the turns of ``turns`` (those named in ``only``, if given; the rest are earlier
    turns only) against ``index`` and the earlier turns among ``turns``: turns are taken by
    ``said_at``, those sharing one derived against the same earlier turns, then all added to
    ``index``. Returns id → :class:`Derived`."""
    cfg = cfg or DeriveConfig()
    if cfg.soft_updates and not index.soft:
        raise ValueError("derive: the soft-update rule needs a TurnIndex built with soft=True")
    out: dict[str, Derived] = {}
    by_time: dict[_dt.datetime, list[Turn]] = defaultdict(list)
    for t in turns:
        by_time[t.said_at].append(t)
    for at in sorted(by_time):
        group = by_time[at]
        for t in group:
            if only is None or t.id in only:
                out[t.id] = derive_one(t, index, cfg)
        for t in group:
            index.add(t)
    return out
