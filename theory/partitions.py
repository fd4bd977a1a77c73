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
restricted-growth strings, using per-category sufficient statistics (n_c, Σp, Σ‖p‖²). That
corpus-free machinery (restricted-growth strings, partition variances, the ontology table's own
optimal partitions) is :mod:`frcore`'s and is re-exported here; this module adds the corpus-level
policy vectors, statistics and the A.6 identity.
"""

from __future__ import annotations

import numpy as np

# The corpus-free partition machinery is the core's (its fr-collapsed-K systems use it); re-exported.
from frcore import (
    N_CATEGORIES,
    as_arrays,
    optimal_by_k as optimal_by_k,
    optimal_table_partitions as optimal_table_partitions,
    partition_blocks as blocks,
    partition_variances as partition_variances,
    restricted_growth_strings as restricted_growth_strings,
    table_policies as table_policies,
)


def policy_vectors(weights: np.ndarray) -> np.ndarray:
    """(N, 3) policy vectors (α, λ_eff, F) of entries with soft weights ``weights`` (N, C)."""
    o = as_arrays()
    w = np.asarray(weights, dtype=np.float64)
    w = w / w.sum(axis=1, keepdims=True)
    return np.stack([w @ o.alpha, 1.0 / (w @ (1.0 / o.rates)), w @ o.floors], axis=1)


def category_stats(policy: np.ndarray, primary: np.ndarray, n: int = N_CATEGORIES):
    """Per category: count n_c, Σ p (n, 3), Σ ‖p‖² (n,)."""
    primary = np.asarray(primary, dtype=np.int64)
    cnt = np.bincount(primary, minlength=n).astype(np.float64)
    s1 = np.zeros((n, policy.shape[1]))
    np.add.at(s1, primary, policy)
    s2 = np.bincount(primary, weights=(policy**2).sum(axis=1), minlength=n)
    return cnt, s1, s2


def labels_variance(policy: np.ndarray, groups: np.ndarray) -> float:
    """V of a grouping given per-entry group labels (direct definition; a test oracle too)."""
    v = 0.0
    for g in np.unique(groups):
        p = policy[groups == g]
        v += ((p - p.mean(axis=0)) ** 2).sum()
    return float(v / len(policy))


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

    .. math::

        \\Delta V = \\frac1N \\sum_g \\frac{1}{n_g} \\sum_{c<c'\\in g} n_c n_{c'} \\lVert \\mu_c-\\mu_{c'}\\rVert^2

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
