"""An approximate nearest-neighbour index over the bank's vectors: an option for banks too large
for an exact cosine per query (``Bank.open(path, ann=True)``, ``fr bank query --ann``).

The index is faiss's product quantizer with fast scan (``IndexPQFastScan``, inner product): every
vector compressed to one 4-bit code per :attr:`AnnConfig.pq_dims` dimensions (48 bytes for 384
dimensions), all of them scanned per query with SIMD lookup tables. It covers the first ``rows``
rows of the bank index's ``vectors.f32`` (:mod:`frcore.bank.storage._index`), in one file
``ann-<token>.faiss`` described by ``ann.json`` (the bank, its erase count and the index spec it
was built for, its settings and ``rows``). A query asks it for the :attr:`AnnConfig.candidates`
rows of highest approximate inner product, computes their cosine exactly from ``vectors.f32``,
and computes the rows the index does not hold yet (added since it was written) exactly too;
every other row's cosine is computed when the pipeline needs it
(:class:`~frcore.bank.search._partial.PartialCosine`). When the candidates include the rows nearest the
query, the ranking is the exact one; how often they do is ``ann_recall_at_10`` in
``fr bank bench --ann``. An index of at least :data:`SHARD_FROM` rows is scanned in shards of
consecutive rows, one per CPU (at most 4), on as many threads: the query's candidates are the
best of every shard's best, the same rows as of the index whole (up to ties in its score).

A writable bank extends the index after an add once the rows it does not hold exceed
:attr:`AnnConfig.growth` of those it does (and the bank has at least :attr:`AnnConfig.min_rows`);
the codebooks are trained once, on the rows of the first build. An erase overwrites the index's
file with zeros and deletes it (it holds a compressed copy of every vector); the next write
rebuilds it.
"""

from __future__ import annotations

import json
import os
import secrets
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ._partial import PartialCosine

FORMAT = "frcore-bank-ann-v1"
SIDECAR = "ann.json"
#: rows the codebooks are trained on (a sample of the first build's rows)
TRAIN_ROWS = 65_536


@dataclass(frozen=True)
class AnnConfig:
    """The approximate index's settings.

    - ``min_rows``: no index for a bank with fewer rows (the exact cosine is fast there; at
      least 64, what the codebooks are trained on);
    - ``candidates``: rows asked of the index per query (their cosine is then computed exactly);
    - ``pq_dims``: dimensions per 4-bit code (must divide the embedder's dimension);
    - ``growth``: the index is extended when the rows it does not hold exceed this share of those it does.
    """

    min_rows: int = 50_000
    candidates: int = 1000
    pq_dims: int = 4
    growth: float = 0.05

    def __post_init__(self) -> None:
        for name in ("min_rows", "candidates", "pq_dims"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < (0 if name == "min_rows" else 1):
                raise ValueError(f"ann.{name}: must be an integer ≥ {0 if name == 'min_rows' else 1}, got {v!r}")
        if not (isinstance(self.growth, (int, float)) and not isinstance(self.growth, bool)) or not (
            0.0 < float(self.growth) <= 10.0
        ):
            raise ValueError(f"ann.growth: must be in (0, 10], got {self.growth!r}")

    def build_params(self) -> dict[str, Any]:
        """What the index's file depends on (an index built otherwise is not used)."""
        return {"kind": "pq4-fastscan-ip", "pq_dims": self.pq_dims}


def _faiss():
    from ..._extras import require

    require("ann", "the approximate index (Bank.open(..., ann=True), --ann)")  # one line when faiss is missing
    import faiss  # imported only when an approximate index is used

    return faiss


#: an index of at least this many rows is scanned in shards, one thread each (:func:`shard_count`)
SHARD_FROM = 131_072


def shard_count(rows: int) -> int:
    """Shards an index of ``rows`` rows is scanned in: one per CPU this process may run on (at
    most 4), each of at least ``SHARD_FROM`` / 2 rows; 1 below that. A query scans one shard per
    thread (faiss scans one query's codes on one thread)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 4, rows // (SHARD_FROM // 2))) if rows >= SHARD_FROM else 1


def _one_thread() -> None:
    _faiss().omp_set_num_threads(1)  # (a thread's own OpenMP setting) no nested parallel region per shard


@dataclass
class AnnIndex:
    """A loaded approximate index over rows ``[0, rows)`` (``file``: its file's name in the index
    folder), as ``shards``: (first row, index over the rows from it to the next shard's first)."""

    shards: list[tuple[int, Any]]
    rows: int
    file: str
    _pool: Any = None  # the shards' threads, started by the first search (they end with it)

    def search(self, q: np.ndarray, k: int) -> np.ndarray:
        """The (up to) ``k`` rows of highest approximate inner product with ``q``, ascending: the
        ``k`` best of every shard's ``k`` best (by score, ties by row)."""
        if self.rows == 0:
            return np.zeros(0, dtype=np.int64)
        q = np.asarray(q, dtype=np.float32).reshape(1, -1)
        k = int(min(k, self.rows))
        if len(self.shards) > 1 and self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(len(self.shards) - 1, "frcore-ann", initializer=_one_thread)
        runs = [self._pool.submit(index.search, q, min(k, int(index.ntotal))) for _, index in self.shards[1:]]
        first = self.shards[0][1]
        found = [first.search(q, min(k, int(first.ntotal)))] + [run.result() for run in runs]  # the first here
        scores, rows = [], []
        for (start, _), (d, i) in zip(self.shards, found):
            keep = i[0] >= 0
            scores.append(d[0][keep])
            rows.append(i[0][keep] + start)
        s, r = np.concatenate(scores), np.concatenate(rows)
        best = np.lexsort((r, -s))[:k]
        return np.sort(r[best]).astype(np.int64)


def split(index: Any, parts: int) -> list[tuple[int, Any]]:
    """``index`` as ``parts`` shards of consecutive rows (faiss's ``remove_ids`` of the rows
    outside each; the last shard is ``index`` itself, its earlier rows removed)."""
    faiss = _faiss()
    n = int(index.ntotal)
    if parts <= 1 or n < 2 * parts:
        return [(0, index)]
    cuts = [n * i // parts for i in range(parts + 1)]
    shards = []
    for lo, hi in zip(cuts[:-2], cuts[1:-1]):
        shard = faiss.clone_index(index)
        if hi < n:
            shard.remove_ids(faiss.IDSelectorRange(hi, n))
        if lo:
            shard.remove_ids(faiss.IDSelectorRange(0, lo))
        shards.append((lo, shard))
    index.remove_ids(faiss.IDSelectorRange(0, cuts[-2]))
    shards.append((cuts[-2], index))
    return shards


def read_sidecar(folder: Path) -> dict[str, Any] | None:
    try:
        m = json.loads((folder / SIDECAR).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return m if isinstance(m, dict) and m.get("format") == FORMAT else None


def valid_for(side: dict[str, Any] | None, manifest: dict[str, Any] | None, cfg: AnnConfig) -> bool:
    """Whether the index ``side`` describes is of the bank, erase count and spec of ``manifest``,
    built as ``cfg`` says, and holds no row the index does not."""
    if side is None or manifest is None:
        return False
    same = all(side.get(k) == manifest.get(k) for k in ("bank_id", "erasures", "spec"))
    return (
        same
        and side.get("build") == cfg.build_params()
        and 0 <= int(side.get("rows", -1)) <= int(manifest.get("vector_rows", -1))
    )


def load(folder: Path, side: dict[str, Any]) -> AnnIndex:
    """The index ``side`` names (its codes read into memory: 4 bits per code), in
    :func:`shard_count` shards."""
    faiss = _faiss()
    path = folder / str(side["file"])
    index = faiss.read_index(str(path))
    rows = int(side["rows"])
    if int(index.ntotal) != rows:
        raise ValueError(f"{path}: holds {index.ntotal} rows, {SIDECAR} says {rows}")
    return AnnIndex(split(index, shard_count(rows)), rows, str(side["file"]))


def build(
    folder: Path,
    matrix: np.ndarray,
    manifest: dict[str, Any],
    cfg: AnnConfig,
    base: dict[str, Any] | None,
    batch: int = 65_536,
) -> dict[str, Any]:
    """Write an index over every row of ``matrix`` (the index's vectors): ``base``'s (a valid
    sidecar) extended by the rows after it, or a new one. Returns the new sidecar (written; the
    caller holds the index lock and scrubs the old file)."""
    faiss = _faiss()
    n, dim = int(matrix.shape[0]), int(matrix.shape[1])
    if base is not None:
        index = faiss.read_index(str(folder / str(base["file"])))
        start = int(base["rows"])
    else:
        if dim % cfg.pq_dims:
            raise ValueError(f"ann.pq_dims: {cfg.pq_dims} does not divide the vectors' dimension {dim}")
        index = faiss.IndexPQFastScan(dim, dim // cfg.pq_dims, 4, faiss.METRIC_INNER_PRODUCT)
        pick = np.sort(np.random.default_rng(0).choice(n, size=min(n, TRAIN_ROWS), replace=False))
        index.train(np.ascontiguousarray(matrix[pick], dtype=np.float32))
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
    """Whether a writer should (re)build the approximate index for an index of ``rows`` rows (``complete``:
    whenever it lacks a row)."""
    if rows < max(cfg.min_rows, 64):
        return False
    held = int(side["rows"]) if side is not None else 0
    return rows > held if complete else (rows - held > cfg.growth * held or held == 0)


class IndexFolder(Protocol):
    """What the approximate index needs of the bank's index folder
    (:class:`frcore.bank.storage.BankIndex`): where it is, its manifest, its vector matrix and
    its write lock. The folder's owner scrubs the approximate index's files on erase with every
    file of the folder it does not know; the files are built, extended and loaded here."""

    dir: Path
    readonly: bool

    def manifest(self) -> dict[str, Any] | None: ...

    def matrix(self, rows: int) -> np.ndarray: ...

    def locked(self) -> AbstractContextManager[bool]: ...


class ApproximateFiles:
    """The approximate index of one bank index folder: :meth:`index` loads the one valid for the
    folder as it is now, :meth:`update` builds or extends it when due. ``error``: the last error
    writing it (the bank works without it: its queries are then exact)."""

    def __init__(self, folder: IndexFolder):
        self.folder = folder
        self.error: str | None = None
        self._loaded: AnnIndex | None = None  # the index last loaded (its file is in ``file``)

    def index(self, cfg: AnnConfig) -> AnnIndex | None:
        """The approximate index valid for the folder as it is now (:func:`valid_for`), loaded
        once per file; ``None`` when there is none (or it cannot be read: the query is exact)."""
        side = read_sidecar(self.folder.dir)
        if side is None or not valid_for(side, self.folder.manifest(), cfg):
            return None
        if self._loaded is not None and self._loaded.file == side["file"]:
            return self._loaded
        try:
            self._loaded = load(self.folder.dir, side)
        except (OSError, RuntimeError, ValueError, KeyError):
            return None  # replaced under us, or unreadable
        return self._loaded

    def update(self, cfg: AnnConfig, complete: bool = False) -> bool:
        """Build or extend the approximate index when it is due (:func:`due`), under the folder's
        write lock; the files it replaces are removed (their rows are all still stored: an erase
        scrubs every approximate-index file first). Returns whether one was written."""
        folder = self.folder
        if folder.readonly:
            return False
        try:
            with folder.locked():
                m = folder.manifest()
                if m is None:
                    return False
                side = read_sidecar(folder.dir)
                base = side if valid_for(side, m, cfg) else None
                rows = int(m.get("vector_rows", 0))
                if not due(base, rows, cfg, complete):
                    return False
                new = build(folder.dir, folder.matrix(rows), m, cfg, base)
                for f in files(folder.dir):
                    if f.name not in (str(new["file"]), SIDECAR):
                        f.unlink(missing_ok=True)
            self.error = None
            return True
        except (OSError, RuntimeError, ValueError) as e:
            self.error = f"{folder.dir}: {getattr(e, 'strerror', None) or e}"
            return False


def files(folder: Path) -> list[Path]:
    """Every approximate-index file (and sidecar) in the index folder, committed or left by a crashed write."""
    return [p for p in folder.glob("*ann-*.faiss")] + [p for p in folder.glob(f"{SIDECAR}*")]


def take(matrix: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``matrix[rows]``, read without mapping the rows into this process when ``matrix`` can
    (the index's :class:`~frcore.bank.storage._vectors.VectorMap`: ``take_rows``); the same values."""
    reader = getattr(matrix, "take_rows", None)
    return reader(rows) if reader is not None else np.asarray(matrix[rows])


class ApproximateRows:
    """The rows ``rows`` (ascending; ``None``: every row) of the index's vector matrix, with an
    approximate index over its first ``ann.rows`` rows: what a query multiplies when the bank
    has one (:meth:`partial`)."""

    def __init__(self, matrix: np.ndarray, ann: AnnIndex, cfg: AnnConfig, rows: np.ndarray | None = None):
        self.shape = (int(matrix.shape[0]) if rows is None else int(rows.size), int(matrix.shape[1]))
        self.matrix, self.ann, self.cfg, self.rows = matrix, ann, cfg, rows
        held = min(ann.rows, int(matrix.shape[0]))
        self._held = held
        inside = held if rows is None else int(np.searchsorted(rows, held))  # these rows the index holds
        self._inside = inside
        self._tail = np.arange(inside, self.shape[0])  # and those it does not

    def _global(self, local: np.ndarray) -> np.ndarray:
        return local if self.rows is None else self.rows[local]

    def _local(self, found: np.ndarray) -> np.ndarray:
        """Rows of the index (ascending) as positions among these rows (those that are)."""
        found = found[found < self._held]
        if self.rows is None:
            return found
        n = self.rows.size
        if not n:
            return found[:0]
        local = np.searchsorted(self.rows, found)
        return local[(local < n) & (self.rows[np.minimum(local, n - 1)] == found)]

    def partial(self, q: np.ndarray):
        """The query's :class:`~frcore.bank.search._partial.PartialCosine` over these rows: exact on
        the index's candidates and on every row the index does not hold; the bound, the
        candidates' smallest cosine (over the whole index: of these rows or not)."""

        n = self.shape[0]
        q = np.asarray(q, dtype=np.float32)
        values = np.zeros(n, dtype=np.float32)
        known = np.zeros(n, dtype=bool)
        k = self.cfg.candidates
        if self.rows is not None and self._inside:  # enough candidates among these rows, as a share of the index
            k = int(min(self._held, np.ceil(k * self._held / self._inside)))
        everywhere = self.ann.search(q, k)
        everywhere = everywhere[everywhere < self._held]  # (an index newer than these rows: the rest)
        found = self._local(everywhere)
        bound = -1.0  # every row the index holds is a candidate: nothing is unknown
        if everywhere.size < self._held:
            v_all = np.asarray(take(self.matrix, everywhere) @ q, dtype=np.float32)
            bound = float(v_all.min()) if np.isfinite(v_all).all() else float("nan")
            v = v_all[np.searchsorted(everywhere, self._global(found))] if found.size else v_all[:0]
        else:
            v = np.asarray(take(self.matrix, self._global(found)) @ q, dtype=np.float32)
        values[found], known[found] = v, True
        finite = bool(np.isfinite(v).all())
        if self._tail.size:
            rows = self._global(self._tail)
            tail = np.asarray(
                take(self.matrix, np.arange(rows[0], rows[-1] + 1) if self.rows is None else rows) @ q,
                dtype=np.float32,
            )
            values[self._tail] = tail
            known[self._tail] = True
            finite = finite and bool(np.isfinite(tail).all())
        matrix, to_global = self.matrix, self._global

        def exact(rows: np.ndarray) -> np.ndarray:
            return np.asarray(take(matrix, to_global(rows)) @ q, dtype=np.float32)

        # the known rows: the candidates (ascending) then the tail (after every row the index holds)
        known_rows = np.concatenate([found, self._tail]) if self._tail.size else found
        return PartialCosine(values, known, bound, exact, rows=known_rows, finite=finite)

    def __matmul__(self, q: np.ndarray) -> np.ndarray:
        return np.asarray((self.matrix if self.rows is None else self.matrix[self.rows]) @ q)
