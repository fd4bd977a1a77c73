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
from collections.abc import Callable, Sequence

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
    values = draw(
        st.lists(st.one_of(finite(-10.0, 10.0), st.sampled_from([0.0, 1.0])), min_size=len(uniq), max_size=len(uniq))
    )
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


# --------------------------------------------------------------------------- histories (sufficiency search)

#: σ values the search visits besides uniform draws: the ends, and the score's thresholds
#: (numeric rescue 0.85, semantic floor 0.95) on both sides.
SIGMA_SPECIALS = (0.0, 0.5, 0.8499, 0.85, 0.9499, 0.95, 1.0)
#: Confidences besides uniform draws: hard (≥ 0.7) and soft (< 0.7) on both sides of the threshold.
CONFIDENCE_SPECIALS = (1.0, 0.9, 0.7, 0.6999, 0.4)
#: Event times (hours from the query) besides uniform draws: far and near past, just past, just
#: ahead, inside and beyond the 168 h anticipation window.
EVENT_SPECIALS = (-2000.0, -168.0, -24.0, -0.5, 0.5, 24.0, 167.0, 169.0, 2000.0)
LINK_KINDS = ("supersedes", "contradicts", "tentative_for")


def _pick(specials: Sequence[float], lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.one_of(st.sampled_from(specials), finite(lo, hi))


def _on_grid(hours: float) -> float:
    """Times on a 0.001 h (3.6 s) grid: FR-Bank keeps whole microseconds, so every time the
    search draws is one the bank represents exactly (equal stays equal, distinct stays distinct)."""
    return round(float(hours), 3)


@st.composite
def _edge_fields(draw, eid: str, age: float, slot: str | None) -> witnesses.Edge:
    cat = draw(st.sampled_from(fr.CATEGORY_NAMES))
    weights = None
    if draw(st.integers(0, 2)) == 0:  # soft membership: a primary and a second category
        other = draw(st.sampled_from([c for c in fr.CATEGORY_NAMES if c != cat]))
        w = draw(finite(0.55, 0.95))
        weights = ((cat, w), (other, 1.0 - w))
    h = draw(st.one_of(st.none(), st.none(), _pick(EVENT_SPECIALS, -3000.0, 3000.0).map(_on_grid)))
    return witnesses.Edge(
        id=eid,
        sim=draw(_pick(SIGMA_SPECIALS, 0.0, 1.0)),
        ages=(_on_grid(age), _on_grid(age * draw(finite(0.0, 1.0))), draw(finite(0.0, 500.0))),
        category=cat,
        slot=slot,
        hours_to_event=h,
        retracted=draw(st.integers(0, 7)) == 0,
        confidence=draw(_pick(CONFIDENCE_SPECIALS, 0.0, 1.0)),
        numeric=draw(st.integers(0, 3)) == 0,
        weights=weights,
    )


@st.composite
def histories(
    draw, max_slots: int = 3, max_chain: int = 4, max_distractors: int = 2
) -> tuple[str, tuple[witnesses.Edge, ...]]:
    """A random history and query intent for the sufficiency search: 1…3 slots, each a
    supersession chain of 1…4 statements (gaps of 0 h allowed: simultaneous statements) with hard
    and soft confidences; distractors without a slot; retractions (as transitions, and as a
    retraction statement linking ``retracts`` to its target); explicit ``supersedes`` /
    ``contradicts`` / ``tentative_for`` links to an earlier statement of another slot; event times
    before and after the query; numeric facts; soft category memberships; σ over [0, 1] and ages
    over 0…8,000 h. Returns (intent, edges), at most 15 edges."""
    edges: list[witnesses.Edge] = []
    for s in range(draw(st.integers(1, max_slots))):
        n = draw(st.integers(1, max_chain))
        newest = draw(_pick((0.0, 1.0, 300.0), 0.0, 3000.0))
        gaps = [0.0 if draw(st.integers(0, 5)) == 0 else draw(finite(0.0, 1500.0)) for _ in range(n - 1)]
        ages = [newest + sum(gaps[k:]) for k in range(n)]  # oldest first
        edges += [draw(_edge_fields(f"s{s}v{k}", ages[k], f"slot:{s}")) for k in range(n)]
    for d in range(draw(st.integers(0, max_distractors))):
        edges.append(draw(_edge_fields(f"d{d}", draw(finite(0.0, 3000.0)), None)))
    if len(edges) > 1 and draw(st.integers(0, 3)) == 0:  # explicit links to an earlier statement of another slot
        src = draw(st.sampled_from(range(len(edges))))
        targets = [j for j, e in enumerate(edges) if e.slot != edges[src].slot and e.ages[0] >= edges[src].ages[0]]
        if targets:
            j = draw(st.sampled_from(targets))
            kind = draw(st.sampled_from(LINK_KINDS))
            e = edges[src]
            edges[src] = witnesses.Edge(**{**e.__dict__, "links": ((kind, edges[j].id),)})
    if draw(st.integers(0, 4)) == 0:  # a retraction statement ("forget that") targeting an earlier edge
        j = draw(st.sampled_from(range(len(edges))))
        age = draw(finite(0.0, edges[j].ages[0]))
        r = draw(_edge_fields("r0", age, None))
        edges.append(witnesses.Edge(**{**r.__dict__, "links": (("retracts", edges[j].id),), "retracted": False}))
    intent = draw(st.sampled_from(fr.INTENT_NAMES))
    order = draw(st.permutations(range(len(edges))))  # input order is not the time order
    return intent, tuple(edges[i] for i in order)
