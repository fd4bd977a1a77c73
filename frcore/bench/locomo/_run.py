"""Running LoCoMo: one bank per conversation, one item per turn, every question asked under
every system (:func:`frcore.bench._rank.rank_history`) and scored."""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...bank import Router
from .._rank import Ask, rank_history
from ._data import CATEGORY_LABELS, Conversation, LocomoData
from ._metrics import KS, POOLED, question_scores, summarize_locomo

#: Questions are asked this long after the last session's date (our choice: "just after").
QUERY_DELAY = _dt.timedelta(hours=1)


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
    router = Router(embedder)
    at = query_time(conv)
    prefix = f"{conv.sample_id}:"
    questions = [q for q in conv.qa if q.evidence]
    q_vecs = np.asarray(embedder.embed([q.question for q in questions])) if questions else None
    results = rank_history(
        turn_records(conv, router, embedder),
        systems,
        [Ask(q.question, at) for q in questions],
        embedder,
        query_vecs=q_vecs,
        k=k,
        base_params=base_params,
        router=router,
        name=conv.sample_id,
        workdir=workdir,
    )
    out = []
    for qi, q in enumerate(questions):
        for s in systems:
            ids = results[qi, s.name].ids
            ranked = [i[len(prefix) :] if i.startswith(prefix) else i for i in ids]
            out.append(
                {
                    "system": s.name,
                    "sample_id": conv.sample_id,
                    "qa_index": q.index,
                    "category": q.category,
                    "evidence": list(q.evidence),
                    "ranked": ranked,
                    "scores": question_scores(ranked, q.evidence),
                }
            )
    return out


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

    from .._runner import git_revision
    from .._systems import resolve_systems, with_overrides

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
