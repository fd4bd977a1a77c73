"""The packed single-query path (:mod:`frcore._packed`) against the NumPy twin.

The packed path is a layout (three arrays instead of 26 leaves, candidates feature-major), not
a second formula: every term it returns must match :func:`frcore.reference.score_candidates`,
and its top-k must be the twin's top-k.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, ref_params, to_numpy, tree_allclose
from hypothesis import given, settings, strategies as st
from strategies import CONFIGS, candidates, params, queries

import frcore as fr
from frcore import reference as ref
from frcore._packed import unpack_params


def _packed(p, q, c):
    return fr.pack_params(p), fr.pack_query(q), fr.pack_candidates(c)


def test_pack_params_round_trip_is_exact():
    p = fr.default_params()
    back = unpack_params(fr.pack_params(p))
    for name in fr.LifecycleParams._fields:
        np.testing.assert_array_equal(np.asarray(getattr(back, name)), np.asarray(getattr(p, name)), err_msg=name)


def test_stacked_params_are_rejected_naming_the_field():
    stacked = fr.stack_params([fr.default_params(), fr.default_params()])
    with pytest.raises(ValueError, match=r"params\.rates"):
        fr.pack_params(stacked)


@pytest.mark.parametrize("config_id", list(CONFIGS))
@settings(max_examples=8)
@given(p=st.one_of(st.just(fr.default_params()), params()), q=queries(), c=candidates(1, 16, pad=True, pad_to=16))
def test_score_packed_matches_the_twin(config_id, p, q, c):
    config = CONFIGS[config_id]
    got = fr.score_packed(*_packed(p, q, c), config)
    want = ref.score_candidates(ref_params(p), to_numpy(q), to_numpy(c), config)
    tree_allclose(got, want, name="score_packed")


@pytest.mark.parametrize("config_id", ["full", "lifecycle-off", "primary-only", "cognitive"])
@settings(max_examples=15)
@given(p=params(), q=queries(), c=candidates(1, 16, pad=True, pad_to=16), k=st.integers(1, 20))
def test_score_top_k_packed_is_the_twins_top_k(config_id, p, q, c, k):
    config = CONFIGS[config_id]
    values, order, terms = fr.score_top_k_packed(*_packed(p, q, c), k, config, with_terms=True)
    want = ref.score_candidates(ref_params(p), to_numpy(q), to_numpy(c), config)
    want_values, _ = ref.top_k(want.total, k)
    assert_allclose(values, want_values, name="values")
    order = np.asarray(order)
    assert len(set(order.tolist())) == order.size, "top-k repeats a candidate"
    # each returned index carries the twin's score for that candidate (near-ties may swap order)
    assert_allclose(values, np.asarray(want.total)[order], name="values at the returned indices")
    tree_allclose(
        terms,
        type(want)(*(np.broadcast_to(np.asarray(t)[order] if np.ndim(t) else t, order.shape) for t in want)),
        name="terms",
    )


@settings(max_examples=10)
@given(p=params(), q=queries(), c=candidates(1, 16, pad=True, pad_to=16), k=st.integers(1, 20))
def test_score_top_k_rows_is_score_top_k_packed_stacked(p, q, c, k):
    from frcore._packed import score_top_k_rows

    args = _packed(p, q, c)
    rows = np.asarray(score_top_k_rows(*args, k))
    values, order, terms = fr.score_top_k_packed(*args, k, with_terms=True)
    assert rows.shape == (2 + len(fr.ScoreTerms._fields), np.asarray(order).size)
    np.testing.assert_array_equal(rows[0], np.asarray(values))
    np.testing.assert_array_equal(rows[1].astype(np.int64), np.asarray(order))
    for i, t in enumerate(terms):
        np.testing.assert_array_equal(rows[2 + i], np.asarray(t, dtype=np.float32), err_msg=fr.ScoreTerms._fields[i])
    # without terms: score_top_k_packed's (values, indices), stacked (another executable than the
    # one with terms, so compared with it, not with rows[:2]: XLA may fuse the two differently)
    short = np.asarray(score_top_k_rows(*args, k, with_terms=False))
    v2, o2 = fr.score_top_k_packed(*args, k)
    assert short.shape == (2, np.asarray(o2).size)
    np.testing.assert_array_equal(short[0], np.asarray(v2))
    np.testing.assert_array_equal(short[1].astype(np.int64), np.asarray(o2))


@settings(max_examples=60)
@given(
    t=st.lists(
        st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, -np.inf]) | st.floats(-5, 5, width=32), min_size=1, max_size=32
    ),
    k=st.integers(1, 40),
)
def test_rank_selection_is_lax_top_k_exactly(t, k):
    """The rank selection of :func:`score_top_k_rows` (≤ RANK_SELECT_MAX candidates, without terms)
    returns exactly :func:`frcore.top_k`'s values and indices (ties, −0.0 and −∞ included)."""
    import jax

    from frcore._packed import RANK_SELECT_MAX, _top_k_rows_by_rank

    total = np.asarray(t, np.float32)
    assert total.size <= RANK_SELECT_MAX
    rows = np.asarray(jax.jit(_top_k_rows_by_rank, static_argnums=1)(total, k))
    values, order = fr.top_k(total, k)
    assert rows.shape == (2, np.asarray(order).size)
    np.testing.assert_array_equal(rows[0], np.asarray(values))
    np.testing.assert_array_equal(rows[1].astype(np.int64), np.asarray(order))
