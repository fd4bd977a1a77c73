"""Process-level JAX settings that the lifecycle layer's latency depends on (I/O edge: the ``fr``
command applies them; a library user chooses)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import platform
import secrets
import sys
import threading
from pathlib import Path
from typing import Any

import jax
import numpy as np

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
    user chooses; the ``fr`` command and ``fr bank bench`` call it. With it, :func:`cached_call`
    also keeps FR-Bank's query kernel as a compiled executable there."""
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


#: subfolder of the compilation cache directory holding :func:`cached_call`'s executables
EXECUTABLES = "frcore-executables"
_loaded: dict[tuple, Any] = {}  # executables of this process, by (function, shapes, static arguments)
_loaded_lock = threading.Lock()
_uncached_lock = threading.Lock()
_environment: list[str] = []  # what an executable depends on besides its arguments (computed once)


def cached_call(fn: Any, *args: np.ndarray, **static: Any) -> Any:
    """``fn(*args, **static)`` for a :func:`jax.jit` function ``fn`` with the keyword arguments
    ``static`` among its static arguments — through a compiled executable kept on disk when the
    persistent compilation cache is on (:func:`enable_compilation_cache`), so that a fresh process
    neither traces nor lowers ``fn`` again (JAX's own cache still needs both to find its entry).

    The executable is ``fn.lower(*args, **static).compile()`` (compiled apart from JAX's cache:
    an executable read back from it does not serialize whole), serialized with
    :mod:`jax.experimental.serialize_executable` under a key of the function, the arguments'
    shapes and dtypes, the static arguments, the versions of Python, JAX and jaxlib, the
    backend, the CPU's features, ``XLA_FLAGS``, the JAX settings that change a lowering (x64,
    matmul precision, dtype promotion) and the source of every ``frcore`` module: any change to those
    makes another executable. It is written only when, read back, it gives the compiled one's
    output bit for bit; one that cannot be read or run is compiled (and written) again. Files are
    read with :mod:`pickle`, as trusted as the compilation cache they sit in. With the cache off,
    ``fn`` is called as it is."""
    directory = getattr(jax.config, "jax_compilation_cache_dir", None)
    if not directory:
        return fn(*args, **static)
    shapes = tuple(
        (tuple(np.shape(a)), np.dtype(a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype).str) for a in args
    )
    key = (fn, shapes, tuple(sorted(static.items())))
    exe = _loaded.get(key)
    if exe is not None:
        return exe(*args)
    with _loaded_lock:
        exe, out = _load_or_compile(Path(directory) / EXECUTABLES, fn, args, static, shapes)
        _loaded[key] = exe
    return out


def _load_or_compile(folder: Path, fn: Any, args: tuple, static: dict[str, Any], shapes: tuple) -> tuple[Any, Any]:
    """(executable, its output for ``args``): the one on disk, else compiled (and written)."""
    from jax.experimental.serialize_executable import deserialize_and_load, serialize

    name = f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', repr(fn))}"
    described = repr((name, shapes, sorted((k, repr(v)) for k, v in static.items()), _environment_key()))
    path = folder / (hashlib.sha256(described.encode("utf-8")).hexdigest()[:40] + ".exe")
    try:
        exe = deserialize_and_load(*pickle.loads(path.read_bytes()))
        return exe, exe(*args)
    except Exception:  # missing, partly written or of another build: compile it again
        pass
    with _without_compilation_cache():
        compiled = fn.lower(*args, **static).compile()
    out = compiled(*args)
    try:
        blob = pickle.dumps(serialize(compiled))
        again = deserialize_and_load(*pickle.loads(blob))(*args)
        pairs = zip(jax.tree_util.tree_leaves(out), jax.tree_util.tree_leaves(again), strict=True)
        if all(np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True) for x, y in pairs):
            folder.mkdir(parents=True, exist_ok=True)
            tmp = folder / f"tmp-{secrets.token_hex(6)}"
            tmp.write_bytes(blob)
            os.replace(tmp, path)
    except Exception:  # one that cannot be kept only costs the next process a compile
        pass
    return compiled, out


@contextlib.contextmanager
def _without_compilation_cache():
    """A context in which JAX compiles without its persistent cache (JAX decides once per process
    whether it uses it; a compilation in another thread meanwhile only misses it). With another
    JAX, nothing changes: the read-back check of :func:`_load_or_compile` still guards the file."""
    try:
        from jax._src import compilation_cache as cc

        saved = (cc._cache_checked, cc._cache_used)
    except (ImportError, AttributeError):
        yield
        return
    with _uncached_lock:
        cc._cache_checked, cc._cache_used = True, False
        try:
            yield
        finally:
            cc._cache_checked, cc._cache_used = saved


def _environment_key() -> str:
    """What every executable depends on besides its own arguments (see :func:`cached_call`)."""
    if not _environment:
        import jaxlib

        source = hashlib.sha256()
        package = Path(__file__).resolve().parent
        for f in sorted(package.rglob("*.py")):
            source.update(str(f.relative_to(package)).encode("utf-8") + b"\0" + f.read_bytes())
        cpu = ""
        try:
            with open("/proc/cpuinfo", encoding="utf-8") as fh:
                cpu = next((line for line in fh if line.startswith(("flags", "Features"))), "")
        except OSError:
            pass
        device = jax.devices()[0]
        _environment.append(
            repr(
                (
                    sys.version,
                    jax.__version__,
                    jaxlib.__version__,
                    device.platform,
                    device.device_kind,
                    bool(getattr(jax.config, "jax_enable_x64", False)),
                    str(getattr(jax.config, "jax_default_matmul_precision", None)),
                    str(getattr(jax.config, "jax_numpy_dtype_promotion", None)),
                    os.environ.get("XLA_FLAGS", ""),
                    platform.machine(),
                    platform.processor(),
                    hashlib.sha256(cpu.encode("utf-8")).hexdigest(),
                    source.hexdigest(),
                )
            )
        )
    return _environment[0]
