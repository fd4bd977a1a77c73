"""Set partitions of the 11 categories and their within-group policy variance (theory A.5).

A partition is a restricted-growth string: row r assigns category c to block r[c]. The
within-partition variance of per-entry policy vectors p_e (grouped by the block of their primary
category) is computed from per-category sufficient statistics (n_c, Σp, Σ‖p‖²), so every one of
the Bell(11) = 678,570 partitions is scored in one vectorised pass. The core itself needs only
the ontology table's own optimal partitions (the ``fr-collapsed-K`` systems and the granularity
sweep); the same functions score partitions of a corpus's entries (A.5, A.6).
"""

from __future__ import annotations

import numpy as np

from ._ontology import CATEGORY_NAMES, as_arrays


def table_policies() -> np.ndarray:
    """(C, 3) the ontology table's (α_c, λ_c, F_c): the category-mean model."""
    o = as_arrays()
    return np.stack([o.alpha, o.rates, o.floors], axis=1)


def restricted_growth_strings(n: int) -> np.ndarray:
    """All set partitions of n items as restricted-growth strings, shape (Bell(n), n), int8.

    Row r assigns item i to block r[i]; r[0] = 0 and r[i] ≤ 1 + max(r[:i]). Built one position at a
    time: each string with current maximum m spawns m + 2 children (vectorised with ``repeat``).
    """
    if n < 1:
        raise ValueError(f"n: need at least one item, got {n}")
    rgs = np.zeros((1, 1), dtype=np.int8)
    mx = np.zeros(1, dtype=np.int64)
    for _ in range(1, n):
        reps = mx + 2
        parent = np.repeat(np.arange(len(rgs)), reps)
        start = np.cumsum(reps) - reps
        value = np.arange(len(parent)) - np.repeat(start, reps)
        rgs = np.concatenate([rgs[parent], value[:, None].astype(np.int8)], axis=1)
        mx = np.maximum(mx[parent], value)
    return rgs


def partition_variances(cnt: np.ndarray, s1: np.ndarray, s2: np.ndarray, rgs: np.ndarray) -> np.ndarray:
    """V for every partition in ``rgs`` (P, n) from per-category statistics (vectorised)."""
    N = cnt.sum()
    if N <= 0:
        raise ValueError("cnt: no entries")
    P, n = rgs.shape
    G = int(rgs.max()) + 1
    flat = (np.arange(P, dtype=np.int64)[:, None] * G + rgs.astype(np.int64)).ravel()
    ng = np.bincount(flat, weights=np.tile(cnt, P), minlength=P * G)
    sq = np.zeros(P * G)
    for j in range(s1.shape[1]):
        sg = np.bincount(flat, weights=np.tile(s1[:, j], P), minlength=P * G)
        sq += sg * sg
    with np.errstate(divide="ignore", invalid="ignore"):
        between = np.where(ng > 0, sq / np.where(ng > 0, ng, 1.0), 0.0).reshape(P, G).sum(axis=1)
    return np.maximum(s2.sum() - between, 0.0) / N


def partition_blocks(rgs_row: np.ndarray) -> list[list[str]]:
    """A restricted-growth string as lists of category names."""
    return [[CATEGORY_NAMES[c] for c in np.flatnonzero(rgs_row == g)] for g in range(int(rgs_row.max()) + 1)]


def optimal_by_k(cnt: np.ndarray, s1: np.ndarray, s2: np.ndarray, rgs: np.ndarray | None = None):
    """For each k, (minimum V, index of the optimal partition) over all partitions with k blocks."""
    rgs = restricted_growth_strings(len(cnt)) if rgs is None else rgs
    v = partition_variances(cnt, s1, s2, rgs)
    k = rgs.max(axis=1).astype(np.int64) + 1
    out = {}
    for kk in range(1, len(cnt) + 1):
        idx = np.flatnonzero(k == kk)
        j = idx[np.argmin(v[idx])]
        out[kk] = (float(v[j]), int(j))
    return out, rgs, v


def optimal_table_partitions() -> dict[int, list[list[str]]]:
    """Variance-minimising partitions of the ontology table's own (α_c, λ_c, F_c) rows (every
    category weighted once) for k = 1..11 — the category-mean model, no corpus needed. Used by
    the granularity sweep and by the ``fr-collapsed-K`` systems."""
    pol = table_policies()
    best, rgs, _ = optimal_by_k(np.ones(len(pol)), pol.copy(), (pol**2).sum(axis=1))
    return {k: partition_blocks(rgs[j]) for k, (_, j) in best.items()}
