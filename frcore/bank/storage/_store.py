"""FR-Bank's persistent store: append-only, bi-temporal fact edges in SQLite (stdlib ``sqlite3``).

Layout (schema version :data:`SCHEMA_VERSION`, recorded in ``meta``):

- ``edges``: one row per fact edge (id, text, JSON categories, said_at, event_time, slot,
  confidence, numeric, JSON links, session, kind, speaker, quarantined, ``recorded_at`` = the
  transaction time, batch number, ``user``: whose memory it is, ``""`` for the bank's owner).
  Rows are never UPDATEd and never DELETEd (triggers refuse it) except by :meth:`Store.erase`,
  which deletes the erased row and removes the erased id from the ``links`` of the rows that
  name it.
- ``edge_links``: the links as (src, kind, dst) rows, indexed both ways, so an erase finds the
  rows naming an id without scanning the bank.
- ``transitions``: lifecycle transitions (edge id, kind ``retract``, effective time,
  recorded_at, reason), append-only (UPDATE and DELETE refused by triggers, except by an erase,
  which deletes the erased edge's own transitions and removes its id from other reasons).
- ``embeddings``: float32 vectors per (model, edge id). :meth:`Store.add_facts` given an
  ``embed`` function writes a batch's facts and their vectors in **one** transaction.
- ``audit``: what :meth:`Store.erase` leaves behind: a salted SHA-256 of the id (with its
  salt), erased_at, the reason, the user whose fact it was — never the id, text, slot or speaker.
- ``releases``: the owner's releases of quarantined facts (edge id, released_at, reason),
  append-only (a release never UPDATEs the fact row); an erase removes the erased fact's release.
- ``meta``: schema_version, the write counter ``version``, ``created_at``, the erase and release
  counters, ``purge_pending``, and the bank's embedder (``embedder``, ``embedder_dim``).

Users: every fact belongs to a user (:data:`frcore.bank.records._facts.OWNER`, ``""``, the single
owner, when it names none). Every read and write takes ``user`` (default: the owner) and sees or
touches that user's facts only: snapshots (lifecycle derived among the user's facts, so a slot
is one user's), edges, transitions, export, audit, quarantine, count, retract, erase and release
(another user's id is "no such edge"). Links only name facts of the same user; ids are unique
across users.

Quarantine: a fact whose text, id, slot or speaker reads as an instruction to the model
(:func:`frcore.bank.records._facts.injection_finding`, run before any lock or transaction) is stored
with ``quarantined`` set: kept and exported, held out of snapshots (so of retrieval and of
lifecycle derivation) until :meth:`Store.release`. :meth:`Store.add_facts` reports each one
(:class:`Added`), :meth:`Store.quarantine` lists them.

Times are stored as fixed-width ISO strings (naive UTC, microseconds), so SQL string order is time
order.

Durability: WAL journal with ``synchronous=FULL``: every commit fsyncs the WAL before
:meth:`Store.add_facts` returns, so an acknowledged batch survives a crash of the process *or* of
the machine. A batch is one transaction: after a crash it is either wholly there (with its
vectors) or wholly absent. Re-adding a fact identical to a stored one is a no-op (a retry after
a crash), a different fact under a stored id is an error.

Erasure: one transaction deletes the row, its vectors, its transitions and link rows, rewrites
the links of the rows that named it, strips the id from transition and audit reasons, and writes
the audit row; ``secure_delete=ON`` zeroes every freed cell and page. The WAL is then
checkpointed and truncated (:meth:`Store.purge`), so no erased byte remains in the database,
``-wal`` or ``-shm`` file. The cost does not grow with the bank (no VACUUM; new banks use
``auto_vacuum=INCREMENTAL`` and release the freed pages). A checkpoint blocked by readers leaves
the purge **pending** (recorded in ``meta``): the erase is committed and says so; the purge is
finished by :meth:`Store.purge` (``fr bank purge``) or by the next write.

Opening: :meth:`Store.open` refuses any file that is not an FR-Bank (not SQLite, another
application's database, a directory) without writing to it; ``readonly=True`` opens without any
write (for ``query``/``explain``/``export``), also on read-only storage. SQLite failures surface
as :class:`StoreError` with one line naming the file and what happened (corrupted, read-only,
disk full, busy, ...).

Concurrency: one :class:`Store` may be shared by threads (a lock serialises its connection);
separate connections (threads or processes) may read while one writes — a snapshot reads inside
one read transaction, so it always sees whole batches.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import re
import sqlite3
import stat
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from ..records import (
    INVISIBLE,
    OWNER,
    FactRecord,
    LifecycleColumns,
    Snapshot,
    Transition,
    check_user,
    concat_columns,
    edge_columns,
    injection_finding,
    parse_fact,
    retracted_by_transitions,
    row_lifecycle,
    slot_codes,
    snapshot_from_columns,
    states_from_columns,
    to_utc_naive,
)
from ..search import Postings, tokenize_many
from ._index import LIFE_COLUMNS, BankIndex, IndexSpec, Rows, encode

SCHEMA_VERSION = 3
#: Schema versions :meth:`Store.open` reads (older ones are migrated on the first write open).
READABLE_SCHEMAS = (1, 2, 3)
#: Snapshots kept in the per-store cache (keyed by at, known_at, include_quarantined, version).
SNAPSHOT_CACHE_SIZE = 16
#: How long :meth:`Store.erase` waits for readers before reporting its purge as pending (s).
ERASE_PURGE_WAIT = 2.0
#: How long a write waits to finish a pending purge (s): best effort, never an error.
WRITER_PURGE_WAIT = 0.2
#: What replaces an erased id in the reasons of other transitions and audit records.
ERASED_MARK = "[erased]"


def shown_user(user: str) -> str:
    """A user in a message: their name quoted, or "the owner" (:data:`frcore.bank.records._facts.OWNER`)."""
    return "the owner" if user == OWNER else repr(user)


_SQLITE_HEADER = b"SQLite format 3\x00"
#: Tables every FR-Bank has (any schema version).
_REQUIRED_TABLES = ("meta", "edges", "transitions", "embeddings", "audit")

_TABLES = """
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
    batch INTEGER NOT NULL,
    user TEXT NOT NULL DEFAULT ''
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
    id_hash TEXT NOT NULL,
    salt TEXT NOT NULL,
    action TEXT NOT NULL,
    erased_at TEXT NOT NULL,
    reason TEXT,
    user TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS edge_links(src TEXT NOT NULL, kind TEXT NOT NULL, dst TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS releases(
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    edge_id TEXT NOT NULL,
    released_at TEXT NOT NULL,
    reason TEXT
);
CREATE TABLE IF NOT EXISTS erase_guard(id TEXT PRIMARY KEY);
CREATE INDEX IF NOT EXISTS edges_recorded_at ON edges(recorded_at);
CREATE INDEX IF NOT EXISTS transitions_edge ON transitions(edge_id);
CREATE INDEX IF NOT EXISTS embeddings_id ON embeddings(id);
CREATE INDEX IF NOT EXISTS edge_links_src ON edge_links(src);
CREATE INDEX IF NOT EXISTS edge_links_dst ON edge_links(dst);
CREATE INDEX IF NOT EXISTS releases_edge ON releases(edge_id)
"""

# Append-only, enforced in the file: only an erase (an erase_guard row exists inside its
# transaction, never committed) may delete an edge, rewrite its links or touch transitions.
_TRIGGERS = """
CREATE TRIGGER edges_append_only BEFORE UPDATE OF seq, id, text, categories, said_at, event_time, slot, confidence,
    numeric, session, kind, speaker, quarantined, recorded_at, batch, user ON edges
    BEGIN SELECT RAISE(ABORT, 'edges are append-only'); END;
CREATE TRIGGER edges_links_only_by_erase BEFORE UPDATE OF links ON edges
    WHEN NOT EXISTS (SELECT 1 FROM erase_guard)
    BEGIN SELECT RAISE(ABORT, 'edges are append-only'); END;
CREATE TRIGGER edges_delete_only_by_erase BEFORE DELETE ON edges
    WHEN NOT EXISTS (SELECT 1 FROM erase_guard WHERE id = OLD.id)
    BEGIN SELECT RAISE(ABORT, 'edges are deleted only by erase'); END;
CREATE TRIGGER transitions_no_update BEFORE UPDATE ON transitions
    WHEN NOT EXISTS (SELECT 1 FROM erase_guard)
    BEGIN SELECT RAISE(ABORT, 'transitions are append-only'); END;
CREATE TRIGGER transitions_no_delete BEFORE DELETE ON transitions
    WHEN NOT EXISTS (SELECT 1 FROM erase_guard)
    BEGIN SELECT RAISE(ABORT, 'transitions are append-only'); END
"""
# The release table (an owner's decision to release a quarantined fact) is append-only too; a
# bank written before it existed gets it, with these triggers, on its first write open.
_RELEASE_TRIGGERS = """
CREATE TRIGGER IF NOT EXISTS releases_no_update BEFORE UPDATE ON releases
    WHEN NOT EXISTS (SELECT 1 FROM erase_guard)
    BEGIN SELECT RAISE(ABORT, 'releases are append-only'); END;
CREATE TRIGGER IF NOT EXISTS releases_no_delete BEFORE DELETE ON releases
    WHEN NOT EXISTS (SELECT 1 FROM erase_guard)
    BEGIN SELECT RAISE(ABORT, 'releases are append-only'); END
"""
_TRIGGER_NAMES = (
    "edges_append_only",
    "edges_links_only_by_erase",
    "edges_delete_only_by_erase",
    "transitions_no_update",
    "transitions_no_delete",
    "releases_no_update",
    "releases_no_delete",
)

_EDGE_COLUMNS = (
    "id, text, categories, said_at, event_time, slot, confidence, numeric, links, session, "
    "kind, speaker, quarantined, recorded_at, user"
)
#: The same columns of a bank older than schema 3 (read-only: every fact is the owner's).
_EDGE_COLUMNS_V2 = _EDGE_COLUMNS.replace(", user", ", '' AS user")
#: The index of facts by user (schema 3; a schema-2 bank gets it with the column).
_USER_INDEX = "CREATE INDEX IF NOT EXISTS edges_user ON edges(user, seq)"


def _edge_columns(schema: int) -> str:
    return _EDGE_COLUMNS if schema >= 3 else _EDGE_COLUMNS_V2


@dataclass(frozen=True)
class _Loaded:
    """The store's contents as read at one version (see :meth:`Store._load`).

    Rows come from the bank's index segments (a prefix of the rows: ``segments``, see
    :mod:`frcore.bank.storage._index`) and from SQLite (``records``, the rest); :attr:`edges` builds the
    :class:`FactRecord` of every row only when asked for."""

    version: int
    erasures: str
    max_seq: int
    max_tseq: int
    n: int
    recorded: np.ndarray  # (n,) datetime64[us] transaction times
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


def _links(text: str) -> dict[str, tuple[str, ...]]:
    """The links column as stored (JSON) → ``{kind: (target ids, ...)}``."""
    return {} if text == "{}" else {k: tuple(v) for k, v in _decode(text).items()}


def _segment_slot_codes(seg: Rows, vocab: dict[str, int]) -> np.ndarray:
    """The slot codes of a segment's rows, numbering (in ``vocab``) the slots it is first to hold."""
    values, local = seg.slot_codes if seg.slot_codes is not None else encode(seg.cols["slots"])
    remap = np.array([vocab.setdefault(v, len(vocab)) for v in values] + [-1], dtype=np.int64)
    return remap[local]


#: the links of a row without any, shared by every such row of a load (never written)
_NO_LINKS: Mapping[str, tuple[str, ...]] = MappingProxyType({})


def _links_column(texts: list[str]) -> list[Mapping[str, tuple[str, ...]]]:
    """:func:`_links` of every row's stored links, the rows with some decoded as one JSON
    document (most rows have none: they share :data:`_NO_LINKS`)."""
    some = [i for i, x in enumerate(texts) if x != "{}"]
    out: list[Mapping[str, tuple[str, ...]]] = [_NO_LINKS] * len(texts)
    if some:
        decoded = _decode("[" + ",".join([texts[i] for i in some]) + "]")
        for i, lk in zip(some, decoded):
            out[i] = {k: tuple(v) for k, v in lk.items()}
    return out


def _with_releases(edges: list[FactRecord], released: frozenset[str]) -> list[FactRecord]:
    """``edges`` with ``quarantined`` cleared for those the owner released (release rows, never
    an UPDATE of the stored row)."""
    if not released:
        return edges
    return [dataclasses.replace(e, quarantined=False) if e.quarantined and e.id in released else e for e in edges]


class StoreError(ValueError):
    """A store operation refused or failed (unknown id, conflicting id, dangling link, bad vector,
    not an FR-Bank, corrupted, read-only, disk full, ...). ``kind`` names the case for callers
    (``"not_a_bank"``, ``"corrupt"``, ``"readonly"``, ``"full"``, ``"io"``, ``"busy"``,
    ``"missing"``, ...; ``"invalid"`` for a refused operation)."""

    def __init__(self, message: str, kind: str = "invalid"):
        super().__init__(message)
        self.kind = kind


class Added(list):
    """The ids a batch stored (a list, in batch order), with ``unchanged``: the ids of facts that
    were already stored with identical content, so were skipped (an idempotent retry), and
    ``quarantined``: one record per newly stored fact held in quarantine — ``id``, ``field`` (the
    field whose text fired: ``text``, ``id``, ``slot`` or ``speaker``), ``rule`` (the detector's
    rule, :func:`frcore.bank.instruction_rule`) and ``slot`` (the slot it would update, or None)."""

    def __init__(
        self, ids: Iterable[str] = (), unchanged: Iterable[str] = (), quarantined: Iterable[Mapping[str, Any]] = ()
    ):
        super().__init__(ids)
        self.unchanged: list[str] = list(unchanged)
        self.quarantined: list[dict[str, Any]] = [dict(q) for q in quarantined]


class _Retry(Exception):
    """The stored ids changed between the checks and the write transaction: check again."""


def storage_error(path: str, exc: sqlite3.Error, doing: str | None = None) -> StoreError:
    """One line for an SQLite failure on the bank ``path``: what happened, and what it means."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    msg = str(exc)
    what = f"{path}: " + (f"{doing}: " if doing else "")
    if name == "SQLITE_NOTADB" or "file is not a database" in msg:
        return StoreError(f"{path}: not an FR-Bank: not an SQLite database ({msg})", "not_a_bank")
    if name.startswith("SQLITE_CORRUPT") or "malformed" in msg:
        return StoreError(
            f"{what}the bank file is corrupted ({msg}); nothing was changed; restore it from a backup or an export",
            "corrupt",
        )
    if name.startswith("SQLITE_READONLY") or "readonly database" in msg:
        return StoreError(
            f"{what}read-only: the bank or its folder is not writable ({msg}); nothing was written "
            f"(query, explain and export still work)",
            "readonly",
        )
    if name == "SQLITE_FULL" or "disk is full" in msg:
        return StoreError(f"{what}disk full ({msg}); the write was rolled back, nothing was stored", "full")
    if name.startswith("SQLITE_IOERR") or "disk I/O error" in msg:
        return StoreError(
            f"{what}disk I/O error ({msg}: disk full, file-size limit or failing storage); "
            f"the write did not complete and was rolled back",
            "io",
        )
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in msg:
        return StoreError(f"{what}busy: another process held the bank locked for too long ({msg}); retry", "busy")
    if name.startswith("SQLITE_CANTOPEN") or "unable to open" in msg:
        return StoreError(f"{what}cannot open the bank file ({msg})", "cantopen")
    return StoreError(f"{what}SQLite error ({msg})", "sqlite")


def _mapped(fn: Callable) -> Callable:
    """Store methods raise :class:`StoreError` (one line, naming the file) for SQLite failures."""

    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        try:
            return fn(self, *args, **kwargs)
        except sqlite3.Error as e:
            raise storage_error(self.path, e) from e

    return wrapper


def iso_text(dt: datetime) -> str:
    """Naive-UTC datetime → fixed-width ISO string (sortable)."""
    return dt.isoformat(timespec="microseconds")


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _time(value: Any, name: str) -> datetime:
    return to_utc_naive(value, name, "store", None)


def _check_text_arg(value: Any, name: str, what: str) -> None:
    """An id or reason given to retract / erase: a string SQLite can store (or None for a reason)."""
    if value is None and name == "reason":
        return
    if not isinstance(value, str) or (name == "edge_id" and not value):
        raise StoreError(
            f"{what}: {name} {value!r}: expected a non-empty string"
            if name == "edge_id"
            else f"{what}: {name}: expected a string or null, got {type(value).__name__}"
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise StoreError(f"{what}: {name} {value!r}: not valid Unicode (unpaired surrogate)") from None


def id_hash(edge_id: str, salt: bytes) -> str:
    """The audit record's salted hash of an erased id: SHA-256 of salt ‖ UTF-8 id, hex."""
    return hashlib.sha256(salt + edge_id.encode("utf-8")).hexdigest()


def _scrub(text: str | None, edge_id: str) -> str | None:
    """``text`` with every stand-alone occurrence of ``edge_id`` replaced by :data:`ERASED_MARK`."""
    if text is None or edge_id not in text:
        return text
    return re.sub(rf"(?<!\w){re.escape(edge_id)}(?!\w)", ERASED_MARK, text)


_decode = json.JSONDecoder().decode
#: ``json.dumps(x, separators=(",", ":"))`` (one encoder, not one per call)
_encode = json.JSONEncoder(separators=(",", ":")).encode


def _row_to_record(row: Sequence[Any]) -> FactRecord:
    (fid, text, cats, said, event, slot, conf, numeric, links, session, kind, speaker, quar, _rec, user) = row
    return FactRecord(
        id=fid,
        text=text,
        categories=_decode(cats),
        said_at=datetime.fromisoformat(said),
        event_time=None if event is None else datetime.fromisoformat(event),
        slot=slot,
        confidence=conf,
        numeric=bool(numeric),
        links=_links(links),
        session=session,
        kind=kind,
        speaker=speaker,
        quarantined=bool(quar),
        user=user,
    )


def _differs(a: FactRecord, b: FactRecord) -> list[str]:
    """Fields in which two records differ (``quarantined`` is derived by the store: not compared)."""
    return [
        f.name
        for f in dataclasses.fields(FactRecord)
        if f.name != "quarantined" and getattr(a, f.name) != getattr(b, f.name)
    ]


def _inspect(conn: sqlite3.Connection, path: str) -> int | None:
    """The schema version of the FR-Bank on ``conn`` (reads only); ``None`` for an empty database;
    :class:`StoreError` for any other database."""
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not names:
        return None
    if "meta" not in names:
        shown = ", ".join(sorted(names)[:6]) + (", …" if len(names) > 6 else "")
        raise StoreError(
            f"{path}: not an FR-Bank: an SQLite database with other tables ({shown}); refusing to touch it",
            "not_a_bank",
        )
    try:
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    except sqlite3.OperationalError as e:
        raise StoreError(
            f"{path}: not an FR-Bank: its 'meta' table is not FR-Bank's ({e}); refusing to touch it", "not_a_bank"
        ) from None
    if row is None:
        raise StoreError(
            f"{path}: not an FR-Bank: no schema_version in its 'meta' table; refusing to touch it", "not_a_bank"
        )
    try:
        version = int(row[0])
    except (TypeError, ValueError):
        raise StoreError(f"{path}: not an FR-Bank: schema_version {row[0]!r} is not a number", "not_a_bank") from None
    if version not in READABLE_SCHEMAS:
        raise StoreError(f"{path}: schema version {version} is not the supported {SCHEMA_VERSION}", "schema")
    missing = [t for t in _REQUIRED_TABLES + (("edge_links", "erase_guard") if version >= 2 else ()) if t not in names]
    if missing:
        raise StoreError(f"{path}: a damaged FR-Bank: table(s) {', '.join(missing)} missing", "corrupt")
    return version


def _has_releases(conn: sqlite3.Connection) -> bool:
    """The bank has the release table (a bank written before it existed gets it on a write open)."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='releases'").fetchone() is not None


class Store:
    """A persistent, append-only, bi-temporal FR-Bank store (see the module docstring).

    Open with :meth:`Store.open`; use as a context manager or call :meth:`close`.
    """

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

    # ------------------------------------------------------------------ lifecycle of the handle

    @classmethod
    def open(
        cls,
        path: str | Path,
        timeout: float = 30.0,
        *,
        readonly: bool = False,
        create: bool = True,
        embedder: tuple[str, int] | None = None,
    ) -> Store:
        """Open the store at ``path`` (``":memory:"`` for a scratch one).

        ``embedder``: the (name, dimension) of the embedder that fills the bank, recorded in
        ``meta`` when the bank is created — or, for a bank that has none recorded, by its first
        write (:meth:`recorded_embedder` reads it; :meth:`frcore.bank.Bank.open` enforces it).

        A missing file (or an empty one) becomes a new bank when ``create`` (the default) and not
        ``readonly``. Anything that is not an FR-Bank — a directory, a file that is not SQLite,
        another application's SQLite database — is refused with a :class:`StoreError` and never
        written to. ``readonly=True`` opens without any write (no schema, no journal-mode
        change), also on read-only storage (a bank of an older schema is read as it is: every fact
        the owner's); a schema-1 or schema-2 bank is migrated on its first write open.
        """
        path = str(path)
        if path == ":memory:":
            if readonly:
                raise StoreError(":memory:: a scratch store cannot be opened read-only")
            conn = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
            try:
                cls._create(conn, path, embedder)
            except sqlite3.Error as e:
                conn.close()
                raise storage_error(path, e) from e
            return cls(conn, path)
        fresh = cls._precheck(path, readonly, create)
        try:
            if readonly:
                conn = cls._connect_readonly(path, timeout)
            else:
                conn = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as e:
            raise storage_error(path, e) from e
        try:
            version = None if fresh else _inspect(conn, path)
            if readonly:
                if version is None:
                    raise StoreError(f"{path}: an empty SQLite database, not an FR-Bank", "not_a_bank")
                conn.execute("PRAGMA query_only=ON")
                return cls(conn, path, readonly=True, schema=version)
            if version is None:
                if not fresh:  # another application's (empty) database: not ours to turn into a bank
                    raise StoreError(
                        f"{path}: an empty SQLite database, not an FR-Bank; refusing to touch it", "not_a_bank"
                    )
                cls._create(conn, path, embedder)
            else:
                mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
                if mode.lower() != "wal":
                    raise StoreError(f"{path}: could not enable the WAL journal (got {mode!r})", "sqlite")
                cls._pragmas(conn)
                if version == 1:
                    cls._migrate_v1(conn)
                elif version == 2:
                    cls._migrate_v2(conn)
                cls._ensure_releases(conn)
        except BaseException as e:
            if conn.in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            conn.close()
            if isinstance(e, sqlite3.Error):
                raise storage_error(path, e) from e
            raise
        store = cls(conn, path)
        if embedder is not None:
            store._embedder_to_record = (str(embedder[0]), int(embedder[1]))
        return store

    @staticmethod
    def _precheck(path: str, readonly: bool, create: bool) -> bool:
        """Refuse what is not a bank before SQLite touches it; True if the bank is to be created."""
        p = Path(path)
        try:
            st = p.stat()
        except FileNotFoundError:
            st = None
        except NotADirectoryError:
            raise StoreError(f"{path}: a parent of the path is not a directory", "cantopen") from None
        except OSError as e:
            raise StoreError(f"{path}: cannot access ({e.strerror})", "cantopen") from None
        if st is None:
            if readonly or not create:
                raise StoreError(f"{path}: no such bank (the file does not exist)", "missing")
            parent = p.parent
            if not parent.is_dir():
                raise StoreError(
                    f"{path}: cannot create the bank: folder {str(parent)!r} does not exist", "missing_parent"
                )
            if not os.access(parent, os.W_OK):
                raise StoreError(f"{path}: cannot create the bank: folder {str(parent)!r} is not writable", "readonly")
            return True
        if stat.S_ISDIR(st.st_mode):
            raise StoreError(f"{path}: is a directory, not an FR-Bank file", "is_dir")
        if not stat.S_ISREG(st.st_mode):
            raise StoreError(f"{path}: not a regular file, not an FR-Bank", "not_a_bank")
        try:
            with open(p, "rb") as fh:
                header = fh.read(len(_SQLITE_HEADER))
        except OSError as e:
            raise StoreError(f"{path}: cannot read the bank file ({e.strerror})", "cantopen") from None
        if not header:
            if readonly or not create:
                raise StoreError(
                    f"{path}: an empty file, not an FR-Bank (create one with `fr bank init`)", "not_a_bank"
                )
            return True
        if header != _SQLITE_HEADER:
            raise StoreError(f"{path}: not an FR-Bank: not an SQLite database", "not_a_bank")
        return False

    @staticmethod
    def _connect_readonly(path: str, timeout: float) -> sqlite3.Connection:
        """A read-only connection (``mode=ro``). On read-only storage without a ``-wal`` file,
        SQLite cannot make the WAL index: then the file is opened ``immutable`` (exact, since
        without a WAL every committed byte is in the file and nobody can write there)."""
        uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
        conn = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.OperationalError as e:
            conn.close()
            name = getattr(e, "sqlite_errorname", "")
            wal = Path(f"{path}-wal")
            if not (
                name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN"))
                and (not wal.exists() or wal.stat().st_size == 0)
            ):
                raise
        conn = sqlite3.connect(
            uri + "&immutable=1", uri=True, timeout=timeout, isolation_level=None, check_same_thread=False
        )
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return conn

    @staticmethod
    def _pragmas(conn: sqlite3.Connection) -> None:
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA secure_delete=ON")
        conn.execute("PRAGMA foreign_keys=ON")

    @classmethod
    def _create(cls, conn: sqlite3.Connection, path: str, embedder: tuple[str, int] | None = None) -> None:
        conn.execute("PRAGMA auto_vacuum=INCREMENTAL")  # before the first table: erase releases pages
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode.lower() != "wal" and path != ":memory:":
            raise StoreError(f"{path}: could not enable the WAL journal (got {mode!r})", "sqlite")
        cls._pragmas(conn)
        conn.execute("BEGIN IMMEDIATE")
        if _inspect(conn, path) is not None:  # created by another process meanwhile
            conn.execute("COMMIT")
            return
        for stmt in _TABLES.split(";\n"):
            conn.execute(stmt)
        conn.execute(_USER_INDEX)
        for stmt in (_TRIGGERS + ";\n" + _RELEASE_TRIGGERS).split(";\n"):
            conn.execute(stmt)
        conn.executemany(
            "INSERT INTO meta VALUES (?, ?)",
            [
                ("schema_version", str(SCHEMA_VERSION)),
                ("version", "0"),
                ("created_at", iso_text(_now())),
                ("erasures", "0"),
            ],
        )
        if embedder is not None:
            cls._record_embedder(conn, embedder)
        conn.execute("COMMIT")

    @staticmethod
    def _record_embedder(conn: sqlite3.Connection, embedder: tuple[str, int]) -> None:
        """Inside a write transaction: record the bank's embedder (name, dimension) unless one is."""
        name, dim = embedder
        conn.execute("INSERT OR IGNORE INTO meta VALUES ('embedder', ?)", (str(name),))
        conn.execute("INSERT OR IGNORE INTO meta VALUES ('embedder_dim', ?)", (str(int(dim)),))

    @staticmethod
    def _ensure_releases(conn: sqlite3.Connection) -> None:
        """A schema-2 bank written before the release table existed gets it (write opens only)."""
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='releases'").fetchone() is not None:
            return
        conn.execute("BEGIN IMMEDIATE")
        for stmt in _TABLES.split(";\n"):
            if "releases" in stmt:
                conn.execute(stmt)
        for stmt in _RELEASE_TRIGGERS.split(";\n"):
            conn.execute(stmt)
        conn.execute("COMMIT")

    @classmethod
    def _migrate_v1(cls, conn: sqlite3.Connection) -> None:
        """Schema 1 → 2 in one transaction: link rows, the id index of vectors, the triggers that
        let an erase rewrite links, and the audit trail without plaintext ids (each old record's
        id is replaced by its salted hash, and removed with its transitions and links)."""
        conn.execute("BEGIN IMMEDIATE")
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is not None and int(row[0]) >= 2:  # migrated by another process meanwhile
            conn.execute("COMMIT")
            if int(row[0]) < SCHEMA_VERSION:
                cls._migrate_v2(conn)
            return
        cls._add_user_column(conn)
        for name in (
            "edges_append_only",
            "edges_delete_only_by_erase",
            "transitions_no_update",
            "transitions_no_delete",
        ):
            conn.execute(f"DROP TRIGGER IF EXISTS {name}")
        old_audit = conn.execute("SELECT edge_id, action, erased_at, reason FROM audit ORDER BY seq").fetchall()
        conn.execute("DROP TABLE audit")
        for stmt in _TABLES.split(";\n"):
            conn.execute(stmt)
        links = conn.execute("SELECT id, links FROM edges WHERE links != '{}'").fetchall()
        conn.executemany(
            "INSERT INTO edge_links VALUES (?, ?, ?)",
            [(src, kind, dst) for src, lk in links for kind, ts in _decode(lk).items() for dst in ts],
        )
        erased = [r[0] for r in old_audit]
        stored = {r[0] for r in conn.execute("SELECT id FROM edges")}
        conn.execute("INSERT INTO erase_guard VALUES ('')")  # lets this transaction rewrite rows
        gone = [r[0] for r in conn.execute("SELECT DISTINCT edge_id FROM transitions")] + erased
        for eid in dict.fromkeys(gone):
            if eid in stored:
                continue
            cls._remove_mentions(conn, eid)
        conn.execute("DELETE FROM transitions WHERE kind='erase'")
        for eid, action, erased_at, reason in old_audit:
            salt = os.urandom(16)
            for other in erased:
                reason = _scrub(reason, other)
            conn.execute(
                "INSERT INTO audit (id_hash, salt, action, erased_at, reason) VALUES (?, ?, ?, ?, ?)",
                (id_hash(eid, salt), salt.hex(), action, erased_at, reason),
            )
        conn.execute("DELETE FROM erase_guard")
        for stmt in (_TRIGGERS + ";\n" + _RELEASE_TRIGGERS).split(";\n"):
            conn.execute(stmt)
        conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION),))
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('erasures', '0')")
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('purge_pending', '1')")  # old plaintext ids were freed
        conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='version'")
        conn.execute("COMMIT")

    @staticmethod
    def _add_user_column(conn: sqlite3.Connection) -> None:
        """Inside a migration transaction: the ``user`` column of edges (every stored fact the
        owner's) and its index."""
        cols = {r[1] for r in conn.execute("PRAGMA table_info(edges)")}
        if "user" not in cols:
            conn.execute("ALTER TABLE edges ADD COLUMN user TEXT NOT NULL DEFAULT ''")
        conn.execute(_USER_INDEX)

    @classmethod
    def _migrate_v2(cls, conn: sqlite3.Connection) -> None:
        """Schema 2 → 3 in one transaction: the ``user`` column of edges and of audit records
        (every stored fact and erasure the owner's), its index, and the append-only trigger that
        covers it."""
        conn.execute("BEGIN IMMEDIATE")
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is not None and int(row[0]) >= SCHEMA_VERSION:  # migrated by another process meanwhile
            conn.execute("COMMIT")
            return
        cls._add_user_column(conn)
        if "user" not in {r[1] for r in conn.execute("PRAGMA table_info(audit)")}:
            conn.execute("ALTER TABLE audit ADD COLUMN user TEXT NOT NULL DEFAULT ''")
        conn.execute("DROP TRIGGER IF EXISTS edges_append_only")
        conn.execute(next(t for t in _TRIGGERS.split(";\n") if "edges_append_only" in t))
        conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION),))
        conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='version'")
        conn.execute("COMMIT")

    @staticmethod
    def _remove_mentions(conn: sqlite3.Connection, edge_id: str) -> None:
        """Inside an erase transaction (erase_guard set): remove ``edge_id`` from every row other
        than its own edge row that names it — links of other edges, link rows, its transitions,
        its release from quarantine, and the reasons of other transitions, releases and audit
        records."""
        srcs = [
            r[0]
            for r in conn.execute("SELECT DISTINCT src FROM edge_links WHERE dst=? AND src != ?", (edge_id, edge_id))
        ]
        for src in srcs:
            row = conn.execute("SELECT links FROM edges WHERE id=?", (src,)).fetchone()
            if row is None:
                continue
            links = {k: [t for t in ts if t != edge_id] for k, ts in _decode(row[0]).items()}
            links = {k: ts for k, ts in links.items() if ts}
            conn.execute("UPDATE edges SET links=? WHERE id=?", (_encode(links), src))
        conn.execute("DELETE FROM edge_links WHERE src=? OR dst=?", (edge_id, edge_id))
        conn.execute("DELETE FROM transitions WHERE edge_id=?", (edge_id,))
        conn.execute("DELETE FROM releases WHERE edge_id=?", (edge_id,))
        for table in ("transitions", "audit", "releases"):
            for seq, reason in conn.execute(
                f"SELECT seq, reason FROM {table} WHERE instr(reason, ?) > 0", (edge_id,)
            ).fetchall():
                new = _scrub(reason, edge_id)
                if new != reason:
                    conn.execute(f"UPDATE {table} SET reason=? WHERE seq=?", (new, seq))

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None  # type: ignore[assignment]

    def __enter__(self) -> Store:
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

    # ------------------------------------------------------------------ writes

    @_mapped
    def add_facts(
        self,
        facts: Iterable[FactRecord | Mapping[str, Any]],
        recorded_at: datetime | None = None,
        *,
        embed: Callable[[list[FactRecord]], tuple[str, np.ndarray]] | None = None,
        where: Sequence[str] | None = None,
        user: str | None = None,
    ) -> Added:
        """Append a batch of facts in one transaction (all or nothing); returns the ids stored
        (:class:`Added`; ``.unchanged`` lists the facts skipped as already stored, identical).

        Each fact is validated (:func:`parse_fact`; ``where[i]`` names it in errors, default
        ``facts[i]``). A fact identical to a stored one (every field but the derived
        ``quarantined``) is skipped: re-adding a batch after a crash is a no-op. A different
        fact under a stored id, an id repeated in the batch, or a link to an id neither stored
        nor in the batch aborts the whole batch with a :class:`FactError` / :class:`StoreError`
        naming it. ``embed(records) -> (model, (n, d) vectors)``, if given, embeds the facts to
        store (outside the write lock); their vectors are written in the same transaction, so a
        stored fact never lacks its vector. A fact whose text, id, slot or speaker reads as an
        instruction to the model (:func:`frcore.bank.records._facts.injection_finding`, checked before any
        lock is taken) is stored quarantined and listed in ``.quarantined`` of the result.
        ``recorded_at`` is the transaction time (default: now, UTC).

        Users: each fact belongs to its ``user`` (absent: the owner, :data:`OWNER`). ``user``, if
        given, is the user the batch is written for: a fact that names no user becomes theirs, a
        fact of another user is refused (field ``user``). A link may only name a fact of the same
        user. Ids are unique across the bank's users: an id stored for another user is refused
        (without saying whose it is).
        """
        if self.readonly:
            raise StoreError(f"{self.path}: opened read-only; nothing was written", "readonly")
        facts = list(facts)
        labels = [f"facts[{i}]" for i in range(len(facts))] if where is None else [str(w) for w in where]
        if len(labels) != len(facts):
            raise StoreError(f"add_facts: where: {len(labels)} labels for {len(facts)} facts")
        rec_at = _now() if recorded_at is None else _time(recorded_at, "recorded_at")
        records: list[FactRecord] = []
        seen: dict[str, int] = {}
        if user is not None:
            user = check_user(user)
        for i, f in enumerate(facts):
            if user is not None and user != OWNER and isinstance(f, Mapping) and f.get("user") is None:
                f = {**f, "user": user}
            r = parse_fact(f, labels[i])
            if user is not None and r.user != user:
                raise StoreError(
                    f"{labels[i]}: fact {r.id!r}: field 'user': {shown_user(r.user)} is not the user this batch "
                    f"is written for ({shown_user(user)}); write it for that user (Bank.for_user, fr bank --user)"
                )
            if r.id in seen:
                raise StoreError(
                    f"{labels[i]}: fact {r.id!r}: field 'id': duplicate in batch (also {labels[seen[r.id]]})"
                )
            seen[r.id] = i
            records.append(r)
        if not records:
            return Added()
        # Prompt-injection check of every free-text field, before any lock or transaction.
        findings: dict[str, tuple[str, str]] = {}
        for i, r in enumerate(records):
            found = injection_finding(r)
            if found is None and r.quarantined:
                found = ("quarantined", "given as quarantined")
            if found is not None:
                findings[r.id] = found
                if not r.quarantined:
                    records[i] = dataclasses.replace(r, quarantined=True)
        ids = [r.id for r in records]
        users = {r.id: r.user for r in records}
        for _attempt in range(5):
            with self._lock:
                stored = self._stored(self.conn, ids)
                new = self._classify(records, stored, labels)
                if not new:
                    return Added([], [r.id for r in records])
                self._check_links(self.conn, new, seen, labels, users)
            vectors = None
            if embed is not None:
                model, vecs = embed(new)
                vectors = (model, self._check_vectors(model, [r.id for r in new], vecs))
            try:
                with self._write() as conn:
                    if self._stored(conn, ids).keys() != stored.keys():
                        raise _Retry
                    self._check_links(conn, new, seen, labels, users)
                    self._insert(conn, new, rec_at, vectors)
            except _Retry:
                continue
            new_ids = {r.id for r in new}
            held = [
                {"id": r.id, "field": findings[r.id][0], "rule": findings[r.id][1], "slot": r.slot}
                for r in records
                if r.id in new_ids and r.id in findings
            ]
            return Added(
                [r.id for r in records if r.id in new_ids], [r.id for r in records if r.id not in new_ids], held
            )
        raise StoreError(
            f"{self.path}: the stored ids kept changing while this batch was added (concurrent writers); retry", "busy"
        )

    @staticmethod
    def _stored(conn: sqlite3.Connection, ids: Sequence[str]) -> dict[str, FactRecord]:
        out: dict[str, FactRecord] = {}
        for k in range(0, len(ids), 500):
            chunk = ids[k : k + 500]
            q = f"SELECT {_EDGE_COLUMNS} FROM edges WHERE id IN ({','.join('?' * len(chunk))})"
            out.update((r[0], _row_to_record(r)) for r in conn.execute(q, chunk))
        return out

    @staticmethod
    def _classify(
        records: list[FactRecord], stored: Mapping[str, FactRecord], labels: Sequence[str]
    ) -> list[FactRecord]:
        """The records to insert; those stored identically are skipped; a different stored fact
        under the same id raises."""
        new = []
        for i, r in enumerate(records):
            old = stored.get(r.id)
            if old is None:
                new.append(r)
                continue
            if old.user != r.user:  # another user's fact: nothing about it is said
                raise StoreError(
                    f"{labels[i]}: fact {r.id!r}: field 'id': already in use in this bank; use a new id "
                    "(ids are unique across the bank's users)"
                )
            diff = _differs(old, r)
            if diff:
                raise StoreError(
                    f"{labels[i]}: fact {r.id!r}: field 'id': already stored with different content ({', '.join(diff)} "
                    "differ); "
                    f"use a new id (re-adding an identical fact is a no-op)"
                )
        return new

    def _check_links(
        self,
        conn: sqlite3.Connection,
        new: list[FactRecord],
        seen: Mapping[str, int],
        labels: Sequence[str],
        users: Mapping[str, str],
    ) -> None:
        """Every link of ``new`` names a fact of the same user, stored or in the batch (``seen``:
        id → position, ``users``: id → user, of every fact in the batch)."""
        targets = sorted({t for r in new for ts in r.links.values() for t in ts} - seen.keys())
        found = self._owners(conn, targets)
        for r in new:
            for kind, ts in r.links.items():
                for t in ts:
                    target_user = users[t] if t in seen else found.get(t)
                    if target_user is None or (t not in seen and target_user != r.user):
                        # another user's fact is not said to exist
                        raise StoreError(
                            f"{labels[seen[r.id]]}: fact {r.id!r}: field 'links': {kind} target {t!r} is neither "
                            "stored nor in the batch" + ("" if r.user == OWNER else f" (for user {r.user!r})")
                        )
                    if target_user != r.user:
                        raise StoreError(
                            f"{labels[seen[r.id]]}: fact {r.id!r}: field 'links': {kind} target {t!r} is a fact of "
                            f"another user ({shown_user(target_user)}, not {shown_user(r.user)}); links "
                            "only name facts of the same user"
                        )

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
            raise StoreError(f"{what}: field 'vectors': non-finite value in row {i} (id {ids[i]!r})")
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

    def _insert(self, conn: sqlite3.Connection, records: list[FactRecord], rec_at: datetime, vectors) -> None:
        batch = conn.execute("SELECT COALESCE(MAX(batch), 0) + 1 FROM edges").fetchone()[0]
        rec_s = iso_text(rec_at)
        rows = [
            (
                r.id,
                r.text,
                _encode(r.categories),
                iso_text(r.said_at),
                None if r.event_time is None else iso_text(r.event_time),
                r.slot,
                r.confidence,
                int(bool(r.numeric)),
                _encode({k: list(v) for k, v in r.links.items()}) if r.links else "{}",
                r.session,
                r.kind,
                r.speaker,
                int(bool(r.quarantined)),
                rec_s,
                r.user,
                batch,
            )
            for r in records
        ]
        conn.executemany(f"INSERT INTO edges ({_EDGE_COLUMNS}, batch) VALUES ({','.join('?' * 16)})", rows)
        links = [(r.id, kind, t) for r in records for kind, ts in r.links.items() for t in ts]
        if links:
            conn.executemany("INSERT INTO edge_links VALUES (?, ?, ?)", links)
        if vectors is not None:
            model, v = vectors
            self._put_vectors(conn, model, [r.id for r in records], v)

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

    @_mapped
    def existing(self, ids: Sequence[str], user: str = OWNER) -> set[str]:
        """The ids among ``ids`` that are stored now as facts of ``user``."""
        with self._lock:
            return {i for i, u in self._owners(self.conn, list(ids)).items() if u == user}

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
            shown = "" if user == OWNER else f" of user {user!r}"
            raise StoreError(f"{what}: edge_id {edge_id!r}: no such edge{shown}", "unknown_id")

    @_mapped
    def retract(
        self,
        edge_id: str,
        at: datetime | None = None,
        reason: str | None = None,
        recorded_at: datetime | None = None,
        *,
        user: str = OWNER,
    ) -> None:
        """Record a retraction of ``edge_id``, a fact of ``user``, effective at valid time ``at``
        (default: the transaction time). The edge stays stored, masked from then on."""
        _check_text_arg(edge_id, "edge_id", "retract")
        _check_text_arg(reason, "reason", "retract")
        rec_at = _now() if recorded_at is None else _time(recorded_at, "recorded_at")
        eff = rec_at if at is None else _time(at, "at")
        with self._write() as conn:
            self._require(conn, edge_id, "retract", user)
            conn.execute(
                "INSERT INTO transitions (edge_id, kind, effective_at, "
                "recorded_at, reason) VALUES (?, 'retract', ?, ?, ?)",
                (edge_id, iso_text(eff), iso_text(rec_at), reason),
            )

    @_mapped
    def erase(
        self, edge_id: str, reason: str | None = None, *, wait: float = ERASE_PURGE_WAIT, user: str = OWNER
    ) -> dict[str, Any]:
        """Physically delete an edge, a fact of ``user`` (another user's id is "no such edge"):
        its row, vectors, transitions and link rows, its id from the links of other edges and
        from the reasons of transitions and audit records — one
        transaction, committed or rolled back as a whole (an exception means nothing was erased).
        The audit record keeps a salted hash of the id (:func:`id_hash`), never the id or text.

        Then the WAL is checkpointed and truncated (:meth:`purge`, waiting up to ``wait`` s for
        readers). Returns the audit record plus ``purged``: True when no erased byte remains in
        the database, ``-wal`` and ``-shm`` files; False when readers blocked the checkpoint —
        the erase is committed, the purge pending (``note`` says so) until :meth:`purge` or the
        next write finishes it.
        """
        _check_text_arg(edge_id, "edge_id", "erase")
        _check_text_arg(reason, "reason", "erase")
        erased_at = _now()
        salt = os.urandom(16)
        digest = id_hash(edge_id, salt)
        reason = _scrub(reason, edge_id)
        with self._write(finish_purge=False) as conn:
            self._require(conn, edge_id, "erase", user)
            # the rows whose index segments hold the erased fact or its id (in their links)
            touched = [
                int(r[0])
                for r in conn.execute(
                    "SELECT seq FROM edges WHERE id=? OR id IN (SELECT src FROM edge_links WHERE dst=?)",
                    (edge_id, edge_id),
                )
            ]
            conn.execute("INSERT INTO erase_guard VALUES (?)", (edge_id,))
            self._remove_mentions(conn, edge_id)
            conn.execute("DELETE FROM edges WHERE id=?", (edge_id,))
            conn.execute("DELETE FROM embeddings WHERE id=?", (edge_id,))
            conn.execute(
                "INSERT INTO audit (id_hash, salt, action, erased_at, reason, user) VALUES (?, ?, 'erase', ?, ?, ?)",
                (digest, salt.hex(), iso_text(erased_at), reason, user),
            )
            conn.execute("DELETE FROM erase_guard")
            conn.execute(
                "INSERT OR REPLACE INTO meta VALUES ('erasures', CAST(COALESCE((SELECT "
                "value FROM meta WHERE key='erasures'), 0) AS INTEGER) + 1)"
            )
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('purge_pending', '1')")
            if conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2:  # incremental: give the freed pages back
                conn.execute("PRAGMA incremental_vacuum").fetchall()
        index_note = self._erase_from_index(min(touched))
        out = {
            "edge_id": edge_id,
            "id_hash": digest,
            "salt": salt.hex(),
            "action": "erase",
            "erased_at": iso_text(erased_at),
            "reason": reason,
        }
        try:
            purge = self.purge(timeout=wait)
        except StoreError as e:  # committed: report the purge as pending, never the erase as failed
            purge = {"purged": False, "note": f"erased; purge pending ({e})"}
        if index_note is not None:
            purge = {"purged": False, "note": f"{purge['note']}; {index_note}"}
        return out | purge

    def _erase_from_index(self, seq: int) -> str | None:
        """After an erase committed: scrub the index segments from row ``seq`` on
        (:meth:`frcore.bank.storage._index.BankIndex.drop_from`). Returns a note when that failed (the
        stale index is then scrubbed by the next write open that loads the bank)."""
        if self.path == ":memory:":
            return None
        try:
            index = self._index or BankIndex.existing(self.path)  # erased by a store keeping no index too
            if index is None:
                return None
            with self._lock:
                bank_id = self._bank_id(self.conn)
                erow = self.conn.execute("SELECT value FROM meta WHERE key='erasures'").fetchone()
            if bank_id is None:
                index.scrub()
            else:
                index.drop_from(seq, bank_id, int(erow[0]) if erow is not None else 0)
            return None
        except OSError as e:
            return f"the bank's index could not be scrubbed ({e.strerror or e}): the next write open scrubs it"

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

    # ------------------------------------------------------------------ quarantine

    @_mapped
    def release(
        self, edge_id: str, reason: str | None = None, released_at: datetime | None = None, *, user: str = OWNER
    ) -> dict[str, Any]:
        """Release a quarantined fact: the owner's decision that it is an ordinary statement. It
        is recorded as a row of the append-only ``releases`` table (the fact row is never
        updated); from then on the fact takes part in retrieval. Releasing a fact already
        released is a no-op (``unchanged``: True). An unknown id, or a fact that is not
        quarantined, raises :class:`StoreError`; so does a fact of another user than ``user``. An
        erase removes the release with the fact."""
        _check_text_arg(edge_id, "edge_id", "release")
        _check_text_arg(reason, "reason", "release")
        rel_at = _now() if released_at is None else _time(released_at, "released_at")
        with self._write() as conn:
            self._require(conn, edge_id, "release", user)
            row = conn.execute("SELECT quarantined FROM edges WHERE id=?", (edge_id,)).fetchone()
            if not row[0]:
                raise StoreError(f"release: edge_id {edge_id!r}: not quarantined; nothing to release")
            old = conn.execute(
                "SELECT released_at, reason FROM releases WHERE edge_id=? ORDER BY seq LIMIT 1", (edge_id,)
            ).fetchone()
            if old is not None:
                return {"id": edge_id, "released_at": old[0], "reason": old[1], "unchanged": True}
            conn.execute(
                "INSERT INTO releases (edge_id, released_at, reason) VALUES (?, ?, ?)",
                (edge_id, iso_text(rel_at), reason),
            )
            conn.execute(
                "INSERT OR REPLACE INTO meta VALUES ('releases', "
                "CAST(COALESCE((SELECT value FROM meta WHERE key='releases'), 0) AS INTEGER) + 1)"
            )
        return {"id": edge_id, "released_at": iso_text(rel_at), "reason": reason, "unchanged": False}

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

    # ------------------------------------------------------------------ the bank's embedder

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

    # ------------------------------------------------------------------ embedding cache

    @_mapped
    def put_embeddings(
        self, model: str, ids: Sequence[str], vectors: np.ndarray, *, skip_missing: bool = False
    ) -> None:
        """Cache one float32 vector per stored edge id for ``model`` (replacing older ones).
        An id that is not stored raises, or with ``skip_missing`` is skipped (erased meanwhile)."""
        ids = list(ids)
        v = self._check_vectors(model, ids, vectors, "put_embeddings")
        with self._write() as conn:
            found = self._existing(conn, ids)
            keep = []
            for i, fid in enumerate(ids):
                if fid in found:
                    keep.append(i)
                elif not skip_missing:
                    raise StoreError(f"put_embeddings: ids[{i}]: edge {fid!r} is not stored")
            self._put_vectors(conn, model, [ids[i] for i in keep], v[keep], "put_embeddings")

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

    # ------------------------------------------------------------------ reads

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
    def _load(self) -> _Loaded:
        """All edges (insertion order) with their recorded_at and column arrays, and all
        transitions, read in one read transaction (a consistent cut: whole batches only).

        Cached per store version; after appends only the new rows are read (rows are never
        updated except by an erase, which bumps the ``erasures`` counter: then it reloads). A
        fresh load starts from the bank's index (:meth:`use_index`): only the rows after its
        segments are read from SQLite; a writable store then adds them to the index."""
        index = self._index
        with self._lock:
            conn = self.conn
            conn.execute("BEGIN")
            try:
                version = int(conn.execute("SELECT value FROM meta WHERE key='version'").fetchone()[0])
                old = self._load_cache
                if old is not None and old.version == version:
                    return old
                erow = conn.execute("SELECT value FROM meta WHERE key='erasures'").fetchone()
                rrow = conn.execute("SELECT value FROM meta WHERE key='releases'").fetchone()
                # an erase or a release changes rows already read: either one means a full reload
                erasures = ("" if erow is None else str(erow[0])) + "/" + ("" if rrow is None else str(rrow[0]))
                released = frozenset(
                    {r[0] for r in conn.execute("SELECT edge_id FROM releases")}
                    if rrow is not None and _has_releases(conn)
                    else set()
                )
                if old is not None and old.erasures != erasures:
                    old = None
                count = int(conn.execute("SELECT COUNT(*) FROM edges").fetchone()[0])
                segments: tuple[Rows, ...] = ()
                if old is None and index is not None:
                    segments = tuple(
                        index.load(
                            self._bank_id(conn),
                            int(erow[0]) if erow is not None else 0,
                            lambda hi: int(
                                conn.execute("SELECT COUNT(*) FROM edges WHERE seq <= ?", (hi,)).fetchone()[0]
                            ),
                        )
                    )
                since = 0 if old is None else old.max_seq
                if segments:
                    since = segments[-1].hi
                columns = _edge_columns(self.schema)
                rows = conn.execute(f"SELECT seq, {columns} FROM edges WHERE seq > ? ORDER BY seq", (since,)).fetchall()
                n_before = (len(old.cols["ids"]) if old is not None else 0) + sum(s.n for s in segments)
                if n_before + len(rows) != count:
                    old, since, segments = None, 0, ()
                    rows = conn.execute(f"SELECT seq, {columns} FROM edges ORDER BY seq").fetchall()
                tsince = 0 if old is None else old.max_tseq
                trows = conn.execute(
                    "SELECT seq, edge_id, kind, effective_at, recorded_at, "
                    "reason FROM transitions WHERE seq > ? ORDER BY seq",
                    (tsince,),
                ).fetchall()
            finally:
                conn.execute("COMMIT")
        new_edges = _with_releases([_row_to_record(r[1:]) for r in rows], released)
        new_seq = np.array([r[0] for r in rows], dtype=np.int64)
        new_rec = np.array([r[14] for r in rows], dtype="datetime64[us]")
        new_cols = edge_columns(new_edges)
        new_cols["users"] = np.array([e.user for e in new_edges] or [OWNER], dtype=object)[: len(new_edges)]
        new_life = row_lifecycle(new_edges)
        new_links: list[Mapping[str, tuple[str, ...]]] = [e.links for e in new_edges]
        new_trs = [
            Transition(e, k, datetime.fromisoformat(eff), datetime.fromisoformat(rec), why)
            for _s, e, k, eff, rec, why in trows
        ]
        if old is None:
            parts_cols = [s.cols for s in segments] + [new_cols]
            cols = concat_columns(parts_cols[0], *parts_cols[1:]) if len(parts_cols) > 1 else new_cols
            if segments and released:
                cols["quarantined"] = cols["quarantined"] & ~np.isin(cols["ids"], list(released))
            recorded = np.concatenate([s.recorded for s in segments] + [new_rec])
            life = {
                k: np.concatenate(
                    [s.life[k] if k != "confidence" else s.cols["confidence"] for s in segments] + [new_life[k]]
                )
                for k in new_life
            }
            links = _links_column([x for s in segments for x in s.links]) + new_links
            records, seqs, trs = new_edges, new_seq, new_trs
            slot_vocab: dict[str, int] = {}
            codes = [_segment_slot_codes(seg, slot_vocab) for seg in segments]
            row_codes = np.concatenate([*codes, slot_codes([e.slot for e in new_edges], slot_vocab)])
        else:
            cols = concat_columns(old.cols, new_cols)
            recorded = np.concatenate([old.recorded, new_rec])
            life = {k: np.concatenate([old.life[k], new_life[k]]) for k in new_life}
            links = old.links + new_links
            segments = old.segments
            records, seqs = old.records + new_edges, np.concatenate([old.seqs, new_seq])
            trs = old.transitions + new_trs
            slot_vocab = dict(old.slot_vocab)  # the old load's stays as it was (its readers may be in threads)
            row_codes = np.concatenate([old.slot_codes, slot_codes([e.slot for e in new_edges], slot_vocab)])
        loaded = _Loaded(
            version=version,
            erasures=erasures,
            max_seq=rows[-1][0] if rows else (since if old is None else old.max_seq),
            max_tseq=trows[-1][0] if trows else tsince,
            n=len(cols["ids"]),
            recorded=recorded,
            cols=cols,
            life=life,
            links=links,
            transitions=trs,
            released=released,
            segments=segments,
            records=records,
            seqs=seqs,
            slot_codes=row_codes,
            slot_vocab=slot_vocab,
        )
        if index is not None and not self.readonly and loaded.records:
            loaded = self._extend_index(loaded, rows)
        with self._lock:
            self._load_cache = loaded
            self._recent[version] = loaded
            while len(self._recent) > 2:
                self._recent.popitem(last=False)
        return loaded

    def _bank_id(self, conn: sqlite3.Connection) -> str | None:
        """What names this bank in its index: the creation time recorded in ``meta``."""
        row = conn.execute("SELECT value FROM meta WHERE key='created_at'").fetchone()
        return None if row is None else str(row[0])

    def _extend_index(self, loaded: _Loaded, rows: list[tuple]) -> _Loaded:
        """Add the rows of ``loaded`` read from SQLite to the bank's index (when they are the
        rows of this load and every one has its vector); returns ``loaded`` with them as a
        segment. Anything else leaves both as they are."""
        index = self._index
        assert index is not None
        k = loaded.indexed
        recs = loaded.records
        if len(rows) != len(recs) or not rows:
            return loaded  # rows read by earlier loads are still outside: the next fresh load indexes them
        ids = [e.id for e in recs]
        vecs, missing = self.get_embeddings(index.spec.model, ids)
        if missing or vecs.shape[1] != index.spec.dim:
            return loaded
        sl = slice(k, loaded.n)
        # copies, not views: a view would keep this version's whole column arrays alive
        cols = {key: v[sl].copy() for key, v in loaded.cols.items()}
        cols["quarantined"] = np.array([bool(r[13]) for r in rows], dtype=bool)  # as stored; releases apply on load
        life = {key: v[sl].copy() for key, v in loaded.life.items()}
        tokens = tokenize_many([index.spec.normalize(e.text) for e in recs])
        covered = loaded.segments[-1].hi if loaded.segments else 0
        raw = [tuple(r[1:]) for r in rows]
        seg = Rows(
            lo=covered + 1,
            hi=int(rows[-1][0]),
            seq=loaded.seqs.copy(),
            cols=cols,
            recorded=loaded.recorded[sl].copy(),
            life={key: life[key] for key in LIFE_COLUMNS},
            links=[r[8] for r in raw],  # the links column as stored
            vectors=vecs,
            postings=Postings.build(tokens),
            raw=raw,
        )
        with self._lock:
            bank_id = self._bank_id(self.conn)
            erow = self.conn.execute("SELECT value FROM meta WHERE key='erasures'").fetchone()
        if bank_id is None:
            return loaded
        if not index.append(seg, bank_id, int(erow[0]) if erow is not None else 0, covered):
            return loaded
        seg.cols = dict(seg.cols, quarantined=loaded.cols["quarantined"][sl].copy())
        # indexed: drop this process's copies of what the index and SQLite now hold
        seg.vectors = np.zeros((0, index.spec.dim), dtype=np.float32)
        seg.raw = functools.partial(self._raw_rows, seg.lo, seg.hi)
        return dataclasses.replace(
            loaded, segments=loaded.segments + (seg,), records=[], seqs=np.zeros(0, np.int64), derived=loaded.derived
        )

    def _raw_rows(self, lo: int, hi: int) -> list[tuple]:
        """The stored rows with sequence numbers lo … hi, as the index's raw rows."""
        with self._lock:
            rows = self.conn.execute(
                f"SELECT {_edge_columns(self.schema)} FROM edges WHERE seq BETWEEN ? AND ? ORDER BY seq", (lo, hi)
            ).fetchall()
        return [tuple(r) for r in rows]

    def use_index(self, spec: IndexSpec | None) -> None:
        """Keep (and read) the bank's index beside its file for ``spec`` (:mod:`frcore.bank.storage._index`;
        ``None``: none). A scratch (``:memory:``) store has none."""
        with self._lock:
            self._index = None if spec is None or self.path == ":memory:" else BankIndex(self.path, spec, self.readonly)
            self._load_cache = None
            self._recent.clear()
            self._snap_cache.clear()

    def distrust_index(self) -> None:
        """Stop reading the bank's index (it was found damaged): this store reads SQLite from
        now on; a writable one scrubs the index, which the next process to open the bank for
        writing rebuilds."""
        with self._lock:
            index, self._index = self._index, None
            self._load_cache = None
            self._recent.clear()
            self._snap_cache.clear()
        if index is not None and not self.readonly:
            with contextlib.suppress(OSError):
                index.scrub()

    def ann_index(self, cfg):
        """The bank index's approximate index for ``cfg`` (:meth:`frcore.bank.storage._index.BankIndex.ann`),
        or ``None``."""
        index = self._index
        return None if index is None else index.ann(cfg)

    def update_ann(self, cfg, complete: bool = False) -> bool:
        """Build or extend the approximate index when due (a writable store with an index)."""
        index = self._index
        return index is not None and not self.readonly and index.update_ann(cfg, complete)

    def sync_index(self) -> None:
        """Bring the bank's index up to date with the stored rows (a writable store with an
        index; called after each add so that the next process to open the bank reads them
        from it)."""
        if self._index is not None and not self.readonly:
            self._load()

    def row_sources(self, version: int | None) -> tuple[np.ndarray, list[Postings]] | None:
        """The vector matrix and the BM25 postings (one part per segment) of every row of the
        store as read at ``version``, in row order, when the index holds all of them; else ``None``."""
        if version is None:
            return None
        with self._lock:
            loaded = self._recent.get(version)
            index = self._index
        if loaded is None or loaded.records or not loaded.segments or index is None:
            return None
        matrix = loaded.derived.get("vectors")
        if matrix is None:
            try:
                matrix = loaded.derived["vectors"] = index.matrix(loaded.indexed)
            except (OSError, ValueError):
                return None
        return matrix, [s.postings for s in loaded.segments]

    def row_links(self, rows: np.ndarray, version: int | None) -> list[Mapping[str, tuple[str, ...]]] | None:
        """The links of the given rows of the store as read at ``version`` (``None``: not cached)."""
        if version is None:
            return None
        with self._lock:
            loaded = self._recent.get(version)
        if loaded is None:
            return None
        links = loaded.links
        return [links[i] for i in np.asarray(rows, dtype=np.int64).tolist()]

    def edges(
        self,
        known_at: datetime | None = None,
        include_quarantined: bool = True,
        version: int | None = None,
        *,
        user: str = OWNER,
    ) -> list[FactRecord]:
        """Stored edges of ``user`` in insertion order, optionally only those recorded by
        ``known_at``. ``version``: the edges as read at that store version (a snapshot's), if
        still cached — else the current ones."""
        loaded = None
        if version is not None:
            with self._lock:
                loaded = self._recent.get(version)
        if loaded is None:
            loaded = self._load()
        edges = loaded.edges
        if known_at is not None:
            k = np.datetime64(_time(known_at, "known_at"), "us")
            edges = [e for e, r in zip(edges, loaded.recorded <= k) if r]
        edges = [e for e in edges if e.user == user]
        if not include_quarantined:
            edges = [e for e in edges if not e.quarantined]
        return list(edges)

    def transitions(self, known_at: datetime | None = None, *, user: str = OWNER) -> list[Transition]:
        """Recorded lifecycle transitions of the facts of ``user``, optionally only those recorded
        by ``known_at``."""
        loaded = self._load()
        mine = set(loaded.cols["ids"][self._user_mask(loaded, user)].tolist())
        trs = [t for t in loaded.transitions if t.edge_id in mine]
        if known_at is not None:
            k = _time(known_at, "known_at")
            trs = [t for t in trs if t.recorded_at <= k]
        return list(trs)

    def slot_facts(
        self, slot: str, known_at: datetime | None = None, *, user: str = OWNER
    ) -> list[tuple[FactRecord, datetime]]:
        """The facts of ``user`` stored under ``slot`` (recorded by ``known_at``, if given), each
        with its recorded_at, in the order stored."""
        loaded = self._load()
        mask = (loaded.cols["slots"] == slot) & self._user_mask(loaded, user)
        if known_at is not None:
            mask &= loaded.recorded <= np.datetime64(_time(known_at, "known_at"), "us")
        return [(loaded.record(int(i)), loaded.recorded[i].item()) for i in np.flatnonzero(mask)]

    def summary(self, *, user: str = OWNER) -> dict[str, int]:
        """Counts of the facts of ``user``: ``facts`` and ``turns`` (by kind), distinct ``slots``,
        ``retractions`` (recorded retract transitions)."""
        loaded = self._load()
        mine = self._user_mask(loaded, user)
        kinds = loaded.cols["kinds"][mine]
        slots = loaded.cols["slots"][mine]
        ids = set(loaded.cols["ids"][mine].tolist())
        return {
            "facts": int(np.count_nonzero(kinds == "fact")),
            "turns": int(np.count_nonzero(kinds == "turn")),
            "slots": len({x for x in slots.tolist() if x}),
            "retractions": sum(1 for t in loaded.transitions if t.kind == "retract" and t.edge_id in ids),
        }

    def snapshot(
        self, at: datetime, known_at: datetime | None = None, include_quarantined: bool = False, *, user: str = OWNER
    ) -> Snapshot:
        """:func:`frcore.bank.records._lifecycle.snapshot` over the facts of ``user`` in this store (their
        lifecycle derived among themselves: a slot is one user's), cached per (at, known_at,
        include_quarantined, user, store version)."""
        at_n = _time(at, "at")
        known_n = None if known_at is None else _time(known_at, "known_at")
        loaded = self._load()
        key = (at_n, known_n, bool(include_quarantined), user, loaded.version)
        with self._lock:
            hit = self._snap_cache.get(key)
            if hit is not None:
                self._snap_cache.move_to_end(key)
                return hit
        mask = np.ones(loaded.n, dtype=bool)
        trs = loaded.transitions
        if known_n is not None:
            mask &= loaded.recorded <= np.datetime64(known_n, "us")
            trs = [t for t in trs if t.recorded_at <= known_n]
        if not include_quarantined:
            mask &= ~loaded.cols["quarantined"]
        mask &= self._user_mask(loaded, user)
        idx = np.flatnonzero(mask)
        with self._lock:  # the per-version derivation cache is shared by threads
            index, life = loaded.lifecycle()
        codes = life.slot  # of every row (a subset's are equal exactly when its slots are)
        retract_rows = retracted_by_transitions(trs, at_n, index)
        if idx.size != loaded.n:  # a subset: positions and links among its edges only
            local = np.full(loaded.n, -1, dtype=np.int64)
            local[idx] = np.arange(idx.size)
            retract_rows = local[retract_rows]
            retract_rows = retract_rows[retract_rows >= 0]
            life = life.take(idx)
        state = states_from_columns(life, at_n, retract_rows)
        keep = state != INVISIBLE
        rows = idx[keep]
        every = rows.size == loaded.n  # ascending positions: all of them means 0 … n-1
        snap = snapshot_from_columns(
            loaded.cols, rows, state[keep], at_n, known_n, loaded.version, index if every else None, codes
        )
        with self._lock:
            self._snap_cache[key] = snap
            while len(self._snap_cache) > SNAPSHOT_CACHE_SIZE:
                self._snap_cache.popitem(last=False)
        return snap

    def _user_mask(self, loaded: _Loaded, user: str) -> np.ndarray:
        """(n,) bool: the edges of ``loaded`` that are facts of ``user`` (derived once per version)."""
        with self._lock:
            masks = loaded.derived.setdefault("users", {})
            got = masks.get(user)
            if got is None:
                got = masks[user] = np.asarray(loaded.cols["users"] == user, dtype=bool).reshape(loaded.n)
            return got

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

    def export(self, *, user: str = OWNER) -> dict[str, Any]:
        """Everything of ``user``, JSON-able: schema version, the recorded embedder, the user's
        edges (with recorded_at; ``quarantined``: held out of retrieval now; ``user`` for a user
        other than the owner), their transitions and releases from quarantine, the audit records
        of the user's erasures, and ``user`` (``None`` for the owner)."""
        loaded = self._load()
        mine = {e.id for e in loaded.edges if e.user == user}
        trs = [t for t in loaded.transitions if t.edge_id in mine]
        out_edges = []
        for e, r in zip(loaded.edges, loaded.recorded.tolist()):
            if e.user != user:
                continue
            d = e.to_json()
            d["recorded_at"] = iso_text(r)
            out_edges.append(d)
        return {
            "schema_version": self.schema,
            "version": self.version(),
            "edges": out_edges,
            "transitions": [
                {
                    "edge_id": t.edge_id,
                    "kind": t.kind,
                    "effective_at": iso_text(t.effective_at),
                    "recorded_at": iso_text(t.recorded_at),
                    "reason": t.reason,
                }
                for t in trs
            ],
            "releases": [r for r in self._releases() if r["edge_id"] in mine],
            "audit": self.audit_log(user=user),
            "user": None if user == OWNER else user,
            "embedder": None if (emb := self.recorded_embedder()) is None else {"name": emb[0], "dim": emb[1]},
        }

    @_mapped
    def _releases(self) -> list[dict[str, Any]]:
        with self._lock:
            if not _has_releases(self.conn):
                return []
            rows = self.conn.execute("SELECT edge_id, released_at, reason FROM releases ORDER BY seq").fetchall()
        return [{"edge_id": e, "released_at": t, "reason": why} for e, t, why in rows]

    @_mapped
    def integrity_check(self) -> str:
        """``PRAGMA integrity_check`` ("ok" when sound)."""
        with self._lock:
            return str(self.conn.execute("PRAGMA integrity_check").fetchone()[0])


# ----------------------------------------------------------------------------- benchmark


def synthetic_facts(n: int, seed: int = 0, prefix: str = "bench") -> list[dict[str, Any]]:
    """``n`` synthetic fact dicts (random categories, slots, times; some links) for benchmarks."""
    from ..._ontology import CATEGORY_NAMES

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
