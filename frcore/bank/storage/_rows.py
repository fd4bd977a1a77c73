"""The rows of one index segment (:class:`Rows`) and the coding of its few-valued string columns
(:func:`encode`, :func:`decode`): what :mod:`frcore.bank.storage._index` writes and reads."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..records import slot_codes
from ..search import Postings


@dataclass
class Rows:
    """The rows of one range of sequence numbers, in store order: what a segment holds."""

    lo: int
    hi: int
    seq: np.ndarray
    cols: dict[str, Any]
    recorded: np.ndarray
    life: dict[str, np.ndarray]
    links: list[str]  # each row's links as stored (JSON text)
    vectors: np.ndarray  # of rows about to be written; empty once they are rows of vectors.f32
    postings: Postings
    raw: Callable[[], list[tuple]] | list[tuple] | bytes  # rows, a reader of them (raw.json, SQLite), or JSON
    #: of a segment read from disk: its slot column as (values, codes) (:func:`encode`)
    slot_codes: tuple[list, np.ndarray] | None = None

    @property
    def n(self) -> int:
        return int(self.seq.shape[0])

    def raw_rows(self) -> list[tuple]:
        if isinstance(self.raw, bytes):
            self.raw = [tuple(r) for r in json.loads(self.raw)]
        elif callable(self.raw):
            return self.raw()  # read again when asked again: the reader is the copy kept
        return self.raw

    def raw_json(self) -> bytes:
        """The raw rows as the JSON list ``raw.json`` holds (read, not parsed, from a segment on disk)."""
        if isinstance(self.raw, bytes):
            return self.raw
        if isinstance(self.raw, _RawFile):
            return self.raw.path.read_bytes()
        return _json_list([list(r) for r in self.raw_rows()])


@dataclass(frozen=True)
class _RawFile:
    """A segment's ``raw.json``, read when called."""

    path: Path

    def __call__(self) -> list[tuple]:
        return [tuple(r) for r in json.loads(self.path.read_text("utf-8"))]


def _json_list(values: Sequence[Any]) -> bytes:
    return json.dumps(list(values), ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _object(values: list[Any]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def encode(column: np.ndarray) -> tuple[list, np.ndarray]:
    """A string column (``None`` allowed) as (its distinct values in order of first occurrence,
    every row's int32 position among them, -1 for ``None``: its :func:`slot_codes`)."""
    seen: dict[Any, int] = {}
    codes = slot_codes(column.tolist(), seen).astype(np.int32)
    return list(seen), codes


def decode(values: list, codes: np.ndarray) -> np.ndarray:
    """The object column :func:`encode` gave (``values``, ``codes``): row i is ``values[codes[i]]``
    (``None`` for -1), the same object for every row of one value."""
    codes = np.asarray(codes)
    if codes.size and (int(codes.min()) < -1 or int(codes.max()) >= len(values)):
        raise ValueError(f"codes outside [-1, {len(values)})")
    return _object([*values, None])[codes]
