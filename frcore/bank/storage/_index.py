"""The bank's persisted index: its rows as column arrays, their vectors and BM25 postings, in a
folder beside the SQLite file (``<bank>.index/``), memory-mapped when a process opens the bank.

A process that opens a bank reads its facts from here instead of parsing every SQLite row,
re-tokenizing every text and re-reading every vector; only the facts added since the index was
last written are read from SQLite. The SQLite file stays the one source of truth: the index is
derived from it, verified against it on every load, and rebuilt from it whenever it is missing,
stale or of another embedder or owner normalisation.

Layout (``FORMAT``): ``manifest.json`` names the bank (its ``bank_id``), the erase count the index
is valid for, what the vectors and tokens were made with (:class:`IndexSpec`), and the
segments, in store order; each segment is a folder holding the rows of one range of store
sequence numbers — ``.npy`` arrays (memory-mapped), JSON lists of strings (ids, texts, links;
the few distinct slots, kinds, speakers and users, each row's as a code), the raw rows
(``raw.json``, read only when a caller asks for the facts themselves) and the BM25 postings of
their tokens (:class:`frcore.bank.search._lexical.Postings`). Segments are immutable: an add writes
a new one (the facts it committed) and merges the last ``MERGE_FAN_IN`` (F) while the oldest
of them holds at most F - 1 times the newest's rows (:func:`merge_count`: O(log n) segments;
with adds of one size a base-F counter, every row rewritten about log_F n times). The vectors of
every indexed row are one float32 matrix in one file (``vectors.f32``, rows in store order,
memory-mapped as one matrix: a query over every row multiplies it in place); an add writes its
rows after the last indexed one, and no file a reader maps is ever truncated.

Verified: the manifest records, for every segment, the digest (16 bytes of SHA-256, :func:`digest`)
of each of its files and of its rows of ``vectors.f32``, written with it. A load uses a segment
only once it is verified (once per segment per process: :meth:`BankIndex._verify`, run in a thread
while the load parses the segment, :meth:`BankIndex._parsed`); a segment whose bytes differ, or
whose files do not parse, is not used — it and the segments after it are read from SQLite, and a
writable store scrubs them and indexes their rows again at once.

Erasure: an erase overwrites with zeros, then deletes, every segment from the one holding the
erased fact (or a fact whose links named it) on, and every folder a crashed write left
(``tmp-seg-*``, a segment no manifest lists), and overwrites their rows of ``vectors.f32``
with zeros; they are rebuilt from SQLite on the next load.
A load that finds an index made before an erase it did not see (another program erased)
scrubs the whole index the same way. No erased text, id or vector stays in the index folder.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import fcntl
import functools
import hashlib
import io
import itertools
import json
import mmap
import os
import secrets
import shutil
import stat
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..records import neutralize, owner_pattern
from ..search import Postings
from ._merging import merge_count
from ._rows import Rows as Rows, _json_list, _object, _RawFile, decode as decode, encode as encode
from ._vectors import VectorMap

FORMAT = "frcore-bank-index-v6"
#: numeric columns of :func:`frcore.bank.records._lifecycle.edge_columns` kept as ``.npy`` arrays
NUMERIC_COLUMNS = ("weights", "session", "confidence", "numeric", "quarantined")
#: string columns kept as JSON lists
STRING_COLUMNS = ("ids", "texts")
#: string columns (``None`` allowed) of few distinct values: each kept as its values (a JSON list,
#: in order of first occurrence) and every row's position among them (``code_<column>.npy``,
#: int32, -1 = ``None``); a loaded row's value is the one string object all its rows share
CODED_COLUMNS = ("slots", "kinds", "speakers", "users")
#: per-row lifecycle inputs (:class:`frcore.bank.records._lifecycle.LifecycleColumns` without slots and links)
LIFE_COLUMNS = ("said", "event", "has_event", "expiring")
#: the file of every indexed row's vector
VECTORS = "vectors.f32"
#: NumPy reads a ``.npy`` header with ``ast.literal_eval``, which CPython 3.11 cannot run in two
#: threads at once (``SystemError: AST constructor recursion depth mismatch``, seen with readers
#: and writers of one bank in threads): one process-wide lock around opening a segment's arrays
_NPY_HEADER_LOCK = threading.Lock()
#: the arrays of a segment (``<name>.npy``) and its JSON files: every file a segment holds
SEGMENT_ARRAYS = (
    "seq",
    *NUMERIC_COLUMNS,
    "recorded",
    *(f"life_{k}" for k in LIFE_COLUMNS),
    "post_indptr",
    "post_rows",
    "post_tf",
    "post_length",
    *(f"code_{k}" for k in CODED_COLUMNS),
)
SEGMENT_FILES = (*(f"{a}.npy" for a in SEGMENT_ARRAYS), "strings.json", "vocab.json", "raw.json")
#: what the index's files hold besides the bank's text (file names, JSON keys, ``.npy`` header
#: words): an erased string found only as one of them is not the erased fact's
FORMAT_WORDS = " ".join(
    [FORMAT, VECTORS, "manifest.json", "lock", "tmp-seg", *SEGMENT_FILES, *STRING_COLUMNS, *CODED_COLUMNS]
    + ["format", "bank_id", "erasures", "spec", "model", "dim", "text_key", "tokenizer", "segments", "dir"]
    + ["files", "vectors", "vector_rows", "links", "values", "lo", "hi", "numpy", "descr", "fortran_order"]
    + ["shape", "false", "true", "<f8", "<f4", "<i8", "<i4", "|b1", "<m8[us]", "<M8[us]", "ann.json", "faiss"]
).lower()


def digest(data: bytes | memoryview) -> str:
    """The checksum the manifest records of a file or vector rows: the first 16 bytes of its
    SHA-256, hex (SHA-256 runs on the CPU's SHA instructions: 1.6 GB/s against BLAKE2b's 0.87 on
    this project's machine, and a fresh process hashes every indexed vector)."""
    return hashlib.sha256(data).hexdigest()[:32]


#: a segment's rows of ``vectors.f32`` are checksummed in pieces of this many bytes (so that a
#: load hashes them in parallel): ``vectors`` in the manifest is the list of their digests
VECTOR_PIECE = 1 << 24


def vector_digests(data: bytes | memoryview) -> list[str]:
    """The :func:`digest` of each :data:`VECTOR_PIECE` bytes of ``data`` (a segment's vector rows)."""
    view = memoryview(data)
    return [digest(view[i : i + VECTOR_PIECE]) for i in range(0, len(view), VECTOR_PIECE)]


#: segment folder → what it was verified as in this process (its files' identity and sizes,
#: the digests the manifest records, its place in ``vectors.f32``): :meth:`BankIndex._verify`
_VERIFIED: dict[str, tuple] = {}
_VERIFIED_LOCK = threading.Lock()


def row_stamp(edge_id: str, recorded_at: str) -> str:
    """What ties a segment to one database state: the :func:`digest` of the id and transaction
    time of its last row as SQLite holds them. A database rolled back (a restored backup, a lost
    ``-wal``) and written again holds another row, or another time, at that sequence number."""
    return digest(f"{edge_id}\0{recorded_at}".encode())


def index_path(db_path: str) -> Path:
    """The index folder of the bank at ``db_path``: named from the database file's resolved path
    (symbolic links followed), so every path that reaches one bank reaches one index."""
    return Path(os.path.realpath(db_path) + ".index")


@functools.lru_cache(maxsize=16)
def _owner_re(owner: str | None):
    return owner_pattern(owner)


@dataclass(frozen=True)
class IndexSpec:
    """What the index's vectors and tokens depend on: the vectors' model key and dimension, and
    the text normalisation applied before tokenizing (``text_key`` names it; ``owner``: the
    bank owner's name, read as "the user", :func:`frcore.bank.records.neutralize`)."""

    model: str
    dim: int
    text_key: str
    owner: str | None = field(default=None, compare=False)
    tokenizer: str = "nltk-en-179+snowball"

    def normalize(self, text: str) -> str:
        """A stored text as it is tokenized (by the tokenizer the bank hands the store, which
        binds this: :func:`frcore.bank.search.tokenize_stored`): the owner's name replaced."""
        return neutralize(text, _owner_re(self.owner))

    def identity(self) -> dict[str, Any]:
        return {"model": self.model, "dim": self.dim, "text_key": self.text_key, "tokenizer": self.tokenizer}


class BankIndex:
    """The index folder of one bank, for one :class:`IndexSpec` (module docstring)."""

    def __init__(self, db_path: str, spec: IndexSpec, readonly: bool):
        self.dir = index_path(db_path)
        self.spec = spec
        self.readonly = readonly
        #: the last error writing the index (the bank works without it, only slower to open)
        self.error: str | None = None

    @classmethod
    def existing(cls, db_path: str) -> BankIndex | None:
        """The index folder of the bank at ``db_path`` as it is (its own spec), to erase from or
        scrub; ``None`` when there is none."""
        d = index_path(db_path)
        if not d.is_dir():
            return None
        probe = cls(db_path, IndexSpec("", 0, ""), readonly=False)
        m = probe._manifest()
        spec = (m or {}).get("spec") or {}
        try:
            return cls(db_path, IndexSpec(str(spec["model"]), int(spec["dim"]), str(spec["text_key"])), False)
        except (KeyError, TypeError, ValueError):
            return probe  # unreadable: only scrubbing makes sense

    # ------------------------------------------------------------------ reading
    def manifest(self) -> dict[str, Any] | None:
        """The manifest as it is now (``None``: none this format reads)."""
        return self._manifest()

    def locked(self) -> contextlib.AbstractContextManager[bool]:
        """The folder's write lock, held (for a sidecar's writer: :meth:`_scrub_sidecars`)."""
        return self._locked()

    def _manifest(self) -> dict[str, Any] | None:
        """The manifest, or ``None`` when there is none this format reads — or when the index
        folder or the manifest is a symbolic link (damage: never followed)."""
        try:
            if self.dir.is_symlink():
                return None
            fd = os.open(self.dir / "manifest.json", os.O_RDONLY | os.O_NOFOLLOW)
            with open(fd, "rb") as fh:
                m = json.loads(fh.read().decode("utf-8"))
        except (OSError, ValueError):
            return None
        return m if isinstance(m, dict) and m.get("format") == FORMAT else None

    def load(
        self,
        bank_id: str | None,
        erasures: int,
        count_upto: Callable[[int], int],
        stamp_at: Callable[[int], str | None],
    ) -> list[Rows]:
        """The segments, when the manifest is of this bank, this spec and this erase count, its
        rows are all still stored (``count_upto(hi)``: stored rows with seq ≤ hi) and its last
        row is the database's (``stamp_at(hi)``: the :func:`row_stamp` of the stored row ``hi``);
        else ``[]`` (an index made before an unseen erase, or of another database state, is
        scrubbed, when writable). Only the
        segments before the first one that fails its checksums or does not parse are returned
        (:meth:`_parsed`); a writable index drops that one and those after it (:meth:`_drop_damaged`)."""
        m = self._manifest()
        if m is None or bank_id is None or m.get("bank_id") != bank_id:
            return []
        if int(m.get("erasures", -1)) != erasures:
            if not self.readonly:
                with self._locked():
                    m2 = self._manifest()
                    if m2 is not None and int(m2.get("erasures", -1)) != erasures:
                        self._scrub_all(m2)
            return []
        if m.get("spec") != self.spec.identity():
            return []
        segs = m.get("segments") or []
        if not segs:
            return []
        try:
            starts = [0, *itertools.accumulate(int(s["n"]) for s in segs)]
        except (ValueError, KeyError, TypeError):
            return []  # a damaged manifest: read the rows from SQLite
        total = starts[-1]
        out: list[Rows] = []
        damaged = stale = False
        # the segments are hashed in a thread (hashing releases the GIL) while this one counts the
        # stored rows and parses the segments; a segment is used only once its hashes match
        pool = concurrent.futures.ThreadPoolExecutor(1, "frcore-verify")
        try:
            checks = [pool.submit(self._verify, s, a) for s, a in zip(segs, starts)]
            try:
                hi = int(segs[-1]["hi"])
                if count_upto(hi) != total or stamp_at(hi) != segs[-1].get("stamp"):
                    stale = True  # of another state of the database (rolled back, or another copy)
                    return []
                if int(m.get("vector_rows", -1)) != total:
                    return []
                self.matrix(total)  # vectors.f32 holds every row (a shorter file cannot be mapped)
            except (OSError, ValueError, KeyError, TypeError):
                return []  # replaced or removed under us, or a damaged manifest: read the rows from SQLite
            for s, check in zip(segs, checks):
                try:
                    out.append(self._parsed(s, check))
                except (OSError, ValueError, KeyError, TypeError, IndexError):
                    # damaged (or replaced under us): this segment's rows and the later ones come from SQLite
                    damaged = True
                    break
        finally:
            pool.shutdown(wait=False, cancel_futures=True)  # hashing left running ends on its own
            if stale and not self.readonly:
                with contextlib.suppress(OSError), self._locked():
                    if self._manifest() == m:
                        self._scrub_all(m)  # rebuilt from SQLite by this load's writer
        if damaged and not self.readonly:
            with contextlib.suppress(OSError):
                self._drop_damaged(m, len(out))
        return out

    def _checked(self, seg: dict[str, Any], start: int) -> Rows:
        """The rows of the manifest's segment ``seg`` (the rows of ``vectors.f32`` from ``start``
        on), verified (:meth:`_verify`) and parsed; ``ValueError`` (or ``KeyError``,
        ``TypeError``, ``OSError``) when it is damaged."""
        self._verify(seg, start)
        return self._of_segment(seg, self._read(self.dir / str(seg["dir"])))

    def _parsed(self, seg: dict[str, Any], check: concurrent.futures.Future) -> Rows:
        """:meth:`_checked` with its verification ``check`` (:meth:`_verify`) running meanwhile:
        the files are parsed while they are hashed, and the rows returned only once verified (a
        file that fails to parse and to verify is damaged, ``ValueError``)."""
        try:
            rows = self._read(self.dir / str(seg["dir"]))
        except Exception:
            check.result()  # raises when the files are not the ones the manifest records
            raise
        check.result()
        return self._of_segment(seg, rows)

    def _of_segment(self, seg: dict[str, Any], rows: Rows) -> Rows:
        """``rows``, when they are the rows the manifest's segment ``seg`` names; else ``ValueError``."""
        if (rows.lo, rows.hi, rows.n) != (int(seg["lo"]), int(seg["hi"]), int(seg["n"])):
            raise ValueError(f"{self.dir / str(seg['dir'])}: not the rows the manifest names")
        return rows

    def _verify(self, seg: dict[str, Any], start: int) -> None:
        """Raise ``ValueError`` unless every file of segment ``seg`` and its ``n`` rows of
        ``vectors.f32`` from row ``start`` have the :func:`digest` the manifest records. Done
        once per segment per process: a segment whose files (and place in ``vectors.f32``) are
        those verified before is not read again (segments are immutable, and no write touches
        the vector rows of a segment the manifest lists)."""
        d = self.dir / str(seg["dir"])
        files, n = seg["files"], int(seg["n"])
        if not isinstance(files, dict) or not set(SEGMENT_FILES) <= files.keys():
            raise ValueError(f"{d}: the manifest lacks a checksum of a file")
        found = [(name, os.lstat(d / name)) for name in SEGMENT_FILES]
        if os.path.islink(d) or not all(stat.S_ISREG(st.st_mode) for _, st in found):
            raise ValueError(f"{d}: a segment file that is not a regular file (a symbolic link is never followed)")
        stats = tuple((name, st.st_ino, st.st_size, st.st_mtime_ns) for name, st in found)
        vec = os.stat(self.dir / VECTORS)
        # vectors.f32 grows by appends, and rows rewritten in place change its mtime and ctime:
        # a segment is verified again whenever the file is not the one it was verified in
        vkey = (vec.st_ino, vec.st_size, vec.st_mtime_ns, vec.st_ctime_ns)
        key = (stats, vkey, start, n, tuple(seg["vectors"]), tuple(files[name] for name in SEGMENT_FILES))
        with _VERIFIED_LOCK:
            if _VERIFIED.get(str(d)) == key:
                return
        row = self.spec.dim * 4
        jobs = [(d / name, 0, None) for name in SEGMENT_FILES] + _pieces(self.dir / VECTORS, start * row, n * row)
        want = [files[name] for name in SEGMENT_FILES] + list(seg["vectors"])
        got = _digests(jobs)
        if got != want:
            bad = next((j for j, g, w in zip(jobs, got, want) if g != w), jobs[-1])
            raise ValueError(f"{bad[0]}: checksum mismatch")
        with _VERIFIED_LOCK:
            if len(_VERIFIED) > 4096:  # folders of banks long gone
                _VERIFIED.clear()
            _VERIFIED[str(d)] = key

    def _drop_damaged(self, m: dict[str, Any], keep: int) -> None:
        """Scrub the segment ``m["segments"][keep]`` (found damaged) and the later ones, and
        commit the manifest without them (their rows are indexed again from SQLite by the
        load's writer); nothing when the manifest changed meanwhile."""
        with self._locked():
            now = self._manifest()
            if now != m:
                return  # another writer rewrote it: the next load checks the new one
            segs = list(m["segments"])
            self._commit(str(m["bank_id"]), int(m["erasures"]), segs[:keep])
            self._scrub_sidecars()  # built over rows that are no longer indexed: rebuilt by the next write
            self._zero_vectors(sum(int(s["n"]) for s in segs[:keep]), self.spec.dim)
            for s in segs[keep:]:
                _scrub(self.dir / str(s["dir"]))

    def matrix(self, rows: int) -> np.ndarray:
        """The first ``rows`` rows of ``vectors.f32`` as a read-only (rows, dim) float32 map
        (a :class:`VectorMap`: :meth:`VectorMap.take_rows` reads a few rows without mapping them)."""
        if rows == 0:
            return np.zeros((0, self.spec.dim), dtype=np.float32)
        path = self.dir / VECTORS
        if path.is_symlink():  # never followed: damage, read from SQLite
            raise ValueError(f"{path}: a symbolic link")
        with open(path, "rb") as fh:  # by its path: the map's filename is where take_rows preads
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise ValueError(f"{path}: not a regular file")
            m = VectorMap(fh, dtype="<f4", mode="r", shape=(rows, self.spec.dim))
        m.file_id = (st.st_dev, st.st_ino)
        return m

    def _read(self, d: Path) -> Rows:
        """The rows of the segment folder ``d`` (its arrays memory-mapped); ``ValueError`` (or
        ``KeyError``, ``TypeError``) when its files do not parse or do not fit together."""

        def arr(name: str) -> np.ndarray:
            with _NPY_HEADER_LOCK:
                return np.load(d / f"{name}.npy", mmap_mode="r")

        strings = json.loads((d / "strings.json").read_text("utf-8"))
        vocab_list = json.loads((d / "vocab.json").read_text("utf-8"))
        seq = np.asarray(arr("seq"))
        cols: dict[str, Any] = {k: np.asarray(arr(k)) for k in NUMERIC_COLUMNS}
        for k in STRING_COLUMNS:
            cols[k] = _object(strings[k])
        coded = {k: (strings["values"][k], np.asarray(arr(f"code_{k}"))) for k in CODED_COLUMNS}
        for k, (values, local) in coded.items():
            cols[k] = decode(values, local)
        n = seq.shape[0]
        if any(len(cols[k]) != n for k in cols) or len(strings["links"]) != n:
            raise ValueError(f"{d}: columns of different lengths")
        if n and (int(seq[0]) < int(strings["lo"]) or int(seq[-1]) > int(strings["hi"]) or np.any(np.diff(seq) <= 0)):
            raise ValueError(f"{d}: sequence numbers outside its range")
        _check_postings(d, n, arr)
        postings = Postings(
            dict(zip(vocab_list, range(len(vocab_list)))),
            np.asarray(arr("post_indptr")),
            arr("post_rows"),
            arr("post_tf"),
            np.asarray(arr("post_length")),
        )
        return Rows(
            lo=int(strings["lo"]),
            hi=int(strings["hi"]),
            seq=seq,
            cols=cols,
            recorded=np.asarray(arr("recorded")),
            life={k: np.asarray(arr(f"life_{k}")) for k in LIFE_COLUMNS},
            links=strings["links"],
            vectors=np.zeros((0, self.spec.dim), dtype=np.float32),  # they are rows of vectors.f32
            postings=postings,
            raw=_RawFile(d / "raw.json"),
            slot_codes=coded["slots"],
        )

    # ------------------------------------------------------------------ writing
    @contextlib.contextmanager
    def _locked(self, wait: bool = True):
        """Hold the folder's write lock (yields True); with ``wait=False`` yields False at once
        when another writer holds it."""
        if self.dir.is_symlink():  # damage: the link is removed (never its target), the index rebuilt
            os.unlink(self.dir)
        self.dir.mkdir(exist_ok=True)
        lock = self.dir / "lock"
        if lock.is_symlink():
            os.unlink(lock)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            try:
                if self._unlink_links():
                    self._scrub_all(None)
                yield True
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _unlink_links(self) -> bool:
        """Under the write lock: remove every symbolic link among the index folder's entries (the
        link, never its target: nothing outside the bank is written or removed); True when there
        was one — the index is then damaged, and the caller scrubs it (rebuilt from SQLite)."""
        found = False
        with os.scandir(self.dir) as entries:
            for e in entries:
                if e.is_symlink():
                    found = True
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(e.path)
        return found

    def append(self, rows: Rows, bank_id: str, erasures: int, covered_hi: int, stamp: str) -> bool:
        """Write ``rows`` as a new last segment (``stamp``: the :func:`row_stamp` of its last row),
        if the index ends at ``covered_hi`` (the rows before them are the ones indexed), then
        merge (module docstring; a segment found damaged
        is not merged: the next load drops it). Returns whether it was written; an error writing
        it is kept in :attr:`error` (the bank is unaffected)."""
        if self.readonly:
            return False
        written: list[str] = []
        try:
            with self._locked():
                m = self._manifest()
                if m is None or (
                    m.get("bank_id") != bank_id
                    or int(m.get("erasures", -1)) != erasures
                    or m.get("spec") != self.spec.identity()
                ):
                    # of another bank or erase count, or none this format reads (an older format's
                    # segments, a damaged manifest, a crashed write's leftovers): nothing of it is kept
                    self._scrub_all(m)
                    m = None
                segs = list(m["segments"]) if m is not None else []
                end = int(segs[-1]["hi"]) if segs else 0
                if end != covered_hi:
                    return False  # another process indexed (or scrubbed) meanwhile: the next load reconciles
                total = sum(int(s["n"]) for s in segs)
                segs.append(self._write(rows, self._put_vectors(total, rows.vectors), stamp))
                written.append(segs[-1]["dir"])
                old: list[dict[str, Any]] = []
                while k := merge_count([int(s["n"]) for s in segs]):
                    merged = self._merge(segs[-k:], sum(int(s["n"]) for s in segs[:-k]))
                    if merged is None:
                        break
                    old += segs[-k:]
                    segs[-k:] = [merged]
                    written.append(merged["dir"])
                self._commit(bank_id, erasures, segs)
                written.clear()
                for s in old:
                    shutil.rmtree(self.dir / s["dir"], ignore_errors=True)
            self.error = None
            return True
        except OSError as e:
            self.error = f"{self.dir}: {e.strerror or e}"
            return False
        finally:
            for name in written:  # written but never committed: no manifest names them
                _scrub(self.dir / name)

    def _merge(self, segs: list[dict[str, Any]], start: int) -> dict[str, Any] | None:
        """The segment of the rows of the consecutive segments ``segs`` (the first one's vectors
        from row ``start`` of ``vectors.f32``), written; ``None`` when one of them is damaged."""
        parts: list[Rows] = []
        try:
            for s in segs:
                parts.append(self._checked(s, start + sum(p.n for p in parts)))
        except (ValueError, KeyError, TypeError, IndexError):
            return None
        row = self.spec.dim * 4
        n = sum(p.n for p in parts)
        vectors = _digests(_pieces(self.dir / VECTORS, start * row, n * row))
        return self._write(merge_rows(parts), vectors, str(segs[-1]["stamp"]))

    def drop_from(self, seq: int, bank_id: str, erasures: int) -> None:
        """After the erase that made the bank's erase count ``erasures``: scrub every segment
        holding a row with sequence number ≥ ``seq``, and every folder no manifest lists (a
        crashed write's), and record the rest as valid for ``erasures``. An index that was not
        valid just before this erase (of another bank, or older than an erase it did not see)
        is scrubbed whole."""
        if self.readonly or not self.dir.exists():
            return
        with self._locked():
            m = self._manifest()
            if m is None or m.get("bank_id") != bank_id or int(m.get("erasures", -1)) != erasures - 1:
                self._scrub_all(m)
                return
            keep = [s for s in m["segments"] if int(s["hi"]) < seq]
            drop = [s for s in m["segments"] if int(s["hi"]) >= seq]
            self._commit(bank_id, erasures, keep)
            self._scrub_sidecars()  # it holds a compressed copy of every vector: rebuilt by the next write
            self._zero_vectors(sum(int(s["n"]) for s in keep), int(m["spec"]["dim"]))
            for s in drop:
                _scrub(self.dir / s["dir"])
            self._scrub_orphans(keep, zero=True)

    def tidy(self) -> None:
        """Remove what a crashed write left (a writable open): every ``tmp-seg-*`` folder
        (overwritten with zeros, then deleted: it may hold any fact's text), manifest drafts, and
        the segment folders no manifest lists (deleted; their rows are in SQLite and, while a
        reader maps them, stay readable to it). Skipped while another writer holds the folder."""
        if self.readonly or not self.dir.is_dir():
            return
        with self._locked(wait=False) as got:
            if got:
                m = self._manifest()
                self._scrub_orphans(None if m is None else m["segments"], zero=False)

    def _scrub_orphans(self, listed: list[dict[str, Any]] | None, zero: bool) -> None:
        """Scrub every ``tmp-seg-*`` folder and manifest draft; and every segment folder not in
        ``listed`` (when given) — overwritten with zeros first when ``zero``, else deleted."""
        for p in [*self.dir.glob("tmp-seg-*"), *self.dir.glob("manifest.*.tmp")]:
            if p.is_dir():
                _scrub(p)
            else:
                _zero_file(p)
                with contextlib.suppress(FileNotFoundError):
                    os.remove(p)
        if listed is None:
            return
        names = {str(s["dir"]) for s in listed}
        for p in self.dir.glob("seg-*"):
            if p.name in names:
                continue
            if zero:
                _scrub(p)
            else:
                shutil.rmtree(p, ignore_errors=True)

    def _put_vectors(self, start: int, vectors: np.ndarray) -> list[str]:
        """Write ``vectors`` as rows ``start …`` of ``vectors.f32`` (after the indexed rows;
        whatever a crashed write left there is overwritten, never truncated: readers map it).
        Returns the :func:`vector_digests` of the bytes written."""
        v = np.ascontiguousarray(vectors, dtype="<f4")
        if v.shape[1:] != (self.spec.dim,):
            raise ValueError(f"vectors of shape {v.shape}, expected (n, {self.spec.dim})")
        path = self.dir / VECTORS
        data = v.tobytes()
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            os.pwrite(fd, data, start * self.spec.dim * 4)
            os.fsync(fd)
        finally:
            os.close(fd)
        return vector_digests(data)

    def _zero_vectors(self, start: int, dim: int) -> None:
        """Overwrite rows ``start …`` (of ``dim`` floats) of ``vectors.f32``, to its end, with zeros, synced."""
        path = self.dir / VECTORS
        try:
            fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW)  # a symbolic link is never followed
        except FileNotFoundError:
            return
        except OSError:  # a link (ELOOP) or not openable: removed, never written through
            with contextlib.suppress(OSError):
                if path.is_symlink():
                    os.unlink(path)
            return
        offset = start * dim * 4
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return
            size = st.st_size
            chunk = b"\0" * (1 << 20)
            while offset < size:
                offset += os.pwrite(fd, chunk[: min(len(chunk), size - offset)], offset)
            os.fsync(fd)
        finally:
            os.close(fd)

    def _scrub_sidecars(self) -> None:
        """Overwrite with zeros and delete every file of the folder that is not the index's own
        (manifest, its drafts, ``vectors.f32``, the lock, segments): the files another layer
        built over the index's rows — the approximate index (:class:`frcore.bank.search.ApproximateFiles`)
        — hold a copy of every vector, and an erase removes them without knowing what they are."""
        own = ("manifest.json", VECTORS, "lock")
        with os.scandir(self.dir) as entries:
            for e in list(entries):
                name = e.name
                if name in own or name.startswith(("seg-", "tmp-seg-", "manifest.")):
                    continue
                if e.is_symlink() or not e.is_dir(follow_symlinks=False):
                    _zero_file(Path(e.path))
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(e.path)
                else:
                    _scrub(Path(e.path))

    def _commit(self, bank_id: str, erasures: int, segs: list[dict[str, Any]]) -> None:
        m = {
            "format": FORMAT,
            "bank_id": bank_id,
            "erasures": erasures,
            "spec": self.spec.identity(),
            "segments": segs,
            "vector_rows": sum(int(s["n"]) for s in segs),
        }
        tmp = self.dir / f"manifest.{secrets.token_hex(4)}.tmp"
        tmp.write_text(json.dumps(m, indent=1), "utf-8")
        os.replace(tmp, self.dir / "manifest.json")

    def _scrub_all(self, m: dict[str, Any] | None) -> None:
        self._scrub_sidecars()
        for s in (m or {}).get("segments") or []:
            _scrub(self.dir / s["dir"])
        for p in [*self.dir.glob("seg-*"), *self.dir.glob("tmp-seg-*")]:  # also written but never committed
            _scrub(p)
        self._zero_vectors(0, 0)
        with contextlib.suppress(FileNotFoundError):
            os.remove(self.dir / VECTORS)
        with contextlib.suppress(FileNotFoundError):
            os.remove(self.dir / "manifest.json")

    def _write(self, rows: Rows, vectors: list[str], stamp: str) -> dict[str, Any]:
        """Write ``rows`` as a segment folder; returns its manifest entry, with the :func:`digest`
        of each file, ``vectors``, those of its rows of ``vectors.f32`` (:func:`vector_digests`),
        and ``stamp``, the :func:`row_stamp` of its last row."""
        name = f"seg-{rows.lo:012d}-{rows.hi:012d}-{secrets.token_hex(4)}"
        tmp = self.dir / f"tmp-{name}"
        tmp.mkdir()
        sums: dict[str, str] = {}
        try:

            def put(file: str, data: bytes) -> None:
                (tmp / file).write_bytes(data)
                sums[file] = digest(data)

            coded = {k: encode(rows.cols[k]) for k in CODED_COLUMNS}
            for key, a in _arrays(rows, coded).items():
                buf = io.BytesIO()
                np.save(buf, np.ascontiguousarray(a), allow_pickle=False)
                put(f"{key}.npy", buf.getvalue())
            strings: dict[str, Any] = {k: list(rows.cols[k].tolist()) for k in STRING_COLUMNS}
            strings |= {"links": list(rows.links), "lo": rows.lo, "hi": rows.hi, "values": {}}
            for k in CODED_COLUMNS:
                strings["values"][k] = coded[k][0]
            put("strings.json", json.dumps(strings, ensure_ascii=False).encode("utf-8"))
            p = rows.postings
            put("vocab.json", _json_list(sorted(p.vocab, key=p.vocab.__getitem__)))
            put("raw.json", rows.raw_json())
            for f in tmp.iterdir():
                with open(f, "rb") as fh:
                    os.fsync(fh.fileno())
            os.rename(tmp, self.dir / name)
        except BaseException:
            _scrub(tmp)
            raise
        return {
            "dir": name,
            "lo": rows.lo,
            "hi": rows.hi,
            "n": rows.n,
            "files": sums,
            "vectors": vectors,
            "stamp": stamp,
        }

    def scrub(self) -> None:
        """Overwrite and delete the whole index (it is rebuilt from SQLite when next needed)."""
        if self.readonly or not self.dir.exists():
            return
        with self._locked():
            self._scrub_all(self._manifest())


def _arrays(rows: Rows, coded: dict[str, tuple[list, np.ndarray]]) -> dict[str, np.ndarray]:
    """The arrays a segment of ``rows`` holds (:data:`SEGMENT_ARRAYS`), by name (``coded``: the
    :func:`encode` of each coded column)."""
    p = rows.postings
    out = {"seq": rows.seq, **{k: rows.cols[k] for k in NUMERIC_COLUMNS}, "recorded": rows.recorded}
    out |= {f"life_{k}": rows.life[k] for k in LIFE_COLUMNS}
    out |= {"post_indptr": p.indptr, "post_rows": p.rows, "post_tf": p.tf, "post_length": p.length}
    out |= {f"code_{k}": coded[k][1] for k in CODED_COLUMNS}
    return out


def _pieces(path: Path, offset: int, length: int) -> list[tuple[Path, int, int | None]]:
    """The :data:`VECTOR_PIECE` pieces of ``length`` bytes of ``path`` from ``offset``, as
    (path, offset, length) jobs of :func:`_digests`."""
    return [(path, offset + i, min(VECTOR_PIECE, length - i)) for i in range(0, length, VECTOR_PIECE)]


def _digest_of(path: Path, offset: int, length: int | None) -> str:
    """The :func:`digest` of ``length`` bytes of the file ``path`` from ``offset`` (``None``: the
    whole file); ``ValueError`` when the file ends before."""
    with open(path, "rb") as fh:
        if length is None:
            return digest(fh.read())
        if os.fstat(fh.fileno()).st_size < offset + length:
            raise ValueError(f"{path}: ends before byte {offset + length}")
        if length == 0:
            return digest(b"")
        # hashed where the page cache holds it (mapped), not copied out first
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m, memoryview(m) as view:
            with view[offset : offset + length] as piece:
                return digest(piece)


def _digests(jobs: list[tuple[Path, int, int | None]]) -> list[str]:
    """:func:`_digest_of` of every job, in a few threads (hashing releases the GIL)."""
    if len(jobs) <= 1:
        return [_digest_of(*j) for j in jobs]
    with concurrent.futures.ThreadPoolExecutor(min(8, os.cpu_count() or 1), "frcore-verify") as pool:
        return list(pool.map(lambda j: _digest_of(*j), jobs))


def _check_postings(d: Path, n: int, arr: Callable[[str], np.ndarray]) -> None:
    """``ValueError`` unless a segment's postings are of its ``n`` rows: ``post_indptr`` rising from
    0 to the number of postings, every posting's row in [0, n), one length per row."""
    indptr, rows, tf = arr("post_indptr"), arr("post_rows"), arr("post_tf")
    if (
        indptr.ndim != 1
        or indptr.size == 0
        or int(indptr[0]) != 0
        or int(indptr[-1]) != rows.size
        or rows.size != tf.size
        or bool(np.any(np.diff(indptr) < 0))
        or (rows.size and (int(rows.min()) < 0 or int(rows.max()) >= n))
        or arr("post_length").shape != (n,)
    ):
        raise ValueError(f"{d}: postings not of its {n} rows")


def _scrub(d: Path) -> None:
    """Overwrite every regular file of ``d`` with zeros (synced), then delete ``d``. A symbolic
    link — ``d`` itself or an entry of it — is removed, never followed: nothing outside the bank's
    index folder is written."""
    if d.is_symlink():
        with contextlib.suppress(FileNotFoundError):
            os.unlink(d)
        return
    if not d.is_dir():
        return
    for f in d.iterdir():
        if f.is_symlink():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f)
        else:
            _zero_file(f)
    shutil.rmtree(d, ignore_errors=True)


def _zero_file(f: Path) -> None:
    """Overwrite the regular file ``f`` with zeros, synced; nothing when it cannot be opened, is
    not a regular file, or is a symbolic link (never followed: its target is not the bank's)."""
    try:
        fd = os.open(f, os.O_RDWR | os.O_NOFOLLOW)
    except OSError:
        return
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return
        chunk = b"\0" * (1 << 20)
        left = st.st_size
        while left > 0:
            left -= os.write(fd, chunk[: min(left, len(chunk))])
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def merge_rows(parts: Sequence[Rows]) -> Rows:
    """The rows of ``parts`` (consecutive ranges) as one."""
    from ..search import concat_postings

    raws = [p.raw_json().strip() for p in parts]
    inner = [r[1:-1].strip() for r in raws]
    return Rows(
        lo=parts[0].lo,
        hi=parts[-1].hi,
        seq=np.concatenate([p.seq for p in parts]),
        cols={k: np.concatenate([p.cols[k] for p in parts]) for k in parts[0].cols},
        recorded=np.concatenate([p.recorded for p in parts]),
        life={k: np.concatenate([p.life[k] for p in parts]) for k in LIFE_COLUMNS},
        links=[x for p in parts for x in p.links],
        vectors=np.zeros((0, parts[0].vectors.shape[1]), dtype=np.float32),  # kept in vectors.f32
        postings=concat_postings([p.postings for p in parts]),
        raw=b"[" + b",".join(x for x in inner if x) + b"]",
    )
