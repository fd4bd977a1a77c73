"""The store's handle: its connection and lock, the write transaction, and the reads that go straight to SQLite."""

from __future__ import annotations

import collections
import sqlite3
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ..._shown import shown
from ..records import (
    OWNER,
    Snapshot,
    injection_finding,
)
from ._common import (
    WRITER_PURGE_WAIT,
    StoreError,
    _mapped,
    _row_to_record,
    id_hash,
    iso_text,
)
from ._index import BankIndex
from ._schema import (
    SCHEMA_VERSION,
    _edge_columns,
    _has_releases,
    _Schema,
)

if TYPE_CHECKING:
    from ._loaded import _Loaded

_H = TypeVar("_H", bound="_Handle")


class _Handle(_Schema):
    """The connection, the write transaction and direct SQLite reads of :class:`Store`."""

    def __init__(
        self, conn: sqlite3.Connection, path: str, readonly: bool = False, schema: int = SCHEMA_VERSION
    ) -> None:
        self._conn = conn
        self.path = path
        #: opened with ``readonly=True``: every write raises :class:`StoreError` (kind ``readonly``)
        self.readonly = readonly
        self.schema = schema
        self._lock = threading.RLock()
        self._snap_cache: collections.OrderedDict[tuple, Snapshot] = collections.OrderedDict()
        self._load_cache: _Loaded | None = None
        self._recent: collections.OrderedDict[int, _Loaded] = collections.OrderedDict()  # last loads by version
        #: (name, dim) written by the next write transaction if the bank records no embedder yet
        self._embedder_to_record: tuple[str, int] | None = None
        self._index: BankIndex | None = None  # the bank's index beside its file (use_index)
        # (model, ids, vectors) this handle wrote in its last add's transaction: what the index
        # update would read back from SQLite for those rows (_Loading._extend_index)
        self._written: tuple[str, list[str], np.ndarray] | None = None

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None  # type: ignore[assignment]

    def __enter__(self: _H) -> _H:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"store {self.path!r}: closed")
        return self._conn

    def _write(self, finish_purge: bool = True):
        """Context for one write transaction that bumps the version counter; after it commits,
        a pending purge (an erase whose checkpoint was blocked) is finished if readers allow."""
        store = self
        if self.readonly:
            raise StoreError(f"{self.path}: opened read-only; nothing was written", "readonly")

        class _Tx:
            pending = False

            def __enter__(self_inner):
                store._lock.acquire()
                try:
                    store.conn.execute("BEGIN IMMEDIATE")
                except BaseException:
                    store._lock.release()
                    raise
                return store.conn

            def __exit__(self_inner, et, ev, tb):
                try:
                    if et is None:
                        conn = store.conn
                        if store._embedder_to_record is not None:
                            store._record_embedder(conn, store._embedder_to_record)
                        conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='version'")
                        self_inner.pending = (
                            conn.execute("SELECT 1 FROM meta WHERE key='purge_pending'").fetchone() is not None
                        )
                        conn.execute("COMMIT")
                        store._embedder_to_record = None
                    else:
                        try:
                            store.conn.execute("ROLLBACK")
                        except sqlite3.Error:
                            pass  # the failed statement already rolled the transaction back
                finally:
                    store._lock.release()
                if et is None and self_inner.pending and finish_purge:
                    try:
                        store.purge(timeout=WRITER_PURGE_WAIT)
                    except (sqlite3.Error, StoreError):
                        pass  # best effort: the purge stays pending
                return False

        return _Tx()

    def _require(self, conn: sqlite3.Connection, edge_id: str, what: str, user: str = OWNER) -> None:
        """``edge_id`` is a stored fact of ``user``; else "no such edge" (another user's fact is
        not said to exist)."""
        col = "user" if self.schema >= 3 else "''"
        row = (
            conn.execute(f"SELECT {col} FROM edges WHERE id=?", (edge_id,)).fetchone()
            if isinstance(edge_id, str)
            else None
        )
        if row is None or row[0] != user:
            whose = "" if user == OWNER else f" of user {shown(user)}"
            raise StoreError(f"{what}: edge_id {shown(edge_id)}: no such edge{whose}", "unknown_id")

    @staticmethod
    def _existing(conn: sqlite3.Connection, ids: Sequence[str]) -> set[str]:
        out: set[str] = set()
        for k in range(0, len(ids), 500):
            chunk = ids[k : k + 500]
            q = f"SELECT id FROM edges WHERE id IN ({','.join('?' * len(chunk))})"
            out.update(r[0] for r in conn.execute(q, chunk))
        return out

    def _owners(self, conn: sqlite3.Connection, ids: Sequence[str]) -> dict[str, str]:
        """{id: user} of the ids among ``ids`` that are stored."""
        out: dict[str, str] = {}
        col = "user" if self.schema >= 3 else "''"
        for k in range(0, len(ids), 500):
            chunk = ids[k : k + 500]
            q = f"SELECT id, {col} FROM edges WHERE id IN ({','.join('?' * len(chunk))})"
            out.update((r[0], r[1]) for r in conn.execute(q, chunk))
        return out

    @staticmethod
    def _check_vectors(model: Any, ids: Sequence[str], vectors: Any, what: str = "vectors") -> np.ndarray:
        """``vectors`` as (len(ids), d) little-endian float32, every value finite, or raise."""
        if not isinstance(model, str) or not model:
            raise StoreError(f"{what}: field 'model': expected a non-empty string")
        v = np.asarray(vectors)
        if v.ndim != 2 or v.shape[0] != len(ids):
            raise StoreError(f"{what}: field 'vectors': expected shape ({len(ids)}, d), got {v.shape}")
        v = v.astype("<f4", copy=False)
        bad = ~np.isfinite(v).all(axis=1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise StoreError(f"{what}: field 'vectors': non-finite value in row {i} (id {shown(ids[i])})")
        return v

    @staticmethod
    def _put_vectors(
        conn: sqlite3.Connection, model: str, ids: Sequence[str], v: np.ndarray, what: str = "vectors"
    ) -> None:
        row = conn.execute("SELECT dim FROM embeddings WHERE model=? LIMIT 1", (model,)).fetchone()
        if row is not None and row[0] != v.shape[1]:
            raise StoreError(f"{what}: field 'vectors': model {model!r} stores dimension {row[0]}, got {v.shape[1]}")
        conn.executemany(
            "INSERT OR REPLACE INTO embeddings (model, id, dim, vector) VALUES (?, ?, ?, ?)",
            [(model, fid, v.shape[1], v[i].tobytes()) for i, fid in enumerate(ids)],
        )

    @_mapped
    def recorded_embedder(self) -> tuple[str, int] | None:
        """The embedder (name, dimension) recorded for this bank, or ``None`` (not yet recorded)."""
        with self._lock:
            q = "SELECT key, value FROM meta WHERE key IN ('embedder', 'embedder_dim')"
            got = dict(self.conn.execute(q).fetchall())
        if "embedder" not in got:
            return None
        try:
            return got["embedder"], int(got.get("embedder_dim", 0))
        except ValueError:
            raise StoreError(
                f"{self.path}: a damaged FR-Bank: embedder_dim {got.get('embedder_dim')!r} is not a number", "corrupt"
            ) from None

    @_mapped
    def embedding_models(self) -> dict[str, int]:
        """The models (cache keys) that have stored vectors, with their dimension."""
        with self._lock:
            return {m: int(d) for m, d in self.conn.execute("SELECT model, MAX(dim) FROM embeddings GROUP BY model")}

    @_mapped
    def get_embeddings(self, model: str, ids: Sequence[str]) -> tuple[np.ndarray, list[str]]:
        """Cached vectors for ``ids``: an (n, d) float32 array aligned with ``ids`` (NaN rows
        for missing ones; d = 0 if the model has no vectors) and the list of missing ids."""
        ids = list(ids)
        found: list[str] = []
        blobs: list[bytes] = []
        with self._lock:
            conn = self.conn
            for k in range(0, len(ids), 500):
                chunk = ids[k : k + 500]
                q = f"SELECT id, vector FROM embeddings WHERE model=? AND id IN ({','.join('?' * len(chunk))})"
                for fid, blob in conn.execute(q, [model, *chunk]):
                    found.append(fid)
                    blobs.append(blob)
            row = conn.execute("SELECT dim FROM embeddings WHERE model=? LIMIT 1", (model,)).fetchone()
        d = 0 if row is None else int(row[0])
        out = np.full((len(ids), d), np.nan, dtype=np.float32)
        where = {fid: i for i, fid in enumerate(found)}
        src = np.fromiter((where.get(fid, -1) for fid in ids), dtype=np.int64, count=len(ids))
        hit = src >= 0
        if blobs:  # one buffer for every found vector (each stored with the model's dimension)
            out[hit] = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), d)[src[hit]]
        missing = [fid for fid, h in zip(ids, hit.tolist()) if not h]
        return out, missing

    @_mapped
    def all_embeddings(self, model: str) -> tuple[list[str], np.ndarray]:
        """Every cached vector of ``model``: (ids, (n, d) float32 matrix aligned with them),
        read in one pass in the order they were stored (what :meth:`get_embeddings` returns
        for those ids)."""
        with self._lock:
            conn = self.conn
            rows = conn.execute("SELECT id, vector FROM embeddings WHERE model=? ORDER BY rowid", (model,)).fetchall()
            row = conn.execute("SELECT dim FROM embeddings WHERE model=? LIMIT 1", (model,)).fetchone()
        d = 0 if row is None else int(row[0])
        if not rows:
            return [], np.zeros((0, d), dtype=np.float32)
        mat = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), d)
        return [r[0] for r in rows], mat.astype(np.float32, copy=False)

    @_mapped
    def version(self) -> int:
        """The write counter: bumps on every committed write (by any connection)."""
        with self._lock:
            return int(self.conn.execute("SELECT value FROM meta WHERE key='version'").fetchone()[0])

    @_mapped
    def count(self, include_quarantined: bool = True, *, user: str = OWNER) -> int:
        """Number of stored (not erased) edges of ``user``."""
        with self._lock:
            q = "SELECT COUNT(*) FROM edges WHERE " + ("user=?" if self.schema >= 3 else "? = ''")
            if not include_quarantined:
                q += " AND (quarantined=0" + (
                    " OR id IN (SELECT edge_id FROM releases))" if _has_releases(self.conn) else ")"
                )
            return int(self.conn.execute(q, (user,)).fetchone()[0])

    @_mapped
    def quarantine(self, include_released: bool = False, *, user: str = OWNER) -> list[dict[str, Any]]:
        """The facts of ``user`` held in quarantine (insertion order): ``id``, ``field`` and ``rule`` (what
        the detector finds in it now, :func:`frcore.bank.records._facts.injection_finding`; ``None`` if
        no rule fires any more), ``slot``, ``speaker``, ``text``, ``said_at``, ``recorded_at``;
        with ``include_released`` also those the owner released (``released_at`` set)."""
        with self._lock:
            conn = self.conn
            conn.execute("BEGIN")
            try:
                rows = [
                    row
                    for row in conn.execute(
                        f"SELECT {_edge_columns(self.schema)} FROM edges WHERE quarantined=1 ORDER BY seq"
                    ).fetchall()
                    if row[14] == user
                ]
                rel = {}
                if _has_releases(conn):
                    q = "SELECT edge_id, released_at, reason FROM releases ORDER BY seq DESC"
                    rel = {e: (t, why) for e, t, why in conn.execute(q)}
            finally:
                conn.execute("COMMIT")
        out = []
        for row in rows:
            r = _row_to_record(row)
            released = rel.get(r.id)
            if released is not None and not include_released:
                continue
            found = injection_finding(r)
            out.append(
                {
                    "id": r.id,
                    "field": None if found is None else found[0],
                    "rule": None if found is None else found[1],
                    "slot": r.slot,
                    "speaker": r.speaker,
                    "text": r.text,
                    "said_at": iso_text(r.said_at),
                    "recorded_at": row[13],
                    "released_at": None if released is None else released[0],
                    "release_reason": None if released is None else released[1],
                }
            )
        return out

    @_mapped
    def _releases(self) -> list[dict[str, Any]]:
        with self._lock:
            if not _has_releases(self.conn):
                return []
            rows = self.conn.execute("SELECT edge_id, released_at, reason FROM releases ORDER BY seq").fetchall()
        return [{"edge_id": e, "released_at": t, "reason": why} for e, t, why in rows]

    @_mapped
    def audit_log(self, *, user: str = OWNER) -> list[dict[str, Any]]:
        """Erasure audit records of the facts of ``user`` (no id, text, slot or speaker): id_hash
        (salted SHA-256 of the id, :func:`id_hash`), salt (hex), action, erased_at, reason.
        :meth:`was_erased` checks an id."""
        with self._lock:
            if self.schema == 1:  # a schema-1 bank opened read-only: its unsalted hashes, never its ids
                rows = self.conn.execute(
                    "SELECT id_sha256, '', action, erased_at, reason FROM audit WHERE ? = '' ORDER BY seq", (user,)
                ).fetchall()
            else:
                col = "user" if self.schema >= 3 else "''"
                rows = self.conn.execute(
                    f"SELECT id_hash, salt, action, erased_at, reason FROM audit WHERE {col} = ? ORDER BY seq", (user,)
                ).fetchall()
        return [dict(zip(("id_hash", "salt", "action", "erased_at", "reason"), r)) for r in rows]

    def was_erased(self, edge_id: str, *, user: str = OWNER) -> bool:
        """True if an audit record of ``user`` is the erasure of ``edge_id`` (its salted hash matches)."""
        for a in self.audit_log(user=user):
            salt = bytes.fromhex(a["salt"]) if a["salt"] else b""
            if id_hash(edge_id, salt) == a["id_hash"]:
                return True
        return False

    @_mapped
    def integrity_check(self) -> str:
        """``PRAGMA integrity_check`` ("ok" when sound)."""
        with self._lock:
            return str(self.conn.execute("PRAGMA integrity_check").fetchone()[0])

    @_mapped
    def purge(self, timeout: float = 10.0) -> dict[str, Any]:
        """Checkpoint the WAL into the database file and truncate it (waiting up to ``timeout``
        seconds for readers still reading older pages), then clear the pending-purge mark.

        Returns ``{"purged": True, "note": ...}`` when done: every byte freed by an erase
        (zeroed by ``secure_delete``) is gone from the database, ``-wal`` and ``-shm`` files;
        ``{"purged": False, "note": ...}`` when readers still block it (the purge stays
        pending; a later :meth:`purge` or write finishes it)."""
        if self.readonly:
            raise StoreError(f"{self.path}: opened read-only; cannot purge", "readonly")
        deadline = time.monotonic() + max(0.0, float(timeout))
        with self._lock:
            conn = self.conn
            pending = conn.execute("SELECT 1 FROM meta WHERE key='purge_pending'").fetchone() is not None
            old_busy = conn.execute("PRAGMA busy_timeout").fetchone()[0]
            try:
                while True:
                    left = deadline - time.monotonic()
                    conn.execute(f"PRAGMA busy_timeout={max(0, int(min(left, 1.0) * 1000))}")
                    busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
                    if not busy:
                        break
                    if time.monotonic() >= deadline:
                        what = "erased bytes may remain" if pending else "the WAL may hold older pages"
                        return {
                            "purged": False,
                            "note": (
                                f"purge pending: other connections are reading {self.path}, so {what} in the bank "
                                f"and its -wal file; `fr bank purge {self.path}` (or the next write) finishes it"
                            ),
                        }
                    time.sleep(0.01)
                if pending:
                    try:  # the bytes are gone; clearing the mark is best effort (a writer may hold the lock)
                        conn.execute("BEGIN IMMEDIATE")
                        conn.execute("DELETE FROM meta WHERE key='purge_pending'")
                        conn.execute("COMMIT")
                        conn.execute("PRAGMA busy_timeout=0")
                        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # only the meta page is left
                    except sqlite3.OperationalError as e:
                        if not str(getattr(e, "sqlite_errorname", "")).startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
                            raise
            finally:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                conn.execute(f"PRAGMA busy_timeout={int(old_busy)}")
        return {
            "purged": True,
            "note": "purged: no erased byte remains in the bank, -wal or -shm file"
            if pending
            else "nothing pending; WAL checkpointed",
        }

    @_mapped
    def purge_pending(self) -> bool:
        """True while an erase's purge waits for readers (see :meth:`purge`)."""
        with self._lock:
            return self.conn.execute("SELECT 1 FROM meta WHERE key='purge_pending'").fetchone() is not None
