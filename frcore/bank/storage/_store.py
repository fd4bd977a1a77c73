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
one read transaction, so it always sees whole batches."""

from __future__ import annotations

import os
import sqlite3
import stat
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from ..._shown import shown
from ..._time import now
from ..records import (
    OWNER,
    FactRecord,
)
from ._batch import Batch, parse_batch, quarantine_findings
from ._common import (
    ERASE_PURGE_WAIT,
    Added,
    StoreError,
    _check_text_arg,
    _differs,
    _encode,
    _mapped,
    _Retry,
    _row_to_record,
    _scrub,
    erased_bytes_remaining,
    held_elsewhere,
    id_hash,
    iso_text,
    shown_user,
    storage_error,
)
from ._index import FORMAT_WORDS, BankIndex
from ._loading import (
    _Loading,
)
from ._schema import (
    _EDGE_COLUMNS,
    _SQLITE_HEADER,
    _inspect,
)


class Store(_Loading):
    """A persistent, append-only, bi-temporal FR-Bank store (see the module docstring).

    Open with :meth:`Store.open`; use as a context manager or call :meth:`close`.
    """

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

    @_mapped
    def add_facts(
        self,
        facts: Iterable[FactRecord | Mapping[str, Any]],
        recorded_at: datetime | None = None,
        *,
        vectors: tuple[str, np.ndarray] | None = None,
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
        naming it. ``vectors = (model, (n, d) array)``, if given, holds one vector per fact of the
        batch, in its order: a new fact's is written in the same transaction, so a stored fact
        never lacks its vector, and an unchanged fact stored without one (by an older bank) gets
        it. ``facts`` may be a :class:`Batch` already validated (:func:`parse_batch`). After the
        commit the bank's index takes the new rows. A
        fact whose text, id, slot or speaker reads as an instruction to the model
        (:func:`frcore.bank.records._facts.injection_finding`, checked before any lock is taken)
        is stored quarantined and listed in ``.quarantined`` of the result.
        ``recorded_at`` is the transaction time (default: now, UTC).

        Users: each fact belongs to its ``user`` (absent: the owner, :data:`OWNER`). ``user``, if
        given, is the user the batch is written for: a fact that names no user becomes theirs, a
        fact of another user is refused (field ``user``). A link may only name a fact of the same
        user. Ids are unique across the bank's users: an id stored for another user is refused
        (without saying whose it is).
        """
        if self.readonly:
            raise StoreError(f"{self.path}: opened read-only; nothing was written", "readonly")
        batch = facts if isinstance(facts, Batch) else parse_batch(list(facts), where, user, recorded_at)
        records, labels, seen, rec_at = batch.records, batch.labels, batch.seen, batch.recorded_at
        if not records:
            return Added()
        given = (
            None
            if vectors is None
            else (vectors[0], self._check_vectors(vectors[0], [r.id for r in records], vectors[1]))
        )
        findings = batch.findings if batch.findings is not None else quarantine_findings(records)
        ids = [r.id for r in records]
        users = {r.id: r.user for r in records}
        # read the bank before writing to it: the load that follows the write reads the same
        # rows, and a damaged file then fails here, with nothing written, not after the commit
        self.sync_index()
        for _attempt in range(5):
            with self._lock:
                stored = self._stored(self.conn, ids)
                new = self._classify(records, stored, labels)
                if new:
                    self._check_links(self.conn, new, seen, labels, users)
            if not new:
                self._backfill(records, set(), given)
                return Added([], [r.id for r in records], warnings=batch.warnings)
            rows = {r.id: i for i, r in enumerate(records)}
            new_vectors = None if given is None else (given[0], given[1][[rows[r.id] for r in new]])
            try:
                with self._write() as conn:
                    if self._stored(conn, ids).keys() != stored.keys():
                        raise _Retry
                    self._check_links(conn, new, seen, labels, users)
                    self._insert(conn, new, rec_at, new_vectors)
            except _Retry:
                continue
            new_ids = {r.id for r in new}
            warnings = [*batch.warnings, *self._erased_again(new, [labels[rows[r.id]] for r in new])]
            if new_vectors is not None:
                self._written = (new_vectors[0], [r.id for r in new], new_vectors[1])
            self._backfill(records, new_ids, given)
            try:
                self.sync_index()
            except StoreError as e:  # committed: the add completed; only its index is behind
                warnings.append(
                    f"{self.path}: the facts were stored, but reading the bank back failed ({e.kind}): "
                    f"its index was not brought up to date"
                )
            finally:
                self._written = None
            held = [
                {"id": r.id, "field": findings[r.id][0], "rule": findings[r.id][1], "slot": r.slot}
                for r in records
                if r.id in new_ids and r.id in findings
            ]
            return Added(
                [r.id for r in records if r.id in new_ids],
                [r.id for r in records if r.id not in new_ids],
                held,
                warnings,
            )
        raise StoreError(
            f"{self.path}: the stored ids kept changing while this batch was added (concurrent writers); retry", "busy"
        )

    def _backfill(self, records: list[FactRecord], new_ids: set[str], given) -> None:
        """Write the given vectors of the batch's unchanged facts that have none under that model
        (a retry of a batch stored by an older bank without its vectors)."""
        if given is None:
            return
        model, vecs = given
        old = [i for i, r in enumerate(records) if r.id not in new_ids]
        if not old:
            return
        _, missing = self.get_embeddings(model, [records[i].id for i in old])
        if missing:
            lacking = set(missing)
            keep = [i for i in old if records[i].id in lacking]
            self.put_embeddings(model, [records[i].id for i in keep], vecs[keep], skip_missing=True)

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
                    f"{labels[i]}: fact {shown(r.id)}: field 'id': already in use in this bank; use a new id "
                    "(ids are unique across the bank's users)"
                )
            diff = _differs(old, r)
            if diff:
                raise StoreError(
                    f"{labels[i]}: fact {shown(r.id)}: field 'id': already stored with different content "
                    f"({', '.join(diff)} differ); "
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
                            f"{labels[seen[r.id]]}: fact {shown(r.id)}: field 'links': {kind} target {shown(t)} "
                            "is neither stored nor in the batch"
                            + ("" if r.user == OWNER else f" (for user {shown(r.user)})")
                        )
                    if target_user != r.user:
                        raise StoreError(
                            f"{labels[seen[r.id]]}: fact {shown(r.id)}: field 'links': {kind} target {shown(t)} "
                            f"is a fact of another user ({shown_user(target_user)}, not {shown_user(r.user)}); links "
                            "only name facts of the same user"
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

    @_mapped
    def existing(self, ids: Sequence[str], user: str = OWNER) -> set[str]:
        """The ids among ``ids`` that are stored now as facts of ``user``."""
        with self._lock:
            return {i for i, u in self._owners(self.conn, list(ids)).items() if u == user}

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
        (default: the transaction time). The edge stays stored, masked from then on. ``at`` and
        ``recorded_at`` are naive-UTC datetimes, parsed by the caller (:mod:`frcore._time`)."""
        _check_text_arg(edge_id, "edge_id", "retract")
        _check_text_arg(reason, "reason", "retract")
        rec_at = now() if recorded_at is None else recorded_at
        eff = rec_at if at is None else at
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
        readers), the index folder's files that held the fact are scrubbed, and every file the
        bank owns is scanned for the fact's id, text and retraction reasons. Returns the audit
        record plus ``purged``: True when the scan found none of them (except where another
        fact still holds the same string) in the database, ``-wal``, ``-shm`` or index files;
        False when readers blocked the checkpoint — the erase is committed, the purge pending
        (``note`` says so) until :meth:`purge` or the next write finishes it — or when a file
        still holds one (``remaining`` names them; ``note`` says so in one line).
        """
        _check_text_arg(edge_id, "edge_id", "erase")
        _check_text_arg(reason, "reason", "erase")
        erased_at = now()
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
            # what the files must no longer hold once it is erased: its id, text and reasons
            erased = [edge_id, conn.execute("SELECT text FROM edges WHERE id=?", (edge_id,)).fetchone()[0]]
            erased += [r[0] for r in conn.execute("SELECT reason FROM transitions WHERE edge_id=?", (edge_id,)) if r[0]]
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
        return out | self._verified_purge(purge, erased)

    def _erased_again(self, new: Sequence[FactRecord], labels: Sequence[str]) -> list[str]:
        """One warning per newly stored fact whose id an erase's audit record names (its salted
        hash, :func:`id_hash`, matches): re-adding a file after an erase stores the erased fact
        again, and the owner is told so. Cost: one hash per erase record per new fact."""
        with self._lock:
            audit = self.conn.execute("SELECT id_hash, salt, erased_at FROM audit WHERE action='erase'").fetchall()
        if not audit:
            return []
        out = []
        for r, label in zip(new, labels):
            when = next((at for h, salt, at in audit if id_hash(r.id, bytes.fromhex(salt)) == h), None)
            if when is not None:
                out.append(
                    f"{label}: fact {shown(r.id)}: field 'id': a fact with this id was erased on {when} "
                    f"(audit record); it is stored again"
                )
        return out

    def _verified_purge(self, purge: dict[str, Any], erased: list[str]) -> dict[str, Any]:
        """``purge`` (:meth:`purge`'s report) checked against the files: every file the bank owns
        (:func:`frcore.bank.storage._common.bank_files`) is scanned for the erased strings;
        ``remaining`` names those that still hold one, and ``purged`` is True only when none does."""
        with self._lock:
            conn = self.conn
            remaining = erased_bytes_remaining(
                self.path, erased, lambda s: s.lower() in FORMAT_WORDS or held_elsewhere(conn, s)
            )
        if not remaining:
            if purge["purged"]:
                note = "purged: no byte of the erased fact remains in the bank, its -wal, -shm or index files (scanned)"
                return {"purged": True, "note": note, "remaining": []}
            return purge | {"remaining": []}
        shown = ", ".join(remaining[:3]) + (f" and {len(remaining) - 3} more" if len(remaining) > 3 else "")
        note = f"{purge['note']}; not purged: the erased fact's bytes remain in {shown}"
        if purge["purged"]:
            note = f"erased; not purged: the erased fact's bytes remain in {shown}"
        return {"purged": False, "note": note, "remaining": remaining}

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
        rel_at = now() if released_at is None else released_at
        with self._write() as conn:
            self._require(conn, edge_id, "release", user)
            row = conn.execute("SELECT quarantined FROM edges WHERE id=?", (edge_id,)).fetchone()
            if not row[0]:
                raise StoreError(f"release: edge_id {shown(edge_id)}: not quarantined; nothing to release")
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
                    raise StoreError(f"put_embeddings: ids[{i}]: edge {shown(fid)} is not stored")
            self._put_vectors(conn, model, [ids[i] for i in keep], v[keep], "put_embeddings")
