"""σ, the similarity the pipeline ranks candidates by and hands to the score: the hybrid of
cosine and BM25, and the per-query σ scale of ``PipelineConfig(sigma_scale="max")``.

The one definition of the hybrid σ: the pipeline (forced candidates, distillation, the σ the
kernel is given), a result's explanation (``Bank.explain``) and the ledger's σ quantiles
(``experiments/ledger.py``) all call :func:`hybrid_sigma`.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np

_Sim = TypeVar("_Sim", float, np.ndarray)


def hybrid_sigma(cos: _Sim, bm25_share: _Sim, gamma: float) -> _Sim:
    """The hybrid similarity of the pipeline (our choice where the paper is silent):

    .. math:: \\sigma = (1 - \\gamma)\\,\\cos + \\gamma\\,\\mathrm{bm25} / \\max_j \\mathrm{bm25}_j

    Args:
      cos: the (lifecycle-linked) cosine clipped to [0, 1], a float or an array.
      bm25_share: BM25 / max BM25 over the query's alive rows (0 when no row matches).
      gamma: ``PipelineConfig.hybrid_weight``.

    Returns:
      σ, of the shape of ``cos`` (evaluated as ``(1 - γ)·cos + γ·share``, in that order).

    Example:
      >>> hybrid_sigma(0.5, 1.0, 0.25)
      0.625
    """
    return (1.0 - gamma) * cos + gamma * bm25_share


def scale_sigma_max(sig: np.ndarray) -> np.ndarray:
    """σ' = σ / max_j σ_j over one query's candidates (``sigma_scale="max"``); unchanged when
    the maximum is not positive (no candidate matches: σ stays 0, never NaN)."""
    top = sig.max() if sig.size else 0.0
    return sig / top if top > 0 else sig
