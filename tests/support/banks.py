"""A bank file as schema 1 of FR-Bank left it (tests/bank/storage/test_bank_erase.py, tests/bank/test_bank_users.py
migrate it): the schema-1 tables and triggers, written with :mod:`sqlite3` (no frcore code)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

#: the id of the fact erased in the schema-1 bank (tests/bank/storage/test_bank_erase.py erases it in its own banks too)
SECRET_ID = "ERASE-ID-QX7Z"


OLD_SCHEMA = (
    "\n"
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);\n"
    "CREATE TABLE edges(seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, text TEXT NOT NULL, categories "
    "TEXT NOT NULL,\n"
    "    said_at TEXT NOT NULL, event_time TEXT, slot TEXT, confidence REAL NOT NULL, numeric INTEGER NOT NULL, links "
    "TEXT NOT NULL,\n"
    "    session INTEGER, kind TEXT NOT NULL, speaker TEXT, quarantined INTEGER NOT NULL, recorded_at TEXT NOT NULL, "
    "batch INTEGER NOT NULL);\n"
    "CREATE TABLE transitions(seq INTEGER PRIMARY KEY AUTOINCREMENT, edge_id TEXT NOT NULL, kind TEXT NOT NULL, "
    "effective_at TEXT NOT NULL,\n"
    "    recorded_at TEXT NOT NULL, reason TEXT);\n"
    "CREATE TABLE embeddings(model TEXT NOT NULL, id TEXT NOT NULL, dim INTEGER NOT NULL, vector BLOB NOT NULL, "
    "PRIMARY KEY (model, id));\n"
    "CREATE TABLE audit(seq INTEGER PRIMARY KEY AUTOINCREMENT, edge_id TEXT NOT NULL, id_sha256 TEXT NOT NULL, action "
    "TEXT NOT NULL,\n"
    "    erased_at TEXT NOT NULL, reason TEXT);\n"
    "CREATE TABLE erase_guard(id TEXT PRIMARY KEY);\n"
    "CREATE TRIGGER edges_append_only BEFORE UPDATE ON edges BEGIN SELECT RAISE(ABORT, 'edges are append-only'); END;\n"
    "CREATE TRIGGER edges_delete_only_by_erase BEFORE DELETE ON edges WHEN NOT EXISTS (SELECT 1 FROM erase_guard WHERE "
    "id = OLD.id)\n"
    "    BEGIN SELECT RAISE(ABORT, 'edges are deleted only by erase'); END;\n"
    "CREATE TRIGGER transitions_no_update BEFORE UPDATE ON transitions BEGIN SELECT RAISE(ABORT, 'transitions are "
    "append-only'); END;\n"
    "CREATE TRIGGER transitions_no_delete BEFORE DELETE ON transitions BEGIN SELECT RAISE(ABORT, 'transitions are "
    "append-only'); END;\n"
)


def _schema1_bank(db: Path) -> None:
    """A bank as schema 1 left it after erasing SECRET_ID: plaintext id in the audit row and an
    'erase' transition, its retraction (with reason) kept, another fact still linking to it."""
    c = sqlite3.connect(db, isolation_level=None)
    c.execute("PRAGMA journal_mode=WAL")
    c.executescript(OLD_SCHEMA)
    c.executemany(
        "INSERT INTO meta VALUES (?, ?)",
        [("schema_version", "1"), ("version", "5"), ("created_at", "2025-01-01T00:00:00.000000")],
    )
    t = "2025-01-01T00:00:00.000000"
    cols = (
        "id, text, categories, said_at, event_time, slot, confidence, numeric, links, session, kind, speaker, "
        "quarantined, recorded_at, batch"
    )
    for fid, links, batch in (("keep", "{}", 1), ("later", json.dumps({"supersedes": [SECRET_ID, "keep"]}), 2)):
        c.execute(
            f"INSERT INTO edges ({cols}) VALUES (?, ?, ?, ?, NULL, NULL, 1.0, 0, ?, NULL, 'fact', NULL, 0, ?, ?)",
            (fid, f"{fid} fact", '{"OTHER":1.0}', t, links, t, batch),
        )
    row = (None, t)
    c.execute(
        "INSERT INTO transitions (edge_id, kind, effective_at, recorded_at, reason) VALUES (?, 'retract', ?, ?, ?)",
        (SECRET_ID, row[1], row[1], f"private: {SECRET_ID}"),
    )
    c.execute(
        "INSERT INTO transitions (edge_id, kind, effective_at, recorded_at, reason) VALUES (?, 'erase', ?, ?, ?)",
        (SECRET_ID, row[1], row[1], "gdpr"),
    )
    c.execute(
        "INSERT INTO audit (edge_id, id_sha256, action, erased_at, reason) VALUES (?, ?, 'erase', ?, 'gdpr')",
        (SECRET_ID, hashlib.sha256(SECRET_ID.encode()).hexdigest(), row[1]),
    )
    c.close()
