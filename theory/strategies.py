"""Hypothesis strategies for the theory checks: scorers, rankers, witnesses, weights.

Scorers of restricted views are per-candidate functions f(intent, edge view) -> float (see
:func:`theory.witnesses.pointwise_ranker`): random monotone maps of (σ, Δt), random small NumPy
MLPs over a numeric encoding of the view, and arbitrary lookup tables keyed by the exact view.
Listwise rankers are arbitrary tables from a whole restricted view to a top-1 index. Lipschitz
scorers have a known constant L (A.2.2).
"""

from __future__ import annotations

import math
import zlib
from typing import Callable, Sequence

import numpy as np
from hypothesis import strategies as st

import frcore as fr

from . import identities, witnesses

K = fr.N_CATEGORIES
EdgeScorer = Callable[[str, tuple], float]


def finite(lo: float, hi: float) -> st.SearchStrategy[float]:
    """Bounded finite floats."""
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def encode_edge_view(intent: str, edge_view: tuple) -> np.ndarray:
    """Numeric encoding of (intent, restricted edge view): σ, log1p of the three ages, then for each
    basis component present a code (category index, slot hash, state index, event hours and
    flag), −1 where absent; intent index last. A function of the view only."""
    v = dict(edge_view)
    cat = fr.category_index(v["c"]) / K if "c" in v else -1.0
    slot = (zlib.crc32(v["kappa"].encode()) % 1000) / 1000 if "kappa" in v else -1.0
    state = fr.state_index(v["xi"]) / 4.0 if "xi" in v else -1.0
    h = v.get("h")
    has_h = 1.0 if h is not None else (0.0 if "h" in v else -1.0)
    hv = math.copysign(math.log1p(abs(h)), h) if h is not None else 0.0
    ages = [math.log1p(a) for a in v["dt"]]
    return np.array([v["sigma"], *ages, cat, slot, float(state), hv, has_h, fr.intent_index(intent)], dtype=np.float64)


N_FEATURES = 10


@st.composite
def monotone_scorers(draw) -> EdgeScorer:
    """f = Σ_j a_j σ^{p_j} − Σ_j b_j log1p(Δt_j)^{q_j} (a, b ≥ 0): increasing in σ, decreasing in
    every age; with probability 1/2 the sign of the age part is flipped (prefers older)."""
    a = draw(st.lists(finite(0.0, 5.0), min_size=1, max_size=3))
    p = draw(st.lists(finite(0.2, 4.0), min_size=len(a), max_size=len(a)))
    b = draw(st.lists(finite(0.0, 2.0), min_size=3, max_size=3))
    q = draw(st.lists(finite(0.2, 3.0), min_size=3, max_size=3))
    sign = draw(st.sampled_from([1.0, -1.0]))

    def f(intent: str, ev: tuple) -> float:
        v = dict(ev)
        s = sum(ai * v["sigma"] ** pi for ai, pi in zip(a, p))
        t = sum(bi * math.log1p(ai) ** qi for bi, ai, qi in zip(b, v["dt"], q))
        return s - sign * t

    return f


@st.composite
def mlp_scorers(draw, width: int | None = None) -> EdgeScorer:
    """A random two-layer tanh MLP over :func:`encode_edge_view` (seeded NumPy weights)."""
    seed = draw(st.integers(0, 2**32 - 1))
    h = width or draw(st.integers(1, 16))
    scale = draw(finite(0.1, 10.0))
    rng = np.random.default_rng(seed)
    w1, b1 = rng.normal(size=(h, N_FEATURES)) * scale, rng.normal(size=h)
    w2 = rng.normal(size=h)

    def f(intent: str, ev: tuple) -> float:
        return float(w2 @ np.tanh(w1 @ encode_edge_view(intent, ev) + b1))

    return f


@st.composite
def lookup_table_scorers(draw, keys: Sequence[tuple]) -> EdgeScorer:
    """An arbitrary table over the given (intent, edge view) keys (ties allowed); unseen keys → 0."""
    uniq = list(dict.fromkeys(keys))
    values = draw(st.lists(st.one_of(finite(-10.0, 10.0), st.sampled_from([0.0, 1.0])), min_size=len(uniq), max_size=len(uniq)))
    table = dict(zip(uniq, values))
    return lambda intent, ev: table.get((intent, ev), 0.0)


def edge_keys(tasks: Sequence[witnesses.Task], components) -> list[tuple]:
    """Every (intent, edge view) a restricted system sees on ``tasks``."""
    keys = []
    for t in tasks:
        intent, edges = witnesses.restricted_view(t, components)
        keys += [(intent, ev) for ev in edges]
    return keys


def edge_scorers(keys: Sequence[tuple]) -> st.SearchStrategy[EdgeScorer]:
    """Monotone maps, MLPs and lookup tables."""
    return st.one_of(monotone_scorers(), mlp_scorers(), lookup_table_scorers(keys))


@st.composite
def listwise_rankers(draw, views: Sequence[tuple]) -> witnesses.Ranker:
    """An arbitrary deterministic ranker: a table from each whole view to its top-1 index."""
    uniq = list(dict.fromkeys(views))
    tops = [draw(st.integers(0, len(v[1]) - 1)) for v in uniq]
    table = dict(zip(uniq, tops))
    return lambda view: table[view]


@st.composite
def thm1_pairs(draw) -> tuple[witnesses.Task, witnesses.Task]:
    """Random Theorem 1 witnesses: A more aligned by ≥ 0.1 and older by ≤ 20 h (so that in H2 the
    more aligned A is the right answer: 0.8 Δσ ≥ 0.08 > 0.2 (1 − e^{−0.1}) for PREFERENCES)."""
    sim_b = draw(finite(0.05, 0.8))
    sim_a = draw(finite(sim_b + 0.1, min(sim_b + 0.3, 0.94)))
    age_b = draw(finite(0.0, 2000.0))
    gap = draw(finite(0.5, 20.0))
    sess_b = draw(finite(0.0, age_b))
    msgs_b = draw(finite(0.0, 400.0))
    return witnesses.thm1_histories(
        sim_a=sim_a,
        sim_b=sim_b,
        ages_a=(age_b + gap, sess_b + gap, msgs_b + gap),
        ages_b=(age_b, sess_b, msgs_b),
    )


@st.composite
def lipschitz_scorers(draw, d: int) -> tuple[identities.Scorer, float, dict]:
    """(f, L, description): a linear map normalised to ‖w‖ = L or a spectral-normalised tanh MLP."""
    L = draw(finite(0.05, 10.0))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    if draw(st.booleans()):
        return identities.lipschitz_linear(rng.normal(size=d) + 1e-3, L), L, {"kind": "linear", "seed": seed, "L": L}
    width = draw(st.integers(1, 8))
    layers = [rng.normal(size=(width, d)), rng.normal(size=(width, width)), rng.normal(size=(1, width))]
    return identities.lipschitz_mlp(layers, L), L, {"kind": "mlp", "seed": seed, "L": L, "width": width}


@st.composite
def soft_weights(draw) -> np.ndarray:
    """One row of K soft category weights ≥ 0 summing to 1 (random support; one-hot included)."""
    support = draw(st.lists(st.integers(0, K - 1), min_size=1, max_size=K, unique=True))
    vals = draw(st.lists(finite(0.01, 1.0), min_size=len(support), max_size=len(support)))
    w = np.zeros(K)
    w[support] = vals
    return w / w.sum()


@st.composite
def weighted_samples(draw, min_size: int = 2, max_size: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """(x, w): values and positive weights for the A.6 identity."""
    n = draw(st.integers(min_size, max_size))
    x = np.array(draw(st.lists(finite(-100.0, 100.0), min_size=n, max_size=n)))
    w = np.array(draw(st.lists(finite(1e-3, 10.0), min_size=n, max_size=n)))
    return x, w
