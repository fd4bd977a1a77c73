"""No retrace: a second call of each jitted entry point with new values (same shapes, same
config) compiles nothing, and a sweep over k within one bucket compiles once.

Two independent counters: the jit cache size of the entry point, and JAX's own
``/jax/core/compile/jaxpr_trace_duration`` / ``backend_compile_duration`` monitoring events
(one per trace / per XLA compile), counted around the call.
"""

from __future__ import annotations

import contextlib

import jax
import jax.monitoring
import numpy as np
import pytest

import frcore as fr

C = fr.N_CATEGORIES
TRACE = "/jax/core/compile/jaxpr_trace_duration"
COMPILE = "/jax/core/compile/backend_compile_duration"


@contextlib.contextmanager
def count_compiles():
    """Yield a dict counting traces and backend compiles while the block runs."""
    counts = {TRACE: 0, COMPILE: 0}

    def listener(name, duration, **kw):
        if name in counts:
            counts[name] += 1

    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        yield counts
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)


def _cands(seed: int, k: int, pad: int) -> fr.Candidates:
    rng = np.random.default_rng(seed)
    return fr.make_candidates(
        sim=rng.random(k),
        weights=rng.dirichlet(np.ones(C), size=k),
        ages=rng.uniform(0, 5000, (k, 3)),
        state=rng.integers(0, 5, k),
        hours_to_event=np.where(rng.random(k) < 0.5, rng.uniform(-300, 300, k), np.nan),
        confidence=rng.random(k),
        numeric=rng.random(k) < 0.3,
        pad_to=pad,
    )


def _query(seed: int) -> fr.Query:
    rng = np.random.default_rng(seed)
    return fr.make_query(int(rng.integers(0, len(fr.Intent))), rng.random(C))


def _params(seed: int) -> fr.LifecycleParams:
    rng = np.random.default_rng(seed)
    p = fr.default_params()
    return fr.replace_params(p, rates=np.asarray(p.rates) * rng.uniform(0.25, 4, C), alpha=rng.uniform(0, 1, C))


def _calls(seed: int):
    """(name, jitted fn, args) for each jitted entry point, with values depending on ``seed``."""
    B, k, P = 3, 16, 2
    qs = fr.stack_queries([_query(seed + i) for i in range(B)])
    cs = fr.stack_candidates([_cands(seed + i, k - i, k) for i in range(B)])
    return [
        ("score_candidates", fr.score_candidates, (_params(seed), _query(seed), _cands(seed, 11, k))),
        ("score_queries", fr.score_queries, (_params(seed), qs, cs)),
        ("score_sweep", fr.score_sweep, (fr.stack_params([_params(seed + j) for j in range(P)]), qs, cs)),
    ]


@pytest.mark.parametrize("config_id", ["full", "lifecycle-off", "cognitive"])
@pytest.mark.parametrize("index", [0, 1, 2], ids=["score_candidates", "score_queries", "score_sweep"])
def test_second_call_with_new_values_does_not_recompile(index, config_id):
    config = fr.ABLATIONS[config_id]
    name, fn, args = _calls(1)[index]
    jax.block_until_ready(fn(*args, config=config))  # first call may compile
    size = fn._cache_size()
    _, _, new_args = _calls(2)[index]
    with count_compiles() as n:
        out = jax.block_until_ready(fn(*new_args, config=config))
    assert n[TRACE] == 0 and n[COMPILE] == 0, f"{name}: retraced on new values ({n})"
    assert fn._cache_size() == size, f"{name}: jit cache grew"
    first = fn(*args, config=config)
    assert not np.array_equal(np.asarray(first.total), np.asarray(out.total), equal_nan=True), (
        "new values must give new scores"
    )


def test_top_k_second_call_does_not_recompile():
    t1 = np.asarray(fr.score_candidates(*_calls(3)[0][2]).total)
    t2 = np.asarray(fr.score_candidates(*_calls(4)[0][2]).total)
    jax.block_until_ready(fr.top_k(t1, 10))
    size = fr.top_k._cache_size()
    with count_compiles() as n:
        jax.block_until_ready(fr.top_k(t2, 10))
    assert n[COMPILE] == 0 and fr.top_k._cache_size() == size


def test_sweep_over_k_within_one_bucket_compiles_once():
    """k = 33 … 64 all pad to bucket 64: one compile of score_candidates (+ one of top_k)."""
    ks = range(33, 65)
    assert {fr.bucket_size(k) for k in ks} == {64}
    p, q = fr.default_params(), _query(7)
    sets = [_cands(k, k, fr.bucket_size(k)) for k in ks]  # validation (eager) outside the count
    before = fr.score_candidates._cache_size()
    with count_compiles() as n:
        for c in sets:
            jax.block_until_ready(fr.top_k(fr.score_candidates(p, q, c).total, 10))
    assert fr.score_candidates._cache_size() - before <= 1
    assert n[COMPILE] <= 2, f"{n[COMPILE]} compiles for one bucket"


def test_a_new_bucket_or_config_does_compile():
    """The counters can fail: a new shape and a new static config each trigger a compile."""
    p, q = fr.default_params(), _query(8)
    with count_compiles() as n:
        jax.block_until_ready(
            fr.score_candidates(p, q, _cands(9, 100, 128), fr.ScoreConfig(routing=False, floors=False))
        )
    assert n[COMPILE] >= 1 and n[TRACE] >= 1


def test_packed_path_second_call_with_new_values_does_not_recompile():
    """The single-query path of fr latency and FR-Bank: new values (NumPy or device arrays) in
    the same bucket reuse the executable, and the results change with the values."""
    from frcore._packed import score_top_k_rows

    def packed(seed):
        return fr.pack_params(_params(seed)), fr.pack_query(_query(seed)), fr.pack_candidates(_cands(seed, 11, 16))

    for fn, kw in (
        (fr.score_top_k_packed, {}),
        (fr.score_top_k_packed, {"with_terms": True}),
        (score_top_k_rows, {}),
        (score_top_k_rows, {"with_terms": False}),
    ):
        first = jax.block_until_ready(fn(*packed(5), 10, **kw))
        size = fn._cache_size()
        with count_compiles() as n:
            second = jax.block_until_ready(fn(*packed(6), 10, **kw))
        assert n[TRACE] == 0 and n[COMPILE] == 0, f"{fn.__name__} {kw}: recompiled on new values ({n})"
        assert fn._cache_size() == size, "jit cache grew"
        with count_compiles() as n:  # device-resident inputs: a dispatch-cache entry of their own, no compile
            jax.block_until_ready(fn(*jax.device_put(packed(7)), 10, **kw))
        assert n[TRACE] == 0 and n[COMPILE] == 0, f"{fn.__name__} {kw}: recompiled for device inputs ({n})"
        a, b = jax.tree_util.tree_leaves(first)[0], jax.tree_util.tree_leaves(second)[0]
        assert not np.array_equal(np.asarray(a), np.asarray(b)), "new values must give new results"
