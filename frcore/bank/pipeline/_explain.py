"""A result's score explained from its terms: σ and its sources, activation, blend, and the additive
terms whose sum is the total (``Bank.explain``, ``fr bank explain``, MCP ``explain``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..._packed import ROW_START
from ..._types import score_summands
from ._config import PipelineConfig, Retrieval
from ._sigma import hybrid_sigma


def explain_results(
    results, r: Retrieval, config: PipelineConfig, snap, related, cosine: np.ndarray
) -> tuple[dict[str, Any], ...]:
    """``results`` of one query, each with its :func:`explanation`: the σ the kernel saw is read
    from the scored (packed) candidates, and a linked σ names the related edge whose cosine it is."""
    packed = r.packed_candidates
    position = {int(row): i for i, row in enumerate(r.rows.tolist())} if r.rows is not None else {}
    src, dst = related if related is not None else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    out = []
    for res in results:
        t = res["terms"]
        row = snap.index[res["id"]]
        kernel_sigma = None
        if packed is not None and row in position:
            kernel_sigma = float(packed[ROW_START["sim"], position[row]])
        linked_from = None
        if "sim_linked" in t and t["sim_linked"] > t["sim_cosine"]:
            # the pipeline's linked σ is the largest (propagation x) cosine over the row's related edges
            sources = dst[src == row]
            if sources.size:
                cos = np.nan_to_num(np.clip(np.asarray(cosine, dtype=np.float64)[sources], 0.0, 1.0), nan=-1.0)
                linked_from = str(snap.ids[int(sources[int(np.argmax(cos))])])
        out.append(res | {"explanation": explanation(t, config, kernel_sigma, linked_from, res["score"])})
    return tuple(out)


def explanation(
    terms: Mapping[str, float],
    config: PipelineConfig,
    kernel_sigma: float | None = None,
    linked_from: str | None = None,
    score: float | None = None,
) -> dict[str, Any]:
    """One result's score, explained from its ``terms`` (as :meth:`Bank.query` returns them).

    ``sigma``: the cosine, the lifecycle-linked cosine (and the edge it came from), the BM25
    share, the hybrid σ = (1 − γ)·linked + γ·bm25 they make, its scale and the σ the kernel saw;
    ``activation`` (with ``rate`` and ``age``) and ``blend``; ``summands``: the additive terms
    of :data:`frcore._types.SCORE_SUMMANDS` by name, in the kernel's order, whose sum is
    ``total`` (exactly, up to the float32 rounding of the kernel). A flat ranker (cosine, BM25)
    has no kernel terms: its explanation is the similarity it ranks by.
    """
    if "total" not in terms:
        return {"ranker": config.ranker, "summands": dict(terms), "total": score}
    g = config.hybrid_weight
    return {
        "sigma": {
            "cosine": terms["sim_cosine"],
            "linked": terms["sim_linked"],
            "linked_from": linked_from,
            "bm25": terms["sim_bm25"],
            "hybrid_weight": g,
            "hybrid": hybrid_sigma(terms["sim_linked"], terms["sim_bm25"], g),
            "scale": config.sigma_scale,
            "kernel": kernel_sigma,
            # FR-Bank's retrieval for raw conversation: the σ a neighbour gave, the time window's factor
            "context": terms.get("sigma_context"),
            "window": terms.get("sigma_window"),
            "time_order": terms.get("time_order"),
        },
        "activation": terms["activation"],
        "rate": terms["rate"],
        "age": terms["age"],
        "blend": terms["blend"],
        "summands": dict(score_summands(terms)),
        "total": terms["total"],
    }
