"""LongMemEval's data: a released file (``.json`` or ``.json.gz``) read and validated into
questions and their corpora, by the benchmark's rules (:mod:`frcore.bench.longmemeval`)."""

from __future__ import annotations

import datetime as _dt
import gzip
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Default data: the development part of the S setting, relative to the repository root.
DEFAULT_DATA = (
    Path(__file__).resolve().parents[3].parent / "shared" / "data" / "longmemeval" / "longmemeval_s_dev.json.gz"
)
#: Granularities of the corpus.
GRANULARITIES: tuple[str, ...] = ("turn", "session")
#: Question types, in the benchmark's order.
QUESTION_TYPES: tuple[str, ...] = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "knowledge-update",
    "temporal-reasoning",
)

#: ``"2023/05/20 (Sat) 06:13"``: the benchmark's dates.
_DATE = re.compile(r"\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\(\s*[A-Za-z]{3}\s*\))?\s*(\d{1,2}):(\d{2})\s*")


class LongMemEvalError(ValueError):
    """Malformed LongMemEval data; the message names the file, the question id and the field."""


# --------------------------------------------------------------------------- data model


@dataclass(frozen=True)
class CorpusItem:
    """One retrievable item: ``corpus_id`` as the benchmark names it, its session's place in
    the history (0-based ``session``) and date, and the message's 1-based number (``turn``;
    0 at session granularity)."""

    corpus_id: str
    text: str
    session: int
    session_id: str
    date: _dt.datetime
    turn: int

    @property
    def gold(self) -> bool:
        """The benchmark's rule: a corpus id that contains ``answer`` is evidence."""
        return "answer" in self.corpus_id


@dataclass(frozen=True)
class Question:
    question_id: str
    question_type: str
    question: str
    question_date: _dt.datetime
    question_date_text: str
    answer: str
    answer_session_ids: tuple[str, ...]
    session_ids: tuple[str, ...]
    session_dates: tuple[_dt.datetime, ...]
    date_texts: tuple[str, ...]
    corpus: tuple[CorpusItem, ...]

    @property
    def abstention(self) -> bool:
        return "_abs" in self.question_id

    @property
    def gold(self) -> list[str]:
        """Distinct gold corpus ids, in corpus order."""
        return list(dict.fromkeys(c.corpus_id for c in self.corpus if c.gold))

    @property
    def asked_at(self) -> _dt.datetime:
        """When the question is asked: its date, or the last session's when that is later."""
        return max([self.question_date, *self.session_dates])


@dataclass(frozen=True)
class LongMemEvalData:
    questions: tuple[Question, ...]
    source: str
    granularity: str

    def counts(self) -> dict[str, Any]:
        by_type: dict[str, int] = {}
        for q in self.questions:
            by_type[q.question_type] = by_type.get(q.question_type, 0) + 1
        return {
            "questions": len(self.questions),
            "abstention": sum(q.abstention for q in self.questions),
            "per_type": by_type,
            "sessions": sum(len(q.session_ids) for q in self.questions),
            "corpus_items": sum(len(q.corpus) for q in self.questions),
            "distinct_texts": len({c.text for q in self.questions for c in q.corpus}),
            "without_gold": sum(1 for q in self.questions if not q.abstention and not q.gold),
            "asked_after_question_date": sum(1 for q in self.questions if q.asked_at > q.question_date),
        }


# --------------------------------------------------------------------------- loader


def parse_date(text: Any, where: str) -> _dt.datetime:
    """``"2023/05/20 (Sat) 06:13"`` → ``datetime(2023, 5, 20, 6, 13)`` (naive, as UTC; the
    weekday is not checked).

    >>> parse_date("2023/05/20 (Sat) 06:13", "question_date")
    datetime.datetime(2023, 5, 20, 6, 13)
    """
    if not isinstance(text, str):
        raise LongMemEvalError(f"{where}: expected a date string, got {type(text).__name__} {text!r:.60}")
    m = _DATE.fullmatch(text)
    try:
        if m is None:
            raise ValueError
        y, mo, d, h, mi = (int(x) for x in m.groups())
        return _dt.datetime(y, mo, d, h, mi)
    except ValueError:
        raise LongMemEvalError(
            f"{where}: cannot parse date {text!r:.60} (expected e.g. '2023/05/20 (Sat) 06:13')"
        ) from None


def _field(obj: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise LongMemEvalError(f"{where}: field {key!r} missing")
    return obj[key]


def _str(obj: Mapping[str, Any], key: str, where: str, *, empty: bool = False) -> str:
    v = _field(obj, key, where)
    if not isinstance(v, str) or (not empty and not v.strip()):
        raise LongMemEvalError(f"{where}: field {key!r}: expected a non-empty string, got {v!r:.60}")
    return v


def _list(obj: Mapping[str, Any], key: str, where: str) -> list:
    v = _field(obj, key, where)
    if not isinstance(v, list):
        raise LongMemEvalError(f"{where}: field {key!r}: expected a list, got {type(v).__name__}")
    return v


def session_corpus(
    messages: Sequence[Mapping[str, Any]],
    session_id: str,
    session: int,
    date: _dt.datetime,
    granularity: str = "turn",
) -> list[CorpusItem]:
    """The corpus items of one session by the benchmark's rules (module docstring)."""
    users = [(i, m) for i, m in enumerate(messages) if m["role"] == "user"]
    if granularity == "session":
        text = " ".join(m["content"] for _, m in users)
        cid = session_id
        if "answer" in session_id and not any(m.get("has_answer", False) for _, m in users):
            cid = session_id.replace("answer", "noans")
        return [CorpusItem(cid, text, session, session_id, date, 0)]
    if granularity != "turn":
        raise ValueError(f"granularity: expected one of {GRANULARITIES}, got {granularity!r}")
    out = []
    for i, m in users:
        cid = f"{session_id}_{i + 1}"
        if "answer" in session_id and not m.get("has_answer", False):
            cid = cid.replace("answer", "noans")
        out.append(CorpusItem(cid, m["content"], session, session_id, date, i + 1))
    return out


def parse_question(obj: Any, index: int, source: str, granularity: str = "turn") -> Question:
    """One element of a LongMemEval file → :class:`Question`.

    Raises:
      LongMemEvalError: one line naming the file, the question id (or index) and the field.
    """
    where = f"{source}: questions[{index}]"
    if not isinstance(obj, Mapping):
        raise LongMemEvalError(f"{where}: expected an object, got {type(obj).__name__}")
    qid = _str(obj, "question_id", where)
    where = f"{source}: question {qid!r}"
    qtype = _str(obj, "question_type", where)
    question = _str(obj, "question", where)
    qdate_text = _str(obj, "question_date", where)
    qdate = parse_date(qdate_text, f"{where}: field 'question_date'")
    answer = _field(obj, "answer", where)
    if isinstance(answer, (dict, list)) or answer is None:
        raise LongMemEvalError(f"{where}: field 'answer': expected a string or number, got {type(answer).__name__}")
    answer_ids = _list(obj, "answer_session_ids", where)
    ids = _list(obj, "haystack_session_ids", where)
    dates = _list(obj, "haystack_dates", where)
    sessions = _list(obj, "haystack_sessions", where)
    if not (len(ids) == len(dates) == len(sessions)):
        raise LongMemEvalError(
            f"{where}: fields 'haystack_session_ids', 'haystack_dates', 'haystack_sessions': expected equal lengths, "
            f"got {len(ids)}, {len(dates)}, {len(sessions)}"
        )
    if not sessions:
        raise LongMemEvalError(f"{where}: field 'haystack_sessions': empty history")
    corpus: list[CorpusItem] = []
    session_dates = []
    for s, (sid, dtext, msgs) in enumerate(zip(ids, dates, sessions)):
        if not isinstance(sid, str) or not sid:
            raise LongMemEvalError(f"{where}: field 'haystack_session_ids'[{s}]: expected a non-empty string")
        date = parse_date(dtext, f"{where}: field 'haystack_dates'[{s}]")
        session_dates.append(date)
        if not isinstance(msgs, list):
            raise LongMemEvalError(
                f"{where}: field 'haystack_sessions'[{s}]: expected a list of messages, got {type(msgs).__name__}"
            )
        for j, m in enumerate(msgs):
            mw = f"{where}: field 'haystack_sessions'[{s}][{j}]"
            if not isinstance(m, Mapping):
                raise LongMemEvalError(f"{mw}: expected a message object, got {type(m).__name__}")
            role = _field(m, "role", mw)
            if role not in ("user", "assistant"):
                raise LongMemEvalError(f"{mw}: field 'role': expected 'user' or 'assistant', got {role!r:.40}")
            _str(m, "content", mw, empty=True)
            if not isinstance(m.get("has_answer", False), bool):
                raise LongMemEvalError(f"{mw}: field 'has_answer': expected true or false, got {m['has_answer']!r:.40}")
        corpus.extend(session_corpus(msgs, sid, s, date, granularity))
    if not any(c.text.strip() for c in corpus):
        raise LongMemEvalError(f"{where}: field 'haystack_sessions': no user message to retrieve")
    return Question(
        qid,
        qtype,
        question,
        qdate,
        qdate_text,
        str(answer),
        tuple(str(a) for a in answer_ids),
        tuple(ids),
        tuple(session_dates),
        tuple(dates),
        tuple(corpus),
    )


def parse_longmemeval(
    obj: Any,
    source: str = "data",
    granularity: str = "turn",
    types: Sequence[str] | None = None,
    limit: int | None = None,
) -> LongMemEvalData:
    """A whole LongMemEval file (a JSON list) → :class:`LongMemEvalData`, optionally only the
    question types ``types`` and then the first ``limit`` questions; every question is
    validated; duplicate question ids are refused."""
    if granularity not in GRANULARITIES:
        raise ValueError(f"granularity: expected one of {GRANULARITIES}, got {granularity!r}")
    if not isinstance(obj, list):
        raise LongMemEvalError(f"{source}: expected a list of questions, got {type(obj).__name__}")
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for i, q in enumerate(obj):
        parsed = parse_question(q, i, source, granularity)
        if parsed.question_id in seen:
            raise LongMemEvalError(
                f"{source}: question {parsed.question_id!r}: field 'question_id': duplicate "
                f"(questions[{seen[parsed.question_id]}] and [{i}])"
            )
        seen[parsed.question_id] = i
        questions.append(parsed)
    if types:
        have = {q.question_type for q in questions}
        unknown = [t for t in types if t not in have]
        if unknown:
            raise ValueError(f"--types: no question of type {unknown} in {source}; types there: {sorted(have)}")
        questions = [q for q in questions if q.question_type in set(types)]
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"--questions: expected a positive count, got {limit!r}")
        questions = questions[:limit]
    return LongMemEvalData(tuple(questions), source, granularity)


def load_longmemeval(
    path: str | os.PathLike | None = None,
    granularity: str = "turn",
    types: Sequence[str] | None = None,
    limit: int | None = None,
) -> LongMemEvalData:
    """Read a LongMemEval file (``.json`` or ``.json.gz``; S, M or oracle; default
    :data:`DEFAULT_DATA`)."""
    p = Path(path) if path is not None else DEFAULT_DATA
    if not p.is_file():
        raise FileNotFoundError(f"--data: LongMemEval file not found at {p}")
    try:
        raw = gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
        obj = json.loads(raw)
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise LongMemEvalError(f"{p}: cannot read ({e})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise LongMemEvalError(f"{p}: not valid JSON ({e})") from None
    return parse_longmemeval(obj, str(p), granularity, types, limit)
