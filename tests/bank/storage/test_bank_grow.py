"""Columns that grow in place (frcore.bank.storage._grow): every version of a column keeps its
values while later versions append after it, from its tip or from an older version."""

from __future__ import annotations

import threading

import numpy as np
from hypothesis import given, settings, strategies as st

from frcore.bank.storage._grow import appended

DTYPES = [np.int64, np.float64, bool, object, "datetime64[us]"]


def _values(dtype, start: int, n: int) -> np.ndarray:
    a = np.arange(start, start + n)
    if dtype is object:
        return np.array([f"row-{i}" for i in a] or [None], dtype=object)[:n]
    if dtype == "datetime64[us]":
        return a.astype("datetime64[us]")
    return a.astype(dtype) if dtype is not bool else (a % 3 == 0)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(DTYPES),
    st.lists(st.tuples(st.integers(0, 30), st.integers(0, 700)), min_size=1, max_size=25),
)
def test_every_version_keeps_its_values(dtype, steps):
    """Each step appends a chunk to some earlier version (its index modulo how many there are;
    the newest most of the time, as a store does): every version equals the concatenation of the
    chunks on its path, before and after all the appends."""
    versions = [(_values(dtype, 0, 0), np.concatenate([_values(dtype, 0, 0)]))]  # (grown, expected)
    start = 0
    for pick, n in steps:
        base = len(versions) - 1 if pick % 3 else pick % len(versions)
        chunk = _values(dtype, start, n)
        start += n
        grown = appended(versions[base][0], chunk)
        versions.append((grown, np.concatenate([versions[base][1], chunk])))
        assert grown.dtype == versions[-1][1].dtype
    for grown, expected in versions:
        assert grown.shape == expected.shape
        assert (grown == expected).all() if grown.size else True


def test_the_tip_grows_in_place_and_an_older_version_is_copied():
    """Appends to the newest version share its buffer (no copy); an append to an older one makes
    a new buffer and leaves the newer version's rows untouched."""
    a = appended(np.zeros(0, np.int64), np.arange(10))
    b = appended(a, np.arange(10, 20))
    assert b.base is a.base  # written after a, in place
    c = appended(a, np.full(5, -1))  # a is no longer the tip: copied
    assert c.base is not a.base
    assert b.tolist() == list(range(20)) and c.tolist() == [*range(10), *[-1] * 5] and a.tolist() == list(range(10))


def test_rows_of_a_two_dimensional_column():
    """A column of vectors (n, d) grows by rows."""
    a = appended(np.zeros((0, 3)), np.ones((4, 3)))
    b = appended(a, np.full((2, 3), 2.0))
    assert b.shape == (6, 3) and b.base is a.base and (b[4:] == 2).all() and (a == 1).all()


def test_a_dtype_change_is_a_concatenation():
    """int rows then float rows promote as np.concatenate does."""
    a = appended(np.zeros(0, np.int64), np.arange(3))
    b = appended(a, np.array([0.5]))
    assert b.dtype == np.float64 and b.tolist() == [0, 1, 2, 0.5] and a.dtype == np.int64


def test_threads_appending_to_one_version():
    """Threads extending the same version at once each get their own rows."""
    base = appended(np.zeros(0, np.int64), np.arange(100))
    out: dict[int, np.ndarray] = {}

    def grow(k: int) -> None:
        out[k] = appended(base, np.full(50, k))

    threads = [threading.Thread(target=grow, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k, a in out.items():
        assert a.tolist() == [*range(100), *[k] * 50]
