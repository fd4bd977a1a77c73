"""LongMemEval retrieval evaluation, judge-free, scored by the benchmark's own rules.

LongMemEval (Wu et al., "LongMemEval: Benchmarking Chat Assistants on Long-Term Interactive
Memory", ICLR 2025; MIT) gives each question a history of chat sessions (S: about 50, M: about
500; the oracle version only the evidence sessions). The data is read from a given path,
``.json`` or ``.json.gz`` as released; it is never copied into the repository.

Protocol, as the benchmark's retrieval code defines it (``src/retrieval/run_retrieval.py`` and
``eval_utils.py``) — docs/benchmark.md gives the formulas:

- The corpus of a question is its history's **user messages** (granularity ``turn``) or its
  sessions, each the user messages joined by one space (granularity ``session``). The id of the
  N-th message (1-based, counting every message of the session) of session S is ``S_N``; in a
  session whose id contains ``answer``, a user message without ``has_answer`` has ``answer``
  replaced by ``noans`` in its id (a session without such a message, likewise, at session
  granularity). The gold of a question are the corpus ids that contain ``answer``.
- Metrics for k ∈ :data:`KS`: ``recall_any@k``, ``recall_all@k``, ``ndcg_any@k``; at turn
  granularity also at session level, the message number stripped and k widened until the top
  holds k distinct sessions. Abstention questions (ids containing ``_abs``) are excluded from
  every mean.

frcore's choices (documented in docs/benchmark.md):

- One FR-Bank per question; every corpus item enters as a raw turn (``kind: "turn"``,
  ``speaker: "user"``, router categories, no slot), said at its session's date, as MCP
  ``remember`` stores turns. The question is asked at its ``question_date``, or at the last
  session's date when that is later (17 of the 102 development questions are dated before some
  of their sessions; asking earlier would hide those messages from the bank).
- A system's ranking is its bank's answer (a lifecycle-ranked system returns its distilled
  candidates, :func:`frcore.bank._bank.result_limit`), then every other message the bank can
  return in decreasing cosine similarity to the question (the first stage's order; ties in
  corpus order), so the log ranks the whole corpus. Messages the bank holds in quarantine as
  prompt injections are never returned; they are counted in the summary. An empty message is
  in the corpus (the benchmark's BM25 ranks it) but not in the bank, so FR-Bank's systems never
  rank it.
- ``lme-bm25`` is the benchmark's own BM25 baseline, outside FR-Bank: ``rank_bm25.BM25Okapi``
  over the corpus split on single spaces, the question split the same way, ranked by
  ``numpy.argsort(scores)[::-1]``.
"""

from __future__ import annotations

import datetime as _dt
import gzip
import json
import math
import os
import re
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._params_io import add_params_arguments, param_changes, params_from_args
from ._cluster import add_scheduler_argument, map_tasks

#: Default data: the development part of the S setting, relative to the repository root.
DEFAULT_DATA = (
    Path(__file__).resolve().parents[2].parent / "shared" / "data" / "longmemeval" / "longmemeval_s_dev.json.gz"
)
#: Cut-offs of every metric (the benchmark's).
KS: tuple[int, ...] = (1, 3, 5, 10, 30, 50)
#: The benchmark's metric names, in its order.
METRICS: tuple[str, ...] = ("recall_any", "recall_all", "ndcg_any")
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
#: The benchmark's BM25 baseline, run outside FR-Bank.
PEER_SYSTEMS: tuple[str, ...] = ("lme-bm25",)
#: Systems run by default, side by side.
DEFAULT_SYSTEMS: tuple[str, ...] = (
    "lme-bm25",
    "bm25",
    "flat-cosine",
    "fr-full",
    "fr-plus",
    "fr-lifecycle-off",
    "uniform-decay",
)
#: Paired comparisons: every system against this one, and the lifecycle pair below.
BASELINE = "flat-cosine"
LIFECYCLE_PAIR: tuple[str, str] = ("fr-full", "fr-lifecycle-off")
#: Per-question metrics compared by paired bootstrap (level, metric).
COMPARED: tuple[tuple[str, str], ...] = (("turn", "recall_all@10"), ("turn", "recall_any@10"), ("turn", "ndcg_any@10"))
#: The newest evidence must rank above every older one; stale-only counts in this top.
STALE_K = 10

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


# --------------------------------------------------------------------------- metrics


def _check_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k: expected a positive integer, got {k!r}")
    return int(k)


def dcg(relevances: Sequence[float], k: int) -> float:
    """The benchmark's DCG@k: rel₁ + Σ_{i=2..k} relᵢ / log₂ i (positions 1 and 2 weigh 1)."""
    r = np.asarray(list(relevances)[: _check_k(k)], dtype=np.float64)
    if not r.size:
        return 0.0
    return float(r[0] + np.sum(r[1:] / np.log2(np.arange(2, r.size + 1))))


def ndcg_any(ranked: Sequence[str], gold: Sequence[str], n_corpus: int, k: int) -> float:
    """DCG@k of the ranking (relevance 1 for every ranked item whose id is gold) over the ideal
    DCG@k of |gold| ones followed by zeros (``n_corpus`` items in all); 0 when there is no gold."""
    g = set(gold)
    rel = [1.0 if x in g else 0.0 for x in list(ranked)[: _check_k(k)]]
    ideal = dcg([1.0] * len(g) + [0.0] * max(0, n_corpus - len(g)), k)
    return 0.0 if ideal == 0 else dcg(rel, k) / ideal


def evaluate_retrieval(ranked: Sequence[str], gold: Sequence[str], n_corpus: int, k: int) -> dict[str, float]:
    """``recall_any@k`` = [gold ∩ top_k ≠ ∅], ``recall_all@k`` = [gold ⊆ top_k] (1 for an empty
    gold, as ``all`` of nothing), ``ndcg_any@k`` (:func:`ndcg_any`); ids compared as strings."""
    top = set(list(ranked)[: _check_k(k)])
    g = list(dict.fromkeys(gold))
    return {
        f"recall_any@{k}": float(any(x in top for x in g)),
        f"recall_all@{k}": float(all(x in top for x in g)),
        f"ndcg_any@{k}": ndcg_any(ranked, g, n_corpus, k),
    }


def session_of(corpus_id: str) -> str:
    """The benchmark's ``strip_turn_id``: the id without its last ``_``-separated part."""
    return "_".join(corpus_id.split("_")[:-1])


def session_k(ranked_sessions: Sequence[str], n_corpus: int, k: int) -> int:
    """The widened k: the least k' ≥ k whose top holds k distinct sessions (k' ≤ n + 1, as the
    benchmark's loop stops)."""
    kk = _check_k(k)
    while kk <= n_corpus and len(set(ranked_sessions[:kk])) < k:
        kk += 1
    return kk


def evaluate_turn2session(ranked: Sequence[str], gold: Sequence[str], n_corpus: int, k: int) -> dict[str, float]:
    """Session-level metrics of a turn ranking: ids and gold stripped to their session
    (:func:`session_of`), then :func:`evaluate_retrieval` at the widened k (:func:`session_k`),
    every ranked message of a gold session counting as relevant; keys carry the asked k."""
    sess = [session_of(x) for x in ranked]
    g = list(dict.fromkeys(session_of(x) for x in gold))
    kk = session_k(sess, n_corpus, k)
    m = evaluate_retrieval(sess, g, n_corpus, kk)
    return {name.replace(f"@{kk}", f"@{k}"): v for name, v in m.items()}


def question_metrics(
    ranked: Sequence[str], gold: Sequence[str], n_corpus: int, granularity: str = "turn"
) -> dict[str, dict[str, float]]:
    """``{"session": {...}, "turn": {...}}`` as the benchmark's log holds them: at turn
    granularity both levels, at session granularity the session level only."""
    out: dict[str, dict[str, float]] = {"session": {}, "turn": {}}
    for k in KS:
        if granularity == "turn":
            out["turn"].update(evaluate_retrieval(ranked, gold, n_corpus, k))
            out["session"].update(evaluate_turn2session(ranked, gold, n_corpus, k))
        else:
            out["session"].update(evaluate_retrieval(ranked, gold, n_corpus, k))
    return out


def knowledge_update_measures(question: Question, ranked: Sequence[str], k: int = STALE_K) -> dict[str, Any] | None:
    """Lifecycle measures of a question whose evidence messages lie in sessions of two or more
    dates (``None`` otherwise): ``newest_above_older`` — the best-ranked evidence message of the
    latest date ranks above every evidence message of an earlier date (an unranked message
    ranks below every ranked one; two unranked ones do not order); ``stale_only@k`` — an older
    evidence message is in the top k and no newest one is."""
    gold = [c for c in question.corpus if c.gold]
    dates = {c.date for c in gold}
    if len(dates) < 2:
        return None
    newest = max(dates)
    pos: dict[str, int] = {}
    for i, x in enumerate(ranked):
        pos.setdefault(x, i)
    inf = math.inf
    new = min(pos.get(c.corpus_id, inf) for c in gold if c.date == newest)
    old = [pos.get(c.corpus_id, inf) for c in gold if c.date < newest]
    return {
        "newest_above_older": bool(new < inf and all(new < o for o in old)),
        f"stale_only@{k}": bool(any(o < k for o in old) and not new < k),
    }


# --------------------------------------------------------------------------- rankings


def lme_bm25_ranking(corpus: Sequence[str], query: str) -> list[int]:
    """The benchmark's BM25 baseline: corpus indices, best first (``rank_bm25.BM25Okapi`` over
    texts split on single spaces; ``numpy.argsort(scores)[::-1]``)."""
    from rank_bm25 import BM25Okapi

    bm25 = BM25Okapi([doc.split(" ") for doc in corpus])
    scores = bm25.get_scores(query.split(" "))
    return [int(i) for i in np.argsort(scores)[::-1]]


def complete_ranking(head: Sequence[int], cosine: np.ndarray, eligible: np.ndarray) -> list[int]:
    """``head`` (a system's answer, corpus indices), then every other eligible index by
    decreasing ``cosine`` (ties in corpus order)."""
    placed = set(head)
    order = np.argsort(-np.asarray(cosine, dtype=np.float64), kind="stable")
    return list(head) + [int(i) for i in order if eligible[i] and int(i) not in placed]


def bank_fact(item: CorpusItem, index: int, categories: Mapping[str, float]) -> dict[str, Any]:
    return {
        "id": f"m{index}",
        "text": item.text,
        "categories": dict(categories),
        "said_at": item.date.isoformat(),
        "session": item.session + 1,
        "kind": "turn",
        "speaker": "user",
    }


def _derived_links(bank) -> dict[str, list[list[str]]]:
    """The derived links of a question's bank: kind → [[source id, target id], …] (bank ids)."""
    out: dict[str, list[list[str]]] = {}
    for e in bank.store.edges(user=bank.user):
        for kind, targets in e.links.items():
            out.setdefault(kind, []).extend([e.id, t] for t in targets)
    return out


def run_question(
    q: Question,
    systems: Sequence[Any],
    embedder,
    router,
    *,
    peers: Sequence[str] = (),
    params: Mapping[str, Any] | None = None,
    workdir: str | None = None,
) -> tuple[dict[str, list[int]], dict[str, Any]]:
    """Every system's full ranking of one question (corpus indices, best first) and the
    question's bank facts (``{"quarantined": n}``); ``params``: system name → its parameters
    (default: each system's own on the default parameters)."""
    from ..bank import Bank, result_limit

    texts = [c.text for c in q.corpus]
    rankings: dict[str, list[int]] = {}
    for name in peers:
        if name != "lme-bm25":
            raise ValueError(f"systems: unknown peer {name!r}")
        rankings[name] = lme_bm25_ranking(texts, q.question)
    info: dict[str, Any] = {"quarantined": 0}
    if not systems:
        return rankings, info
    if params is None:
        params = {s.name: s.params() for s in systems}
    # an empty message is in the benchmark's corpus (lme-bm25 ranks it) but cannot be stored
    stored = [i for i, t in enumerate(texts) if t.strip()]
    vecs = np.asarray(embedder.embed([texts[i] for i in stored]), dtype=np.float32)
    qv = np.asarray(embedder.embed([q.question])[0], dtype=np.float32)
    facts = [bank_fact(q.corpus[i], i, router.categorize(texts[i], vecs[j])) for j, i in enumerate(stored)]
    eligible = np.zeros(len(texts), dtype=bool)
    cosine = np.full(len(texts), -np.inf)
    cosine[stored] = vecs @ qv
    n = len(facts)
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        # one bank per derivation setting (docs/derive.md): the systems on router metadata share one
        for g, derive in enumerate(dict.fromkeys(getattr(s, "derive", None) for s in systems)):
            bank = Bank.open(os.path.join(tmp, f"q{g}.db"), embedder=embedder, derive=derive)
            try:
                bank.router = router
                t_add = time.perf_counter()
                added = bank.add(facts)
                info.setdefault("add_seconds", {})["none" if derive is None else derive.name()] = (
                    time.perf_counter() - t_add
                )
                held = {str(x["id"] if isinstance(x, Mapping) else x) for x in getattr(added, "quarantined", ())}
                info["quarantined"] = len(held)
                for i in stored:
                    eligible[i] = f"m{i}" not in held
                if derive is not None:
                    info.setdefault("derived_links", {})[derive.name()] = _derived_links(bank)
                for s in systems:
                    if getattr(s, "derive", None) != derive:
                        continue
                    # every result the system can give; a lifecycle ranker's limit is fixed, so its
                    # kernel compiles once for every question (a k of the corpus size would not)
                    limit = result_limit(s.pipeline)
                    k = n if limit is None else min(n, limit)
                    res = bank.query(
                        q.question, at=q.asked_at, k=k, config=s.pipeline, params=params[s.name], query_vec=qv
                    )
                    head = [int(i[1:]) for i in res.ids]
                    rankings[s.name] = complete_ranking(head, cosine, eligible)
            finally:
                bank.close()
    return rankings, info


# --------------------------------------------------------------------------- logs and summary


def log_entry(q: Question, ranking: Sequence[int], granularity: str) -> dict[str, Any]:
    """One line of the benchmark's retrieval log for ``q`` ranked by ``ranking``."""
    ranked_ids = [q.corpus[i].corpus_id for i in ranking]
    return {
        "question_id": q.question_id,
        "question_type": q.question_type,
        "question": q.question,
        "answer": q.answer,
        "question_date": q.question_date_text,
        "answer_session_ids": list(q.answer_session_ids),
        "retrieval_results": {
            "query": q.question,
            "ranked_items": [
                {"corpus_id": q.corpus[i].corpus_id, "timestamp": q.date_texts[q.corpus[i].session]} for i in ranking
            ],
            "metrics": question_metrics(ranked_ids, q.gold, len(q.corpus), granularity),
        },
    }


def metric_names(granularity: str = "turn") -> list[tuple[str, str]]:
    """(level, ``metric@k``) of every figure a log line holds."""
    levels = ("session", "turn") if granularity == "turn" else ("session",)
    return [(lv, f"{m}@{k}") for lv in levels for m in METRICS for k in KS]


def mean_metrics(entries: Sequence[Mapping[str, Any]], granularity: str = "turn") -> dict[str, Any]:
    """Means of every metric over log entries, abstention questions (``_abs``) excluded, as the
    benchmark's ``print_retrieval_metrics.py`` averages them; ``n`` the questions averaged."""
    kept = [e for e in entries if "_abs" not in e["question_id"]]
    out: dict[str, Any] = {"n": len(kept)}
    for lv, m in metric_names(granularity):
        vals = [e["retrieval_results"]["metrics"][lv][m] for e in kept]
        out.setdefault(lv, {})[m] = float(np.mean(vals)) if vals else None
    return out


def _value(e: Mapping[str, Any], level: str, metric: str) -> float:
    return float(e["retrieval_results"]["metrics"][level][metric])


def summarize(
    data: LongMemEvalData,
    logs: Mapping[str, Sequence[Mapping[str, Any]]],
    *,
    quarantined: Mapping[str, int] | None = None,
    n_boot: int = 10000,
) -> dict[str, Any]:
    """Means per system, pooled and per question type; paired bootstrap CIs; the lifecycle
    measures of knowledge-update questions; ``quarantined`` (question id → messages its bank
    held back as prompt injections) kept where not zero.

    The paired comparisons (each system − :data:`BASELINE`, and :data:`LIFECYCLE_PAIR`) are over
    the *evaluable* questions: not abstention, with gold in the corpus.
    """
    from .locomo import paired_bootstrap_mean

    gran = data.granularity
    qs = {q.question_id: q for q in data.questions}
    types = [t for t in QUESTION_TYPES if any(q.question_type == t for q in data.questions)]
    types += sorted({q.question_type for q in data.questions} - set(types))
    evaluable = {q.question_id for q in data.questions if not q.abstention and q.gold}
    systems: dict[str, Any] = {}
    for name, entries in logs.items():
        by_type = {t: mean_metrics([e for e in entries if e["question_type"] == t], gran) for t in types}
        ku: dict[str, Any] = {"n": 0, "newest_above_older": 0, f"stale_only@{STALE_K}": 0}
        for e in entries:
            q = qs[e["question_id"]]
            if q.question_type != "knowledge-update" or q.abstention:
                continue
            ranked = [c["corpus_id"] for c in e["retrieval_results"]["ranked_items"]]
            m = knowledge_update_measures(q, ranked)
            if m is None:
                continue
            ku["n"] += 1
            for key in ("newest_above_older", f"stale_only@{STALE_K}"):
                ku[key] += int(m[key])
        for key in ("newest_above_older", f"stale_only@{STALE_K}"):
            ku[f"{key}_rate"] = ku[key] / ku["n"] if ku["n"] else None
        systems[name] = {
            f"latest_session_share@{STALE_K}": latest_session_share(
                [(qs[e["question_id"]], e) for e in entries if e["question_id"] in evaluable]
            ),
            "pooled": mean_metrics(entries, gran),
            "pooled_evaluable": mean_metrics([e for e in entries if e["question_id"] in evaluable], gran),
            "per_type": by_type,
            "knowledge_update": ku,
        }
    compared = [c for c in COMPARED if c[0] == "turn" and gran == "turn"] or [("session", "recall_all@10")]
    pairs = [(name, BASELINE) for name in logs if name != BASELINE and BASELINE in logs]
    if all(s in logs for s in LIFECYCLE_PAIR):
        pairs.append(LIFECYCLE_PAIR)
    comparisons: list[dict[str, Any]] = []
    for a, b in pairs:
        ea = {e["question_id"]: e for e in logs[a]}
        eb = {e["question_id"]: e for e in logs[b]}
        for group in ["pooled", *types]:
            ids = [
                q.question_id
                for q in data.questions
                if q.question_id in evaluable and (group == "pooled" or q.question_type == group)
            ]
            if not ids:
                continue
            for lv, metric in compared:
                bs = paired_bootstrap_mean(
                    [_value(ea[i], lv, metric) for i in ids], [_value(eb[i], lv, metric) for i in ids], n_boot=n_boot
                )
                bs["ci_level"] = bs.pop("level")
                comparisons.append({"a": a, "b": b, "group": group, "level": lv, "metric": metric, **bs})
    held = {qid: n for qid, n in (quarantined or {}).items() if n}
    return {
        "systems": systems,
        "comparisons": comparisons,
        "question_types": types,
        "evaluable": len(evaluable),
        "without_gold": sorted(q.question_id for q in data.questions if not q.abstention and not q.gold),
        "quarantined": held,
    }


def latest_session_share(pairs: Sequence[tuple[Question, Mapping[str, Any]]], k: int = STALE_K) -> float | None:
    """Mean over questions of the share of a ranking's top ``k`` that comes from the question's
    latest session (the last by date, then by position): how much fresh raw turns squat."""
    shares = []
    for q, e in pairs:
        if not q.corpus:
            continue
        last = max(range(len(q.date_texts)), key=lambda i: (q.session_dates[i], i))
        session = {c.corpus_id: c.session for c in q.corpus}
        top = [c["corpus_id"] for c in e["retrieval_results"]["ranked_items"][:k]]
        if top:
            shares.append(sum(session[x] == last for x in top) / len(top))
    return float(np.mean(shares)) if shares else None


def derivation_measures(data: LongMemEvalData, infos: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Per derivation setting (docs/derive.md): derived links per 1,000 stored turns by kind;
    the knowledge-update *link recall* — of the questions with evidence on two or more dates, the
    share whose bank derived a ``supersedes`` link from a newest evidence message to an older
    one; and the seconds per turn its bank's add took beyond the bank without derivation."""
    out: dict[str, Any] = {}
    qs = {q.question_id: q for q in data.questions}
    for qid, info in infos.items():
        q = qs[qid]
        n_turns = sum(1 for c in q.corpus if c.text.strip())
        for setting, links in info.get("derived_links", {}).items():
            m = out.setdefault(
                setting, {"turns": 0, "links": {}, "ku": {"n": 0, "linked": 0}, "extra_seconds": 0.0, "timed": 0}
            )
            m["turns"] += n_turns
            for kind, pairs in links.items():
                m["links"][kind] = m["links"].get(kind, 0) + len(pairs)
            secs = info.get("add_seconds", {})
            if "none" in secs and setting in secs:
                m["extra_seconds"] += secs[setting] - secs["none"]
                m["timed"] += n_turns
            gold = [(i, c) for i, c in enumerate(q.corpus) if c.gold]
            dates = {c.date for _, c in gold}
            if q.question_type != "knowledge-update" or q.abstention or len(dates) < 2:
                continue
            newest = {f"m{i}" for i, c in gold if c.date == max(dates)}
            older = {f"m{i}" for i, c in gold if c.date < max(dates)}
            m["ku"]["n"] += 1
            m["ku"]["linked"] += int(any(a in newest and b in older for a, b in links.get("supersedes", [])))
    for m in out.values():
        m["links_per_1000_turns"] = {k: 1000.0 * v / m["turns"] for k, v in m["links"].items()} if m["turns"] else {}
        m["ku"]["link_recall"] = m["ku"]["linked"] / m["ku"]["n"] if m["ku"]["n"] else None
        timed = m.pop("timed")
        m["extra_us_per_turn"] = 1e6 * m.pop("extra_seconds") / timed if timed else None
    return out


def _pct(v: Any) -> str:
    return "—" if v is None else f"{100.0 * float(v):.1f}"


def markdown_longmemeval(summary: Mapping[str, Any]) -> str:
    """Markdown tables: pooled and per-type metrics of every system, the lifecycle measures of
    knowledge-update questions, and the paired comparisons."""
    systems = summary.get("systems")
    if not isinstance(systems, Mapping) or not systems:
        raise ValueError("summary: field 'systems': expected a non-empty mapping NAME → results")
    gran = summary.get("config", {}).get("granularity", "turn")
    lv = "turn" if gran == "turn" else "session"
    types = summary.get("question_types", [])
    first = next(iter(systems.values()))
    lines = [
        f"LongMemEval retrieval ({summary.get('data', '?')}, embedder `{summary.get('embedder', '?')}`): "
        "means in %, abstention questions excluded.",
        "",
        f"Pooled ({first['pooled']['n']} questions):",
        "",
        "| system | "
        + " | ".join(f"{lv} {m}" for m in ("R_any@5", "R_all@5", "R_all@10", "NDCG@10", "R_all@50"))
        + (" | session R_any@5 | session R_all@5 | session R_all@10 | session NDCG@10 |" if lv == "turn" else " |"),
        "|---|" + "---:|" * (9 if lv == "turn" else 5),
    ]
    for name, s in systems.items():
        p = s["pooled"]
        t = p.get(lv, {})
        ss = p["session"]
        lines.append(
            f"| {name} | "
            + " | ".join(
                _pct(t.get(m))
                for m in ("recall_any@5", "recall_all@5", "recall_all@10", "ndcg_any@10", "recall_all@50")
            )
            + (
                " | "
                + " | ".join(_pct(ss.get(m)) for m in ("recall_any@5", "recall_all@5", "recall_all@10", "ndcg_any@10"))
                if lv == "turn"
                else ""
            )
            + " |"
        )
    head = [f"{t} (n={first['per_type'][t]['n']})" for t in types]
    lines += ["", f"{lv.capitalize()}-level recall_all@10 per question type:", ""]
    lines.append("| system | " + " | ".join(head) + " |")
    lines.append("|---|" + "---:|" * len(types))
    for name, s in systems.items():
        lines.append(
            f"| {name} | " + " | ".join(_pct(s["per_type"][t].get(lv, {}).get("recall_all@10")) for t in types) + " |"
        )
    ku = first.get("knowledge_update", {})
    if ku.get("n"):
        lines += [
            "",
            f"Knowledge-update questions with evidence on two or more dates (n={ku['n']}): newest evidence ranked "
            f"above every older one, and only older evidence in the top {STALE_K}:",
            "",
            f"| system | newest above older | stale-only@{STALE_K} |",
            "|---|---:|---:|",
        ]
        for name, s in systems.items():
            k = s["knowledge_update"]
            lines.append(f"| {name} | {_pct(k['newest_above_older_rate'])} | {_pct(k[f'stale_only@{STALE_K}_rate'])} |")
    comps = [c for c in summary.get("comparisons", []) if c["group"] == "pooled" and c["metric"] == "recall_all@10"]
    if comps:
        lines += [
            "",
            f"Paired bootstrap on the {summary.get('evaluable', '?')} questions with gold (abstention excluded), "
            f"{comps[0]['level']} recall_all@10, a − b in points (95% CI):",
            "",
            "| a | b | a | b | Δ | CI |",
            "|---|---|---:|---:|---:|---:|",
        ]
        for c in comps:
            lines.append(
                f"| {c['a']} | {c['b']} | {_pct(c['mean_a'])} | {_pct(c['mean_b'])} | {100 * c['diff']:+.1f} | "
                f"[{100 * c['ci_low']:+.1f}, {100 * c['ci_high']:+.1f}] |"
            )
    wg = summary.get("without_gold") or []
    if wg:
        lines += [
            "",
            f"{len(wg)} non-abstention questions have no gold in the corpus (their evidence is in assistant messages "
            "or absent): recall_any and NDCG 0, recall_all 1 (all of nothing), for every system, as the benchmark "
            "computes them.",
        ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- running


def resolve(names: str | Sequence[str] | None) -> tuple[list[str], list[str], list[Any]]:
    """(every name in order, peer names, FR-Bank systems) from a comma-separated list (``all``
    or ``None``: the default set, :data:`DEFAULT_SYSTEMS`)."""
    from ._systems import resolve_systems

    if names is None or names == "all":
        names = list(DEFAULT_SYSTEMS)
    elif isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    names = list(dict.fromkeys(names))
    if not names:
        raise ValueError("--systems: no system named")
    peers = [n for n in names if n in PEER_SYSTEMS]
    return names, peers, resolve_systems([n for n in names if n not in PEER_SYSTEMS])


def run_longmemeval(
    data: LongMemEvalData,
    systems: str | Sequence[str] | None,
    embedder,
    out: str | os.PathLike,
    *,
    base_params=None,
    n_boot: int = 10000,
    progress: bool = True,
    pipeline_overrides: dict | None = None,
    scheduler: str | None = None,
    client=None,
) -> dict[str, Any]:
    """Every system on every question: writes ``OUT/<system>.jsonl`` (the benchmark's log),
    ``OUT/summary.json`` and ``OUT/summary.md``; returns the summary. With ``scheduler`` /
    ``client`` the questions run on a Dask cluster (:func:`frcore.bench._cluster.map_tasks`: one
    question, its haystack with it, per task; the texts are embedded here first, into the vector
    cache the workers read)."""
    from tqdm import tqdm

    from ..bank import Router
    from ._runner import git_revision
    from ._systems import with_overrides

    names, peers, syss = resolve(systems)
    syss = with_overrides(syss, pipeline_overrides)
    outdir = Path(out)
    outdir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    timings: dict[str, float] = {"embedding": 0.0}
    router = None
    if syss:
        texts = list(
            dict.fromkeys([c.text for q in data.questions for c in q.corpus] + [q.question for q in data.questions])
        )
        t = time.perf_counter()
        chunk = 512
        bar = tqdm(total=len(texts), desc="embedding (distinct texts)", unit="text", disable=not progress)
        for start in range(0, len(texts), chunk):
            embedder.embed(texts[start : start + chunk])
            bar.update(min(chunk, len(texts) - start))
        bar.close()
        timings["embedding"] = round(time.perf_counter() - t, 2)
        router = Router(embedder)
    params = {s.name: s.params(base_params) for s in syss}
    logs: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    quarantined: dict[str, int] = {}
    infos: dict[str, dict[str, Any]] = {}
    t = time.perf_counter()
    answers = map_tasks(
        _question_task,
        [(q,) for q in data.questions],
        (syss, embedder, router, peers, params),
        scheduler=scheduler,
        client=client,
        desc="questions",
        unit="question",
        progress=progress,
    )
    for q, (rankings, info) in zip(data.questions, answers):
        for n in names:
            logs[n].append(log_entry(q, rankings[n], data.granularity))
        quarantined[q.question_id] = info["quarantined"]
        infos[q.question_id] = info
    timings["questions"] = round(time.perf_counter() - t, 2)
    for n in names:
        with open(outdir / f"{n}.jsonl", "w", encoding="utf-8") as f:
            for e in logs[n]:
                f.write(json.dumps(e, ensure_ascii=False) + "\n")
    summary: dict[str, Any] = {
        "benchmark": "longmemeval",
        "data": data.source,
        "counts": data.counts(),
        "embedder": getattr(embedder, "name", str(embedder)),
        "config": {
            "granularity": data.granularity,
            "ks": list(KS),
            "systems": names,
            "baseline": BASELINE,
            "lifecycle_pair": list(LIFECYCLE_PAIR),
            "n_boot": n_boot,
            "stale_k": STALE_K,
            "asked_at": "max(question_date, last session date)",
        },
        "git_revision": git_revision(),
        **summarize(data, logs, quarantined=quarantined, n_boot=n_boot),
        "derivation": derivation_measures(data, infos),
        "logs": {n: f"{n}.jsonl" for n in names},
    }
    timings["total"] = round(time.perf_counter() - t0, 2)
    summary["seconds"] = timings
    (outdir / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    (outdir / "summary.md").write_text(markdown_longmemeval(summary))
    return summary


def _question_task(systems, embedder, router, peers, params, q: Question):
    """:func:`run_question` on one question (a task of :func:`run_longmemeval`)."""
    return run_question(q, systems, embedder, router, peers=peers, params=params)


# --------------------------------------------------------------------------- CLI


def _cli(args) -> int:
    from ._inputs import make_embedder, parse_kv

    base = params_from_args(args)  # before anything runs: a bad file or override fails fast
    overrides = dict(parse_kv("--pipeline", x, strings=True) for x in args.pipeline) or None
    types = [t.strip() for t in args.types.split(",") if t.strip()] if args.types else None
    resolve(args.systems)  # an unknown system fails before the data is read
    data = load_longmemeval(args.data, args.granularity, types, args.questions)
    emb = make_embedder(args.embedder)
    summary = run_longmemeval(
        data,
        args.systems,
        emb,
        args.out,
        base_params=base,
        n_boot=args.n_boot,
        pipeline_overrides=overrides,
        scheduler=args.scheduler,
    )
    if base is not None:
        summary["param_overrides"] = param_changes(base)
        Path(args.out, "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    print(markdown_longmemeval(summary))
    c = summary["counts"]
    print(
        f"\n{c['questions']} questions, {len(summary['systems'])} systems in {summary['seconds']['total']} s "
        f"(embedding {summary['seconds']['embedding']} s); logs and summary in {args.out}",
        file=sys.stderr,
    )
    return 0


def register_longmemeval(sub) -> None:
    """Add ``fr bench longmemeval`` to the ``fr bench`` sub-parsers."""
    p = sub.add_parser(
        "longmemeval", help="LongMemEval retrieval (recall_any/recall_all/ndcg_any@k, the benchmark's logs)"
    )
    p.add_argument("--data", default=None, help=f"LongMemEval JSON (.json or .json.gz; default {DEFAULT_DATA})")
    p.add_argument("--types", default=None, help="only these question types (comma-separated)")
    p.add_argument(
        "--systems", default="all", help=f"comma-separated system names (default all: {','.join(DEFAULT_SYSTEMS)})"
    )
    p.add_argument(
        "--questions", type=int, default=None, metavar="N", help="only the first N questions (after --types)"
    )
    p.add_argument("--granularity", default="turn", choices=GRANULARITIES, help="corpus items (default turn)")
    p.add_argument("--embedder", default="minilm", help="minilm (default, cached) or hash")
    p.add_argument("--n-boot", type=int, default=10000, help="bootstrap resamples (default 10000)")
    p.add_argument(
        "--pipeline",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a PipelineConfig field on every FR system (repeatable)",
    )
    add_params_arguments(p)
    add_scheduler_argument(p)
    p.add_argument("--out", required=True, help="folder for <system>.jsonl, summary.json and summary.md")
    p.set_defaults(func=_cli)
