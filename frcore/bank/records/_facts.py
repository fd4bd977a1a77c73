"""Fact edges of FR-Bank: the validated record, its parser, and two text heuristics.

A fact edge arrives already extracted (SPEC §4): text, soft category weights, the time it was
said, an optional event time, an optional slot key κ, the extractor's confidence, a numeric flag
and typed links to earlier edges. :func:`parse_fact` validates one JSON-like mapping at the
boundary and raises :class:`FactError` naming *where*, the fact id and the field. Unknown keys are
ignored — in particular a suite's ``role`` (ground truth for analysis only, SPEC §5) never
reaches a :class:`FactRecord`, so it cannot influence lifecycle derivation or scoring.

Times are normalised to naive UTC (aware datetimes are converted; naive ones are taken as UTC).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from ..._ontology import CATEGORY_NAMES, SUPERSESSION_CONFIDENCE_THRESHOLD, primary_name
from ..._shown import shown
from ..._time import hours_since_epoch as hours_since_epoch, parse_time
from ..._types import LINK_KINDS
from ..._validate import WEIGHT_SUM_TOL

#: Edge kinds: an extracted fact, or a raw conversation turn (a distractor in the corpus).
EDGE_KINDS: tuple[str, ...] = ("fact", "turn")
#: Categories given to a turn that arrives without any (OTHER is the ontology's +1 catch-all).
#: Our choice: an unextracted turn carries no category information.
TURN_DEFAULT_CATEGORIES: dict[str, float] = {"OTHER": 1.0}


@dataclass(frozen=True)
class FactField:
    """One field of the fact format (docs/formats.md: Facts, and a suite's ``facts[]``).

    Attributes:
      bank: how :func:`parse_fact` reads it — ``"required"`` of every edge, ``"required of
        facts"`` (a turn may omit it), ``"optional"``, or ``"ignored"``: not a field of the bank
        (a suite's ground truth and provenance; ignored like any key the format does not name).
      suite: a key of a LifecycleBench suite's facts (:func:`frcore.bench.parse_suite`), where
        every such key is required (null where its type allows).
      mcp: a field of the MCP ``remember`` tool's ``Fact`` schema (:mod:`frcore.bank._serve_models`):
        every field the bank reads, ``user`` among them (the server validates a fact as
        ``fr bank add`` does: one of another user than the one served is refused).
      description: one line, the ``Fact`` field's description in the tool's input schema.
      values: the allowed values of the field (``kind``) or of its keys (``categories``,
        ``links``); empty where any value of its type may do.
    """

    bank: Literal["required", "required of facts", "optional", "ignored"]
    description: str
    _: dataclasses.KW_ONLY
    suite: bool
    mcp: bool
    values: tuple[str, ...] = ()


#: The fields of a fact, in the order the bank documents them, then the suite's own: the one
#: table the bank's parser (its required keys), the MCP model's fields and descriptions and the
#: suite loader's fact keys are read from.
FACT_FIELDS: Mapping[str, FactField] = {
    "id": FactField("required", "unique edge id", suite=True, mcp=True),
    "text": FactField("required", "the fact", suite=True, mcp=True),
    "categories": FactField(
        "required of facts",
        "soft category weights {CATEGORY: weight} summing to 1; categories: " + ", ".join(CATEGORY_NAMES),
        suite=True,
        mcp=True,
        values=CATEGORY_NAMES,
    ),
    "said_at": FactField("required", "when it was said: YYYY-MM-DD or ISO-8601 datetime", suite=True, mcp=True),
    "event_time": FactField("optional", "time of the event it is about (a trip, a deadline)", suite=True, mcp=True),
    "slot": FactField("optional", "slot key: facts sharing a slot are values of one attribute", suite=True, mcp=True),
    "confidence": FactField(
        "optional",
        f"extractor confidence in [0, 1] (default 1); below {SUPERSESSION_CONFIDENCE_THRESHOLD:g} an update is a "
        "soft supersession",
        suite=True,
        mcp=True,
    ),
    "numeric": FactField("optional", "carries a number, amount or date (default: detected)", suite=True, mcp=True),
    "links": FactField(
        "optional",
        "typed links {kind: id or [ids]}, kinds " + ", ".join(LINK_KINDS),
        suite=True,
        mcp=True,
        values=LINK_KINDS,
    ),
    "session": FactField("optional", "conversation session number", suite=True, mcp=True),
    "kind": FactField(
        "optional", f'"{EDGE_KINDS[0]}" (default) or "{EDGE_KINDS[1]}"', suite=False, mcp=True, values=EDGE_KINDS
    ),
    "speaker": FactField("optional", "who said it", suite=False, mcp=True),
    "user": FactField(
        "optional", "whose memory it is: a user name, or absent or null for the owner", suite=False, mcp=True
    ),
    # a suite's own keys: read by frcore.bench.parse_suite, ignored by the bank like any unknown key
    "role": FactField("ignored", "ground truth for analysis only, never given to a system", suite=True, mcp=False),
    "source": FactField("ignored", "provenance (free text)", suite=True, mcp=False),
}
#: The keys of a raw turn as MCP ``remember`` takes it (:mod:`frcore.bank.serve`; the bank stores it as
#: a fact of kind ``turn``), with their descriptions (the Turn schema's): another key is refused
TURN_FIELDS: Mapping[str, str] = {
    "text": "the message",
    "speaker": "who said it (default user)",
    "at": "when it was said (default now)",
    "id": "edge id (default: derived from at, speaker and text)",
    "session": "conversation session number",
}

#: The keys :func:`parse_fact` requires of an edge of each kind, in the order it checks them.
REQUIRED_KEYS: dict[str, tuple[str, ...]] = {
    kind: tuple(
        name
        for name, f in FACT_FIELDS.items()
        if f.bank == "required" or (f.bank == "required of facts" and kind != "turn")
    )
    for kind in EDGE_KINDS
}

_CATEGORY_SET = frozenset(CATEGORY_NAMES)
#: The user of a fact that names none: the bank's single owner.
OWNER = ""


#: The form of a turn id derived from the turn (:func:`turn_id`): ``turn-`` and 16 hex digits.
#: A user other than the owner may give an id of this form only to the turn it derives from.
DERIVED_TURN_ID = re.compile(r"turn-[0-9a-f]{16}")


def turn_id(text: str, speaker: str | None, at: str, user: str | None = None) -> str:
    """The id of a turn given without one (MCP ``remember``): ``turn-`` and 16 hex digits of a
    SHA-256, so remembering the same turn twice stores it once.

    For the bank's owner (``user`` ``None`` or :data:`OWNER`) the hash is of ``at``, ``speaker``
    (``""`` for none) and ``text`` joined by U+001F, as it always was (banks of the owner, the
    benchmarks' among them, keep their ids). For any other user it is of the JSON list
    ``["turn", user, at, speaker, text]`` (ASCII-escaped): salted with the user's name, so no two
    users derive one id (the owner's preimage starts with the time's digit, a user's with ``[``,
    and the JSON list encodes its parts unambiguously). Ids are unique across a bank, so an
    unsalted id would tell one user, by "id already in use", whether another said a sentence at
    a time; :func:`parse_fact` refuses such a user an id of this form that is not its own turn's.
    ``at`` is the time as ``datetime.isoformat()`` writes the naive-UTC time the turn is stored with.
    """
    if user is None or user == OWNER:
        payload = "\x1f".join((at, speaker or "", text))
    else:
        payload = json.dumps(["turn", user, at, speaker or "", text])
    return "turn-" + hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class FactError(ValueError):
    """A malformed fact; the message names where it came from, its id and the field."""


@dataclass(frozen=True)
class FactRecord:
    """One fact edge of FR-Bank (validated by :func:`parse_fact` / :func:`validate_record`).

    Attributes:
      id: unique edge id.
      text: the fact (or turn) text.
      categories: soft category weights ``{CATEGORY: w_c}``, w_c ≥ 0, Σ w_c = 1 (± 1e-3).
      said_at: when it was said (valid time of the statement), naive UTC.
      event_time: the time of the event it is about, if any (naive UTC).
      slot: slot key κ; edges sharing a slot compete (supersession).
      confidence: extractor confidence in [0, 1]; < 0.7 makes supersession soft.
      numeric: carries a number, amount or date (``None`` before validation = detect from text).
      links: ``{kind: (target ids, ...)}`` for kinds in :data:`frcore._types.LINK_KINDS`.
      session: conversation session number, if known.
      kind: ``"fact"`` or ``"turn"``.
      speaker: who said it (for turns), if known.
      quarantined: set by the store when the text looks like an instruction (prompt injection).
      user: whose memory the fact is: a user name, or :data:`OWNER` (``""``) for the bank's single
        owner (a fact that names no user). Every read of a bank is scoped to one user.
    """

    id: str
    text: str
    categories: dict[str, float]
    said_at: datetime
    event_time: datetime | None = None
    slot: str | None = None
    confidence: float = 1.0
    numeric: bool | None = None
    links: dict[str, tuple[str, ...]] = field(default_factory=dict)
    session: int | None = None
    kind: str = "fact"
    speaker: str | None = None
    quarantined: bool = False
    user: str = ""

    @property
    def primary_category(self) -> str:
        """argmax_c w_c, first in table order on ties, as the score kernel does
        (:func:`frcore._ontology.primary_name`)."""
        return primary_name(self.categories)

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict that :func:`parse_fact` reads back to an equal record."""
        return {
            "id": self.id,
            "text": self.text,
            "categories": dict(self.categories),
            "said_at": self.said_at.isoformat(),
            "event_time": None if self.event_time is None else self.event_time.isoformat(),
            "slot": self.slot,
            "confidence": self.confidence,
            "numeric": self.numeric,
            "links": {k: list(v) for k, v in self.links.items()},
            "session": self.session,
            "kind": self.kind,
            "speaker": self.speaker,
            "quarantined": self.quarantined,
        } | ({"user": self.user} if self.user != OWNER else {})


# ----------------------------------------------------------------------------- text heuristics

_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety "
    "hundred thousand million billion trillion dozen dozens half quarter twice thrice double triple "
    "first third fourth fifth sixth seventh eighth ninth tenth"
).split()
_MONTHS = (
    "January February March April May June July August September October November December "
    "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec"
).split()
#: Numeric content (SPEC §3 numeric flag): a digit, a currency sign or code, a percent word or
#: sign, a number word, or a capitalised month name (a date).
NUMERIC_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\d"),
    re.compile(r"[$€£¥₹₩₽¢]"),
    re.compile(r"\b(usd|eur|gbp|inr|jpy|dollars?|euros?|rupees?|yen|bucks|cents?)\b", re.I),
    re.compile(r"%|\bper ?cent\b|\bpercent(age)?\b", re.I),
    re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.I),
    re.compile(r"\b(" + "|".join(_MONTHS) + r")\b"),
)


def detect_numeric(text: str) -> bool:
    """True if the text carries a number, amount, percentage or date (:data:`NUMERIC_PATTERNS`)."""
    return any(p.search(text) for p in NUMERIC_PATTERNS)


# Prompt injection: text that reads as an instruction to the model is quarantined by the store
# (kept, excluded from snapshots unless explicitly asked for). The detector — normalisation
# (NFKC, invisible characters, look-alike letters, leetspeak, hidden base64 / ROT13 / tag
# payloads) and rules for the imperative addressed to the assistant — is frcore.bank.guard._injection;
# these two names are the API the store calls.
from ..guard import instruction_rule as instruction_rule, looks_like_instruction as looks_like_instruction  # noqa: E402

#: The fields of a fact checked for prompt injection: every free-text field that is stored and
#: returned with results (link targets are ids of facts, checked as those facts' ids).
INJECTION_FIELDS: tuple[str, ...] = ("text", "id", "slot", "speaker")


def injection_finding(rec: FactRecord) -> tuple[str, str] | None:
    """(field, rule) of the first field of :data:`INJECTION_FIELDS` whose text reads as an
    instruction to the model (:func:`instruction_rule`), or ``None`` for an ordinary fact."""
    for name in INJECTION_FIELDS:
        value = getattr(rec, name)
        if isinstance(value, str) and value:
            rule = instruction_rule(value)
            if rule is not None:
                return name, rule
    return None


# ----------------------------------------------------------------------------- validation


def to_utc_naive(value: Any, field_name: str, where: str, fid: str | None) -> datetime:
    """A datetime, date, or ``YYYY-MM-DD`` / ISO-8601 string → naive UTC datetime
    (:func:`frcore._time.parse_time`); a :class:`FactError` naming where, the fact and the field."""
    return parse_time(value, field_name, error=lambda problem: _err(where, fid, field_name, problem))


def _err(where: str, fid: Any, field_name: str, problem: str) -> FactError:
    return FactError(f"{where}: fact {shown(fid)}: field {field_name!r}: {problem}")


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


#: Integers SQLite stores (64-bit signed): a ``session`` outside this range is refused.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _finite(x: Any) -> bool:
    """``math.isfinite`` for a number, without its OverflowError on an integer beyond float range
    (JSON ``1`` followed by 400 zeros is a Python int)."""
    if isinstance(x, int):
        return -(2**1023) < x < 2**1023
    return math.isfinite(x)


#: The most characters of one stored string of a fact (its text, id, slot, speaker): every
#: interface refuses a longer one (``fr bank add`` and MCP ``remember`` through this check, MCP's
#: other arguments by the same number). Long enough for any message of the benchmarks here
#: (LongMemEval's development part: 41,855 at most).
MAX_TEXT_CHARS = 1_000_000


#: Control characters, refused in ids, link targets and user names (one class for all three):
#: C0 (U+0000–U+001F), DEL (U+007F) and C1 (U+0080–U+009F, U+0085 NEXT LINE among them).
CONTROL_CHARACTERS = re.compile("[\x00-\x1f\x7f-\x9f]")


def first_control(value: str) -> str | None:
    """The first character of ``value`` in :data:`CONTROL_CHARACTERS`, or ``None``."""
    m = CONTROL_CHARACTERS.search(value)
    return None if m is None else m.group(0)


def _check_string(where: str, fid: Any, field_name: str, value: str, is_id: bool = False) -> None:
    """A stored string must be valid Unicode (no lone surrogates, which SQLite cannot store as
    UTF-8) of at most :data:`MAX_TEXT_CHARS` characters; an id (or link target) also has no
    control characters (:func:`first_control`, the rule of user names: a NUL cannot be passed on
    a command line, so such an id could never be erased from the CLI; others corrupt terminals or,
    as U+0085, break a line)."""
    if len(value) > MAX_TEXT_CHARS:
        raise _err(where, fid, field_name, f"{len(value):,} characters; at most {MAX_TEXT_CHARS:,}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise _err(
            where,
            fid,
            field_name,
            f"not valid Unicode: unpaired surrogate U+{ord(value[e.start]):04X} at position {e.start}",
        ) from None
    if is_id:
        bad = first_control(value)
        if bad is not None:
            raise _err(
                where,
                fid,
                field_name,
                f"contains control character U+{ord(bad):04X} at position {value.index(bad)}; ids must be printable",
            )


def _categories(value: Any, where: str, fid: str) -> dict[str, float]:
    if not isinstance(value, Mapping) or not value:
        raise _err(where, fid, "categories", f"expected a non-empty mapping {{CATEGORY: weight}}, got {shown(value)}")
    out: dict[str, float] = {}
    for name, w in value.items():
        if name not in _CATEGORY_SET:
            raise _err(
                where, fid, "categories", f"unknown category {shown(name)}; expected one of {', '.join(CATEGORY_NAMES)}"
            )
        if not _is_number(w) or not _finite(w) or w < 0:
            raise _err(where, fid, "categories", f"weight of {name} must be a finite number ≥ 0, got {shown(w)}")
        out[name] = float(w)
    total = sum(out.values())
    if abs(total - 1.0) > WEIGHT_SUM_TOL:
        raise _err(where, fid, "categories", f"weights sum to {total:.6g}, not 1 (± {WEIGHT_SUM_TOL})")
    return out


def _links(value: Any, where: str, fid: str) -> dict[str, tuple[str, ...]]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _err(where, fid, "links", f"expected a mapping {{kind: id or [ids]}}, got {type(value).__name__}")
    out: dict[str, tuple[str, ...]] = {}
    for kind, targets in value.items():
        if kind not in LINK_KINDS:
            raise _err(where, fid, "links", f"unknown link kind {shown(kind)}; expected one of {', '.join(LINK_KINDS)}")
        if isinstance(targets, str):
            targets = (targets,)
        if not isinstance(targets, (list, tuple)):
            raise _err(where, fid, "links", f"{kind}: expected an id or a list of ids, got {type(targets).__name__}")
        ids: list[str] = []
        for j, t in enumerate(targets):
            if not isinstance(t, str) or not t:
                raise _err(where, fid, "links", f"{kind}[{j}]: expected a non-empty id string, got {shown(t)}")
            _check_string(where, fid, "links", t, is_id=True)
            if t == fid:
                raise _err(where, fid, "links", f"{kind}[{j}]: an edge cannot link to itself")
            if t not in ids:
                ids.append(t)
        if ids:
            out[kind] = tuple(ids)
    return out


def parse_fact(obj: FactRecord | Mapping[str, Any], where: str = "fact") -> FactRecord:
    """Validate one fact mapping and build a normalised :class:`FactRecord`.

    The keys are those of :data:`FACT_FIELDS`: required as its ``bank`` column says
    (:data:`REQUIRED_KEYS`; a turn, ``kind: "turn"``, that omits ``categories`` gets
    :data:`TURN_DEFAULT_CATEGORIES`), the optional ones defaulting as :class:`FactRecord` does
    (``numeric``: :func:`detect_numeric`; ``user`` absent or null: the bank's owner); ``links``
    takes a string or a list per kind. The fields it marks ``ignored`` (a suite's ``role``,
    ``source``) and unknown keys are ignored. Raises :class:`FactError` naming ``where``, the id
    and the field.
    """
    if isinstance(obj, FactRecord):
        return validate_record(obj, where)
    if not isinstance(obj, Mapping):
        raise FactError(f"{where}: expected a mapping, got {type(obj).__name__}")
    fid = obj.get("id")
    if not isinstance(fid, str) or not fid.strip():
        raise _err(where, fid, "id", "missing or not a non-empty string")
    _check_string(where, fid, "id", fid, is_id=True)
    kind = obj.get("kind", "fact")
    if kind not in EDGE_KINDS:
        raise _err(where, fid, "kind", f"expected one of {EDGE_KINDS}, got {shown(kind)}")
    for key in REQUIRED_KEYS[kind]:  # "id" first: already checked above
        if obj.get(key) is None:
            raise _err(where, fid, key, "missing")
    return validate_record(
        FactRecord(
            id=fid,
            text=obj["text"],
            # only a turn that has no categories (absent or null) gets the default; a given but
            # empty or non-mapping value ({}, [], "", 0, false) is an error, never rewritten
            categories=dict(TURN_DEFAULT_CATEGORIES) if obj.get("categories") is None else obj["categories"],
            said_at=obj["said_at"],
            event_time=obj.get("event_time"),
            slot=obj.get("slot"),
            confidence=obj.get("confidence", 1.0),
            numeric=obj.get("numeric"),
            links=obj.get("links", {}),
            session=obj.get("session"),
            kind=kind,
            speaker=obj.get("speaker"),
            user=_given_user(obj.get("user"), where, fid),
        ),
        where,
    )


def _given_user(value: Any, where: str, fid: Any) -> Any:
    """A fact's ``user`` as given: null or absent is the owner (:data:`OWNER`); an explicit
    empty or blank string is refused (omit the field for the owner)."""
    if value is None:
        return OWNER
    if isinstance(value, str) and not value.strip():
        raise _err(where, fid, "user", f"expected a non-empty user name or null (the owner), got {shown(value)}")
    return value


def check_user(value: Any, what: str = "user") -> str:
    """A user name given to a bank (``Bank.open(user=...)``, ``--user``): ``None`` (or
    :data:`OWNER` itself) is the owner; otherwise a non-blank string without control
    characters, or a ``ValueError`` naming ``what``."""
    if value is None or value == OWNER:
        return OWNER
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what}: expected a non-empty user name (or none for the bank's owner), got {shown(value)}")
    _user_text(value, lambda problem: ValueError(f"{what}: {problem}"))
    return value


def _user_text(value: str, error) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise error(
            f"not valid Unicode: unpaired surrogate U+{ord(value[e.start]):04X} at position {e.start}"
        ) from None
    bad = first_control(value)
    if bad is not None:
        raise error(
            f"contains control character U+{ord(bad):04X} at position {value.index(bad)}; user names must be printable"
        )


def validate_record(rec: FactRecord, where: str = "fact") -> FactRecord:
    """Check and normalise a :class:`FactRecord` (types, ranges, times to naive UTC, links to
    tuples, ``numeric=None`` → detected). Returns a new record; raises :class:`FactError`."""
    fid = rec.id
    if not isinstance(fid, str) or not fid.strip():
        raise _err(where, fid, "id", "missing or not a non-empty string")
    _check_string(where, fid, "id", fid, is_id=True)
    if not isinstance(rec.text, str) or not rec.text.strip():
        raise _err(
            where,
            fid,
            "text",
            "missing or not a non-empty string" if not isinstance(rec.text, str) or not rec.text else "only whitespace",
        )
    _check_string(where, fid, "text", rec.text)
    cats = _categories(rec.categories, where, fid)
    said = to_utc_naive(rec.said_at, "said_at", where, fid)
    event = None if rec.event_time is None else to_utc_naive(rec.event_time, "event_time", where, fid)
    if rec.slot is not None and (not isinstance(rec.slot, str) or not rec.slot.strip()):
        raise _err(where, fid, "slot", f"expected a non-empty string or null, got {shown(rec.slot)}")
    if rec.slot is not None:
        _check_string(where, fid, "slot", rec.slot)
    conf = rec.confidence
    if not _is_number(conf) or not _finite(conf) or not 0.0 <= conf <= 1.0:
        raise _err(where, fid, "confidence", f"expected a number in [0, 1], got {shown(conf)}")
    numeric = rec.numeric
    if numeric is None:
        numeric = detect_numeric(rec.text)
    elif not isinstance(numeric, bool):
        raise _err(where, fid, "numeric", f"expected true/false, got {shown(numeric)}")
    links = _links(rec.links, where, fid)
    session = rec.session
    if session is not None and (not isinstance(session, int) or isinstance(session, bool)):
        raise _err(where, fid, "session", f"expected an integer or null, got {shown(session)}")
    if session is not None and not INT64_MIN <= session <= INT64_MAX:
        raise _err(where, fid, "session", f"expected an integer in [-2^63, 2^63 - 1], got {shown(session)}")
    if rec.kind not in EDGE_KINDS:
        raise _err(where, fid, "kind", f"expected one of {EDGE_KINDS}, got {shown(rec.kind)}")
    if rec.speaker is not None and not isinstance(rec.speaker, str):
        raise _err(where, fid, "speaker", f"expected a string or null, got {shown(rec.speaker)}")
    if rec.speaker is not None:
        _check_string(where, fid, "speaker", rec.speaker)
    if not isinstance(rec.quarantined, bool):
        raise _err(where, fid, "quarantined", f"expected true/false, got {shown(rec.quarantined)}")
    if not isinstance(rec.user, str):
        raise _err(where, fid, "user", f"expected a user name (a string) or null, got {shown(rec.user)}")
    if rec.user != OWNER:
        if not rec.user.strip():
            raise _err(where, fid, "user", f"expected a non-empty user name or null (the owner), got {shown(rec.user)}")
        _user_text(rec.user, lambda problem: _err(where, fid, "user", problem))
        if DERIVED_TURN_ID.fullmatch(fid) and (
            rec.kind != "turn" or fid != turn_id(rec.text, rec.speaker, said.isoformat(), rec.user)
        ):
            raise _err(
                where,
                fid,
                "id",
                "the form turn-<16 hex digits> is reserved for the id this user's turn derives from its time, "
                "speaker and text (docs/formats.md#users); omit the id (MCP remember derives it) or choose another",
            )
    return dataclasses.replace(
        rec,
        categories=cats,
        said_at=said,
        event_time=event,
        confidence=float(conf),
        numeric=numeric,
        links=links,
    )
