"""What every part of the store shares: its errors, the added list, time and id helpers, row decoding."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from ..records import (
    OWNER,
    FactRecord,
)

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


def _links(text: str) -> dict[str, tuple[str, ...]]:
    """The links column as stored (JSON) → ``{kind: (target ids, ...)}``."""
    return {} if text == "{}" else {k: tuple(v) for k, v in _decode(text).items()}


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
    were already stored with identical content, so were skipped (an idempotent retry),
    ``quarantined``: one record per newly stored fact held in quarantine — ``id``, ``field`` (the
    field whose text fired: ``text``, ``id``, ``slot`` or ``speaker``), ``rule`` (the detector's
    rule, :func:`frcore.bank.instruction_rule`) and ``slot`` (the slot it would update, or None),
    and ``warnings``: one line per thing the batch was accepted with but is told about, naming
    the fact and the field (:func:`frcore.bank.storage._store.batch_warnings`)."""

    def __init__(
        self,
        ids: Iterable[str] = (),
        unchanged: Iterable[str] = (),
        quarantined: Iterable[Mapping[str, Any]] = (),
        warnings: Iterable[str] = (),
    ):
        super().__init__(ids)
        self.unchanged: list[str] = list(unchanged)
        self.quarantined: list[dict[str, Any]] = [dict(q) for q in quarantined]
        self.warnings: list[str] = list(warnings)


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
