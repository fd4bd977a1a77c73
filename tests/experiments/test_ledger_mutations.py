"""Tests that a broken verdict rule or sweep turns red (issue 29, item 6), one per mutation:

1. a corpus claim that ignores its certificate (``passed = True``) — a certificate that fails
   verification must come out ``check: fail``;
2. the holdout rule without its ``abs()``;
3. the D.6 rule reading the point estimate instead of the CI's lower bound;
4. a multiplier sweep that ignores the multiplier;
5. a label perturbation that perturbs nothing;

and the rows that are *not comparable* by their rules (slot-key noise, granularity) stay so
whatever our figures, which they still report. Expected values come from closed forms written
here (the blend b = (1 − α)σ + α·exp(−λ·s_abs·t), binomial bounds), never from the code under test.
"""

from __future__ import annotations

import datetime as dt
import json
import math

import numpy as np
import pytest
from support.pair_corpus import SINGLE, pair_corpus

import frcore
from experiments import ledger
from experiments.candidate_table import SweepTable
from experiments.sweeps import CONFUSED_PAIRS, MultiplierSweep, perturbed_candidates, run_multiplier
from frcore import CATEGORY_NAMES, hours_since_epoch
from frcore.bank import FactRecord
from theory import polytope as poly
from theory.diagnose import Context
from theory.run import load_claim_modules, run_claims
from theory.verdict import FAIL, NOT_COMPARABLE, NOT_REPRODUCED, PASS, REPRODUCED

load_claim_modules()

AT = dt.datetime(2025, 7, 1)


def _row(rid: str) -> ledger.Row:
    return next(r for r in ledger.LEDGER if r.id == rid)


# --------------------------------------------------------------------------- 1. certificates


def _zero_certificate(A, c):
    """A 'certificate' y = 0 of {α : Aα ≤ c}: yᵀc + ‖yᵀA‖₁ = 0, which proves nothing."""
    A = np.atleast_2d(np.asarray(A, dtype=np.float64))
    if A.shape[0] != np.size(c):  # interval_certificate(a, c): a 1-D column
        A = A.reshape(-1, 1)
    n = A.shape[1]
    A_full = np.vstack([A, np.eye(n), -np.eye(n)])
    c_full = np.concatenate([np.asarray(c, dtype=np.float64).ravel(), np.ones(n), np.zeros(n)])
    return A_full, c_full, np.zeros(A_full.shape[0])


@pytest.mark.parametrize("cid", ["a10_global_alpha", "a10_category_alpha", "a15_calibrate"])
def test_a_certificate_that_fails_verification_makes_the_check_fail(monkeypatch, cid):
    """SINGLE (every edge FINANCIAL) is infeasible under a global and under category α, so each
    claim rests on a Farkas certificate. Fed one that does not verify, its check must fail (and
    its verdict be no verdict); with the real certificates it passes."""
    ok = run_claims(Context([], None, corpus=pair_corpus(SINGLE)), ids=[cid], diagnose=False)[0]
    assert ok["check"] == PASS, ok["ours"]
    monkeypatch.setattr(poly, "farkas_certificate", _zero_certificate)
    monkeypatch.setattr(poly, "interval_certificate", _zero_certificate)
    bad = run_claims(Context([], None, corpus=pair_corpus(SINGLE)), ids=[cid], diagnose=False)[0]
    assert bad["check"] == FAIL, bad["ours"]
    assert bad["verdict"] == NOT_COMPARABLE and bad["reason"].startswith("no verdict: the check failed")


# --------------------------------------------------------------------------- 2. holdout


@pytest.mark.parametrize(
    "calibrated, expected",
    [(0.768, REPRODUCED), (0.785, REPRODUCED), (0.751, REPRODUCED), (0.80, NOT_REPRODUCED), (0.70, NOT_REPRODUCED)],
)
def test_holdout_rule_is_two_sided(calibrated, expected):
    """Within 2 pp of the default (0.768) on either side; a calibrated α 6.8 pp *below* the
    default does not generalise any more than one 3.2 pp above."""
    v = _row("holdout").rule.decide({"calibrated": calibrated, "default": 0.768, "margin": 0.01})
    assert v.verdict == expected, v.reason


# --------------------------------------------------------------------------- 3. D.6 ablation


@pytest.mark.parametrize("lo, expected", [(0.004, REPRODUCED), (-0.01, NOT_REPRODUCED), (0.0, NOT_REPRODUCED)])
def test_d6_rule_reads_the_ci_lower_bound_not_the_point(lo, expected):
    """Every gap +5 pp: reproduced only if each paired-bootstrap CI lies above 0."""
    gap = {"diff": 0.05, "ci": [lo, 0.12]}
    w = {
        "pass": {s: 0.7 for s in ledger.PAPER["ablation_d6"]},
        "paired": {s: gap for s in ("fr-no-routing", "fr-uniform-decay", "flat-cosine")},
    }
    v = _row("ablation").rule.decide(w)
    assert v.verdict == expected, v.reason
    assert all(p.holds == (lo > 0) for p in v.parts)


# --------------------------------------------------------------------------- hand-made candidate tables


def _fact(i: int, category: str, hours_old: float = 0.0) -> FactRecord:
    return FactRecord(f"p.f{i}", f"fact {i}", {category: 1.0}, AT - dt.timedelta(hours=hours_old))


def _table(facts: list[FactRecord], sims: list[float], hours_old: list[float]) -> SweepTable:
    """One persona, one question asked at AT whose candidates are ``facts`` (ages (t, 0, 0):
    absolute hours only)."""
    c = frcore.make_candidates(
        np.asarray(sims), [f.categories for f in facts], np.array([[t, 0.0, 0.0] for t in hours_old])
    )
    q = {"persona": "p", "id": "q0", "attack_vector": "AV1_x", "support": [facts[0].id], "wrong": []}
    return SweepTable(
        [{**q, "at_h": hours_since_epoch(AT)}],
        np.array([[f.id for f in facts]], dtype=object),
        frcore.stack_candidates([c]),
        frcore.stack_queries([frcore.make_query("current")]),
        {"p": facts},
        "hand-made",
    )


# --------------------------------------------------------------------------- 4. multiplier sweep


def test_multiplier_sweep_rescales_the_categorys_rate():
    """Two LOGISTICAL_CONTEXT candidates (α 0.4, floor 0): A σ 0.5 said now (a = 1 at any rate),
    B σ 0.7 said t hours ago with λ·s_abs·t = ln 2 (a = 2^(−m) at multiplier m). B ranks above A
    iff (1 − α)(σ_B − σ_A) > α(1 − 2^(−m)), i.e. for m = 0.25, 0.33, 0.5 and not from 0.75 on:
    Kendall τ against m = 1 is −1 there, 1 elsewhere; other categories have no candidates (τ 1)."""
    cat = "LOGISTICAL_CONTEXT"
    o = frcore.as_arrays()
    j = CATEGORY_NAMES.index(cat)
    alpha, lam, s_abs = float(o.alpha[j]), float(o.rates[j]), float(o.clocks[j, 0])
    t = math.log(2.0) / (lam * s_abs)
    table = _table([_fact(0, cat), _fact(1, cat, t)], [0.5, 0.7], [0.0, t])
    cfg = MultiplierSweep()
    flips = [(1 - alpha) * (0.7 - 0.5) > alpha * (1 - 2.0**-m) for m in cfg.multipliers]
    assert flips[:3] == [True] * 3 and not any(flips[3:])  # the construction, before the sweep
    per = run_multiplier(table, cfg)["per_category"]
    assert per[cat]["tau"] == [-1.0 if f else 1.0 for f in flips]
    for other in CATEGORY_NAMES:
        if other != cat:
            assert per[other]["tau"] == [1.0] * len(cfg.multipliers), other


# --------------------------------------------------------------------------- 5. label perturbation


@pytest.mark.parametrize("rate", [0.3, 1.0])
def test_label_perturbation_moves_the_expected_share_to_the_partner(rate):
    """300 one-hot facts: 240 in a confused pair (80 each of OBLIGATIONS, IDENTITY_SELF_CONCEPT,
    PROJECTS_ENDEAVORS, each in exactly one pair) and 60 FINANCIAL_MATERIAL (in none). At rate r
    each fact of a pair moves to its partner with probability r, so the number moved is
    Binomial(240, r) (all 240 at r = 1, within 4 sd otherwise); FINANCIAL facts never move."""
    partner = {a: b for a, b in CONFUSED_PAIRS} | {b: a for a, b in CONFUSED_PAIRS}
    cats = ["OBLIGATIONS", "IDENTITY_SELF_CONCEPT", "PROJECTS_ENDEAVORS"] * 80 + ["FINANCIAL_MATERIAL"] * 60
    assert all(sum(c in p for p in CONFUSED_PAIRS) == 1 for c in cats[:3])
    facts = [_fact(i, c, 24.0) for i, c in enumerate(cats)]
    table = _table(facts, [0.5] * len(facts), [24.0] * len(facts))
    before = np.asarray(table.cands.weights)[0]
    after = np.asarray(perturbed_candidates(table, "label_pair", rate, seed=0).weights)[0]
    moved = np.any(np.abs(after - before) > 1e-6, axis=1)
    assert not moved[240:].any()
    n, k = 240, int(moved[:240].sum())
    if rate == 1.0:
        assert k == n
    else:
        sd = math.sqrt(n * rate * (1 - rate))
        assert abs(k - n * rate) <= 4 * sd, k
    for i in np.flatnonzero(moved):
        assert CATEGORY_NAMES[int(np.argmax(after[i]))] == partner[cats[i]]
        assert after[i].max() == pytest.approx(1.0)


# --------------------------------------------------------------------------- not comparable by their rules


def _write(tmp, files: dict):
    for name, obj in files.items():
        (tmp / name).write_text(json.dumps(obj))
    return tmp


@pytest.mark.parametrize("jaccard_at_0_3", [0.70, 0.77, 0.99])
def test_slot_noise_is_not_comparable_and_keeps_our_figures(tmp_path, jaccard_at_0_3):
    """The paper states no corruption rate: whatever our τ and Jaccard, no verdict against it."""
    files = {
        "sweep_noise.json": {
            "summary": {
                "slot_key": {
                    "0.1": {"tau": [0.999, 0], "jaccard": [0.9, 0]},
                    "0.3": {"tau": [0.995, 0], "jaccard": [jaccard_at_0_3, 0]},
                }
            }
        }
    }
    r = {x["id"]: x for x in ledger.evaluate(_write(tmp_path, files))}["slot_noise"]
    assert (r["check"], r["verdict"], r["parts"]) == (PASS, NOT_COMPARABLE, [])
    assert f"Jaccard {jaccard_at_0_3:.3f}" in r["ours"] and "0.1: τ 0.999, J 0.900" in r["ours"]
    assert "rate" in r["reason"]


@pytest.mark.parametrize("passes", [[0.5] * 11, [0.5 + 0.02 * k for k in range(11)]])
def test_granularity_is_not_comparable_and_keeps_our_figures(tmp_path, passes):
    """The paper's saturation near 7 is its BEAM result: no verdict from LifecycleBench."""
    files = {
        "sweep_granularity.json": {
            "rows": [{"k": k + 1, "pass": p} for k, p in enumerate(passes)],
            "cognitive_3": {"pass": 0.5},
        }
    }
    r = {x["id"]: x for x in ledger.evaluate(_write(tmp_path, files))}["granularity"]
    assert (r["check"], r["verdict"], r["parts"]) == (PASS, NOT_COMPARABLE, [])
    assert f"k=11: {100 * passes[-1]:.1f}%" in r["ours"] and "BEAM" in r["reason"]
