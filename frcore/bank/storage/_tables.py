"""The store's reads that go straight to SQLite, through a :class:`~frcore.bank.storage._handle.Handle`:
vectors, counts, the quarantine, releases, the audit trail, the recorded embedder — and the
lookups a write transaction makes on its own connection (which ids are stored, whose)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._shown import shown
from ..records import OWNER, FactRecord, injection_finding
from ._common import StoreError, _mapped, _row_to_record, id_hash, iso_text
from ._handle import Handle
from ._schema import _EDGE_COLUMNS, has_releases, select_columns


class Tables:
    """What the stored tables hold now, read through ``handle`` (each read under its lock; no
    cache: every call reads SQLite)."""

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    @_mapped
    def recorded_embedder(self) -> tuple[str, int] | None:
        """The embedder (name, dimension) recorded for this bank, or ``None`` (not yet recorded)."""
        h = self.handle
        with h.lock:
            q = "SELECT key, value FROM meta WHERE key IN ('embedder', 'embedder_dim')"
            got = dict(h.conn.execute(q).fetchall())
        if "embedder" not in got:
            return None
        try:
            return got["embedder"], int(got.get("embedder_dim", 0))
        except ValueError:
            raise StoreError(
                f"{h.path}: a damaged FR-Bank: embedder_dim {got.get('embedder_dim')!r} is not a number", "corrupt"
            ) from None

    @_mapped
    def embedding_models(self) -> dict[str, int]:
        """The models (cache keys) that have stored vectors, with their dimension."""
        with self.handle.lock:
            q = "SELECT model, MAX(dim) FROM embeddings GROUP BY model"
            return {m: int(d) for m, d in self.handle.conn.execute(q)}

    @_mapped
    def get_embeddings(self, model: str, ids: Sequence[str]) -> tuple[np.ndarray, list[str]]:
        """Cached vectors for ``ids``: an (n, d) float32 array aligned with ``ids`` (NaN rows
        for missing ones; d = 0 if the model has no vectors) and the list of missing ids."""
        ids = list(ids)
        found: list[str] = []
        blobs: list[bytes] = []
        with self.handle.lock:
            conn = self.handle.conn
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
        with self.handle.lock:
            conn = self.handle.conn
            rows = conn.execute("SELECT id, vector FROM embeddings WHERE model=? ORDER BY rowid", (model,)).fetchall()
            row = conn.execute("SELECT dim FROM embeddings WHERE model=? LIMIT 1", (model,)).fetchone()
        d = 0 if row is None else int(row[0])
        if not rows:
            return [], np.zeros((0, d), dtype=np.float32)
        mat = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), d)
        return [r[0] for r in rows], mat.astype(np.float32, copy=False)

    @_mapped
    def count(self, include_quarantined: bool = True, *, user: str = OWNER) -> int:
        """Number of stored (not erased) edges of ``user``."""
        h = self.handle
        with h.lock:
            q = "SELECT COUNT(*) FROM edges WHERE " + ("user=?" if h.schema >= 3 else "? = ''")
            if not include_quarantined:
                q += " AND (quarantined=0" + (
                    " OR id IN (SELECT edge_id FROM releases))" if has_releases(h.conn) else ")"
                )
            return int(h.conn.execute(q, (user,)).fetchone()[0])

    @_mapped
    def existing(self, ids: Sequence[str], user: str = OWNER) -> set[str]:
        """The ids among ``ids`` that are stored now as facts of ``user``."""
        with self.handle.lock:
            return {i for i, u in owners(self.handle.conn, list(ids), self.handle.schema).items() if u == user}

    @_mapped
    def quarantine(self, include_released: bool = False, *, user: str = OWNER) -> list[dict[str, Any]]:
        """The facts of ``user`` held in quarantine (insertion order): ``id``, ``field`` and ``rule`` (what
        the detector finds in it now, :func:`frcore.bank.records._facts.injection_finding`; ``None`` if
        no rule fires any more), ``slot``, ``speaker``, ``text``, ``said_at``, ``recorded_at``;
        with ``include_released`` also those the owner released (``released_at`` set)."""
        h = self.handle
        with h.lock:
            conn = h.conn
            conn.execute("BEGIN")
            try:
                rows = [
                    row
                    for row in conn.execute(
                        f"SELECT {select_columns(h.schema)} FROM edges WHERE quarantined=1 ORDER BY seq"
                    ).fetchall()
                    if row[14] == user
                ]
                rel = {}
                if has_releases(conn):
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
    def releases(self) -> list[dict[str, Any]]:
        """Every release from quarantine (edge_id, released_at, reason), in the order recorded."""
        h = self.handle
        with h.lock:
            if not has_releases(h.conn):
                return []
            rows = h.conn.execute("SELECT edge_id, released_at, reason FROM releases ORDER BY seq").fetchall()
        return [{"edge_id": e, "released_at": t, "reason": why} for e, t, why in rows]

    @_mapped
    def audit_log(self, *, user: str = OWNER) -> list[dict[str, Any]]:
        """Erasure audit records of the facts of ``user`` (no id, text, slot or speaker): id_hash
        (salted SHA-256 of the id, :func:`id_hash`), salt (hex), action, erased_at, reason.
        :meth:`was_erased` checks an id."""
        h = self.handle
        with h.lock:
            if h.schema == 1:  # a schema-1 bank opened read-only: its unsalted hashes, never its ids
                rows = h.conn.execute(
                    "SELECT id_sha256, '', action, erased_at, reason FROM audit WHERE ? = '' ORDER BY seq", (user,)
                ).fetchall()
            else:
                col = "user" if h.schema >= 3 else "''"
                rows = h.conn.execute(
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


# The lookups of a write transaction: on the connection it holds (the caller holds the lock).


def require(conn: sqlite3.Connection, schema: int, edge_id: str, what: str, user: str = OWNER) -> None:
    """``edge_id`` is a stored fact of ``user``; else "no such edge" (another user's fact is
    not said to exist)."""
    col = "user" if schema >= 3 else "''"
    row = (
        conn.execute(f"SELECT {col} FROM edges WHERE id=?", (edge_id,)).fetchone() if isinstance(edge_id, str) else None
    )
    if row is None or row[0] != user:
        whose = "" if user == OWNER else f" of user {shown(user)}"
        raise StoreError(f"{what}: edge_id {shown(edge_id)}: no such edge{whose}", "unknown_id")


def existing_ids(conn: sqlite3.Connection, ids: Sequence[str]) -> set[str]:
    """The ids among ``ids`` that are stored (of any user)."""
    out: set[str] = set()
    for k in range(0, len(ids), 500):
        chunk = ids[k : k + 500]
        q = f"SELECT id FROM edges WHERE id IN ({','.join('?' * len(chunk))})"
        out.update(r[0] for r in conn.execute(q, chunk))
    return out


def owners(conn: sqlite3.Connection, ids: Sequence[str], schema: int) -> dict[str, str]:
    """{id: user} of the ids among ``ids`` that are stored."""
    out: dict[str, str] = {}
    col = "user" if schema >= 3 else "''"
    for k in range(0, len(ids), 500):
        chunk = ids[k : k + 500]
        q = f"SELECT id, {col} FROM edges WHERE id IN ({','.join('?' * len(chunk))})"
        out.update((r[0], r[1]) for r in conn.execute(q, chunk))
    return out


def stored(conn: sqlite3.Connection, ids: Sequence[str]) -> dict[str, FactRecord]:
    """{id: the stored fact} of the ids among ``ids`` that are stored."""
    out: dict[str, FactRecord] = {}
    for k in range(0, len(ids), 500):
        chunk = ids[k : k + 500]
        q = f"SELECT {_EDGE_COLUMNS} FROM edges WHERE id IN ({','.join('?' * len(chunk))})"
        out.update((r[0], _row_to_record(r)) for r in conn.execute(q, chunk))
    return out
