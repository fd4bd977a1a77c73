"""A query's cosine known on some rows only (:class:`PartialCosine`), what an approximate index
(:meth:`frcore.bank.search.ApproximateRows.partial`) hands the pipeline instead of the full
cosine array."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass
class PartialCosine:
    """A query's cosine known exactly on some rows only (an approximate index's candidates and
    the rows it does not hold), computed for any other row when :func:`retrieve` needs it.

    ``values`` (n,) holds the exact cosine where ``known``, 0 elsewhere; ``bound`` is an upper
    bound of every unknown row's cosine (the smallest cosine among the approximate index's
    candidates: a bound when they are the rows nearest the query); ``exact(rows)`` returns the
    exact cosine of ``rows`` (ascending). :func:`retrieve` then ranks exactly as with the full
    cosine array whenever the bound holds: the cosine stage needs only the nearest rows (a row's
    lifecycle-linked cosine is its own or a related row's), the forced stage computes every row
    whose upper bound could reach its top, and σ of every candidate is computed exactly.
    ``damaged``: a row computed later had a non-finite cosine (it counts as 0). ``rows``: the
    known rows when it was made (ascending), ``finite``: whether their cosines are all finite
    (``None``: not given; both spare a pass over every row)."""

    values: np.ndarray
    known: np.ndarray
    bound: float
    exact: Callable[[np.ndarray], np.ndarray]
    damaged: bool = False
    rows: np.ndarray | None = None
    finite: bool | None = None

    def known_rows(self) -> np.ndarray:
        """The known rows, ascending."""
        if self.rows is not None and int(np.count_nonzero(self.known)) == self.rows.size:
            return self.rows  # known only grows from ``rows``: as many means the same rows
        return np.flatnonzero(self.known)

    def fill(self, rows: np.ndarray) -> np.ndarray:
        """Compute the unknown ``rows`` (ascending, distinct); returns the rows computed."""
        rows = rows[~self.known[rows]]
        if rows.size:
            v = np.asarray(self.exact(rows), dtype=self.values.dtype)
            bad = ~np.isfinite(v)
            if bad.any():
                self.damaged = True
                v[bad] = 0.0
            self.values[rows] = v
            self.known[rows] = True
        return rows
