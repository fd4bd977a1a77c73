"""The symbolic proofs (theory/proofs.py): the finite-sum rules and the nonnegativity test they
rest on, each claim's record, and — so a proof can fail — false variants of every statement that
the same machinery must refuse to prove.
"""

from __future__ import annotations

import json

import pytest
import sympy
from sympy import IndexedBase, Sum

from theory import (
    formal,  # noqa: F401  (registers the claims, the symbolic ones included)
    proofs as P,
)
from theory._base import CLAIMS
from theory.run import RECORD_KEYS

i, j = sympy.symbols("i j", integer=True, positive=True)
n = sympy.Symbol("n", integer=True, positive=True)
w = IndexedBase("w", positive=True)
x = IndexedBase("x", real=True)
lam = IndexedBase("lam", positive=True)
S = lambda f: Sum(f, (i, 1, n))  # noqa: E731

SYMBOLIC = ("a14_lemma1_proof", "a6_identity", "eps_relax_proof", "a12_proof")
_cache: dict = {}


def result(cid):
    if cid not in _cache:
        _cache[cid] = CLAIMS[cid].check(None)
    return _cache[cid]


# --------------------------------------------------------------------------- the machinery


def test_sum_rules_prove_true_identities():
    assert P.equal_by_sum_rules(S(w[i] + x[i]), S(w[i]) + S(x[i]))
    assert P.equal_by_sum_rules(S(3 * w[i]), 3 * S(w[i]))
    assert P.equal_by_sum_rules(Sum(w[i] * x[j], (i, 1, n), (j, 1, n)), S(w[i]) * S(x[i]))
    assert P.equal_by_sum_rules(S(1), n)


def test_sum_rules_refuse_false_identities():
    assert not P.equal_by_sum_rules(S(x[i] ** 2), S(x[i]) ** 2)
    assert not P.equal_by_sum_rules(S(w[i] * x[i]), S(w[i]) * S(x[i]))
    assert not P.equal_by_sum_rules(Sum(w[i] * w[j], (i, 1, n), (j, 1, n)), S(w[i] ** 2))
    with pytest.raises(P.NotSeparable):
        P.sum_normal_form(Sum(1 / (x[i] + x[j] + 3), (i, 1, n), (j, 1, n)))


def test_false_a6_and_lemma1_variants_are_not_proved():
    W = S(w[i])
    xbar = S(w[i] * x[i]) / W
    lhs = S(w[i] * (x[i] - xbar) ** 2)
    pair = Sum(w[i] * w[j] * (x[i] - x[j]) ** 2, (i, 1, n), (j, 1, n))
    assert P.equal_by_sum_rules(lhs, pair / (2 * W))
    assert not P.equal_by_sum_rules(lhs, pair / W)  # the factor 1/2 matters
    assert not P.equal_by_sum_rules(S(w[i] * (x[i] - S(x[i]) / n) ** 2), pair / (2 * W))  # unweighted mean
    eff = W / S(w[i] / lam[i])
    assert P.equal_by_sum_rules(sympy.log(2) / eff, S(w[i] * sympy.log(2) / lam[i]) / W)
    arith = S(w[i] * lam[i]) / W  # the arithmetic mean has no half-life identity
    assert not P.equal_by_sum_rules(sympy.log(2) / arith, S(w[i] * sympy.log(2) / lam[i]) / W)


def test_manifest_nonnegativity():
    a, b = sympy.symbols("a b", real=True)
    p, q = sympy.symbols("p q", positive=True)
    d = sympy.Symbol("d", nonnegative=True)
    yes = [
        p,
        d,
        p * d / (p + d),
        (a - b) ** 2,
        p * (a - b) ** 2 / (p * q),
        S(w[i] * (x[i] - 1) ** 2),
        sympy.Integer(0),
        p + d + 3,
    ]
    no = [a, a - b, -p, p - q, (a - b) ** 3, p * a, S(x[i]), sympy.log(p)]
    assert all(P.manifestly_nonnegative(e) for e in yes)
    assert not any(P.manifestly_nonnegative(e) for e in no)
    assert P.manifestly_positive(p + d) and not P.manifestly_positive(d) and not P.manifestly_positive(d * p)


def test_lemma1_explicit_rejects_a_wrong_bound():
    # the certificate test is what proves "≥ 0": the arithmetic mean is not ≤ the harmonic one
    ws, ls = sympy.symbols("w1:4", positive=True), sympy.symbols("l1:4", positive=True)
    hm = sum(ws) / sum(a / b for a, b in zip(ws, ls))
    am = sum(a * b for a, b in zip(ws, ls)) / sum(ws)
    assert not P.manifestly_nonnegative(sympy.together(hm - am))
    assert all(P.lemma1_explicit(3).values())


@pytest.mark.parametrize("n_", [2, 5, 11])
def test_explicit_identities(n_):
    assert P.pairwise_explicit(n_) and P.groups_explicit(n_)


def test_eps_chain_refuses_a_weaker_margin():
    # with only Δmin > Lε (not 2Lε) the certificate is not manifestly positive: the pair can flip
    L, eps, mu = sympy.symbols("L varepsilon mu", positive=True)
    a, b, s = sympy.symbols("a b s", nonnegative=True)
    gap = (L * eps + mu + s) + (-L * eps + a) - (L * eps - b)
    assert not P.manifestly_positive(sympy.expand(gap))
    assert all(v["proved"] for v in P.eps_chain().values())


def test_a12_bound_needs_rates_in_the_unit_interval():
    p0, p1 = sympy.symbols("p0 p1", real=True)
    assert not P.manifestly_nonnegative(sympy.expand(1 - (p0 - p1)))  # without p0, p1 ∈ [0, 1] no bound
    r = P.a12_proof()
    assert sympy.Rational(r["paper_gap"]) == sympy.Rational(19, 100) * sympy.Rational(698, 1000)


# --------------------------------------------------------------------------- the claims


@pytest.mark.parametrize("cid", SYMBOLIC)
def test_symbolic_claims_prove_every_statement(cid):
    claim = CLAIMS[cid]
    r = result(cid)
    assert claim.method == "symbolic" and claim.range
    assert r.passed, r.ours
    v = claim.rule.decide(r.witness)
    assert v.verdict == "reproduced", v.reason
    assert r.witness["range"] and r.witness["latex"]
    for name, lines in r.witness["latex"].items():  # a person can read what was proved
        assert lines and all(isinstance(t, str) and t for t in lines), name
    json.dumps(r.witness)


def test_lemma1_ranges_cover_k_2_to_11():
    w_ = result("a14_lemma1_proof").witness
    assert sorted(map(int, w_["explicit"])) == list(range(2, 12))
    assert all(all(v.values()) for v in w_["explicit"].values())
    assert w_["spot_check"]["frcore's kernel is the formula"]


def test_records_carry_method_and_range():
    assert "method" in RECORD_KEYS and "range" in RECORD_KEYS
    from theory.diagnose import Context
    from theory.run import run_claims

    recs = run_claims(Context([], None), ["a12_proof", "thm3p"], diagnose=False)
    assert [(r["id"], r["method"]) for r in recs] == [("a12_proof", "symbolic"), ("thm3p", "witness")]
    assert all(r["range"] for r in recs)
