"""Row selection shared by the stages and the flat baselines: the top ``count`` rows by a value,
ties by row (:func:`_top`), and the sorted union of the stages' rows (:func:`_union`)."""

from __future__ import annotations

import numpy as np

#: pools of at least this many rows are first cut at a value taken from a strided sample of
#: ``_SAMPLE`` rows (:func:`_top`; exact: used only when every row of the top is above the cut)
_SAMPLE_FROM = 16_384
_SAMPLE = 4096


def _top(vals: np.ndarray, idx: np.ndarray | None, count: int) -> np.ndarray:
    """The ``count`` rows with the largest values, ties by row (ascending): ``vals`` are the
    values of rows ``idx`` (ascending; ``None``: of every row, ``vals`` indexed by row).

    When the pool is large, a partial selection: every row above the count-th largest value is
    in, ordered by (−value, row); rows equal to it fill the rest in row order (a bank often has
    hundreds of rows tied at one value, e.g. cosine clipped to 0). A NaN threshold (NaN values)
    falls back to ordering by −value. Of a very large pool, the selection is made among the rows
    at or above a cut taken from a strided sample, when at least ``count`` and few rows are."""
    n = vals.shape[0]
    if n >= _SAMPLE_FROM and n > 64 * count:
        # a cut at most the count-th largest value, from a strided sample: the rows at or above
        # it hold every row of the top, and the count-th largest among them is the same value
        sample = vals[:: max(1, n // _SAMPLE)]
        j = min(sample.shape[0] - 1, 4 * count * sample.shape[0] // n + 8)
        cut = -np.partition(-sample, j)[j]
        if cut == cut:
            over = vals >= cut
            size = int(np.count_nonzero(over))
            if count <= size <= n // 8:
                rows = np.flatnonzero(over)
                return _top(vals[rows], rows if idx is None else idx[rows], count)
    if n > 4 * count:
        # the count-th largest by selecting the count-th smallest of −vals: NumPy's introselect
        # at a kth near the top of an array of few distinct values (cosine clipped to 0) took
        # 15x longer (0.36 vs 0.024 ms at 20k) than near the bottom
        neg = -vals
        neg_thr = np.partition(neg, count - 1)[count - 1]
        if neg_thr == neg_thr:
            thr = -neg_thr
            above = np.flatnonzero(vals > thr)
            above = above[np.lexsort((above, neg[above]))]
            tied = np.flatnonzero(vals == thr)[: count - above.size]
            pos = np.concatenate([above, tied])
            return pos if idx is None else idx[pos]
        keep = np.flatnonzero(neg <= neg_thr)
        idx = keep if idx is None else idx[keep]
        neg = neg[keep]
    else:
        neg = -vals
        if idx is None:
            idx = np.arange(n)
    return idx[np.lexsort((idx, neg))][:count]


def _union(parts: list[np.ndarray]) -> np.ndarray:
    """Sorted distinct rows of the stages' results (``np.unique`` of their concatenation)."""
    c = np.concatenate(parts) if len(parts) > 1 else parts[0].copy()
    c.sort()
    if c.size < 2:
        return c
    first = np.empty(c.size, dtype=bool)
    first[0] = True
    np.not_equal(c[1:], c[:-1], out=first[1:])
    return c[first]
