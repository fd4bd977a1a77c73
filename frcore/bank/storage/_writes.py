"""The store's writes: append a batch (with its vectors), retract, erase (the row, every mention,
the purge and the check of the files), release from quarantine, and vectors — each one write
transaction of a :class:`~frcore.bank.storage._handle.Handle`, checked before it is taken.

:class:`Writes` reads what it checks through :class:`~frcore.bank.storage._tables.Tables` and
the transaction's own connection, and after an add or an erase brings the bank's index up to
date through :class:`~frcore.bank.storage._loading.Loads` (the load that follows an add extends
the index; an erase scrubs the segments that held the fact)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from ..._shown import shown
from ..._time import now
from ..records import OWNER, FactRecord
from . import _schema, _tables
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
    _scrub,
    erased_bytes_remaining,
    held_elsewhere,
    id_hash,
    iso_text,
    shown_user,
)
from ._handle import Handle
from ._index import FORMAT_WORDS, BankIndex
from ._loading import Loads, Written
from ._schema import _EDGE_COLUMNS
from ._tables import Tables


def check_vectors(model: Any, ids: Sequence[str], vectors: Any, what: str = "vectors") -> np.ndarray:
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


def put_vectors(conn: sqlite3.Connection, model: str, ids: Sequence[str], v: np.ndarray, what: str = "vectors") -> None:
    """Inside a write transaction: store row ``i`` of ``v`` as the vector of ``ids[i]`` under
    ``model`` (replacing older ones); a dimension other than the model's stored one raises."""
    row = conn.execute("SELECT dim FROM embeddings WHERE model=? LIMIT 1", (model,)).fetchone()
    if row is not None and row[0] != v.shape[1]:
        raise StoreError(f"{what}: field 'vectors': model {model!r} stores dimension {row[0]}, got {v.shape[1]}")
    conn.executemany(
        "INSERT OR REPLACE INTO embeddings (model, id, dim, vector) VALUES (?, ?, ?, ?)",
        [(model, fid, v.shape[1], v[i].tobytes()) for i, fid in enumerate(ids)],
    )


class Writes:
    """Every write of the store, through ``handle``'s write transaction (see the module docstring
    of :mod:`frcore.bank.storage._store` for what each promises)."""

    def __init__(self, handle: Handle, tables: Tables, loads: Loads) -> None:
        self.handle = handle
        self.tables = tables
        self.loads = loads

    @_mapped
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
        commit the bank's index takes the new rows; ``tokens``, if given, holds each fact's BM25
        tokens, in the batch's order, as the index's tokenizer gives them (:meth:`Loads.use_index`):
        the index takes a new fact's instead of tokenizing its text again. A
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
        self.handle.refuse_if_readonly()
        batch = facts if isinstance(facts, Batch) else parse_batch(list(facts), where, user, recorded_at)
        records, labels, seen, rec_at = batch.records, batch.labels, batch.seen, batch.recorded_at
        if not records:
            return Added()
        given = (
            None if vectors is None else (vectors[0], check_vectors(vectors[0], [r.id for r in records], vectors[1]))
        )
        if tokens is not None and len(tokens) != len(records):
            raise StoreError(f"add_facts: field 'tokens': {len(tokens)} lists for {len(records)} facts (one per fact)")
        findings = batch.findings if batch.findings is not None else quarantine_findings(records)
        ids = [r.id for r in records]
        users = {r.id: r.user for r in records}
        # read the bank before writing to it: the load that follows the write reads the same
        # rows, and a damaged file then fails here, with nothing written, not after the commit
        self.loads.sync_index()
        for _attempt in range(5):
            with self.handle.lock:
                stored = _tables.stored(self.handle.conn, ids)
                new = self._classify(records, stored, labels)
                if new:
                    self._check_links(self.handle.conn, new, seen, labels, users)
            if not new:
                self._backfill(records, set(), given)
                return Added([], [r.id for r in records], warnings=batch.warnings)
            rows = {r.id: i for i, r in enumerate(records)}
            new_vectors = None if given is None else (given[0], given[1][[rows[r.id] for r in new]])
            try:
                with self.handle.write() as conn:
                    if _tables.stored(conn, ids).keys() != stored.keys():
                        raise _Retry
                    self._check_links(conn, new, seen, labels, users)
                    self._insert(conn, new, rec_at, new_vectors)
            except _Retry:
                continue
            new_ids = {r.id for r in new}
            warnings = [*batch.warnings, *self._erased_again(new, [labels[rows[r.id]] for r in new])]
            self._backfill(records, new_ids, given)
            written = Written(
                [r.id for r in new],
                None if new_vectors is None else new_vectors[0],
                None if new_vectors is None else new_vectors[1],
                None if tokens is None else [tokens[rows[r.id]] for r in new],
            )
            try:
                self.loads.sync_index(written)
            except StoreError as e:  # committed: the add completed; only its index is behind
                warnings.append(
                    f"{self.handle.path}: the facts were stored, but reading the bank back failed ({e.kind}): "
                    f"its index was not brought up to date"
                )
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
            f"{self.handle.path}: the stored ids kept changing while this batch was added (concurrent writers); retry",
            "busy",
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
        _, missing = self.tables.get_embeddings(model, [records[i].id for i in old])
        if missing:
            lacking = set(missing)
            keep = [i for i in old if records[i].id in lacking]
            self.put_embeddings(model, [records[i].id for i in keep], vecs[keep], skip_missing=True)

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
        found = _tables.owners(conn, targets, self.handle.schema)
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
            put_vectors(conn, model, [r.id for r in records], v)

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
        with self.handle.write() as conn:
            _tables.require(conn, self.handle.schema, edge_id, "retract", user)
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
        with self.handle.write(finish_purge=False) as conn:
            _tables.require(conn, self.handle.schema, edge_id, "erase", user)
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
            _schema.remove_mentions(conn, edge_id)
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
            purge = self.handle.purge(timeout=wait)
        except StoreError as e:  # committed: report the purge as pending, never the erase as failed
            purge = {"purged": False, "note": f"erased; purge pending ({e})"}
        if index_note is not None:
            purge = {"purged": False, "note": f"{purge['note']}; {index_note}"}
        return out | self._verified_purge(purge, erased)

    def _erased_again(self, new: Sequence[FactRecord], labels: Sequence[str]) -> list[str]:
        """One warning per newly stored fact whose id an erase's audit record names (its salted
        hash, :func:`id_hash`, matches): re-adding a file after an erase stores the erased fact
        again, and the owner is told so. Cost: one hash per erase record per new fact."""
        with self.handle.lock:
            audit = self.handle.conn.execute(
                "SELECT id_hash, salt, erased_at FROM audit WHERE action='erase'"
            ).fetchall()
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
        with self.handle.lock:
            conn = self.handle.conn
            remaining = erased_bytes_remaining(
                self.handle.path, erased, lambda s: s.lower() in FORMAT_WORDS or held_elsewhere(conn, s)
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
        if self.handle.path == ":memory:":
            return None
        try:
            index = self.loads.index or BankIndex.existing(self.handle.path)  # erased by a store keeping no index too
            if index is None:
                return None
            with self.handle.lock:
                bank_id = self.handle.bank_id()
                erasures = self.handle.erasures()
            if bank_id is None:
                index.scrub()
            else:
                index.drop_from(seq, bank_id, erasures)
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
        with self.handle.write() as conn:
            _tables.require(conn, self.handle.schema, edge_id, "release", user)
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
        v = check_vectors(model, ids, vectors, "put_embeddings")
        with self.handle.write() as conn:
            found = _tables.existing_ids(conn, ids)
            keep = []
            for i, fid in enumerate(ids):
                if fid in found:
                    keep.append(i)
                elif not skip_missing:
                    raise StoreError(f"put_embeddings: ids[{i}]: edge {shown(fid)} is not stored")
            put_vectors(conn, model, [ids[i] for i in keep], v[keep], "put_embeddings")
