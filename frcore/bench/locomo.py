"""LoCoMo retrieval evaluation: evidence recall of FR-Bank systems on an external benchmark.

LoCoMo ("Evaluating Very Long-Term Conversational Memory of LLM Agents", Maharana et al., ACL
2024; CC BY-NC 4.0) holds 10 long two-speaker conversations (272 sessions, 5,882 turns) and
1,986 questions in five categories (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial), each with the ids of the turns that hold its evidence. The data is read from
``../shared/data/locomo/locomo10.json`` (relative to the repository root) or a given path; it is
never copied into the repository.

Protocol (our choices, documented):

- One bank per conversation, one item per turn: id ``<sample_id>:<dia_id>``, text
  ``"<speaker>: <text>"``; a turn that shares an image carries ``blip_caption`` appended as
  ``" [shares <caption>]"`` (the caption already reads "a photo of ..."). The session's date
  is the turn's ``said_at`` (every turn of a session shares it), the session number its
  ``session``, its categories come from the router, no slot, kind ``"turn"``.
- Every question is asked at :data:`QUERY_DELAY` after the last session's date.
- Evidence ids that are malformed (not ``D<session>:<turn>``) or name no turn of the
  conversation are skipped and reported (``skipped_evidence``), never guessed at; a question
  left with no evidence is excluded from the recall means and counted (``n_no_evidence``).
- Metrics over the top-k of each system (k ∈ :data:`KS`):

  .. math::
     \\mathrm{recall@}k = \\frac{|E \\cap \\mathrm{top}_k|}{|E|}, \\qquad
     \\mathrm{all\\_evidence@}k = [E \\subseteq \\mathrm{top}_k],

  averaged over the questions of a category (E = the question's evidence turns). Category 5
  (adversarial) is reported apart; the pooled figures and the paired bootstrap comparisons use
  categories 1–4.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._params_io import add_params_arguments, param_changes, params_from_args

#: Default location of the data, relative to the repository root (``../shared/data/locomo``).
DEFAULT_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "locomo" / "locomo10.json"
#: Cut-offs of recall@k and all_evidence@k.
KS: tuple[int, ...] = (1, 5, 10, 20)
#: QA categories: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.
CATEGORIES: tuple[str, ...] = ("1", "2", "3", "4", "5")
CATEGORY_LABELS: dict[str, str] = {
    "1": "multi-hop",
    "2": "temporal",
    "3": "open-domain",
    "4": "single-hop",
    "5": "adversarial",
}
#: Categories pooled for the headline figures and the comparisons (5 is reported apart).
POOLED: tuple[str, ...] = ("1", "2", "3", "4")
#: Questions are asked this long after the last session's date (our choice: "just after").
QUERY_DELAY = _dt.timedelta(hours=1)
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


# --------------------------------------------------------------------------- metrics


def _evidence_set(evidence: Iterable[str]) -> set[str]:
    if isinstance(evidence, (str, bytes)):
        raise ValueError(f"evidence: expected a sequence of ids, got a single string {evidence!r}")
    ev = set(evidence)
    if not ev:
        raise ValueError("evidence: empty; recall is undefined for a question without evidence")
    return ev


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k: expected a positive integer, got {k!r}")
    return int(k)


def evidence_recall(ranked: Sequence[str], evidence: Iterable[str], k: int) -> float:
    """recall@k = |E ∩ top_k(ranked)| / |E| (E = distinct evidence ids).

    Example:
      >>> evidence_recall(["a", "x", "b"], ["a", "b", "c"], 2)
      0.3333333333333333
    """
    ev = _evidence_set(evidence)
    top = set(list(ranked)[: _check_k(k)])
    return len(ev & top) / len(ev)


def all_evidence(ranked: Sequence[str], evidence: Iterable[str], k: int) -> bool:
    """[E ⊆ top_k(ranked)]: every evidence turn is in the top k."""
    ev = _evidence_set(evidence)
    return ev <= set(list(ranked)[: _check_k(k)])


def paired_bootstrap_mean(a: Any, b: Any, n_boot: int = 10000, seed: int = 0) -> dict[str, Any]:
    """Paired bootstrap of mean(a) − mean(b) for per-question real scores (e.g. recall@10).

    The pairs (a_i, b_i) are resampled together ``n_boot`` times; the 95% CI is the 2.5 / 97.5
    percentiles of the resampled differences. Deterministic for a given ``seed``. Returns
    ``{"diff", "ci_low", "ci_high", "mean_a", "mean_b", "n", "n_boot", "seed", "level"}``.
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    for name, arr in (("a", x), ("b", y)):
        if arr.ndim != 1:
            raise ValueError(f"{name}: expected a 1-d array of per-question scores, got shape {arr.shape}")
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            raise ValueError(f"{name}[{int(bad[0])}]: expected a finite number, got {arr[bad[0]]!r}")
    if x.shape != y.shape:
        raise ValueError(f"a, b: paired scores need equal lengths, got {x.size} and {y.size}")
    if x.size == 0:
        raise ValueError("a, b: empty; nothing to compare")
    from ._metrics import bootstrap_difference

    return bootstrap_difference(x, y, n_boot=n_boot, seed=seed)


def question_scores(ranked: Sequence[str], evidence: Sequence[str], ks: Sequence[int] = KS) -> dict[str, float]:
    """``{"recall@k": float, "all_evidence@k": 0/1}`` for every k in ``ks``."""
    out: dict[str, float] = {}
    for k in ks:
        out[f"recall@{k}"] = evidence_recall(ranked, evidence, k)
        out[f"all_evidence@{k}"] = float(all_evidence(ranked, evidence, k))
    return out


def summarize_locomo(
    records: Sequence[Mapping[str, Any]], system_names: Sequence[str], reference: str = "fr-full", n_boot: int = 10000
) -> dict[str, Any]:
    """Per-system tables and paired comparisons from per-question records.

    A record is ``{"system", "sample_id", "qa_index", "category", "scores": question_scores(...)}``
    (records of questions without evidence are not passed here). A category with no question
    gets ``null`` (JSON) rather than a number.

    Returns:
      ``{"systems": {NAME: {"recall@k": {"1": {CAT: float}, ...}, "all_evidence@k": {...},
      "all_evidence@10": {CAT: float}, "n": {CAT: int}, "pooled_1_4": {metric: float}}},
      "comparisons": {NAME: {"recall@10": bootstrap, "all_evidence@10": bootstrap}}}``, the
      comparisons being ``reference − NAME`` over categories 1–4 on the same questions.
    """
    by_sys: dict[str, dict[tuple, Mapping[str, Any]]] = {n: {} for n in system_names}
    for i, r in enumerate(records):
        if r["system"] not in by_sys:
            raise ValueError(f"records[{i}]: system {r['system']!r} not among {list(system_names)}")
        key = (r["sample_id"], r["qa_index"])
        if key in by_sys[r["system"]]:
            raise ValueError(f"records[{i}]: duplicate record for system {r['system']!r}, question {key}")
        by_sys[r["system"]][key] = r
    systems: dict[str, Any] = {}
    for name in system_names:
        recs = list(by_sys[name].values())
        by_cat = {c: [r for r in recs if r["category"] == c] for c in CATEGORIES}
        pooled = [r for r in recs if r["category"] in POOLED]

        def mean(rs, metric):
            return float(np.mean([r["scores"][metric] for r in rs])) if rs else None

        systems[name] = {
            "recall@k": {str(k): {c: mean(by_cat[c], f"recall@{k}") for c in CATEGORIES} for k in KS},
            "all_evidence@k": {str(k): {c: mean(by_cat[c], f"all_evidence@{k}") for c in CATEGORIES} for k in KS},
            "all_evidence@10": {c: mean(by_cat[c], "all_evidence@10") for c in CATEGORIES},
            "n": {c: len(by_cat[c]) for c in CATEGORIES},
            "pooled_1_4": {m: mean(pooled, m) for k in KS for m in (f"recall@{k}", f"all_evidence@{k}")}
            | {"n": len(pooled)},
        }
    comparisons: dict[str, Any] = {}
    if reference in by_sys:
        ref = by_sys[reference]
        for name in system_names:
            if name == reference:
                continue
            keys = [k for k, r in ref.items() if r["category"] in POOLED and k in by_sys[name]]
            if not keys:
                continue
            comparisons[name] = {
                m: paired_bootstrap_mean(
                    [ref[k]["scores"][m] for k in keys], [by_sys[name][k]["scores"][m] for k in keys], n_boot=n_boot
                )
                for m in ("recall@10", "all_evidence@10")
            }
    return {"systems": systems, "comparisons": comparisons, "reference": reference}


# --------------------------------------------------------------------------- running


def _iso(t: _dt.datetime) -> str:
    return t.isoformat()


def query_time(conv: Conversation) -> _dt.datetime:
    """When every question of ``conv`` is asked: :data:`QUERY_DELAY` after its last session."""
    return conv.last_date + QUERY_DELAY


def turn_records(conv: Conversation, router, embedder) -> list[dict[str, Any]]:
    """The conversation's turns as bank fact dicts (speaker-prefixed text, router categories)."""
    texts = [f"{t.speaker}: {t.text}" for t in conv.turns]
    vecs = np.asarray(embedder.embed(texts)) if texts else np.zeros((0, 0))
    return [
        {
            "id": f"{conv.sample_id}:{t.dia_id}",
            "text": text,
            "categories": router.categorize(text, vecs[i]),
            "said_at": _iso(t.said_at),
            "session": t.session,
            "kind": "turn",
            "speaker": t.speaker,
        }
        for i, (t, text) in enumerate(zip(conv.turns, texts))
    ]


def run_conversation(
    conv: Conversation,
    systems: Sequence[Any],
    embedder,
    *,
    base_params=None,
    k: int = max(KS),
    workdir: str | None = None,
) -> list[dict[str, Any]]:
    """Ingest one conversation as a bank and ask every question under every system.

    Returns one record per (question with evidence, system): ``{"system", "sample_id",
    "qa_index", "category", "evidence", "ranked" (top-k dia ids), "scores"}``.
    """
    from ..bank import Bank, Router

    router = Router(embedder)
    at = query_time(conv)
    prefix = f"{conv.sample_id}:"
    questions = [q for q in conv.qa if q.evidence]
    tmp = tempfile.TemporaryDirectory(dir=workdir)
    try:
        params = {s.name: s.params(base_params) for s in systems}
        q_vecs = np.asarray(embedder.embed([q.question for q in questions])) if questions else None
        records = turn_records(conv, router, embedder)
        got: dict[tuple[int, str], dict[str, Any]] = {}
        # one bank per derivation setting (docs/derive.md): the systems on router metadata share one
        for g, derive in enumerate(dict.fromkeys(getattr(s, "derive", None) for s in systems)):
            bank = Bank.open(os.path.join(tmp.name, f"{conv.sample_id}.{g}.db"), embedder=embedder, derive=derive)
            try:
                bank.router = router
                bank.add(records)
                for qi, q in enumerate(questions):
                    assert q_vecs is not None  # embedded above whenever there are questions
                    for s in systems:
                        if getattr(s, "derive", None) != derive:
                            continue
                        res = bank.query(
                            q.question, at=at, k=k, config=s.pipeline, params=params[s.name], query_vec=q_vecs[qi]
                        )
                        ranked = [i[len(prefix) :] if i.startswith(prefix) else i for i in res.ids]
                        got[qi, s.name] = {
                            "system": s.name,
                            "sample_id": conv.sample_id,
                            "qa_index": q.index,
                            "category": q.category,
                            "evidence": list(q.evidence),
                            "ranked": ranked,
                            "scores": question_scores(ranked, q.evidence),
                        }
            finally:
                bank.close()
        return [got[qi, s.name] for qi in range(len(questions)) for s in systems]
    finally:
        tmp.cleanup()


def run_locomo(
    data: LocomoData,
    systems: str | Sequence[str] | None,
    embedder,
    *,
    base_params=None,
    progress: bool = True,
    n_boot: int = 10000,
    keep_questions: bool = False,
    pipeline_overrides: dict | None = None,
) -> dict[str, Any]:
    """Every system on every conversation → the ``fr bench locomo`` result dict."""
    from tqdm import tqdm

    from ._runner import git_revision
    from ._systems import resolve_systems, with_overrides

    syss = with_overrides(resolve_systems(systems), pipeline_overrides)
    names = [s.name for s in syss]
    t0 = time.perf_counter()
    records: list[dict[str, Any]] = []
    for conv in tqdm(data.conversations, desc="conversations", unit="conv", disable=not progress):
        records.extend(run_conversation(conv, syss, embedder, base_params=base_params))
    no_evidence = [
        {"sample_id": c.sample_id, "qa_index": q.index, "category": q.category}
        for c in data.conversations
        for q in c.qa
        if not q.evidence
    ]
    result: dict[str, Any] = {
        "benchmark": "locomo",
        "data": data.source,
        "counts": data.counts(),
        "embedder": getattr(embedder, "name", str(embedder)),
        "config": {
            "ks": list(KS),
            "query_delay_hours": QUERY_DELAY.total_seconds() / 3600,
            "pooled_categories": list(POOLED),
            "n_boot": n_boot,
            "category_labels": CATEGORY_LABELS,
        },
        "git_revision": git_revision(),
        **summarize_locomo(records, names, n_boot=n_boot),
        "skipped_evidence": {"count": len(data.skipped_evidence), "items": list(data.skipped_evidence)},
        "n_no_evidence": len(no_evidence),
        "questions_without_evidence": no_evidence,
        "seconds": round(time.perf_counter() - t0, 2),
    }
    if keep_questions:
        result["questions"] = records
    return result


# --------------------------------------------------------------------------- report


def _pct(v: Any) -> str:
    return "—" if v is None else f"{100.0 * float(v):.1f}"


def markdown_locomo(result: Mapping[str, Any]) -> str:
    """Markdown tables: recall@k per category and system, all_evidence@10, pooled 1–4, and the
    paired comparisons against the reference (recall@10, categories 1–4)."""
    systems = result.get("systems")
    if not isinstance(systems, Mapping) or not systems:
        raise ValueError("result: field 'systems': expected a non-empty mapping NAME → results")
    cats = list(CATEGORIES)
    n_row = next(iter(systems.values())).get("n", {})
    head = [f"cat {c} {CATEGORY_LABELS[c]} (n={n_row.get(c, '?')})" for c in cats]
    lines = [
        f"LoCoMo evidence retrieval, embedder `{result.get('embedder', '?')}`: recall@k and all_evidence@10 in % (cat "
        "5 adversarial is reported apart; 1–4 pooled).",
        "",
    ]
    lines.append("| system | k | " + " | ".join(head) + " | pooled 1–4 |")
    lines.append("|---|---:|" + "---:|" * (len(cats) + 1))
    for name, s in systems.items():
        for k in KS:
            row = s["recall@k"][str(k)]
            pooled = s.get("pooled_1_4", {}).get(f"recall@{k}")
            lines.append(
                f"| {name} | recall@{k} | " + " | ".join(_pct(row.get(c)) for c in cats) + f" | {_pct(pooled)} |"
            )
        row = s["all_evidence@10"]
        lines.append(
            f"| {name} | all@10 | "
            + " | ".join(_pct(row.get(c)) for c in cats)
            + f" | {_pct(s.get('pooled_1_4', {}).get('all_evidence@10'))} |"
        )
    comps = result.get("comparisons") or {}
    if comps:
        ref = result.get("reference", "fr-full")
        lines += [
            "",
            f"Paired bootstrap, {ref} − system on categories 1–4 (points, 95% CI):",
            "",
            "| system | Δ recall@10 | CI | Δ all_evidence@10 | CI |",
            "|---|---:|---:|---:|---:|",
        ]
        for name, c in comps.items():
            r, a = c["recall@10"], c["all_evidence@10"]
            lines.append(
                f"| {name} | {100 * r['diff']:+.1f} | [{100 * r['ci_low']:+.1f}, {100 * r['ci_high']:+.1f}] | "
                f"{100 * a['diff']:+.1f} | [{100 * a['ci_low']:+.1f}, {100 * a['ci_high']:+.1f}] |"
            )
    sk = result.get("skipped_evidence") or {}
    if sk:
        lines += [
            "",
            f"Skipped evidence ids: {sk.get('count', 0)}; questions without evidence (excluded): "
            f"{result.get('n_no_evidence', 0)}.",
        ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- CLI


def _cli(args) -> int:
    from ._inputs import make_embedder, parse_kv

    base = params_from_args(args)  # before anything runs: a bad file or override fails fast
    overrides = dict(parse_kv("--pipeline", x, strings=True) for x in args.pipeline) or None
    data = load_locomo(args.data, args.conversations)
    emb = make_embedder(args.embedder)
    result = run_locomo(
        data,
        args.systems,
        emb,
        base_params=base,
        n_boot=args.n_boot,
        keep_questions=args.questions,
        pipeline_overrides=overrides,
    )
    if base is not None:
        result["param_overrides"] = param_changes(base)
    if args.params:
        result["params_file"] = str(args.params)
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, default=str, indent=1))
    table = markdown_locomo(result)
    print(table)
    if args.markdown:
        Path(args.markdown).parent.mkdir(parents=True, exist_ok=True)
        Path(args.markdown).write_text(table)
    c = result["counts"]
    print(
        f"\n{c['conversations']} conversations, {c['qa']} questions, {len(result['systems'])} systems in "
        f"{result['seconds']} s",
        file=sys.stderr,
    )
    return 0


def register_locomo(sub) -> None:
    """Add ``fr bench locomo`` to the ``fr bench`` sub-parsers."""
    p = sub.add_parser("locomo", help="LoCoMo evidence retrieval (recall@k per QA category)")
    p.add_argument("--data", default=None, help=f"path of locomo10.json (default {DEFAULT_DATA})")
    p.add_argument(
        "--systems",
        default="fr-full,fr-plus,flat-cosine,bm25,uniform-decay",
        help="comma-separated system names (default: fr-full,fr-plus,flat-cosine,bm25,uniform-decay)",
    )
    p.add_argument("--embedder", default="minilm", help="minilm (default, cached) or hash")
    p.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    p.add_argument("--n-boot", type=int, default=10000, help="bootstrap resamples (default 10000)")
    p.add_argument("--questions", action="store_true", help="keep the per-question records in the JSON")
    p.add_argument(
        "--pipeline",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a PipelineConfig field on every FR system (repeatable)",
    )
    add_params_arguments(p)
    p.add_argument("--json", required=True, help="write the result here")
    p.add_argument("--markdown", help="also write the markdown table here")
    p.set_defaults(func=_cli)
