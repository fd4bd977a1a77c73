"""Columns that grow by appends without copying what every version already holds.

A store's load at one version holds its rows as column arrays (a row per first index), and the next version (the rows an
add appended) holds those rows and more. :func:`appended` gives that next column as a prefix view
of one buffer with room to spare: when the old column is the filled prefix of such a buffer, the
new rows are written after it, in place, and the old version still sees exactly its own rows (no
row it holds is ever written again). Appending to an older version, or past the buffer's end,
copies into a new buffer :data:`GROWTH` times larger than the rows. So n rows added in adds of b
cost O(n) copying in all, not O(n² / b).
"""

from __future__ import annotations

import functools
import threading
import weakref
from typing import Any

import numpy as np

#: a new buffer holds this many times the rows it is made for
GROWTH = 1.5
#: rows of the smallest buffer
MIN_ROWS = 1024

#: id(buffer) → (a weak reference to it, the rows handed out of it): only its filled prefix's
#: owner may write after it
_FILLED: dict[int, tuple[weakref.ref, int]] = {}
_LOCK = threading.RLock()  # reentrant: a buffer's weak-reference callback may run while it is held


def _drop(key: int, _ref: weakref.ref) -> None:
    with _LOCK:
        entry = _FILLED.get(key)
        if entry is not None and entry[0]() is None:
            del _FILLED[key]


def _tip(buf: Any, old: np.ndarray) -> bool:
    """Whether ``old`` is the filled prefix of the growing buffer ``buf`` (held under the lock)."""
    if not isinstance(buf, np.ndarray) or buf.shape[1:] != old.shape[1:]:
        return False
    entry = _FILLED.get(id(buf))
    return (
        entry is not None
        and entry[1] == old.shape[0]
        and old.strides == buf.strides
        and old.__array_interface__["data"][0] == buf.__array_interface__["data"][0]
        and entry[0]() is buf
    )


def appended(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """``np.concatenate([old, new])`` (along the first axis), as a prefix view of a buffer with room to grow
    (module docstring): ``old``'s values are never changed."""
    n0, n1 = old.shape[0], old.shape[0] + new.shape[0]
    dtype = np.concatenate([old[:0], new[:0]]).dtype
    buf: Any = old.base
    with _LOCK:
        if dtype == old.dtype and _tip(buf, old) and buf.shape[0] >= n1:
            buf[n0:n1] = new
            _FILLED[id(buf)] = (_FILLED[id(buf)][0], n1)
            return buf[:n1]
    fresh = np.empty((max(int(n1 * GROWTH), MIN_ROWS), *old.shape[1:]), dtype=dtype)
    fresh[:n0] = old
    fresh[n0:n1] = new
    key = id(fresh)
    with _LOCK:
        _FILLED[key] = (weakref.ref(fresh, functools.partial(_drop, key)), n1)
    return fresh[:n1]
