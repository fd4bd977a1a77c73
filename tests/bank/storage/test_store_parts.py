"""The store's parts used alone (frcore.bank.storage: _schema, _handle, _tables, _loading), without a
Store: the schema on a bare connection, the write transaction of a handle, the tables read over
it, and the rows loaded over rows written by hand."""

from __future__ import annotations

import sqlite3
import threading
from datetime import datetime

import numpy as np
import pytest

from frcore.bank.storage import StoreError, iso_text
from frcore.bank.storage._handle import Handle
from frcore.bank.storage._loading import Loads
from frcore.bank.storage._schema import (
    _EDGE_COLUMNS,
    SCHEMA_VERSION,
    create,
    has_releases,
    inspect_schema,
)
from frcore.bank.storage._tables import Tables
from frcore.bank.storage._writes import put_vectors


def _bare() -> sqlite3.Connection:
    return sqlite3.connect(":memory:", isolation_level=None)


def _meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return None if row is None else row[0]


def _edge(conn: sqlite3.Connection, fid: str, text: str, slot: str | None = None, user: str = "") -> None:
    """One edge row as the writes store it (inside the caller's write transaction)."""
    conn.execute(
        f"INSERT INTO edges ({_EDGE_COLUMNS}, batch) VALUES ({','.join('?' * 16)})",
        (
            fid,
            text,
            '{"OTHER": 1.0}',
            iso_text(datetime(2025, 1, 2)),
            None,
            slot,
            1.0,
            0,
            "{}",
            None,
            "fact",
            None,
            0,
            iso_text(datetime(2025, 1, 3)),
            user,
            1,
        ),
    )


def test_the_schema_is_created_and_inspected_on_a_bare_connection():
    conn = _bare()
    assert inspect_schema(conn, ":memory:") is None  # empty: not a bank yet
    create(conn, ":memory:", ("hash-64", 64))
    assert inspect_schema(conn, ":memory:") == SCHEMA_VERSION
    assert has_releases(conn)
    assert _meta(conn, "version") == "0"
    assert (_meta(conn, "embedder"), _meta(conn, "embedder_dim")) == ("hash-64", "64")
    create(conn, ":memory:")  # a bank already: nothing changes
    assert _meta(conn, "version") == "0"
    conn.execute("BEGIN")
    _edge(conn, "a", "the user keeps bees")
    conn.execute("COMMIT")
    # append-only, enforced in the file by the schema's triggers
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE edges SET text='changed' WHERE id='a'")
    with pytest.raises(sqlite3.IntegrityError, match="deleted only by erase"):
        conn.execute("DELETE FROM edges WHERE id='a'")


def test_inspection_refuses_what_is_not_a_bank():
    conn = _bare()
    conn.execute("CREATE TABLE invoices(id INTEGER)")
    with pytest.raises(StoreError) as e:
        inspect_schema(conn, "other.db")
    assert e.value.kind == "not_a_bank" and "invoices" in str(e.value)
    damaged = _bare()
    create(damaged, ":memory:")
    damaged.execute("DROP TABLE audit")
    with pytest.raises(StoreError) as e:
        inspect_schema(damaged, "b.db")
    assert e.value.kind == "corrupt" and "audit" in str(e.value)


def test_a_write_transaction_commits_and_bumps_the_version():
    h = Handle.open(":memory:")
    assert h.version() == 0
    h.embedder_to_record = ("hash-64", 64)
    with h.write() as conn:
        _edge(conn, "a", "the user keeps bees")
    assert h.version() == 1
    assert h.conn.execute("SELECT COUNT(*) FROM edges").fetchone()[0] == 1
    assert _meta(h.conn, "embedder") == "hash-64" and h.embedder_to_record is None  # recorded by that commit
    assert not h.conn.in_transaction
    h.close()
    h.close()  # idempotent
    with pytest.raises(StoreError, match="closed"):
        h.version()


def test_a_write_transaction_rolls_back_on_an_error_and_frees_the_lock():
    h = Handle.open(":memory:")
    with h.write() as conn:
        _edge(conn, "a", "the user keeps bees")
    with pytest.raises(RuntimeError, match="half done"):
        with h.write() as conn:
            _edge(conn, "b", "the user keeps wasps")
            conn.execute("INSERT INTO meta VALUES ('scratch', 'x')")
            raise RuntimeError("half done")
    assert h.version() == 1  # not bumped
    assert [r[0] for r in h.conn.execute("SELECT id FROM edges")] == ["a"]
    assert _meta(h.conn, "scratch") is None
    assert not h.conn.in_transaction
    got: list[bool] = []

    def other():
        ok = h.lock.acquire(blocking=False)
        got.append(ok)
        if ok:
            h.lock.release()

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert got == [True]  # the failed transaction let go of the lock


def test_a_read_only_handle_refuses_to_write(tmp_path):
    path = tmp_path / "b.db"
    Handle.open(path).close()
    ro = Handle.open(path, readonly=True)
    assert ro.readonly and ro.schema == SCHEMA_VERSION
    with pytest.raises(StoreError) as e:
        ro.write()
    assert e.value.kind == "readonly"
    ro.close()
    (tmp_path / "notes.txt").write_text("not a bank")
    with pytest.raises(StoreError) as e:
        Handle.open(tmp_path / "notes.txt")
    assert e.value.kind == "not_a_bank"


def test_tables_read_what_a_handle_wrote():
    h = Handle.open(":memory:")
    tables = Tables(h)
    vecs = np.arange(8, dtype=np.float32).reshape(2, 4)
    with h.write() as conn:
        _edge(conn, "a", "bees")
        _edge(conn, "b", "wasps", user="ana")
        put_vectors(conn, "m", ["a", "b"], vecs)
    assert tables.count() == 1 and tables.count(user="ana") == 1
    assert tables.existing(["a", "b", "c"]) == {"a"}
    got, missing = tables.get_embeddings("m", ["b", "c", "a"])
    assert missing == ["c"]
    np.testing.assert_array_equal(got[[0, 2]], vecs[[1, 0]])
    assert np.isnan(got[1]).all()
    assert tables.embedding_models() == {"m": 4}


def test_loads_read_the_rows_a_handle_wrote_once_per_version():
    h = Handle.open(":memory:")
    loads = Loads(h, Tables(h))
    with h.write() as conn:
        _edge(conn, "a", "the user lives in Oslo", slot="home")
    first = loads.load()
    assert first.version == h.version() and first.n == 1
    assert loads.load() is first  # cached: the version did not move
    with h.write() as conn:
        _edge(conn, "b", "the user lives in Lima", slot="home")
    second = loads.load()
    assert second is not first and second.n == 2 and second.version == h.version()
    assert [e.id for e in loads.edges()] == ["a", "b"]
    assert [f.id for f, _ in loads.slot_facts("home")] == ["a", "b"]
    assert loads.summary() == {"facts": 2, "turns": 0, "slots": 1, "retractions": 0}
    snap = loads.snapshot(datetime(2025, 2, 1))
    assert set(snap.ids) == {"a", "b"}
