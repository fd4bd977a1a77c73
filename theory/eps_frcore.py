"""A.2.2 applied to frcore: the Lipschitz constant of its feature-restricted score, the ranking
margin Δmin on a corpus, and the theorem's conclusion on the queries that meet 2Lε < Δmin.

**The feature-restricted scorer.** frcore's score reads the query intent only through the
lifecycle mask; with the mask off (``ScoreConfig(lifecycle=False)``) it is a function of each
candidate's features alone — σ, the ages, and the metadata held fixed — and the check verifies
that it is exactly intent-free (the same totals under all six intents). An intent can reach it
only through the query's embedding, i.e. σ: we model the intent as moving every candidate's σ
by at most ε (an ε-ball in the σ coordinate; ages do not depend on the intent).

**The scale.** A ranking is the same under any increasing transform, so the theorem applies to
frcore's log-score s and to its product score e^s = b · (1 + β w·r) · ω alike. The log-score is
not uniformly Lipschitz in σ — ∂s/∂σ = slope / b grows without bound as b → 0 (a candidate of
σ ≈ 0 has L ≈ 10⁷) — so the headline is the product score, which is piecewise affine in σ with
slope (1 − α_c)(1 + β w·r) ω on the blend (F_c or 0.95 times the same factor past the floor or
the rescue); the log-score's figures are reported beside it.

**L** (per candidate, local to its ε-ball, from frcore's own kernel by forward-mode derivative):
the largest |∂s/∂σ| at both ends and the middle of each half of the ball and at every threshold
inside it (semantic floor σ = 0.95, numeric rescue σ = 0.85). On the product scale each piece
is affine, so this is exact; on the log scale d log b / dσ = slope / b falls as σ grows, so the
largest value is at a piece's left end, which the points include — except where b crosses the
floor frcore takes its log at (log max(b, 10⁻¹²)): there the slope is unbounded, L = ∞. Where
the score *jumps* at a threshold inside the ball it is not Lipschitz there either: L = ∞. The
lower half bounds how far a candidate's score can fall, the upper half how far it can rise. Per
query, L_q is the largest L over the served list (top 10 in order; or the top 1) and the first candidate outside it, and
**Δmin** the smallest gap between consecutive scores of that chain.

**Condition** (the margin argument of :func:`theory.proofs.eps_chain`): 2 L_q ε < Δmin_q, and
every candidate j outside the list stays below the last served one: gap > (L_down(last) +
L_up(j)) ε; also counted with per-candidate constants for the chain (``_pairwise``).

**Conclusion, checked exactly**: the score is nondecreasing in σ (checked), and each candidate's
score depends on its own σ only, so over the whole ball each score ranges over
[s(σ − ε), s(σ + ε)]; the served list is the same for every intent iff every consecutive pair
keeps s_lo(upper) > s_hi(lower) and the last served keeps s_lo > s_hi of every outsider.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import frcore as fr

from ._base import ClaimResult, claim
from .diagnose import corpus_diagnosis
from .verdict import EMPIRICAL, statements

#: ε in σ units: the headline and the grid reported beside it.
EPS = 0.01
EPS_GRID = (0.001, 0.01, 0.05)
TOP = 10
FEATURE_RESTRICTED = fr.ScoreConfig(lifecycle=False)
THRESHOLDS = ("floor_sim_threshold", "numeric_sim_threshold")
_INTERIOR = np.linspace(-1.0, 1.0, 3)  # both ends and the middle of each half-ball (thresholds are added)
_JUMP_TOL = 1e-5


#: The two representations of frcore's ranking: its log-score s (``total``) and the product
#: score e^s = b · (1 + β w·r) · ω — the same ranking, so A.2.2 applies to either.
SCALES = ("log", "product")


def _totals(params, queries, cands, sim, config=FEATURE_RESTRICTED, scale: str = "log") -> np.ndarray:
    t = np.asarray(
        fr.score_queries(params, queries, cands._replace(sim=jnp.asarray(sim, cands.sim.dtype)), config).total,
        dtype=np.float64,
    )
    return np.exp(t) if scale == "product" else t


def _slopes(params, queries, cands, sim, scale: str = "log") -> np.ndarray:
    """∂s/∂σ (or ∂e^s/∂σ) of every candidate at ``sim`` (the score is pointwise: a JVP with a ones tangent)."""
    sim = jnp.asarray(sim, cands.sim.dtype)
    f = lambda s: fr.score_queries(params, queries, cands._replace(sim=s), FEATURE_RESTRICTED).total  # noqa: E731
    t, d = jax.jvp(f, (sim,), (jnp.ones_like(sim),))
    d = np.asarray(d, dtype=np.float64)
    return np.exp(np.asarray(t, dtype=np.float64)) * d if scale == "product" else d


def local_lipschitz(
    params, queries, cands, sim: np.ndarray, valid: np.ndarray, eps: float, side: str = "both", scale: str = "log"
) -> np.ndarray:
    """Per candidate, the largest ∂s/∂σ over its ε-ball ∩ [0, 1] (module docstring) — the whole
    ball, or only the part below σ (``side="down"``: how far its score can fall) or above σ
    (``"up"``: how far it can rise); ∞ where the score jumps at a threshold inside it."""
    lo = np.clip(sim - eps, 0.0, 1.0) if side != "up" else sim
    hi = np.clip(sim + eps, 0.0, 1.0) if side != "down" else sim
    L = np.zeros_like(sim)
    for t in _INTERIOR:
        L = np.maximum(L, np.abs(_slopes(params, queries, cands, lo + (t + 1) / 2 * (hi - lo), scale)))
    for name in THRESHOLDS:
        thr = float(getattr(params, name))
        inside = (lo < thr) & (thr <= hi)
        if not inside.any():
            continue
        at = np.where(inside, thr, sim)
        below = np.where(inside, np.nextafter(np.float32(thr), np.float32(0.0)), sim)
        L = np.maximum(L, np.where(inside, np.abs(_slopes(params, queries, cands, at, scale)), 0.0))
        with np.errstate(invalid="ignore"):
            jump = _totals(params, queries, cands, at, scale=scale) - _totals(
                params, queries, cands, below, scale=scale
            )
        L = np.where(inside & (np.abs(np.nan_to_num(jump)) > _JUMP_TOL), np.inf, L)
    if scale == "log":  # below the blend's clamp log b is flat; just past it, slope / b is unbounded
        L = np.where(_clamped(params, queries, cands, lo) & ~_clamped(params, queries, cands, hi), np.inf, L)
    return np.where(valid, L, 0.0)


def _clamped(params, queries, cands, sim) -> np.ndarray:
    """Where frcore's blend b lies below the floor its log is taken at (log b is then constant)."""
    t = fr.score_queries(params, queries, cands._replace(sim=jnp.asarray(sim, cands.sim.dtype)), FEATURE_RESTRICTED)
    b, log_b = np.asarray(t.blend, dtype=np.float64), np.asarray(t.log_blend, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.log(np.maximum(b, 0.0)) < log_b - 1e-6


def served_chain(total: np.ndarray, valid: np.ndarray, top: int = TOP) -> list[np.ndarray]:
    """Per query, the candidate indices of the top ``top`` + 1 by score (ties to the lower index),
    admitted and valid only."""
    out = []
    for t, v in zip(total, valid):
        idx = np.flatnonzero(v & np.isfinite(t))
        order = idx[np.lexsort((idx, -t[idx]))]
        out.append(order[: top + 1])
    return out


def analyse(corpus, eps: float, params=None, tops: tuple[int, ...] = (TOP, 1), scale: str = "log") -> dict:
    """For each served length in ``tops`` (the top 10 in order; the top 1), every query's L_q,
    Δmin_q, whether it meets the condition, and whether its served list is invariant over the
    ε-ball (exact, by the interval endpoints), for the score on ``scale``."""
    params = params or getattr(corpus, "scoring_params", fr.default_params)()
    q, c = corpus.queries, corpus.cands
    sim, valid = np.asarray(corpus.sim, dtype=np.float64), np.asarray(corpus.valid, dtype=bool)
    s0 = _totals(params, q, c, sim, scale=scale)
    s_lo = _totals(params, q, c, np.clip(sim - eps, 0.0, 1.0), scale=scale)
    s_hi = _totals(params, q, c, np.clip(sim + eps, 0.0, 1.0), scale=scale)
    m = valid & np.isfinite(s0) & (s0 > (0.0 if scale == "product" else -np.inf))
    monotone = bool(np.all((s_lo[m] <= s0[m] + 1e-9) & (s0[m] <= s_hi[m] + 1e-9)))
    down, up = (local_lipschitz(params, q, c, sim, valid, eps, side, scale) for side in ("down", "up"))
    L = np.maximum(down, up)  # the whole ball
    out: dict[str | int, Any] = {"monotone": monotone}
    for top in tops:
        rows = []
        for b, chain in enumerate(served_chain(np.where(m, s0, -np.inf), valid, top)):
            if chain.size < 2:
                rows.append(
                    {
                        "L": float("nan"),
                        "delta_min": float("nan"),
                        "meets": False,
                        "meets_pairwise": False,
                        "invariant": False,
                        "eps_star": float("nan"),
                    }
                )
                continue
            gaps = s0[b, chain[:-1]] - s0[b, chain[1:]]
            Lq, dmin = float(np.max(L[b, chain])), float(np.min(gaps))
            served = chain[: min(top, chain.size)]
            outside = np.setdiff1d(np.flatnonzero(m[b]), served)
            last = served[-1]
            with np.errstate(invalid="ignore"):  # a candidate outside can only rise, the last served one only fall
                outsiders_ok = (
                    bool(np.all(s0[b, last] - s0[b, outside] > (down[b, last] + up[b, outside]) * eps))
                    if outside.size
                    else True
                )
                pairwise = bool(
                    np.all(gaps[: served.size - 1] > (down[b, chain[:-1]] + up[b, chain[1:]])[: served.size - 1] * eps)
                )
            meets = bool(2 * Lq * eps < dmin and outsiders_ok)
            inv = bool(
                np.all(s_lo[b, served[:-1]] > s_hi[b, served[1:]])
                and (not outside.size or np.all(s_lo[b, last] > s_hi[b, outside]))
            )
            rows.append(
                {
                    "L": Lq,
                    "delta_min": dmin,
                    "meets": meets,
                    "meets_pairwise": bool(pairwise and outsiders_ok),
                    "invariant": inv,
                    "eps_star": dmin / (2 * Lq) if Lq > 0 else float("inf"),
                }
            )
        out[top] = rows
    return out


def intent_free(corpus, params=None) -> bool:
    """Whether the feature-restricted score is exactly the same under every intent."""
    params = params or getattr(corpus, "scoring_params", fr.default_params)()
    base = None
    for i in range(len(fr.INTENT_NAMES)):
        q = corpus.queries._replace(intent=jnp.full_like(corpus.queries.intent, i))
        t = np.asarray(fr.score_queries(params, q, corpus.cands, FEATURE_RESTRICTED).total)
        if base is None:
            base = t
        elif not np.array_equal(t, base, equal_nan=True):
            return False
    return True


def intent_moves_full_score(corpus, params=None) -> np.ndarray:
    """Per query, whether frcore's full score (with the lifecycle mask) serves a different top 10
    under some intent than under the query's own."""
    params = params or getattr(corpus, "scoring_params", fr.default_params)()
    valid = np.asarray(corpus.valid, dtype=bool)
    lists = []
    for i in range(len(fr.INTENT_NAMES)):
        q = corpus.queries._replace(intent=jnp.full_like(corpus.queries.intent, i))
        t = np.asarray(fr.score_queries(params, q, corpus.cands).total, dtype=np.float64)
        lists.append([tuple(ch[:TOP].tolist()) for ch in served_chain(t, valid)])
    own = np.asarray(corpus.queries.intent)
    return np.array([any(lists[i][b] != lists[int(own[b])][b] for i in range(len(lists))) for b in range(len(own))])


def _median(x) -> float:
    x = np.asarray([v for v in x if np.isfinite(v)], dtype=np.float64)
    return float(np.median(x)) if x.size else float("nan")


def _summary(rows: list[dict]) -> dict:
    meets = np.array([r["meets"] for r in rows])
    pair = np.array([r["meets_pairwise"] for r in rows])
    inv = np.array([r["invariant"] for r in rows])
    return {
        "queries_satisfying": int(meets.sum()),
        "queries_satisfying_pairwise": int(pair.sum()),
        "violations": int(((meets | pair) & ~inv).sum()),
        "invariant": int(inv.sum()),
        "lipschitz_median": _median([r["L"] for r in rows]),
        "delta_min_median": _median([r["delta_min"] for r in rows]),
        "eps_star_median": _median([r["eps_star"] for r in rows]),
        "infinite_L": int(sum(not np.isfinite(r["L"]) for r in rows)),
    }


PARTS = ("the ranking is the same for every intent where 2Lε < Δmin", "only the lifecycle mask carries the intent")
TARGETS = {TOP: "top 10 in order", 1: "top 1"}


@claim(
    "eps_relax_frcore",
    "A.2.2 on frcore: Lipschitz constant, margin Δmin and the ε-relaxation on a corpus",
    "If 2Lε < Δmin, an L-Lipschitz feature-restricted scorer produces the same ranking for every "
    "intent and conveys zero intent information.",
    kind=EMPIRICAL,
    rule=statements(
        "reproduced if, on every query of the corpus meeting 2Lε < Δmin (frcore's product score e^s with the "
        f"lifecycle mask off, ε = {EPS} in σ; for the served top 10 in order and for the top 1), the served list is "
        "the same over the whole ε-ball (exact), and frcore's full score (with the mask) changes the served list "
        "across intents on some of those queries; not comparable if no query meets the condition",
        PARTS,
        core=(PARTS[0],),
    ),
    needs_corpus=True,
    diagnose=corpus_diagnosis,
    method="numeric",
    range=f"every question of the corpus; ε = {', '.join(map(str, EPS_GRID))} in σ (headline {EPS}); top 10 in order "
    "and top 1; "
    "product score e^s (and the log-score s at the headline ε)",
)
def check_eps_frcore(corpus) -> ClaimResult:
    """L, Δmin and the condition per query at every ε of :data:`EPS_GRID` on the product score
    (the log-score at the headline ε beside it); the conclusion checked exactly."""
    free = intent_free(corpus)
    per = {eps: analyse(corpus, eps, scale="product") for eps in EPS_GRID}
    log = analyse(corpus, EPS, scale="log")
    moves = intent_moves_full_score(corpus)
    head = {t: _summary(per[EPS][t]) for t in TARGETS}
    grid = {str(eps): {TARGETS[t]: _summary(a[t]) for t in TARGETS} for eps, a in per.items()}
    meets = {t: np.array([r["meets"] or r["meets_pairwise"] for r in per[EPS][t]]) for t in TARGETS}
    violations = sum(h["violations"] for h in head.values())
    any_meets = np.logical_or.reduce(list(meets.values()))
    top10, top1 = head[TOP], head[1]
    statement = {PARTS[0]: bool(violations == 0), PARTS[1]: bool((any_meets & moves).any())}
    detail = {
        PARTS[0]: "; ".join(
            f"{TARGETS[t]}: {h['queries_satisfying']} of {len(moves)} queries meet 2Lε < Δmin at ε = {EPS} "
            f"({h['queries_satisfying_pairwise']} with per-candidate constants), the served list moves on "
            f"{h['violations']} of them"
            for t, h in head.items()
        ),
        PARTS[1]: f"with the mask, the intent changes the served top 10 on {int((any_meets & moves).sum())} of the "
        f"{int(any_meets.sum())} "
        f"queries meeting the condition (on {int(moves.sum())} of all {len(moves)})",
    }
    Ls = [r["L"] for r in per[EPS][TOP] if np.isfinite(r["L"])]
    witness = {
        "statement": statement,
        "statement_detail": detail,
        "eps": EPS,
        "scale": "product e^s",
        "lipschitz": top10["lipschitz_median"],
        "delta_min": top10["delta_min_median"],
        "queries_satisfying": top10["queries_satisfying"],
        "queries_satisfying_top1": top1["queries_satisfying"],
        "top10": top10,
        "top1": top1,
        "log_score": {TARGETS[t]: _summary(log[t]) for t in TARGETS},
        "queries": len(moves),
        "violations": violations,
        "lipschitz_quantiles": {k: float(np.quantile(Ls, p)) for k, p in (("p10", 0.1), ("p50", 0.5), ("p90", 0.9))}
        if Ls
        else {},
        "delta_min_quantiles": {
            k: float(np.nanquantile([r["delta_min"] for r in per[EPS][TOP]], p))
            for k, p in (("p10", 0.1), ("p50", 0.5), ("p90", 0.9))
        },
        "by_eps": grid,
        "intent_free": free,
        "monotone_in_sigma": {str(e): a["monotone"] for e, a in per.items()} | {"log": log["monotone"]},
        "satisfying_question_ids": {
            TARGETS[t]: [corpus.question_ids[i] for i in np.flatnonzero(m)] for t, m in meets.items()
        },
        "intent_moves_full_score": int(moves.sum()),
    }
    if not any_meets.any():
        witness["not_measurable"] = (
            f"no query meets 2Lε < Δmin at ε = {EPS} (median ε* = Δmin/2L: top 10 {top10['eps_star_median']:.2g}, top "
            f"1 {top1['eps_star_median']:.2g})"
        )
    return ClaimResult(
        ours=f"product score: L median {top10['lipschitz_median']:.3g}, Δmin median {top10['delta_min_median']:.2g} "
        f"(top 10) / {top1['delta_min_median']:.3g} (top 1); "
        f"at ε = {EPS}: "
        + "; ".join(
            f"{TARGETS[t]} {h['queries_satisfying']}/{len(moves)} queries meet 2Lε < Δmin, {h['violations']} violations"
            for t, h in head.items()
        )
        + f"; log-score L median {_summary(log[TOP])['lipschitz_median']:.3g}",
        passed=bool(free and log["monotone"] and all(a["monotone"] for a in per.values()) and len(moves) > 0),
        witness=witness,
    )
