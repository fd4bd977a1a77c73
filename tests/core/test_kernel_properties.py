"""Invariants of the lifecycle score kernels, searched with hypothesis (SPEC §2–3, Lemma 1).

Each test states one property; the kernels are the jitted frcore ones (float32), so
inequalities carry a small float32 slack, stated where used.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_allclose
from hypothesis import assume, example, given, settings, strategies as st
from strategies import CONFIGS, WINDOW, candidate_arrays, f32, params, queries, weight_rows

import frcore as fr

C = fr.N_CATEGORIES
PAD = 16  # one shape for every property below: one compile per config
EPS32 = 4e-6  # relative slack for float32 inequalities (a few ulps through ~11-term sums)
LIFECYCLE_CONFIGS = [cid for cid, cfg in CONFIGS.items() if cfg.lifecycle]


def _cands(raw: dict, pad: int = PAD) -> fr.Candidates:
    return fr.make_candidates(**raw, pad_to=pad)


def _k(raw: dict) -> int:
    return raw["sim"].shape[0]


# ----------------------------------------------------------------------------- decay (Lemma 1)


@settings(max_examples=60)
@given(p=params(), w=weight_rows(), mode=st.sampled_from(["harmonic", "cognitive"]))
@example(p=fr.default_params(), w=np.eye(C)[0] * 0.5 + np.eye(C)[9] * 0.5, mode="harmonic")
def test_harmonic_rate_between_min_and_max_and_below_arithmetic_mean(p, w, mode):
    """min_{w_c>0} λ_c ≤ λ_eff ≤ max_{w_c>0} λ_c and λ_eff ≤ Σ w_c λ_c / Σ w_c (HM ≤ AM)."""
    rates = np.asarray(p.cognitive_rates if mode == "cognitive" else p.rates, np.float64)
    lam = float(fr.effective_rate(p, jnp.asarray(w, jnp.float32), fr.ScoreConfig(decay=mode)))
    pos = w > 0
    lo, hi = rates[pos].min(), rates[pos].max()
    assert lo * (1 - EPS32) <= lam <= hi * (1 + EPS32), (lam, lo, hi)
    am = float((w * rates).sum() / w.sum())
    assert lam <= am * (1 + EPS32), (lam, am)


@pytest.mark.parametrize("mode", ["harmonic", "arithmetic", "primary", "cognitive"])
@settings(max_examples=15)
@given(p=params(), c=st.integers(0, C - 1))
def test_one_hot_weights_give_the_category_rate(mode, p, c):
    """With w = e_c every category-specific mode gives λ_c (cognitive: the rate of c's type)."""
    w = jnp.asarray(np.eye(C)[c], jnp.float32)
    lam = float(fr.effective_rate(p, w, fr.ScoreConfig(decay=mode)))
    rates = p.cognitive_rates if mode == "cognitive" else p.rates
    np.testing.assert_allclose(lam, float(rates[c]), rtol=EPS32)


def test_cognitive_rates_follow_the_cognitive_type_column():
    o = fr.as_arrays()
    want = np.asarray(fr.COGNITIVE_RATES_PER_HOUR)[o.cognitive_type]
    np.testing.assert_allclose(np.asarray(fr.default_params().cognitive_rates), want, rtol=1e-7)


@settings(max_examples=40)
@given(p=params(), w=weight_rows())
def test_uniform_decay_ignores_the_weights(p, w):
    lam = fr.effective_rate(p, jnp.asarray(w, jnp.float32), fr.ScoreConfig(decay="uniform"))
    assert float(lam) == float(p.uniform_rate)


# ----------------------------------------------------------------------------- activation


@pytest.mark.parametrize("decay", ["harmonic", "arithmetic", "primary", "uniform", "cognitive"])
@settings(max_examples=15)
@given(raw=candidate_arrays(1, 8), scale=st.lists(f32(1.0, 3.0), min_size=3, max_size=3))
def test_activation_non_increasing_in_age_without_event(decay, raw, scale):
    """Without an event, ages a ≤ a' (elementwise) give a(a) ≥ a(a')."""
    raw = dict(raw, hours_to_event=np.full(_k(raw), np.nan))
    older = dict(raw, ages=raw["ages"] * np.asarray(scale, np.float32) + 1.0)
    cfg = fr.ScoreConfig(decay=decay)
    q = fr.make_query("broad")
    a0 = np.asarray(fr.score_candidates(fr.default_params(), q, _cands(raw), cfg).activation)
    a1 = np.asarray(fr.score_candidates(fr.default_params(), q, _cands(older), cfg).activation)
    assert np.all(a1 <= a0), (a0, a1)
    assert np.all((a0 >= 0) & (a0 <= 1))


@settings(max_examples=40)
@given(p=params(), h1=f32(-500.0, WINDOW), h2=f32(-500.0, WINDOW))
def test_anticipatory_kernel_rises_before_peaks_at_and_falls_after_the_event(p, h1, h2):
    """Ramp up over the window, peak at h = 0, decay after (A.13): for h1 < h2 both ≥ 0,
    a(h1) ≥ a(h2); both < 0, a(h1) ≤ a(h2); and a(0) is the maximum."""
    a = lambda h: float(fr.anticipatory_activation(p, jnp.asarray(h, jnp.float32)))  # noqa: E731
    lo, hi = min(h1, h2), max(h1, h2)
    peak = a(0.0)
    assert peak == pytest.approx(float(p.antic_peak), rel=1e-6)
    assert a(lo) <= peak * (1 + 1e-6) and a(hi) <= peak * (1 + 1e-6)
    if lo >= 0:
        assert a(lo) >= a(hi) * (1 - 1e-6) - 1e-7
    if hi < 0:
        assert a(lo) <= a(hi) * (1 + 1e-6) + 1e-7
    assert a(float(p.antic_window)) == pytest.approx(float(p.antic_start), rel=1e-5)


def test_anticipation_is_not_a_non_increasing_function_of_age():
    """A.13: the same edge gets *more* active as the query time moves toward its event."""
    p = fr.default_params()
    hs = np.array([168.0, 120.0, 48.0, 1.0, 0.0])
    a = np.asarray(fr.anticipatory_activation(p, jnp.asarray(hs, jnp.float32)))
    assert np.all(np.diff(a) > 0), a


@settings(max_examples=30)
@given(raw=candidate_arrays(1, 8))
def test_staleness_floor_zeroes_long_past_events(raw):
    """Past events with peak · exp(−d|h|) below the staleness floor get activation exactly 0."""
    p = fr.default_params()
    k = _k(raw)
    raw = dict(raw, hours_to_event=-np.linspace(40.0, 5000.0, k))  # 3 e^{-0.15·40} < 0.01
    a = np.asarray(fr.score_candidates(p, fr.make_query("broad"), _cands(raw)).activation)[:k]
    assert np.all(a == 0.0), a


@settings(max_examples=30)
@given(raw=candidate_arrays(1, 8))
def test_events_beyond_the_window_use_ordinary_decay(raw):
    k = _k(raw)
    far = dict(raw, hours_to_event=np.full(k, WINDOW + 10.0))
    none = dict(raw, hours_to_event=np.full(k, np.nan))
    q = fr.make_query("broad")
    a_far = fr.score_candidates(fr.default_params(), q, _cands(far)).activation
    a_none = fr.score_candidates(fr.default_params(), q, _cands(none)).activation
    np.testing.assert_array_equal(np.asarray(a_far), np.asarray(a_none))


# ----------------------------------------------------------------------------- blend, floors


@pytest.mark.parametrize("config_id", ["full", "no-floors", "no-numeric-rescue", "global-alpha"])
@settings(max_examples=25)
@given(p=params(), raw=candidate_arrays(1, 8), bump=f32(0.0, 1.0))
def test_blend_non_decreasing_in_similarity(config_id, p, raw, bump):
    """σ ≤ σ' ⇒ b(σ) ≤ b(σ') with everything else fixed (floor and rescue only switch on)."""
    raw2 = dict(raw, sim=np.minimum(1.0, raw["sim"] + bump).astype(np.float32))
    q = fr.make_query("broad")
    cfg = CONFIGS[config_id]
    b1 = np.asarray(fr.score_candidates(p, q, _cands(raw), cfg).blend)
    b2 = np.asarray(fr.score_candidates(p, q, _cands(raw2), cfg).blend)
    assert np.all(b2 >= b1 * (1 - EPS32)), (b1, b2)


@settings(max_examples=40)
@given(p=params(), raw=candidate_arrays(1, 12))
def test_floor_and_numeric_rescue_only_ever_raise_the_blend(p, raw):
    q = fr.make_query("broad")
    c = _cands(raw)
    full = np.asarray(fr.score_candidates(p, q, c).blend)
    no_floor = np.asarray(fr.score_candidates(p, q, c, CONFIGS["no-floors"]).blend)
    no_rescue = np.asarray(fr.score_candidates(p, q, c, CONFIGS["no-numeric-rescue"]).blend)
    # different configs compile to different fusions: allow an ulp (found: 0.8467285 vs 0.84672856)
    assert np.all(full >= no_floor * (1 - EPS32)) and np.all(full >= no_rescue * (1 - EPS32))
    sim = np.asarray(c.sim)
    assert np.all(
        full[sim >= 0.95]
        >= (np.asarray(p.floors)[np.argmax(np.asarray(c.weights), 1)] * sim)[sim >= 0.95] * (1 - EPS32)
    )


@settings(max_examples=40)
@given(p=params(), raw=candidate_arrays(1, 12))
def test_blend_is_a_convex_combination_before_the_floors(p, raw):
    """With floors and rescue off, b lies between σ and a."""
    c = _cands(raw)
    t = fr.score_candidates(p, fr.make_query("broad"), c, fr.ScoreConfig(floors=False, numeric_rescue=False))
    b, s, a = (np.asarray(x, np.float64) for x in (t.blend, c.sim, t.activation))
    lo, hi = np.minimum(s, a), np.maximum(s, a)
    assert np.all(b >= lo - 1e-6) and np.all(b <= hi + 1e-6)


# ----------------------------------------------------------------------------- lifecycle mask


@pytest.mark.parametrize("config_id", LIFECYCLE_CONFIGS)
@settings(max_examples=10)
@given(raw=candidate_arrays(1, 12), intent=st.sampled_from(list(fr.Intent)))
def test_retracted_edges_are_never_admitted(config_id, raw, intent):
    raw = dict(raw, state=np.full(_k(raw), int(fr.State.RETRACTED), np.int32))
    t = fr.score_candidates(fr.default_params(), fr.make_query(int(intent)), _cands(raw), CONFIGS[config_id])
    assert np.all(np.isneginf(np.asarray(t.total)))


@settings(max_examples=40)
@given(raw=candidate_arrays(1, 12), config_id=st.sampled_from(LIFECYCLE_CONFIGS))
def test_upcoming_never_admits_a_past_or_missing_event(raw, config_id):
    """A typed edge needs an event ahead under ``upcoming``; an untyped one too unless
    ``untyped_upcoming`` is on (then its state decides: the test below)."""
    c = _cands(raw)
    t = fr.score_candidates(fr.default_params(), fr.make_query("upcoming"), c, CONFIGS[config_id])
    admitted = np.isfinite(np.asarray(t.total))
    if CONFIGS[config_id].untyped_upcoming:
        admitted &= np.asarray(c.typed)
    assert not np.any(admitted & ~np.asarray(c.has_event)), "upcoming admitted an edge with no event"
    assert not np.any(admitted & (np.asarray(c.hours_to_event) < 0)), "upcoming admitted a past event"
    # SPEC §3: upcoming admits active edges (numeric edges count as active when superseded or
    # expired, by the exemption); a contested edge is never admitted
    assert not np.any(admitted & (np.asarray(c.state) == fr.State.CONTESTED)), "upcoming admitted a contested edge"


@settings(max_examples=40)
@given(raw=candidate_arrays(1, 12), numeric_exemption=st.booleans())
def test_untyped_upcoming_drops_the_event_requirement_of_untyped_edges_only(raw, numeric_exemption):
    """With ``untyped_upcoming``: under ``upcoming`` an untyped edge is admitted exactly when
    COMPATIBLE admits its (numeric-exempted) state, whatever its event; a typed edge exactly as
    with the switch off. Under every other intent the switch changes nothing."""
    c = _cands(raw)
    p = fr.default_params()
    on = fr.ScoreConfig(untyped_upcoming=True, numeric_exemption=numeric_exemption)
    off = fr.ScoreConfig(numeric_exemption=numeric_exemption)
    k = _k(raw)
    typed = np.asarray(c.typed)[:k]
    state = np.asarray(c.state)[:k]
    if numeric_exemption:
        stale = (state == fr.State.SUPERSEDED) | (state == fr.State.EXPIRED)
        state = np.where(np.asarray(c.numeric)[:k] & stale, int(fr.State.ACTIVE), state)
    for intent in fr.Intent:
        q = fr.make_query(int(intent))
        got = np.isfinite(np.asarray(fr.score_candidates(p, q, c, on).total))[:k]
        was = np.isfinite(np.asarray(fr.score_candidates(p, q, c, off).total))[:k]
        if intent != fr.Intent.UPCOMING:
            np.testing.assert_array_equal(got, was, err_msg=intent.name)
            continue
        np.testing.assert_array_equal(got[typed], was[typed])
        np.testing.assert_array_equal(got[~typed], fr.COMPATIBLE[int(intent), state[~typed]])


@settings(max_examples=40)
@given(raw=candidate_arrays(1, 12))
def test_historical_admits_everything_current_admits(raw):
    c = _cands(raw)
    p = fr.default_params()
    cur = np.isfinite(np.asarray(fr.score_candidates(p, fr.make_query("current"), c).total))
    hist = np.isfinite(np.asarray(fr.score_candidates(p, fr.make_query("historical"), c).total))
    chg = np.isfinite(np.asarray(fr.score_candidates(p, fr.make_query("change_history"), c).total))
    assert np.all(hist[cur]) and np.all(chg[cur])


@settings(max_examples=30)
@given(raw=candidate_arrays(1, 12), intent=st.sampled_from([fr.Intent.CURRENT, fr.Intent.BROAD]))
def test_numeric_edges_are_exempt_from_supersession_and_expiry(raw, intent):
    """Superseded/expired numeric edges are admitted wherever active ones are; not retracted ones."""
    k = _k(raw)
    raw = dict(raw, numeric=np.ones(k, bool), state=np.where(np.arange(k) % 2 == 0, 2, 3).astype(np.int32))
    t = fr.score_candidates(fr.default_params(), fr.make_query(int(intent)), _cands(raw))
    assert np.all(np.isfinite(np.asarray(t.total)[:k]))
    # admitted only through the exemption: demoted by log ω_num (< 0), never promoted
    np.testing.assert_allclose(
        np.asarray(t.exemption)[:k], np.log(float(fr.default_params().numeric_exempt_weight)), rtol=1e-6
    )
    t_hist = fr.score_candidates(fr.default_params(), fr.make_query("historical"), _cands(raw))
    assert np.all(np.asarray(t_hist.exemption) == 0.0)  # historical admits them on its own
    t_off = fr.score_candidates(
        fr.default_params(), fr.make_query(int(intent)), _cands(raw), CONFIGS["no-numeric-exemption"]
    )
    assert np.all(np.isneginf(np.asarray(t_off.total)[:k]))


@settings(max_examples=30)
@given(raw=candidate_arrays(1, 12), q=queries())
def test_lifecycle_off_admits_every_real_row(raw, q):
    k = _k(raw)
    t = fr.score_candidates(fr.default_params(), q, _cands(raw), CONFIGS["lifecycle-off"])
    m = np.asarray(t.mask)
    assert np.all(m[:k] == 0.0) and np.all(np.isneginf(m[k:]))
    assert np.all(np.asarray(t.supersession) == 0.0)


# ----------------------------------------------------------------------------- terms


@pytest.mark.parametrize("config_id", list(CONFIGS))
@settings(max_examples=8)
@given(p=params(), raw=candidate_arrays(1, 12), q=queries())
def test_total_is_the_sum_of_the_named_terms(config_id, p, raw, q):
    t = fr.score_candidates(p, q, _cands(raw), CONFIGS[config_id])
    parts = (
        np.asarray(t.log_blend)
        + np.asarray(t.routing)
        + np.asarray(t.supersession)
        + np.asarray(t.mask)
        + np.asarray(t.exemption)
    )
    assert_allclose(t.total, parts, name="total")
    np.testing.assert_allclose(
        np.asarray(t.log_blend), np.log(np.maximum(np.asarray(t.blend, np.float64), 1e-12)), rtol=1e-5, atol=1e-6
    )
    assert np.all(np.asarray(t.routing) >= 0) and np.all(np.asarray(t.supersession) <= 0)
    assert np.all(np.asarray(t.exemption) <= 0)
    assert set(np.unique(np.asarray(t.mask))) <= {0.0, -np.inf}


@settings(max_examples=40)
@given(raw=candidate_arrays(1, 12), conf=f32(0.0, 1.0))
def test_supersession_weight_only_for_contested_and_monotone_in_confidence(raw, conf):
    k = _k(raw)
    raw = dict(raw, state=np.full(k, int(fr.State.CONTESTED), np.int32))
    lo = dict(raw, confidence=np.full(k, conf))
    hi = dict(raw, confidence=np.full(k, 1.0))
    q = fr.make_query("current")
    w_lo = np.asarray(fr.score_candidates(fr.default_params(), q, _cands(lo)).supersession)[:k]
    w_hi = np.asarray(fr.score_candidates(fr.default_params(), q, _cands(hi)).supersession)[:k]
    assert np.all(w_hi == 0.0) and np.all(w_lo <= 0.0) and np.all(np.isfinite(w_lo))
    active = dict(lo, state=np.zeros(k, np.int32))
    assert np.all(np.asarray(fr.score_candidates(fr.default_params(), q, _cands(active)).supersession) == 0.0)


@settings(max_examples=30)
@given(
    raw=candidate_arrays(1, 12),
    r=st.lists(f32(0.0, 1.0), min_size=C, max_size=C),
    extra=f32(0.0, 1.0),
    c=st.integers(0, C - 1),
)
def test_routing_term_non_decreasing_in_routing_weight(raw, r, extra, c):
    r1 = np.asarray(r)
    r2 = r1.copy()
    r2[c] = min(1.0, r2[c] + extra)
    cs = _cands(raw)
    t1 = np.asarray(fr.score_candidates(fr.default_params(), fr.make_query("broad", r1), cs).routing)
    t2 = np.asarray(fr.score_candidates(fr.default_params(), fr.make_query("broad", r2), cs).routing)
    assert np.all(t2 >= t1 - 1e-7)


# ----------------------------------------------------------------------------- retrieval (metamorphic)


@settings(max_examples=30)
@given(data=st.data(), p=params(), q=queries(), top=st.integers(1, 10))
def test_scores_invariant_to_permuting_candidates(data, p, q, top):
    raw = data.draw(candidate_arrays(1, 12))
    k = _k(raw)
    perm = np.asarray(data.draw(st.permutations(range(k))))
    permuted = {name: v[perm] for name, v in raw.items()}
    t = fr.score_candidates(p, q, _cands(raw))
    tp = fr.score_candidates(p, q, _cands(permuted))
    for name in fr.ScoreTerms._fields:
        np.testing.assert_array_equal(
            np.asarray(getattr(tp, name))[:k], np.asarray(getattr(t, name))[:k][perm], err_msg=name
        )


@settings(max_examples=40)
@given(data=st.data(), q=queries(), top=st.integers(1, 10))
def test_adding_a_candidate_below_the_kth_never_changes_the_top_k(data, q, top):
    raw = data.draw(candidate_arrays(2, 14))
    new = data.draw(candidate_arrays(1, 1))
    p = fr.default_params()
    k = _k(raw)
    assume(top <= k)
    base = fr.score_candidates(p, q, _cands(raw)).total
    vals, idx = fr.top_k(base, top)
    kth = float(vals[-1])
    both = {name: np.concatenate([raw[name], new[name]]) for name in raw}
    t = fr.score_candidates(p, q, _cands(both)).total
    # appended last, so a tie with the k-th also loses (ties go to the lower index)
    assume(float(t[k]) <= kth)
    vals2, idx2 = fr.top_k(t, top)
    np.testing.assert_array_equal(np.asarray(idx2), np.asarray(idx))
    np.testing.assert_array_equal(np.asarray(vals2), np.asarray(vals))


@settings(max_examples=40)
@given(data=st.data(), q=queries(), top=st.integers(1, 10), how=st.sampled_from(["valid", "retract"]))
def test_masking_a_non_retrieved_item_changes_nothing(data, q, top, how):
    raw = data.draw(candidate_arrays(2, 14))
    k = _k(raw)
    assume(top < k)
    p = fr.default_params()
    c = _cands(raw)
    vals, idx = fr.top_k(fr.score_candidates(p, q, c).total, top)
    outside = sorted(set(range(k)) - set(np.asarray(idx).tolist()))
    j = data.draw(st.sampled_from(outside))
    if how == "valid":
        c2 = c._replace(valid=c.valid.at[j].set(False))
    else:
        c2 = c._replace(state=c.state.at[j].set(int(fr.State.RETRACTED)))
    vals2, idx2 = fr.top_k(fr.score_candidates(p, q, c2).total, top)
    np.testing.assert_array_equal(np.asarray(idx2), np.asarray(idx))
    np.testing.assert_array_equal(np.asarray(vals2), np.asarray(vals))


@settings(max_examples=40)
@given(raw=candidate_arrays(1, 12), q=queries(), top=st.integers(1, 16))
def test_padding_rows_never_enter_the_top_k(raw, q, top):
    k = _k(raw)
    t = fr.score_candidates(fr.default_params(), q, _cands(raw)).total
    assert np.all(np.isneginf(np.asarray(t)[k:]))
    vals, idx = fr.top_k(t, top)
    finite = np.isfinite(np.asarray(vals))
    assert np.all(np.asarray(idx)[finite] < k)


@settings(max_examples=30)
@given(raw=candidate_arrays(1, 8), q=queries())
def test_padding_does_not_change_real_scores(raw, q):
    k = _k(raw)
    p = fr.default_params()
    a = fr.score_candidates(p, q, _cands(raw, 8))
    b = fr.score_candidates(p, q, _cands(raw, PAD))
    for name in fr.ScoreTerms._fields:
        np.testing.assert_array_equal(np.asarray(getattr(a, name))[:k], np.asarray(getattr(b, name))[:k], err_msg=name)


@settings(max_examples=15)
@given(data=st.data())
def test_batched_forms_agree_with_the_per_query_form(data):
    """score_queries row b = score_candidates(query b, candidates b); score_sweep row i = params i."""
    qs = [data.draw(queries()) for _ in range(2)]
    cs = [_cands(data.draw(candidate_arrays(1, 8)), 8) for _ in range(2)]
    ps = [fr.default_params(), data.draw(params())]
    sw = fr.score_sweep(fr.stack_params(ps), fr.stack_queries(qs), fr.stack_candidates(cs))
    for i, p in enumerate(ps):
        for b in range(2):
            one = fr.score_candidates(p, qs[b], cs[b])
            assert_allclose(sw.total[i, b], one.total, name=f"sweep[{i},{b}]")
