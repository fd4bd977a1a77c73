"""The store's contents as read at one version: the rows, their columns and derived data."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..records import (
    FactRecord,
    LifecycleColumns,
    Transition,
)
from ._common import (
    StoreError,
    _row_to_record,
)
from ._index import Rows


@dataclass(frozen=True)
class _Loaded:
    """The store's contents as read at one version (see :meth:`frcore.bank.storage._loading.Loads.load`).

    Rows come from the bank's index segments (a prefix of the rows: ``segments``, see
    :mod:`frcore.bank.storage._index`) and from SQLite (``records``, the rest); :attr:`edges` builds the
    :class:`FactRecord` of every row only when asked for."""

    version: int
    erasures: str
    max_seq: int
    max_tseq: int
    n: int
    recorded: np.ndarray  # (n,) int64 transaction times, microseconds since the epoch
    cols: dict[str, Any]
    life: dict[str, np.ndarray]  # per-row lifecycle inputs (frcore.bank.records._lifecycle.row_lifecycle)
    links: list[Mapping[str, tuple[str, ...]]]
    transitions: list[Transition]
    released: frozenset[str]
    segments: tuple[Rows, ...]  # index segments holding the first rows, in order
    records: list[FactRecord]  # the rows after them, read from SQLite
    seqs: np.ndarray  # (len(records),) their sequence numbers
    #: (n,) every row's slot code (:func:`frcore.bank.records._lifecycle.slot_codes` of ``cols["slots"]``)
    #: and the code of each slot (the index's coded slot column, read without a pass over the rows)
    slot_codes: np.ndarray
    slot_vocab: dict[str, int] = field(compare=False, repr=False)
    #: derived once per version, on first use: {id: position} and the lifecycle columns
    derived: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def indexed(self) -> int:
        """Rows held by index segments (the first ones)."""
        return sum(s.n for s in self.segments)

    @property
    def edges(self) -> list[FactRecord]:
        got = self.derived.get("edges")
        if got is None:
            out: list[FactRecord] = []
            for seg in self.segments:
                out += [_row_to_record(r) for r in seg.raw_rows()]
            if len(out) != self.indexed:  # rows read from SQLite after an erase this cut predates
                raise StoreError("the bank changed while it was read (an erase); retry", "busy")
            got = self.derived["edges"] = _with_releases(out, self.released) + self.records
        return got

    def record(self, i: int) -> FactRecord:
        """The :class:`FactRecord` of row ``i`` (without building every row's)."""
        if "edges" in self.derived or i >= self.indexed:
            return self.edges[i] if "edges" in self.derived else self.records[i - self.indexed]
        for k, seg in enumerate(self.segments):
            if i < seg.n:
                raw = self.derived.get(f"raw{k}")
                if raw is None:
                    raw = self.derived[f"raw{k}"] = seg.raw_rows()
                return _with_releases([_row_to_record(raw[i])], self.released)[0]
            i -= seg.n
        raise IndexError(i)

    def lifecycle(self) -> tuple[dict[str, int], LifecycleColumns]:
        got = self.derived.get("lifecycle")
        if got is None:
            index = dict(zip(self.cols["ids"].tolist(), range(self.n)))  # ids are unique (UNIQUE column)
            got = self.derived["lifecycle"] = (
                index,
                LifecycleColumns.from_rows(self.life, (), self.links, index, self.slot_codes),
            )
        return got


def _with_releases(edges: list[FactRecord], released: frozenset[str]) -> list[FactRecord]:
    """``edges`` with ``quarantined`` cleared for those the owner released (release rows, never
    an UPDATE of the stored row)."""
    if not released:
        return edges
    return [dataclasses.replace(e, quarantined=False) if e.quarantined and e.id in released else e for e in edges]
