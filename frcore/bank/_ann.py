"""An approximate nearest-neighbour index over the bank's vectors: an option for banks too large
for an exact cosine per query (``Bank.open(path, ann=True)``, ``fr bank query --ann``).

The index is a faiss HNSW graph (inner product, 8-bit scalar-quantized storage) over the first
``rows`` rows of the bank index's ``vectors.f32`` (:mod:`frcore.bank._index`), in one file
``ann-<token>.faiss`` described by ``ann.json`` (the bank, its erase count and the index spec it
was built for, and ``rows``). A query asks it for the :attr:`AnnConfig.candidates` rows nearest
the query, computes their cosine exactly from ``vectors.f32``, and computes the rows the graph
does not hold yet (added since it was written) exactly too; every other row's cosine is computed
when the pipeline needs it (:class:`frcore.bank._pipeline.PartialCosine`). When the graph's
candidates are the true nearest rows, the ranking is the exact one; how often they are is
``ann_recall_at_10`` in ``fr bank bench --ann``.

A writable bank extends the graph after an add once the rows it does not hold exceed
:attr:`AnnConfig.growth` of those it does (and the bank has at least
:attr:`AnnConfig.min_rows`), so every row is written into it O(1) times on average. An erase
overwrites the graph's file with zeros and deletes it (it holds a quantized copy of every
vector); the next write rebuilds it.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

FORMAT = "frcore-bank-ann-v1"
#: how the graph stores the vectors it compares: float16, 8-bit per dimension, or float32
STORAGE = ("fp16", "sq8", "flat")
SIDECAR = "ann.json"


@dataclass(frozen=True)
class AnnConfig:
    """The approximate index's settings.

    - ``min_rows``: no graph for a bank with fewer rows (the exact cosine is fast there);
    - ``candidates``: rows asked of the graph per query (their cosine is then computed exactly);
    - ``ef_search``: the graph search's beam width (larger: better recall, slower);
    - ``m``, ``ef_construction``: the graph's degree and build beam (HNSW's M and efConstruction);
    - ``growth``: the graph is extended when the rows it does not hold exceed this share of those it does.
    """

    min_rows: int = 50_000
    candidates: int = 100
    ef_search: int = 1024
    m: int = 16
    ef_construction: int = 40
    growth: float = 0.1
    storage: str = "sq8"

    def __post_init__(self) -> None:
        if self.storage not in STORAGE:
            raise ValueError(f"ann.storage: one of {', '.join(STORAGE)}, got {self.storage!r}")
        for name in ("min_rows", "candidates", "ef_search", "m", "ef_construction"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < (0 if name == "min_rows" else 1):
                raise ValueError(f"ann.{name}: must be an integer ≥ {0 if name == 'min_rows' else 1}, got {v!r}")
        if not (isinstance(self.growth, (int, float)) and 0.0 < float(self.growth) <= 10.0):
            raise ValueError(f"ann.growth: must be in (0, 10], got {self.growth!r}")

    def build_params(self) -> dict[str, Any]:
        """What the graph's file depends on (a graph built otherwise is rebuilt)."""
        return {"kind": "hnsw-ip", "storage": self.storage, "m": self.m, "ef_construction": self.ef_construction}


def _faiss():
    import faiss  # imported only when an approximate index is used (about 0.2 s)

    return faiss


@dataclass
class Graph:
    """A loaded graph over rows ``[0, rows)`` (``file``: its file's name in the index folder)."""

    index: Any
    rows: int
    file: str

    def search(self, q: np.ndarray, k: int, ef: int, among: np.ndarray | None = None) -> np.ndarray:
        """The (up to) ``k`` rows nearest ``q`` by the graph's (quantized) inner product,
        ascending; ``among``: only rows whose bit is set in this little-endian bitmap (``np.packbits(
        mask, bitorder="little")``) are returned."""
        faiss = _faiss()
        if self.rows == 0:
            return np.zeros(0, dtype=np.int64)
        params = faiss.SearchParametersHNSW()
        params.efSearch = max(int(ef), int(k))
        if among is not None:
            selector = faiss.IDSelectorBitmap(self.rows, faiss.swig_ptr(among))
            params.sel = selector  # (kept alive by this frame until the search returns)
        _, found = self.index.search(np.asarray(q, dtype=np.float32).reshape(1, -1), int(k), params=params)
        rows = found[0]
        return np.sort(rows[rows >= 0]).astype(np.int64)


def read_sidecar(folder: Path) -> dict[str, Any] | None:
    try:
        m = json.loads((folder / SIDECAR).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return m if isinstance(m, dict) and m.get("format") == FORMAT else None


def valid_for(side: dict[str, Any] | None, manifest: dict[str, Any] | None, cfg: AnnConfig) -> bool:
    """Whether the graph ``side`` describes is of the bank, erase count and spec of ``manifest``,
    built as ``cfg`` says, and holds no row the index does not."""
    if side is None or manifest is None:
        return False
    same = all(side.get(k) == manifest.get(k) for k in ("bank_id", "erasures", "spec"))
    return (
        same
        and side.get("build") == cfg.build_params()
        and 0 <= int(side.get("rows", -1)) <= int(manifest.get("vector_rows", -1))
    )


def load(folder: Path, side: dict[str, Any]) -> Graph:
    """The graph ``side`` names, its storage memory-mapped (pages read as the search visits them)."""
    faiss = _faiss()
    path = folder / str(side["file"])
    index = faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY)
    if int(index.ntotal) != int(side["rows"]):
        raise ValueError(f"{path}: holds {index.ntotal} rows, {SIDECAR} says {side['rows']}")
    return Graph(index, int(side["rows"]), str(side["file"]))


def build(
    folder: Path,
    matrix: np.ndarray,
    manifest: dict[str, Any],
    cfg: AnnConfig,
    base: dict[str, Any] | None,
    batch: int = 50_000,
) -> dict[str, Any]:
    """Write a graph over every row of ``matrix`` (the index's vectors): ``base``'s graph (a valid
    sidecar) extended by the rows after it, or a new one. Returns the new sidecar (written; the
    caller holds the index lock). The old graph's file is scrubbed by the caller."""
    faiss = _faiss()
    n, dim = int(matrix.shape[0]), int(matrix.shape[1])
    if base is not None:
        index = faiss.read_index(str(folder / str(base["file"])))
        start = int(base["rows"])
    else:
        if cfg.storage == "flat":
            index = faiss.IndexHNSWFlat(dim, cfg.m, faiss.METRIC_INNER_PRODUCT)
        else:
            kind = faiss.ScalarQuantizer.QT_fp16 if cfg.storage == "fp16" else faiss.ScalarQuantizer.QT_8bit
            index = faiss.IndexHNSWSQ(dim, kind, cfg.m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = cfg.ef_construction
        step = max(1, n // 100_000)  # an 8-bit quantizer's per-dimension range, from up to 100,000 rows
        index.train(np.ascontiguousarray(matrix[::step], dtype=np.float32))
        start = 0
    for lo in range(start, n, batch):
        index.add(np.ascontiguousarray(matrix[lo : min(n, lo + batch)], dtype=np.float32))
    name = f"ann-{secrets.token_hex(6)}.faiss"
    tmp = folder / f"tmp-{name}"
    faiss.write_index(index, str(tmp))
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.rename(tmp, folder / name)
    side = {
        "format": FORMAT,
        "bank_id": manifest.get("bank_id"),
        "erasures": manifest.get("erasures"),
        "spec": manifest.get("spec"),
        "build": cfg.build_params(),
        "rows": n,
        "file": name,
    }
    tmp_side = folder / f"{SIDECAR}.{secrets.token_hex(4)}.tmp"
    tmp_side.write_text(json.dumps(side, indent=1), "utf-8")
    os.replace(tmp_side, folder / SIDECAR)
    return side


def due(side: dict[str, Any] | None, rows: int, cfg: AnnConfig, complete: bool = False) -> bool:
    """Whether a writer should (re)build the graph for an index of ``rows`` rows (``complete``:
    whenever it lacks a row)."""
    if rows < cfg.min_rows:
        return False
    held = int(side["rows"]) if side is not None else 0
    return rows > held if complete else (rows - held > cfg.growth * held or held == 0)


def files(folder: Path) -> list[Path]:
    """Every graph file (and sidecar) in the index folder, committed or left by a crashed write."""
    return [p for p in folder.glob("*ann-*.faiss")] + [p for p in folder.glob(f"{SIDECAR}*")]


class ApproximateRows:
    """The rows ``rows`` (ascending; ``None``: every row) of the index's vector matrix, with a
    graph over its first ``graph.rows`` rows: what a query multiplies when the bank has an
    approximate index (:meth:`partial`)."""

    def __init__(self, matrix: np.ndarray, graph: Graph, cfg: AnnConfig, rows: np.ndarray | None = None):
        self.shape = (int(matrix.shape[0]) if rows is None else int(rows.size), int(matrix.shape[1]))
        self.matrix, self.graph, self.cfg, self.rows = matrix, graph, cfg, rows
        held = min(graph.rows, int(matrix.shape[0]))
        self._held = held
        self._bitmaps: dict[tuple, np.ndarray] = {}
        if rows is None:
            self._among = None
            self._tail = np.arange(held, self.shape[0])
        else:
            mask = np.zeros(held, dtype=bool)
            inside = rows[rows < held]
            mask[inside] = True
            self._among = np.packbits(mask, bitorder="little")
            self._tail = np.arange(inside.size, rows.size)  # the snapshot's rows the graph does not hold

    def _global(self, local: np.ndarray) -> np.ndarray:
        return local if self.rows is None else self.rows[local]

    def partial(self, q: np.ndarray):
        """The query's :class:`frcore.bank._pipeline.PartialCosine` over these rows: exact on
        the graph's candidates and on every row the graph does not hold; the bound, the
        candidates' smallest cosine."""
        from ._pipeline import PartialCosine

        n = self.shape[0]
        q = np.asarray(q, dtype=np.float32)
        values = np.zeros(n, dtype=np.float32)
        known = np.zeros(n, dtype=bool)
        found = self._local(self.graph.search(q, self.cfg.candidates, self.cfg.ef_search, self._among))
        bound = -1.0  # every row the graph holds is a candidate: nothing is unknown
        if found.size:
            v = np.asarray(self.matrix[self._global(found)] @ q, dtype=np.float32)
            values[found], known[found] = v, True
            if found.size < n - self._tail.size:
                bound = float(v.min()) if np.isfinite(v).all() else float("nan")
        if self._tail.size:
            rows = self._global(self._tail)
            values[self._tail] = np.asarray(
                self.matrix[rows[0] : rows[-1] + 1] @ q if self.rows is None else self.matrix[rows] @ q,
                dtype=np.float32,
            )
            known[self._tail] = True
        matrix, to_global = self.matrix, self._global

        def exact(rows: np.ndarray) -> np.ndarray:
            return np.asarray(matrix[to_global(rows)] @ q, dtype=np.float32)

        def nearest(rows: np.ndarray, k: int) -> np.ndarray:
            return self._local(self.graph.search(q, k, self.cfg.ef_search, self._bitmap(rows)))

        return PartialCosine(values, known, bound, exact, nearest, self.cfg.candidates)

    def _local(self, found: np.ndarray) -> np.ndarray:
        """Graph rows (global, ascending) as positions among these rows (those that are)."""
        found = found[found < self._held]
        if self.rows is None:
            return found
        n = self.rows.size
        if not n:
            return found[:0]
        local = np.searchsorted(self.rows, found)
        return local[(local < n) & (self.rows[np.minimum(local, n - 1)] == found)]

    def _bitmap(self, rows: np.ndarray) -> np.ndarray:
        """The graph's selection bitmap of ``rows`` (positions among these rows; cached per set)."""
        key = (rows.size, int(rows[0]) if rows.size else -1, hashlib.blake2b(rows.tobytes(), digest_size=16).digest())
        got = self._bitmaps.get(key)
        if got is None:
            mask = np.zeros(self._held, dtype=bool)
            g = self._global(rows)
            mask[g[g < self._held]] = True
            if len(self._bitmaps) >= 64:
                self._bitmaps.clear()
            got = self._bitmaps[key] = np.packbits(mask, bitorder="little")
        return got

    def __matmul__(self, q: np.ndarray) -> np.ndarray:
        return np.asarray((self.matrix if self.rows is None else self.matrix[self.rows]) @ q)
