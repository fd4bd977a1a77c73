"""The store's SQLite schema: tables, triggers, the edge columns of each schema version, creation,
inspection and migrations.

Functions over an ``sqlite3`` connection (opened with ``isolation_level=None``: each one that
writes runs its own ``BEGIN IMMEDIATE`` … ``COMMIT``, except :func:`record_embedder`,
:func:`add_user_column` and :func:`remove_mentions`, which run inside the caller's
transaction); they keep no state, so a test can create, inspect or migrate a schema on any
connection (``:memory:`` included) without a :class:`~frcore.bank.storage._store.Store`."""

from __future__ import annotations

import os
import sqlite3

from ..._time import now
from ._common import (
    StoreError,
    _decode,
    _encode,
    _scrub,
    id_hash,
    iso_text,
)

SCHEMA_VERSION = 3


#: Schema versions :meth:`Store.open` reads (older ones are migrated on the first write open).
READABLE_SCHEMAS = (1, 2, 3)


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


def select_columns(schema: int) -> str:
    return _EDGE_COLUMNS if schema >= 3 else _EDGE_COLUMNS_V2


def inspect_schema(conn: sqlite3.Connection, path: str) -> int | None:
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


def has_releases(conn: sqlite3.Connection) -> bool:
    """The bank has the release table (a bank written before it existed gets it on a write open)."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='releases'").fetchone() is not None


def pragmas(conn: sqlite3.Connection) -> None:
    """The connection settings every write connection runs with (durable commits, zeroed frees)."""
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA secure_delete=ON")
    conn.execute("PRAGMA foreign_keys=ON")


def create(conn: sqlite3.Connection, path: str, embedder: tuple[str, int] | None = None) -> None:
    """Make the empty database on ``conn`` (the file ``path``) an FR-Bank of schema
    :data:`SCHEMA_VERSION` in one transaction (a no-op when another process made it one
    meanwhile); ``embedder``: the (name, dimension) recorded as the bank's."""
    conn.execute("PRAGMA auto_vacuum=INCREMENTAL")  # before the first table: erase releases pages
    mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
    if mode.lower() != "wal" and path != ":memory:":
        raise StoreError(f"{path}: could not enable the WAL journal (got {mode!r})", "sqlite")
    pragmas(conn)
    conn.execute("BEGIN IMMEDIATE")
    if inspect_schema(conn, path) is not None:  # created by another process meanwhile
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
            ("created_at", iso_text(now())),
            ("erasures", "0"),
        ],
    )
    if embedder is not None:
        record_embedder(conn, embedder)
    conn.execute("COMMIT")


def record_embedder(conn: sqlite3.Connection, embedder: tuple[str, int]) -> None:
    """Inside a write transaction: record the bank's embedder (name, dimension) unless one is."""
    name, dim = embedder
    conn.execute("INSERT OR IGNORE INTO meta VALUES ('embedder', ?)", (str(name),))
    conn.execute("INSERT OR IGNORE INTO meta VALUES ('embedder_dim', ?)", (str(int(dim)),))


def upgrade(conn: sqlite3.Connection, path: str, version: int) -> None:
    """Bring the FR-Bank of schema ``version`` (:func:`inspect_schema`) on ``conn`` to
    :data:`SCHEMA_VERSION` for writing: the WAL journal, the pragmas, the migrations, the
    release table."""
    mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
    if mode.lower() != "wal":
        raise StoreError(f"{path}: could not enable the WAL journal (got {mode!r})", "sqlite")
    pragmas(conn)
    if version == 1:
        migrate_v1(conn)
    elif version == 2:
        migrate_v2(conn)
    ensure_releases(conn)


def ensure_releases(conn: sqlite3.Connection) -> None:
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


def migrate_v1(conn: sqlite3.Connection) -> None:
    """Schema 1 → 2 in one transaction: link rows, the id index of vectors, the triggers that
    let an erase rewrite links, and the audit trail without plaintext ids (each old record's
    id is replaced by its salted hash, and removed with its transitions and links)."""
    conn.execute("BEGIN IMMEDIATE")
    row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    if row is not None and int(row[0]) >= 2:  # migrated by another process meanwhile
        conn.execute("COMMIT")
        if int(row[0]) < SCHEMA_VERSION:
            migrate_v2(conn)
        return
    add_user_column(conn)
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
        remove_mentions(conn, eid)
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


def add_user_column(conn: sqlite3.Connection) -> None:
    """Inside a migration transaction: the ``user`` column of edges (every stored fact the
    owner's) and its index."""
    cols = {r[1] for r in conn.execute("PRAGMA table_info(edges)")}
    if "user" not in cols:
        conn.execute("ALTER TABLE edges ADD COLUMN user TEXT NOT NULL DEFAULT ''")
    conn.execute(_USER_INDEX)


def migrate_v2(conn: sqlite3.Connection) -> None:
    """Schema 2 → 3 in one transaction: the ``user`` column of edges and of audit records
    (every stored fact and erasure the owner's), its index, and the append-only trigger that
    covers it."""
    conn.execute("BEGIN IMMEDIATE")
    row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    if row is not None and int(row[0]) >= SCHEMA_VERSION:  # migrated by another process meanwhile
        conn.execute("COMMIT")
        return
    add_user_column(conn)
    if "user" not in {r[1] for r in conn.execute("PRAGMA table_info(audit)")}:
        conn.execute("ALTER TABLE audit ADD COLUMN user TEXT NOT NULL DEFAULT ''")
    conn.execute("DROP TRIGGER IF EXISTS edges_append_only")
    conn.execute(next(t for t in _TRIGGERS.split(";\n") if "edges_append_only" in t))
    conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION),))
    conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='version'")
    conn.execute("COMMIT")


def remove_mentions(conn: sqlite3.Connection, edge_id: str) -> None:
    """Inside an erase transaction (erase_guard set): remove ``edge_id`` from every row other
    than its own edge row that names it — links of other edges, link rows, its transitions,
    its release from quarantine, and the reasons of other transitions, releases and audit
    records."""
    srcs = [
        r[0] for r in conn.execute("SELECT DISTINCT src FROM edge_links WHERE dst=? AND src != ?", (edge_id, edge_id))
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
