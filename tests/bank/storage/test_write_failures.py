"""A write that cannot complete is said once, in one line naming the bank, with nothing stored;
a write that completed is never reported as a failure; re-adding an erased fact is told.

Damaged databases of the red team's kinds — a stored text whose bytes are no longer UTF-8, a
b-tree page overwritten (malformed), truncated, foreign, future schema, not SQLite — make
``fr bank add`` exit 2 with one line naming the bank, and the new fact is not stored (the add
reads the bank before writing to it: the load that follows a write would fail on the same rows).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from frcore import cli
from frcore.bank import Bank
from frcore.bank.storage._common import storage_error

NEW = {"id": "new1", "text": "I adopted a cat named Miso", "said_at": "2024-02-01", "kind": "turn"}


def _facts(n: int = 200) -> list[dict]:
    return [
        {
            "id": f"a{i}",
            "text": f"I moved to city number {i} last spring with my dog",
            "said_at": "2024-01-01",
            "kind": "turn",
        }
        for i in range(n)
    ]


def _checkpointed(db: Path) -> None:
    c = sqlite3.connect(db)
    try:
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        c.close()


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("clean") / "b.db"
    with Bank.open(str(db), embedder="hash", create=True) as b:
        b.add(_facts())
    _checkpointed(db)
    return db


def _damaged(clean: Path, tmp_path: Path, kind: str) -> Path:
    db = tmp_path / f"{kind}.db"
    data = bytearray(clean.read_bytes())
    if kind == "not-utf8":  # one byte of a stored text flipped to an invalid UTF-8 byte
        at = data.index(b"city number 101 last")
        data[at] = 0xFF
    elif kind == "malformed":  # the header of the b-tree page holding that text overwritten
        at = data.index(b"city number 101 last")
        page = at - at % 4096
        data[page : page + 12] = b"\xff" * 12
    elif kind == "truncated":
        data = data[: len(data) // 2]
    elif kind == "not-sqlite":
        data = bytearray(b"\x13" * 8192)
    db.write_bytes(bytes(data))
    if kind == "foreign":
        db.unlink()
        c = sqlite3.connect(db)
        c.execute("CREATE TABLE notes(x)")
        c.commit()
        c.close()
    elif kind == "future":
        c = sqlite3.connect(db)
        c.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
        c.commit()
        c.close()
    return db


def _stored(db: Path, fid: str) -> int | None:
    try:
        c = sqlite3.connect(db)
        try:
            return int(c.execute("SELECT COUNT(*) FROM edges WHERE id=?", (fid,)).fetchone()[0])
        finally:
            c.close()
    except sqlite3.Error:
        return None


@pytest.mark.parametrize("kind", ["not-utf8", "malformed", "truncated", "foreign", "future", "not-sqlite"])
def test_an_add_to_a_damaged_bank_is_refused_in_one_line_with_nothing_stored(clean, tmp_path, capsys, kind):
    db = _damaged(clean, tmp_path, kind)
    f = tmp_path / "new.jsonl"
    f.write_text(json.dumps(NEW) + "\n", "utf-8")
    code = cli.main(["bank", "add", str(db), str(f)])
    out, err = capsys.readouterr()
    lines = [x for x in err.strip().splitlines() if not x.startswith("fr: warning: subcommand")]
    assert code == 2, (out, err)
    assert "Traceback" not in err and len(lines) == 1, err
    assert lines[0].startswith(f"fr bank: error: {db}: "), err
    assert len(lines[0]) < 300, err
    assert _stored(db, "new1") in (0, None), (kind, err)


def test_a_text_that_is_not_utf8_is_named_as_damage_not_echoed(clean, tmp_path, capsys):
    db = _damaged(clean, tmp_path, "not-utf8")
    f = tmp_path / "new.jsonl"
    f.write_text(json.dumps(NEW) + "\n", "utf-8")
    assert cli.main(["bank", "add", str(db), str(f)]) == 2
    err = capsys.readouterr().err
    assert "corrupted" in err and "column 'text'" in err and "city number" not in err, err


def test_sqlite_errors_become_one_bounded_line():
    many = sqlite3.DatabaseError("malformed database schema (edges_append_only) - near\nCREATE TRIGGER x\n  BEGIN")
    e = storage_error("b.db", many)
    assert "\n" not in str(e) and str(e).startswith("b.db: ")
    huge = sqlite3.OperationalError("x" * 2_000_000)
    line = str(storage_error("b.db", huge))
    assert len(line) < 400 and "2,000,000 characters" in line


def test_re_adding_an_erased_fact_is_told(tmp_path, capsys):
    db = tmp_path / "b.db"
    f = tmp_path / "facts.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in [NEW, *_facts(3)]), "utf-8")
    assert cli.main(["bank", "init", str(db), "--embedder", "hash"]) == 0
    assert cli.main(["bank", "add", str(db), str(f)]) == 0
    assert cli.main(["bank", "erase", str(db), "new1"]) == 0
    capsys.readouterr()
    assert cli.main(["bank", "add", str(db), str(f)]) == 0
    err = capsys.readouterr().err
    told = [x for x in err.splitlines() if "erased" in x]
    assert len(told) == 1 and "'new1'" in told[0] and "field 'id'" in told[0], err
    capsys.readouterr()
    assert cli.main(["bank", "add", str(db), str(f)]) == 0  # unchanged re-add: nothing new, nothing told
    assert "erased" not in capsys.readouterr().err


def test_a_fact_never_erased_is_not_told(tmp_path):
    db = tmp_path / "b.db"
    with Bank.open(str(db), embedder="hash", create=True) as b:
        b.add(_facts(3))
        b.erase("a1")
        added = b.store.add_facts([NEW])
    assert list(added) == ["new1"] and not [w for w in added.warnings if "erased" in w]


def test_a_store_without_an_index_on_a_damaged_file_stores_nothing_it_reports_failed(clean, tmp_path):
    """Without an index the add reads nothing back, so a damaged row elsewhere does not fail it:
    it completes and says so (never 'failed' after storing)."""
    db = _damaged(clean, tmp_path, "not-utf8")
    shutil.rmtree(str(db) + ".index", ignore_errors=True)
    with Bank.open(str(db), embedder="hash", index=False) as b:
        added = b.store.add_facts([NEW])
    assert list(added) == ["new1"] and _stored(db, "new1") == 1
