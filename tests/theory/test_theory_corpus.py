"""Tests for theory/corpus.py, polytope.py, partitions.py, corpus_claims.py, run.py, calibrate.py.

A tiny hand-written suite (our own text) and a test-only bag-of-words similarity keep these
independent of the generator and of the real data.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import frcore
from frcore import State
from theory import partitions as part, polytope as poly
from theory._base import CLAIMS, ClaimResult
from theory.calibrate import calibrate, load_params, save_params
from theory.corpus import build_corpus, derive_states

SETTINGS = settings(
    max_examples=40, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)

BELL = [1, 1, 2, 5, 15, 52, 203, 877, 4140]  # Bell(0..8), known values


from helpers import BowEmbedder  # noqa: E402  (tests/ is on sys.path)
from suite_builders import suite_fact  # noqa: E402  (tests/ is on sys.path)


def _fact(i, text, cat, session, said, **kw):
    return suite_fact(f"p.f{i}", text, cat, session, said, **kw)


def tiny_suite() -> dict:
    """One persona: an old FINANCIAL fact vs newer money chat, a superseded LOGISTICAL home, an
    expired obligation, a retraction, a tentative update."""
    sessions = [
        {"id": k, "date": d, "type": t, "topic": "x"}
        for k, d, t in [
            (1, "2025-01-01", "critical"),
            (2, "2025-02-01", "filler"),
            (3, "2025-03-01", "critical"),
            (4, "2025-05-01", "filler"),
            (5, "2025-06-20", "critical"),
        ]
    ]
    facts = [
        _fact(1, "my salary is fifty thousand pounds a year", "FINANCIAL_MATERIAL", 1, "2025-01-01", numeric=True),
        _fact(2, "i live in a flat on oak street", "LOGISTICAL_CONTEXT", 1, "2025-01-01", slot="home"),
        _fact(
            3,
            "i moved to a flat on elm street",
            "LOGISTICAL_CONTEXT",
            3,
            "2025-03-01",
            slot="home",
            links={"supersedes": "p.f2"},
        ),
        _fact(4, "dentist appointment on march tenth", "OBLIGATIONS", 1, "2025-01-01", event_time="2025-03-10"),
        _fact(5, "planning to learn the cello", "HOBBIES_RECREATION", 1, "2025-01-01"),
        _fact(6, "dropped the cello plan", "HOBBIES_RECREATION", 3, "2025-03-01", links={"retracts": "p.f5"}),
        _fact(
            7,
            "i like tea in the morning",
            {"PREFERENCES_HABITS": 0.6, "HEALTH_WELLBEING": 0.4},
            1,
            "2025-01-01",
            slot="drink",
        ),
        _fact(
            8,
            "maybe switching to coffee",
            "PREFERENCES_HABITS",
            5,
            "2025-06-20",
            slot="drink",
            confidence=0.4,
            links={"tentative_for": "p.f7"},
        ),
        _fact(9, "my rent on elm street is nine hundred pounds", "FINANCIAL_MATERIAL", 5, "2025-06-20", numeric=True),
    ]
    turns = [
        {"id": f"p.s{s}.t{j}", "session": s, "said_at": d, "role": r, "text": txt}
        for s, d, j, r, txt in [
            (2, "2025-02-01", 1, "user", "pounds and pounds of snow this year"),
            (2, "2025-02-01", 2, "assistant", "sounds cold"),
            (4, "2025-05-01", 1, "user", "my flat smells of paint, salary day soon"),
            (4, "2025-05-01", 2, "user", "a year of fifty walks on the street"),
        ]
    ]
    q = lambda i, text, av, intent, sup, wrong, cats: {  # noqa: E731
        "id": f"p_q{i}",
        "text": text,
        "asked_at": "2025-07-01",
        "attack_vector": av,
        "relevant_categories": cats,
        "correct_answer": "-",
        "wrong_answer_indicators": [],
        "intent": intent,
        "support": sup,
        "wrong": wrong,
        "notes": "",
        "conflict": False,
    }
    questions = [
        q(
            1,
            "what is my salary a year in pounds?",
            "AV8_numeric_preservation",
            "current",
            ["p.f1"],
            ["p.f9"],
            ["FINANCIAL_MATERIAL"],
        ),
        q(
            2,
            "where is my flat, which street?",
            "AV1_superseded_preference",
            "current",
            ["p.f3"],
            ["p.f2"],
            ["LOGISTICAL_CONTEXT"],
        ),
        q(
            3,
            "when is the dentist appointment?",
            "AV2_expired_logistics",
            "upcoming",
            ["p.f6"],
            ["p.f4"],
            ["OBLIGATIONS"],
        ),
        q(
            4,
            "am i learning the cello?",
            "AV7_selective_forgetting",
            "retraction_aware",
            ["p.f6"],
            ["p.f5"],
            ["HOBBIES_RECREATION"],
        ),
        q(
            5,
            "what do i drink in the morning?",
            "AV9_soft_supersession",
            "current",
            ["p.f7", "p.f8"],
            [],
            ["PREFERENCES_HABITS"],
        ),
    ]
    return {
        "suite": "test",
        "version": 1,
        "persona": "p",
        "name": "P",
        "asked_at": "2025-07-01",
        "sessions": sessions,
        "facts": facts,
        "turns": turns,
        "questions": questions,
    }


@pytest.fixture(scope="module")
def corpus():
    return build_corpus([tiny_suite()], BowEmbedder())


# --------------------------------------------------------------------------- corpus


def test_corpus_shapes_and_gold(corpus):
    B, K = corpus.sim.shape
    assert B == 5 and K == frcore.bucket_size(9 + 3)
    ids = corpus.item_ids[0]
    assert len(ids) == 12 and "p.s2.t2" not in ids  # assistant turn is not a candidate
    assert corpus.support[0, ids.index("p.f1")] and corpus.wrong[0, ids.index("p.f9")]
    assert corpus.support.sum() == 6 and corpus.wrong.sum() == 4
    assert np.all((corpus.sim[corpus.valid] >= 0) & (corpus.sim[corpus.valid] <= 1))
    assert np.allclose(corpus.weights.sum(-1), 1.0)


def test_corpus_ages_and_event(corpus):
    ids = corpus.item_ids[0]
    j = ids.index("p.f1")
    assert corpus.ages[0, j, 0] == pytest.approx((181) * 24.0)  # 2025-01-01 → 2025-07-01
    assert corpus.ages[0, j, 1] == pytest.approx((170) * 24.0)  # → last session 2025-06-20
    assert corpus.ages[0, j, 2] == 3  # user turns on later days
    assert corpus.hours_to_event[0, ids.index("p.f4")] == pytest.approx(-113 * 24.0)
    assert np.isnan(corpus.hours_to_event[0, ids.index("p.f1")])


def test_derived_states_never_read_role():
    s = tiny_suite()
    for f in s["facts"]:
        f["role"] = "stable"  # roles are irrelevant
    c = build_corpus([s], BowEmbedder())
    ids = c.item_ids[0]
    st_ = {i: int(c.state[0, j]) for j, i in enumerate(ids)}
    assert st_["p.f2"] == State.SUPERSEDED
    assert st_["p.f3"] == State.ACTIVE
    assert st_["p.f4"] == State.EXPIRED
    assert st_["p.f5"] == State.RETRACTED
    assert st_["p.f7"] == State.CONTESTED and st_["p.f8"] == State.CONTESTED


def test_states_as_of_earlier_time():
    s = tiny_suite()
    from theory.corpus import _hours

    st_ = derive_states(s["facts"], _hours("2025-02-01", "t", "t"))
    assert st_["p.f2"] == State.ACTIVE and st_["p.f4"] == State.ACTIVE and st_["p.f5"] == State.ACTIVE


@pytest.mark.parametrize(
    "field,value,needle",
    [
        ("support", ["p.nope"], "p.nope"),
        ("wrong", ["p.f1", "p.missing"], "p.missing"),
    ],
)
def test_bad_gold_id_raises(field, value, needle):
    s = tiny_suite()
    s["questions"][0][field] = value
    with pytest.raises(ValueError, match=needle):
        build_corpus([s], BowEmbedder())


def test_bad_category_and_link_raise():
    s = tiny_suite()
    s["facts"][0]["categories"] = {"NOT_A_CATEGORY": 1.0}
    with pytest.raises(ValueError, match="p.f1"):
        build_corpus([s], BowEmbedder())
    s = tiny_suite()
    s["facts"][2]["links"] = {"supersedes": "p.ghost"}
    with pytest.raises(ValueError, match="p.ghost"):
        build_corpus([s], BowEmbedder())


# --------------------------------------------------------------------------- partitions


@pytest.mark.parametrize("n", range(1, 9))
def test_rgs_count_is_bell(n):
    r = part.restricted_growth_strings(n)
    assert len(r) == BELL[n]
    assert len({tuple(x) for x in r}) == BELL[n]
    prefix_max = np.maximum.accumulate(r, axis=1)
    assert np.all(r[:, 0] == 0) and np.all(r[:, 1:] <= prefix_max[:, :-1] + 1)


def _set_partitions(items):
    """Independent recursive enumeration (oracle)."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for p in _set_partitions(rest):
        yield [[first]] + p
        for i in range(len(p)):
            yield p[:i] + [[first] + p[i]] + p[i + 1 :]


def test_optimum_matches_brute_force():
    rng = np.random.default_rng(3)
    n = 5
    primary = rng.integers(0, n, size=60)
    policy = rng.normal(size=(60, 3)) * 0.1 + primary[:, None] * np.array([0.3, 0.0, -0.2])
    best, _, _ = part.optimal_by_k(*part.category_stats(policy, primary, n))
    brute: dict[int, float] = {}
    count = 0
    for p in _set_partitions(list(range(n))):
        count += 1
        labels = np.empty(n, dtype=int)
        for g, block in enumerate(p):
            labels[block] = g
        v = part.labels_variance(policy, labels[primary])
        brute[len(p)] = min(brute.get(len(p), np.inf), v)
    assert count == BELL[n]
    for k in range(1, n + 1):
        assert best[k][0] == pytest.approx(brute[k], rel=1e-9, abs=1e-12)


@SETTINGS
@given(st.integers(0, 2**31 - 1), st.integers(2, 7))
def test_partition_variance_matches_direct(seed, n):
    rng = np.random.default_rng(seed)
    primary = rng.integers(0, n, size=30)
    policy = rng.uniform(0, 1, size=(30, 3))
    rgs = part.restricted_growth_strings(n)
    rows = rgs[rng.integers(0, len(rgs), size=5)]
    v = part.partition_variances(*part.category_stats(policy, primary, n), rows)
    for r, vv in zip(rows, v):
        assert vv == pytest.approx(part.labels_variance(policy, r[primary]), abs=1e-12)


def test_pairwise_identity():
    rng = np.random.default_rng(0)
    primary = rng.integers(0, 11, size=200)
    policy = rng.uniform(size=(200, 3))
    cnt, s1, _ = part.category_stats(policy, primary)
    means = s1 / np.maximum(cnt, 1)[:, None]
    labels = frcore.as_arrays().cognitive_type
    lhs = part.labels_variance(policy, labels[primary]) - part.labels_variance(policy, primary)
    assert lhs == pytest.approx(part.pairwise_excess(cnt, means, labels), abs=1e-12)


def test_policy_vectors_hard_and_soft():
    o = frcore.as_arrays()
    w = np.eye(11)
    p = part.policy_vectors(w)
    assert np.allclose(p, np.stack([o.alpha, o.rates, o.floors], 1))
    w2 = np.zeros((1, 11))
    w2[0, 0] = w2[0, 9] = 0.5
    lam = part.policy_vectors(w2)[0, 1]
    assert lam == pytest.approx(1 / (0.5 / o.rates[0] + 0.5 / o.rates[9]))


# --------------------------------------------------------------------------- polytope


def test_farkas_certificate_and_tampering():
    # α ≤ 0.2 and −α ≤ −0.5 (α ≥ 0.5): infeasible
    A = np.array([[1.0], [-1.0]])
    c = np.array([0.2, -0.5])
    Af, cf, y = poly.farkas_certificate(A, c)
    assert poly.check_farkas(Af, cf, y)
    tampered = [y * -1, y + np.array([0.0, 0.3] + [0.0] * (len(y) - 2)), np.zeros_like(y), y[:-1]]
    bad = y.copy()
    bad[0] = 0.0
    tampered.append(bad)
    for t in tampered:
        assert not poly.check_farkas(Af, cf, t)
    c2 = c.copy()
    c2[0] = 0.7  # now feasible: no certificate may verify
    Af2, cf2, y2 = poly.farkas_certificate(A, c2)
    assert not poly.check_farkas(Af2, cf2, y2)


@SETTINGS
@given(st.integers(0, 2**31 - 1), st.integers(1, 6), st.integers(1, 12))
def test_max_margin_point_satisfies_every_row(seed, n, rows):
    rng = np.random.default_rng(seed)
    a0 = rng.uniform(0.1, 0.9, size=n)
    G = rng.normal(size=(rows, n))
    G[np.linalg.norm(G, axis=1) == 0, 0] = 1.0
    h = G @ a0 + rng.uniform(0.0, 0.5, size=rows)  # feasible by construction
    alpha, t = poly.max_margin_point(G, h)
    ok, smin = poly.check_point(G, h, alpha)
    assert ok and t >= -1e-7
    assert np.all(G @ alpha <= h + 1e-7)
    assert smin == pytest.approx(t, abs=1e-5)


@SETTINGS
@given(
    st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1), st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=8),
    st.sampled_from([0.0, 1e-3, 0.05]),
)
def test_alpha_intervals_match_grid(rows, margin):
    r = np.array(rows)
    z = np.zeros(len(r), dtype=np.int64)
    P = poly.Pairs(z, z, z, z, np.ones(len(r), bool), r[:, 0], r[:, 1], r[:, 2], r[:, 3], z, z)
    lo, hi = poly.alpha_intervals(P, margin)
    grid = np.linspace(0, 1, 401)
    for i in range(len(r)):
        g = (1 - grid) * (r[i, 0] - r[i, 1]) + grid * (r[i, 2] - r[i, 3]) - margin
        inside = (grid >= lo[i] - 1e-9) & (grid <= hi[i] + 1e-9)
        far = np.abs(g) > 1e-9
        assert np.array_equal((g >= 0)[far], inside[far])


def test_required_alpha():
    z = np.zeros(3, dtype=np.int64)
    P = poly.Pairs(
        z,
        z,
        z,
        z,
        np.ones(3, bool),
        np.array([0.5, 0.4, 0.6]),
        np.array([0.6, 0.6, 0.5]),
        np.array([0.3, 0.0, 0.0]),
        np.array([0.0, 0.1, 0.0]),
        z,
        z,
    )
    r = poly.required_alpha(P)
    assert r[0] == pytest.approx(0.1 / 0.4) and np.isinf(r[1]) and r[2] == 0.0


# --------------------------------------------------------------------------- claims


CORPUS_CLAIMS = [
    "a2_4_regime",
    "a7_1_witness",
    "a10_global_alpha",
    "a10_category_alpha",
    "a5_partition",
    "a6_gap",
    "a14_corpus",
    "a15_calibrate",
]


@pytest.mark.parametrize("cid", CORPUS_CLAIMS)
def test_corpus_claim_runs(corpus, cid):
    import theory.corpus_claims  # noqa: F401  (registers)

    res = CLAIMS[cid].check(corpus)
    assert isinstance(res, ClaimResult) and CLAIMS[cid].needs_corpus
    json.dumps(dict(res.witness), default=str)
    assert res.ours


def test_a14_counts_soft_entries(corpus):
    from theory.corpus_claims import soft_membership_stats

    s = soft_membership_stats(np.array([[0.6, 0.4] + [0] * 9, [1.0] + [0] * 10, [0.5, 0.45, 0.05] + [0] * 8]))
    assert s["share_primary_below_0_90"] == pytest.approx(2 / 3)
    assert s["mean_categories_above_0_05"] == pytest.approx((2 + 1 + 2) / 3)
    res = CLAIMS["a14_corpus"].check(corpus)
    assert res.witness["facts"]["entries"] == 9
    assert res.witness["facts"]["share_primary_below_0_90"] == pytest.approx(1 / 9)


def test_a2_4_on_tiny_corpus(corpus):
    w = CLAIMS["a2_4_regime"].check(corpus).witness
    assert w["pairs"] == 4  # four gold (support, wrong) pairs
    assert w["median_abs_dact"] < 1e-3  # half a year old: activations collapsed


def test_a10_certificates_verify(corpus):
    from theory.corpus_claims import global_alpha_analysis

    w = global_alpha_analysis(corpus)
    assert w["cross_pairs_infeasible"] <= w["cross_pairs"]
    counts = np.array(w["cell_counts"])
    assert counts.shape == (11, 11) and counts.sum() == w["cross_pairs"]
    if not w["global_feasible"]:
        assert w["certificate_verified"]


def test_run_claims_isolates_failures():
    from theory.run import load_claim_modules, run_claims

    load_claim_modules()

    class Broken:
        @property
        def corpus(self):
            raise RuntimeError("no corpus here")

    recs = run_claims(Broken(), ids=["a14_corpus", "a5_partition", "a12_decomposition"])
    assert {r["id"] for r in recs} == {"a14_corpus", "a5_partition", "a12_decomposition"}
    broken = [r for r in recs if r["id"] != "a12_decomposition"]
    assert all(
        r["check"] == "error" and r["verdict"] == "not comparable" and "no corpus here" in r["ours"] for r in broken
    )
    assert [r["check"] for r in recs if r["id"] == "a12_decomposition"] == ["pass"]  # the others still ran


@pytest.mark.slow  # over 8 s here: `make test-fast` leaves it out
def test_fr_theory_cli(tmp_path):
    from frcore.cli import main
    from theory.run import load_claim_modules

    load_claim_modules()
    (tmp_path / "p.json").write_text(json.dumps(tiny_suite()))
    out = tmp_path / "t.json"
    code = main(["theory", "--suite", str(tmp_path), "--embedder", "hash", "--json", str(out)])
    doc = json.loads(out.read_text())
    assert code in (0, 1) and code == (1 if any(c["check"] != "pass" for c in doc["claims"]) else 0)
    ids = {c["id"] for c in doc["claims"]}
    assert set(CORPUS_CLAIMS) <= ids
    assert doc["inputs"] == {"suite": str(tmp_path), "embedder": "hash", "personas": 1}
    for c in doc["claims"]:
        base = {
            "id",
            "title",
            "paper",
            "ours",
            "check",
            "verdict",
            "rule",
            "reason",
            "parts",
            "diagnosis",
            "inputs",
            "method",
            "range",
            "kind",
            "rule_commit",
            "rule_date",
            "rule_revised",
            "revisions",
        }
        assert base <= set(c) <= base | {"tried", "disagreements", "lipschitz", "delta_min", "queries_satisfying"}, c[
            "id"
        ]
        assert c["method"] in ("symbolic", "witness", "numeric", "search")
        assert c["check"] in ("pass", "fail", "error")
        assert c["verdict"] in ("reproduced", "partly reproduced", "not reproduced", "not comparable")
        assert c["rule"] and c["reason"]
        if c["verdict"] in ("not reproduced", "partly reproduced") and c["check"] == "pass":
            assert c["diagnosis"] and "summary" in c["diagnosis"], c["id"]


# --------------------------------------------------------------------------- calibrate


def test_calibrate_and_round_trip(corpus, tmp_path):
    params, cert = calibrate(corpus)
    a = np.asarray(params.alpha)
    assert np.all((a >= 0) & (a <= 1))
    assert cert["numpy_check_consistent"]
    path = tmp_path / "params.json"
    save_params(params, str(path), cert)
    back = load_params(str(path))
    for x, y in zip(params, back):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-6)
    doc = json.loads(path.read_text())
    assert doc["certificate"]["rows_used"] == cert["rows_used"]


def test_load_params_rejects_bad_file(tmp_path):
    path = tmp_path / "p.json"
    save_params(frcore.default_params(), str(path))
    doc = json.loads(path.read_text())
    doc["params"]["alpha"][3] = 1.5
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="alpha"):
        load_params(str(path))
    del doc["params"]["rates"]
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="rates"):
        load_params(str(path))


@SETTINGS
@given(st.lists(st.tuples(st.floats(-1, 1).filter(lambda v: abs(v) > 1e-3), st.floats(-1, 1)), min_size=1, max_size=10))
def test_interval_certificate_iff_infeasible(rows):
    r = np.array(rows)
    a, c = r[:, 0], r[:, 1]
    lo = max([0.0] + [ci / ai for ai, ci in r if ai < 0])
    hi = min([1.0] + [ci / ai for ai, ci in r if ai > 0])
    Af, cf, y = poly.interval_certificate(a, c)
    if lo > hi + 1e-6:
        assert poly.check_farkas(Af, cf, y)
    elif lo <= hi:
        assert not poly.check_farkas(Af, cf, y)
