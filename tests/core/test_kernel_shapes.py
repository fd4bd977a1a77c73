"""The jaxtyping shapes of the kernel signatures are checked under pytest.

pyproject.toml's pytest options install jaxtyping's import hook for ``frcore._scoring`` and
``frcore._packed`` (beartype as the checker), so each call of a kernel checks its arguments and
return value against the annotated shapes and dtypes — eagerly, or at trace time under ``jit`` and
``vmap``. Each test passes a wrong shape or dtype and expects the checker's error; the first shows
a mistake the kernel itself would not notice.
"""

from __future__ import annotations

import inspect

import jax.numpy as jnp
import numpy as np
import pytest
from jaxtyping import TypeCheckError

import frcore as fr
from frcore._packed import N_FEATURES, pack_candidates, pack_params, pack_query, score_top_k_rows

C = fr.N_CATEGORIES


def _cands(k: int, n_categories: int = C) -> fr.Candidates:
    """k valid active candidates built by hand (make_candidates would refuse a wrong C)."""
    w = np.full((k, n_categories), 1.0 / n_categories, np.float32)
    f = lambda v, dt=np.float32: jnp.asarray(np.full(k, v, dt))  # noqa: E731
    return fr.Candidates(
        sim=f(0.5),
        weights=jnp.asarray(w),
        ages=jnp.asarray(np.ones((k, 3), np.float32)),
        has_event=f(False, bool),
        hours_to_event=f(0.0),
        state=f(0, np.int32),
        confidence=f(1.0),
        numeric=f(False, bool),
        typed=f(True, bool),
        valid=f(True, bool),
    )


def test_routing_term_rejects_weights_over_other_categories_than_the_routing():
    """weights (k, C − 1) against routing (C,): unchecked, the kernel silently drops a category."""
    p = fr.default_params()
    weights = jnp.full((4, C - 1), 1.0 / (C - 1), jnp.float32)
    routing = jnp.ones((C,), jnp.float32)
    unchecked = inspect.unwrap(fr.routing_term)(p, weights, routing)
    assert np.isfinite(np.asarray(unchecked)).all()  # no error without the shape check
    with pytest.raises(TypeCheckError, match="routing"):
        fr.routing_term(p, weights, routing)


def test_supersession_term_rejects_a_float_state():
    with pytest.raises(TypeCheckError, match="state"):
        fr.supersession_term(jnp.ones((4,), jnp.float32), jnp.ones((4,), jnp.float32))


def test_effective_age_wants_clock_ages_first():
    """ages are (3, *k) in the kernels (one row per clock), not (k, 3)."""
    p = fr.default_params()
    weights = jnp.full((5, C), 1.0 / C, jnp.float32)
    fr.effective_age(p, weights, jnp.ones((3, 5), jnp.float32))  # the annotated layout passes
    with pytest.raises(TypeCheckError, match="ages"):
        fr.effective_age(p, weights, jnp.ones((5, 3), jnp.float32))


def test_checked_inside_the_jitted_vmapped_score():
    """score_candidates: each candidate's kernels see C − 1 weights against C-category parameters."""
    q = fr.make_query(fr.Intent.CURRENT)
    fr.score_candidates(fr.default_params(), q, _cands(4))  # the right shapes pass
    with pytest.raises(TypeCheckError):
        fr.score_candidates(fr.default_params(), q, _cands(4, C - 1))


def test_packed_path_checks_the_layout():
    cands = fr.make_candidates(
        sim=np.full(8, 0.5, np.float32), weights=np.full((8, C), 1.0 / C, np.float32), ages=np.ones((8, 3), np.float32)
    )
    pvec, qvec, cmat = (
        pack_params(fr.default_params()),
        pack_query(fr.make_query(fr.Intent.CURRENT)),
        pack_candidates(cands),
    )
    assert cmat.shape == (N_FEATURES, 8)
    rows = score_top_k_rows(pvec, qvec, cmat, 3)
    assert rows.shape == (2 + len(fr.ScoreTerms._fields), 3)
    with pytest.raises(TypeCheckError, match="cmat"):
        score_top_k_rows(pvec, qvec, np.ascontiguousarray(cmat.T), 3)  # candidates first: not the packed layout
    with pytest.raises(TypeCheckError, match="qvec"):
        score_top_k_rows(pvec, qvec[1:], cmat, 3)  # routing without the intent
