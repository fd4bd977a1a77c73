"""Parity: every public kernel (jitted, float32) against its NumPy float64 twin.

Parametrized over the :data:`frcore.reference.REFERENCE` registry and over every
:class:`frcore.ScoreConfig` in :data:`frcore.ABLATIONS` (plus the switches no ablation turns
off alone); hypothesis draws the inputs. −∞ must match −∞ exactly.
"""

from __future__ import annotations

import functools
import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_allclose, ref_params, to_numpy, tree_allclose
from hypothesis import example, given, settings, strategies as st
from strategies import CONFIGS, candidate_arrays, candidates, f32, params, queries

import frcore as fr
from frcore.reference import REFERENCE, score_python

SINGLE = (
    "primary_category",
    "effective_rate",
    "effective_age",
    "anticipatory_activation",
    "activation",
    "blend",
    "compatibility_mask",
    "routing_term",
    "supersession_term",
    "exemption_term",
    "score",
)


def test_every_kernel_has_a_twin():
    missing = [name for name in fr.KERNELS if name not in REFERENCE]
    untested = [
        name
        for name in fr.KERNELS
        if name not in SINGLE + ("score_candidates", "score_queries", "score_sweep", "top_k")
    ]
    assert not untested, f"kernels with a twin but no parity test here: {untested}"
    assert not missing, f"kernels without a NumPy twin in frcore.reference.REFERENCE: {missing}"
    extra = [name for name in REFERENCE if name not in fr.KERNELS]
    assert not extra, f"twins for unknown kernels: {extra}"


def test_every_kernel_is_exported():
    for name in fr.KERNELS:
        assert callable(getattr(fr, name)), name


def _takes_config(name: str) -> bool:
    return "config" in inspect.signature(getattr(fr, name)).parameters


@functools.cache
def _jitted(name: str, jit: bool):
    """The kernel as called: batched kernels are jitted by frcore; single-candidate kernels run
    eagerly (op-by-op dispatch is cached across configs, a jit per config would cost a compile
    each) or, with ``jit``, under a fresh ``jax.jit``. Both paths run inside the jitted batched
    kernels too, which are tested over every config below."""
    fn = getattr(fr, name)
    if name in SINGLE and jit:
        return jax.jit(fn, static_argnames=("config",) if _takes_config(name) else ())
    return fn


@st.composite
def single_inputs(draw) -> dict:
    """Arguments of every single-candidate kernel, drawn together (one edge, one query)."""
    p = draw(st.one_of(st.just(fr.default_params()), params()))
    c = fr.make_candidates(**draw(candidate_arrays(1, 1)))
    c = fr.Candidates(*(leaf[0] for leaf in c))
    q = draw(queries())
    act = jnp.asarray(draw(st.one_of(f32(0.0, 3.0), st.sampled_from([0.0, 1.0, 3.0]))), jnp.float32)
    return {
        "primary_category": (c.weights,),
        "effective_rate": (p, c.weights),
        "effective_age": (p, c.weights, c.ages),
        "anticipatory_activation": (p, c.hours_to_event),
        "activation": (p, c.weights, c.ages, c.has_event, c.hours_to_event),
        "blend": (p, c.sim, c.weights, act, c.numeric),
        "compatibility_mask": (c.state, q.intent, c.has_event, c.hours_to_event, c.numeric, c.typed),
        "routing_term": (p, c.weights, q.routing),
        "supersession_term": (c.state, c.confidence),
        "exemption_term": (p, c.state, q.intent, c.numeric),
        "score": (p, q, c),
    }


def _twin_args(args):
    return tuple(ref_params(a) if isinstance(a, fr.LifecycleParams) else to_numpy(a) for a in args)


def _check(name: str, args, config, jit: bool = False) -> None:
    kw = {"config": config} if _takes_config(name) else {}
    got = _jitted(name, jit)(*args, **kw)
    want = REFERENCE[name](*_twin_args(args), **kw)
    tree_allclose(got, want, name=name)


CONFIG_IDS = list(CONFIGS)


@pytest.mark.parametrize("config_id", CONFIG_IDS)
@settings(max_examples=20)
@given(inputs=single_inputs())
def test_single_candidate_kernel_parity(config_id, inputs):
    """Every config-taking single-candidate kernel on the same drawn edge (eager dispatch)."""
    for name in SINGLE:
        if _takes_config(name):
            _check(name, inputs[name], CONFIGS[config_id])


@settings(max_examples=40)
@given(inputs=single_inputs())
def test_config_free_kernel_parity(inputs):
    for name in SINGLE:
        if not _takes_config(name):
            _check(name, inputs[name], None)


@settings(max_examples=10)
@given(inputs=single_inputs())
def test_single_candidate_kernel_parity_under_jit(inputs):
    for name in SINGLE:
        _check(name, inputs[name], fr.ScoreConfig() if _takes_config(name) else None, jit=True)


@pytest.mark.parametrize("config_id", CONFIG_IDS)
@settings(max_examples=10)
@given(p=st.one_of(st.just(fr.default_params()), params()), q=queries(), c=candidates(1, 16, pad=True, pad_to=16))
def test_score_candidates_parity(config_id, p, q, c):
    _check("score_candidates", (p, q, c), CONFIGS[config_id])


#: the batched-over-queries / over-params forms are the same vmapped kernel: a few configs suffice
BATCH_CONFIG_IDS = ["full", "lifecycle-off", "everything-off", "cognitive"]


@pytest.mark.parametrize("config_id", BATCH_CONFIG_IDS)
@settings(max_examples=6)
@given(data=st.data())
def test_score_queries_parity(config_id, data):
    p = data.draw(params())
    qs = fr.stack_queries([data.draw(queries()) for _ in range(3)])
    cs = fr.stack_candidates([fr.make_candidates(**data.draw(candidate_arrays(1, 8)), pad_to=8) for _ in range(3)])
    _check("score_queries", (p, qs, cs), CONFIGS[config_id])


@pytest.mark.parametrize("config_id", BATCH_CONFIG_IDS)
@settings(max_examples=4)
@given(data=st.data())
def test_score_sweep_parity(config_id, data):
    ps = fr.stack_params([fr.default_params(), data.draw(params()), data.draw(params())])
    qs = fr.stack_queries([data.draw(queries()) for _ in range(2)])
    cs = fr.stack_candidates([fr.make_candidates(**data.draw(candidate_arrays(1, 8)), pad_to=8) for _ in range(2)])
    _check("score_sweep", (ps, qs, cs), CONFIGS[config_id])


# ----------------------------------------------------------------------------- top-k (ties!)

TIE_VALUES = [-np.inf, -3.0, -1.0, -0.5, 0.0, -0.0, 0.25, 2.0]


@settings(max_examples=60)
@given(
    totals=st.lists(st.one_of(st.sampled_from(TIE_VALUES), f32(-30.0, 3.0)), min_size=8, max_size=8)
    | st.lists(st.sampled_from(TIE_VALUES), min_size=16, max_size=16),
    k=st.sampled_from([1, 3, 5, 8, 10, 20]),
    batch=st.booleans(),
)
@example(totals=[0.0] * 8, k=3, batch=False)
@example(totals=[-np.inf] * 8, k=10, batch=False)
def test_top_k_parity(totals, k, batch):
    t = jnp.asarray(totals, jnp.float32)
    if batch:
        t = jnp.stack([t, t[::-1]])
    vals, idx = fr.top_k(t, k)
    rv, ri = REFERENCE["top_k"](np.asarray(t), k)
    np.testing.assert_array_equal(np.asarray(idx), ri)
    assert_allclose(vals, rv, name="top_k.values")


def test_top_k_ties_go_to_the_lower_index():
    vals, idx = fr.top_k(jnp.asarray([1.0, 2.0, 2.0, 1.0, 2.0, -jnp.inf, 1.0, 0.0]), 5)
    np.testing.assert_array_equal(np.asarray(idx), [1, 2, 4, 0, 3])
    np.testing.assert_array_equal(
        REFERENCE["top_k"](np.asarray([1.0, 2.0, 2.0, 1.0, 2.0, -np.inf, 1.0, 0.0]), 5)[1], [1, 2, 4, 0, 3]
    )


# ----------------------------------------------------------------------------- pure Python twin


@pytest.mark.parametrize("config_id", CONFIG_IDS)
@settings(max_examples=10)
@given(p=st.one_of(st.just(fr.default_params()), params()), q=queries(), c=candidates(1, 16))
def test_score_python_matches_numpy_twin(config_id, p, q, c):
    config = CONFIGS[config_id]
    pn = ref_params(p)
    got = np.asarray(score_python(pn, to_numpy(q), to_numpy(c), config))
    want = REFERENCE["score_candidates"](pn, to_numpy(q), to_numpy(c), config).total
    assert_allclose(got, want, name="score_python", dtype=np.float64)


# ----------------------------------------------------------------------------- fixed anchors


def test_twin_compatibility_table_matches_the_published_one():
    """The twin's admits-table (restated from SPEC §3) equals frcore.COMPATIBLE."""
    from frcore.reference import ADMITS

    for intent in fr.Intent:
        for state in fr.State:
            assert (state in ADMITS[intent]) == bool(fr.COMPATIBLE[intent, state]), (intent.name, state.name)


def test_hand_computed_score():
    """One edge computed by hand from SPEC §2–3 (independent of both implementations):
    IDENTITY one-hot, σ=0.6, ages (100 h, 50 h, 20 msgs), no event, active, current intent,
    routed to IDENTITY with r=1."""
    lam, s = 0.0015, (0.4, 0.3, 0.3)
    age = s[0] * 100 + s[1] * 50 + s[2] * 20 * 0.5
    a = np.exp(-lam * age)
    b = 0.9 * 0.6 + 0.1 * a
    want = np.log(b) + np.log1p(0.5 * 1.0)
    w = np.eye(fr.N_CATEGORIES)[[0]]
    c = fr.make_candidates([0.6], w, [[100.0, 50.0, 20.0]])
    q = fr.make_query("current", {"IDENTITY_SELF_CONCEPT": 1.0})
    got = fr.score_candidates(fr.default_params(), q, c).total
    np.testing.assert_allclose(np.asarray(got), [want], rtol=1e-6)
    ref = REFERENCE["score_candidates"](ref_params(fr.default_params()), to_numpy(q), to_numpy(c)).total
    np.testing.assert_allclose(ref, [want], rtol=1e-6)
