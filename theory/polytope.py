"""Preservation / suppression requirements as linear programs in α (A.7.1, A.10, A.15), with cvxpy.

**Requirement pairs** (our construction from a corpus, :func:`requirement_pairs`). For a question
with support edge s and a competing edge x, the blend must order them with a margin m:

.. math:: b_s - b_x \\ge m, \\qquad b_e = (1-\\alpha_{c(e)})\\,\\sigma_e + \\alpha_{c(e)}\\,a_e

(the blend of SPEC §3 without floors/rescue; a = frcore's activation at default parameters,
c(e) the primary category). Competitors: every gold ``wrong`` edge, plus, per support edge, its
*nearest newer distractor* (the non-gold candidate said after s with the highest σ). A pair is
a **preservation** requirement when x is newer than s (the older s must stay above it: activation
works against s) and a **suppression** requirement otherwise (the stale x must be pushed below).

Under one **global α** a pair is ε + α(Δa − ε) ≥ m with ε = σ_s − σ_x, Δa = a_s − a_x: an
interval [lo, hi] ∩ [0, 1]. Under **category-specific α** it is the linear row
ε + α_{c(s)}(a_s − σ_s) − α_{c(x)}(a_x − σ_x) ≥ m over α ∈ [0, 1]^11.

Infeasibility is proved by a **Farkas certificate**: for A α ≤ c with α ∈ [0, 1]^n, any y ≥ 0
with yᵀc + ‖yᵀA‖₁ < 0 shows no α exists (yᵀAα ≤ ‖yᵀA‖₁ for |α_j| ≤ 1); :func:`check_farkas`
re-checks it with NumPy — a solver status alone proves nothing. Feasibility is shown by the
max-margin point (Chebyshev-centre style: maximise the smallest normalised slack t), re-checked
by :func:`check_point`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import cvxpy as cp
import numpy as np

from frcore import N_CATEGORIES

#: Our choice: blend-level margin m a requirement must clear (b_s − b_x ≥ m).
DEFAULT_MARGIN = 1e-3
#: Interval gaps at or below this count as feasible (no certificate can verify a smaller gap).
GAP_TOL = 1e-9
PRESERVATION, SUPPRESSION = 0, 1
#: Clarabel (interior point, quiet); every answer is re-checked with NumPy anyway.
_SOLVER = "CLARABEL"


@dataclass(frozen=True)
class Pairs:
    """Requirement pairs (one row each): support edge s must beat competitor x."""

    kind: np.ndarray  # PRESERVATION / SUPPRESSION
    question: np.ndarray  # question row in the corpus
    s: np.ndarray  # candidate index of the support edge
    x: np.ndarray  # candidate index of the competitor
    gold: np.ndarray  # x is a gold ``wrong`` edge (else the nearest newer distractor)
    sim_s: np.ndarray
    sim_x: np.ndarray
    act_s: np.ndarray
    act_x: np.ndarray
    cat_s: np.ndarray  # primary category of s
    cat_x: np.ndarray  # primary category of x

    def __len__(self) -> int:
        return int(self.kind.shape[0])

    def subset(self, mask: np.ndarray) -> Pairs:
        return Pairs(*(getattr(self, f)[mask] for f in self.__dataclass_fields__))

    @property
    def eps(self) -> np.ndarray:
        """σ gap ε = σ_s − σ_x."""
        return self.sim_s - self.sim_x

    @property
    def d_act(self) -> np.ndarray:
        """Activation gap Δa = a_s − a_x."""
        return self.act_s - self.act_x


def requirement_pairs(corpus, activation: np.ndarray | None = None, *, distractors: bool = True) -> Pairs:
    """All requirement pairs of a corpus (see the module docstring)."""
    act = corpus.activation() if activation is None else np.asarray(activation, dtype=np.float64)
    prim = corpus.primary
    rows: list[tuple[int, int, int, int, bool]] = []
    for b in range(corpus.n_questions):
        sup = np.flatnonzero(corpus.support[b])
        wrong = np.flatnonzero(corpus.wrong[b])
        other = corpus.valid[b] & ~corpus.support[b] & ~corpus.wrong[b]
        t = corpus.said_at[b]
        for s in sup:
            for x in wrong:
                rows.append((PRESERVATION if t[x] > t[s] else SUPPRESSION, b, int(s), int(x), True))
            if distractors:
                newer = np.flatnonzero(other & (t > t[s]))
                if newer.size:
                    rows.append((PRESERVATION, b, int(s), int(newer[np.argmax(corpus.sim[b, newer])]), False))
    if not rows:
        z = np.zeros(0)
        zi = np.zeros(0, dtype=np.int64)
        return Pairs(zi, zi, zi, zi, z.astype(bool), z, z, z, z, zi, zi)
    r = np.array(rows, dtype=np.int64)
    qb, qs, qx = r[:, 1], r[:, 2], r[:, 3]
    return Pairs(
        r[:, 0],
        qb,
        qs,
        qx,
        r[:, 4].astype(bool),
        corpus.sim[qb, qs],
        corpus.sim[qb, qx],
        act[qb, qs],
        act[qb, qx],
        prim[qb, qs],
        prim[qb, qx],
    )


_PAIRS_CACHE: dict[int, tuple[object, dict]] = {}


def corpus_pairs(corpus) -> dict:
    """``{"act", "pairs"}``: the corpus's activation and its :func:`requirement_pairs`, computed
    once per corpus (the corpus is immutable) for the claims and diagnoses that share them."""
    hit = _PAIRS_CACHE.get(id(corpus))
    if hit is None or hit[0] is not corpus:
        act = corpus.activation()
        hit = (corpus, {"act": act, "pairs": requirement_pairs(corpus, act)})
        if len(_PAIRS_CACHE) >= 4:
            _PAIRS_CACHE.clear()
        _PAIRS_CACHE[id(corpus)] = hit
    return hit[1]


# --------------------------------------------------------------------------- global α


def global_alpha_rows(pairs: Pairs, margin: float = DEFAULT_MARGIN) -> tuple[np.ndarray, np.ndarray]:
    """Each pair as a row a α ≤ c of the global-α system: (ε − Δa) α ≤ ε − m, normalised so
    max(|a|, |c|) = 1 (an equivalent system with O(1) coefficients)."""
    a = pairs.eps - pairs.d_act
    c = pairs.eps - margin
    scale = np.maximum(np.maximum(np.abs(a), np.abs(c)), 1e-300)
    return a / scale, c / scale


def alpha_intervals(pairs: Pairs, margin: float = DEFAULT_MARGIN) -> tuple[np.ndarray, np.ndarray]:
    """Per pair, the interval [lo, hi] ⊆ [0, 1] of global α meeting it (lo > hi: none)."""
    a, c = global_alpha_rows(pairs, margin)
    lo = np.zeros(len(pairs))
    hi = np.ones(len(pairs))
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = c / a
    pos, neg, flat = a > 0, a < 0, a == 0
    hi[pos] = np.minimum(1.0, bound[pos])
    lo[neg] = np.maximum(0.0, bound[neg])
    lo[flat & (c < 0)] = np.inf  # constant row 0 ≤ c violated
    return lo, hi


def required_alpha(pairs: Pairs) -> np.ndarray:
    """Smallest α with b_s(α) ≥ b_x(α) (margin 0) for pairs misordered by σ (ε < 0):
    α = −ε / (Δa − ε); +inf if the activation also misorders them (Δa ≤ 0); 0 if ε ≥ 0."""
    eps, d = pairs.eps, pairs.d_act
    out = np.zeros(len(pairs))
    bad = eps < 0
    with np.errstate(divide="ignore", invalid="ignore"):
        req = -eps / (d - eps)
    out[bad] = np.where(d[bad] > 0, req[bad], np.inf)
    return out


def cross_pair_infeasible(pairs: Pairs, margin: float = DEFAULT_MARGIN) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cross-pairs (one preservation x one suppression pair, each satisfiable alone by some global
    α) and whether each is jointly infeasible. Returns (P index, S index, infeasible) arrays."""
    lo, hi = alpha_intervals(pairs, margin)
    alone = lo <= hi
    P = np.flatnonzero(alone & (pairs.kind == PRESERVATION))
    S = np.flatnonzero(alone & (pairs.kind == SUPPRESSION))
    grid_p, grid_s = np.meshgrid(P, S, indexing="ij")
    pi, si = grid_p.ravel(), grid_s.ravel()
    infeasible = np.maximum(lo[pi], lo[si]) > np.minimum(hi[pi], hi[si]) + GAP_TOL
    return pi, si, infeasible


# --------------------------------------------------------------------------- Farkas LP


@functools.lru_cache(maxsize=32)
def _farkas_problem(rows: int, n: int):
    """min cᵀy s.t. y ≥ 0, Σy = 1, Aᵀy = 0 — a ``cp.Parameter`` problem, built once per shape."""
    A = cp.Parameter((rows, n))
    c = cp.Parameter(rows)
    y = cp.Variable(rows)
    prob = cp.Problem(cp.Minimize(c @ y), [y >= 0, cp.sum(y) == 1, A.T @ y == 0])
    return prob, A, c, y


def _box_rows(n: int) -> tuple[np.ndarray, np.ndarray]:
    """α_j ≤ 1 and −α_j ≤ 0 as rows."""
    eye = np.eye(n)
    return np.vstack([eye, -eye]), np.concatenate([np.ones(n), np.zeros(n)])


def farkas_certificate(A: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Solve for a Farkas certificate of {α ∈ [0,1]^n : A α ≤ c} with cvxpy.

    The box rows are appended; rows are padded with (0, 1) rows to a power-of-two count so one
    ``cp.Parameter`` problem serves many systems. Returns (A_full, c_full, y): the system the
    certificate refers to and y (unchecked; see :func:`check_farkas`).
    """
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2:
        raise ValueError(f"A: expected a (rows, n) matrix, got shape {A.shape}")
    c = np.asarray(c, dtype=np.float64).ravel()
    if c.shape[0] != A.shape[0]:
        raise ValueError(f"c: expected {A.shape[0]} entries, got {c.shape[0]}")
    n = A.shape[1]
    Bx, bc = _box_rows(n)
    A_full, c_full = np.vstack([A, Bx]), np.concatenate([c, bc])
    R = 1 << int(np.ceil(np.log2(max(A_full.shape[0], 2))))
    Ap = np.zeros((R, n))
    cp_ = np.ones(R)
    Ap[: A_full.shape[0]] = A_full
    cp_[: A_full.shape[0]] = c_full
    prob, Apar, cpar, y = _farkas_problem(R, n)
    Apar.value, cpar.value = Ap, cp_
    prob.solve(solver=_SOLVER)
    yv = np.zeros(R) if y.value is None else np.asarray(y.value)
    return A_full, c_full, yv[: A_full.shape[0]]


def interval_certificate(a: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Closed-form Farkas certificate of the 1-D system a_i α ≤ c_i, 0 ≤ α ≤ 1 (box rows appended
    as in :func:`farkas_certificate`): weight 1/|a| on the row giving the largest lower bound and
    on the row giving the smallest upper bound, so yᵀA = 0 and yᵀc = hi − lo. Unchecked."""
    a = np.asarray(a, dtype=np.float64).ravel()
    c = np.asarray(c, dtype=np.float64).ravel()
    A_full = np.concatenate([a, [1.0, -1.0]])[:, None]
    c_full = np.concatenate([c, [1.0, 0.0]])
    af = A_full[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = c_full / af
    up = np.where(af > 0, bound, np.inf)
    low = np.where(af < 0, bound, -np.inf)
    j, i = int(np.argmin(up)), int(np.argmax(low))
    y = np.zeros(len(af))
    y[j] += 1.0 / af[j]
    y[i] += 1.0 / -af[i]
    return A_full, c_full, y / y.sum()


def check_farkas(A: np.ndarray, c: np.ndarray, y: np.ndarray, tol: float = 1e-9) -> bool:
    """NumPy re-check that y proves {α ∈ [0,1]^n : A α ≤ c} empty.

    y must be ≥ −tol (negative entries are set to 0 first) and yᵀc + ‖yᵀA‖₁ < −tol; since
    |α_j| ≤ 1 this gives yᵀAα ≤ ‖yᵀA‖₁ < −yᵀc, contradicting yᵀAα ≤ yᵀc.
    """
    A = np.atleast_2d(np.asarray(A, dtype=np.float64))
    y = np.asarray(y, dtype=np.float64).ravel()
    c = np.asarray(c, dtype=np.float64).ravel()
    if y.shape[0] != A.shape[0] or c.shape[0] != A.shape[0]:
        return False
    if not np.all(np.isfinite(y)) or np.any(y < -tol):
        return False
    y = np.maximum(y, 0.0)
    return bool(y @ c + np.abs(y @ A).sum() < -tol)


# --------------------------------------------------------------------------- max-margin point


@functools.lru_cache(maxsize=32)
def _chebyshev_problem(rows: int, n: int):
    """max t s.t. G α + t ≤ h (rows of G unit-norm), 0 ≤ α ≤ 1 — ``cp.Parameter`` problem
    (bounded: t ≤ h_i − G_i α over the box)."""
    G = cp.Parameter((rows, n))
    h = cp.Parameter(rows)
    alpha = cp.Variable(n)
    t = cp.Variable()
    prob = cp.Problem(cp.Maximize(t), [G @ alpha + t <= h, alpha >= 0, alpha <= 1])
    return prob, G, h, alpha, t


def max_margin_point(G: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, float]:
    """The α ∈ [0,1]^n maximising the smallest normalised slack t of G α ≤ h (Chebyshev-centre
    style: t is the distance of α from the nearest constraint hyperplane; t ≥ 0 ⇔ feasible).
    Rows are normalised to unit norm here (all-zero rows must be removed by the caller)."""
    G = np.atleast_2d(np.asarray(G, dtype=np.float64))
    h = np.asarray(h, dtype=np.float64).ravel()
    norms = np.linalg.norm(G, axis=1)
    if np.any(norms == 0):
        raise ValueError(f"G: row {int(np.flatnonzero(norms == 0)[0])} is all zero (a constant constraint)")
    Gn, hn = G / norms[:, None], h / norms
    R = 1 << int(np.ceil(np.log2(max(len(hn), 2))))
    pad = np.arange(R) % len(hn)  # padding rows repeat real rows: same feasible set and optimum
    Gp, hp = Gn[pad], hn[pad]
    prob, Gpar, hpar, alpha, t = _chebyshev_problem(R, G.shape[1])
    Gpar.value, hpar.value = Gp, hp
    prob.solve(solver=_SOLVER)
    if alpha.value is None:
        raise RuntimeError(f"max_margin_point: solver returned status {prob.status}")
    return np.clip(np.asarray(alpha.value), 0.0, 1.0), float(t.value)


def check_point(G: np.ndarray, h: np.ndarray, alpha: np.ndarray, tol: float = 1e-7) -> tuple[bool, float]:
    """NumPy re-check of a point: α ∈ [0,1]^n and every row G α ≤ h (within ``tol``); returns
    (ok, smallest normalised slack)."""
    G = np.atleast_2d(np.asarray(G, dtype=np.float64))
    alpha = np.asarray(alpha, dtype=np.float64)
    norms = np.linalg.norm(G, axis=1)
    slack = (np.asarray(h, dtype=np.float64) - G @ alpha) / np.where(norms > 0, norms, 1.0)
    in_box = bool(np.all(alpha >= -tol) and np.all(alpha <= 1 + tol))
    smin = float(slack.min()) if slack.size else float("inf")
    return in_box and smin >= -tol, smin


def category_alpha_rows(
    pairs: Pairs, margin: float = DEFAULT_MARGIN, n: int = N_CATEGORIES
) -> tuple[np.ndarray, np.ndarray]:
    """Each pair as a row G α ≤ h over category-specific α ∈ [0,1]^n:
    −(a_s − σ_s) α_{c(s)} + (a_x − σ_x) α_{c(x)} ≤ ε − m."""
    G = np.zeros((len(pairs), n))
    idx = np.arange(len(pairs))
    np.add.at(G, (idx, pairs.cat_s), -(pairs.act_s - pairs.sim_s))
    np.add.at(G, (idx, pairs.cat_x), pairs.act_x - pairs.sim_x)
    return G, pairs.eps - margin


def row_satisfiable(G: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Whether each single row G_i α ≤ h_i has a solution in [0,1]^n (min over the box)."""
    return np.minimum(G, 0.0).sum(axis=1) <= h


# --------------------------------------------------------------------------- exact re-checks


def check_farkas_exact(A: np.ndarray, c: np.ndarray, y: np.ndarray) -> bool:
    """:func:`check_farkas` in exact rational arithmetic.

    Every float64 entry of A, c and y is converted to the rational number it represents
    (``fractions.Fraction(float)`` is exact), negative entries of y are set to 0 (y ≥ 0 is
    part of the certificate), and yᵀc + ‖yᵀA‖₁ < 0 is decided without rounding — so a ``True``
    proves the float64 system {α ∈ [0,1]^n : A α ≤ c} empty, independent of solver or
    floating-point accuracy.
    """
    from fractions import Fraction

    A = np.atleast_2d(np.asarray(A, dtype=np.float64))
    c = np.asarray(c, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if y.shape[0] != A.shape[0] or c.shape[0] != A.shape[0] or not np.all(np.isfinite(y)):
        return False
    rows = np.flatnonzero(y > 0)
    if not (np.all(np.isfinite(A[rows])) and np.all(np.isfinite(c[rows]))):
        return False
    if rows.size == 0:
        return False
    yq = [Fraction(float(y[i])) for i in rows]
    ytc = sum((yi * Fraction(float(c[i])) for yi, i in zip(yq, rows)), Fraction(0))
    l1 = Fraction(0)
    for j in range(A.shape[1]):
        l1 += abs(sum((yi * Fraction(float(A[i, j])) for yi, i in zip(yq, rows)), Fraction(0)))
    return bool(ytc + l1 < 0)


def check_point_exact(G: np.ndarray, h: np.ndarray, alpha: np.ndarray) -> bool:
    """:func:`check_point` in exact rational arithmetic with no tolerance: α ∈ [0,1]^n and
    G α ≤ h for every row, each float64 entry taken as the rational it represents."""
    from fractions import Fraction

    G = np.atleast_2d(np.asarray(G, dtype=np.float64))
    h = np.asarray(h, dtype=np.float64).ravel()
    a = [Fraction(float(v)) for v in np.asarray(alpha, dtype=np.float64).ravel()]
    if len(a) != G.shape[1] or any(v < 0 or v > 1 for v in a):
        return False
    for i in range(G.shape[0]):
        nz = np.flatnonzero(G[i])
        if sum((Fraction(float(G[i, j])) * a[j] for j in nz), Fraction(0)) > Fraction(float(h[i])):
            return False
    return True


def prove_infeasible(A: np.ndarray, c: np.ndarray) -> dict:
    """A Farkas certificate for {α ∈ [0,1]^n : A α ≤ c} from cvxpy (falling back, for n = 1, to
    the closed-form interval certificate), re-checked in float64 and in exact rational
    arithmetic. Returns ``{"float64": bool, "exact": bool, "rows": [...], "y": [...]}`` (rows are
    indices into A; box rows are named ``box<j>``)."""
    A = np.atleast_2d(np.asarray(A, dtype=np.float64))
    c = np.asarray(c, dtype=np.float64).ravel()
    Af, cf, y = farkas_certificate(A, c)
    ok = check_farkas(Af, cf, y)
    if not ok and A.shape[1] == 1:
        Af, cf, y = interval_certificate(A[:, 0], c)
        ok = check_farkas(Af, cf, y)
    exact = check_farkas_exact(Af, cf, y) if ok else False
    keep = np.flatnonzero(y > 1e-12)
    n = A.shape[0]
    return {
        "float64": bool(ok),
        "exact": bool(exact),
        "rows": [int(k) if k < n else f"box{k - n}" for k in keep],
        "y": [float(y[k]) for k in keep],
        "yTc": float(y @ cf),
        "abs_yTA": float(np.abs(y @ Af).sum()),
    }
