"""Vocabulary and templates of the built-in suite generator (all our own text), read from the data
file ``vocab.json`` beside this module and checked as it loads.

Nothing here comes from the paper's benchmark: names, places, companies, fact wordings,
conversational lines and question phrasings are written for this project. Templates are
``str.format`` strings over a fixed set of fields filled by :mod:`frcore.bench._generator`:
the persona's fields (:data:`PERSONA_FIELDS`: ``first`` (first name), ``prof`` (profession),
``hometown``, ``sib`` / ``sib_rel`` / ``sib_prof`` (a sibling), ``partner``, ``pet`` /
``petname``, ``city`` / ``city2``, ``field`` / ``university``, ``language``, ``condition``,
``age`` / ``n`` (numbers); ``a_prof``, ``a_sib_rel`` and ``a_sib_prof`` with their article),
filled for every template, and, only where the generator passes them, ``v`` (the slot value),
``old`` (the previous value of the slot), ``when`` (a human-readable event date), ``clock`` (a
time of day), ``amount`` (money) and ``topic`` (a critical session's subject).

Loading checks the file against :data:`_SPECS`: the keys and types of each entry, and that every
``{field}`` of a template is one that template is formatted with (a plain ``{name}``, no
conversion or format spec); an entry that is plain text, not a template, may hold no brace. A
mistake is a :class:`ValueError` naming the file, the entry (``slot_kinds[2] (diet).fact[1]``)
and the field; it is raised at import, not mid-run. The generator checks the rest
(``_generator._check_vocab``: canonical categories, chatter lines for every kind).

Lexical variety is deliberate: a slot's fact templates (``fact``), the user turns that state it
(``say``) and the questions that ask about it (``question``) use different content words, so a
retriever cannot win by word overlap alone (the generator's tests measure this). ``chatter``
lines are hard distractors: they reuse the question's vocabulary but state nothing about the
persona; ``restate`` lines mention a value in passing inside an unrelated conversation.
"""

from __future__ import annotations

import dataclasses
import json
import string
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.resources import files
from typing import Any, NamedTuple

#: The fields every template may use: the persona's identity (``_generator._Builder.identity``).
PERSONA_FIELDS: frozenset[str] = frozenset(
    {
        "first",
        "prof",
        "a_prof",
        "hometown",
        "sib",
        "sib_rel",
        "a_sib_rel",
        "sib_prof",
        "a_sib_prof",
        "partner",
        "pet",
        "petname",
        "city",
        "city2",
        "field",
        "university",
        "language",
        "condition",
        "age",
        "n",
    }
)

# --------------------------------------------------------------------------- kinds


@dataclass(frozen=True)
class SlotKind:
    """A slot whose value can change over time (supersession chains, AV1 / AV4 / AV5).

    ``categories``: (primary, secondary) canonical category names; the generator uses the
    primary alone or a 0.7/0.3-style split. ``values``: the pool of slot values (``"@company"``
    or ``"@city"`` draw from the identity pools). ``fact`` states a value; ``fact_new`` states a
    change from ``old`` to ``v``. ``say`` / ``say_new`` are the user turns of a critical session
    that state them. ``restate`` mentions a value in passing; ``restate_q`` does so with the
    question's own vocabulary (a wrong item lexically closer to the question than the support).
    ``hobby``: whether the slot is about free time (used by the broad query, AV5).
    """

    slot: str
    categories: tuple[str, str]
    topic: str
    values: tuple[str, ...]
    fact: tuple[str, ...]
    fact_new: tuple[str, ...]
    say: tuple[str, ...]
    say_new: tuple[str, ...]
    question: tuple[str, ...]
    answer: str
    restate: tuple[str, ...]
    restate_q: tuple[str, ...]
    chatter: tuple[str, ...]
    hobby: bool = False


@dataclass(frozen=True)
class StableKind:
    """A stable identity fact (AV3): never changes, asked about late."""

    key: str
    categories: tuple[str, str]
    topic: str
    fact: tuple[str, ...]
    say: tuple[str, ...]
    question: tuple[str, ...]
    answer: str
    restate: tuple[str, ...]
    numeric: bool = False


@dataclass(frozen=True)
class ExpiringKind:
    """A dated logistical item or obligation (AV2): expires at its event time."""

    key: str
    category: str  # LOGISTICAL_CONTEXT or OBLIGATIONS
    topic: str
    fact: str
    say: str
    pre: str  # mention before the event, in an unrelated conversation
    hour: int  # event hour (deadlines: 17)
    numeric: bool = False


@dataclass(frozen=True)
class ContradictionKind:
    """A habit stated one way and later stated the opposite way (AV6)."""

    slot: str
    categories: tuple[str, str]
    topic: str
    old: str
    new: str
    say_old: str
    say_new: str
    question: tuple[str, ...]
    answer: str
    indicator: str
    numeric: bool = False


@dataclass(frozen=True)
class RetractionKind:
    """A plan stated and later explicitly withdrawn (AV7); ``retraction`` may hold a number
    that matters (then it also serves a historical numeric question, AV8)."""

    key: str
    categories: tuple[str, str]
    topic: str
    plan: str
    retraction: str
    say_plan: str
    say_retraction: str
    mention: str  # enthusiastic mention of the plan in an unrelated conversation
    question: tuple[str, ...]
    answer: str
    indicator: str
    numeric: bool = False
    numeric_question: str = ""
    numeric_answer: str = ""


@dataclass(frozen=True)
class TentativeKind:
    """An existing value plus a tentative, unconfirmed alternative (AV9, confidence 0.4).
    ``blocks``: a slot kind whose use elsewhere in the persona rules this one out."""

    slot: str
    categories: tuple[str, str]
    topic: str
    existing: str
    tentative: str
    say_existing: str
    say_tentative: str
    question: tuple[str, ...]
    answer: str
    blocks: str = ""


@dataclass(frozen=True)
class DetailKind:
    """A detail the conversations state (role ``annotated``): numbers (AV8) or hobbies (AV5)."""

    key: str
    categories: tuple[str, str]
    fact: str
    say: str
    question: str
    answer: str
    numeric: bool


# --------------------------------------------------------------------------- the schema


@dataclass(frozen=True)
class _Spec:
    """What one entry of the data file holds: ``kind`` is ``str``, ``strs`` (a non-empty list of
    strings), ``pair`` (two plain strings), ``bool`` or ``int``; for strings, ``fields`` are the
    fields of a template, ``None`` for plain text."""

    kind: str
    fields: frozenset[str] | None = None


_TEXT = _Spec("str")
_TEXTS = _Spec("strs")
_PAIR = _Spec("pair")
_BOOL = _Spec("bool")
_INT = _Spec("int")


def _template(*extra: str) -> _Spec:
    return _Spec("str", PERSONA_FIELDS | set(extra))


def _templates(*extra: str) -> _Spec:
    return _Spec("strs", PERSONA_FIELDS | set(extra))


#: Each list of kinds: its class and, per key, what it holds. The fields of a template are those
#: the generator formats it with (``_generator._Builder``: ``self.fmt(template, **extra)``); a key
#: the generator uses verbatim is plain text.
_SPECS: dict[str, tuple[type, dict[str, _Spec]]] = {
    "slot_kinds": (
        SlotKind,
        {
            "slot": _TEXT,
            "categories": _PAIR,
            "topic": _TEXT,
            "values": _TEXTS,
            "fact": _templates("v"),
            "fact_new": _templates("v", "old"),
            "say": _templates("v"),
            "say_new": _templates("v", "old"),
            "question": _templates(),
            "answer": _template("v", "old"),
            "restate": _templates("v"),
            "restate_q": _templates("v"),
            "chatter": _TEXTS,
            "hobby": _BOOL,
        },
    ),
    "stable_kinds": (
        StableKind,
        {
            "key": _TEXT,
            "categories": _PAIR,
            "topic": _TEXT,
            "fact": _templates(),
            "say": _templates(),
            "question": _templates(),
            "answer": _template(),
            "restate": _templates(),
            "numeric": _BOOL,
        },
    ),
    "expiring_kinds": (
        ExpiringKind,
        {
            "key": _TEXT,
            "category": _TEXT,
            "topic": _TEXT,
            "fact": _template("when", "clock"),
            "say": _template("when", "clock"),
            "pre": _template("when", "clock"),
            "hour": _INT,
            "numeric": _BOOL,
        },
    ),
    "contradiction_kinds": (
        ContradictionKind,
        {
            "slot": _TEXT,
            "categories": _PAIR,
            "topic": _TEXT,
            "old": _TEXT,
            "new": _TEXT,
            "say_old": _TEXT,
            "say_new": _TEXT,
            "question": _templates(),
            "answer": _TEXT,
            "indicator": _TEXT,
            "numeric": _BOOL,
        },
    ),
    "retraction_kinds": (
        RetractionKind,
        {
            "key": _TEXT,
            "categories": _PAIR,
            "topic": _TEXT,
            "plan": _TEXT,
            "retraction": _template("amount"),
            "say_plan": _TEXT,
            "say_retraction": _template("amount"),
            "mention": _TEXT,
            "question": _templates(),
            "answer": _TEXT,
            "indicator": _TEXT,
            "numeric": _BOOL,
            "numeric_question": _template(),
            "numeric_answer": _template("amount"),
        },
    ),
    "tentative_kinds": (
        TentativeKind,
        {
            "slot": _TEXT,
            "categories": _PAIR,
            "topic": _TEXT,
            "existing": _template(),
            "tentative": _template(),
            "say_existing": _template(),
            "say_tentative": _template(),
            "question": _templates(),
            "answer": _template(),
            "blocks": _TEXT,
        },
    ),
    # {amount} is filled only for the kinds with an amount range (checked by the generator)
    "numeric_details": (
        DetailKind,
        {
            "key": _TEXT,
            "categories": _PAIR,
            "fact": _template("amount"),
            "say": _template("amount"),
            "question": _template(),
            "answer": _template("amount"),
            "numeric": _BOOL,
        },
    ),
    "hobby_details": (
        DetailKind,
        {
            "key": _TEXT,
            "categories": _PAIR,
            "fact": _TEXT,
            "say": _TEXT,
            "question": _TEXT,
            "answer": _TEXT,
            "numeric": _BOOL,
        },
    ),
}
#: Each list of strings: plain text (identity pools, lines used verbatim) or templates.
_LISTS: dict[str, _Spec] = {
    **dict.fromkeys(
        (
            "first_names",
            "last_names",
            "sister_names",
            "brother_names",
            "partner_names",
            "pet_kinds",
            "pet_names",
            "professions",
            "cities",
            "hometowns",
            "company_heads",
            "company_tails",
            "universities",
            "fields",
            "languages",
            "conditions",
            "follow_ups",
            "assistant_lines",
        ),
        _TEXTS,
    ),
    "upcoming_questions": _templates(),
    "past_questions": _templates(),
    "broad_questions": _templates(),
    "critical_openers": _templates("topic"),
}
#: Each map of plain text to lists of plain text.
_MAPS = ("hobby_mentions", "filler_topics", "chatter")


class Vocabulary(NamedTuple):
    """The data file, checked: one attribute per top-level key, in the file's order."""

    first_names: tuple[str, ...]
    last_names: tuple[str, ...]
    sister_names: tuple[str, ...]
    brother_names: tuple[str, ...]
    partner_names: tuple[str, ...]
    pet_kinds: tuple[str, ...]
    pet_names: tuple[str, ...]
    professions: tuple[str, ...]
    cities: tuple[str, ...]
    hometowns: tuple[str, ...]
    company_heads: tuple[str, ...]
    company_tails: tuple[str, ...]
    universities: tuple[str, ...]
    fields: tuple[str, ...]
    languages: tuple[str, ...]
    conditions: tuple[str, ...]
    slot_kinds: tuple[SlotKind, ...]
    stable_kinds: tuple[StableKind, ...]
    expiring_kinds: tuple[ExpiringKind, ...]
    upcoming_questions: tuple[str, ...]
    past_questions: tuple[str, ...]
    contradiction_kinds: tuple[ContradictionKind, ...]
    retraction_kinds: tuple[RetractionKind, ...]
    tentative_kinds: tuple[TentativeKind, ...]
    numeric_details: tuple[DetailKind, ...]
    hobby_details: tuple[DetailKind, ...]
    hobby_mentions: dict[str, tuple[str, ...]]
    broad_questions: tuple[str, ...]
    filler_topics: dict[str, tuple[str, ...]]
    follow_ups: tuple[str, ...]
    critical_openers: tuple[str, ...]
    assistant_lines: tuple[str, ...]
    chatter: dict[str, tuple[str, ...]]


# --------------------------------------------------------------------------- loading


def template_fields(template: str, where: str = "template") -> list[str]:
    """The ``{field}`` names of a template, in order; a :class:`ValueError` naming ``where`` for a
    string ``str.format`` cannot read or a placeholder that is not a plain ``{name}``."""
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as err:
        raise ValueError(f"{where}: not a format string ({err}): {template!r}") from None
    names = []
    for _, name, spec, conversion in parts:
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            shown = name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")
            raise ValueError(f"{where}: placeholder {{{shown}}} is not a plain {{field}}: {template!r}")
        names.append(name)
    return names


def _string(value: Any, fields: frozenset[str] | None, where: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{where}: expected a string, got {type(value).__name__} {value!r}")
    if fields is None:
        if "{" in value or "}" in value:
            raise ValueError(f"{where}: plain text (not a template) holds a brace: {value!r}")
        return value
    for name in template_fields(value, where):
        if name not in fields:
            raise ValueError(
                f"{where}: unknown field {{{name}}} in {value!r} (this template's fields: {', '.join(sorted(fields))})"
            )
    return value


def _value(spec: _Spec, value: Any, where: str) -> Any:
    if spec.kind == "str":
        return _string(value, spec.fields, where)
    if spec.kind in ("strs", "pair"):
        if not isinstance(value, list) or not value:
            raise ValueError(f"{where}: expected a non-empty list of strings, got {value!r}")
        if spec.kind == "pair" and len(value) != 2:
            raise ValueError(f"{where}: expected two strings, got {len(value)}")
        return tuple(_string(item, spec.fields, f"{where}[{i}]") for i, item in enumerate(value))
    if spec.kind == "bool" and not isinstance(value, bool):
        raise ValueError(f"{where}: expected true or false, got {value!r}")
    if spec.kind == "int" and (isinstance(value, bool) or not isinstance(value, int)):
        raise ValueError(f"{where}: expected an integer, got {value!r}")
    return value


def _check_keys(entry: Mapping[str, Any], allowed: Any, required: Any, where: str) -> None:
    unknown, missing = set(entry) - set(allowed), set(required) - set(entry)
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)} (known: {sorted(allowed)})")
    if missing:
        raise ValueError(f"{where}: missing keys {sorted(missing)}")


def _kind(cls: type, spec: Mapping[str, _Spec], entry: Any, where: str) -> Any:
    if not isinstance(entry, Mapping):
        raise ValueError(f"{where}: expected an object, got {entry!r}")
    label = entry.get("key", entry.get("slot"))
    if isinstance(label, str):
        where = f"{where} ({label})"
    required = [f.name for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING]
    _check_keys(entry, spec, required, where)
    return cls(**{name: _value(spec[name], value, f"{where}.{name}") for name, value in entry.items()})


def load(data: Any, source: str = "vocab.json") -> Vocabulary:
    """The :class:`Vocabulary` of a parsed data file; a :class:`ValueError` naming ``source``, the
    entry and the problem for anything the schema does not allow."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{source}: expected an object at the top level")
    _check_keys(data, {"_format", *Vocabulary._fields}, Vocabulary._fields, source)
    values: dict[str, Any] = {}
    for name in Vocabulary._fields:
        where, raw = f"{source}: {name}", data[name]
        if name in _SPECS:
            cls, spec = _SPECS[name]
            if not isinstance(raw, list) or not raw:
                raise ValueError(f"{where}: expected a non-empty list of objects")
            values[name] = tuple(_kind(cls, spec, entry, f"{where}[{i}]") for i, entry in enumerate(raw))
        elif name in _LISTS:
            values[name] = _value(_LISTS[name], raw, where)
        else:
            if not isinstance(raw, Mapping) or not raw:
                raise ValueError(f"{where}: expected a non-empty object")
            values[name] = {_string(k, None, where): _value(_TEXTS, v, f"{where}[{k!r}]") for k, v in raw.items()}
    vocab = Vocabulary(**values)
    missing = [k.key for k in vocab.hobby_details if k.key not in vocab.hobby_mentions]
    if missing:
        raise ValueError(f"{source}: hobby_mentions: no lines for the hobby details {missing}")
    return vocab


def read_file(path: Any) -> Vocabulary:
    """The checked :class:`Vocabulary` of a data file (a path or an :mod:`importlib.resources` file)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not JSON ({err})") from None
    return load(data, str(path))


#: The data file, found beside this module (in the source tree or an installed package).
DATA_FILE = files(__name__.rpartition(".")[0]).joinpath("vocab.json")
_VOCAB = read_file(DATA_FILE)

# --------------------------------------------------------------------------- the names the generator uses

FIRST_NAMES: tuple[str, ...] = _VOCAB.first_names
LAST_NAMES: tuple[str, ...] = _VOCAB.last_names
SISTER_NAMES: tuple[str, ...] = _VOCAB.sister_names
BROTHER_NAMES: tuple[str, ...] = _VOCAB.brother_names
PARTNER_NAMES: tuple[str, ...] = _VOCAB.partner_names
PET_KINDS: tuple[str, ...] = _VOCAB.pet_kinds
PET_NAMES: tuple[str, ...] = _VOCAB.pet_names
PROFESSIONS: tuple[str, ...] = _VOCAB.professions
CITIES: tuple[str, ...] = _VOCAB.cities
HOMETOWNS: tuple[str, ...] = _VOCAB.hometowns
COMPANY_HEADS: tuple[str, ...] = _VOCAB.company_heads
COMPANY_TAILS: tuple[str, ...] = _VOCAB.company_tails
UNIVERSITIES: tuple[str, ...] = _VOCAB.universities
FIELDS: tuple[str, ...] = _VOCAB.fields
LANGUAGES: tuple[str, ...] = _VOCAB.languages
CONDITIONS: tuple[str, ...] = _VOCAB.conditions
SLOT_KINDS: tuple[SlotKind, ...] = _VOCAB.slot_kinds
STABLE_KINDS: tuple[StableKind, ...] = _VOCAB.stable_kinds
EXPIRING_KINDS: tuple[ExpiringKind, ...] = _VOCAB.expiring_kinds
UPCOMING_QUESTIONS: tuple[str, ...] = _VOCAB.upcoming_questions
PAST_QUESTIONS: tuple[str, ...] = _VOCAB.past_questions
CONTRADICTION_KINDS: tuple[ContradictionKind, ...] = _VOCAB.contradiction_kinds
RETRACTION_KINDS: tuple[RetractionKind, ...] = _VOCAB.retraction_kinds
TENTATIVE_KINDS: tuple[TentativeKind, ...] = _VOCAB.tentative_kinds
NUMERIC_DETAILS: tuple[DetailKind, ...] = _VOCAB.numeric_details
HOBBY_DETAILS: tuple[DetailKind, ...] = _VOCAB.hobby_details
HOBBY_MENTIONS: dict[str, tuple[str, ...]] = _VOCAB.hobby_mentions
BROAD_QUESTIONS: tuple[str, ...] = _VOCAB.broad_questions
FILLER_TOPICS: dict[str, tuple[str, ...]] = _VOCAB.filler_topics
FOLLOW_UPS: tuple[str, ...] = _VOCAB.follow_ups
CRITICAL_OPENERS: tuple[str, ...] = _VOCAB.critical_openers
ASSISTANT_LINES: tuple[str, ...] = _VOCAB.assistant_lines
#: Hard distractors for the non-slot question kinds, keyed by the kind's key (``calendar``: the
#: dated-items questions; ``free_time``: the broad query). Each line reuses the vocabulary of the
#: questions about that kind while saying nothing about the persona.
CHATTER: dict[str, tuple[str, ...]] = _VOCAB.chatter
