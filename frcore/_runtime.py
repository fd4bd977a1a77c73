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
    setting is read once, when JAX's CPU backend starts (the first computation or device query),
    so call this first.

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


#: environment variable naming the directory of JAX's persistent compilation cache under ``fr``
#: (``0`` or ``off``: no persistent cache); default ``$FRCORE_CACHE/jax`` or ``~/.cache/frcore/jax``
COMPILATION_CACHE_ENV = "FRCORE_JAX_CACHE"


def enable_compilation_cache() -> str | None:
    """Keep JAX's compiled executables on disk (JAX's persistent compilation cache), so a fresh
    process reuses what an earlier one compiled instead of compiling the query path again.

    Directory: ``$FRCORE_JAX_CACHE``, else ``$FRCORE_CACHE/jax``, else ``~/.cache/frcore/jax``
    (``FRCORE_JAX_CACHE=0`` switches it off). Every executable is kept, however fast it compiled.
    Returns the directory in use (``None``: off, or the directory cannot be created). A library
    user chooses; the ``fr`` command and ``fr bank bench`` call it."""
    chosen = os.environ.get(COMPILATION_CACHE_ENV, "")
    if chosen.lower() in ("0", "off", "false", "no"):
        return None
    if not chosen:
        base = os.environ.get("FRCORE_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "frcore")
        chosen = os.path.join(base, "jax")
    try:
        os.makedirs(chosen, exist_ok=True)
    except OSError:
        return None
    jax.config.update("jax_compilation_cache_dir", chosen)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return chosen
