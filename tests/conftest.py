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


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def gen_suites():
    """Two generated personas (seed 3), parsed: the tiny suite of the runner, grid and compare tests."""
    from frcore.bench import generate_suites, parse_suite

    return [parse_suite(obj, f"gen#{i}") for i, obj in enumerate(generate_suites(2, seed=3))]


@pytest.fixture(scope="session")
def hash_embedder():
    from frcore.bank import get_embedder

    return get_embedder("hash")


#: what marks a test ``integration``: it starts another process, a server or a cluster, or kills one
#: (words of its own source or of a fixture it uses); ``make test-fast`` deselects these
_INTEGRATION_WORDS = ("subprocess", "Popen", "SIGKILL", "os.kill", "multiprocessing", "LocalCluster", "sys.executable")


def _source(fn) -> str:
    import inspect

    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return ""


def pytest_collection_modifyitems(config, items):
    """Mark every test that starts or kills a process, server or cluster ``integration`` (and
    ``slow``): ``make test`` runs everything, ``make test-fast`` runs ``-m "not integration and not slow"``."""
    seen: dict[object, bool] = {}

    def spawns(fn) -> bool:
        if fn not in seen:
            seen[fn] = any(w in _source(fn) for w in _INTEGRATION_WORDS)
        return seen[fn]

    for item in items:
        fns = [getattr(item, "function", None)]
        info = getattr(item, "_fixtureinfo", None)
        for defs in info.name2fixturedefs.values() if info is not None else ():
            fns += [d.func for d in defs]
        if any(fn is not None and spawns(fn) for fn in fns):
            item.add_marker(pytest.mark.integration)
            item.add_marker(pytest.mark.slow)
