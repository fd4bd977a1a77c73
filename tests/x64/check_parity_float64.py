"""The kernels in float64 against the NumPy twin, at float64 tolerance. Run in its own process
with ``JAX_ENABLE_X64=1`` (``tests/core/test_float64.py`` does); refuses to run without it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import jax

if not jax.config.read("jax_enable_x64"):
    sys.exit("check_parity_float64: run with JAX_ENABLE_X64=1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/helpers.py, tests/strategies.py

import jax.numpy as jnp
import numpy as np
from helpers import assert_allclose, ref_params, to_numpy
from hypothesis import given, settings, strategies as st
from strategies import CONFIGS, candidate_arrays, params, queries

import frcore as fr
from frcore.reference import REFERENCE

EXAMPLES = int(os.environ.get("FRCORE_X64_EXAMPLES", "40"))


def as64(p: fr.LifecycleParams) -> fr.LifecycleParams:
    return fr.LifecycleParams(*(jnp.asarray(np.asarray(x, dtype=np.float64)) for x in p))


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None)
@given(
    config_id=st.sampled_from(sorted(CONFIGS)),
    p=st.one_of(st.just(fr.default_params()), params()),
    q=queries(),
    raw=candidate_arrays(1, 16),
)
def check_score_candidates_float64(config_id, p, q, raw):
    config = CONFIGS[config_id]
    p64 = as64(p)
    c = fr.make_candidates(**raw, pad_to=fr.bucket_size(raw["sim"].shape[0]), dtype=jnp.float64)
    got = fr.score_candidates(p64, q, c, config)
    assert got.total.dtype == jnp.float64
    want = REFERENCE["score_candidates"](ref_params(p64), to_numpy(q), to_numpy(c), config)
    for name in got._fields:
        assert_allclose(getattr(got, name), getattr(want, name), name=f"{config_id}.{name}")


if __name__ == "__main__":
    check_score_candidates_float64()
    print(f"float64 parity: {EXAMPLES} examples per run, every term, every config: ok")
