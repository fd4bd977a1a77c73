"""Variance-minimising partitions of the 11 categories (A.5) and the partition gap (A.6).

**Policy vector of an entry** (our exact definition of the paper's "its α, λ, F under soft
membership"): for a fact entry e with soft weights w_e,

.. math:: p_e = \\big(\\textstyle\\sum_c w_{ec}\\alpha_c,\\ \\lambda_{\\text{eff}}(w_e),\\ \\sum_c w_{ec} F_c\\big),
   \\qquad \\lambda_{\\text{eff}}(w) = 1 / \\textstyle\\sum_c (w_c/\\lambda_c)

(the soft-weighted blend weight and floor, and the harmonic-mean rate of Lemma 1), in raw units
(so α and F dominate, as the paper notes). Entries = the corpus's unique **fact** edges (the bank's
extracted entries; filler turns are not extracted). A partition groups categories; an entry
belongs to the group of its primary category. **Within-partition policy variance**:

.. math:: V(\\mathcal G) = \\frac1N \\sum_{g\\in\\mathcal G} \\sum_{e\\in g} \\lVert p_e - \\bar p_g \\rVert^2

behavioral = 11 singletons, cognitive = the 3 cognitive types, uniform = 1 group. The exact
optimum for each k enumerates all set partitions of the 11 categories (Bell(11) = 678,570) as
restricted-growth strings, using per-category sufficient statistics (n_c, Σp, Σ‖p‖²).
"""

from __future__ import annotations

import numpy as np

from frcore import CATEGORY_NAMES, N_CATEGORIES, as_arrays


def policy_vectors(weights: np.ndarray) -> np.ndarray:
    """(N, 3) policy vectors (α, λ_eff, F) of entries with soft weights ``weights`` (N, C)."""
    o = as_arrays()
    w = np.asarray(weights, dtype=np.float64)
    w = w / w.sum(axis=1, keepdims=True)
    return np.stack([w @ o.alpha, 1.0 / (w @ (1.0 / o.rates)), w @ o.floors], axis=1)


def table_policies() -> np.ndarray:
    """(C, 3) the ontology table's (α_c, λ_c, F_c): the category-mean model."""
    o = as_arrays()
    return np.stack([o.alpha, o.rates, o.floors], axis=1)


def category_stats(policy: np.ndarray, primary: np.ndarray, n: int = N_CATEGORIES):
    """Per category: count n_c, Σ p (n, 3), Σ ‖p‖² (n,)."""
    primary = np.asarray(primary, dtype=np.int64)
    cnt = np.bincount(primary, minlength=n).astype(np.float64)
    s1 = np.zeros((n, policy.shape[1]))
    np.add.at(s1, primary, policy)
    s2 = np.bincount(primary, weights=(policy**2).sum(axis=1), minlength=n)
    return cnt, s1, s2


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


def labels_variance(policy: np.ndarray, groups: np.ndarray) -> float:
    """V of a grouping given per-entry group labels (direct definition; a test oracle too)."""
    v = 0.0
    for g in np.unique(groups):
        p = policy[groups == g]
        v += ((p - p.mean(axis=0)) ** 2).sum()
    return float(v / len(policy))


def blocks(rgs_row: np.ndarray) -> list[list[str]]:
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
    return {k: blocks(rgs[j]) for k, (_, j) in best.items()}


def entry_policies(corpus) -> tuple[np.ndarray, np.ndarray]:
    """Policy vectors and primary categories of the corpus's unique fact entries."""
    e = corpus.entries()
    w = e["weights"][e["is_fact"]]
    if len(w) == 0:
        raise ValueError("corpus: no fact entries")
    return policy_vectors(w), np.argmax(w, axis=1)


def optimal_partitions(corpus) -> dict[int, list[list[str]]]:
    """The variance-minimising partition of the 11 categories for every k = 1..11 (A.5)."""
    policy, primary = entry_policies(corpus)
    best, rgs, _ = optimal_by_k(*category_stats(policy, primary))
    return {k: blocks(rgs[j]) for k, (_, j) in best.items()}


def grouped(labels: np.ndarray, primary: np.ndarray) -> np.ndarray:
    """Per-entry group of a category labelling (labels[c] = group of category c)."""
    return np.asarray(labels)[primary]


def pairwise_excess(cnt: np.ndarray, means: np.ndarray, labels: np.ndarray) -> float:
    """Weighted pairwise identity (A.6): merging categories into groups adds

    .. math:: \\Delta V = \\frac1N \\sum_g \\frac{1}{n_g} \\sum_{c<c'\\in g} n_c n_{c'} \\lVert \\mu_c-\\mu_{c'}\\rVert^2

    to the within-category variance (law of total variance written pairwise)."""
    N = cnt.sum()
    out = 0.0
    for g in np.unique(labels):
        cs = np.flatnonzero((labels == g) & (cnt > 0))
        ng = cnt[cs].sum()
        for i, c in enumerate(cs):
            for d in cs[i + 1 :]:
                out += cnt[c] * cnt[d] * ((means[c] - means[d]) ** 2).sum() / ng
    return float(out / N)
