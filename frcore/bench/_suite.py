"""LifecycleBench suite format v1: loader, validator, writer and retrieval corpus (SPEC §5).

One JSON file per persona::

    persona, name, asked_at, sessions[id, date, type critical|filler, topic],
    facts[the fields of frcore.bank.FACT_FIELDS marked suite: id, text, categories{CATEGORY:
          weight}, said_at, event_time, slot, confidence, numeric,
          links{supersedes|retracts|contradicts|tentative_for}, session, role, source],
    turns[id, session, said_at, role, text],
    questions[id, text, asked_at, attack_vector, relevant_categories, correct_answer,
              wrong_answer_indicators, intent, support[ids], wrong[ids], notes, conflict]

Everything is validated at the boundary by :func:`parse_suite`; a bad suite raises
:class:`SuiteError` whose message names the file, the item id and the field. Keys the format
does not name (``suite``, ``version``, ``source_field``, ``evidence``, ``temporal_notes``, ...)
are kept verbatim in each record's ``extra`` and otherwise ignored, so
``suite_to_dict(parse_suite(obj)) == obj``.

Choices that are ours, not the paper's:

- Times are read by frcore's one rule, :func:`frcore.parse_time`: ``YYYY-MM-DD`` is midnight of
  that day; ISO datetimes with an offset are converted to UTC and stored naive, so every time in
  a suite is comparable. "Said after ``asked_at``" is the
  strict comparison of the parsed times (an item said at 10:00 on a date-only ``asked_at`` day
  is after it).
- ``links`` values may be one id or a list of ids; they are normalised to a tuple of fact ids.
  A link must point to another fact of the suite.
- Ids share one namespace across facts and turns (``support``/``wrong`` reference either);
  session ids and question ids are unique among themselves.
- ``support`` must be non-empty and disjoint from ``wrong`` (an item cannot both support and
  contradict the answer); every ``support``/``wrong`` item must be said by the question's
  ``asked_at``.
- Fact ``role`` is ground truth for analysis only and is never part of the :func:`corpus`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, overload

from .._ontology import CATEGORY_NAMES
from .._time import parse_time
from .._types import INTENT_NAMES, LINK_KINDS
from .._validate import WEIGHT_SUM_TOL
from ..bank import FACT_FIELDS

__all__ = [
    "ASSISTANT_ONLY_SUPPORT",
    "ATTACK_VECTORS",
    "FACT_ROLES",
    "NO_TURN_SUPPORT",
    "SESSION_TYPES",
    "TURN_ROLES",
    "CorpusItem",
    "Fact",
    "Question",
    "Session",
    "Suite",
    "SuiteError",
    "Turn",
    "attack_vector_key",
    "corpus",
    "load_suite",
    "load_suites",
    "parse_suite",
    "raw_turn_corpus",
    "raw_turn_questions",
    "suite_to_dict",
]

#: The nine attack vectors (SPEC §5), in order; a question's ``attack_vector`` is one of these.
ATTACK_VECTORS: tuple[str, ...] = (
    "AV1_superseded_preference",
    "AV2_expired_logistics",
    "AV3_stable_identity",
    "AV4_multi_version_fact",
    "AV5_broad_query",
    "AV6_cross_session_contradiction",
    "AV7_selective_forgetting",
    "AV8_numeric_preservation",
    "AV9_soft_supersession",
)
#: Fact roles (SPEC §5); ground truth for analysis only.
FACT_ROLES: tuple[str, ...] = (
    "stable",
    "superseded",
    "superseding",
    "expiring",
    "contradicted",
    "contradicting",
    "retracted",
    "retraction",
    "ambiguous_existing",
    "tentative",
    "annotated",
)
SESSION_TYPES: tuple[str, ...] = ("critical", "filler")
TURN_ROLES: tuple[str, ...] = ("user", "assistant")
SUPPORTED_VERSIONS = (1,)

_AV_KEY = re.compile(r"^(AV[1-9])(?:_|$)")


class SuiteError(ValueError):
    """A suite file that does not follow format v1; the message names file, item id and field."""


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Session:
    """One conversation session: ``type`` is ``critical`` (carries facts) or ``filler``."""

    id: int
    date: datetime
    type: str
    topic: str
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Fact:
    """One extracted fact edge with the metadata an oracle extractor gives (SPEC §5).

    ``categories`` maps canonical category name → soft weight (sum 1); ``links`` maps link kind →
    tuple of fact ids; ``role`` is ground truth (never a system input); ``extra`` keeps keys the
    format does not name.
    """

    id: str
    text: str
    categories: dict[str, float]
    slot: str | None
    session: int
    said_at: datetime
    event_time: datetime | None
    confidence: float
    numeric: bool
    role: str
    links: dict[str, tuple[str, ...]]
    source: str
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Turn:
    """One conversation turn (``role`` user or assistant)."""

    id: str
    session: int
    said_at: datetime
    role: str
    text: str
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Question:
    """One benchmark question with its gold labels: ``support`` / ``wrong`` are fact or turn ids."""

    id: str
    text: str
    asked_at: datetime
    attack_vector: str
    relevant_categories: tuple[str, ...]
    correct_answer: str
    wrong_answer_indicators: tuple[str, ...]
    intent: str
    support: tuple[str, ...]
    wrong: tuple[str, ...]
    notes: str
    conflict: bool
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def av(self) -> str:
        """The attack-vector key, e.g. ``"AV1"``."""
        return attack_vector_key(self.attack_vector)


@dataclass(frozen=True)
class Suite:
    """One persona's suite: sessions, facts, turns and questions, all said by ``asked_at``."""

    persona: str
    name: str
    asked_at: datetime
    sessions: tuple[Session, ...]
    facts: tuple[Fact, ...]
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]
    path: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def item(self, item_id: str) -> Fact | Turn:
        """The fact or turn with this id (``KeyError`` if none)."""
        for f in self.facts:
            if f.id == item_id:
                return f
        for t in self.turns:
            if t.id == item_id:
                return t
        raise KeyError(item_id)


@dataclass(frozen=True)
class CorpusItem:
    """One retrievable item: a fact (with its extractor metadata) or a user turn.

    For a turn only ``session`` and ``said_at`` are set: ``categories`` and ``links`` are empty and
    the other metadata is ``None``. Ground truth (fact ``role``, ``source``, extra keys) is left
    out on purpose: a system must derive lifecycle state from slots, links, times and confidence.
    """

    id: str
    text: str
    kind: Literal["fact", "turn"]
    session: int
    said_at: datetime
    categories: dict[str, float] = field(default_factory=dict)
    slot: str | None = None
    event_time: datetime | None = None
    confidence: float | None = None
    numeric: bool | None = None
    links: dict[str, tuple[str, ...]] = field(default_factory=dict)


def attack_vector_key(attack_vector: str) -> str:
    """``"AV1_superseded_preference"`` (or ``"AV1"``) → ``"AV1"``; ``ValueError`` if not AV1…AV9."""
    m = _AV_KEY.match(attack_vector) if isinstance(attack_vector, str) else None
    if m is None:
        raise ValueError(f"attack_vector {attack_vector!r}: expected an AV1…AV9 name such as {ATTACK_VECTORS[0]!r}")
    return m.group(1)


# --------------------------------------------------------------------------- parsing helpers


class _Ctx:
    """Error context: the file being read."""

    def __init__(self, source: str) -> None:
        self.source = source

    def err(self, item: str, fld: str, msg: str) -> SuiteError:
        return SuiteError(f"{self.source}: {item}: field {fld!r}: {msg}")


_MISSING = object()


def _get(ctx: _Ctx, obj: Mapping[str, Any], item: str, fld: str) -> Any:
    v = obj.get(fld, _MISSING)
    if v is _MISSING:
        raise ctx.err(item, fld, "missing")
    return v


@overload
def _str(
    ctx: _Ctx, obj: Mapping[str, Any], item: str, fld: str, *, nullable: Literal[False] = False, nonempty: bool = False
) -> str: ...
@overload
def _str(
    ctx: _Ctx, obj: Mapping[str, Any], item: str, fld: str, *, nullable: bool, nonempty: bool = False
) -> str | None: ...
def _str(
    ctx: _Ctx, obj: Mapping[str, Any], item: str, fld: str, *, nullable: bool = False, nonempty: bool = False
) -> str | None:
    v = _get(ctx, obj, item, fld)
    if v is None and nullable:
        return None
    if not isinstance(v, str):
        raise ctx.err(item, fld, f"expected a string{' or null' if nullable else ''}, got {type(v).__name__} {v!r}")
    if nonempty and not v.strip():
        raise ctx.err(item, fld, "empty string")
    return v


def _bool(ctx: _Ctx, obj: Mapping[str, Any], item: str, fld: str) -> bool:
    v = _get(ctx, obj, item, fld)
    if not isinstance(v, bool):
        raise ctx.err(item, fld, f"expected true/false, got {type(v).__name__} {v!r}")
    return v


def _int(ctx: _Ctx, obj: Mapping[str, Any], item: str, fld: str) -> int:
    v = _get(ctx, obj, item, fld)
    if isinstance(v, bool) or not isinstance(v, int):
        raise ctx.err(item, fld, f"expected an integer, got {type(v).__name__} {v!r}")
    return v


def _number(ctx: _Ctx, obj: Mapping[str, Any], item: str, fld: str) -> float:
    v = _get(ctx, obj, item, fld)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ctx.err(item, fld, f"expected a finite number, got {type(v).__name__} {v!r}")
    return float(v)


def _str_list(ctx: _Ctx, obj: Mapping[str, Any], item: str, fld: str) -> tuple[str, ...]:
    v = _get(ctx, obj, item, fld)
    if not isinstance(v, list):
        raise ctx.err(item, fld, f"expected a list of strings, got {type(v).__name__} {v!r}")
    for i, x in enumerate(v):
        if not isinstance(x, str):
            raise ctx.err(item, f"{fld}[{i}]", f"expected a string, got {type(x).__name__} {x!r}")
    return tuple(v)


def _list(ctx: _Ctx, obj: Mapping[str, Any], item: str, fld: str) -> list[Any]:
    v = _get(ctx, obj, item, fld)
    if not isinstance(v, list):
        raise ctx.err(item, fld, f"expected a list, got {type(v).__name__}")
    return v


@overload
def _time(ctx: _Ctx, obj: Mapping[str, Any], item: str, fld: str, *, nullable: Literal[False] = False) -> datetime: ...
@overload
def _time(ctx: _Ctx, obj: Mapping[str, Any], item: str, fld: str, *, nullable: bool) -> datetime | None: ...
def _time(ctx: _Ctx, obj: Mapping[str, Any], item: str, fld: str, *, nullable: bool = False) -> datetime | None:
    """The field as a naive UTC datetime, by frcore's one timestamp rule (:func:`frcore.parse_time`)."""
    v = _get(ctx, obj, item, fld)
    if v is None and nullable:
        return None
    return parse_time(v, fld, error=lambda problem: ctx.err(item, fld, problem))


def _format_time(t: datetime) -> str:
    """Inverse of :func:`frcore.parse_time` for naive times: date-only when at midnight."""
    if t.hour == t.minute == t.second == t.microsecond == 0:
        return t.date().isoformat()
    return t.isoformat()


def _item_name(obj: Any, kind: str, index: int) -> str:
    if isinstance(obj, Mapping) and isinstance(obj.get("id"), (str, int)) and not isinstance(obj.get("id"), bool):
        return f"{kind} {obj['id']!r}"
    return f"{kind}[{index}]"


def _extra(obj: Mapping[str, Any], known: Sequence[str]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in known}


# --------------------------------------------------------------------------- parse one record

_SESSION_KEYS = ("id", "date", "type", "topic")
#: A suite fact's keys: the fields of the one fact table marked ``suite``, every one required.
_FACT_KEYS = tuple(name for name, f in FACT_FIELDS.items() if f.suite)
_TURN_KEYS = ("id", "session", "said_at", "role", "text")
_QUESTION_KEYS = (
    "id",
    "text",
    "asked_at",
    "attack_vector",
    "relevant_categories",
    "correct_answer",
    "wrong_answer_indicators",
    "intent",
    "support",
    "wrong",
    "notes",
    "conflict",
)
_SUITE_KEYS = ("persona", "name", "asked_at", "sessions", "facts", "turns", "questions")


def _parse_session(ctx: _Ctx, obj: Any, index: int) -> Session:
    item = _item_name(obj, "session", index)
    if not isinstance(obj, Mapping):
        raise ctx.err(item, "sessions", f"expected an object, got {type(obj).__name__}")
    sid = _int(ctx, obj, item, "id")
    date = _time(ctx, obj, item, "date")
    typ = _str(ctx, obj, item, "type")
    if typ not in SESSION_TYPES:
        raise ctx.err(item, "type", f"unknown session type {typ!r}; expected one of {', '.join(SESSION_TYPES)}")
    topic = _str(ctx, obj, item, "topic")
    return Session(sid, date, typ, topic, _extra(obj, _SESSION_KEYS))


def _parse_categories(ctx: _Ctx, obj: Mapping[str, Any], item: str, fld: str) -> dict[str, float]:
    cats = _get(ctx, obj, item, fld)
    if not isinstance(cats, Mapping) or not cats:
        raise ctx.err(item, fld, f"expected a non-empty object CATEGORY → weight, got {cats!r}")
    out: dict[str, float] = {}
    for name, w in cats.items():
        if name not in CATEGORY_NAMES:
            raise ctx.err(
                item, f"{fld}.{name}", f"unknown category {name!r}; expected one of {', '.join(CATEGORY_NAMES)}"
            )
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w):
            raise ctx.err(item, f"{fld}.{name}", f"expected a finite number, got {type(w).__name__} {w!r}")
        if not 0.0 <= w <= 1.0:
            raise ctx.err(item, f"{fld}.{name}", f"weight {w!r} outside [0, 1]")
        out[name] = float(w)
    total = sum(out.values())
    if abs(total - 1.0) > WEIGHT_SUM_TOL:
        raise ctx.err(item, fld, f"weights sum to {total:.6g}, expected 1 (±{WEIGHT_SUM_TOL:g})")
    return out


def _parse_links(ctx: _Ctx, obj: Mapping[str, Any], item: str) -> dict[str, tuple[str, ...]]:
    links = _get(ctx, obj, item, "links")
    if not isinstance(links, Mapping):
        raise ctx.err(item, "links", f"expected an object kind → id(s), got {type(links).__name__}")
    out: dict[str, tuple[str, ...]] = {}
    for kind, v in links.items():
        if kind not in LINK_KINDS:
            raise ctx.err(item, f"links.{kind}", f"unknown link kind {kind!r}; expected one of {', '.join(LINK_KINDS)}")
        ids = (v,) if isinstance(v, str) else v
        if not isinstance(ids, (list, tuple)) or not ids or not all(isinstance(x, str) for x in ids):
            raise ctx.err(item, f"links.{kind}", f"expected a fact id or a non-empty list of fact ids, got {v!r}")
        if len(set(ids)) != len(ids):
            raise ctx.err(item, f"links.{kind}", f"duplicate id in {list(ids)!r}")
        out[kind] = tuple(ids)
    return out


def _parse_fact(ctx: _Ctx, obj: Any, index: int) -> Fact:
    item = _item_name(obj, "fact", index)
    if not isinstance(obj, Mapping):
        raise ctx.err(item, "facts", f"expected an object, got {type(obj).__name__}")
    fid = _str(ctx, obj, item, "id", nonempty=True)
    text = _str(ctx, obj, item, "text", nonempty=True)
    cats = _parse_categories(ctx, obj, item, "categories")
    slot = _str(ctx, obj, item, "slot", nullable=True)
    session = _int(ctx, obj, item, "session")
    said_at = _time(ctx, obj, item, "said_at")
    event_time = _time(ctx, obj, item, "event_time", nullable=True)
    confidence = _number(ctx, obj, item, "confidence")
    if not 0.0 <= confidence <= 1.0:
        raise ctx.err(item, "confidence", f"{confidence!r} outside [0, 1]")
    numeric = _bool(ctx, obj, item, "numeric")
    role = _str(ctx, obj, item, "role")
    if role not in FACT_ROLES:
        raise ctx.err(item, "role", f"unknown role {role!r}; expected one of {', '.join(FACT_ROLES)}")
    links = _parse_links(ctx, obj, item)
    source = _str(ctx, obj, item, "source")
    return Fact(
        fid,
        text,
        cats,
        slot,
        session,
        said_at,
        event_time,
        confidence,
        numeric,
        role,
        links,
        source,
        _extra(obj, _FACT_KEYS),
    )


def _parse_turn(ctx: _Ctx, obj: Any, index: int) -> Turn:
    item = _item_name(obj, "turn", index)
    if not isinstance(obj, Mapping):
        raise ctx.err(item, "turns", f"expected an object, got {type(obj).__name__}")
    tid = _str(ctx, obj, item, "id", nonempty=True)
    session = _int(ctx, obj, item, "session")
    said_at = _time(ctx, obj, item, "said_at")
    role = _str(ctx, obj, item, "role")
    if role not in TURN_ROLES:
        raise ctx.err(item, "role", f"unknown turn role {role!r}; expected one of {', '.join(TURN_ROLES)}")
    text = _str(ctx, obj, item, "text", nonempty=True)
    return Turn(tid, session, said_at, role, text, _extra(obj, _TURN_KEYS))


def _parse_question(ctx: _Ctx, obj: Any, index: int) -> Question:
    item = _item_name(obj, "question", index)
    if not isinstance(obj, Mapping):
        raise ctx.err(item, "questions", f"expected an object, got {type(obj).__name__}")
    qid = _str(ctx, obj, item, "id", nonempty=True)
    text = _str(ctx, obj, item, "text", nonempty=True)
    asked_at = _time(ctx, obj, item, "asked_at")
    av = _str(ctx, obj, item, "attack_vector")
    if av not in ATTACK_VECTORS:
        raise ctx.err(
            item, "attack_vector", f"unknown attack vector {av!r}; expected one of {', '.join(ATTACK_VECTORS)}"
        )
    rel = _str_list(ctx, obj, item, "relevant_categories")
    for i, c in enumerate(rel):
        if c not in CATEGORY_NAMES:
            raise ctx.err(
                item,
                f"relevant_categories[{i}]",
                f"unknown category {c!r}; expected one of {', '.join(CATEGORY_NAMES)}",
            )
    correct = _str(ctx, obj, item, "correct_answer")
    indicators = _str_list(ctx, obj, item, "wrong_answer_indicators")
    intent = _str(ctx, obj, item, "intent")
    if intent not in INTENT_NAMES:
        raise ctx.err(item, "intent", f"unknown intent {intent!r}; expected one of {', '.join(INTENT_NAMES)}")
    support = _str_list(ctx, obj, item, "support")
    wrong = _str_list(ctx, obj, item, "wrong")
    if not support:
        raise ctx.err(item, "support", "empty; every question needs at least one support item")
    for fld, ids in (("support", support), ("wrong", wrong)):
        seen: set[str] = set()
        for i, x in enumerate(ids):
            if x in seen:
                raise ctx.err(item, f"{fld}[{i}]", f"duplicate id {x!r}")
            seen.add(x)
    for i, x in enumerate(wrong):
        if x in support:
            raise ctx.err(item, f"wrong[{i}]", f"id {x!r} is also in support")
    notes = _str(ctx, obj, item, "notes")
    conflict = _bool(ctx, obj, item, "conflict")
    return Question(
        qid,
        text,
        asked_at,
        av,
        rel,
        correct,
        indicators,
        intent,
        support,
        wrong,
        notes,
        conflict,
        _extra(obj, _QUESTION_KEYS),
    )


# --------------------------------------------------------------------------- whole suite


def parse_suite(obj: dict, source: str = "<suite>") -> Suite:
    """Validate a decoded suite-format-v1 object and build a :class:`Suite`.

    Args:
      obj: the decoded JSON object of one persona file.
      source: the file name used in error messages (and stored as ``Suite.path``).

    Raises:
      SuiteError: naming ``source``, the item id and the field, for missing or ill-typed fields,
        unknown categories / attack vectors / intents / roles / link kinds, category weights not
        summing to 1 (±1e-3), confidence outside [0, 1], unparseable dates, duplicate ids,
        dangling links / sessions / support / wrong ids, and items said after ``asked_at``.
    """
    ctx = _Ctx(source)
    if not isinstance(obj, Mapping):
        raise ctx.err("suite", "<root>", f"expected a JSON object, got {type(obj).__name__}")
    top = "suite"
    persona = _str(ctx, obj, top, "persona", nonempty=True)
    top = f"suite {persona!r}"
    if "version" in obj and obj["version"] not in SUPPORTED_VERSIONS:
        raise ctx.err(top, "version", f"unsupported suite format version {obj['version']!r}; expected 1")
    name = _str(ctx, obj, top, "name")
    asked_at = _time(ctx, obj, top, "asked_at")
    sessions = tuple(_parse_session(ctx, s, i) for i, s in enumerate(_list(ctx, obj, top, "sessions")))
    facts = tuple(_parse_fact(ctx, f, i) for i, f in enumerate(_list(ctx, obj, top, "facts")))
    turns = tuple(_parse_turn(ctx, t, i) for i, t in enumerate(_list(ctx, obj, top, "turns")))
    questions = tuple(_parse_question(ctx, q, i) for i, q in enumerate(_list(ctx, obj, top, "questions")))

    # Unique ids: sessions; facts and turns share one namespace; questions.
    session_ids: set[int] = set()
    for s in sessions:
        if s.id in session_ids:
            raise ctx.err(f"session {s.id!r}", "id", "duplicate session id")
        session_ids.add(s.id)
    said: dict[str, datetime] = {}
    for kind, records in (("fact", facts), ("turn", turns)):
        for r in records:
            if r.id in said:
                raise ctx.err(f"{kind} {r.id!r}", "id", "duplicate id (fact and turn ids share one namespace)")
            said[r.id] = r.said_at
    qids: set[str] = set()
    for q in questions:
        if q.id in qids:
            raise ctx.err(f"question {q.id!r}", "id", "duplicate question id")
        qids.add(q.id)

    # Times: nothing said after asked_at.
    for s in sessions:
        if s.date > asked_at:
            raise ctx.err(
                f"session {s.id!r}",
                "date",
                f"{_format_time(s.date)} is after the suite's asked_at {_format_time(asked_at)}",
            )
    for kind, records in (("fact", facts), ("turn", turns)):
        for r in records:
            if r.said_at > asked_at:
                raise ctx.err(
                    f"{kind} {r.id!r}",
                    "said_at",
                    f"{_format_time(r.said_at)} is after the suite's asked_at {_format_time(asked_at)}",
                )
            if r.session not in session_ids:
                raise ctx.err(f"{kind} {r.id!r}", "session", f"unknown session {r.session!r}")
    for q in questions:
        if q.asked_at > asked_at:
            raise ctx.err(
                f"question {q.id!r}",
                "asked_at",
                f"{_format_time(q.asked_at)} is after the suite's asked_at {_format_time(asked_at)}",
            )

    # References.
    fact_ids = {f.id for f in facts}
    for f in facts:
        for kind, ids in f.links.items():
            for x in ids:
                if x == f.id:
                    raise ctx.err(f"fact {f.id!r}", f"links.{kind}", "links to itself")
                if x not in fact_ids:
                    raise ctx.err(f"fact {f.id!r}", f"links.{kind}", f"dangling link to {x!r}: no fact with that id")
    for q in questions:
        for fld in ("support", "wrong"):
            for i, x in enumerate(getattr(q, fld)):
                if x not in said:
                    raise ctx.err(
                        f"question {q.id!r}", f"{fld}[{i}]", f"unknown id {x!r}: no fact or turn with that id"
                    )
                if said[x] > q.asked_at:
                    raise ctx.err(
                        f"question {q.id!r}",
                        f"{fld}[{i}]",
                        f"item {x!r} is said at {_format_time(said[x])}, after the question's asked_at "
                        f"{_format_time(q.asked_at)}",
                    )

    return Suite(persona, name, asked_at, sessions, facts, turns, questions, source, _extra(obj, _SUITE_KEYS))


def load_suite(path: str | Path) -> Suite:
    """Read and validate one suite-format-v1 JSON file (errors name the file)."""
    p = Path(path)
    try:
        obj = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise SuiteError(f"{p}: not valid JSON: {e}") from None
    return parse_suite(obj, str(p))


def load_suites(path: str | Path) -> list[Suite]:
    """Load one file, or every ``*.json`` in a folder (sorted by file name).

    Raises ``FileNotFoundError`` if the path does not exist and :class:`SuiteError` if a folder
    holds no ``*.json`` or two files share a persona.
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"suite path {str(p)!r} does not exist")
    files = [p] if p.is_file() else sorted(p.glob("*.json"))
    if not files:
        raise SuiteError(f"{p}: no *.json suite files in this folder")
    suites = [load_suite(f) for f in files]
    seen: dict[str, str] = {}
    for s in suites:
        if s.persona in seen:
            raise SuiteError(f"{s.path}: suite {s.persona!r}: field 'persona': duplicate of {seen[s.persona]}")
        seen[s.persona] = str(s.path)
    return suites


# --------------------------------------------------------------------------- writing


def _links_to_json(links: Mapping[str, tuple[str, ...]]) -> dict[str, Any]:
    return {k: (v[0] if len(v) == 1 else list(v)) for k, v in links.items()}


def suite_to_dict(suite: Suite) -> dict:
    """The suite as a suite-format-v1 JSON object; ``parse_suite(suite_to_dict(s))`` equals ``s``
    (up to ``path``), and for a file written in this normal form (single link ids as strings,
    midnight times as dates) ``suite_to_dict(parse_suite(obj)) == obj``."""
    out: dict[str, Any] = {
        "persona": suite.persona,
        "name": suite.name,
        "asked_at": _format_time(suite.asked_at),
        "sessions": [
            {"id": s.id, "date": _format_time(s.date), "type": s.type, "topic": s.topic, **s.extra}
            for s in suite.sessions
        ],
        "facts": [
            {
                "id": f.id,
                "text": f.text,
                "categories": dict(f.categories),
                "slot": f.slot,
                "session": f.session,
                "said_at": _format_time(f.said_at),
                "event_time": None if f.event_time is None else _format_time(f.event_time),
                "confidence": f.confidence,
                "numeric": f.numeric,
                "role": f.role,
                "links": _links_to_json(f.links),
                "source": f.source,
                **f.extra,
            }
            for f in suite.facts
        ],
        "turns": [
            {
                "id": t.id,
                "session": t.session,
                "said_at": _format_time(t.said_at),
                "role": t.role,
                "text": t.text,
                **t.extra,
            }
            for t in suite.turns
        ],
        "questions": [
            {
                "id": q.id,
                "text": q.text,
                "asked_at": _format_time(q.asked_at),
                "attack_vector": q.attack_vector,
                "relevant_categories": list(q.relevant_categories),
                "correct_answer": q.correct_answer,
                "wrong_answer_indicators": list(q.wrong_answer_indicators),
                "intent": q.intent,
                "support": list(q.support),
                "wrong": list(q.wrong),
                "notes": q.notes,
                "conflict": q.conflict,
                **q.extra,
            }
            for q in suite.questions
        ],
    }
    out.update(suite.extra)
    return out


# --------------------------------------------------------------------------- corpus


def corpus(suite: Suite) -> list[CorpusItem]:
    """The items a system retrieves from (SPEC §5): every fact (in file order), then the **user**
    turns of **filler** sessions (in file order) as distractors. Critical-session turns are not
    in the corpus (their content is represented by the facts)."""
    filler = {s.id for s in suite.sessions if s.type == "filler"}
    items = [
        CorpusItem(
            id=f.id,
            text=f.text,
            kind="fact",
            session=f.session,
            said_at=f.said_at,
            categories=dict(f.categories),
            slot=f.slot,
            event_time=f.event_time,
            confidence=f.confidence,
            numeric=f.numeric,
            links=dict(f.links),
        )
        for f in suite.facts
    ]
    items.extend(
        CorpusItem(id=t.id, text=t.text, kind="turn", session=t.session, said_at=t.said_at)
        for t in suite.turns
        if t.role == "user" and t.session in filler
    )
    return items


# --------------------------------------------------------------------------- raw-turn mode

#: Why raw-turn mode does not score a question: its ``support`` holds facts only.
NO_TURN_SUPPORT = "support names no turn"
#: Why raw-turn mode does not score a question: its ``support`` turns are assistant turns, which
#: no corpus holds.
ASSISTANT_ONLY_SUPPORT = "support names only assistant turns"


def raw_turn_corpus(suite: Suite) -> list[CorpusItem]:
    """Raw-turn mode's corpus: the **user** turns of **every** session, critical ones included (in
    file order), and no fact. Each is a turn exactly as in :func:`corpus` (session and said-at
    only); assistant turns stay out, as they do there."""
    return [
        CorpusItem(id=t.id, text=t.text, kind="turn", session=t.session, said_at=t.said_at)
        for t in suite.turns
        if t.role == "user"
    ]


def raw_turn_questions(suite: Suite) -> tuple[list[Question], list[dict[str, str]]]:
    """Raw-turn mode's questions: those whose ``support`` names a turn of :func:`raw_turn_corpus`,
    with ``support`` and ``wrong`` cut to those turns (the ids the bank can rank; the outcome is
    unchanged by the cut), in suite order; and ``{"id", "reason"}`` for every other question."""
    user_turns = {t.id for t in suite.turns if t.role == "user"}
    any_turn = {t.id for t in suite.turns}
    scorable: list[Question] = []
    not_scorable: list[dict[str, str]] = []
    for q in suite.questions:
        support = tuple(x for x in q.support if x in user_turns)
        if support:
            wrong = tuple(x for x in q.wrong if x in user_turns)
            scorable.append(replace(q, support=support, wrong=wrong))
        else:
            reason = ASSISTANT_ONLY_SUPPORT if any(x in any_turn for x in q.support) else NO_TURN_SUPPORT
            not_scorable.append({"id": q.id, "reason": reason})
    return scorable, not_scorable
