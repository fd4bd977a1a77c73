"""The fr-plus rules of the retrieval pipeline (docs/fr-plus.md) on hand-built candidate sets whose
outcome is known by construction: ``turn_age`` and ``turn_share``, ``floor_reference``,
``stable_activation_floor``;
defaults leave the pipeline as it is; the systems resolve by name."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from frcore import CATEGORY_NAMES, default_params, make_candidates, make_query, score_candidates
from frcore.bank import PipelineConfig
from frcore.bank.pipeline import Prepared, retrieve
from frcore.bank.pipeline._prepare import activation_floor_ages, relative_floor_params
from frcore.bench._systems import DEFAULT_SYSTEMS, PLUS_SYSTEMS, SYSTEMS, resolve_systems

C = len(CATEGORY_NAMES)
AT_H = 500_000.0  # query time, hours since the epoch
YEAR, WEEK = 24.0 * 365, 24.0 * 7
PARAMS = default_params()
PLUS = PipelineConfig(
    turn_age="oldest_fact",
    floor_reference="query_max",
    stable_activation_floor=True,
    untyped_score="sigma",
    time_window=True,
    coverage=True,
)


def onehot(name: str) -> np.ndarray:
    w = np.zeros(C)
    w[CATEGORY_NAMES.index(name)] = 1.0
    return w


def prepared(rows: list[dict], kinds: list[str] | None = None) -> Prepared:
    """A snapshot of ``rows`` (keys: cat, said (hours before the query), event (hours ahead or None))."""
    n = len(rows)
    return Prepared(
        weights=np.stack([onehot(r["cat"]) for r in rows]),
        said_at_h=np.array([AT_H - r["said"] for r in rows]),
        event_h=np.array([np.nan if r.get("event") is None else AT_H + r["event"] for r in rows]),
        state=np.zeros(n, dtype=np.int64),
        confidence=np.ones(n),
        numeric=np.zeros(n, dtype=bool),
        slots=[None] * n,
        eligible=np.ones(n, dtype=bool),
        at_h=AT_H,
        kinds=kinds,
    )


def run(prep: Prepared, cosine, config: PipelineConfig, bm25=None):
    cos = np.asarray(cosine, dtype=np.float64)
    bm = np.zeros_like(cos) if bm25 is None else np.asarray(bm25, dtype=np.float64)
    return retrieve(prep, cosine=cos, bm25=bm, routing=np.zeros(C), intent="current", params=PARAMS, config=config)


def by_row(res) -> dict[int, dict]:
    return {r.row: r.terms for r in res.results}


def expected_blend(cat: str, sigma: float, act: float) -> float:
    c = CATEGORY_NAMES.index(cat)
    alpha = float(PARAMS.alpha[c])
    return (1 - alpha) * sigma + alpha * act


# ------------------------------------------------------------------ defaults


def test_defaults_are_the_papers_pipeline():
    cfg = PipelineConfig()
    got = (cfg.turn_age, cfg.turn_share, cfg.floor_reference, cfg.stable_activation_floor)
    assert got == ("said", "own", "absolute", False)
    assert SYSTEMS["fr-full"].pipeline == PipelineConfig()


ROWS = [
    {"cat": "IDENTITY_SELF_CONCEPT", "said": YEAR},
    {"cat": "LOGISTICAL_CONTEXT", "said": WEEK},
    {"cat": "HEALTH_WELLBEING", "said": 2 * YEAR},
    {"cat": "OBLIGATIONS", "said": 30.0, "event": 48.0},
]


@pytest.mark.parametrize("kinds", [None, ["fact", "turn", "fact", "fact"], ["turn"] * 4])
def test_default_config_ignores_kinds(kinds):
    """With the default configuration a snapshot's kinds change nothing (FR-full's scores)."""
    cos = [0.6, 0.6, 0.5, 0.4]
    ref = run(prepared(ROWS), cos, PipelineConfig())
    got = run(prepared(ROWS, kinds), cos, PipelineConfig())
    assert [(r.row, r.score, r.terms) for r in got.results] == [(r.row, r.score, r.terms) for r in ref.results]


def test_kinds_length_is_checked():
    with pytest.raises(ValueError, match="Prepared.kinds"):
        prepared(ROWS, ["fact"])


@pytest.mark.parametrize(
    "field,value",
    [("turn_age", "newest"), ("turn_share", "most"), ("floor_reference", "corpus"), ("stable_activation_floor", "yes")],
)
def test_bad_options_name_the_field(field, value):
    with pytest.raises(ValueError, match=f"PipelineConfig.{field}"):
        PipelineConfig(**{field: value})


# ------------------------------------------------------------------ rule 1: turn age


def test_fresh_turn_loses_its_recency_lift_over_an_old_fact():
    """An old stable fact and a fresh turn of the same category at equal σ: the paper's score
    ranks the turn first on recency alone; with turn_age=oldest_fact the turn is aged as the
    oldest typed fact, so its activation is that fact's and it has no advantage."""
    rows = [{"cat": "IDENTITY_SELF_CONCEPT", "said": YEAR}, {"cat": "IDENTITY_SELF_CONCEPT", "said": WEEK}]
    prep = prepared(rows, ["fact", "turn"])
    paper = run(prep, [0.6, 0.6], PipelineConfig())
    assert [r.row for r in paper.results] == [1, 0]  # the turn first: a ≈ 0.8 against a ≈ 0
    cfg = PipelineConfig(turn_age="oldest_fact")
    ruled = run(prep, [0.6, 0.6], cfg)
    t = by_row(ruled)
    assert t[1]["age"] == pytest.approx(t[0]["age"], rel=1e-6)
    assert t[1]["activation"] == pytest.approx(t[0]["activation"], abs=1e-9)
    assert t[1]["total"] <= t[0]["total"]
    assert ruled.results[0].row == 0  # equal scores: the lower row (the fact) first


def test_turn_takes_the_oldest_fact_age_on_each_clock():
    rows = [
        {"cat": "IDENTITY_SELF_CONCEPT", "said": YEAR},
        {"cat": "HEALTH_WELLBEING", "said": 2 * YEAR},
        {"cat": "LOGISTICAL_CONTEXT", "said": 10.0},
    ]
    prep = prepared(rows, ["fact", "fact", "turn"])
    key, ages = prep.rule_ages(PipelineConfig(turn_age="oldest_fact"), PARAMS)
    assert key is not None
    np.testing.assert_array_equal(ages[2], prep.ages[:2].max(axis=0))
    np.testing.assert_array_equal(ages[:2], prep.ages[:2])  # facts keep their own ages


def test_bank_of_turns_only_is_unchanged_by_the_turn_rule():
    rows = [{"cat": "LOGISTICAL_CONTEXT", "said": WEEK}, {"cat": "OTHER", "said": YEAR}]
    prep = prepared(rows, ["turn", "turn"])
    cos = [0.5, 0.55]
    ref = run(prep, cos, PipelineConfig())
    got = run(prep, cos, PipelineConfig(turn_age="oldest_fact"))
    assert [(r.row, r.score) for r in got.results] == [(r.row, r.score) for r in ref.results]


def test_without_kinds_the_rules_that_need_them_change_nothing():
    """A snapshot without kinds: no row is known to be a turn or a typed fact, so neither the turn
    rule nor the activation floor applies (fr-plus falls back to FR-full plus the relative floor)."""
    prep = prepared(ROWS)
    for cfg in (PipelineConfig(turn_age="oldest_fact"), PipelineConfig(stable_activation_floor=True)):
        _, ages = prep.rule_ages(cfg, PARAMS)
        np.testing.assert_array_equal(ages, prep.ages)
    cos = [0.6, 0.6, 0.5, 0.4]
    ref = run(prep, cos, PipelineConfig(floor_reference="query_max"))
    got = run(prep, cos, SYSTEMS["fr-plus"].pipeline)
    assert [(r.row, r.score) for r in got.results] == [(r.row, r.score) for r in ref.results]
    typed = prepared(ROWS, ["fact"] * 4)
    _, ages = typed.rule_ages(PipelineConfig(stable_activation_floor=True), PARAMS)
    assert (ages[0] < typed.ages[0]).all()  # the year-old identity fact: capped


def test_turn_share_gives_a_turn_the_least_similarity_share():
    """An aged turn the router put in IDENTITY_SELF_CONCEPT (α 0.10) and an old LOGISTICAL_CONTEXT
    fact (α 0.40, the largest) at equal σ: with the turn's own α it blends 0.9σ against the fact's
    0.6σ and ranks first; with turn_share=least it blends (1 − 0.40)·σ too and does not outrank it."""
    rows = [{"cat": "LOGISTICAL_CONTEXT", "said": YEAR}, {"cat": "IDENTITY_SELF_CONCEPT", "said": WEEK}]
    prep = prepared(rows, ["fact", "turn"])
    s = 0.7 * 0.5
    own = run(prep, [0.5, 0.5], PipelineConfig(turn_age="oldest_fact"))
    assert own.results[0].row == 1
    assert by_row(own)[1]["blend"] == pytest.approx(0.9 * s, rel=1e-3)
    least = run(prep, [0.5, 0.5], PipelineConfig(turn_age="oldest_fact", turn_share="least"))
    t = by_row(least)
    assert t[1]["blend"] == pytest.approx(0.6 * s, rel=1e-3)
    # equal but for α·a of the turn, whose slower identity rate leaves a ≈ 0.005 at the fact's ages
    assert t[1]["blend"] - t[0]["blend"] == pytest.approx(0.1 * t[1]["activation"] - 0.4 * t[0]["activation"], abs=1e-6)
    assert abs(t[1]["total"] - t[0]["total"]) < 1e-3


@pytest.mark.parametrize("kinds", [["turn", "turn"], ["fact", "fact"], None])
def test_turn_share_changes_nothing_without_both_kinds(kinds):
    rows = [{"cat": "LOGISTICAL_CONTEXT", "said": YEAR}, {"cat": "IDENTITY_SELF_CONCEPT", "said": WEEK}]
    prep = prepared(rows, kinds)
    ref = run(prep, [0.5, 0.45], PipelineConfig())
    got = run(prep, [0.5, 0.45], PipelineConfig(turn_share="least"))
    assert [(r.row, r.score) for r in got.results] == [(r.row, r.score) for r in ref.results]
    assert prep.turn_share_factor(PARAMS, PipelineConfig().score) is None


def test_turn_share_is_off_under_global_alpha():
    from frcore import ScoreConfig

    prep = prepared([{"cat": "LOGISTICAL_CONTEXT", "said": YEAR}, {"cat": "OTHER", "said": WEEK}], ["fact", "turn"])
    assert prep.turn_share_factor(PARAMS, ScoreConfig(global_alpha=True)) is None
    f = prep.turn_share_factor(PARAMS, ScoreConfig())
    assert f[0] == 1.0 and f[1] == pytest.approx(0.6 / 0.9)


# ------------------------------------------------------------------ rule 2: relative floor


def test_floor_applies_at_the_querys_best_sigma():
    """σ = 0.6 is far below the paper's θ_F = 0.95, so FR-full never floors it; relative to the
    query's best σ (0.6) it is the best match and b = max(blend, F_c · σ)."""
    rows = [{"cat": "IDENTITY_SELF_CONCEPT", "said": 2 * YEAR}, {"cat": "HEALTH_WELLBEING", "said": 2 * YEAR}]
    prep = prepared(rows, ["fact", "fact"])
    cos = [0.6, 0.5]  # bm25 0: σ = 0.7 · cosine
    s0, s1 = 0.7 * 0.6, 0.7 * 0.5
    paper = by_row(run(prep, cos, PipelineConfig()))
    ruled = by_row(run(prep, cos, PipelineConfig(floor_reference="query_max")))
    a0 = paper[0]["activation"]
    assert paper[0]["blend"] == pytest.approx(expected_blend("IDENTITY_SELF_CONCEPT", s0, a0), rel=1e-5)
    f_id = float(PARAMS.floors[CATEGORY_NAMES.index("IDENTITY_SELF_CONCEPT")])
    assert ruled[0]["blend"] == pytest.approx(f_id * s0, rel=1e-5)
    assert ruled[0]["blend"] > paper[0]["blend"]
    # 0.35 < 0.95 · 0.42: the second candidate gets no floor
    assert ruled[1]["blend"] == pytest.approx(paper[1]["blend"], rel=1e-6)
    assert s1 < 0.95 * s0


def test_relative_floor_params_scale_only_the_threshold():
    base = relative_floor_params(PARAMS, 0.0)
    half = relative_floor_params(PARAMS, 0.5)
    diff = np.flatnonzero(base != half)
    assert diff.size == 1
    assert half[diff[0]] == pytest.approx(0.95 * 0.5, rel=1e-6)
    assert base[diff[0]] == pytest.approx(0.95, rel=1e-6)


# ------------------------------------------------------------------ rule 3: activation floor


def test_old_stable_fact_keeps_its_floor_and_expiring_categories_do_not():
    rows = [
        {"cat": "IDENTITY_SELF_CONCEPT", "said": YEAR},
        {"cat": "LOGISTICAL_CONTEXT", "said": YEAR},
        {"cat": "OTHER", "said": YEAR},
        {"cat": "PROJECTS_ENDEAVORS", "said": YEAR},
        {"cat": "IDENTITY_SELF_CONCEPT", "said": 1.0},  # fresh: above its floor already
        {"cat": "OBLIGATIONS", "said": YEAR},  # F = 0.70, but the category expires at events
    ]
    prep = prepared(rows, ["fact"] * 6)
    t = by_row(run(prep, [0.5] * 6, PipelineConfig(stable_activation_floor=True)))
    paper = by_row(run(prep, [0.5] * 6, PipelineConfig()))
    assert t[0]["activation"] == pytest.approx(0.95, abs=1e-5)
    assert t[3]["activation"] == pytest.approx(0.75, abs=1e-5)
    assert paper[0]["activation"] < 1e-3 and paper[3]["activation"] < 1e-3
    for r in (1, 2, 4, 5):  # LOGISTICAL and OBLIGATIONS expire at events, OTHER has F = 0, row 4 is fresh
        assert t[r]["activation"] == paper[r]["activation"]


def test_activation_floor_does_not_touch_turns_or_anticipation():
    rows = [
        {"cat": "IDENTITY_SELF_CONCEPT", "said": YEAR},  # a turn: its category is a guess
        {"cat": "HEALTH_WELLBEING", "said": YEAR, "event": 24.0},  # event tomorrow: the ramp
    ]
    prep = prepared(rows, ["turn", "fact"])
    t = by_row(run(prep, [0.5, 0.5], PipelineConfig(stable_activation_floor=True)))
    paper = by_row(run(prep, [0.5, 0.5], PipelineConfig()))
    assert t[0]["activation"] == paper[0]["activation"] < 0.01
    assert t[1]["activation"] == pytest.approx(paper[1]["activation"], rel=1e-6)
    assert t[1]["activation"] > 2.0


@settings(max_examples=60, deadline=None)
@given(
    cats=st.lists(st.integers(0, C - 1), min_size=1, max_size=8),
    ages=st.lists(st.tuples(st.floats(0, 2e4), st.floats(0, 2e4), st.floats(0, 2e3)), min_size=8, max_size=8),
    typed=st.lists(st.booleans(), min_size=8, max_size=8),
)
def test_activation_floor_property(cats, ages, typed):
    """For any rows: ages never grow; a typed row of a stable category reaches a ≥ F_c (float32
    kernel); every other row keeps its ages exactly."""
    n = len(cats)
    w = np.stack([np.eye(C)[c] for c in cats])
    a = np.array(ages[:n], dtype=np.float64)
    ty = np.array(typed[:n])
    out = activation_floor_ages(a, w, ty, PARAMS, PipelineConfig().score)
    assert (out <= a + 1e-12).all()
    floors = np.asarray(PARAMS.floors, dtype=np.float64)
    stable_cats = {
        CATEGORY_NAMES.index(c)
        for c in (
            "IDENTITY_SELF_CONCEPT",
            "RELATIONAL_BONDS",
            "INTELLECTUAL_INTERESTS",
            "HEALTH_WELLBEING",
            "PROJECTS_ENDEAVORS",
            "HOBBIES_RECREATION",
            "PREFERENCES_HABITS",
            "FINANCIAL_MATERIAL",
        )
    }
    cands = make_candidates(sim=np.full(n, 0.5), weights=w, ages=out)
    terms = score_candidates(PARAMS, make_query("current", np.zeros(C)), cands)
    act = np.asarray(terms.activation, dtype=np.float64)
    for i, c in enumerate(cats):
        if ty[i] and c in stable_cats:
            assert act[i] >= floors[c] - 1e-5
        else:
            np.testing.assert_array_equal(out[i], a[i])


@pytest.mark.parametrize("decay", ["harmonic", "arithmetic", "primary", "uniform", "cognitive"])
def test_activation_floor_is_computed_on_padded_rows_with_the_same_values(decay, monkeypatch):
    """The rows are padded to a power of two (JAX compiles each operation once per shape, so a
    bank grown by a fact compiles nothing new) and the result is bit for bit that of the rows
    alone."""
    from frcore import effective_age, effective_rate
    from frcore.bank.pipeline import _prepare

    config = dataclasses.replace(PipelineConfig().score, decay=decay)
    shapes: list[int] = []
    seen = _prepare.effective_age

    def spy(params, weights, ages):
        shapes.append(np.shape(weights)[0])
        return seen(params, weights, ages)

    monkeypatch.setattr(_prepare, "effective_age", spy)
    rng = np.random.default_rng(7)
    for n in (1, 5, 9, 16, 17, 100):
        w = rng.dirichlet(np.full(C, 0.3), size=n)
        a = rng.exponential(2e4, size=(n, 3))
        fact = rng.random(n) < 0.8
        fact[0] = True
        w[0] = onehot("FINANCIAL_MATERIAL")
        out = activation_floor_ages(a, w, fact, PARAMS, config)
        # as computed on the rows alone
        floors = np.asarray(PARAMS.floors, dtype=np.float64)
        primary = np.argmax(w, axis=1)
        a_min = np.where(fact & (floors[primary] > 0) & ~_prepare._EXPIRES[primary], floors[primary], 0.0)
        rows = np.flatnonzero(a_min > 0)
        want = a.copy()
        if rows.size:
            rate = np.asarray(effective_rate(PARAMS, w[rows], config), dtype=np.float64)
            age = np.asarray(effective_age(PARAMS, w[rows], a[rows].T), dtype=np.float64)
            cap = -np.log(np.minimum(a_min[rows], 1.0)) / rate
            factor = np.where(age > cap, cap / np.where(age > cap, age, 1.0), 1.0)
            want[rows] *= factor[:, None]
        np.testing.assert_array_equal(out, want)
    assert set(shapes) <= {8, 16, 32, 64, 128}


# ------------------------------------------------------------------ fr-plus together


def test_fr_plus_ranks_old_stable_fact_over_fresh_turn():
    """The mechanism of the stable-identity losses: an identity fact said a year ago against a
    logistics turn from last week and a logistics fact from yesterday, all at equal σ. FR-full
    ranks both fresh items above the identity fact; fr-plus ranks it above the turn (the turn is
    aged as the oldest fact, the fact keeps a ≥ 0.95) while the fresh typed logistics fact keeps
    its recency (LOGISTICAL_CONTEXT expires at events: no activation floor, and its α is 0.40)."""
    rows = [
        {"cat": "IDENTITY_SELF_CONCEPT", "said": YEAR},
        {"cat": "LOGISTICAL_CONTEXT", "said": WEEK},
        {"cat": "LOGISTICAL_CONTEXT", "said": 24.0},
    ]
    prep = prepared(rows, ["fact", "turn", "fact"])
    cos = [0.5, 0.5, 0.5]
    assert [r.row for r in run(prep, cos, SYSTEMS["fr-full"].pipeline).results] == [2, 1, 0]
    got = run(prep, cos, SYSTEMS["fr-plus"].pipeline)
    assert [r.row for r in got.results] == [2, 0, 1]
    s = 0.7 * 0.5
    t = by_row(got)
    assert t[0]["blend"] == pytest.approx(expected_blend("IDENTITY_SELF_CONCEPT", s, 0.95), rel=1e-4)
    assert t[1]["activation"] < 1e-3  # the turn is as old as the year-old fact


# ------------------------------------------------------------------ systems


def test_plus_systems_resolve_and_are_in_all():
    names = [s.name for s in resolve_systems(",".join(PLUS_SYSTEMS))]
    assert names == list(PLUS_SYSTEMS)
    assert set(PLUS_SYSTEMS) <= set(DEFAULT_SYSTEMS)
    assert [s.name for s in resolve_systems("all")] == list(DEFAULT_SYSTEMS)
    assert SYSTEMS["fr-plus"].pipeline == PLUS


@pytest.mark.parametrize(
    "name,off",
    [
        ("fr-plus-no-turn-age", {"turn_age": "said"}),
        ("fr-plus-no-relative-floor", {"floor_reference": "absolute"}),
        ("fr-plus-no-activation-floor", {"stable_activation_floor": False}),
        ("fr-plus-no-sigma-turns", {"untyped_score": "kernel"}),
        ("fr-plus-no-time-window", {"time_window": False}),
        ("fr-plus-no-coverage", {"coverage": False}),
        ("fr-plus-time-order", {"time_order": True}),
        ("fr-plus-turn-context", {"turn_context": True}),
    ],
)
def test_each_ablation_drops_exactly_one_rule(name, off):
    abl = SYSTEMS[name].pipeline
    plus = SYSTEMS["fr-plus"].pipeline
    fields = [f.name for f in dataclasses.fields(PipelineConfig)]
    differ = {f: getattr(abl, f) for f in fields if getattr(abl, f) != getattr(plus, f)}
    assert differ == off
    assert dataclasses.replace(abl, **off) == PipelineConfig(**{**dataclasses.asdict(plus), **off, "score": plus.score})
