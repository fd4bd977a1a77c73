"""Test configuration: deterministic hypothesis profile and strict JAX numerics.

Profiles: ``ci`` (default; derandomized, no example database, no deadline) and ``dev``
(random, more examples), chosen with ``HYPOTHESIS_PROFILE=dev``. The kernels run under
``jax_numpy_rank_promotion="raise"`` and ``jax_numpy_dtype_promotion="strict"`` (they pass).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import jax
from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/helpers.py, tests/strategies.py

jax.config.update("jax_numpy_rank_promotion", "raise")
jax.config.update("jax_numpy_dtype_promotion", "strict")

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=40,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
