"""The store's handle on its SQLite file: opening it (refusing what is not an FR-Bank), the
connection and its lock, the write transaction, and the WAL checkpoint that purges erased bytes.

A :class:`Handle` knows the schema only through :mod:`._schema` (create, inspect, upgrade on
open) and nothing of facts, loads or indexes: the other parts of the store
(:class:`~frcore.bank.storage._tables.Tables`, :class:`~frcore.bank.storage._loading.Loads`,
:class:`~frcore.bank.storage._writes.Writes`) run their SQL through it. SQLite failures of its
methods surface as :class:`StoreError` (:func:`~frcore.bank.storage._common.storage_error`)."""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any, Literal

from . import _schema
from ._common import WRITER_PURGE_WAIT, StoreError, _mapped, storage_error
from ._schema import _SQLITE_HEADER, SCHEMA_VERSION


class Handle:
    """One connection to a bank file, shared by threads through :attr:`lock`.

    Open with :meth:`open` (or wrap a connection already holding an FR-Bank); :meth:`write` is
    the one way to write. ``readonly``: every write raises :class:`StoreError` (kind
    ``readonly``); ``schema``: the schema version of the file as opened."""

    def __init__(
        self, conn: sqlite3.Connection, path: str, readonly: bool = False, schema: int = SCHEMA_VERSION
    ) -> None:
        self._conn: sqlite3.Connection | None = conn
        self.path = path
        #: opened with ``readonly=True``: every write raises :class:`StoreError` (kind ``readonly``)
        self.readonly = readonly
        self.schema = schema
        #: serialises the connection (reentrant: a write transaction's checks read through it)
        self.lock = threading.RLock()
        #: (name, dim) written by the next write transaction if the bank records no embedder yet
        self.embedder_to_record: tuple[str, int] | None = None

    @classmethod
    def open(
        cls,
        path: str | Path,
        timeout: float = 30.0,
        *,
        readonly: bool = False,
        create: bool = True,
        embedder: tuple[str, int] | None = None,
    ) -> Handle:
        """The handle on the bank at ``path`` (``":memory:"`` for a scratch one); see
        :meth:`frcore.bank.storage.Store.open` for what is created, refused and migrated."""
        path = str(path)
        if path == ":memory:":
            if readonly:
                raise StoreError(":memory:: a scratch store cannot be opened read-only")
            conn = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
            try:
                _schema.create(conn, path, embedder)
            except sqlite3.Error as e:
                conn.close()
                raise storage_error(path, e) from e
            return cls(conn, path)
        fresh = _precheck(path, readonly, create)
        try:
            if readonly:
                conn = _connect_readonly(path, timeout)
            else:
                conn = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as e:
            raise storage_error(path, e) from e
        try:
            version = None if fresh else _schema.inspect_schema(conn, path)
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
                _schema.create(conn, path, embedder)
            else:
                _schema.upgrade(conn, path, version)
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
        handle = cls(conn, path)
        if embedder is not None:
            handle.embedder_to_record = (str(embedder[0]), int(embedder[1]))
        return handle

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self.lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> Handle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def conn(self) -> sqlite3.Connection:
        """The connection (:class:`StoreError` once closed)."""
        if self._conn is None:
            raise StoreError(f"store {self.path!r}: closed")
        return self._conn

    def refuse_if_readonly(self, what: str = "nothing was written") -> None:
        if self.readonly:
            raise StoreError(f"{self.path}: opened read-only; {what}", "readonly")

    def write(self, finish_purge: bool = True) -> Transaction:
        """Context for one write transaction (``with handle.write() as conn``) that bumps the
        version counter; see :class:`Transaction`."""
        self.refuse_if_readonly()
        return Transaction(self, finish_purge)

    def bank_id(self) -> str | None:
        """What names this bank in its index: the creation time recorded in ``meta``."""
        with self.lock:
            row = self.conn.execute("SELECT value FROM meta WHERE key='created_at'").fetchone()
        return None if row is None else str(row[0])

    def erasures(self) -> int:
        """The erase counter recorded in ``meta``."""
        with self.lock:
            row = self.conn.execute("SELECT value FROM meta WHERE key='erasures'").fetchone()
        return int(row[0]) if row is not None else 0

    @_mapped
    def version(self) -> int:
        """The write counter: bumps on every committed write (by any connection)."""
        with self.lock:
            return int(self.conn.execute("SELECT value FROM meta WHERE key='version'").fetchone()[0])

    @_mapped
    def integrity_check(self) -> str:
        """``PRAGMA integrity_check`` ("ok" when sound)."""
        with self.lock:
            return str(self.conn.execute("PRAGMA integrity_check").fetchone()[0])

    @_mapped
    def purge(self, timeout: float = 10.0) -> dict[str, Any]:
        """Checkpoint the WAL into the database file and truncate it (waiting up to ``timeout``
        seconds for readers still reading older pages), then clear the pending-purge mark.

        Returns ``{"purged": True, "note": ...}`` when done: every byte freed by an erase
        (zeroed by ``secure_delete``) is gone from the database, ``-wal`` and ``-shm`` files;
        ``{"purged": False, "note": ...}`` when readers still block it (the purge stays
        pending; a later :meth:`purge` or write finishes it)."""
        self.refuse_if_readonly("cannot purge")
        deadline = time.monotonic() + max(0.0, float(timeout))
        with self.lock:
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
        with self.lock:
            return self.conn.execute("SELECT 1 FROM meta WHERE key='purge_pending'").fetchone() is not None


class Transaction:
    """One write transaction of a :class:`Handle`: ``with`` takes the handle's lock and begins
    (``BEGIN IMMEDIATE``), yielding the connection. On a clean exit it records the embedder the
    handle holds to record, bumps the version counter and commits; on an exception it rolls back
    (everything the block wrote is undone) and lets the exception through. After a commit a pending
    purge (an erase whose checkpoint was blocked) is finished if readers allow (``finish_purge``;
    best effort, never an error)."""

    def __init__(self, handle: Handle, finish_purge: bool = True) -> None:
        self.handle = handle
        self.finish_purge = finish_purge
        self.pending = False

    def __enter__(self) -> sqlite3.Connection:
        h = self.handle
        h.lock.acquire()
        try:
            h.conn.execute("BEGIN IMMEDIATE")
        except BaseException:
            h.lock.release()
            raise
        return h.conn

    def __exit__(self, et, ev, tb) -> Literal[False]:
        h = self.handle
        try:
            if et is None:
                conn = h.conn
                if h.embedder_to_record is not None:
                    _schema.record_embedder(conn, h.embedder_to_record)
                conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='version'")
                self.pending = conn.execute("SELECT 1 FROM meta WHERE key='purge_pending'").fetchone() is not None
                conn.execute("COMMIT")
                h.embedder_to_record = None
            else:
                try:
                    h.conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass  # the failed statement already rolled the transaction back
        finally:
            h.lock.release()
        if et is None and self.pending and self.finish_purge:
            try:
                h.purge(timeout=WRITER_PURGE_WAIT)
            except (sqlite3.Error, StoreError):
                pass  # best effort: the purge stays pending
        return False


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
            raise StoreError(f"{path}: cannot create the bank: folder {str(parent)!r} does not exist", "missing_parent")
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
            raise StoreError(f"{path}: an empty file, not an FR-Bank (create one with `fr bank init`)", "not_a_bank")
        return True
    if header != _SQLITE_HEADER:
        raise StoreError(f"{path}: not an FR-Bank: not an SQLite database", "not_a_bank")
    return False


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
            name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN")) and (not wal.exists() or wal.stat().st_size == 0)
        ):
            raise
    conn = sqlite3.connect(
        uri + "&immutable=1", uri=True, timeout=timeout, isolation_level=None, check_same_thread=False
    )
    conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    return conn
