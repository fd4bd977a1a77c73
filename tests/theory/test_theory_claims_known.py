"""The corpus claims' logic on corpora whose answers are known by construction.

Every corpus here is a handful of hand-written suites (suite format v1) embedded by
:class:`KnownEmbedder` (tests/support/pair_corpus.py), which maps each question to e₀ and each
edge text to σ·e₀ + √(1−σ²)·e_k (k unique per text), so σ is exactly the number we wrote. Ages
are chosen so that frcore's activation is exactly known: an edge said at ``asked_at`` has age 0
and a = exp(0) = 1; an edge said in 1500 (or 1400) is ~4.6e6 hours old and a = exp(−λ·age)
underflows to exactly 0 in float32 (checked in
:func:`test_construction_sigma_and_activation_exact`). Each persona holds one question with one
(support, gold wrong) pair and nothing else, so the requirement pairs are exactly the ones we
wrote (no nearest-newer distractor exists).

With a ∈ {0, 1}, every global-α interval has a closed form (margin m = 1e-3):

* preservation (x newer: a_s = 0, a_x = 1, Δa = −1):  α ≤ (ε − m)/(1 + ε)
* suppression (x older: a_s = 1, a_x = 0, Δa = +1):   α ≥ (m − ε)/(1 − ε)
* suppression with both edges ancient (Δa = 0, ε < 0): α ≥ 1 + m/|ε| > 1 — no α at all

Expected figures are computed in the tests from these forms, from the ontology table
(``frcore.as_arrays()``) and from the definitions — never by calling the code under test.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from support.pair_corpus import (
    ASKED,
    FIN,
    HEALTH,
    HOB,
    IDENT,
    LOG,
    NEW,
    OBL,
    OLD,
    OLDER,
    PREF,
    SINGLE,
    KnownEmbedder,
    _fact,
    _suite,
    pair_corpus,
)

import frcore
import theory.corpus_claims as cc
from frcore import CATEGORY_NAMES, N_CATEGORIES
from theory import polytope as poly, verdict as vd
from theory._base import CLAIMS
from theory.corpus import build_corpus, rescale_sigma

SETTINGS = settings(
    max_examples=40, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)

M = poly.DEFAULT_MARGIN
assert M == 1e-3  # the closed forms below are written for the default margin


def ci(name: str) -> int:
    return CATEGORY_NAMES.index(name)


# --------------------------------------------------------------------------- construction
# (pair_corpus, KnownEmbedder and the ages: tests/support/pair_corpus.py)

from helpers import BowEmbedder  # noqa: E402  (tests/ is on sys.path)


def pres_hi(eps):  # preservation, a_s = 0, a_x = 1
    return (eps - M) / (1 + eps)


def supp_lo(eps):  # suppression, a_s = 1, a_x = 0
    return (M - eps) / (1 - eps)


# A.10 conflict corpus: P* preservation (old support, new gold wrong), S* suppression.
#   P1 ε = .25 → α ≤ .249/1.25 = .1992        P2 ε = .3 → α ≤ .299/1.3 = .2300
#   P3 ε = −.3 → α ≤ −.301/.7 < 0: no α
#   S1 ε = −.8 → α ≥ .801/1.8 = .4450         S2 ε = −.6 → α ≥ .601/1.6 = .3756
#   S3 ε = −.1 → α ≥ .101/1.1 = .0918 (overlaps P1, P2)
#   S4 both ancient, ε = −.4 → α ≥ 1 + .001/.4 = 1.0025: no α
CONFLICT = [
    ("P1", (FIN, 0.75, OLD), (HOB, 0.50, NEW)),
    ("P2", (HEALTH, 0.90, OLD), (HOB, 0.60, NEW)),
    ("P3", (FIN, 0.20, OLD), (HOB, 0.50, NEW)),
    ("S1", (IDENT, 0.10, NEW), (LOG, 0.90, OLD)),
    ("S2", (IDENT, 0.20, NEW), (LOG, 0.80, OLD)),
    ("S3", (IDENT, 0.50, NEW), (OBL, 0.60, OLD)),
    ("S4", (IDENT, 0.30, OLD), (LOG, 0.70, OLDER)),
]
EPS = {"P1": 0.25, "P2": 0.30, "P3": -0.30, "S1": -0.80, "S2": -0.60, "S3": -0.10, "S4": -0.40}
DACT = {"P1": -1.0, "P2": -1.0, "P3": -1.0, "S1": 1.0, "S2": 1.0, "S3": 1.0, "S4": 0.0}
#: Global α feasible: P1 ∩ S3 = [.0918, .1992].
FEASIBLE = [CONFLICT[0], CONFLICT[5]]


@pytest.fixture(scope="module")
def conflict():
    return pair_corpus(CONFLICT)


@pytest.fixture(scope="module")
def feasible():
    return pair_corpus(FEASIBLE)


@pytest.fixture(scope="module")
def single():
    return pair_corpus(SINGLE)


def test_construction_sigma_and_activation_exact(conflict):
    """The premises of every closed form below: σ is what we wrote, a ∈ {0, 1} exactly, and
    the pairs are exactly one per persona, in persona order."""
    act = conflict.activation()
    for b, (pid, (_, ss, ts), (_, sx, tx)) in enumerate(CONFLICT):
        assert conflict.item_ids[b][:2] == (f"{pid}.s", f"{pid}.x") and conflict.valid[b].sum() == 2
        assert conflict.sim[b, 0] == ss and conflict.sim[b, 1] == sx
        assert act[b, 0] == (1.0 if ts == NEW else 0.0), pid
        assert act[b, 1] == (1.0 if tx == NEW else 0.0), pid
    P = poly.requirement_pairs(conflict)
    assert len(P) == 7
    np.testing.assert_array_equal(P.question, np.arange(7))
    np.testing.assert_allclose(P.eps, [EPS[p] for p, *_ in CONFLICT], atol=1e-15)
    np.testing.assert_array_equal(P.d_act, [DACT[p] for p, *_ in CONFLICT])


# --------------------------------------------------------------------------- requirement pairs


def test_requirement_pair_labels_and_nearest_newer_distractor():
    """Support s (2000); gold wrong x_new (2010) → preservation; gold wrong x_old (1990) →
    suppression; non-gold z1 (2005, σ .3), z2 (2006, σ .6) newer than s → one distractor pair
    with z2 (highest σ), preservation; z3 (1995, σ .9) is older: never a distractor."""
    pid = "r"
    facts = [
        _fact(pid, "s", "r s", FIN, "2000-01-01"),
        _fact(pid, "xn", "r xn", LOG, "2010-01-01"),
        _fact(pid, "xo", "r xo", OBL, "1990-01-01"),
        _fact(pid, "z1", "r z1", HOB, "2005-01-01"),
        _fact(pid, "z2", "r z2", PREF, "2006-01-01"),
        _fact(pid, "z3", "r z3", HEALTH, "1995-01-01"),
    ]
    sigma = {"r s": 0.5, "r xn": 0.4, "r xo": 0.7, "r z1": 0.3, "r z2": 0.6, "r z3": 0.9}
    c = build_corpus([_suite(pid, facts, support=["s"], wrong=["xn", "xo"])], KnownEmbedder(sigma))
    P = poly.requirement_pairs(c)
    assert P.kind.tolist() == [poly.PRESERVATION, poly.SUPPRESSION, poly.PRESERVATION]
    assert P.x.tolist() == [1, 2, 4] and P.s.tolist() == [0, 0, 0] and P.gold.tolist() == [True, True, False]
    np.testing.assert_array_equal(P.sim_x, [0.4, 0.7, 0.6])
    np.testing.assert_array_equal(P.sim_s, [0.5, 0.5, 0.5])
    assert P.cat_s.tolist() == [ci(FIN)] * 3 and P.cat_x.tolist() == [ci(LOG), ci(OBL), ci(PREF)]
    G = poly.requirement_pairs(c, distractors=False)
    assert G.kind.tolist() == [poly.PRESERVATION, poly.SUPPRESSION] and G.gold.all()


# --------------------------------------------------------------------------- A.10 global α


def _hand_intervals():
    """name → (lo, hi) with lo > hi meaning no α (closed forms of the module docstring)."""
    out = {}
    for p in ("P1", "P2", "P3"):
        out[p] = (0.0, pres_hi(EPS[p]))
    for p in ("S1", "S2", "S3"):
        out[p] = (max(0.0, supp_lo(EPS[p])), 1.0)
    out["S4"] = (1 + M / 0.4, 1.0)
    return out


def test_a10_intervals_match_closed_form(conflict):
    lo, hi = poly.alpha_intervals(poly.requirement_pairs(conflict))
    iv = _hand_intervals()
    for k, (pid, *_) in enumerate(CONFLICT):
        elo, ehi = iv[pid]
        if elo <= ehi:
            assert lo[k] == pytest.approx(elo, abs=1e-12) and hi[k] == pytest.approx(ehi, abs=1e-12), pid
        else:
            assert lo[k] > hi[k], pid
    assert pres_hi(0.25) == pytest.approx(0.1992) and supp_lo(-0.8) == pytest.approx(0.445)


def _verify_interval_certificate_by_hand(cert, names):
    """Re-verify a global-α certificate against our own normalised rows, exactly: y ≥ 0 on
    rows a α ≤ c with a = (ε − Δa)/s, c = (ε − m)/s, s = max(|ε − Δa|, |ε − m|) (+ box rows),
    and yᵀc + |yᵀa| < 0; and, on a grid, Σ y (a α − c) > 0 for every α ∈ [0, 1]."""
    rows = {}
    for k, pid in enumerate(names):
        a, c = EPS[pid] - DACT[pid], EPS[pid] - M
        s = max(abs(a), abs(c))
        rows[k] = (a / s, c / s)
    rows["box0"], rows["box1"] = (1.0, 1.0), (-1.0, 0.0)
    y = [Fraction(v) for v in cert["y"]]
    assert all(v > 0 for v in y)
    A = [Fraction(rows[r][0]) for r in cert["rows"]]
    c = [Fraction(rows[r][1]) for r in cert["rows"]]
    assert sum(yi * ci_ for yi, ci_ in zip(y, c)) + abs(sum(yi * ai for yi, ai in zip(y, A))) < 0
    grid = np.linspace(0, 1, 201)
    viol = sum(float(yi) * (float(ai) * grid - float(c_)) for yi, ai, c_ in zip(y, A, c))
    assert np.all(viol > 0)


def test_a10_global_infeasible_known_shares_cells_certificate(conflict):
    res = CLAIMS["a10_global_alpha"].check(conflict)
    w = res.witness
    assert res.passed
    assert (w["pairs"], w["preservation"], w["suppression"], w["satisfiable_alone"]) == (7, 3, 4, 5)
    # satisfiable alone: {P1, P2} x {S1, S2, S3} = 6 cross-pairs; only P1xS3 and P2xS3 overlap
    assert (w["cross_pairs"], w["cross_pairs_infeasible"]) == (6, 4)
    sh = w["pair_rules"]
    assert sh["satisfiable_alone"] == {"cross_pairs": 6, "infeasible": 4, "share_infeasible": pytest.approx(4 / 6)}
    # all pairs: 3 x 4 = 12 cross-pairs, still only the same 2 feasible
    assert sh["all_pairs"] == {"cross_pairs": 12, "infeasible": 10, "share_infeasible": pytest.approx(10 / 12)}
    assert w["share_infeasible"] == pytest.approx(4 / 6)
    assert w["global_feasible"] is False and w["certificate_verified"] is True
    cert = w["certificate"]
    assert cert["float64"] and cert["exact"] and cert["yTc"] + cert["abs_yTA"] < 0
    pair_rows = {r for r in cert["rows"] if isinstance(r, int)}
    assert pair_rows <= {0, 1, 3, 4, 5}  # rows satisfiable alone (pair indices)
    assert pair_rows & {0, 1} and pair_rows & {3, 4, 5}  # needs a preservation and a suppression row
    _verify_interval_certificate_by_hand(cert, [p for p, *_ in CONFLICT])
    # cells: category of the preserved (support) edge x category of the suppressed (stale) edge
    counts = np.zeros((11, 11), dtype=int)
    counts[ci(FIN), ci(LOG)] = 2  # P1 x {S1, S2}: infeasible
    counts[ci(FIN), ci(OBL)] = 1  # P1 x S3: feasible
    counts[ci(HEALTH), ci(LOG)] = 2  # P2 x {S1, S2}: infeasible
    counts[ci(HEALTH), ci(OBL)] = 1  # P2 x S3: feasible
    np.testing.assert_array_equal(np.array(w["cell_counts"]), counts)
    feas = np.zeros((11, 11), dtype=bool)
    feas[ci(FIN), ci(OBL)] = feas[ci(HEALTH), ci(OBL)] = True
    np.testing.assert_array_equal(np.array(w["cell_feasible"]), feas)
    assert (w["cells_populated"], w["cells_feasible"], w["cell_certificates_verified"]) == (4, 2, True)
    v = CLAIMS["a10_global_alpha"].rule.decide(w)
    assert [p.holds for p in v.parts] == [True, False, False, False]
    assert [p.core for p in v.parts] == [True, False, False, False]
    assert v.verdict == vd.PARTLY
    assert "66.7%" in v.parts[1].detail and "83.3%" in v.parts[2].detail


def test_a10_global_feasible_no_certificate(feasible):
    res = CLAIMS["a10_global_alpha"].check(feasible)
    w = res.witness
    assert res.passed
    assert w["global_feasible"] is True and w["certificate_verified"] is None and "certificate" not in w
    # P1 ∩ S3 = [.101/1.1, .249/1.25]; the witness point is the largest lower bound
    assert w["global_alpha_point"] == pytest.approx(supp_lo(-0.1), abs=1e-12)
    assert w["cross_pairs"] == 1 and w["cross_pairs_infeasible"] == 0
    assert w["pair_rules"]["satisfiable_alone"]["share_infeasible"] == 0.0
    assert w["pair_rules"]["all_pairs"]["share_infeasible"] == 0.0
    counts = np.zeros((11, 11), dtype=int)
    counts[ci(FIN), ci(OBL)] = 1
    np.testing.assert_array_equal(np.array(w["cell_counts"]), counts)
    assert (w["cells_populated"], w["cells_feasible"]) == (1, 1)
    v = CLAIMS["a10_global_alpha"].rule.decide(w)
    assert [p.holds for p in v.parts] == [False, False, False, False]
    assert v.verdict == vd.NOT_REPRODUCED and v.parts[0].core


def test_a10_single_category_reproduced(single):
    """P1 x S1 only: every cross-pair infeasible under both rules and the one populated cell
    infeasible — the paper's statement holds on this corpus."""
    w = CLAIMS["a10_global_alpha"].check(single).witness
    assert w["pair_rules"]["satisfiable_alone"]["share_infeasible"] == 1.0
    assert w["pair_rules"]["all_pairs"]["share_infeasible"] == 1.0
    assert w["certificate_verified"] is True and (w["cells_populated"], w["cells_feasible"]) == (1, 0)
    assert np.array(w["cell_counts"])[ci(FIN), ci(FIN)] == 1
    assert CLAIMS["a10_global_alpha"].rule.decide(w).verdict == vd.REPRODUCED


# --------------------------------------------------------------------------- A.10 category α, A.15


def _hand_category_rows(spec, names=None):
    """G α ≤ h per pair: −(a_s − σ_s) α_{c(s)} + (a_x − σ_x) α_{c(x)} ≤ ε − m (a ∈ {0, 1})."""
    rows = []
    for pid, (cs, ss, ts), (cx, sx, tx) in spec:
        if names is not None and pid not in names:
            continue
        g = np.zeros(N_CATEGORIES)
        g[ci(cs)] -= (1.0 if ts == NEW else 0.0) - ss
        g[ci(cx)] += (1.0 if tx == NEW else 0.0) - sx
        rows.append((g, ss - sx - M))
    return np.array([r[0] for r in rows]), np.array([r[1] for r in rows])


def test_a10_category_alpha_restores(conflict):
    """Preservation rows use α_FIN/α_HEALTH and α_HOB, suppression rows α_IDENT and
    α_LOG/α_OBL: disjoint variables, so category α meets every row (α = 0 on the first group,
    1 on the second is one solution)."""
    res = CLAIMS["a10_category_alpha"].check(conflict)
    assert res.passed
    ca = res.witness["category_alpha"]
    assert ca["verified_feasible"] and ca["feasible_exact"] and ca["rows"] == 5 and ca["margin"] > 0
    alpha = np.array([ca["alpha"][n] for n in CATEGORY_NAMES])
    G, h = _hand_category_rows(CONFLICT, {"P1", "P2", "S1", "S2", "S3"})
    assert np.all(G @ alpha <= h + 1e-12) and np.all((alpha >= 0) & (alpha <= 1))
    slack = (h - G @ alpha) / np.linalg.norm(G, axis=1)
    assert slack.min() == pytest.approx(ca["margin"], abs=1e-6)
    rs = res.witness["cross_pairs_restored_by_category_alpha"]
    assert rs == {"checked": 4, "restored": 4, "of_infeasible": 4}
    v = CLAIMS["a10_category_alpha"].rule.decide(res.witness)
    assert [p.holds for p in v.parts] == [True, True] and v.verdict == vd.REPRODUCED


def test_a10_category_alpha_on_feasible_corpus_is_partly(feasible):
    res = CLAIMS["a10_category_alpha"].check(feasible)
    rs = res.witness["cross_pairs_restored_by_category_alpha"]
    assert res.passed and rs == {"checked": 0, "restored": 0, "of_infeasible": 0}
    v = CLAIMS["a10_category_alpha"].rule.decide(res.witness)
    assert [p.holds for p in v.parts] == [True, False] and v.verdict == vd.PARTLY


def _verify_category_certificate_by_hand(proof, G, h, row_names):
    """Exact re-check of an 11-D Farkas proof against our own rows (box rows box0..box10:
    α_j ≤ 1; box11..box21: −α_j ≤ 0)."""
    n = N_CATEGORIES
    ys, A, c = [], [], []
    for r, yv in zip(proof["rows"], proof["y"]):
        if isinstance(r, int):
            k = row_names[r]
            A.append(G[k]), c.append(h[k])
        else:
            j = int(r[3:])
            e = np.zeros(n)
            e[j % n] = 1.0 if j < n else -1.0
            A.append(e), c.append(1.0 if j < n else 0.0)
        ys.append(Fraction(yv))
    assert all(y > 0 for y in ys)
    ytc = sum(y * Fraction(float(ci_)) for y, ci_ in zip(ys, c))
    l1 = sum(abs(sum(y * Fraction(float(a[j])) for y, a in zip(ys, A))) for j in range(n))
    assert ytc + l1 < 0


def test_a10_category_alpha_provably_not_restored(single):
    """All edges FINANCIAL: the rows are α ≤ .249/1.25 and α ≥ .801/1.8 in α_FIN alone."""
    res = CLAIMS["a10_category_alpha"].check(single)
    assert res.passed
    ca = res.witness["category_alpha"]
    lo, hi = supp_lo(-0.8), pres_hi(0.25)
    assert not ca["verified_feasible"] and ca["infeasibility_certificate_verified"]
    assert ca["margin"] == pytest.approx(-(lo - hi) / 2, abs=1e-6)  # max-margin: the midpoint
    assert ca["alpha"][FIN] == pytest.approx((lo + hi) / 2, abs=1e-5)
    G, h = _hand_category_rows(SINGLE)
    _verify_category_certificate_by_hand(ca["infeasibility_certificate"], G, h, {0: 0, 1: 1})
    assert res.witness["cross_pairs_restored_by_category_alpha"] == {"checked": 1, "restored": 0, "of_infeasible": 1}
    v = CLAIMS["a10_category_alpha"].rule.decide(res.witness)
    assert [p.holds for p in v.parts] == [False, False] and v.verdict == vd.NOT_REPRODUCED


def test_a15_calibrate_feasible(conflict):
    """Under category α, S4 (.3 α_IDENT − .7 α_LOG ≤ −.401) becomes satisfiable alone; only
    P3 ((.2 + .5) α ≤ −.301) is not: 6 rows used, jointly feasible."""
    res = CLAIMS["a15_calibrate"].check(conflict)
    w = res.witness
    assert res.passed and w["numpy_check_consistent"]
    assert (w["pairs"], w["rows_used"], w["rows_unsatisfiable_alone"], w["rows_constant"]) == (7, 6, 1, 0)
    assert w["feasible"] and w["rows_violated"] == 0 and w["margin"] > 0
    alpha = np.array([w["alpha"][n] for n in CATEGORY_NAMES])
    G, h = _hand_category_rows(CONFLICT, {"P1", "P2", "S1", "S2", "S3", "S4"})
    assert np.all(G @ alpha <= h + 1e-12)
    v = CLAIMS["a15_calibrate"].rule.decide(w)
    assert [p.holds for p in v.parts] == [True] and v.verdict == vd.REPRODUCED


def test_a15_calibrate_infeasible(single):
    res = CLAIMS["a15_calibrate"].check(single)
    w = res.witness
    lo, hi = supp_lo(-0.8), pres_hi(0.25)
    assert res.passed and not w["feasible"] and w["infeasibility_certificate_verified"]
    assert (w["rows_used"], w["rows_violated"]) == (2, 2)
    assert w["margin"] == pytest.approx(-(lo - hi) / 2, abs=1e-6)
    G, h = _hand_category_rows(SINGLE)
    _verify_category_certificate_by_hand(w["infeasibility_certificate"], G, h, {0: 0, 1: 1})  # pair indices
    v = CLAIMS["a15_calibrate"].rule.decide(w)
    assert [p.holds for p in v.parts] == [False] and v.verdict == vd.NOT_REPRODUCED


# --------------------------------------------------------------------------- A.7.1, A.2.4


def test_a7_1_medians_known(conflict):
    """FINANCIAL preservation pairs with an informative upper bound: P1 (.1992) and P3
    (bound < 0, reported as 0) → median .0996. LOGISTICAL suppression pairs with lo > 0:
    S1 (.4450), S2 (.3756), S4 (1.0025, above 1: reported as is) → median .4450."""
    res = CLAIMS["a7_1_witness"].check(conflict)
    w = res.witness
    assert res.passed and (w["preservation_pairs"], w["suppression_pairs"]) == (2, 3)
    assert w["alpha_upper_median"] == pytest.approx(pres_hi(0.25) / 2, abs=1e-12)
    assert w["alpha_lower_median"] == pytest.approx(supp_lo(-0.8), abs=1e-12)
    v = CLAIMS["a7_1_witness"].rule.decide(w)
    # trade-off (.0996 < .445 ≤ 1): holds; .0996 within .065 ± .05: holds; .445 vs .138 ± .05: fails
    assert [p.holds for p in v.parts] == [True, True, False] and v.verdict == vd.PARTLY


def test_a7_1_suppression_bound_above_one_is_no_trade_off():
    """P1 (α ≤ .1992) against S4 alone (both edges ancient: α ≥ 1 + .001/.4 = 1.0025): the median
    suppression bound exceeds the preservation bound, but no α ∈ [0, 1] suppresses S4 at all, so
    there is no trade-off and the core part fails."""
    spec = [CONFLICT[0], CONFLICT[6]]
    assert (spec[0][0], spec[1][0]) == ("P1", "S4")
    w = CLAIMS["a7_1_witness"].check(pair_corpus(spec)).witness
    assert (w["preservation_pairs"], w["suppression_pairs"]) == (1, 1)
    assert w["alpha_lower_median"] == pytest.approx(1 + M / 0.4, abs=1e-9) and w["alpha_lower_median"] > 1
    assert w["alpha_upper_median"] == pytest.approx(pres_hi(0.25), abs=1e-12)
    v = CLAIMS["a7_1_witness"].rule.decide(w)
    assert v.parts[0].core and [p.holds for p in v.parts] == [False, False, False]
    assert v.verdict == vd.NOT_REPRODUCED and "no trade-off" in v.reason


def test_a7_1_not_measurable_without_logistical(feasible):
    """P1 is the only FINANCIAL preservation pair and there is no LOGISTICAL suppression pair:
    the check runs, the witness says why nothing can be measured, the verdict is not comparable."""
    res = CLAIMS["a7_1_witness"].check(feasible)
    w = res.witness
    assert res.passed and (w["preservation_pairs"], w["suppression_pairs"]) == (1, 0)
    assert w["alpha_upper_median"] == pytest.approx(pres_hi(0.25), abs=1e-12) and math.isnan(w["alpha_lower_median"])
    assert w["not_measurable"] == "1 FINANCIAL preservation, 0 LOGISTICAL suppression pairs"
    v = CLAIMS["a7_1_witness"].rule.decide(w)
    assert v.verdict == vd.NOT_COMPARABLE and v.parts == () and "not measurable" in v.reason


def test_a2_4_on_conflict_corpus(conflict):
    """|ε| = .25 .3 .3 .8 .6 .1 .4 → median .3; |Δa| = 1 (six pairs) and 0 (S4) → median 1;
    misordered by σ (ε < 0): P3 S1 S2 S3 S4, of which P3 (Δa = −1) and S4 (Δa = 0) are
    unorderable; finite α_required = .8/1.8, .6/1.6, .1/1.1 → median .375."""
    res = CLAIMS["a2_4_regime"].check(conflict)
    w = res.witness
    assert res.passed and w["pairs"] == 7 and (w["misordered"], w["unorderable"]) == (5, 2)
    assert w["median_abs_eps"] == pytest.approx(0.3, abs=1e-12)
    assert w["median_abs_dact"] == 1.0
    assert w["median_alpha_required"] == pytest.approx(0.6 / 1.6, abs=1e-12)
    assert w["same_regime"] is False
    v = CLAIMS["a2_4_regime"].rule.decide(w)
    assert [p.holds for p in v.parts] == [False, False] and v.verdict == vd.NOT_REPRODUCED


def _hours_between(a: str, b: str) -> float:
    return (dt.date.fromisoformat(b) - dt.date.fromisoformat(a)).days * 24.0


#: A.2.4 in the paper's regime: months-old FINANCIAL pairs, stale x older than support s,
#: σ misorders them by .05 / .06 / .07 (median .06).
REGIME = [
    ("R1", "2025-01-01", "2024-12-01", 0.45),
    ("R2", "2025-02-01", "2024-12-01", 0.44),
    ("R3", "2025-03-01", "2024-11-01", 0.43),
]


def test_a2_4_regime_reproduced_known_ages():
    spec = [(pid, (FIN, ss, ts), (FIN, 0.50, tx)) for pid, ts, tx, ss in REGIME]
    corpus = pair_corpus(spec)
    # a = exp(−λ_FIN · age_eff); no turns and a session on asked_at: the inter-session age
    # equals the absolute one and no messages → age_eff = (clock_abs + clock_inter) · hours
    o = frcore.as_arrays()
    lam, ck = float(o.rates[ci(FIN)]), float(o.clocks[ci(FIN), 0] + o.clocks[ci(FIN), 1])
    a = lambda said: math.exp(-lam * ck * _hours_between(said, ASKED))  # noqa: E731
    dact = [a(ts) - a(tx) for _, ts, tx, _ in REGIME]
    eps = [0.05, 0.06, 0.07]
    req = [e / (d + e) for e, d in zip(eps, dact)]  # −ε / (Δa − ε) with ε = −e
    res = CLAIMS["a2_4_regime"].check(corpus)
    w = res.witness
    assert res.passed and (w["pairs"], w["misordered"], w["unorderable"]) == (3, 3, 0)
    assert w["median_abs_eps"] == pytest.approx(0.06, abs=1e-12)
    assert w["median_abs_dact"] == pytest.approx(float(np.median(dact)), rel=1e-4)
    assert w["median_abs_dact"] < 1e-3
    assert w["median_alpha_required"] == pytest.approx(float(np.median(req)), abs=1e-9)
    assert w["same_regime"] is True
    v = CLAIMS["a2_4_regime"].rule.decide(w)
    assert [p.holds for p in v.parts] == [True, True] and v.verdict == vd.REPRODUCED


# --------------------------------------------------------------------------- A.5 / A.6


ONEHOT_COUNTS = {IDENT: 2, FIN: 1, LOG: 3, OBL: 1, HOB: 2}  # cognitive types 1, 1, 0, 0, 2


def _policy_corpus(pid, entries):
    """One persona whose facts carry the given category weights (one entry each)."""
    facts, sigma = [], {}
    for k, cats in enumerate(entries):
        facts.append(_fact(pid, f"f{k}", f"{pid} f{k}", cats, "2025-06-01"))
        sigma[f"{pid} f{k}"] = 0.5
    return build_corpus([_suite(pid, facts, support=["f0"])], KnownEmbedder(sigma))


def _table_policy(weights: dict) -> np.ndarray:
    """(α, λ_eff, F) of a soft entry from the ontology table (harmonic λ)."""
    o = frcore.as_arrays()
    tot = sum(weights.values())
    w = {c: v / tot for c, v in weights.items()}
    return np.array(
        [
            sum(v * o.alpha[ci(c)] for c, v in w.items()),
            1.0 / sum(v / o.rates[ci(c)] for c, v in w.items()),
            sum(v * o.floors[ci(c)] for c, v in w.items()),
        ]
    )


def _variance(points, labels) -> float:
    """(1/N) Σ_g Σ_{e∈g} ‖p_e − p̄_g‖², from the definition."""
    total = 0.0
    for g in set(labels):
        ps = [p for p, lab in zip(points, labels) if lab == g]
        mu = sum(ps) / len(ps)
        total += sum(float(((p - mu) ** 2).sum()) for p in ps)
    return total / len(points)


def _brute_optimum(points, cats, k) -> float:
    """Best V over partitions of the populated categories into ≤ k blocks (empty categories
    can fill the remaining blocks of an 11-category k-partition)."""
    pop = sorted(set(cats))
    best = math.inf
    for lab in itertools.product(range(k), repeat=len(pop)):
        m = dict(zip(pop, lab))
        best = min(best, _variance(points, [m[c] for c in cats]))
    return best


@pytest.fixture(scope="module")
def onehot():
    entries = [c for c, n in ONEHOT_COUNTS.items() for _ in range(n)]
    return _policy_corpus("h", [{c: 1.0} for c in entries]), entries


def test_a5_a6_onehot_known_variances(onehot):
    corpus, entries = onehot
    o = frcore.as_arrays()
    pts = [_table_policy({c: 1.0}) for c in entries]
    v_beh = 0.0  # one-hot: every entry of a category carries the same table row
    v_cog = _variance(pts, [int(o.cognitive_type[ci(c)]) for c in entries])
    v_uni = _variance(pts, [0] * len(entries))
    opt = {k: _brute_optimum(pts, entries, k) for k in range(1, 6)}
    res = CLAIMS["a5_partition"].check(corpus)
    w = res.witness
    assert res.passed and w["entries"] == 9 and w["partitions_enumerated"] == 678570
    assert w["category_counts"] == {n: ONEHOT_COUNTS.get(n, 0) for n in CATEGORY_NAMES}
    assert w["v_behavioral"] == pytest.approx(v_beh, abs=1e-15)
    assert w["v_cognitive"] == pytest.approx(v_cog, rel=1e-12)
    assert w["v_uniform"] == pytest.approx(v_uni, rel=1e-12)
    assert 0 < v_cog < v_uni
    for k in range(1, 12):
        assert w["optimal_v"][k] == pytest.approx(opt.get(k, 0.0), rel=1e-9, abs=1e-15), k
    assert w["cognitive_over_optimal_3"] == pytest.approx(v_cog / opt[3], rel=1e-9)
    assert w["behavioral_is_optimal_11"] and w["enumeration_matches_direct"]
    assert w["pairwise_identity_residual"] < 1e-12
    gap = (v_cog - v_beh) / v_uni
    assert w["gap_measured"] == pytest.approx(gap, rel=1e-9)
    assert w["gap_analytic"] == pytest.approx(gap, rel=1e-9)  # one-hot: measured == analytic
    v = CLAIMS["a5_partition"].rule.decide(w)
    expect = [
        abs(v_beh - 3.60e-3) <= 0.25 * 3.60e-3,
        abs(v_cog - 2.09e-2) <= 0.25 * 2.09e-2,
        abs(v_uni - 4.69e-2) <= 0.25 * 4.69e-2,
        abs(v_cog / opt[3] - 4.2) <= 0.25 * 4.2,
    ]
    assert [p.holds for p in v.parts] == expect and not any(p.core for p in v.parts)
    assert v.verdict == (vd.REPRODUCED if all(expect) else vd.PARTLY if any(expect) else vd.NOT_REPRODUCED)
    # one-hot categories (0 of 9 entries carry a second one): A.6 and A.14 are not comparable
    r6 = CLAIMS["a6_gap"].check(corpus)
    assert r6.passed and r6.witness["gap_measured"] == pytest.approx(gap, rel=1e-9)
    assert (r6.witness["multi_category_entries"], r6.witness["fact_entries"]) == (0, 9)
    v6 = CLAIMS["a6_gap"].rule.decide(r6.witness)
    assert v6.verdict == vd.NOT_COMPARABLE and v6.parts == () and "0 of 9 fact entries" in v6.reason
    r14 = CLAIMS["a14_corpus"].check(corpus)
    assert r14.passed and r14.witness["multi_category_entries"] == 0
    v14 = CLAIMS["a14_corpus"].rule.decide(r14.witness)
    assert v14.verdict == vd.NOT_COMPARABLE and "one-hot" in v14.reason


@SETTINGS
@given(
    st.lists(
        st.tuples(st.integers(0, N_CATEGORIES - 1), *[st.floats(-1.0, 1.0, allow_nan=False)] * 3),
        min_size=2,
        max_size=30,
    )
)
def test_a5_order_holds_on_every_corpus_so_its_rule_does_not_compare_it(rows):
    """A refinement never raises the within-group variance: behavioral ≤ cognitive ≤ uniform for
    any policy vectors and primary categories (so the order is no part of A.5's rule)."""
    from theory.partitions import labels_variance

    cats = np.array([r[0] for r in rows])
    pts = np.array([r[1:] for r in rows], dtype=np.float64)
    cog = np.asarray(frcore.as_arrays().cognitive_type)[cats]
    v_beh, v_cog, v_uni = (labels_variance(pts, g) for g in (cats, cog, np.zeros_like(cats)))
    assert v_beh <= v_cog + 1e-12 and v_cog <= v_uni + 1e-12


@pytest.mark.parametrize("n_soft, comparable", [(0, False), (1, False), (2, True)])
def test_a6_a14_one_hot_threshold(n_soft, comparable):
    """30 fact entries: at most 5% (1 of 30) with a second category above 0.05 is one-hot (not
    comparable); 2 of 30 (6.7%) is not. A second weight of exactly 0.05 does not count."""
    entries = [{FIN: 0.6, LOG: 0.4}] * n_soft + [{FIN: 0.95, LOG: 0.05}] + [{LOG: 1.0}] * (29 - n_soft)
    corpus = _policy_corpus(f"t{n_soft}", entries)
    for cid in ("a6_gap", "a14_corpus"):
        res = CLAIMS[cid].check(corpus)
        assert res.passed and res.witness["multi_category_entries"] == n_soft, cid
        v = CLAIMS[cid].rule.decide(res.witness)
        assert (v.verdict != vd.NOT_COMPARABLE) == comparable, (cid, v.reason)


def test_a5_a6_soft_membership_known():
    """FIN one-hot, FIN .6 / LOG .4 (primary FIN), LOG x 2, IDENT: V_behavioral > 0 is the FIN
    spread; the measured gap differs from the category-mean (analytic) one."""
    soft = {FIN: 0.6, LOG: 0.4}
    entries = [{FIN: 1.0}, soft, {LOG: 1.0}, {LOG: 1.0}, {IDENT: 1.0}]
    prim = [FIN, FIN, LOG, LOG, IDENT]
    corpus = _policy_corpus("sm", entries)
    o = frcore.as_arrays()
    pts = [_table_policy(e) for e in entries]
    v_beh = _variance(pts, prim)
    assert v_beh == pytest.approx(float(((pts[0] - pts[1]) ** 2).sum()) / 2 / 5, rel=1e-12)
    v_cog = _variance(pts, [int(o.cognitive_type[ci(c)]) for c in prim])
    v_uni = _variance(pts, [0] * 5)
    # analytic: table rows, counts IDENT 1, FIN 2 in cognitive type 1; LOG 2 alone in type 0
    t = {c: _table_policy({c: 1.0}) for c in (IDENT, FIN, LOG)}
    excess_table = (1 * 2 * float(((t[IDENT] - t[FIN]) ** 2).sum()) / 3) / 5
    w = CLAIMS["a5_partition"].check(corpus).witness
    assert w["v_behavioral"] == pytest.approx(v_beh, rel=1e-9)
    assert w["v_cognitive"] == pytest.approx(v_cog, rel=1e-9)
    assert w["v_uniform"] == pytest.approx(v_uni, rel=1e-9)
    r6 = CLAIMS["a6_gap"].check(corpus)
    assert r6.passed
    assert r6.witness["gap_measured"] == pytest.approx((v_cog - v_beh) / v_uni, rel=1e-9)
    assert r6.witness["gap_analytic"] == pytest.approx(excess_table / v_uni, rel=1e-9)
    assert r6.witness["gap_measured"] != pytest.approx(r6.witness["gap_analytic"], rel=1e-6)
    assert "not_measurable" not in r6.witness  # 1 of 5 entries soft: comparable


# --------------------------------------------------------------------------- A.14


def test_a14_soft_membership_known():
    """Facts: primary weights .6 / 1 / .92 / .5 / .4 → 3 of 5 below .90; categories above .05:
    2 + 1 + 2 + 2 + 3 = 10 → 2.0 per entry. Two filler user turns (OTHER = 1) are reported
    only among all edges: 3 of 7 below .90, 12/7 categories. The assistant turn is no edge."""
    pid = "m"
    cats = [
        {FIN: 0.6, LOG: 0.4},
        {IDENT: 1.0},
        {HEALTH: 0.92, HOB: 0.08},
        {PREF: 0.5, HOB: 0.46, OBL: 0.04},
        {LOG: 0.3, OBL: 0.3, FIN: 0.4},
    ]
    facts = [_fact(pid, f"f{k}", f"m f{k}", c, "2025-05-01") for k, c in enumerate(cats)]
    turns = [
        {"id": f"m.s2.t{j}", "session": 2, "said_at": "2025-06-01", "role": r, "text": f"m t{j}"}
        for j, r in ((1, "user"), (2, "assistant"), (3, "user"))
    ]
    sessions = [
        {"id": 1, "date": "2025-05-01", "type": "critical", "topic": "x"},
        {"id": 2, "date": "2025-06-01", "type": "filler", "topic": "y"},
    ]
    sigma = {f"m f{k}": 0.5 for k in range(5)} | {"m t1": 0.2, "m t3": 0.3}
    corpus = build_corpus([_suite(pid, facts, support=["f0"], turns=turns, sessions=sessions)], KnownEmbedder(sigma))
    res = CLAIMS["a14_corpus"].check(corpus)
    assert res.passed
    assert res.witness["facts"] == {
        "entries": 5,
        "share_primary_below_0_90": pytest.approx(0.6),
        "mean_categories_above_0_05": pytest.approx(2.0),
    }
    assert res.witness["all_edges"] == {
        "entries": 7,
        "share_primary_below_0_90": pytest.approx(3 / 7),
        "mean_categories_above_0_05": pytest.approx(12 / 7),
    }
    v = CLAIMS["a14_corpus"].rule.decide(res.witness)
    assert [p.holds for p in v.parts] == [False, True] and v.verdict == vd.PARTLY  # 60% vs 66.8% ± 5 pp


# --------------------------------------------------------------------------- corpus variants


def test_rescale_sigma_known():
    """Persona a: σ .2 / .4 / .5 → .4 / .8 / 1; persona b: σ 0 / 0 stays 0 (no division)."""
    facts_a = [_fact("a", f"f{k}", f"a f{k}", FIN, "2025-06-01") for k in range(3)]
    facts_b = [_fact("b", f"f{k}", f"b f{k}", LOG, "2025-06-01") for k in range(2)]
    sigma = {"a f0": 0.2, "a f1": 0.4, "a f2": 0.5, "b f0": 0.0, "b f1": 0.0}
    c = build_corpus([_suite("a", facts_a, support=["f2"]), _suite("b", facts_b, support=["f0"])], KnownEmbedder(sigma))
    before = c.sim.copy()
    r = rescale_sigma(c)
    assert r.sim.shape == c.sim.shape and r.sim.shape[1] > 3  # there is padding
    np.testing.assert_allclose(r.sim[0, :3], [0.4, 0.8, 1.0], rtol=1e-15)
    assert r.sim[0, :3].max() == 1.0
    assert r.sim[0, 0] / r.sim[0, 1] == pytest.approx(c.sim[0, 0] / c.sim[0, 1], rel=1e-15)  # ratios kept
    np.testing.assert_array_equal(r.sim[1], 0.0)
    np.testing.assert_array_equal(r.sim[~r.valid], c.sim[~c.valid])  # padding untouched (0)
    np.testing.assert_array_equal(np.asarray(r.cands.sim), r.sim.astype(np.float32))
    np.testing.assert_array_equal(c.sim, before)  # the original corpus is not modified
    for f in ("valid", "weights", "ages", "said_at", "state", "support", "wrong"):
        np.testing.assert_array_equal(getattr(r, f), getattr(c, f), err_msg=f)
    np.testing.assert_array_equal(np.asarray(r.cands.weights), np.asarray(c.cands.weights))


def test_router_categories_soft_and_only_facts_change():
    pid = "rt"
    texts = [
        "my salary pays for the flight trip",
        "my doctor said my health is fine and i like tea",
        "the exam deadline and the project launch",
        "i love my family and my partner",
    ]
    facts = [_fact(pid, f"f{k}", t, OBL, "2025-05-01") for k, t in enumerate(texts)]
    turns = [{"id": "rt.s2.t1", "session": 2, "said_at": "2025-06-01", "role": "user", "text": "salary flight doctor"}]
    sessions = [
        {"id": 1, "date": "2025-05-01", "type": "critical", "topic": "x"},
        {"id": 2, "date": "2025-06-01", "type": "filler", "topic": "y"},
    ]
    s = _suite(pid, facts, support=["f0"], wrong=["f1"], turns=turns, sessions=sessions)
    gold = build_corpus([s], BowEmbedder())
    rout = build_corpus([s], BowEmbedder(), categories="router")
    fact = gold.valid & gold.is_fact
    assert fact.sum() == 4 and (gold.valid & ~gold.is_fact).sum() == 1
    np.testing.assert_allclose(rout.weights.sum(-1), 1.0, atol=1e-12)
    assert np.all(rout.weights >= 0)
    assert ((rout.weights[fact] > 0).sum(-1) >= 2).any()  # soft
    assert not np.array_equal(rout.weights[fact], gold.weights[fact])
    np.testing.assert_array_equal(rout.weights[~fact], gold.weights[~fact])  # filler turn and padding
    for f in ("sim", "valid", "is_fact", "ages", "said_at", "state", "support", "wrong", "confidence", "numeric"):
        np.testing.assert_array_equal(getattr(rout, f), getattr(gold, f), err_msg=f)
    with pytest.raises(ValueError, match="categories"):
        build_corpus([s], BowEmbedder(), categories="llm")


# --------------------------------------------------------------------------- theory.verdict


def P(name, ok, core=False):
    return vd.Part(name, ok, "d", core)


def test_decide_cases():
    assert vd.decide([P("a", True), P("b", True, core=True)]).verdict == vd.REPRODUCED
    assert vd.decide([P("a", False), P("b", False)]).verdict == vd.NOT_REPRODUCED
    assert vd.decide([P("a", True), P("b", False, core=True)]).verdict == vd.NOT_REPRODUCED
    assert vd.decide([P("a", True, core=True), P("b", False)]).verdict == vd.PARTLY
    assert vd.decide([P("a", True), P("b", False)]).verdict == vd.PARTLY
    v = vd.decide([P("first", True), P("second", False)])
    assert v.reason == "first holds (d); second does not hold (d)" and len(v.parts) == 2
    with pytest.raises(ValueError):
        vd.decide([])
    with pytest.raises(ValueError):
        vd.Verdict("maybe", "x")


@SETTINGS
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=6))
def test_decide_property(flags):
    parts = [P(f"p{i}", h, c) for i, (h, c) in enumerate(flags)]
    v = vd.decide(parts).verdict
    held = sum(h for h, _ in flags)
    if held == len(flags):
        assert v == vd.REPRODUCED
    elif held == 0 or any(c and not h for h, c in flags):
        assert v == vd.NOT_REPRODUCED
    else:
        assert v == vd.PARTLY


def test_within_tolerance_edges():
    assert vd.within("x", 0.15, 0.10, atol=0.05).holds  # exactly on the edge
    assert not vd.within("x", 0.15 + 1e-9, 0.10, atol=0.05).holds
    assert vd.within("x", 0.05, 0.10, atol=0.05).holds and not vd.within("x", 0.05 - 1e-9, 0.10, atol=0.05).holds
    assert vd.within("x", 0.1 + 0.2, 0.3, atol=0.0).holds  # 1e-12 slack absorbs rounding
    assert vd.within("x", 1.25, 1.0, rtol=0.25).holds and not vd.within("x", 1.2501, 1.0, rtol=0.25).holds
    assert vd.within("x", -1.25, -1.0, rtol=0.25).holds  # rtol scales |paper|
    assert not vd.within("x", 0.0, 0.0 + 1e-9, rtol=0.25).holds
    for bad in (None, float("nan"), float("inf")):
        assert not vd.within("x", bad, 0.1, atol=10.0).holds
    p = vd.within("share", 0.9, 0.998, atol=0.05, scale=100, unit="%", core=True)
    assert p.core and not p.holds and p.detail == "ours 90%, paper 99.8%, tolerance ±5%"
    assert vd.within("r", 4.0, 4.2, rtol=0.25).detail.endswith("tolerance ±25%")
    with pytest.raises(ValueError):
        vd.within("x", 0.1, 0.1)
    with pytest.raises(ValueError):
        vd.within("x", 0.1, 0.1, atol=0.1, rtol=0.1)


def test_rule_forms():
    r = vd.Rule("never comparable", not_comparable="LLM judge")
    v = r.decide({"anything": 1})
    assert v.verdict == vd.NOT_COMPARABLE and v.reason == "LLM judge" and v.parts == ()
    r2 = vd.Rule("t", lambda w: [vd.holds("big", w["x"] > 1, "x", core=True), vd.within("x", w["x"], 2.0, atol=1.5)])
    assert r2.decide({"x": 2.2}).verdict == vd.REPRODUCED
    assert r2.decide({"x": 0.8}).verdict == vd.NOT_REPRODUCED  # core fails, the other part holds
    assert r2.decide({"x": 3.6}).verdict == vd.PARTLY  # core holds, the other part fails
    assert r2.decide({"x": -0.6}).verdict == vd.NOT_REPRODUCED  # none holds
    with pytest.raises(ValueError):
        vd.Rule("t")
    with pytest.raises(ValueError):
        vd.Rule("t", lambda w: [], not_comparable="x")
    s = vd.statements("t", ["a", "b"], core=["a"])
    v = s.decide({"statement": {"a": True, "b": False}})
    assert v.verdict == vd.PARTLY and v.parts[0].core and not v.parts[1].core
    assert s.decide({"statement": {"a": False, "b": True}}).verdict == vd.NOT_REPRODUCED
    with pytest.raises(KeyError):
        s.decide({"statement": {"a": True}})
    nm = r2.decide({"x": 2.2, "not_measurable": "no pairs"})  # a witness that cannot be measured
    assert nm.verdict == vd.NOT_COMPARABLE and nm.reason == "not measurable on this data: no pairs"
    assert r2.decide({"x": 2.2, "not_measurable": ""}).verdict == vd.REPRODUCED  # empty reason: measured
    u = vd.unverified(vd.FAIL, "why")
    assert u.verdict == vd.NOT_COMPARABLE and "failed (why)" in u.reason
    assert "errored" in vd.unverified(vd.ERROR, "e").reason


# --------------------------------------------------------------------------- exact re-checks


def _interval_system():
    """α ≤ .2 and α ≥ .5 (as −α ≤ −.5), box rows appended: empty."""
    A = np.array([[1.0], [-1.0], [1.0], [-1.0]])
    c = np.array([0.2, -0.5, 1.0, 0.0])
    return A, c


def test_farkas_exact_valid_and_tampered():
    A, c = _interval_system()
    y = np.array([1.0, 1.0, 0.0, 0.0])  # yᵀA = 0, yᵀc = −.3
    assert poly.check_farkas(A, c, y) and poly.check_farkas_exact(A, c, y)
    for bad in (
        -y,
        np.zeros(4),
        np.array([1.0, 0.0, 0.0, 0.0]),
        np.array([1.0, 0.4, 0.0, 0.0]),
        np.array([1.0, 1.0, 0.3, 0.0]),
        np.array([1.0, np.nan, 0.0, 0.0]),
        y[:3],
    ):
        assert not poly.check_farkas_exact(A, c, bad), bad
        assert not poly.check_farkas(A, c, bad), bad
    c2 = c.copy()
    c2[0] = 0.7  # now [.5, .7] is feasible: no certificate may verify
    assert not poly.check_farkas_exact(A, c2, y)


def test_farkas_float_passes_exact_fails():
    """Rounding at 2^53 (spacing 2 above, ties to even): yᵀc = −(2^53 + 3) rounds to
    −(2^53 + 4), the first column sum 2^53 + 1 rounds to 2^53, so float64 gives
    yᵀc + ‖yᵀA‖₁ = −2 < −1e-9 while exactly it is −(2^53 + 3) + (2^53 + 1) + 2 = 0: no proof.
    (With y = (1, 1) and two columns every float64 sum has two terms: order-independent.)"""
    t = 2.0**53
    A = np.array([[t, 2.0], [1.0, 0.0]])
    c = np.array([-(t + 2.0), -1.0])
    y = np.array([1.0, 1.0])
    assert y @ c == -(t + 4.0) and np.abs(y @ A).sum() == t + 2.0  # the roundings described
    assert poly.check_farkas(A, c, y)
    assert not poly.check_farkas_exact(A, c, y)


def test_farkas_exact_passes_float_fails():
    """yᵀc + ‖yᵀA‖₁ ≈ −5e-13: a valid proof exactly, below the float check's tolerance."""
    A = np.array([[1.0], [-1.0]])
    c = np.array([0.5, -(0.5 + 1e-12)])
    y = np.array([0.5, 0.5])
    assert poly.check_farkas_exact(A, c, y)
    assert not poly.check_farkas(A, c, y)


def test_check_point_exact_edges():
    G = np.array([[1.0, 1.0], [-1.0, 0.0]])
    h = np.array([1.0, -0.25])
    assert poly.check_point_exact(G, h, np.array([0.5, 0.5]))  # on the boundary: exact ≤ holds
    assert poly.check_point(G, h, np.array([0.5, 0.5]))[0]
    for a in (np.array([0.5, 0.5 + 1e-12]), np.array([0.25 - 1e-12, 0.0]), np.array([1.0 + 1e-12, -1e-12])):
        assert poly.check_point(G, h, a)[0]  # within the float tolerance …
        assert not poly.check_point_exact(G, h, a)  # … but not exactly
    a = np.array([1.0 + 1e-12, 0.0])  # outside the box by 1e-12: float accepts, exact rejects
    assert poly.check_point(np.array([[1.0, 0.0]]), np.array([2.0]), a)[0]
    assert not poly.check_point_exact(np.array([[1.0, 0.0]]), np.array([2.0]), a)
    assert not poly.check_point_exact(G, h, np.array([0.5]))  # wrong length


@SETTINGS
@given(st.integers(0, 2**31 - 1), st.integers(1, 4), st.integers(1, 6))
def test_farkas_exact_is_sound(seed, n, rows):
    """On a system with a known interior point, no y — random or the solver's — verifies."""
    rng = np.random.default_rng(seed)
    a0 = rng.uniform(0.05, 0.95, size=n)
    A = rng.normal(size=(rows, n))
    c = A @ a0 + rng.uniform(1e-6, 0.5, size=rows)
    Bx = np.vstack([np.eye(n), -np.eye(n)])
    Af, cf = np.vstack([A, Bx]), np.concatenate([c, np.ones(n), np.zeros(n)])
    for _ in range(5):
        assert not poly.check_farkas_exact(Af, cf, rng.exponential(size=len(cf)))
    Af2, cf2, y = poly.farkas_certificate(A, c)
    assert not poly.check_farkas_exact(Af2, cf2, y) and not poly.check_farkas(Af2, cf2, y)


@SETTINGS
@given(st.lists(st.tuples(st.integers(-5, 5).filter(bool), st.integers(-5, 5)), min_size=1, max_size=6))
def test_prove_infeasible_iff_interval_empty(rows):
    """Integer 1-D systems a_i α ≤ c_i, α ∈ [0, 1]: exact emptiness decided with Fractions;
    the certificate verifies (float64 and exactly) ⇔ the interval is empty."""
    lo = max([Fraction(0)] + [Fraction(c, a) for a, c in rows if a < 0])
    hi = min([Fraction(1)] + [Fraction(c, a) for a, c in rows if a > 0])
    r = np.array(rows, dtype=np.float64)
    proof = poly.prove_infeasible(r[:, :1], r[:, 1])
    assert proof["exact"] == (lo > hi) and proof["float64"] == (lo > hi), (rows, lo, hi)


# --------------------------------------------------------------------------- cross-pair shares


def _exact_interval(ss, sx, as_, ax, m):
    """Exact {α ∈ [0,1] : ε − m + α(Δa − ε) ≥ 0} as (lo, hi) Fractions (lo > hi: empty)."""
    eps = Fraction(ss) - Fraction(sx)
    k = Fraction(as_) - Fraction(ax) - eps
    b = eps - Fraction(m)
    if k > 0:
        return max(Fraction(0), -b / k), Fraction(1)
    if k < 0:
        return Fraction(0), min(Fraction(1), -b / k)
    return (Fraction(0), Fraction(1)) if b >= 0 else (Fraction(1), Fraction(0))


DYADIC = st.integers(0, 8).map(lambda k: k / 8)  # every difference exact in float64


@SETTINGS
@given(
    st.lists(st.tuples(st.sampled_from([0, 1]), DYADIC, DYADIC, DYADIC, DYADIC), min_size=1, max_size=10),
    st.sampled_from([0.0, 1 / 64]),
)
def test_cross_pair_shares_brute_force(rows, margin):
    """Both pair rules against an exact brute force; and the all-pairs count = the
    satisfiable-alone count + every cross-pair with a member no α meets alone."""
    r = np.array(rows, dtype=np.float64)
    z = np.zeros(len(r), dtype=np.int64)
    Pp = poly.Pairs(r[:, 0].astype(np.int64), z, z, z, np.ones(len(r), bool), r[:, 1], r[:, 2], r[:, 3], r[:, 4], z, z)
    iv = [_exact_interval(*row[1:], margin) for row in rows]
    alone = [lo <= hi for lo, hi in iv]
    pres = [i for i, row in enumerate(rows) if row[0] == poly.PRESERVATION]
    supp = [i for i, row in enumerate(rows) if row[0] == poly.SUPPRESSION]
    joint = lambda i, j: max(iv[i][0], iv[j][0]) <= min(iv[i][1], iv[j][1])  # noqa: E731
    sat = [(i, j) for i in pres for j in supp if alone[i] and alone[j]]
    sh = cc.cross_pair_shares(Pp, margin)
    assert sh["satisfiable_alone"]["cross_pairs"] == len(sat)
    assert sh["satisfiable_alone"]["infeasible"] == sum(not joint(i, j) for i, j in sat)
    assert sh["all_pairs"]["cross_pairs"] == len(pres) * len(supp)
    assert sh["all_pairs"]["infeasible"] == sum(not joint(i, j) for i in pres for j in supp)
    assert sh["all_pairs"]["infeasible"] == sh["satisfiable_alone"]["infeasible"] + len(pres) * len(supp) - len(sat)
    if sat:
        assert sh["satisfiable_alone"]["share_infeasible"] == sh["satisfiable_alone"]["infeasible"] / len(sat)
    else:
        assert math.isnan(sh["satisfiable_alone"]["share_infeasible"])
    pi, si, bad = poly.cross_pair_infeasible(Pp, margin)
    assert sorted(zip(pi.tolist(), si.tolist())) == sorted(sat)
    assert all(b == (not joint(i, j)) for i, j, b in zip(pi.tolist(), si.tolist(), bad.tolist()))


def test_pair_rules_agree_on_which_pairs_are_satisfiable_alone():
    """One preservation pair whose interval [0, hi] misses 0 by ~1e-12 (ε = m − 1e-12, a_s = 0,
    a_x = 1: hi = (ε − m)/(1 + ε) ≈ −1e-12, a gap below GAP_TOL = 1e-9) and one suppression
    pair met by every α. Whatever the tolerance, the two pair rules must agree on whether the
    first pair is satisfiable alone: the all-pairs count must equal the satisfiable-alone count
    plus every cross-pair with a member no α meets alone."""
    eps = M - 1e-12
    z = np.zeros(2, dtype=np.int64)
    Pp = poly.Pairs(
        np.array([poly.PRESERVATION, poly.SUPPRESSION]),
        z,
        z,
        z,
        np.ones(2, bool),
        np.array([0.5 + eps, 0.9]),
        np.array([0.5, 0.1]),
        np.array([0.0, 1.0]),
        np.array([1.0, 0.0]),
        z,
        z,
    )
    sh = cc.cross_pair_shares(Pp)
    sat, allp = sh["satisfiable_alone"], sh["all_pairs"]
    assert allp["infeasible"] == sat["infeasible"] + allp["cross_pairs"] - sat["cross_pairs"], (
        "BUG (tolerance mismatch): theory/polytope.py:146 cross_pair_infeasible (and corpus_claims.py:188 "
        "_global_alpha_analysis) call a pair satisfiable alone iff lo <= hi, with no tolerance, while "
        "corpus_claims.py:162 cross_pair_shares (all_pairs rule) uses lo <= hi + GAP_TOL. A pair with an empty "
        f"interval by < 1e-9 is excluded under 'satisfiable_alone' ({sat}) but counted satisfiable, and its "
        f"cross-pair feasible, under 'all_pairs' ({allp})."
    )
