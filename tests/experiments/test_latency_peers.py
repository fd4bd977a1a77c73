"""``fr latency``'s peers (experiments/latency_peers.py) against the JAX kernel.

The peers are the same score written again (vectorised NumPy, a numba loop), so these tests are
what ties them to the one formula: on random inputs (hypothesis: parameters around the released
ones, every intent, every state, events in and out of the window, padding) each peer's scores
equal :func:`frcore.score_packed`'s within the float32 tolerance of tests/helpers.py
(rtol 2e-5, atol 5e-5; −∞ exactly where the kernel has −∞), and each peer's top-10 is a
top-10 of the kernel's scores, ordered as :func:`frcore.top_k` orders (descending, ties to the
lower index). No timing is asserted.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, to_numpy
from hypothesis import given, settings, strategies as st
from strategies import candidates, params, queries

import frcore as fr
from experiments import latency_peers as lp
from frcore import reference as ref

TOP = 10


def _kernel_total(p, q, c) -> np.ndarray:
    return np.asarray(fr.score_packed(fr.pack_params(p), fr.pack_query(q), fr.pack_candidates(c)).total)


def _host(q, c) -> tuple[fr.Query, fr.Candidates]:
    return to_numpy(q), to_numpy(c)


def _check_top_k(values, idx, kernel_total: np.ndarray, k: int) -> None:
    """(values, idx) is a top-k of ``kernel_total``: k distinct indices carrying the kernel's
    scores, descending, equal values by index, and nothing left out scoring above the last kept."""
    values, idx = np.asarray(values, np.float64), np.asarray(idx)
    kk = min(k, kernel_total.size)
    assert values.shape == idx.shape == (kk,)
    assert len(set(idx.tolist())) == kk, "top-k repeats a candidate"
    assert_allclose(values.astype(np.float32), kernel_total[idx], name="values at the returned indices")
    assert np.all(values[:-1] >= values[1:]), "not descending"
    ties = values[:-1] == values[1:]
    assert np.all(idx[:-1][ties] < idx[1:][ties]), "equal scores not in index order"
    left_out = np.setdiff1d(np.arange(kernel_total.size), idx)
    if left_out.size and np.isfinite(values[-1]):
        assert kernel_total[left_out].max() <= values[-1] + 5e-5 + 2e-5 * abs(values[-1])


@pytest.mark.slow  # over 8 s here: `make test-fast` leaves it out
@settings(max_examples=30)
@given(p=st.one_of(st.just(fr.default_params()), params()), q=queries(), c=candidates(1, 40))
def test_numpy_peer_scores_equal_the_kernels(p, q, c):
    qn, cn = _host(q, c)
    got = lp.numpy_score(lp.numpy_params(p), qn, cn)
    assert got.dtype == np.float32 and got.shape == (cn.sim.shape[0],)
    assert_allclose(got, _kernel_total(p, q, c), name="numpy peer total")


@pytest.mark.slow  # over 8 s here: `make test-fast` leaves it out
@settings(max_examples=30)
@given(p=st.one_of(st.just(fr.default_params()), params()), q=queries(), c=candidates(1, 40), k=st.integers(1, 20))
def test_numba_peer_top_k_is_a_top_k_of_the_kernels_scores(p, q, c, k):
    values, idx = lp.numba_top_k(fr.pack_params(p), fr.pack_query(q), fr.pack_candidates(c), k)
    _check_top_k(values, idx, _kernel_total(p, q, c), k)


@settings(max_examples=20)
@given(p=params(), q=queries(), c=candidates(1, 40), k=st.integers(1, 20))
def test_numpy_peer_top_k_is_a_top_k_of_the_kernels_scores(p, q, c, k):
    qn, cn = _host(q, c)
    values, idx = lp.numpy_score_top_k(lp.numpy_params(p), qn, cn, k)
    _check_top_k(values, idx, _kernel_total(p, q, c), k)


@given(
    t=st.lists(
        st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, -np.inf]) | st.floats(-5, 5, width=32), min_size=1, max_size=50
    ),
    k=st.integers(1, 60),
)
def test_numpy_top_k_is_the_twins_top_k_exactly(t, k):
    """On one array of scores (ties, −0.0, −∞ included): exactly the float64 twin's top-k."""
    total = np.asarray(t, np.float32)
    values, idx = lp.numpy_top_k(total, k)
    want_values, want_idx = ref.top_k(np.where(total == 0, 0.0, total), k)
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_array_equal(values, want_values.astype(np.float32))


def test_peers_read_the_parameter_pytree():
    """A parameter changed in the pytree moves both peers' scores as it moves the kernel's."""
    raw = dict(sim=np.full(3, 0.5), weights=np.eye(fr.N_CATEGORIES)[:3], ages=np.full((3, 3), 100.0))
    c = fr.make_candidates(**raw, device=False)
    q = fr.make_query("current", np.zeros(fr.N_CATEGORIES), device=False)
    p = fr.replace_params(fr.default_params(), rates=np.asarray(fr.default_params().rates) * 3)
    want = _kernel_total(p, q, c)
    assert not np.allclose(want, _kernel_total(fr.default_params(), q, c))
    assert_allclose(lp.numpy_score(lp.numpy_params(p), q, c), want, name="numpy peer")
    values, idx = lp.numba_top_k(fr.pack_params(p), fr.pack_query(q), fr.pack_candidates(c), 3)
    assert_allclose(values.astype(np.float32), want[idx], name="numba peer")


def test_latency_labels_say_what_each_row_is():
    from experiments.latency import IMPLS, LABELS

    assert {"numpy_vectorised", "numba", "float64_reference"} <= set(IMPLS) and set(LABELS) == set(IMPLS)
    assert LABELS["float64_reference"] == "float64 reference (test oracle)"
    assert "peer" in LABELS["numpy_vectorised"] and "peer" in LABELS["numba"]
