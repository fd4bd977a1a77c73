"""Test configuration: deterministic hypothesis profile and strict JAX numerics.

Profiles: ``ci`` (default; derandomized, no example database, no deadline) and ``dev``
(random, more examples), chosen with ``HYPOTHESIS_PROFILE=dev``. The kernels run under
``jax_numpy_rank_promotion="raise"`` and ``jax_numpy_dtype_promotion="strict"`` (they pass).
"""

from __future__ import annotations

import inspect
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
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return ""


_TESTS = str(Path(__file__).resolve().parent)


def _names(code) -> set[str]:
    """The global names a code object (and every function defined in it) refers to."""
    out = set(code.co_names)
    for c in code.co_consts:
        if inspect.iscode(c):
            out |= _names(c)
    return out


def _test_helpers(fn) -> list:
    """The functions and classes of tests/ (its modules, tests/support/) that ``fn`` names."""
    code, env = getattr(fn, "__code__", None), getattr(fn, "__globals__", None)
    if code is None or env is None:
        return []
    out = []
    for name in _names(code):
        obj = env.get(name)
        if inspect.ismodule(obj) or not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        where = getattr(inspect.getmodule(obj), "__file__", None) or ""
        if where.startswith(_TESTS):
            out += [obj] if inspect.isfunction(obj) else [m for m in vars(obj).values() if inspect.isfunction(m)]
    return out


_SPAWNS: dict[object, bool] = {}


def spawns(fn, depth: int = 0) -> bool:
    """Whether ``fn`` starts or kills a process: its own source says so, or a helper of the tests
    it names does (``_kill_trial``, ``support.cli_driver``'s, a server fixture's: followed three
    calls deep)."""
    if fn not in _SPAWNS:
        _SPAWNS[fn] = False  # a helper that calls itself (or a cycle) adds nothing
        _SPAWNS[fn] = any(w in _source(fn) for w in _INTEGRATION_WORDS) or (
            depth < 3 and any(spawns(h, depth + 1) for h in _test_helpers(fn))
        )
    return _SPAWNS[fn]


def pytest_collection_modifyitems(config, items):
    """Mark every test that starts or kills a process, server or cluster ``integration`` (and
    ``slow``): ``make test`` runs everything, ``make test-fast`` runs ``-m "not integration and not slow"``."""
    for item in items:
        fns = [getattr(item, "function", None)]
        info = getattr(item, "_fixtureinfo", None)
        for defs in info.name2fixturedefs.values() if info is not None else ():
            fns += [d.func for d in defs]
        if any(fn is not None and spawns(fn) for fn in fns):
            item.add_marker(pytest.mark.integration)
            item.add_marker(pytest.mark.slow)
