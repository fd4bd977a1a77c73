"""The index's vectors read by row (frcore.bank.storage._vectors.VectorMap.take_rows): the same values
as the memory map's rows, and a query with the approximate index reads its candidates so, never
through the map, ranking exactly as through it."""

from __future__ import annotations

import os
from datetime import datetime

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from frcore.bank._bank import Bank
from frcore.bank.search import _ann
from frcore.bank.search._ann import AnnConfig, ApproximateRows
from frcore.bank.storage._synthetic import synthetic_facts
from frcore.bank.storage._vectors import VectorMap


def _map(path, rows: int, dim: int) -> VectorMap:
    with open(path, "rb") as fh:
        st_ = os.fstat(fh.fileno())
        m = VectorMap(fh, dtype="<f4", mode="r", shape=(rows, dim))
    m.file_id = (st_.st_dev, st_.st_ino)
    return m


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 300),
    dim=st.sampled_from([1, 3, 8, 384]),
    extra=st.integers(0, 5),
    data=st.data(),
)
def test_take_rows_equals_the_maps_rows(tmp_path_factory, n, dim, extra, data):
    """For any rows (any order, repeats, runs of consecutive rows, none), take_rows gives
    ``np.asarray(map[rows])`` bit for bit, as a C-contiguous float32 array; the file may hold
    rows after the mapped ones (a reader maps a prefix)."""
    path = tmp_path_factory.mktemp("v") / "vectors.f32"
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    values = rng.standard_normal((n + extra, dim)).astype("<f4")
    values[rng.random(values.shape) < 0.05] = -0.0
    path.write_bytes(values.tobytes())
    m = _map(path, n, dim)
    rows = np.asarray(data.draw(st.lists(st.integers(0, n - 1), max_size=3 * n)), dtype=np.int64)
    if data.draw(st.booleans()):
        rows = np.sort(rows)
    got = m.take_rows(rows)
    want = np.asarray(m[rows])
    assert got.dtype == np.float32 and got.flags.c_contiguous and got.shape == (rows.size, dim)
    assert got.tobytes() == want.tobytes()
    with pytest.raises(IndexError):
        m.take_rows(np.array([n]))


def test_take_rows_reads_the_mapped_file_not_a_replacement(tmp_path):
    """When the file at the map's path was replaced (scrubbed and written again), take_rows gives
    the rows of the file mapped, as the map does."""
    path = tmp_path / "vectors.f32"
    old = np.arange(40, dtype="<f4").reshape(10, 4)
    path.write_bytes(old.tobytes())
    m = _map(path, 10, 4)
    os.remove(path)
    path.write_bytes((old + 100).tobytes())
    assert np.array_equal(m.take_rows(np.array([7, 2, 3])), old[[7, 2, 3]])


QUERIES = [
    "what is the latest about topic 42",
    "synthetic fact number 17",
    "any upcoming obligations this week",
    "which slot changed recently",
]


def test_ann_query_reads_rows_by_pread_and_ranks_as_through_the_map(tmp_path, monkeypatch):
    """A bank with an approximate index of fewer candidates than rows, and rows it does not hold:
    its queries (every row, and one user's subset) read no vector row through the memory map, and
    rank (results, scores, terms, candidates, explanations) and compute the partial cosine exactly
    as with the rows read through the map."""
    path = str(tmp_path / "b.db")
    facts = synthetic_facts(1300, seed=3)
    cfg = AnnConfig(min_rows=0, candidates=150, growth=0.5)
    with Bank.open(path, embedder="hash-384", ann=cfg) as bank:
        bank.add(facts[:1000])
        bank.add(facts[1000:])  # not yet in the approximate index: a tail computed exactly

    def answers(b: Bank) -> list:
        out = []
        for q in QUERIES:
            r = b.query(q, at="2025-03-01", explain=True)
            out.append(([(x["id"], x["score"], x["terms"], x["explanation"]) for x in r.results], r.candidate_ids))
        return out

    fancy: list[object] = []
    getitem = VectorMap.__getitem__

    def spy(self, key):
        if isinstance(key, (np.ndarray, list)) or (
            isinstance(key, tuple) and any(isinstance(k, (np.ndarray, list)) for k in key)
        ):
            fancy.append(key)
        return getitem(self, key)

    monkeypatch.setattr(VectorMap, "__getitem__", spy)
    by_pread = Bank.open(path, readonly=True, ann=cfg)
    got = answers(by_pread)
    assert fancy == []
    read = by_pread._read(datetime(2026, 1, 1), None, False)
    matrix, index = read.sources[0] if read.sources is not None else None, read.ann
    assert isinstance(matrix, VectorMap) and index is not None and index.rows == 1000
    q = by_pread.embedder.embed([QUERIES[1]])[0]
    subsets = (None, np.arange(0, 1300, 3))

    def partials() -> list:
        out = []
        for sub in subsets:
            p = ApproximateRows(matrix, index, cfg, sub).partial(q)
            made = (p.values.copy(), p.known.copy(), p.bound)
            unknown = np.flatnonzero(~p.known)[:7]
            assert unknown.size and np.array_equal(p.fill(unknown), unknown)  # computed later
            out.append((made, p.values))
        return out

    with_pread = partials()
    assert fancy == []
    by_pread.close()

    monkeypatch.setattr(_ann, "take", lambda m, rows: np.asarray(m[rows]))  # through the map
    by_map = Bank.open(path, readonly=True, ann=cfg)
    assert answers(by_map) == got
    assert fancy  # the spy sees reads through the map
    for ((v, known, bound), filled), ((ve, known_e, bound_e), filled_e) in zip(with_pread, partials()):
        assert v.tobytes() == ve.tobytes() and np.array_equal(known, known_e) and bound == bound_e
        assert filled.tobytes() == filled_e.tobytes()
    by_map.close()
