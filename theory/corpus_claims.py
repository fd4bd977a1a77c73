"""The paper's data claims (A.2.4, A.5, A.6, A.7.1, A.10, A.14, A.15), computed on a corpus.

Each check takes a :class:`theory.corpus.Corpus` (the generated default or any suite path) and
returns a :class:`ClaimResult`; the figures are ours, measured with frcore's own score at
``frcore.default_params()``, next to the paper's. Pair and interval constructions are in
:mod:`theory.polytope`, partition machinery in :mod:`theory.partitions`.

``passed`` (the *check*) means the measurement could be made and every certificate re-verified
(float64 and, for Farkas certificates and feasible points, exact rational arithmetic). Whether
the paper's statement holds is the *verdict*, decided by the rule given with each claim
(:mod:`theory.verdict`); a claim that is not reproduced is diagnosed by :mod:`theory.diagnose`.
"""

from __future__ import annotations

import numpy as np

from frcore import CATEGORY_NAMES, N_CATEGORIES, Category, as_arrays

from . import partitions as part, polytope as poly
from ._base import ClaimResult, claim
from .diagnose import corpus_diagnosis
from .verdict import EMPIRICAL, Rule, holds, within


def _med(x) -> float:
    x = np.asarray(x, dtype=np.float64)
    return float(np.median(x)) if x.size else float("nan")


# --------------------------------------------------------------------------- A.2.4


def _a2_4_parts(w):
    return [
        holds(
            "same regime (median |Δa| < 1e-3 and median α_required > 0.99)",
            w["same_regime"],
            f"ours median |Δa| = {w['median_abs_dact']:.2g}, α_required = {w['median_alpha_required']:.4f}; "
            "paper |Δa| ≈ 3.3e-10, α_required = 0.9998",
            core=True,
        ),
        within("median |ε|", w["median_abs_eps"], 0.060, rtol=0.5),
    ]


@claim(
    "a2_4_regime",
    "A.2.4 long-term regime: activations collapse, a scalar blend needs α ≈ 1",
    "median |ε| = 0.060, |Δa| ≈ 3.3e-10, α_required = 0.9998",
    needs_corpus=True,
    kind=EMPIRICAL,
    rule=Rule(
        "reproduced if our corpus is in the same regime (median |Δa| < 1e-3 and median finite "
        "α_required > 0.99; core) and median |ε| is within ±50% of 0.060",
        _a2_4_parts,
    ),
    diagnose=corpus_diagnosis,
)
def a2_4_regime(corpus) -> ClaimResult:
    """Per gold (support, wrong) pair: |ε| = |σ_s − σ_w|, |Δa| = |a_s − a_w| and, for pairs σ
    misorders (ε < 0), α_required = −ε/(Δa − ε) (∞ if Δa ≤ 0), the α at which
    b = (1−α)σ + αa first orders them. Check: the corpus has at least one gold pair."""
    P = poly.corpus_pairs(corpus)["pairs"]
    P = P.subset(P.gold)
    if len(P) == 0:
        return ClaimResult(
            "not measurable: no gold (support, wrong) pairs in the corpus",
            True,
            {"pairs": 0, "not_measurable": "no gold (support, wrong) pairs"},
        )
    req = poly.required_alpha(P)
    mis = P.eps < 0
    finite = req[mis & np.isfinite(req)]
    eps_m, da_m, req_m = _med(np.abs(P.eps)), _med(np.abs(P.d_act)), _med(finite)
    same = bool(da_m < 1e-3 and finite.size > 0 and req_m > 0.99)
    ours = (
        f"median |ε| = {eps_m:.3f}, |Δa| = {da_m:.2g}, α_required = {req_m:.4f} "
        f"({int(mis.sum())}/{len(P)} pairs misordered by σ, {int((mis & ~np.isfinite(req)).sum())} unorderable by any "
        "α); " + ("same regime" if same else "not the paper's regime")
    )
    return ClaimResult(
        ours,
        True,
        {
            "pairs": len(P),
            "median_abs_eps": eps_m,
            "median_abs_dact": da_m,
            "median_alpha_required": req_m,
            "misordered": int(mis.sum()),
            "unorderable": int((mis & ~np.isfinite(req)).sum()),
            "same_regime": same,
        },
    )


# --------------------------------------------------------------------------- A.7.1


def a7_1_bounds(pairs: poly.Pairs, margin: float = poly.DEFAULT_MARGIN) -> dict:
    """Median global-α bounds: upper bounds from preservation pairs whose older support edge is
    FINANCIAL_MATERIAL (the blend must keep it above a newer competitor), lower bounds from
    suppression pairs whose stale edge is LOGISTICAL_CONTEXT (the newer conflict must win).
    Only pairs whose bound is informative (hi < 1, resp. lo > 0) count; a lower bound above 1
    means no α ≤ 1 meets the pair at all (reported as is)."""
    lo, hi = poly.alpha_intervals(pairs, margin)
    fin = (pairs.kind == poly.PRESERVATION) & (pairs.cat_s == int(Category.FINANCIAL_MATERIAL)) & (hi < 1)
    log = (pairs.kind == poly.SUPPRESSION) & (pairs.cat_x == int(Category.LOGISTICAL_CONTEXT)) & (lo > 0)
    return {
        "preservation_pairs": int(fin.sum()),
        "suppression_pairs": int(log.sum()),
        "alpha_upper_median": _med(np.maximum(hi[fin], 0.0)),
        "alpha_lower_median": _med(np.minimum(lo[log], np.inf)),
    }


def _a7_1_parts(w):
    lo, up = w["alpha_lower_median"], w["alpha_upper_median"]
    return [
        holds(
            "a trade-off inside [0, 1] (median preservation bound < median suppression bound ≤ 1)",
            up < lo <= 1.0,
            f"ours α ≥ {lo:.3f} vs α ≤ {up:.3f}"
            + ("; no α ∈ [0, 1] meets the median suppression pair, so there is no trade-off" if lo > 1.0 else "")
            + "; paper α ≥ 0.138 vs α ≤ 0.065",
            core=True,
        ),
        within("preservation bound", up, 0.065, atol=0.05),
        within("suppression bound", lo, 0.138, atol=0.05),
    ]


@claim(
    "a7_1_witness",
    "A.7.1 without category labels: preserving old FINANCIAL vs suppressing new LOGISTICAL conflicts",
    "preservation needs α ≤ 0.065, suppression α ≥ 0.138 (median): no single α",
    needs_corpus=True,
    kind=EMPIRICAL,
    rule=Rule(
        "reproduced if the median LOGISTICAL suppression lower bound exceeds the median FINANCIAL "
        "preservation upper bound and is at most 1 (core: two requirements, each met by some α ∈ [0, 1], that no "
        "single α meets together; a median suppression bound above 1 means no α ∈ [0, 1] suppresses the median "
        "pair at all, so there is no trade-off to reproduce) and each median is within ±0.05 of the paper's",
        _a7_1_parts,
    ),
    diagnose=corpus_diagnosis,
)
def a7_1_witness(corpus) -> ClaimResult:
    """Check: the bounds were computed (a corpus without both kinds of pairs is *not
    measurable*: verdict not comparable)."""
    w = a7_1_bounds(poly.corpus_pairs(corpus)["pairs"])
    if not (w["preservation_pairs"] and w["suppression_pairs"]):
        why = f"{w['preservation_pairs']} FINANCIAL preservation, {w['suppression_pairs']} LOGISTICAL suppression pairs"
        return ClaimResult(f"not measurable on this corpus: {why}", True, {**w, "not_measurable": why})
    lo, up = w["alpha_lower_median"], w["alpha_upper_median"]
    return ClaimResult(
        f"preservation α ≤ {up:.3f} (n={w['preservation_pairs']}), suppression α ≥ {lo:.3f} "
        f"(n={w['suppression_pairs']}): " + ("conflict" if lo > up else "no conflict"),
        True,
        w,
    )


# --------------------------------------------------------------------------- A.10

#: The pair rules A.10's cross-pair share is counted under (reported side by side).
PAIR_RULES = {
    "satisfiable_alone": "cross-pairs of one preservation and one suppression pair, each satisfiable by some global α "
    "on its own",
    "all_pairs": "every preservation pair x every suppression pair (a pair no α meets on its own makes its cross-pairs "
    "infeasible)",
}


def cross_pair_shares(P: poly.Pairs, margin: float = poly.DEFAULT_MARGIN) -> dict:
    """Share of jointly infeasible cross-pairs under both :data:`PAIR_RULES`."""
    lo, hi = poly.alpha_intervals(P, margin)
    _, _, infeasible = poly.cross_pair_infeasible(P, margin)
    n_p, n_s = int((P.kind == poly.PRESERVATION).sum()), int((P.kind == poly.SUPPRESSION).sum())
    p, s = np.flatnonzero(P.kind == poly.PRESERVATION), np.flatnonzero(P.kind == poly.SUPPRESSION)
    # all pairs: a cross-pair is feasible iff max(lo) <= min(hi) over its two members (an empty
    # member interval, lo > hi, makes it infeasible). Counted by sorting, not by an n_p x n_s grid.
    feasible_all = 0
    if n_p and n_s:
        # a member is satisfiable alone iff lo <= hi (as in cross_pair_infeasible); the joint test has GAP_TOL
        lp, hp, ls, hs = lo[p], hi[p], lo[s], hi[s]
        s_alone = ls <= hs
        for i in range(n_p):
            if lp[i] > hp[i]:
                continue
            feasible_all += int(
                np.count_nonzero(s_alone & (np.maximum(lp[i], ls) <= np.minimum(hp[i], hs) + poly.GAP_TOL))
            )
    n_all = n_p * n_s
    return {
        "satisfiable_alone": {
            "cross_pairs": int(len(infeasible)),
            "infeasible": int(infeasible.sum()),
            "share_infeasible": float(infeasible.mean()) if len(infeasible) else float("nan"),
        },
        "all_pairs": {
            "cross_pairs": n_all,
            "infeasible": n_all - feasible_all,
            "share_infeasible": (n_all - feasible_all) / n_all if n_all else float("nan"),
        },
        "rules": PAIR_RULES,
        "paper_cross_pairs": 1566,
    }


def global_alpha_analysis(corpus, margin: float = poly.DEFAULT_MARGIN, sample: int = 64) -> dict:
    """The A.10 computation (see :func:`a10_global_alpha`); returns the JSON-able witness
    (cached per corpus)."""
    memo = poly.corpus_pairs(corpus)
    key = ("a10", margin, sample)
    if key not in memo:
        memo[key] = _global_alpha_analysis(memo["pairs"], margin, sample)
    return memo[key]


def _global_alpha_analysis(P: poly.Pairs, margin: float, sample: int) -> dict:
    lo, hi = poly.alpha_intervals(P, margin)
    alone = lo <= hi
    pi, si, infeasible = poly.cross_pair_infeasible(P, margin)
    A, c = poly.global_alpha_rows(P, margin)
    sel = np.flatnonzero(alone)
    shares = cross_pair_shares(P, margin)
    out: dict = {
        "pairs": len(P),
        "preservation": int((P.kind == 0).sum()),
        "suppression": int((P.kind == 1).sum()),
        "satisfiable_alone": int(alone.sum()),
        "cross_pairs": int(len(pi)),
        "cross_pairs_infeasible": int(infeasible.sum()),
        "margin": margin,
        "pair_rules": shares,
    }
    out["share_infeasible"] = shares["satisfiable_alone"]["share_infeasible"]
    g_feasible = bool(sel.size and lo[sel].max() <= hi[sel].min() + poly.GAP_TOL)
    out["global_feasible"] = g_feasible
    if sel.size and not g_feasible:
        cert = poly.prove_infeasible(A[sel, None], c[sel])
        cert["rows"] = [int(sel[k]) if isinstance(k, int) else k for k in cert["rows"]]
        out["certificate"] = cert
        out["certificate_verified"] = bool(cert["float64"] and cert["exact"])
    else:
        out["certificate_verified"] = None  # nothing to certify: a global α exists (or no pairs)
        if sel.size:
            a_star = float(min(hi[sel].min(), max(lo[sel].max(), 0.0)))
            out["global_alpha_point"] = a_star
    # 11x11 cells: category of the preserved edge x category of the suppressed edge
    n = N_CATEGORIES
    counts = np.zeros((n, n), dtype=np.int64)
    feas = np.zeros((n, n), dtype=bool)
    cert_ok = []
    kind_p = alone & (P.kind == poly.PRESERVATION)
    kind_s = alone & (P.kind == poly.SUPPRESSION)
    for cp_ in range(n):
        rp = np.flatnonzero(kind_p & (P.cat_s == cp_))
        if not rp.size:
            continue
        for cs in range(n):
            rs = np.flatnonzero(kind_s & (P.cat_x == cs))
            if not rs.size:
                continue
            counts[cp_, cs] = rp.size * rs.size
            rows = np.concatenate([rp, rs])
            feas[cp_, cs] = lo[rows].max() <= hi[rows].min() + poly.GAP_TOL
            if not feas[cp_, cs]:
                # the 1-D interval certificate is closed-form and exact-checked; cvxpy is not needed
                Af, cf, y = poly.interval_certificate(A[rows], c[rows])
                cert_ok.append(poly.check_farkas(Af, cf, y) and poly.check_farkas_exact(Af, cf, y))
    out["cells_populated"] = int((counts > 0).sum())
    out["cells_feasible"] = int(feas.sum())
    out["cell_certificates_verified"] = bool(all(cert_ok))
    out["cell_counts"] = counts.tolist()
    out["cell_feasible"] = feas.tolist()
    out["categories"] = list(CATEGORY_NAMES)
    # category-specific α: per infeasible cross-pair (a cp.Parameter problem re-solved), then jointly
    G, h = poly.category_alpha_rows(P, margin)
    bad = np.flatnonzero(infeasible)
    rng = np.random.default_rng(0)
    pick = bad if bad.size <= sample else rng.choice(bad, sample, replace=False)
    restored = 0
    for k in pick:
        pair = [pi[k], si[k]]
        Gk, hk = G[pair], h[pair]
        nz = np.linalg.norm(Gk, axis=1) > 0
        if np.all(hk[~nz] >= 0) and nz.any():
            a_k, _ = poly.max_margin_point(Gk[nz], hk[nz])
            restored += poly.check_point(Gk[nz], hk[nz], a_k)[0]
        elif not nz.any() and np.all(hk >= 0):
            restored += 1
    out["cross_pairs_restored_by_category_alpha"] = {
        "checked": int(len(pick)),
        "restored": int(restored),
        "of_infeasible": int(bad.size),
    }
    nz = np.linalg.norm(G[sel], axis=1) > 0
    rows = sel[nz]
    const_ok = bool(np.all(h[sel[~nz]] >= 0))
    if rows.size:
        alpha, t = poly.max_margin_point(G[rows], h[rows])
        ok, smin = poly.check_point(G[rows], h[rows], alpha)
        ca = {
            "alpha": dict(zip(CATEGORY_NAMES, map(float, alpha))),
            "margin": t,
            "rows": int(rows.size),
            "numpy_min_slack": smin,
            "verified_feasible": bool(ok and const_ok and t >= 0),
        }
        if ca["verified_feasible"]:
            ca["feasible_exact"] = poly.check_point_exact(G[rows], h[rows], alpha)
        else:
            cert = poly.prove_infeasible(G[rows], h[rows])
            ca["infeasibility_certificate"] = cert
            ca["infeasibility_certificate_verified"] = bool(cert["float64"] and cert["exact"])
        out["category_alpha"] = ca
    return out


def _a10_parts(w):
    sh = w["pair_rules"]
    out = [
        holds(
            "no global α meets every requirement pair",
            not w["global_feasible"],
            "certificate verified (float64 and exact)"
            if w.get("certificate_verified")
            else f"α = {w.get('global_alpha_point', float('nan')):.3g} meets every pair",
            core=True,
        ),
    ]
    for rule in ("satisfiable_alone", "all_pairs"):
        r = sh[rule]
        out.append(
            within(
                f"share of infeasible cross-pairs ({rule.replace('_', ' ')}; {r['cross_pairs']:,} cross-pairs, paper "
                "1,566)",
                r["share_infeasible"],
                0.998,
                atol=0.05,
                scale=100,
                unit="%",
            )
        )
    out.append(
        holds(
            "no populated 11x11 cell feasible",
            w["cells_feasible"] == 0,
            f"ours {w['cells_feasible']} of {w['cells_populated']} populated cells feasible; paper 0 of 45",
        )
    )
    return out


@claim(
    "a10_global_alpha",
    "A.10 global-α infeasibility polytope",
    "99.8% of 1,566 cross-pairs infeasible under a global α; 0 of 45 populated 11x11 cells feasible",
    needs_corpus=True,
    kind=EMPIRICAL,
    rule=Rule(
        "reproduced if no global α meets every requirement pair (core; a verified Farkas certificate), "
        "the share of jointly infeasible cross-pairs is within ±5 pp of 99.8% under both pair rules "
        "(each satisfiable alone; all pairs), and no populated cell is feasible",
        _a10_parts,
    ),
    diagnose=corpus_diagnosis,
)
def a10_global_alpha(corpus) -> ClaimResult:
    """Preservation/suppression pairs give rows (ε − Δa) α ≤ ε − m over a global α; a cross-pair
    = one preservation x one suppression pair, jointly infeasible when their α-intervals are
    disjoint, counted under both :data:`PAIR_RULES`. The global program over all individually
    satisfiable rows is infeasible iff a Farkas certificate exists (cvxpy or the closed-form
    interval certificate; re-checked in float64 and exactly); per cell (category of the
    preserved edge x category of the suppressed edge) likewise.

    Check: every certificate produced verifies (float64 and exact)."""
    w = global_alpha_analysis(corpus)
    sh = w["pair_rules"]
    ours = (
        f"{100 * sh['satisfiable_alone']['share_infeasible']:.1f}% of {sh['satisfiable_alone']['cross_pairs']:,} "
        "cross-pairs "
        f"infeasible (pairs satisfiable alone), {100 * sh['all_pairs']['share_infeasible']:.1f}% of "
        f"{sh['all_pairs']['cross_pairs']:,} (all pairs); {w['cells_feasible']} of {w['cells_populated']} populated "
        "cells "
        f"feasible; global α "
        + (
            "infeasible (certificate verified, float64 and exact)"
            if w["certificate_verified"]
            else "feasible"
            if w["global_feasible"]
            else "infeasible (certificate NOT verified)"
        )
    )
    passed = bool(w["certificate_verified"] is not False and w["cell_certificates_verified"])
    return ClaimResult(ours, passed, w)


def _a10c_parts(w):
    ca = w.get("category_alpha") or {}
    rs = w["cross_pairs_restored_by_category_alpha"]
    ok = bool(ca.get("verified_feasible"))
    detail = (
        f"max-margin point verified, margin {ca.get('margin', float('nan')):.3g}"
        if ok
        else f"best margin {ca.get('margin', float('nan')):.3g} over {ca.get('rows', 0)} rows; infeasibility "
        "certificate "
        f"{'verified (float64 and exact)' if ca.get('infeasibility_certificate_verified') else 'not verified'}"
    )
    return [
        holds("category-specific α meets every requirement pair jointly", ok, detail, core=True),
        holds(
            "each infeasible cross-pair can be met on its own by category α (per-pair reading)",
            rs["checked"] > 0 and rs["restored"] == rs["checked"],
            f"{rs['restored']}/{rs['checked']} sampled of {rs['of_infeasible']:,} infeasible cross-pairs",
        ),
    ]


@claim(
    "a10_category_alpha",
    "A.10 category-specific α restores feasibility",
    "category-specific blending restores feasibility without benchmark-fitted rates",
    needs_corpus=True,
    kind=EMPIRICAL,
    rule=Rule(
        "reproduced if the max-margin program over α ∈ [0,1]^11 on the same requirement pairs has a "
        "verified feasible point (core: the joint reading) and every sampled infeasible cross-pair is met on "
        "its own; not reproduced if a Farkas certificate proves the joint program infeasible",
        _a10c_parts,
    ),
    diagnose=corpus_diagnosis,
)
def a10_category_alpha(corpus) -> ClaimResult:
    """Category-specific α on A.10's requirement rows (those a global α can meet alone): the
    max-margin point (re-checked in float64 and exactly) or a Farkas certificate of infeasibility
    (float64 and exact). Check: whichever was produced verifies."""
    w = global_alpha_analysis(corpus)
    ca = w.get("category_alpha")
    rs = w["cross_pairs_restored_by_category_alpha"]
    if ca is None:
        why = "no requirement rows with a non-constant category-α row"
        return ClaimResult(f"not measurable: {why}", True, {"not_measurable": why})
    if ca["verified_feasible"]:
        ours = f"category α feasible (margin {ca['margin']:.3g}; point exact-checked: {ca.get('feasible_exact')})"
        passed = bool(ca.get("feasible_exact"))
    else:
        ours = (
            f"category α does not restore joint feasibility: best margin {ca['margin']:.3g} over {ca['rows']} rows, "
            "infeasibility certificate "
            f"{'verified (float64 and exact)' if ca.get('infeasibility_certificate_verified') else 'NOT verified'}"
        )
        passed = bool(ca.get("infeasibility_certificate_verified"))
    ours += f"; {rs['restored']}/{rs['checked']} sampled infeasible cross-pairs met alone"
    return ClaimResult(
        ours,
        passed,
        {
            k: w[k]
            for k in (
                "category_alpha",
                "cross_pairs_restored_by_category_alpha",
                "pairs",
                "satisfiable_alone",
                "margin",
            )
        },
    )


# --------------------------------------------------------------------------- one-hot categories

#: A corpus's categories count as one-hot when at most this share of its fact entries carries a
#: second category of weight > 0.05; A.6 and A.14 are then not comparable (see :func:`one_hot_reason`).
ONE_HOT_MAX_SHARE = 0.05

#: Why A.6's and A.14's diagnoses leave out the ``router_categories`` variant.
ROUTER_TEMPERATURE_TUNED = (
    "not run for this claim: the router's softmax temperature (frcore.bank CATEGORIZE_TEMPERATURE) was chosen to "
    "match A.14's two soft-membership statistics (python -m experiments.router_temperature), so soft router "
    "categories are tuned to the very statistics A.6 and A.14 compare"
)


def multi_category_share(weights: np.ndarray) -> tuple[int, int]:
    """(entries with more than one category of weight > 0.05, entries)."""
    w = np.asarray(weights, dtype=np.float64)
    return int(((w > 0.05).sum(axis=1) > 1).sum()), int(len(w))


def one_hot_reason(weights: np.ndarray, what: str) -> str | None:
    """The ``not_measurable`` reason of A.6 and A.14 when the fact entries' categories are one-hot
    (at most :data:`ONE_HOT_MAX_SHARE` of them carry a second category above 0.05), else None:
    such categories are a suite's single gold labels, not an extractor's soft memberships, and
    ``what`` says what the claim would then compare."""
    n_multi, n = multi_category_share(weights)
    if n == 0 or n_multi > ONE_HOT_MAX_SHARE * n:
        return None
    return (
        f"categories are one-hot: {n_multi} of {n} fact entries ({100 * n_multi / n:.1f}%, at most "
        f"{100 * ONE_HOT_MAX_SHARE:.0f}%) carry a second category above 0.05, so {what}"
    )


def _soft_membership_diagnosis(ctx, claim, result, verdict) -> dict:
    """:func:`corpus_diagnosis` without the ``router_categories`` variant
    (:data:`ROUTER_TEMPERATURE_TUNED`)."""
    return corpus_diagnosis(ctx, claim, result, verdict, skip={"router_categories": ROUTER_TEMPERATURE_TUNED})


# --------------------------------------------------------------------------- A.5 / A.6


def partition_analysis(corpus) -> dict:
    """Within-partition policy variances (behavioral / cognitive / uniform), the exact optimum
    per k, and the A.6 gap; see :mod:`theory.partitions` for the definitions (cached per corpus)."""
    memo = poly.corpus_pairs(corpus)
    if "partitions" not in memo:
        memo["partitions"] = _partition_analysis(corpus)
    return memo["partitions"]


def _partition_analysis(corpus) -> dict:
    policy, primary = part.entry_policies(corpus)
    cnt, s1, s2 = part.category_stats(policy, primary)
    best, rgs, v = part.optimal_by_k(cnt, s1, s2)
    cog = as_arrays().cognitive_type
    v_beh = part.labels_variance(policy, primary)
    v_cog = part.labels_variance(policy, part.grouped(cog, primary))
    v_uni = part.labels_variance(policy, np.zeros_like(primary))
    # certificate: the vectorised enumeration agrees with the direct definition on the three named partitions
    named = {
        "behavioral": np.arange(N_CATEGORIES),
        "cognitive": np.asarray(cog),
        "uniform": np.zeros(N_CATEGORIES, dtype=np.int64),
    }
    fast = {k: float(part.partition_variances(cnt, s1, s2, _as_rgs(lab)[None, :])[0]) for k, lab in named.items()}
    direct = {"behavioral": v_beh, "cognitive": v_cog, "uniform": v_uni}
    agree = all(abs(fast[k] - direct[k]) <= 1e-12 + 1e-9 * abs(direct[k]) for k in named)
    means = np.where(cnt[:, None] > 0, s1 / np.maximum(cnt, 1)[:, None], 0.0)
    excess_measured = part.pairwise_excess(cnt, means, cog)
    excess_table = part.pairwise_excess(cnt, part.table_policies(), cog)
    return {
        "entries": int(len(policy)),
        "category_counts": dict(zip(CATEGORY_NAMES, map(int, cnt))),
        "v_behavioral": v_beh,
        "v_cognitive": v_cog,
        "v_uniform": v_uni,
        "optimal_v": {k: b[0] for k, b in best.items()},
        "optimal_partitions": {k: part.blocks(rgs[j]) for k, (_, j) in best.items()},
        "cognitive_over_optimal_3": v_cog / best[3][0] if best[3][0] > 0 else float("inf"),
        "behavioral_is_optimal_11": bool(abs(v_beh - best[11][0]) <= 1e-12 + 1e-9 * v_beh),
        "partitions_enumerated": int(len(rgs)),
        "enumeration_matches_direct": bool(agree),
        "pairwise_identity_residual": float(abs((v_cog - v_beh) - excess_measured)),
        "gap_measured": (v_cog - v_beh) / v_uni if v_uni > 0 else float("nan"),
        "gap_analytic": excess_table / v_uni if v_uni > 0 else float("nan"),
    }


def _as_rgs(labels: np.ndarray) -> np.ndarray:
    """Category labels → the restricted-growth string of the same partition."""
    seen: dict[int, int] = {}
    return np.array([seen.setdefault(int(g), len(seen)) for g in labels], dtype=np.int8)


def _a5_parts(w):
    return [
        within("behavioral variance", w["v_behavioral"], 3.60e-3, rtol=0.25),
        within("cognitive variance", w["v_cognitive"], 2.09e-2, rtol=0.25),
        within("uniform variance", w["v_uniform"], 4.69e-2, rtol=0.25),
        within("cognitive / optimal 3-partition", w["cognitive_over_optimal_3"], 4.2, rtol=0.25, unit="x"),
    ]


@claim(
    "a5_partition",
    "A.5 behavioral ontology as a variance-minimising partition",
    "within-category policy variance 3.60e-3 (behavioral) / 2.09e-2 (cognitive) / 4.69e-2 (uniform); cognitive "
    "3-partition 4.2x worse than optimal",
    needs_corpus=True,
    kind=EMPIRICAL,
    rule=Rule(
        "reproduced if each of the three variances and the cognitive / optimal-3 ratio is within ±25% of the "
        "paper's. Not compared, because no corpus can fail them: the ordering behavioral ≤ cognitive ≤ uniform "
        '(each partition refines the next, and a refinement never raises the within-group variance), and "the '
        'behavioral partition attains the 11-group optimum" (the only 11-block partition of 11 categories is the '
        "behavioral one).",
        _a5_parts,
    ),
    diagnose=corpus_diagnosis,
)
def a5_partition(corpus) -> ClaimResult:
    """Check: all Bell(11) = 678,570 partitions were enumerated and the vectorised variances
    agree with the direct definition on the behavioral, cognitive and uniform partitions."""
    w = partition_analysis(corpus)
    ok = bool(w["partitions_enumerated"] == 678570 and w["enumeration_matches_direct"])
    ours = (
        f"{w['v_behavioral']:.2e} / {w['v_cognitive']:.2e} / {w['v_uniform']:.2e}; cognitive 3-partition "
        f"{w['cognitive_over_optimal_3']:.1f}x the optimal 3-partition (n={w['entries']} fact entries)"
    )
    return ClaimResult(ours, ok, w)


def _a6_parts(w):
    return [
        holds(
            "measured gap exceeds the analytical bound",
            w["gap_measured"] > w["gap_analytic"] + 1e-9,
            f"ours measured {100 * w['gap_measured']:.1f}% vs analytical {100 * w['gap_analytic']:.1f}%; paper 36.9% "
            "vs 10.1%",
            core=True,
        ),
        within("measured gap", w["gap_measured"], 0.369, atol=0.05, scale=100, unit="%"),
        within("analytical bound", w["gap_analytic"], 0.101, atol=0.05, scale=100, unit="%"),
    ]


def _a6_diagnosis(ctx, claim, result, verdict) -> dict:
    """A.6's diagnosis: the variants (router categories left out: :data:`ROUTER_TEMPERATURE_TUNED`),
    plus the identity that makes the two gaps coincide for one-hot entries (their policy vector is
    their category's table row)."""
    d = _soft_membership_diagnosis(ctx, claim, result, verdict)
    w = result.witness
    n_multi, n = w["multi_category_entries"], w["fact_entries"]
    parts = [
        f"{n_multi} of {n} fact entries carry more than one category; every other entry's policy vector is its "
        f"category's table row, so the measured gap ({100 * w['gap_measured']:.1f}%) can differ from the "
        f"category-mean bound ({100 * w['gap_analytic']:.1f}%) only through those {n_multi} (the paper credits soft "
        "membership for the excess)"
    ]
    gv = d["variants"].get("generated", {})
    if "ours" in gv:
        parts.append(f"on the generated suite (data) {gv['ours']}")
    d["summary"] = "; ".join(parts)
    return d


@claim(
    "a6_gap",
    "A.6 measured partition gap exceeds the analytical lower bound",
    "measured gap 36.9% vs analytical lower bound 10.1%",
    needs_corpus=True,
    kind=EMPIRICAL,
    rule=Rule(
        "not comparable when the fact entries' categories are one-hot (at most 5% of them carry a second "
        "category above 0.05): the two gaps then coincide by the A.6 identity up to those entries, so the "
        "comparison measures the suite's labelling; otherwise reproduced if the measured gap exceeds the "
        "analytical bound (core: soft membership amplifies the spread) and each is within ±5 pp of the paper's",
        _a6_parts,
    ),
    diagnose=_a6_diagnosis,
)
def a6_gap(corpus) -> ClaimResult:
    """Measured gap = (V_cognitive − V_behavioral) / V_uniform on the corpus's soft-membership
    policy vectors (the paper's figures give (2.09e-2 − 3.60e-3)/4.69e-2 = 36.9%). Analytical
    bound = the same excess under the category-mean model — every entry carries its primary
    category's table policy (α_c, λ_c, F_c) — via the weighted pairwise identity
    ΔV = (1/N) Σ_g (1/n_g) Σ_{c<c'∈g} n_c n_c' ‖p_c − p_c'‖², over the same V_uniform.
    With one-hot categories the two coincide exactly (then *not measurable*: :func:`one_hot_reason`).
    Check: the identity holds on the measured category means (residual < 1e-12)."""
    w = partition_analysis(corpus)
    ok = bool(w["pairwise_identity_residual"] < 1e-12)
    ours = f"measured {100 * w['gap_measured']:.1f}% vs analytical {100 * w['gap_analytic']:.1f}%"
    e = corpus.entries()
    wf = e["weights"][e["is_fact"]]
    n_multi, n = multi_category_share(wf)
    out = {
        k: w[k]
        for k in (
            "gap_measured",
            "gap_analytic",
            "pairwise_identity_residual",
            "v_behavioral",
            "v_cognitive",
            "v_uniform",
        )
    }
    out.update(multi_category_entries=n_multi, fact_entries=n)
    why = one_hot_reason(wf, "the measured gap equals the category-mean bound up to those entries (A.6 identity)")
    if why:
        out["not_measurable"] = why
    return ClaimResult(ours, ok, out)


# --------------------------------------------------------------------------- A.14


def soft_membership_stats(weights: np.ndarray) -> dict:
    """Share of entries with primary weight < 0.90 and mean number of categories with weight > 0.05."""
    w = np.asarray(weights, dtype=np.float64)
    return {
        "entries": int(len(w)),
        "share_primary_below_0_90": float((w.max(axis=1) < 0.90).mean()),
        "mean_categories_above_0_05": float((w > 0.05).sum(axis=1).mean()),
    }


def _a14_parts(w):
    f = w["facts"]
    return [
        within(
            "share of entries with primary weight < 0.90",
            f["share_primary_below_0_90"],
            0.668,
            atol=0.05,
            scale=100,
            unit="%",
        ),
        within("categories per entry (weight > 0.05)", f["mean_categories_above_0_05"], 2.0, atol=0.2),
    ]


@claim(
    "a14_corpus",
    "A.14 soft membership is the common case",
    "66.8% of entries have primary weight < 0.90; 2.0 categories per entry",
    needs_corpus=True,
    kind=EMPIRICAL,
    rule=Rule(
        "not comparable when the fact entries' categories are one-hot (at most 5% of them carry a second "
        "category above 0.05): the statistics then count a suite's single gold labels, not an extractor's soft "
        "memberships; otherwise reproduced if the share of fact entries with primary weight < 0.90 is within "
        "±5 pp of 66.8% and the mean number of categories above 0.05 within ±0.2 of 2.0",
        _a14_parts,
    ),
    diagnose=_soft_membership_diagnosis,
)
def a14_corpus(corpus) -> ClaimResult:
    """Over the corpus's unique fact entries (filler turns, which carry OTHER = 1, reported
    apart); one-hot categories are *not measurable* (:func:`one_hot_reason`). Check: the corpus has
    fact entries."""
    e = corpus.entries()
    wf = e["weights"][e["is_fact"]]
    facts = soft_membership_stats(wf)
    allw = soft_membership_stats(e["weights"])
    ours = (
        f"{100 * facts['share_primary_below_0_90']:.1f}% of {facts['entries']} fact entries below 0.90; "
        f"{facts['mean_categories_above_0_05']:.2f} categories per entry"
    )
    n_multi, _ = multi_category_share(wf)
    out: dict = {"facts": facts, "all_edges": allw, "multi_category_entries": n_multi}
    why = one_hot_reason(wf, "the statistics count the suite's labels, not soft memberships")
    if why:
        out["not_measurable"] = why
    return ClaimResult(ours, facts["entries"] > 0, out)


# --------------------------------------------------------------------------- A.15


def _a15_parts(w):
    return [
        holds(
            "category-specific α satisfies every requirement a category α can meet alone",
            w["feasible"],
            f"max-margin t = {w['margin']:.3g} over {w['rows_used']} rows, {w['rows_violated']} violated"
            + (
                ""
                if w["feasible"]
                else "; infeasibility certificate "
                f"{'verified (float64 and exact)' if w.get('infeasibility_certificate_verified') else 'not verified'}"
            ),
            core=True,
        )
    ]


@claim(
    "a15_calibrate",
    "A.15 calibration as a convex feasibility problem over category parameters",
    "calibration is a convex feasibility problem; category-specific parameters satisfy the requirements",
    needs_corpus=True,
    kind=EMPIRICAL,
    rule=Rule(
        "reproduced if the max-margin program over α ∈ [0,1]^11 (λ_c fixed) on every requirement row a "
        "category α can meet on its own is feasible (t ≥ 0, point re-checked); not reproduced if it is "
        "infeasible (t < 0, with a verified Farkas certificate)",
        _a15_parts,
    ),
    diagnose=corpus_diagnosis,
)
def a15_calibrate(corpus) -> ClaimResult:
    """Max-margin α_c from all satisfiable requirement rows (λ_c held fixed; see
    :mod:`theory.calibrate`). Check: the program solved and its slacks re-check with NumPy
    (the reported margin equals the NumPy minimum slack within 1e-6); when infeasible, the
    Farkas certificate verifies in float64 and exactly."""
    from .calibrate import calibrate

    _, cert = calibrate(corpus, pairs=poly.corpus_pairs(corpus)["pairs"], prove=True)
    ok = bool(cert["numpy_check_consistent"] and (cert["feasible"] or cert.get("infeasibility_certificate_verified")))
    ours = (
        f"max-margin α_c over {cert['rows_used']} rows: margin {cert['margin']:.3g} "
        f"({'feasible' if cert['feasible'] else 'infeasible: best worst-case slack'}); "
        f"{cert['rows_violated']} rows violated"
    )
    return ClaimResult(ours, ok, cert)
