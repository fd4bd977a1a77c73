"""Judge-free LifecycleBench scoring (SPEC §5): the paper's pass rules on hand-built rankings,
metric definitions, aggregation, paired statistics and the markdown report."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import assume, example, given, strategies as st
from support.paths import SHARED_DATA

from frcore.bench._metrics import (
    AV_KEYS,
    METRIC_KEYS,
    RANK_WEIGHTS,
    TOP_K,
    Outcome,
    aggregate,
    markdown_table,
    mcnemar,
    paired_bootstrap,
    pass_rule,
    question_outcome,
)

S, S2, W, W2 = "s", "s2", "w", "w2"


def pad(*ids: str, to: int = 0) -> list[str]:
    """The ids followed by neutral fillers x1, x2, ... up to length ``to``."""
    out = list(ids)
    k = 1
    while len(out) < to:
        out.append(f"x{k}")
        k += 1
    return out


def at(rank_of: dict[str, int], length: int = TOP_K) -> list[str]:
    """A ranking of ``length`` with each given id at its 1-based rank, fillers elsewhere."""
    out = [f"x{i}" for i in range(1, length + 1)]
    for x, r in rank_of.items():
        out[r - 1] = x
    return out


SUPPORT_FIRST = ("AV1", "AV4", "AV6", "AV9")
SUPPORT_ONLY = ("AV3", "AV5", "AV8")

# (case id, attack vectors, ranking, support, wrong, expected pass)
CASES = [
    # AV1/4/6/9: support in the top-10 and no wrong item above the first support.
    ("sf_support_only", SUPPORT_FIRST, [S], [S], [W], True),
    ("sf_wrong_above", SUPPORT_FIRST, [W, S], [S], [W], False),
    ("sf_wrong_below", SUPPORT_FIRST, [S, W], [S], [W], True),
    ("sf_second_support_above_wrong", SUPPORT_FIRST, [W, S2, S], [S, S2], [W], False),
    ("sf_support_rank10", SUPPORT_FIRST, at({S: 10}), [S], [W], True),
    ("sf_support_rank11", SUPPORT_FIRST, at({S: 11}, 12), [S], [W], False),
    ("sf_wrong_rank11_only", SUPPORT_FIRST, at({S: 9, W: 11}, 12), [S], [W], True),
    ("sf_empty_ranking", SUPPORT_FIRST, [], [S], [W], False),
    ("sf_no_wrong_items", SUPPORT_FIRST, at({S: 4}), [S], [], True),
    ("sf_both_absent", SUPPORT_FIRST, pad(to=10), [S], [W], False),
    ("sf_only_wrong", SUPPORT_FIRST, [W], [S], [W], False),
    # AV2: no wrong in the top-5, or a support item above every wrong item.
    ("av2_empty_ranking", ("AV2",), [], [S], [W], True),
    ("av2_both_absent", ("AV2",), pad(to=10), [S], [W], True),
    ("av2_wrong_rank1", ("AV2",), [W], [S], [W], False),
    ("av2_wrong_rank5_no_support", ("AV2",), at({W: 5}), [S], [W], False),
    ("av2_wrong_rank6_no_support", ("AV2",), at({W: 6}), [S], [W], True),
    ("av2_support_above_wrong", ("AV2",), [S, W], [S], [W], True),
    ("av2_support_above_all_wrongs", ("AV2",), at({S: 2, W: 3, W2: 4}), [S], [W, W2], True),
    ("av2_wrong_above_support", ("AV2",), [W, S], [S], [W], False),
    ("av2_support_between_wrongs", ("AV2",), at({W: 2, S: 3, W2: 4}), [S], [W, W2], False),
    ("av2_no_wrong_items", ("AV2",), pad(to=10), [S], [], True),
    # AV7: support in the top-10 and no wrong item in the top-5.
    ("av7_support_only", ("AV7",), [S], [S], [W], True),
    ("av7_wrong_rank2_below_support", ("AV7",), [S, W], [S], [W], False),
    ("av7_wrong_rank6", ("AV7",), at({S: 1, W: 6}), [S], [W], True),
    ("av7_wrong_rank5", ("AV7",), at({S: 1, W: 5}), [S], [W], False),
    ("av7_wrong_rank6_above_support", ("AV7",), at({W: 6, S: 7}), [S], [W], True),
    ("av7_no_support", ("AV7",), at({W: 7}), [S], [W], False),
    ("av7_empty_ranking", ("AV7",), [], [S], [W], False),
    ("av7_both_absent", ("AV7",), pad(to=10), [S], [W], False),
    # AV3/5/8: a support item in the top-10.
    ("so_wrong_above", SUPPORT_ONLY, [W, S], [S], [W], True),
    ("so_only_wrong", SUPPORT_ONLY, [W], [S], [W], False),
    ("so_support_rank10", SUPPORT_ONLY, at({W: 1, S: 10}), [S], [W], True),
    ("so_support_rank11", SUPPORT_ONLY, at({S: 11}, 11), [S], [W], False),
    ("so_empty_ranking", SUPPORT_ONLY, [], [S], [W], False),
    ("so_no_wrong_items", SUPPORT_ONLY, [S], [S], [], True),
    ("so_both_absent", SUPPORT_ONLY, pad(to=3), [S], [W], False),
]

PASS_CASES = [
    pytest.param(av, ranked, sup, wr, exp, id=f"{cid}-{av}") for cid, avs, ranked, sup, wr, exp in CASES for av in avs
]


@pytest.mark.parametrize("av, ranked, support, wrong, expected", PASS_CASES)
def test_pass_rules(av, ranked, support, wrong, expected):
    assert question_outcome(av, ranked, support, wrong).passed is expected


def test_every_av_covered_by_cases():
    covered = {p.values[0] for p in PASS_CASES}
    assert covered == set(AV_KEYS)


def test_full_attack_vector_names_accepted():
    o = question_outcome("AV2_expired_logistics", [W, S], [S], [W])
    assert o.av == "AV2" and o.passed is False
    assert pass_rule("AV7_selective_forgetting") == "support_and_no_wrong_top5"


def test_metric_definitions_by_hand():
    ranked = ["w1", "x1", "s", "w2", "x2", "x3", "x4", "w3", "x5", "x6", "w4", "s9"]
    o = question_outcome("AV3", ranked, support=["s", "s9"], wrong=["w1", "w2", "w3", "w4"])
    assert o.stale is True
    assert (o.hit1, o.hit5, o.hit10) == (False, True, True)
    assert o.rr == pytest.approx(1 / 3)
    assert o.pse == pytest.approx(3 / 10)  # w4 at rank 11 does not count
    assert o.wsr == pytest.approx(3.0 + 1.0 + 2.0)  # ranks 1, 4, 8
    assert (o.first_support_rank, o.first_wrong_rank, o.n_wrong_top10) == (3, 1, 3)
    assert o.passed is True


def test_metrics_when_nothing_retrieved():
    o = question_outcome("AV1", [], [S], [W])
    assert (o.stale, o.hit1, o.hit5, o.hit10, o.rr, o.pse, o.wsr) == (False, False, False, False, 0.0, 0.0, 0.0)
    assert o.first_support_rank is None and o.first_wrong_rank is None


def test_wsr_all_wrong_is_19_and_pse_1():
    wrong = [f"w{i}" for i in range(10)]
    o = question_outcome("AV1", wrong, [S], wrong)
    assert o.wsr == 19.0 and o.pse == 1.0
    assert RANK_WEIGHTS == (3.0,) * 3 + (1.0,) * 4 + (2.0,) * 3


def test_hit_at_k_boundaries():
    for rank, hits in [
        (1, (True, True, True)),
        (5, (False, True, True)),
        (6, (False, False, True)),
        (10, (False, False, True)),
        (11, (False, False, False)),
    ]:
        o = question_outcome("AV3", at({S: rank}, 11), [S], [])
        assert (o.hit1, o.hit5, o.hit10) == hits, rank
        assert o.rr == (1.0 / rank if rank <= 10 else 0.0)


@pytest.mark.parametrize(
    "args, match",
    [
        (("AV10", [S], [S], [W]), "attack_vector"),
        (("superseded", [S], [S], [W]), "attack_vector"),
        (("AV1", [S, "x", S], [S], [W]), r"ranked_ids\[2\].*duplicate"),
        (("AV1", [S, 3], [S], [W]), r"ranked_ids\[1\]"),
        (("AV1", "s", [S], [W]), "ranked_ids"),
        (("AV1", [S], [S], [W, S]), r"wrong\[1\].*support"),
        (("AV1", [S], [S, None], [W]), r"support\[1\]"),
    ],
)
def test_bad_input_raises(args, match):
    with pytest.raises(ValueError, match=match):
        question_outcome(*args)


# --------------------------------------------------------------------------- properties

IDS = [f"i{k}" for k in range(14)]


@st.composite
def questions(draw):
    """(av, ranking, support, wrong): disjoint support / wrong over a small id universe."""
    av = draw(st.sampled_from(AV_KEYS))
    labels = draw(st.lists(st.sampled_from(["s", "w", "n"]), min_size=len(IDS), max_size=len(IDS)))
    support = [x for x, lab in zip(IDS, labels) if lab == "s"]
    wrong = [x for x, lab in zip(IDS, labels) if lab == "w"]
    ranked = draw(st.permutations(IDS))
    ranked = ranked[: draw(st.integers(0, len(IDS)))]
    return av, list(ranked), support, wrong


def _moved(ranked, i, j):
    out = list(ranked)
    x = out.pop(i)
    out.insert(j, x)
    return out


@given(questions(), st.data())
def test_removing_wrong_items_never_breaks_a_pass(q, data):
    av, ranked, support, wrong = q
    before = question_outcome(av, ranked, support, wrong)
    in_ranked = [x for x in ranked if x in wrong]
    drop = set(data.draw(st.lists(st.sampled_from(in_ranked), unique=True) if in_ranked else st.just([])))
    after = question_outcome(av, [x for x in ranked if x not in drop], support, wrong)
    assert not (before.passed and not after.passed), (av, ranked, drop)
    assert after.n_wrong_top10 <= before.n_wrong_top10 + len(drop)


@given(questions())
@example(("AV3", [IDS[1], IDS[0]], [IDS[0]], [IDS[1]]))
def test_moving_rank1_wrong_below_every_support_never_breaks_a_pass(q):
    av, ranked, support, wrong = q
    if not ranked or ranked[0] not in wrong:
        ranked = [wrong[0]] + [x for x in ranked if x != wrong[0]] if wrong else ranked
    assume(ranked and ranked[0] in wrong)
    sup_pos = [i for i, x in enumerate(ranked) if x in support]
    target = sup_pos[-1] if sup_pos else len(ranked) - 1  # after pop, index of the last support + 1
    before = question_outcome(av, ranked, support, wrong)
    moved = _moved(ranked, 0, target)
    assert all(moved.index(ranked[0]) > i for i, x in enumerate(moved) if x in support)
    after = question_outcome(av, moved, support, wrong)
    assert not (before.passed and not after.passed), (av, ranked)


@given(questions(), st.data())
def test_demoting_any_wrong_item_never_breaks_a_pass(q, data):
    """Stronger than the rank-1 case: moving a wrong item to any lower rank."""
    av, ranked, support, wrong = q
    pos = [i for i, x in enumerate(ranked) if x in wrong]
    assume(pos)
    i = data.draw(st.sampled_from(pos))
    j = data.draw(st.integers(i, len(ranked) - 1))
    before = question_outcome(av, ranked, support, wrong)
    after = question_outcome(av, _moved(ranked, i, j), support, wrong)
    assert not (before.passed and not after.passed), (av, ranked, i, j)


@given(questions())
def test_pass_implies_hit10_where_support_is_required(q):
    av, ranked, support, wrong = q
    o = question_outcome(av, ranked, support, wrong)
    if av != "AV2" and o.passed:
        assert o.hit10
    if av == "AV2" and not o.passed:
        assert o.first_wrong_rank is not None and o.first_wrong_rank <= 5


@given(questions(), st.lists(st.sampled_from([f"z{k}" for k in range(5)]), unique=True))
def test_only_top10_counts(q, tail):
    av, ranked, support, wrong = q
    full = ranked + [x for x in tail]
    assume(len(ranked) >= TOP_K)
    assert question_outcome(av, full, support, wrong) == question_outcome(av, ranked[:TOP_K], support, wrong)


@given(questions())
def test_metric_ranges_and_consistency(q):
    av, ranked, support, wrong = q
    o = question_outcome(av, ranked, support, wrong)
    assert 0.0 <= o.rr <= 1.0 and 0.0 <= o.pse <= 1.0 and 0.0 <= o.wsr <= 19.0
    assert o.hit1 <= o.hit5 <= o.hit10
    assert o.stale == (o.n_wrong_top10 > 0) == (o.pse > 0) == (o.wsr > 0)
    assert o.pse == o.n_wrong_top10 / 10
    top = ranked[:TOP_K]
    assert o.hit10 == any(x in support for x in top)


# --------------------------------------------------------------------------- aggregate


def test_aggregate_by_hand():
    outs = [
        question_outcome("AV1", [S], [S], [W]),  # pass, rr 1
        question_outcome("AV1", [W, S], [S], [W]),  # fail, stale, rr 1/2, wsr 3
        question_outcome("AV3_stable_identity", pad(to=10), [S], []),  # fail, rr 0
    ]
    res = aggregate(outs)
    ov = res["overall"]
    assert set(ov) == set(METRIC_KEYS)
    assert ov["n"] == 3
    assert ov["pass"] == pytest.approx(1 / 3)
    assert ov["staleness"] == pytest.approx(1 / 3)
    assert ov["hit@1"] == pytest.approx(1 / 3) and ov["hit@5"] == pytest.approx(2 / 3)
    assert ov["mrr"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert ov["pse"] == pytest.approx(0.1 / 3) and ov["wsr"] == pytest.approx(1.0)
    assert list(res["per_av"]) == ["AV1", "AV3"]
    assert res["per_av"]["AV1"]["pass"] == 0.5 and res["per_av"]["AV1"]["n"] == 2
    assert res["per_av"]["AV3"]["pass"] == 0.0 and res["per_av"]["AV3"]["n"] == 1


def test_aggregate_rejects_empty_and_foreign():
    with pytest.raises(ValueError, match="outcomes"):
        aggregate([])
    with pytest.raises(ValueError, match=r"outcomes\[1\]"):
        aggregate([question_outcome("AV1", [S], [S], []), {"passed": True}])


@given(st.lists(questions(), min_size=1, max_size=12))
def test_aggregate_per_av_weights_back_to_overall(qs):
    outs = [question_outcome(*q) for q in qs]
    res = aggregate(outs)
    assert sum(t["n"] for t in res["per_av"].values()) == len(outs)
    for key in ("pass", "staleness", "mrr", "wsr"):
        recombined = sum(t[key] * t["n"] for t in res["per_av"].values()) / len(outs)
        assert recombined == pytest.approx(res["overall"][key])


# --------------------------------------------------------------------------- paired statistics

bools = st.lists(st.booleans(), min_size=1, max_size=60)


@st.composite
def pairs(draw):
    n = draw(st.integers(1, 60))
    a = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    b = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return np.array(a), np.array(b)


@given(pairs(), st.integers(0, 2**16))
def test_bootstrap_ci_contains_point_estimate(ab, seed):
    a, b = ab
    r = paired_bootstrap(a, b, n_boot=400, seed=seed)
    assert r["diff"] == pytest.approx(a.mean() - b.mean())
    assert r["ci_low"] - 1e-12 <= r["diff"] <= r["ci_high"] + 1e-12, r


@given(pairs())
def test_bootstrap_antisymmetric_in_swapping(ab):
    a, b = ab
    r = paired_bootstrap(a, b, n_boot=300, seed=3)
    s = paired_bootstrap(b, a, n_boot=300, seed=3)
    assert s["diff"] == pytest.approx(-r["diff"])
    assert s["ci_low"] == pytest.approx(-r["ci_high"]) and s["ci_high"] == pytest.approx(-r["ci_low"])


def test_bootstrap_degenerate_cases():
    ones, zeros = np.ones(20, bool), np.zeros(20, bool)
    r = paired_bootstrap(ones, zeros, n_boot=200)
    assert (r["diff"], r["ci_low"], r["ci_high"]) == (1.0, 1.0, 1.0)
    r = paired_bootstrap(ones, ones, n_boot=200)
    assert (r["diff"], r["ci_low"], r["ci_high"]) == (0.0, 0.0, 0.0)


def test_bootstrap_deterministic_and_sensible_width():
    rng = np.random.default_rng(0)
    a = rng.random(400) < 0.7
    b = rng.random(400) < 0.6
    r1 = paired_bootstrap(a, b, n_boot=2000, seed=5)
    assert r1 == paired_bootstrap(a, b, n_boot=2000, seed=5)
    # Normal approximation of the paired difference: the percentile CI half-width is ≈ 1.96·sd/√n.
    d = a.astype(float) - b.astype(float)
    half = 1.96 * d.std() / math.sqrt(d.size)
    assert (r1["ci_high"] - r1["ci_low"]) / 2 == pytest.approx(half, rel=0.15)


@pytest.mark.parametrize(
    "a, b, match",
    [
        ([True, False], [True], "equal lengths"),
        ([], [], "empty"),
        ([[True]], [[True]], "1-d"),
        ([1, 2], [0, 1], r"a\[1\]"),
        (["yes"], ["no"], "booleans"),
    ],
)
def test_paired_input_validation(a, b, match):
    with pytest.raises(ValueError, match=match):
        paired_bootstrap(a, b, n_boot=10)
    with pytest.raises(ValueError, match=match):
        mcnemar(a, b)


def test_bootstrap_n_boot_validation():
    with pytest.raises(ValueError, match="n_boot"):
        paired_bootstrap([True], [False], n_boot=0)


def _pair(b01: int, b10: int, same: int = 5):
    a = [False] * b01 + [True] * b10 + [True] * same
    b = [True] * b01 + [False] * b10 + [True] * same
    return np.array(a), np.array(b)


def test_mcnemar_exact_by_hand():
    r = mcnemar(*_pair(3, 5))
    assert (r["b01"], r["b10"], r["n_discordant"], r["method"]) == (3, 5, 8, "exact_binomial")
    assert r["p_value"] == pytest.approx(2 * (1 + 8 + 28 + 56) / 256)
    r = mcnemar(*_pair(0, 10))
    assert r["p_value"] == pytest.approx(2 * 0.5**10)


def test_mcnemar_chi2_by_hand():
    r = mcnemar(*_pair(10, 30))
    assert r["method"] == "chi2_cc"
    assert r["statistic"] == pytest.approx(19**2 / 40)
    assert r["p_value"] == pytest.approx(math.erfc(math.sqrt(19**2 / 40 / 2)))  # χ²₁ survival


def test_mcnemar_no_discordant_pairs():
    r = mcnemar(*_pair(0, 0))
    assert r["p_value"] == 1.0 and r["n_discordant"] == 0


@given(pairs())
@example((np.array([True] * 13 + [False] * 12), np.array([False] * 13 + [True] * 12)))
def test_mcnemar_symmetric_in_swapping(ab):
    a, b = ab
    r, s = mcnemar(a, b), mcnemar(b, a)
    assert (s["b01"], s["b10"]) == (r["b10"], r["b01"])
    assert s["p_value"] == pytest.approx(r["p_value"]) and s["method"] == r["method"]
    assert 0.0 <= r["p_value"] <= 1.0


# --------------------------------------------------------------------------- markdown


def _result():
    full = aggregate(
        [
            question_outcome("AV1", [S], [S], [W]),
            question_outcome("AV2", [W], [S], [W]),
            question_outcome("AV8", [S], [S], []),
        ]
    )
    base = aggregate(
        [
            question_outcome("AV1", [W, S], [S], [W]),
            question_outcome("AV2", [], [S], [W]),
            question_outcome("AV8", [S], [S], []),
        ]
    )
    return {"suite": "mini", "systems": {"fr-full": full, "cosine|flat": base}, "questions": []}


def _cells(line: str) -> list[str]:
    """Cells of a markdown table row, splitting on unescaped pipes."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def test_markdown_table_layout():
    md = markdown_table(_result())
    lines = md.strip().splitlines()
    assert "`mini`" in lines[0]
    header = [c.strip() for c in lines[2].strip("|").split("|")]
    assert header[:4] == ["system", "n", "pass %", "stale %"]
    assert header[-3:] == ["AV1 (n=1)", "AV2 (n=1)", "AV8 (n=1)"]
    assert set(lines[3]) <= set("|-:")
    rows = {_cells(r)[0]: _cells(r) for r in lines[4:]}
    assert list(rows) == ["fr-full", "cosine\\|flat"]
    full = rows["fr-full"]
    assert full[1:4] == ["3", "66.7", "33.3"]  # AV1 pass, AV2 fail, AV8 pass; AV2 stale
    assert full[-3:] == ["100.0", "0.0", "100.0"]
    base = rows["cosine\\|flat"]
    assert base[-3:] == ["0.0", "100.0", "100.0"]
    assert "MRR" in header and base[header.index("MRR")] == "0.500"  # (1/2 + 0 + 1) / 3


def test_markdown_table_missing_av_and_unequal_n():
    res = _result()
    res["systems"]["fr-full"]["per_av"].pop("AV8")
    res["systems"]["cosine|flat"]["per_av"]["AV2"]["n"] = 4
    md = markdown_table(res)
    header = [c.strip() for c in md.splitlines()[2].strip("|").split("|")]
    assert "AV2" in header and "AV8 (n=1)" in header
    full = [c.strip() for c in md.splitlines()[4].strip("|").split("|")]
    assert full[header.index("AV8 (n=1)")] == "—"
    assert full[header.index("AV2")] == "0.0 (n=1)"


def test_markdown_table_minimal_contract():
    res = {
        "suite": "s",
        "systems": {
            "a": {
                "overall": {"pass": 0.5, "staleness": 0.25, "n": 4},
                "per_av": {"AV3": {"pass": 0.5, "staleness": 0.0, "n": 4}},
            }
        },
    }
    md = markdown_table(res)
    assert "| a | 4 | 50.0 | 25.0 | 50.0 |" in md


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda r: r.pop("suite"), "'suite'"),
        (lambda r: r.update(systems={}), "'systems'"),
        (lambda r: r["systems"]["fr-full"]["overall"].pop("pass"), r"fr-full.*'pass'"),
        (lambda r: r["systems"]["fr-full"]["overall"].update(staleness="x"), r"fr-full.*'staleness'"),
        (lambda r: r["systems"]["cosine|flat"].pop("per_av"), r"cosine\|flat.*'per_av'"),
        (lambda r: r["systems"]["fr-full"]["per_av"].update(AV12={"pass": 1.0, "n": 1}), r"fr-full.*AV12"),
        (lambda r: r["systems"]["fr-full"]["per_av"]["AV1"].pop("n"), r"fr-full.*AV1.*'n'"),
    ],
)
def test_markdown_table_rejects_malformed(mutate, match):
    res = _result()
    mutate(res)
    with pytest.raises(ValueError, match=match):
        markdown_table(res)


# --------------------------------------------------------------------------- real gold labels

DATA = SHARED_DATA / "lifemembench"


@pytest.mark.skipif(not DATA.is_dir(), reason=f"LifeMemBench development split not found at {DATA}")
def test_gold_oracle_and_adversary_on_real_suites():
    """Ranking the gold support first passes every question; ranking the wrong items first (then
    support) fails every question that has wrong items, except AV3/5/8 (support-only rules)."""
    from frcore.bench._suite import load_suites

    oracle, adversary = [], []
    for suite in load_suites(DATA):
        for q in suite.questions:
            oracle.append(question_outcome(q.attack_vector, list(q.support), q.support, q.wrong))
            adv = question_outcome(q.attack_vector, list(q.wrong) + list(q.support), q.support, q.wrong)
            adversary.append(adv)
            if q.wrong and q.av not in SUPPORT_ONLY:
                assert not adv.passed, q.id
    assert aggregate(oracle)["overall"]["pass"] == 1.0
    assert aggregate(oracle)["overall"]["staleness"] == 0.0
    assert all(isinstance(o, Outcome) for o in adversary)
