"""LoCoMo's metrics: evidence recall@k and all_evidence@k of a ranking, and the per-category
tables and paired comparisons of a run (the formulas: :mod:`frcore.bench.locomo`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .._metrics import paired_bootstrap_mean
from ._data import CATEGORIES

#: Cut-offs of recall@k and all_evidence@k.
KS: tuple[int, ...] = (1, 5, 10, 20)
#: Categories pooled for the headline figures and the comparisons (5 is reported apart).
POOLED: tuple[str, ...] = ("1", "2", "3", "4")


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
