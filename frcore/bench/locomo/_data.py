"""LoCoMo's data: ``locomo10.json`` read and validated into conversations, sessions, turns and
questions (the protocol: :mod:`frcore.bench.locomo`)."""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Default location of the data, relative to the repository root (``../shared/data/locomo``).
DEFAULT_DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "locomo" / "locomo10.json"
#: QA categories: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.
CATEGORIES: tuple[str, ...] = ("1", "2", "3", "4", "5")
CATEGORY_LABELS: dict[str, str] = {
    "1": "multi-hop",
    "2": "temporal",
    "3": "open-domain",
    "4": "single-hop",
    "5": "adversarial",
}
#: Session dates as LoCoMo writes them, e.g. "1:56 pm on 8 May, 2023".
DATE_FORMAT = "%I:%M %p on %d %B, %Y"

_DIA_ID = re.compile(r"D(\d+):(\d+)")
_SESSION_KEY = re.compile(r"session_(\d+)")


class LocomoError(ValueError):
    """Malformed LoCoMo data; the message names the conversation, the field and the index."""


# --------------------------------------------------------------------------- data model


@dataclass(frozen=True)
class Turn:
    """One turn: ``text`` already carries the image caption (module docstring), not the speaker."""

    dia_id: str
    speaker: str
    text: str
    session: int
    said_at: _dt.datetime


@dataclass(frozen=True)
class Session:
    number: int
    date: _dt.datetime
    date_text: str
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class QAItem:
    """One question; ``evidence`` holds the valid, distinct dia ids in upstream order."""

    index: int
    question: str
    category: str
    answer: str | None
    adversarial_answer: str | None
    evidence: tuple[str, ...]
    raw_evidence: tuple[str, ...]


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    speaker_a: str
    speaker_b: str
    sessions: tuple[Session, ...]
    qa: tuple[QAItem, ...]

    @property
    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s.turns]

    @property
    def last_date(self) -> _dt.datetime:
        return max(s.date for s in self.sessions)


@dataclass(frozen=True)
class LocomoData:
    """Parsed conversations plus every evidence id that was skipped (with the reason)."""

    conversations: tuple[Conversation, ...]
    skipped_evidence: tuple[dict[str, Any], ...] = field(default=())
    source: str = ""

    def counts(self) -> dict[str, Any]:
        """Conversations, sessions, turns and QA per category."""
        qa = {c: 0 for c in CATEGORIES}
        for conv in self.conversations:
            for q in conv.qa:
                qa[q.category] += 1
        return {
            "conversations": len(self.conversations),
            "sessions": sum(len(c.sessions) for c in self.conversations),
            "turns": sum(len(c.turns) for c in self.conversations),
            "qa": sum(qa.values()),
            "qa_per_category": qa,
            "skipped_evidence": len(self.skipped_evidence),
        }


# --------------------------------------------------------------------------- loader


def parse_session_date(text: Any, where: str = "date") -> _dt.datetime:
    """``"1:56 pm on 8 May, 2023"`` → ``datetime(2023, 5, 8, 13, 56)`` (naive, as UTC).

    Raises:
      LocomoError: naming ``where`` and the text.

    Example:
      >>> parse_session_date("1:56 pm on 8 May, 2023")
      datetime.datetime(2023, 5, 8, 13, 56)
    """
    if not isinstance(text, str):
        raise LocomoError(f"{where}: expected a date string, got {type(text).__name__} {text!r}")
    try:
        return _dt.datetime.strptime(" ".join(text.split()), DATE_FORMAT)
    except ValueError:
        raise LocomoError(
            f"{where}: cannot parse session date {text!r} (expected e.g. '1:56 pm on 8 May, 2023')"
        ) from None


def turn_text(turn: Mapping[str, Any]) -> str:
    """The turn's text with its image caption appended as ``" [shares <caption>]"``."""
    text = str(turn["text"]).strip()
    cap = turn.get("blip_caption")
    if isinstance(cap, str) and cap.strip():
        text = f"{text} [shares {cap.strip()}]" if text else f"[shares {cap.strip()}]"
    return text


def _str_field(obj: Mapping[str, Any], key: str, where: str) -> str:
    if key not in obj:
        raise LocomoError(f"{where}: field {key!r} missing")
    v = obj[key]
    if not isinstance(v, str) or not v.strip():
        raise LocomoError(f"{where}: field {key!r}: expected a non-empty string, got {v!r}")
    return v


def _answer(v: Any) -> str | None:
    return None if v is None else str(v)


def parse_conversation(obj: Any, index: int = 0) -> tuple[Conversation, list[dict[str, Any]]]:
    """One element of ``locomo10.json`` → (:class:`Conversation`, skipped evidence records).

    A skipped record is ``{"sample_id", "qa_index", "evidence", "reason"}`` with reason
    ``"malformed"`` (not ``D<session>:<turn>``) or ``"no such turn"``.

    Raises:
      LocomoError: a missing or ill-typed field, an unparseable date, a duplicate dia id or a QA
        category outside 1–5 (naming the conversation and the index).
    """
    where = f"conversations[{index}]"
    if not isinstance(obj, Mapping):
        raise LocomoError(f"{where}: expected an object, got {type(obj).__name__}")
    sample_id = _str_field(obj, "sample_id", where)
    where = f"conversation {sample_id!r}"
    conv = obj.get("conversation")
    if not isinstance(conv, Mapping):
        raise LocomoError(f"{where}: field 'conversation' missing or not an object")
    speaker_a = _str_field(conv, "speaker_a", where)
    speaker_b = _str_field(conv, "speaker_b", where)
    numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION_KEY.fullmatch(k)))
    if not numbers:
        raise LocomoError(f"{where}: no session_<n> lists")
    sessions = []
    seen: dict[str, int] = {}
    for n in numbers:
        key = f"session_{n}"
        date_text = conv.get(f"{key}_date_time")
        if date_text is None:
            raise LocomoError(f"{where}: field '{key}_date_time' missing")
        date = parse_session_date(date_text, f"{where}.{key}_date_time")
        raw_turns = conv[key]
        if not isinstance(raw_turns, list):
            raise LocomoError(f"{where}.{key}: expected a list of turns, got {type(raw_turns).__name__}")
        turns = []
        for i, t in enumerate(raw_turns):
            tw = f"{where}.{key}[{i}]"
            if not isinstance(t, Mapping):
                raise LocomoError(f"{tw}: expected an object, got {type(t).__name__}")
            dia_id = _str_field(t, "dia_id", tw)
            speaker = _str_field(t, "speaker", tw)
            if "text" not in t or not isinstance(t["text"], str):
                raise LocomoError(f"{tw}: field 'text' missing or not a string (dia_id {dia_id!r})")
            if dia_id in seen:
                raise LocomoError(f"{tw}: duplicate dia_id {dia_id!r}")
            seen[dia_id] = n
            text = turn_text(t)
            if not text:
                raise LocomoError(f"{tw}: empty turn (dia_id {dia_id!r})")
            turns.append(Turn(dia_id, speaker, text, n, date))
        sessions.append(Session(n, date, date_text, tuple(turns)))

    raw_qa = obj.get("qa")
    if not isinstance(raw_qa, list):
        raise LocomoError(f"{where}: field 'qa' missing or not a list")
    qa, skipped = [], []
    for j, q in enumerate(raw_qa):
        qw = f"{where}.qa[{j}]"
        if not isinstance(q, Mapping):
            raise LocomoError(f"{qw}: expected an object, got {type(q).__name__}")
        question = _str_field(q, "question", qw)
        cat = q.get("category")
        if isinstance(cat, bool) or not isinstance(cat, int) or str(cat) not in CATEGORIES:
            raise LocomoError(f"{qw}: field 'category': expected an integer 1–5, got {cat!r}")
        raw_ev = q.get("evidence", [])
        if not isinstance(raw_ev, list):
            raise LocomoError(f"{qw}: field 'evidence': expected a list of dia ids, got {type(raw_ev).__name__}")
        ev: list[str] = []
        for e in raw_ev:
            if not isinstance(e, str) or not _DIA_ID.fullmatch(e):
                skipped.append({"sample_id": sample_id, "qa_index": j, "evidence": e, "reason": "malformed"})
            elif e not in seen:
                skipped.append({"sample_id": sample_id, "qa_index": j, "evidence": e, "reason": "no such turn"})
            elif e not in ev:
                ev.append(e)
        qa.append(
            QAItem(
                j,
                question,
                str(cat),
                _answer(q.get("answer")),
                _answer(q.get("adversarial_answer")),
                tuple(ev),
                tuple(map(str, raw_ev)),
            )
        )
    return Conversation(sample_id, speaker_a, speaker_b, tuple(sessions), tuple(qa)), skipped


def parse_locomo(obj: Any, source: str = "", conversations: int | None = None) -> LocomoData:
    """The whole ``locomo10.json`` list → :class:`LocomoData` (the first ``conversations`` only,
    if given). Raises :class:`LocomoError` (see :func:`parse_conversation`) or on duplicate
    sample ids."""
    if not isinstance(obj, list):
        raise LocomoError(f"{source or 'data'}: expected a list of conversations, got {type(obj).__name__}")
    if conversations is not None:
        if conversations < 1:
            raise LocomoError(f"conversations: expected a positive count, got {conversations}")
        obj = obj[:conversations]
    convs, skipped = [], []
    ids: dict[str, int] = {}
    for i, c in enumerate(obj):
        conv, sk = parse_conversation(c, i)
        if conv.sample_id in ids:
            raise LocomoError(
                f"conversations[{i}]: duplicate sample_id {conv.sample_id!r} (first at index {ids[conv.sample_id]})"
            )
        ids[conv.sample_id] = i
        convs.append(conv)
        skipped.extend(sk)
    return LocomoData(tuple(convs), tuple(skipped), source)


def load_locomo(path: str | os.PathLike | None = None, conversations: int | None = None) -> LocomoData:
    """Read ``locomo10.json`` (default :data:`DEFAULT_DATA`) → :class:`LocomoData`."""
    p = Path(path) if path is not None else DEFAULT_DATA
    if not p.is_file():
        raise FileNotFoundError(f"data: LoCoMo file not found at {p} (pass --data PATH)")
    try:
        obj = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise LocomoError(f"data: {p} is not valid JSON ({e})") from None
    return parse_locomo(obj, str(p), conversations)
