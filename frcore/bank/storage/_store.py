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
``-wal`` or ``-shm`` file. The deletion's cost does not grow with the bank (no VACUUM; new banks
use ``auto_vacuum=INCREMENTAL`` and release the freed pages); the check that follows does: every
file the bank owns (its index folder included) is scanned for the erased id, text and reasons,
and ``purged`` is reported True only when none is found. A checkpoint blocked by readers leaves
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

Parts: :class:`Store` holds four collaborators and passes each public call to one of them —
:class:`~._handle.Handle` (``store.handle``: opening, the connection and its lock, the write
transaction, the purge), :class:`~._tables.Tables` (``store.tables``: reads straight from SQLite),
:class:`~._loading.Loads` (``store.loads``: the rows loaded per version, the bank's index,
snapshots and every read built on them) and :class:`~._writes.Writes` (``store.writes``: add,
retract, erase, release, vectors); the schema is functions over a connection
(:mod:`._schema`). Each part works, and is tested, without the others above it."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..records import OWNER, FactRecord, Snapshot, Transition
from ._common import ERASE_PURGE_WAIT, Added
from ._handle import Handle
from ._index import BankIndex, IndexSpec
from ._loaded import _Loaded
from ._loading import Loads, ReadView, Tokenize
from ._tables import Tables
from ._writes import Writes

_F = TypeVar("_F", bound=Callable[..., Any])


def _doc(of: Callable[..., Any]) -> Callable[[_F], _F]:
    """The docstring of the part's method ``of`` on the store's method that passes the call to it."""

    def put(fn: _F) -> _F:
        fn.__doc__ = of.__doc__
        return fn

    return put


class Store:
    """A persistent, append-only, bi-temporal FR-Bank store (see the module docstring).

    Open with :meth:`Store.open`; use as a context manager or call :meth:`close`. The work is
    its parts': :attr:`handle`, :attr:`tables`, :attr:`loads`, :attr:`writes`.
    """

    def __init__(self, handle: Handle) -> None:
        #: the connection, its lock and the write transaction
        self.handle = handle
        #: what is read straight from SQLite
        self.tables = Tables(handle)
        #: the rows loaded per version, the index, snapshots; a query's stored vectors are read
        #: through this store's :meth:`all_embeddings` (a wrapper of it sees that read)
        self.loads = Loads(handle, self.tables, lambda model: self.all_embeddings(model))
        #: add, retract, erase, release, vectors
        self.writes = Writes(handle, self.tables, self.loads)

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
        return cls(Handle.open(path, timeout, readonly=readonly, create=create, embedder=embedder))

    # the handle: the file, the connection, the transaction counter, the purge

    @property
    def path(self) -> str:
        return self.handle.path

    @property
    def readonly(self) -> bool:
        """Opened with ``readonly=True``: every write raises :class:`StoreError` (kind ``readonly``)."""
        return self.handle.readonly

    @property
    def schema(self) -> int:
        """The schema version of the bank as opened."""
        return self.handle.schema

    @property
    def conn(self) -> sqlite3.Connection:
        return self.handle.conn

    @_doc(Handle.close)
    def close(self) -> None:
        self.handle.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @_doc(Handle.version)
    def version(self) -> int:
        return self.handle.version()

    @_doc(Handle.integrity_check)
    def integrity_check(self) -> str:
        return self.handle.integrity_check()

    @_doc(Handle.purge)
    def purge(self, timeout: float = 10.0) -> dict[str, Any]:
        return self.handle.purge(timeout)

    @_doc(Handle.purge_pending)
    def purge_pending(self) -> bool:
        return self.handle.purge_pending()

    # the tables, read straight from SQLite

    @_doc(Tables.recorded_embedder)
    def recorded_embedder(self) -> tuple[str, int] | None:
        return self.tables.recorded_embedder()

    @_doc(Tables.embedding_models)
    def embedding_models(self) -> dict[str, int]:
        return self.tables.embedding_models()

    @_doc(Tables.get_embeddings)
    def get_embeddings(self, model: str, ids: Sequence[str]) -> tuple[np.ndarray, list[str]]:
        return self.tables.get_embeddings(model, ids)

    @_doc(Tables.all_embeddings)
    def all_embeddings(self, model: str) -> tuple[list[str], np.ndarray]:
        return self.tables.all_embeddings(model)

    @_doc(Tables.count)
    def count(self, include_quarantined: bool = True, *, user: str = OWNER) -> int:
        return self.tables.count(include_quarantined, user=user)

    @_doc(Tables.existing)
    def existing(self, ids: Sequence[str], user: str = OWNER) -> set[str]:
        return self.tables.existing(ids, user)

    @_doc(Tables.quarantine)
    def quarantine(self, include_released: bool = False, *, user: str = OWNER) -> list[dict[str, Any]]:
        return self.tables.quarantine(include_released, user=user)

    @_doc(Tables.audit_log)
    def audit_log(self, *, user: str = OWNER) -> list[dict[str, Any]]:
        return self.tables.audit_log(user=user)

    @_doc(Tables.was_erased)
    def was_erased(self, edge_id: str, *, user: str = OWNER) -> bool:
        return self.tables.was_erased(edge_id, user=user)

    # the loads: the rows at a version, the bank's index, and the reads built on them

    @_doc(Loads.use_index)
    def use_index(self, spec: IndexSpec | None, tokenize: Tokenize | None = None) -> None:
        self.loads.use_index(spec, tokenize)

    @_doc(Loads.distrust_index)
    def distrust_index(self) -> None:
        self.loads.distrust_index()

    @property
    def index_folder(self) -> BankIndex | None:
        """The bank's index folder (``None``: a store that keeps none), for the layers that build
        files over its rows (:class:`frcore.bank.search.ApproximateFiles`)."""
        return self.loads.index

    def sync_index(self) -> None:
        """Bring the bank's index up to date with the stored rows (a writable store with an
        index; called after each add so that the next process to open the bank reads them
        from it)."""
        self.loads.sync_index()

    @_doc(Loads.read)
    def read(
        self,
        at: datetime,
        known_at: datetime | None = None,
        include_quarantined: bool = False,
        *,
        user: str = OWNER,
        approximate: Callable[[], Any] | None = None,
        embedding_key: str | None = None,
    ) -> ReadView:
        return self.loads.read(
            at, known_at, include_quarantined, user=user, approximate=approximate, embedding_key=embedding_key
        )

    @_doc(Loads.snapshot)
    def snapshot(
        self, at: datetime, known_at: datetime | None = None, include_quarantined: bool = False, *, user: str = OWNER
    ) -> Snapshot:
        return self.loads.snapshot(at, known_at, include_quarantined, user=user)

    @_doc(Loads.edges)
    def edges(
        self, known_at: datetime | None = None, include_quarantined: bool = True, *, user: str = OWNER
    ) -> list[FactRecord]:
        return self.loads.edges(known_at, include_quarantined, user=user)

    @_doc(Loads.transitions)
    def transitions(self, known_at: datetime | None = None, *, user: str = OWNER) -> list[Transition]:
        return self.loads.transitions(known_at, user=user)

    @_doc(Loads.slot_facts)
    def slot_facts(
        self, slot: str, known_at: datetime | None = None, *, user: str = OWNER
    ) -> list[tuple[FactRecord, datetime]]:
        return self.loads.slot_facts(slot, known_at, user=user)

    @_doc(Loads.summary)
    def summary(self, *, user: str = OWNER) -> dict[str, int]:
        return self.loads.summary(user=user)

    @_doc(Loads.export)
    def export(self, *, user: str = OWNER) -> dict[str, Any]:
        return self.loads.export(user=user)

    # the writes

    @_doc(Writes.add_facts)
    def add_facts(
        self,
        facts: Iterable[FactRecord | Mapping[str, Any]],
        recorded_at: datetime | None = None,
        *,
        vectors: tuple[str, np.ndarray] | None = None,
        tokens: Sequence[list[str]] | None = None,
        where: Sequence[str] | None = None,
        user: str | None = None,
    ) -> Added:
        return self.writes.add_facts(facts, recorded_at, vectors=vectors, tokens=tokens, where=where, user=user)

    @_doc(Writes.retract)
    def retract(
        self,
        edge_id: str,
        at: datetime | None = None,
        reason: str | None = None,
        recorded_at: datetime | None = None,
        *,
        user: str = OWNER,
    ) -> None:
        self.writes.retract(edge_id, at, reason, recorded_at, user=user)

    @_doc(Writes.erase)
    def erase(
        self, edge_id: str, reason: str | None = None, *, wait: float = ERASE_PURGE_WAIT, user: str = OWNER
    ) -> dict[str, Any]:
        return self.writes.erase(edge_id, reason, wait=wait, user=user)

    @_doc(Writes.release)
    def release(
        self, edge_id: str, reason: str | None = None, released_at: datetime | None = None, *, user: str = OWNER
    ) -> dict[str, Any]:
        return self.writes.release(edge_id, reason, released_at, user=user)

    @_doc(Writes.put_embeddings)
    def put_embeddings(
        self, model: str, ids: Sequence[str], vectors: np.ndarray, *, skip_missing: bool = False
    ) -> None:
        self.writes.put_embeddings(model, ids, vectors, skip_missing=skip_missing)

    # what tests and benchmarks look at inside (not for the layers above)

    def _load(self) -> _Loaded:
        """:meth:`Loads.load` (the rows of the current version)."""
        return self.loads.load()

    @property
    def _index(self) -> BankIndex | None:
        return self.loads.index

    @property
    def _lock(self):
        return self.handle.lock
