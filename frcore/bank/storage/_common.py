"""What every part of the store shares: its errors, the added list, time and id helpers, row decoding."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from ..._shown import clipped, shown
from ..._time import micros_since_epoch
from ..guard import instruction_rule
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
    the fact and the field (:func:`frcore.bank.storage._batch.batch_warnings`)."""

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
    msg = " ".join(str(exc).split())  # one line: SQLite may quote schema SQL over several
    what = f"{path}: " + (f"{doing}: " if doing else "")
    if msg.startswith("Could not decode to UTF-8"):  # bytes of a stored text flipped: the file is damaged
        column = msg.split("column ", 1)[-1].split(" with text", 1)[0]
        msg = f"column {column} holds bytes that are not UTF-8"
        name = "SQLITE_CORRUPT"
    msg = clipped(msg, 200)
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
    """Methods of the store's parts raise :class:`StoreError` (one line, naming the file) for
    SQLite failures: the file of the part's ``handle`` (or of the handle itself)."""

    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        try:
            return fn(self, *args, **kwargs)
        except sqlite3.Error as e:
            raise storage_error(getattr(self, "handle", self).path, e) from e

    return wrapper


def iso_text(dt: datetime) -> str:
    """Naive-UTC datetime → fixed-width ISO string (sortable): how SQLite's time columns hold it."""
    return dt.isoformat(timespec="microseconds")


def micros_of_text(text: str) -> int:
    """A time column's :func:`iso_text` → microseconds since the epoch, the store's one form of
    an instant inside."""
    return micros_since_epoch(datetime.fromisoformat(text))


def _check_text_arg(value: Any, name: str, what: str) -> None:
    """An id or reason given to retract / erase: a string SQLite can store (or None for a reason)."""
    if value is None and name == "reason":
        return
    if not isinstance(value, str) or (name == "edge_id" and not value):
        raise StoreError(
            f"{what}: {name} {shown(value)}: expected a non-empty string"
            if name == "edge_id"
            else f"{what}: {name}: expected a string or null, got {type(value).__name__}"
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise StoreError(f"{what}: {name} {shown(value)}: not valid Unicode (unpaired surrogate)") from None
    if name == "reason":  # kept and shown back (MCP history): never an instruction to the model
        rule = instruction_rule(value)
        if rule is not None:
            raise StoreError(f"{what}: reason: reads as an instruction to the model (rule {rule}); nothing recorded")


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


#: erased strings shorter than this (in UTF-8) are not looked for in the bank's files: too likely
#: to occur by chance among other bytes to tell anything
MIN_ERASED_BYTES = 4


def bank_files(path: str) -> list[Path]:
    """Every file the bank at ``path`` owns, under every path that reaches it: the database file
    (its resolved path, where SQLite keeps it), its ``-wal`` and ``-shm`` files, and every file
    under its index folder (``<resolved path>.index/``, and ``<path>.index/`` when ``path`` is a
    symbolic link and one is there). The walk follows no symbolic link; a folder a writer renames
    or removes during the walk is passed over (a writer may be adding a segment)."""
    real = os.path.realpath(path)
    own = [Path(p + suffix) for p in dict.fromkeys((real, path)) for suffix in ("", "-wal", "-shm")]
    folders = [Path(p + ".index") for p in dict.fromkeys((real, path))]
    return [p for p in own if p.exists() and not p.is_symlink()] + sorted(
        Path(root) / name
        for index in folders
        if not index.is_symlink()
        for root, _dirs, names in os.walk(index)
        for name in names
        if not (Path(root) / name).is_symlink()
    )


def _forms(text: str) -> set[bytes]:
    """The bytes ``text`` is stored as: UTF-8 (SQLite), inside a JSON string (with and without
    ``\\u`` escapes), and inside a JSON string held in a JSON string (the index's ``links``)."""
    once = {json.dumps(text, ensure_ascii=a)[1:-1] for a in (False, True)}
    twice = {json.dumps(x, ensure_ascii=False)[1:-1] for x in once}
    return {x.encode("utf-8") for x in {text, *once, *twice}}


def erased_bytes_remaining(path: str, erased: Iterable[str], held: Callable[[str], bool]) -> list[str]:
    """The files of the bank at ``path`` (:func:`bank_files`) that still hold one of the ``erased``
    strings (of at least :data:`MIN_ERASED_BYTES` bytes, in any of its stored forms) — a string
    the bank still legitimately holds elsewhere (``held``: in another fact, a reason, the index's
    own words) does not count. A file that cannot be read counts as holding it."""
    needles = {s: _forms(s) for s in set(erased) if s and len(s.encode("utf-8")) >= MIN_ERASED_BYTES}
    hits: dict[str, set[str]] = {}
    for f in bank_files(path):
        try:
            with open(f, "rb") as fh:
                found = _held_in(fh, needles)
        except FileNotFoundError:  # removed since the walk (a scrubbed segment, a checkpointed WAL)
            continue
        except OSError:
            found = {""}  # unreadable: nothing can be said of it
        if found:
            hits[str(f)] = found
    explained = {s for s in set().union(*hits.values()) if s and held(s)} if hits else set()
    return [f for f, found in hits.items() if found - explained]


#: bytes read at a time by :func:`_held_in`
_SCAN_CHUNK = 1 << 24


def _held_in(fh, needles: Mapping[str, set[bytes]]) -> set[str]:
    """The strings of ``needles`` one of whose forms occurs in the file ``fh``, read in chunks
    that overlap by the longest form less one byte: read, not memory-mapped, because SQLite and
    the bank's writers may shorten a file during the scan (a mapped page past the new end would
    kill the process with SIGBUS; a read just ends)."""
    longest = max((len(b) for forms in needles.values() for b in forms), default=1)
    found: set[str] = set()
    tail = b""
    while chunk := fh.read(_SCAN_CHUNK):
        buf = tail + chunk
        found |= {s for s, forms in needles.items() if s not in found and any(b in buf for b in forms)}
        tail = buf[max(0, len(buf) - longest + 1) :]
    return found


def held_elsewhere(conn: sqlite3.Connection, text: str) -> bool:
    """Whether ``text`` occurs (ASCII case ignored) in a text column of any table of the bank
    on ``conn``, or in its schema: what an erase legitimately leaves."""
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    if conn.execute("SELECT 1 FROM sqlite_master WHERE instr(lower(sql), lower(?)) > 0", (text,)).fetchone():
        return True
    for t in tables:
        cols = [r[1] for r in conn.execute(f'PRAGMA table_info("{t}")') if "BLOB" not in str(r[2]).upper()]
        if not cols:
            continue
        where = " OR ".join(f'instr(lower(CAST("{c}" AS TEXT)), lower(?1)) > 0' for c in cols)
        if conn.execute(f'SELECT 1 FROM "{t}" WHERE {where} LIMIT 1', (text,)).fetchone():
            return True
    return False
