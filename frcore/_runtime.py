"""Process-level JAX settings that the lifecycle layer's latency depends on (I/O edge: the ``fr``
command applies them; a library user chooses)."""

from __future__ import annotations

import os

import jax

#: environment variable that keeps JAX's default (asynchronous) CPU dispatch under ``fr``
ASYNC_ENV = "FR_ASYNC_DISPATCH"


def prefer_sync_cpu_dispatch() -> bool:
    """Run JAX CPU computations inline on the calling thread (``jax_cpu_enable_async_dispatch``
    = False) instead of JAX's default hand-off to a worker thread.

    A single query scores tens to thousands of candidates: microseconds of work, where the
    hand-off and the wake-up of the waiting thread dominate; docs/performance.md gives the
    measured effect (``fr latency`` and ``fr bank bench`` report which mode they ran in). The
    setting is read once, when JAX's CPU backend starts (the first computation or device query;
    importing :mod:`frcore.bank` starts it, through bm25s), so call this first.

    Returns whether synchronous dispatch is in effect afterwards. With ``FR_ASYNC_DISPATCH=1`` in
    the environment it changes nothing (JAX's default, for comparison).
    """
    from jax._src import xla_bridge  # backends_are_initialized has no public alias

    if os.environ.get(ASYNC_ENV, "") not in ("", "0"):
        return not jax.config.read("jax_cpu_enable_async_dispatch")
    if not xla_bridge.backends_are_initialized():
        jax.config.update("jax_cpu_enable_async_dispatch", False)
    return not jax.config.read("jax_cpu_enable_async_dispatch")


def cpu_dispatch_mode() -> str:
    """``"sync"`` or ``"async"``: the CPU dispatch mode this process runs with (as configured;
    it took effect if it was set before the backend started)."""
    return "async" if jax.config.read("jax_cpu_enable_async_dispatch") else "sync"
