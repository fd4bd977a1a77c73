"""LongMemEval's metrics, as the benchmark computes them (recall_any, recall_all, ndcg_any at
turn and session level), the lifecycle measures of knowledge-update questions, and the summary of
a run's logs (means, paired comparisons, derivation measures)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._metrics import paired_bootstrap_mean
from ._data import QUESTION_TYPES, LongMemEvalData, Question

#: Cut-offs of every metric (the benchmark's).
KS: tuple[int, ...] = (1, 3, 5, 10, 30, 50)
#: The benchmark's metric names, in its order.
METRICS: tuple[str, ...] = ("recall_any", "recall_all", "ndcg_any")
#: Paired comparisons: every system against this one, and the lifecycle pair below.
BASELINE = "flat-cosine"
LIFECYCLE_PAIR: tuple[str, str] = ("fr-full", "fr-lifecycle-off")
#: Per-question metrics compared by paired bootstrap (level, metric).
COMPARED: tuple[tuple[str, str], ...] = (("turn", "recall_all@10"), ("turn", "recall_any@10"), ("turn", "ndcg_any@10"))
#: The newest evidence must rank above every older one; stale-only counts in this top.
STALE_K = 10


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
