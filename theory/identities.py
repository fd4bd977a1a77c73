"""Identities, bounds and dimension arguments of appendix A as executable checks.

A.2.2 ε-relaxation and the A.2.3 entropy corollary, A.6 pairwise-variance identity, A.11
dimensional necessity, A.12 staleness decomposition, A.14 Lemma 1 (harmonic-mean decay).
Symbolic parts use SymPy (``simplify(lhs − rhs) == 0``); numeric parts use seeded NumPy draws so
every check is deterministic; kernels come from frcore itself.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import sympy

import frcore as fr

from . import depth as _depth, proofs
from ._base import ClaimResult, claim
from .diagnose import formal_diagnosis
from .verdict import FORMAL, statements

SEED = 20240605

# --------------------------------------------------------------------------- A.2.2 ε-relaxation

Scorer = Callable[[np.ndarray], np.ndarray]  # (n, d) features -> (n,) scores


def lipschitz_linear(w: np.ndarray, L: float) -> Scorer:
    """f(x) = L · w·x / ‖w‖₂: exactly L-Lipschitz in ℓ2."""
    w = np.asarray(w, dtype=np.float64)
    norm = np.linalg.norm(w)
    if not norm > 0:
        raise ValueError("w: the weight vector must be non-zero")
    u = L * w / norm
    return lambda x: np.asarray(x, dtype=np.float64) @ u


def lipschitz_mlp(layers: Sequence[np.ndarray], L: float) -> Scorer:
    """f(x) = L · W_k tanh(… tanh(W_1 x)) with every W_i divided by its spectral norm.

    tanh is 1-Lipschitz and each normalised layer has operator norm 1, so f is L-Lipschitz in ℓ2.
    The last layer must have one output row.
    """
    mats = []
    for i, w in enumerate(layers):
        w = np.asarray(w, dtype=np.float64)
        s = np.linalg.norm(w, 2)
        if not s > 0:
            raise ValueError(f"layers: layer {i} is all zeros")
        mats.append(w / s)
    if mats[-1].shape[0] != 1:
        raise ValueError(f"layers: last layer must have 1 output row, got {mats[-1].shape[0]}")

    def f(x):
        h = np.asarray(x, dtype=np.float64).T
        for w in mats[:-1]:
            h = np.tanh(w @ h)
        return L * (mats[-1] @ h)[0]

    return f


def min_adjacent_gap(scores: np.ndarray) -> float:
    """Δmin: the smallest gap between adjacent sorted scores."""
    s = np.sort(np.asarray(scores, dtype=np.float64))
    return float(np.min(np.diff(s))) if s.size > 1 else math.inf


def ranking(scores: np.ndarray) -> tuple[int, ...]:
    """Descending order of scores (stable)."""
    return tuple(int(i) for i in np.argsort(-np.asarray(scores), kind="stable"))


def intent_rankings(f: Scorer, x: np.ndarray, perturbations: np.ndarray) -> list[tuple[int, ...]]:
    """Rankings of f over features x + P_q for each intent q (perturbations: (Q, n, d))."""
    return [ranking(f(x + p)) for p in perturbations]


def mutual_information_bits(intents: Sequence, outcomes: Sequence) -> float:
    """Plug-in I(intent; outcome) in bits over equiprobable listed pairs."""
    n = len(intents)
    joint: dict = {}
    for q, r in zip(intents, outcomes):
        joint[(q, r)] = joint.get((q, r), 0) + 1
    pq: dict = {}
    pr: dict = {}
    for (q, r), c in joint.items():
        pq[q] = pq.get(q, 0) + c
        pr[r] = pr.get(r, 0) + c
    return float(sum(c / n * math.log2(c * n / (pq[q] * pr[r])) for (q, r), c in joint.items()))


def ball_perturbations(rng: np.random.Generator, shape: tuple[int, ...], eps: float) -> np.ndarray:
    """Random perturbations with every row of ℓ2 norm ≤ ε (last axis = feature dimension)."""
    p = rng.normal(size=shape)
    p /= np.linalg.norm(p, axis=-1, keepdims=True)
    return p * eps * rng.uniform(0.0, 1.0, size=shape[:-1] + (1,))


def eps_relaxation_trial(f: Scorer, x: np.ndarray, perturbations: np.ndarray, L: float, eps: float) -> dict:
    """One A.2.2 instance: margin condition 2Lε < Δmin and whether every intent ranks alike."""
    norms = np.linalg.norm(perturbations, axis=-1)
    if np.any(norms > eps * (1 + 1e-12)):
        raise ValueError(f"perturbations: norm {norms.max()} exceeds eps {eps}")
    gap = min_adjacent_gap(f(x))
    ranks = intent_rankings(f, x, perturbations)
    return {
        "delta_min": gap,
        "two_L_eps": 2 * L * eps,
        "margin_holds": 2 * L * eps < gap,
        "same_ranking": len(set(ranks)) == 1,
        "intent_information_bits": mutual_information_bits(list(range(len(ranks))), ranks),
    }


def flip_witness(w: np.ndarray, x: np.ndarray, L: float, slack: float = 1.01) -> dict:
    """Sharpness: for the linear scorer, ε = slack · Δmin / (2L) moves the closest adjacent pair
    toward each other (along ±w) and flips it — the margin condition cannot be dropped."""
    f = lipschitz_linear(w, L)
    s = f(x)
    order = np.argsort(-s, kind="stable")
    gaps = s[order[:-1]] - s[order[1:]]
    k = int(np.argmin(gaps))
    hi, lo = int(order[k]), int(order[k + 1])
    eps = slack * float(gaps[k]) / (2 * L)
    u = np.asarray(w, dtype=np.float64) / np.linalg.norm(w)
    p = np.zeros((2,) + x.shape)
    p[1, hi] -= eps * u
    p[1, lo] += eps * u
    ranks = intent_rankings(f, x, p)
    return {"eps": eps, "delta_min": float(gaps[k]), "flipped": ranks[0] != ranks[1], "pair": [hi, lo]}


def _random_scorer(rng: np.random.Generator, d: int, L: float, kind: str) -> Scorer:
    if kind == "linear":
        return lipschitz_linear(rng.normal(size=d), L)
    width = int(rng.integers(2, 9))
    return lipschitz_mlp([rng.normal(size=(width, d)), rng.normal(size=(width, width)), rng.normal(size=(1, width))], L)


@claim(
    "eps_relax",
    "A.2.2: deterministic ε-relaxation",
    "If 2Lε < Δmin, an L-Lipschitz feature-restricted scorer produces the same ranking for every "
    "intent and conveys zero intent information.",
    kind=FORMAL,
    rule=statements(
        "reproduced if, on every seeded instance meeting 2Lε < Δmin, the ranking is the same for every "
        "intent and the intent information is 0 bits",
        ("same ranking for every intent", "zero intent information"),
        core=("same ranking for every intent",),
    ),
    diagnose=formal_diagnosis,
    method="numeric",
    range="300 seeded scorers (linear and tanh MLPs), n = 2…8 items, d = 1…5 features, 2…6 intents",
)
def check_eps_relax(corpus=None, trials: int | None = None) -> ClaimResult:
    """Seeded random Lipschitz scorers (linear and spectral-normalised tanh MLPs), items and
    per-intent perturbations inside the ε-ball with 2Lε < Δmin; plus a flip just past the margin."""
    depth = _depth.current()
    trials = depth.examples(300) if trials is None else trials
    rng = np.random.default_rng(depth.seed_for(SEED))
    violations, info, checked = [], 0.0, 0
    for t in range(trials):
        n, d, q = int(rng.integers(2, 9)), int(rng.integers(1, 6)), int(rng.integers(2, 7))
        L = float(rng.uniform(0.1, 5.0))
        f = _random_scorer(rng, d, L, "linear" if t % 2 == 0 else "mlp")
        x = rng.uniform(-1, 1, size=(n, d))
        eps = float(rng.uniform(0.0, 0.999)) * min_adjacent_gap(f(x)) / (2 * L)
        r = eps_relaxation_trial(f, x, ball_perturbations(rng, (q, n, d), eps), L, eps)
        checked += r["margin_holds"]
        info = max(info, r["intent_information_bits"])
        if r["margin_holds"] and not r["same_ranking"]:
            violations.append({"trial": t, **r})
    flips = [flip_witness(rng.normal(size=3), rng.uniform(-1, 1, size=(5, 3)), 1.0) for _ in range(20)]
    # check: every instance met the margin condition, and a flip just past the margin is detected
    passed = checked == trials and all(fl["flipped"] for fl in flips)
    statement = {"same ranking for every intent": not violations, "zero intent information": info == 0.0}
    return ClaimResult(
        ours=f"{checked} margin instances, {len(violations)} ranking changes, max intent information {info} bits; "
        f"20/20 flips at ε = 1.01·Δmin/(2L): {all(fl['flipped'] for fl in flips)}",
        passed=bool(passed),
        witness={
            "statement": statement,
            "statement_detail": {
                "same ranking for every intent": f"{len(violations)} ranking changes on {checked} instances",
                "zero intent information": f"max {info} bits",
            },
            "trials": trials,
            "margin_instances": checked,
            "violations": violations[:5],
            "max_intent_information_bits": info,
            "sharpness_example": flips[0],
            "depth": depth.record(300, SEED),
            "range": f"{trials} seeded scorers (linear and tanh MLPs, seed {depth.seed_for(SEED)}), n = 2…8 items, d = "
            "1…5 features, 2…6 intents",
        },
    )


# --------------------------------------------------------------------------- A.2.3 entropy corollary


def binary_entropy(p: float) -> float:
    """h_b(p) in bits."""
    if p <= 0.0 or p >= 1.0:
        return 0.0
    return -p * math.log2(p) - (1 - p) * math.log2(1 - p)


def flip_bound(gap: float, L: float, eps: float) -> float:
    """Comparison-flip model: a pair with score gap Δ flips with probability ≤ min(1, 2Lε / Δ).

    Markov: a flip needs |δ_i − δ_j| ≥ Δ where δ is the score shift of an item under the intent;
    |δ| ≤ Lε, so E|δ_i − δ_j| ≤ 2Lε and P(|δ_i − δ_j| ≥ Δ) ≤ 2Lε / Δ.
    """
    return 1.0 if gap <= 0 else min(1.0, 2 * L * eps / gap)


def entropy_bound_bits(scores: np.ndarray, L: float, eps: float) -> float:
    """A.2.3 (our statement): I(intent; ranking) ≤ H(ranking) ≤ Σ_{i<j} h_b(min(q̄_ij, 1/2)),
    q̄_ij = :func:`flip_bound` of the pair's gap — the ranking is a function of the pairwise
    comparison bits, and each bit's entropy is at most h_b of its flip probability."""
    s = np.asarray(scores, dtype=np.float64)
    return float(
        sum(
            binary_entropy(min(flip_bound(abs(s[i] - s[j]), L, eps), 0.5))
            for i, j in itertools.combinations(range(s.size), 2)
        )
    )


def entropy_of(outcomes: Sequence) -> float:
    """Plug-in entropy in bits of a list of outcomes."""
    counts: dict = {}
    for o in outcomes:
        counts[o] = counts.get(o, 0) + 1
    n = len(outcomes)
    return float(-sum(c / n * math.log2(c / n) for c in counts.values()))


@claim(
    "entropy_corollary",
    "A.2.3: the looser stochastic entropy bound",
    "The entropy bound is only a weaker corollary requiring the additional comparison-flip model; "
    "the deterministic margin theorem needs no stochastic assumption.",
    kind=FORMAL,
    rule=statements(
        "reproduced if the entropy bound is strictly positive wherever the deterministic bound is 0 "
        "(weaker) and the flip-model bound holds on simulated ε-ball perturbations",
        ("the entropy bound is weaker than the deterministic one", "the flip-model bound holds"),
        core=("the entropy bound is weaker than the deterministic one",),
    ),
    diagnose=formal_diagnosis,
    method="numeric",
    range="60 seeded linear scorers, n = 2…5 items, 400 ε-ball draws each",
)
def check_entropy_corollary(corpus=None, trials: int = 60, draws: int = 400) -> ClaimResult:
    """Under the margin condition the deterministic bound is 0 bits while the entropy bound is
    > 0 (weaker); the flip model's bound holds on simulated ε-ball perturbations, in and out of
    the margin regime (empirical flip rates and ranking entropy stay below it)."""
    rng = np.random.default_rng(SEED + 1)
    weaker, flip_ok, entropy_ok = 0, 0, 0
    examples: list[dict[str, Any]] = []
    for t in range(trials):
        n, d = int(rng.integers(2, 6)), int(rng.integers(1, 4))
        L = float(rng.uniform(0.2, 3.0))
        f = lipschitz_linear(rng.normal(size=d), L)
        x = rng.uniform(-1, 1, size=(n, d))
        s = f(x)
        gap = min_adjacent_gap(s)
        # alternate inside and well outside the margin regime
        eps = (0.9 if t % 2 == 0 else 3.0) * gap / (2 * L)
        bound = entropy_bound_bits(s, L, eps)
        deterministic = 0.0 if 2 * L * eps < gap else None
        if deterministic is not None:
            weaker += bound > deterministic
        ranks = intent_rankings(f, x, ball_perturbations(rng, (draws, n, d), eps))
        base = ranking(s)
        pos = {i: k for k, i in enumerate(base)}
        # empirical flip rate of each pair vs its bound (3σ binomial slack)
        ok: bool | np.bool_ = True
        for i, j in itertools.combinations(range(n), 2):
            before = pos[i] < pos[j]
            rate = np.mean([(r.index(i) < r.index(j)) != before for r in ranks])
            q = flip_bound(abs(s[i] - s[j]), L, eps)
            ok &= rate <= q + 3 * math.sqrt(max(q * (1 - q), 1e-4) / draws)
        flip_ok += bool(ok)
        h = entropy_of(ranks)
        entropy_ok += h <= bound + 1e-9
        if len(examples) < 3:
            examples.append(
                {
                    "n": n,
                    "margin_holds": deterministic is not None,
                    "entropy_bound_bits": bound,
                    "empirical_ranking_entropy_bits": h,
                    "deterministic_bound_bits": deterministic,
                }
            )
    n_margin = (trials + 1) // 2
    passed = len(examples) > 0 and n_margin > 0  # check: the simulation ran on margin instances
    statement = {
        "the entropy bound is weaker than the deterministic one": weaker == n_margin,
        "the flip-model bound holds": flip_ok == trials and entropy_ok == trials,
    }
    return ClaimResult(
        ours=f"entropy bound > 0 = deterministic bound on {weaker}/{n_margin} margin instances; flip-model bound held "
        f"on {flip_ok}/{trials}, ranking entropy ≤ bound on {entropy_ok}/{trials}",
        passed=bool(passed),
        witness={
            "statement": statement,
            "bound": "I(intent; ranking) <= sum_{i<j} h_b(min(1/2, 2 L eps / |s_i - s_j|)) bits under the "
            "comparison-flip model",
            "examples": examples,
            "strictly_weaker": weaker,
            "margin_instances": n_margin,
        },
    )


# --------------------------------------------------------------------------- A.6 identity


def weighted_variance_sum(x, w):
    """Σ_i w_i (x_i − x̄_w)², x̄_w = Σ w x / Σ w (works on numbers and SymPy symbols)."""
    W = sum(w)
    xbar = sum(wi * xi for wi, xi in zip(w, x)) / W
    return sum(wi * (xi - xbar) ** 2 for wi, xi in zip(w, x))


def pairwise_variance_sum(x, w):
    """(1 / 2W) Σ_i Σ_j w_i w_j (x_i − x_j)²."""
    W = sum(w)
    return sum(wi * wj * (xi - xj) ** 2 for wi, xi in zip(w, x) for wj, xj in zip(w, x)) / (2 * W)


def merged_group_parts(groups: Sequence[Sequence[tuple]]) -> tuple:
    """Σ_i w_i (x_i − x̄)² of the merged groups, its within part Σ_g Σ_{i∈g} w_i (x_i − x̄_g)² and its
    between part (1 / 2W) Σ_g Σ_h W_g W_h (x̄_g − x̄_h)² (the identity applied to group means).

    ``groups``: per group a sequence of (x_i, w_i).
    """
    xs = [x for g in groups for x, _ in g]
    ws = [w for g in groups for _, w in g]
    total = weighted_variance_sum(xs, ws)
    within = sum(weighted_variance_sum([x for x, _ in g], [w for _, w in g]) for g in groups)
    means = [sum(w * x for x, w in g) / sum(w for _, w in g) for g in groups]
    weights = [sum(w for _, w in g) for g in groups]
    return total, within, pairwise_variance_sum(means, weights)


def a6_spot_check(rows: int = 30) -> bool:
    """Exact rational spot-check of the identity and the decomposition at seeded points (the check of
    ``a6_identity``; its proofs are :func:`theory.proofs.a6_result`'s)."""
    rng = proofs.spot_rng(2)
    ok = True
    for _ in range(rows):
        n = int(rng.integers(2, proofs.N_MAX + 1))
        x, w = proofs.rationals(rng, n, -5.0, 5.0), proofs.rationals(rng, n, 0.001, 2.0)
        ok &= weighted_variance_sum(x, w) == pairwise_variance_sum(x, w)
        cuts = sorted(set(int(c) for c in rng.integers(1, n, size=2))) if n > 2 else [1]
        bounds = [0, *cuts, n]
        groups = [list(zip(x[a:b], w[a:b])) for a, b in zip(bounds, bounds[1:]) if b > a]
        total, within, between = merged_group_parts(groups)
        ok &= total == within + between
    return bool(ok)


@claim(
    "a6_identity",
    "A.6: weighted pairwise-variance identity and the coarsening excess",
    "A weighted pairwise variance identity attributes the coarsening excess to between-category "
    "policy differences; within-category noise is an invariant floor across partitions.",
    kind=FORMAL,
    rule=proofs.A6_RULE,
    diagnose=formal_diagnosis,
    method="symbolic",
    range=proofs.A6_RANGE,
)
def check_a6(corpus=None) -> ClaimResult:
    """SymPy proofs of the identity and the merged-group decomposition for any n and grouping and
    explicitly for n, k ≤ 11 (:func:`theory.proofs.a6_result`); exact rational spot-check."""
    return proofs.a6_result(spot=a6_spot_check())


# --------------------------------------------------------------------------- A.11 dimension

K = fr.N_CATEGORIES


def category_margin_family() -> tuple[np.ndarray, np.ndarray]:
    """Per-category margin m_c(α_c) = b(P_c) − b(Q_c), affine in α_c, from frcore's blend.

    P_c is an older, more aligned edge (σ 0.9, 1000 h), Q_c a fresh, less aligned one (σ 0.6, 5 h),
    both of category c; floors and numeric rescue off so b = (1 − α)σ + α a exactly. Returns
    (intercept (K,), slope (K,)): m_c(α) = intercept_c + slope_c · α.
    """
    cfg = fr.ScoreConfig(floors=False, numeric_rescue=False, anticipation=False)
    eye = np.eye(K)
    cands = fr.make_candidates(
        sim=np.repeat([[0.9, 0.6]], K, axis=0).ravel(),
        weights=np.repeat(eye, 2, axis=0),
        ages=np.tile([[1000.0, 1000.0, 200.0], [5.0, 5.0, 2.0]], (K, 1)),
        pad_to=fr.bucket_size(2 * K),
    )
    p = fr.default_params(jnp.float64) if jax.config.read("jax_enable_x64") else fr.default_params()
    q = fr.make_query("current")
    margins = []
    for a in (0.0, 1.0):
        b = np.asarray(
            fr.score_candidates(fr.replace_params(p, alpha=np.full(K, a)), q, cands, cfg).blend, dtype=np.float64
        )[: 2 * K]
        margins.append(b[0::2] - b[1::2])
    return margins[0], margins[1] - margins[0]


def affine_residual(M: np.ndarray, b: np.ndarray, t: np.ndarray) -> float:
    """min_θ ‖M θ + b − t‖₂ (least squares)."""
    theta, *_ = np.linalg.lstsq(M, t - b, rcond=None)
    return float(np.linalg.norm(M @ theta + b - t))


def _rational(v: float) -> sympy.Rational:
    return sympy.Rational(Fraction(float(v)).limit_denominator(10**6))


def exact_unreachability(M: np.ndarray, b: np.ndarray, t: np.ndarray) -> dict:
    """SymPy certificate on the family rationalised to denominators ≤ 10⁶ (integer families are
    exact): rank M, a normal n with nᵀM = 0, and nᵀ(t − b) ≠ 0 (t is off the image)."""
    Ms = sympy.Matrix([[_rational(v) for v in row] for row in np.atleast_2d(M)])
    rank = Ms.rank()
    null = Ms.T.nullspace()
    if not null:
        return {"rank": int(rank), "normal_offset": 0.0, "unreachable": False}
    n = null[0]
    d = sympy.Matrix([_rational(ti - bi) for ti, bi in zip(t, b)])
    offset = (n.T * d)[0]
    return {"rank": int(rank), "normal_offset": float(offset), "unreachable": bool(offset != 0)}


@claim(
    "a11_dimension",
    "A.11: dimensional necessity of category-specific parameters",
    "An affine parameter family of dimension below K cannot realise generic independently "
    "perturbed category-margin targets; category-specific parameters (dimension K) can.",
    kind=FORMAL,
    rule=statements(
        "reproduced if every family of dimension < K leaves a positive residual on random targets and "
        "category-specific α (dimension K) reaches every target",
        ("dimension < K misses generic targets", "dimension K reaches every target"),
        core=("dimension < K misses generic targets", "dimension K reaches every target"),
    ),
    diagnose=formal_diagnosis,
    method="numeric",
    range="frcore's category margins; families of dimension 1, 2, 5, 10, 11; 50 seeded targets; exact rank "
    "certificates",
)
def check_a11(corpus=None, targets: int = 50) -> ClaimResult:
    """Margins from frcore's blend: global α (d = 1) and random affine families of d = 2..K−1 leave
    a positive least-squares residual on random targets (SymPy rank d < K and a normal vector
    certify it exactly); category-specific α (d = K, diagonal) reaches every target."""
    rng = np.random.default_rng(SEED + 3)
    b, slope = category_margin_family()
    families = {"global_alpha (d=1)": slope[:, None]}
    for d in (2, 5, K - 1):
        families[f"random affine (d={d})"] = rng.integers(-9, 10, size=(K, d)).astype(np.float64)
    families["category-specific alpha (d=K)"] = np.diag(slope)
    tgt = b + rng.normal(scale=0.1, size=(targets, K))
    res = {name: [affine_residual(M, b, t) for t in tgt] for name, M in families.items()}
    low = {name: float(min(r)) for name, r in res.items()}
    certs = {name: exact_unreachability(M, b, tgt[0]) for name, M in families.items()}
    deficient = [n for n in families if not n.startswith("category")]
    # check: the exact SymPy certificates agree with the least-squares residuals
    passed = (
        all(certs[n]["unreachable"] == (low[n] > 1e-6) for n in deficient)
        and certs["category-specific alpha (d=K)"]["rank"] == K
    )
    statement = {
        "dimension < K misses generic targets": all(
            low[n] > 1e-6 and certs[n]["rank"] == families[n].shape[1] for n in deficient
        ),
        "dimension K reaches every target": max(res["category-specific alpha (d=K)"]) < 1e-9,
    }
    return ClaimResult(
        ours=f"min residual over {targets} random targets: " + ", ".join(f"{n}: {v:.2e}" for n, v in low.items()),
        passed=bool(passed),
        witness={
            "statement": statement,
            "K": K,
            "margin_intercept": b.tolist(),
            "margin_slope": slope.tolist(),
            "min_residual": low,
            "max_residual_full": max(res["category-specific alpha (d=K)"]),
            "certificates": certs,
        },
    )


# --------------------------------------------------------------------------- A.12 staleness


def pass_rate(pi, p0, p1):
    """P(pass) = (1 − π) p0 + π p1 (law of total probability over contamination)."""
    return (1 - pi) * p0 + pi * p1


def predicted_gap(pi_a, pi_b, p0, p1):
    """Pass-rate advantage of a system with staleness π_a over one with π_b at shared (p0, p1):
    (π_b − π_a)(p0 − p1)."""
    return pass_rate(pi_a, p0, p1) - pass_rate(pi_b, p0, p1)


def implied_rate_gap(pass_a, pass_b, pi_a, pi_b):
    """p0 − p1 that two systems sharing (p0, p1) would need: (P_a − P_b) / (π_b − π_a)."""
    return (pass_a - pass_b) / (pi_b - pi_a)


def empirical_decomposition(contaminated: np.ndarray, passed: np.ndarray) -> tuple[Fraction, Fraction]:
    """Empirical pass rate and (1 − π̂) p̂0 + π̂ p̂1 from per-question indicators, as exact fractions."""
    z = np.asarray(contaminated, dtype=bool)
    y = np.asarray(passed, dtype=bool)
    n, n1 = z.size, int(z.sum())
    if n1 in (0, n):
        raise ValueError("contaminated: need both clean and contaminated questions")
    p0, p1 = Fraction(int(y[~z].sum()), n - n1), Fraction(int(y[z].sum()), n1)
    pi = Fraction(n1, n)
    return Fraction(int(y.sum()), n), (1 - pi) * p0 + pi * p1


@claim(
    "a12_decomposition",
    "A.12: staleness decomposition",
    "P_S(pass) = (1 − π_S) p0 + π_S p1; p0 = 0.758, p1 = 0.060, π = 0.08 vs 0.27 predict 13.3pp "
    "vs 12pp observed; equal staleness (0.155 vs 0.153) with pass rates 10.0pp apart falsifies "
    "system-invariant (p0, p1).",
    kind=FORMAL,
    rule=statements(
        "reproduced if the decomposition is an identity (SymPy), the paper's own inputs give 13.3pp when "
        "rounded to 0.1pp, and FR-Bank vs Memory-R1 imply |p0 − p1| > 1 (impossible for rates). Arithmetic on "
        "the paper's figures: nothing here is measured on our data",
        ("decomposition identity", "13.3pp from the paper's inputs", "equal staleness falsifies shared (p0, p1)"),
        core=("decomposition identity",),
    ),
    diagnose=formal_diagnosis,
    method="numeric",
    range="the paper's figures (exact decimals) and 3 simulated corpora of 5,000 questions; the identity for symbols "
    "in a12_proof",
)
def check_a12(corpus=None) -> ClaimResult:
    """SymPy identity, exact empirical identity on simulated Bernoulli data, the paper's 13.3pp,
    and the contradiction |p0 − p1| = 50 > 1 implied by FR-Bank vs Memory-R1."""
    symbolic = proofs.a12_proof()["decomposition identity"]["proved"]  # Σ_z P(z) P(pass | z), for symbols
    rng = np.random.default_rng(SEED + 4)
    sims = []
    for true_pi in (0.08, 0.155, 0.27):
        c = rng.random(5000) < true_pi
        y = np.where(c, rng.random(5000) < 0.060, rng.random(5000) < 0.758)
        emp, dec = empirical_decomposition(c, y)
        sims.append({"pi": true_pi, "empirical_pass": float(emp), "decomposed": float(dec), "exact_equal": emp == dec})
    q = lambda s: Fraction(s)  # noqa: E731  exact decimals
    gap = predicted_gap(q("0.08"), q("0.27"), q("0.758"), q("0.060"))
    implied = implied_rate_gap(q("0.769"), q("0.669"), q("0.155"), q("0.153"))
    passed = all(s["exact_equal"] for s in sims)  # check: the exact empirical identity on simulated data
    statement = {
        "decomposition identity": bool(symbolic),
        "13.3pp from the paper's inputs": round(100 * float(gap), 1) == 13.3,
        "equal staleness falsifies shared (p0, p1)": abs(implied) > 1,
    }
    return ClaimResult(
        ours=f"predicted gap {100 * float(gap):.2f}pp (paper 13.3pp, observed 12pp); FR-Bank vs Memory-R1 would need "
        f"p0 − p1 = {float(implied):.0f}, impossible for rates in [0, 1]",
        passed=bool(passed),
        witness={
            "statement": statement,
            "symbolic_identity": bool(symbolic),
            "simulated": sims,
            "predicted_gap": str(gap),
            "predicted_gap_pp": float(100 * gap),
            "observed_gap_pp": 12.0,
            "falsification": {
                "pass": [0.769, 0.669],
                "staleness": [0.155, 0.153],
                "implied_p0_minus_p1": float(implied),
                "max_possible": 1.0,
                "max_gap_pp_if_shared": 100 * 0.002,
            },
        },
    )


# --------------------------------------------------------------------------- A.14 Lemma 1


def lemma1_properties(weights: np.ndarray, params: fr.LifecycleParams | None = None) -> dict:
    """Lemma 1 on soft weights (n, K) against :func:`frcore.effective_rate` (harmonic mode).

    Returns per-row arrays: λ_eff, min / max rate over the support, the weighted arithmetic mean,
    and the weighted mean of the half-lives Σ w_c ln2 / λ_c.
    """
    p = params or fr.default_params()
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 2 or w.shape[1] != K:
        raise ValueError(f"weights: expected shape (n, {K}), got {w.shape}")
    lam = np.asarray(
        jax.vmap(lambda row: fr.effective_rate(p, row))(jnp.asarray(w, dtype=p.rates.dtype)), dtype=np.float64
    )
    rates = np.asarray(p.rates, dtype=np.float64)
    support = w > 0
    return {
        "rate": lam,
        "min": np.where(support, rates, np.inf).min(axis=1),
        "max": np.where(support, rates, -np.inf).max(axis=1),
        "arithmetic": (w * rates).sum(axis=1) / w.sum(axis=1),
        "half_life_mean": (w * (math.log(2) / rates)).sum(axis=1) / w.sum(axis=1),
    }


@claim(
    "a14_lemma1",
    "A.14 Lemma 1: harmonic-mean decay",
    "λ_eff(w) = Σ w_c / Σ (w_c / λ_c): between the smallest and largest rate, at most the weighted "
    "arithmetic mean, equal to λ_c for a one-hot w; the mixture's half-life is the weighted mean of half-lives.",
    kind=FORMAL,
    rule=statements(
        "reproduced if, through frcore's kernel on 500 seeded soft rows and every one-hot row, λ_eff lies "
        "between the smallest and largest rate, is at most the arithmetic mean, equals λ_c for one-hot w, and "
        "the half-life identity holds (numerically and in SymPy)",
        (
            "between the smallest and largest rate",
            "at most the arithmetic mean",
            "λ_c for a one-hot w",
            "half-life identity",
        ),
    ),
    diagnose=formal_diagnosis,
    method="numeric",
    range="frcore's kernel at its 11 rates: 500 seeded soft rows (supports 1…11) and the 11 one-hot rows; symbols in "
    "a14_lemma1_proof",
)
def check_a14(corpus=None, rows: int | None = None) -> ClaimResult:
    """Seeded soft weights (random supports, Dirichlet values) plus every one-hot row, through
    frcore's kernel; the half-life identity also symbolically."""
    d = _depth.current()
    rows = d.examples(500) if rows is None else rows
    rng = np.random.default_rng(d.seed_for(SEED + 5))
    w = np.zeros((rows, K))
    for i in range(rows):
        sup = rng.choice(K, size=int(rng.integers(1, K + 1)), replace=False)
        w[i, sup] = rng.dirichlet(np.ones(sup.size))
    w = np.vstack([w, np.eye(K)])
    r = lemma1_properties(w)
    rtol = 1e-5 if fr.default_params().rates.dtype == jnp.float32 else 1e-12
    lam = r["rate"]
    between = bool(np.all(lam >= r["min"] * (1 - rtol)) and np.all(lam <= r["max"] * (1 + rtol)))
    hm_am = bool(np.all(lam <= r["arithmetic"] * (1 + rtol)))
    one_hot = bool(np.allclose(lam[rows:], np.asarray(fr.default_params().rates, dtype=np.float64), rtol=rtol, atol=0))
    half = float(np.max(np.abs(math.log(2) / lam - r["half_life_mean"]) / r["half_life_mean"]))
    sym = proofs.lemma1_explicit(K)["half-life identity"]  # for K symbolic weights and rates
    gap = float(np.max(r["arithmetic"] - lam))
    passed = bool(np.all(np.isfinite(lam)))  # check: the kernel returned a finite rate for every row
    statement = {
        "between the smallest and largest rate": between,
        "at most the arithmetic mean": hm_am,
        "λ_c for a one-hot w": one_hot,
        "half-life identity": bool(half < 10 * rtol and sym),
    }
    return ClaimResult(
        ours=f"{rows} soft rows + {K} one-hot: between min/max {between}, ≤ arithmetic {hm_am}, one-hot exact "
        f"{one_hot}, half-life identity max rel. error {half:.1e}; largest AM − HM gap {gap:.2e}/h",
        passed=bool(passed),
        witness={
            "statement": statement,
            "between_min_max": between,
            "hm_le_am": hm_am,
            "one_hot": one_hot,
            "half_life_rel_error": half,
            "symbolic_half_life": bool(sym),
            "max_am_minus_hm": gap,
            "depth": d.record(500, SEED + 5),
            "range": f"frcore's kernel at its 11 rates: {rows} seeded soft rows (supports 1…11, seed "
            f"{d.seed_for(SEED + 5)}) and the 11 one-hot rows",
        },
    )
