"""FR-Bank's persistent store: append-only, bi-temporal fact edges in SQLite (stdlib ``sqlite3``).

Layout (schema version :data:`SCHEMA_VERSION`, recorded in ``meta``):

- ``edges``: one row per fact edge (id, text, JSON categories, said_at, event_time, slot,
  confidence, numeric, JSON links, session, kind, speaker, quarantined, ``recorded_at`` = the
  transaction time, batch number). Rows are never UPDATEd (a trigger refuses it); a row is
  DELETEd only by :meth:`Store.erase` (a trigger refuses any other delete).
- ``transitions``: lifecycle transitions (edge id, kind ``retract | erase``, effective time,
  recorded_at, reason), append-only (UPDATE and DELETE refused by triggers).
- ``embeddings``: a cache of float32 vectors per (model, edge id).
- ``audit``: what :meth:`Store.erase` leaves behind: id, a SHA-256 of the id, erased_at, reason —
  never the text.

Times are stored as fixed-width ISO strings (naive UTC, microseconds), so SQL string order is time
order.

Durability: WAL journal with ``synchronous=FULL``: every commit fsyncs the WAL before
:meth:`Store.add_facts` returns, so an acknowledged batch survives a crash of the process *or* of
the machine (``NORMAL`` would survive a process crash but could lose the last commits on power
loss). A batch is one transaction: after a crash it is either wholly there or wholly absent.

Erasure: ``secure_delete=ON`` zeroes freed content, then the WAL is checkpointed and truncated and
the file VACUUMed (and the WAL truncated again), so the erased text and embedding bytes leave
both the database file and its ``-wal`` file.

Concurrency: one :class:`Store` may be shared by threads (a lock serialises its connection);
separate connections (threads or processes) may read while one writes — a snapshot reads inside
one read transaction, so it always sees whole batches.
"""

from __future__ import annotations

import collections
import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ._facts import FactRecord, looks_like_instruction, parse_fact, to_utc_naive
from ._lifecycle import (
    INVISIBLE,
    LifecycleColumns,
    Snapshot,
    Transition,
    concat_columns,
    edge_columns,
    retracted_by_transitions,
    snapshot_from_columns,
    states_from_columns,
)

SCHEMA_VERSION = 1
#: Snapshots kept in the per-store cache (keyed by at, known_at, include_quarantined, version).
SNAPSHOT_CACHE_SIZE = 16

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS edges(
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    text TEXT NOT NULL,
    categories TEXT NOT NULL,
    said_at TEXT NOT NULL,
    event_time TEXT,
    slot TEXT,
    confidence REAL NOT NULL,
    numeric INTEGER NOT NULL,
    links TEXT NOT NULL,
    session INTEGER,
    kind TEXT NOT NULL,
    speaker TEXT,
    quarantined INTEGER NOT NULL,
    recorded_at TEXT NOT NULL,
    batch INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS transitions(
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    edge_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    effective_at TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    reason TEXT
);
CREATE TABLE IF NOT EXISTS embeddings(
    model TEXT NOT NULL,
    id TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, id)
);
CREATE TABLE IF NOT EXISTS audit(
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    edge_id TEXT NOT NULL,
    id_sha256 TEXT NOT NULL,
    action TEXT NOT NULL,
    erased_at TEXT NOT NULL,
    reason TEXT
);
CREATE TABLE IF NOT EXISTS erase_guard(id TEXT PRIMARY KEY);
CREATE TRIGGER IF NOT EXISTS edges_append_only BEFORE UPDATE ON edges
    BEGIN SELECT RAISE(ABORT, 'edges are append-only'); END;
CREATE TRIGGER IF NOT EXISTS edges_delete_only_by_erase BEFORE DELETE ON edges
    WHEN NOT EXISTS (SELECT 1 FROM erase_guard WHERE id = OLD.id)
    BEGIN SELECT RAISE(ABORT, 'edges are deleted only by erase'); END;
CREATE TRIGGER IF NOT EXISTS transitions_no_update BEFORE UPDATE ON transitions
    BEGIN SELECT RAISE(ABORT, 'transitions are append-only'); END;
CREATE TRIGGER IF NOT EXISTS transitions_no_delete BEFORE DELETE ON transitions
    BEGIN SELECT RAISE(ABORT, 'transitions are append-only'); END;
CREATE INDEX IF NOT EXISTS edges_recorded_at ON edges(recorded_at);
CREATE INDEX IF NOT EXISTS transitions_edge ON transitions(edge_id);
"""

_EDGE_COLUMNS = (
    "id, text, categories, said_at, event_time, slot, confidence, numeric, links, session, "
    "kind, speaker, quarantined, recorded_at"
)


@dataclass(frozen=True)
class _Loaded:
    """The store's contents as read at one version (see :meth:`Store._load`)."""

    version: int
    max_seq: int
    max_tseq: int
    edges: list[FactRecord]
    recorded: np.ndarray  # (n,) datetime64[us] transaction times
    cols: dict[str, Any]
    transitions: list[Transition]
    #: derived once per version, on first use: {id: position} and the lifecycle columns
    derived: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def lifecycle(self) -> tuple[dict[str, int], LifecycleColumns]:
        got = self.derived.get("lifecycle")
        if got is None:
            index = {e.id: i for i, e in enumerate(self.edges)}  # ids are unique (UNIQUE column)
            got = self.derived["lifecycle"] = (index, LifecycleColumns.from_edges(self.edges, index))
        return got


class StoreError(ValueError):
    """A store operation refused (unknown id, duplicate id, dangling link, bad vector, ...)."""


def _ts(dt: datetime) -> str:
    """Naive-UTC datetime → fixed-width ISO string (sortable)."""
    return dt.isoformat(timespec="microseconds")


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _time(value: Any, name: str) -> datetime:
    return to_utc_naive(value, name, "store", None)


_decode = json.JSONDecoder().decode


def _row_to_record(row: Sequence[Any]) -> FactRecord:
    (fid, text, cats, said, event, slot, conf, numeric, links, session, kind, speaker, quar, _rec) = row
    return FactRecord(
        id=fid,
        text=text,
        categories=_decode(cats),
        said_at=datetime.fromisoformat(said),
        event_time=None if event is None else datetime.fromisoformat(event),
        slot=slot,
        confidence=conf,
        numeric=bool(numeric),
        links={} if links == "{}" else {k: tuple(v) for k, v in _decode(links).items()},
        session=session,
        kind=kind,
        speaker=speaker,
        quarantined=bool(quar),
    )


class Store:
    """A persistent, append-only, bi-temporal FR-Bank store (see the module docstring).

    Open with :meth:`Store.open`; use as a context manager or call :meth:`close`.
    """

    def __init__(self, conn: sqlite3.Connection, path: str) -> None:
        self._conn = conn
        self.path = path
        self._lock = threading.RLock()
        self._snap_cache: collections.OrderedDict[tuple, Snapshot] = collections.OrderedDict()
        self._load_cache: _Loaded | None = None

    # ------------------------------------------------------------------ lifecycle of the handle

    @classmethod
    def open(cls, path: str | Path, timeout: float = 30.0) -> "Store":
        """Open (creating on first use) the store at ``path``; ``":memory:"`` for a scratch one."""
        path = str(path)
        conn = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
        try:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if mode.lower() != "wal" and path != ":memory:":
                raise StoreError(f"path {path!r}: could not enable WAL journal (got {mode!r})")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA secure_delete=ON")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("BEGIN IMMEDIATE")
            for stmt in _SCHEMA.split(";\n"):
                if stmt.strip():
                    conn.execute(stmt)
            row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if row is None:
                conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                conn.execute("INSERT INTO meta VALUES ('version', '0')")
                conn.execute("INSERT INTO meta VALUES ('created_at', ?)", (_ts(_now()),))
            elif int(row[0]) != SCHEMA_VERSION:
                raise StoreError(f"path {path!r}: schema version {row[0]} is not the supported {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            conn.close()
            raise
        return cls(conn, path)

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None  # type: ignore[assignment]

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"store {self.path!r}: closed")
        return self._conn

    def _write(self):
        """Context for one write transaction that bumps the version counter."""
        store = self

        class _Tx:
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
                        store.conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='version'")
                        store.conn.execute("COMMIT")
                    else:
                        store.conn.execute("ROLLBACK")
                finally:
                    store._lock.release()
                return False

        return _Tx()

    # ------------------------------------------------------------------ writes

    def add_facts(self, facts: Iterable[FactRecord | Mapping[str, Any]], recorded_at: datetime | None = None) -> list[str]:
        """Append a batch of facts in one transaction (all or nothing); returns their ids.

        Each fact is validated (:func:`parse_fact`); a bad fact, an id already stored or repeated
        in the batch, or a link to an id neither stored nor in the batch aborts the whole batch with
        a :class:`FactError` / :class:`StoreError` naming it. Instruction-like text
        (:func:`looks_like_instruction`) is stored quarantined. ``recorded_at`` is the
        transaction time (default: now, UTC).
        """
        rec_at = _now() if recorded_at is None else _time(recorded_at, "recorded_at")
        records: list[FactRecord] = []
        seen: dict[str, int] = {}
        for i, f in enumerate(facts):
            r = parse_fact(f, f"facts[{i}]")
            if r.id in seen:
                raise StoreError(f"facts[{i}]: fact {r.id!r}: field 'id': duplicate in batch (also facts[{seen[r.id]}])")
            seen[r.id] = i
            records.append(r)
        if not records:
            return []
        rec_s = _ts(rec_at)
        with self._write() as conn:
            batch = conn.execute("SELECT COALESCE(MAX(batch), 0) + 1 FROM edges").fetchone()[0]
            ids = [r.id for r in records]
            existing = self._existing(conn, ids)
            if existing:
                i = seen[next(iter(sorted(existing, key=seen.__getitem__)))]
                raise StoreError(f"facts[{i}]: fact {records[i].id!r}: field 'id': already stored")
            targets = {t for r in records for ts in r.links.values() for t in ts} - seen.keys()
            found = self._existing(conn, sorted(targets))
            for i, r in enumerate(records):
                for kind, ts in r.links.items():
                    for t in ts:
                        if t not in seen and t not in found:
                            raise StoreError(f"facts[{i}]: fact {r.id!r}: field 'links': {kind} target {t!r} is neither stored nor in the batch")
            rows = [
                (
                    r.id, r.text, json.dumps(r.categories, separators=(",", ":")), _ts(r.said_at),
                    None if r.event_time is None else _ts(r.event_time), r.slot, r.confidence,
                    int(bool(r.numeric)), json.dumps({k: list(v) for k, v in r.links.items()}, separators=(",", ":")),
                    r.session, r.kind, r.speaker, int(r.quarantined or looks_like_instruction(r.text)),
                    rec_s, batch,
                )
                for r in records
            ]
            conn.executemany(f"INSERT INTO edges ({_EDGE_COLUMNS}, batch) VALUES ({','.join('?' * 15)})", rows)
        return ids

    @staticmethod
    def _existing(conn: sqlite3.Connection, ids: Sequence[str]) -> set[str]:
        out: set[str] = set()
        for k in range(0, len(ids), 500):
            chunk = ids[k : k + 500]
            q = f"SELECT id FROM edges WHERE id IN ({','.join('?' * len(chunk))})"
            out.update(r[0] for r in conn.execute(q, chunk))
        return out

    def _require(self, conn: sqlite3.Connection, edge_id: str, what: str) -> None:
        if not isinstance(edge_id, str) or conn.execute("SELECT 1 FROM edges WHERE id=?", (edge_id,)).fetchone() is None:
            raise StoreError(f"{what}: edge_id {edge_id!r}: no such edge")

    def retract(self, edge_id: str, at: datetime | None = None, reason: str | None = None, recorded_at: datetime | None = None) -> None:
        """Record a retraction of ``edge_id`` effective at valid time ``at`` (default: the
        transaction time). The edge stays stored, masked from then on."""
        rec_at = _now() if recorded_at is None else _time(recorded_at, "recorded_at")
        eff = rec_at if at is None else _time(at, "at")
        with self._write() as conn:
            self._require(conn, edge_id, "retract")
            conn.execute(
                "INSERT INTO transitions (edge_id, kind, effective_at, recorded_at, reason) VALUES (?, 'retract', ?, ?, ?)",
                (edge_id, _ts(eff), _ts(rec_at), reason),
            )

    def erase(self, edge_id: str, reason: str | None = None) -> dict[str, Any]:
        """Physically delete an edge's text and embeddings; keep an audit record (no text).

        After the delete commits, the WAL is checkpointed and truncated and the file VACUUMed, so
        the bytes are gone from the database and ``-wal`` files. Raises :class:`StoreError` if the
        purge cannot complete (e.g. a long reader holds the WAL; call :meth:`purge` again).
        Returns the audit record.
        """
        erased_at = _now()
        digest = hashlib.sha256(edge_id.encode("utf-8")).hexdigest() if isinstance(edge_id, str) else ""
        with self._write() as conn:
            self._require(conn, edge_id, "erase")
            conn.execute("INSERT INTO erase_guard VALUES (?)", (edge_id,))
            conn.execute("DELETE FROM edges WHERE id=?", (edge_id,))
            conn.execute("DELETE FROM erase_guard WHERE id=?", (edge_id,))
            conn.execute("DELETE FROM embeddings WHERE id=?", (edge_id,))
            conn.execute(
                "INSERT INTO transitions (edge_id, kind, effective_at, recorded_at, reason) VALUES (?, 'erase', ?, ?, ?)",
                (edge_id, _ts(erased_at), _ts(erased_at), reason),
            )
            conn.execute(
                "INSERT INTO audit (edge_id, id_sha256, action, erased_at, reason) VALUES (?, ?, 'erase', ?, ?)",
                (edge_id, digest, _ts(erased_at), reason),
            )
        self.purge()
        return {"edge_id": edge_id, "id_sha256": digest, "action": "erase", "erased_at": _ts(erased_at), "reason": reason}

    def purge(self, timeout: float = 10.0) -> None:
        """Checkpoint + truncate the WAL, VACUUM, truncate again: freed bytes leave both files."""
        deadline = time.monotonic() + timeout
        with self._lock:
            self._checkpoint(deadline)
            self.conn.execute("VACUUM")
            self._checkpoint(deadline)

    def _checkpoint(self, deadline: float) -> None:
        while True:
            busy, _log, _done = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if not busy:
                return
            if time.monotonic() > deadline:
                raise StoreError(f"store {self.path!r}: WAL checkpoint blocked by readers; erased bytes may remain in the -wal file until purge() succeeds")
            time.sleep(0.01)

    # ------------------------------------------------------------------ embedding cache

    def put_embeddings(self, model: str, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Cache one float32 vector per stored edge id for ``model`` (replacing older ones)."""
        if not isinstance(model, str) or not model:
            raise StoreError("put_embeddings: field 'model': expected a non-empty string")
        ids = list(ids)
        v = np.asarray(vectors)
        if v.ndim != 2 or v.shape[0] != len(ids):
            raise StoreError(f"put_embeddings: field 'vectors': expected shape ({len(ids)}, d), got {v.shape}")
        v = v.astype("<f4", copy=False)
        bad = ~np.isfinite(v).all(axis=1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise StoreError(f"put_embeddings: field 'vectors': non-finite value in row {i} (id {ids[i]!r})")
        with self._write() as conn:
            row = conn.execute("SELECT dim FROM embeddings WHERE model=? LIMIT 1", (model,)).fetchone()
            if row is not None and row[0] != v.shape[1]:
                raise StoreError(f"put_embeddings: field 'vectors': model {model!r} stores dimension {row[0]}, got {v.shape[1]}")
            found = self._existing(conn, ids)
            for i, fid in enumerate(ids):
                if fid not in found:
                    raise StoreError(f"put_embeddings: ids[{i}]: edge {fid!r} is not stored")
            conn.executemany(
                "INSERT OR REPLACE INTO embeddings (model, id, dim, vector) VALUES (?, ?, ?, ?)",
                [(model, fid, v.shape[1], v[i].tobytes()) for i, fid in enumerate(ids)],
            )

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

    # ------------------------------------------------------------------ reads

    def version(self) -> int:
        """The write counter: bumps on every committed write (by any connection)."""
        with self._lock:
            return int(self.conn.execute("SELECT value FROM meta WHERE key='version'").fetchone()[0])

    def count(self, include_quarantined: bool = True) -> int:
        """Number of stored (not erased) edges."""
        q = "SELECT COUNT(*) FROM edges" + ("" if include_quarantined else " WHERE quarantined=0")
        with self._lock:
            return int(self.conn.execute(q).fetchone()[0])

    def _load(self) -> "_Loaded":
        """All edges (insertion order) with their recorded_at and column arrays, and all
        transitions, read in one read transaction (a consistent cut: whole batches only).

        Cached per store version; after appends only the new rows are read (rows are never
        updated, so the cache stays exact unless an erase removed a row — then it reloads)."""
        with self._lock:
            conn = self.conn
            conn.execute("BEGIN")
            try:
                version = int(conn.execute("SELECT value FROM meta WHERE key='version'").fetchone()[0])
                old = self._load_cache
                if old is not None and old.version == version:
                    return old
                count = int(conn.execute("SELECT COUNT(*) FROM edges").fetchone()[0])
                since = 0 if old is None else old.max_seq
                rows = conn.execute(f"SELECT seq, {_EDGE_COLUMNS} FROM edges WHERE seq > ? ORDER BY seq", (since,)).fetchall()
                if old is not None and len(old.edges) + len(rows) != count:
                    old, since = None, 0
                    rows = conn.execute(f"SELECT seq, {_EDGE_COLUMNS} FROM edges ORDER BY seq").fetchall()
                tsince = 0 if old is None else old.max_tseq
                trows = conn.execute(
                    "SELECT seq, edge_id, kind, effective_at, recorded_at, reason FROM transitions WHERE seq > ? ORDER BY seq",
                    (tsince,),
                ).fetchall()
            finally:
                conn.execute("COMMIT")
        new_edges = [_row_to_record(r[1:]) for r in rows]
        new_rec = np.array([r[14] for r in rows], dtype="datetime64[us]")
        new_cols = edge_columns(new_edges)
        new_trs = [Transition(e, k, datetime.fromisoformat(eff), datetime.fromisoformat(rec), why) for _s, e, k, eff, rec, why in trows]
        if old is None:
            edges, recorded, cols, trs = new_edges, new_rec, new_cols, new_trs
        else:
            edges = old.edges + new_edges
            recorded = np.concatenate([old.recorded, new_rec])
            cols = concat_columns(old.cols, new_cols)
            trs = old.transitions + new_trs
        loaded = _Loaded(
            version=version,
            max_seq=rows[-1][0] if rows else (0 if old is None else old.max_seq),
            max_tseq=trows[-1][0] if trows else tsince,
            edges=edges,
            recorded=recorded,
            cols=cols,
            transitions=trs,
        )
        with self._lock:
            self._load_cache = loaded
        return loaded

    def edges(self, known_at: datetime | None = None, include_quarantined: bool = True) -> list[FactRecord]:
        """Stored edges in insertion order, optionally only those recorded by ``known_at``."""
        loaded = self._load()
        edges = loaded.edges
        if known_at is not None:
            k = np.datetime64(_time(known_at, "known_at"), "us")
            edges = [e for e, r in zip(edges, loaded.recorded <= k) if r]
        if not include_quarantined:
            edges = [e for e in edges if not e.quarantined]
        return list(edges)

    def transitions(self, known_at: datetime | None = None) -> list[Transition]:
        """Recorded lifecycle transitions, optionally only those recorded by ``known_at``."""
        trs = self._load().transitions
        if known_at is not None:
            k = _time(known_at, "known_at")
            trs = [t for t in trs if t.recorded_at <= k]
        return list(trs)

    def snapshot(self, at: datetime, known_at: datetime | None = None, include_quarantined: bool = False) -> Snapshot:
        """:func:`frcore.bank._lifecycle.snapshot` over this store, cached per
        (at, known_at, include_quarantined, store version)."""
        at_n = _time(at, "at")
        known_n = None if known_at is None else _time(known_at, "known_at")
        loaded = self._load()
        key = (at_n, known_n, bool(include_quarantined), loaded.version)
        with self._lock:
            hit = self._snap_cache.get(key)
            if hit is not None:
                self._snap_cache.move_to_end(key)
                return hit
        mask = np.ones(len(loaded.edges), dtype=bool)
        trs = loaded.transitions
        if known_n is not None:
            mask &= loaded.recorded <= np.datetime64(known_n, "us")
            trs = [t for t in trs if t.recorded_at <= known_n]
        if not include_quarantined:
            mask &= ~loaded.cols["quarantined"]
        idx = np.flatnonzero(mask)
        with self._lock:  # the per-version derivation cache is shared by threads
            index, life = loaded.lifecycle()
        retract_rows = retracted_by_transitions(trs, at_n, index)
        if idx.size != len(loaded.edges):  # a subset: positions and links among its edges only
            local = np.full(len(loaded.edges), -1, dtype=np.int64)
            local[idx] = np.arange(idx.size)
            retract_rows = local[retract_rows]
            retract_rows = retract_rows[retract_rows >= 0]
            life = life.take(idx)
        state = states_from_columns(life, at_n, retract_rows)
        keep = state != INVISIBLE
        snap = snapshot_from_columns(loaded.cols, idx[keep], state[keep], at_n, known_n, loaded.version)
        with self._lock:
            self._snap_cache[key] = snap
            while len(self._snap_cache) > SNAPSHOT_CACHE_SIZE:
                self._snap_cache.popitem(last=False)
        return snap

    def audit_log(self) -> list[dict[str, Any]]:
        """Erasure audit records (no text): edge_id, id_sha256, action, erased_at, reason."""
        with self._lock:
            rows = self.conn.execute("SELECT edge_id, id_sha256, action, erased_at, reason FROM audit ORDER BY seq").fetchall()
        return [dict(zip(("edge_id", "id_sha256", "action", "erased_at", "reason"), r)) for r in rows]

    def export(self) -> dict[str, Any]:
        """Everything, JSON-able: schema version, edges (with recorded_at), transitions, audit."""
        loaded = self._load()
        trs = loaded.transitions
        out_edges = []
        for e, r in zip(loaded.edges, loaded.recorded.tolist()):
            d = e.to_json()
            d["recorded_at"] = _ts(r)
            out_edges.append(d)
        return {
            "schema_version": SCHEMA_VERSION,
            "version": self.version(),
            "edges": out_edges,
            "transitions": [
                {"edge_id": t.edge_id, "kind": t.kind, "effective_at": _ts(t.effective_at), "recorded_at": _ts(t.recorded_at), "reason": t.reason}
                for t in trs
            ],
            "audit": self.audit_log(),
        }

    def integrity_check(self) -> str:
        """``PRAGMA integrity_check`` ("ok" when sound)."""
        with self._lock:
            return str(self.conn.execute("PRAGMA integrity_check").fetchone()[0])


# ----------------------------------------------------------------------------- benchmark


def synthetic_facts(n: int, seed: int = 0, prefix: str = "bench") -> list[dict[str, Any]]:
    """``n`` synthetic fact dicts (random categories, slots, times; some links) for benchmarks."""
    from .._ontology import CATEGORY_NAMES

    rng = np.random.default_rng(seed)
    t0 = datetime(2024, 1, 1)
    out = []
    for i in range(n):
        c = rng.choice(len(CATEGORY_NAMES), size=2, replace=False)
        w = float(rng.uniform(0.5, 1.0))
        cats = {CATEGORY_NAMES[c[0]]: w, CATEGORY_NAMES[c[1]]: 1.0 - w} if w < 1.0 else {CATEGORY_NAMES[c[0]]: 1.0}
        said = t0 + timedelta(hours=float(rng.uniform(0, 24 * 500)))
        fact: dict[str, Any] = {
            "id": f"{prefix}.{i}",
            "text": f"synthetic fact number {i} about topic {int(rng.integers(1000))}",
            "categories": cats,
            "said_at": said.isoformat(),
            "slot": f"slot{int(rng.integers(max(1, n // 4)))}" if rng.random() < 0.5 else None,
            "confidence": 1.0 if rng.random() < 0.8 else 0.4,
            "session": int(rng.integers(35)),
        }
        if rng.random() < 0.2:
            fact["event_time"] = (said + timedelta(days=float(rng.uniform(-5, 60)))).isoformat()
        if i > 0 and rng.random() < 0.05:
            fact["links"] = {"retracts": f"{prefix}.{int(rng.integers(i))}"}
        out.append(fact)
    return out


def benchmark_ingest(n: int = 20_000, batch: int = 1_000, path: str | None = None) -> dict[str, float]:
    """Ingest ``n`` synthetic facts in batches of ``batch`` into a fresh store; report facts/s
    (validation + one fsynced transaction per batch) and the time of a first (uncached) and a
    second (cached) snapshot."""
    import os
    import tempfile

    facts = synthetic_facts(n)
    with tempfile.TemporaryDirectory() as tmp:
        p = path or os.path.join(tmp, "bench.db")
        with Store.open(p) as store:
            t = time.perf_counter()
            for k in range(0, n, batch):
                store.add_facts(facts[k : k + batch])
            ingest = time.perf_counter() - t
            at = datetime(2026, 1, 1)
            t = time.perf_counter()
            snap = store.snapshot(at)
            first = time.perf_counter() - t
            t = time.perf_counter()
            store.snapshot(at)
            cached = time.perf_counter() - t
            t = time.perf_counter()
            store.snapshot(datetime(2025, 1, 1))
            other_at = time.perf_counter() - t
    return {
        "n": n,
        "batch": batch,
        "ingest_s": ingest,
        "facts_per_s": n / ingest,
        "snapshot_first_s": first,
        "snapshot_cached_s": cached,
        "snapshot_other_at_s": other_at,
        "snapshot_rows": len(snap),
    }
