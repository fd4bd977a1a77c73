"""The index belongs to one database state and one bank, wherever it is reached from:

- a database rolled back under a newer index (a restored backup, a lost ``-wal``) and written
  again, or two copies of one bank with their index folders swapped: results always equal
  SQLite alone's (the segment's ``stamp`` is not the database's row: the index is rebuilt);
- every path that reaches a bank (a symbolic link to it, a linked folder) reaches one index, and
  an erase through any of them purges every file the bank owns;
- a symbolic link anywhere in the index folder (the folder itself, the manifest, ``vectors.f32``,
  the lock, a segment) is damage: the link is removed, its target never written, and the index is
  rebuilt from SQLite.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from frcore.bank import Bank
from frcore.bank.storage._index import FORMAT, index_path

AT = "2024-06-01"
QUESTIONS = ("what about the garden", "the trip to Lisbon", "fact number 3")


def _turn(i: str, text: str, day: int = 1) -> dict:
    return {"id": i, "text": text, "said_at": f"2024-01-{day:02d}", "kind": "turn"}


def _base(n: int = 12) -> list[dict]:
    return [_turn(f"f{i}", f"fact number {i} about the garden and the roses") for i in range(n)]


def _answers(db: str, index: bool = True) -> list:
    with Bank.open(db, embedder="hash", index=index) as b:
        return [[r["id"] for r in b.query(q, at=AT, k=8).results] for q in QUESTIONS]


def _checkpoint(db: str) -> None:
    c = sqlite3.connect(db)
    try:
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        c.close()


def _sqlite_alone(db: str, tmp_path: Path) -> list:
    """The answers of a copy of the database file with no index beside it (checkpointed first)."""
    _checkpoint(db)
    d = tmp_path / "alone"
    d.mkdir(exist_ok=True)
    copy = d / "copy.db"
    shutil.copyfile(db, copy)
    return _answers(str(copy), index=False)


def _manifest(db: str) -> dict:
    return json.loads((index_path(db) / "manifest.json").read_text("utf-8"))


def _checkpoint_copy(db: str, to: Path) -> None:
    _checkpoint(db)
    shutil.copyfile(db, to)


def _restore(backup: Path, db: str) -> None:
    """Put the backup in place of the database (its ``-wal`` and ``-shm`` lost), index kept."""
    for suffix in ("-wal", "-shm"):
        Path(db + suffix).unlink(missing_ok=True)
    shutil.copyfile(backup, db)


def test_a_restored_backup_written_again_is_not_served_from_the_newer_index(tmp_path):
    db = str(tmp_path / "b.db")
    with Bank.open(db, embedder="hash") as b:
        b.add(_base())
    backup = tmp_path / "backup.db"
    _checkpoint_copy(db, backup)
    with Bank.open(db, embedder="hash") as b:
        b.add([_turn("x", "we flew to Lisbon for the trip in spring", 5)])
    stamp_x = _manifest(db)["segments"][-1]["stamp"]
    _restore(backup, db)
    with Bank.open(db, embedder="hash") as b:  # the same number of rows as the index holds
        b.add([_turn("y", "the trip to Lisbon was cancelled, we stayed home", 6)])
        got = [[r["id"] for r in b.query(q, at=AT, k=8).results] for q in QUESTIONS]
        assert all("x" not in ids for ids in got)
        assert any("y" in ids for ids in got)
        assert b.erase("y")["action"] == "erase"  # it is stored: no "no such edge"
    assert _manifest(db)["segments"][-1].get("stamp") != stamp_x
    assert _answers(db) == _sqlite_alone(db, tmp_path)


def test_a_lost_wal_under_a_newer_index_reads_sqlite(tmp_path):
    db = str(tmp_path / "b.db")
    with Bank.open(db, embedder="hash") as b:
        b.add(_base())
    backup = tmp_path / "backup.db"
    _checkpoint_copy(db, backup)
    with Bank.open(db, embedder="hash") as b:
        b.add([_turn("x", "we flew to Lisbon for the trip in spring", 5)])
    _restore(backup, db)  # the rows of the lost -wal are gone; the index still holds them
    got = _answers(db)
    assert all("x" not in ids for ids in got)
    assert got == _sqlite_alone(db, tmp_path)


def test_swapped_index_folders_of_two_copies_of_one_bank_are_not_used(tmp_path):
    a, b_ = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    with Bank.open(a, embedder="hash") as b:
        b.add(_base())
    _checkpoint_copy(a, Path(b_))  # one bank, two copies: the same bank_id
    with Bank.open(a, embedder="hash") as b:
        b.add([_turn("xa", "we flew to Lisbon for the trip in spring", 5)])
    with Bank.open(b_, embedder="hash") as b:
        b.add([_turn("xb", "the garden trip to Lisbon never happened", 5)])
    ia, ib = index_path(a), index_path(b_)
    os.rename(ia, tmp_path / "swap")
    os.rename(ib, ia)
    os.rename(tmp_path / "swap", ib)
    for db, other in ((a, "xb"), (b_, "xa")):
        got = _answers(db)
        assert all(other not in ids for ids in got)
        assert got == _sqlite_alone(db, tmp_path)


@pytest.mark.parametrize("previous", ["frcore-bank-index-v4", "frcore-bank-index-v5"])
def test_an_index_of_a_previous_format_is_rebuilt(tmp_path, previous):
    """v4 had no stamps; v5 kept hours (``said_at_h``, ``event_h``) and ``datetime64`` recorded
    times beside the microseconds: either is rebuilt from SQLite, never read as this format."""
    db = str(tmp_path / "b.db")
    with Bank.open(db, embedder="hash") as b:
        b.add(_base())
    want = _answers(db, index=False)
    m = _manifest(db)
    m["format"] = previous
    for s in m["segments"]:
        if previous.endswith("v4"):
            s.pop("stamp")
    (index_path(db) / "manifest.json").write_text(json.dumps(m), "utf-8")
    assert _answers(db) == want
    with Bank.open(db, embedder="hash") as b:
        b.add([_turn("z", "one more fact about the roses", 7)])
    m = _manifest(db)
    assert m["format"] == FORMAT and all(s.get("stamp") for s in m["segments"])


def test_every_path_to_a_bank_reaches_one_index_and_erase_purges_through_a_link(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    db = str(real / "b.db")
    with Bank.open(db, embedder="hash") as b:
        b.add(_base())
    link = tmp_path / "link.db"
    os.symlink(db, link)
    folder_link = tmp_path / "folder"
    os.symlink(real, folder_link)
    secret = "my locker code at the gym is 4711 and nobody knows it"
    with Bank.open(str(link), embedder="hash") as b:
        b.add([_turn("s", secret, 9)])
    with Bank.open(str(folder_link / "b.db"), embedder="hash") as b:
        b.add([_turn("t", "the roses in the garden bloomed late", 9)])
    assert not os.path.lexists(str(link) + ".index")
    assert not os.path.lexists(str(folder_link / "b.db") + ".index") or index_path(db).samefile(
        str(folder_link / "b.db") + ".index"
    )
    with Bank.open(str(link), embedder="hash") as b:
        out = b.erase("s")
    assert out["purged"] is True, out
    for root, _dirs, names in os.walk(tmp_path):
        for n in names:
            p = Path(root) / n
            if not p.is_symlink():
                assert secret.encode() not in p.read_bytes(), p


def test_erase_scans_an_index_folder_an_older_version_made_beside_a_link(tmp_path):
    """A folder ``<link>.index`` (named from the unresolved path) is the bank's too: an erase
    that leaves the fact's text there does not say purged."""
    db = str(tmp_path / "b.db")
    secret = "my locker code at the gym is 4711 and nobody knows it"
    with Bank.open(db, embedder="hash") as b:
        b.add([*_base(), _turn("s", secret, 9)])
    link = tmp_path / "link.db"
    os.symlink(db, link)
    stale = Path(str(link) + ".index")
    stale.mkdir()
    (stale / "raw.json").write_text(json.dumps([secret]), "utf-8")
    with Bank.open(str(link), embedder="hash") as b:
        out = b.erase("s")
    assert out["purged"] is False and any("link.db.index" in r for r in out["remaining"]), out


CANARY = b"a file of the owner's, outside every bank\n"


def _canary(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    c = tmp_path / "canary"
    c.mkdir(exist_ok=True)
    for name in ("manifest.json", "vectors.f32", "notes.txt", "lock"):
        (c / name).write_bytes(CANARY + name.encode())
    return c, {p.name: p.read_bytes() for p in c.iterdir()}


def _unchanged(c: Path, before: dict[str, bytes]) -> bool:
    return {p.name: p.read_bytes() for p in c.iterdir()} == before


def test_an_index_folder_that_is_a_link_is_removed_and_rebuilt(tmp_path):
    c, before = _canary(tmp_path)
    db = str(tmp_path / "b.db")
    with Bank.open(db, embedder="hash") as b:
        b.add(_base())
    want = _answers(db, index=False)
    shutil.rmtree(index_path(db))
    os.symlink(c, index_path(db))
    with Bank.open(db, embedder="hash") as b:
        b.add([_turn("z", "one more fact about the roses", 7)])
        b.erase("f2")
    assert _unchanged(c, before)
    assert index_path(db).is_dir() and not index_path(db).is_symlink()
    assert _answers(db) == _answers(db, index=False) != want


def test_a_manifest_vectors_or_lock_that_is_a_link_is_never_written_through(tmp_path):
    c, before = _canary(tmp_path)
    db = str(tmp_path / "b.db")
    with Bank.open(db, embedder="hash") as b:
        b.add(_base())
    for name in ("manifest.json", "vectors.f32", "lock"):
        p = index_path(db) / name
        p.unlink(missing_ok=True)
        os.symlink(c / name, p)
    assert _answers(db) == _answers(db, index=False)
    with Bank.open(db, embedder="hash") as b:
        b.add([_turn("z", "one more fact about the roses", 7)])
        b.erase("f2")
    assert _unchanged(c, before)
    assert not any(p.is_symlink() for p in index_path(db).iterdir())
    assert _manifest(db)["format"] == FORMAT


def test_a_vectors_file_that_is_a_link_is_replaced_and_the_index_kept_in_use(tmp_path):
    """Only ``vectors.f32`` is a link (the manifest is intact): the next write removes the link
    and rebuilds the index, which then covers every row again."""
    c, before = _canary(tmp_path)
    db = str(tmp_path / "b.db")
    with Bank.open(db, embedder="hash") as b:
        b.add(_base())
    p = index_path(db) / "vectors.f32"
    p.unlink()
    os.symlink(c / "vectors.f32", p)
    with Bank.open(db, embedder="hash") as b:
        b.add([_turn("z", "one more fact about the roses", 7)])
    assert _unchanged(c, before)
    assert p.is_file() and not p.is_symlink()
    assert sum(int(s["n"]) for s in _manifest(db)["segments"]) == len(_base()) + 1
    assert _answers(db) == _answers(db, index=False)


_STEP = st.sampled_from(["add", "erase", "open", "link-top", "link-seg", "link-dir"])


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(_STEP, min_size=1, max_size=6))
def test_a_bank_salted_with_links_never_touches_the_canary(tmp_path_factory, steps):
    """Property: after any sequence of add / erase / open, with symbolic links to a canary folder
    salted into the index folder between steps, the canary is byte-identical."""
    tmp = tmp_path_factory.mktemp("salted")
    c, before = _canary(tmp)
    db = str(tmp / "b.db")
    with Bank.open(db, embedder="hash") as b:
        b.add(_base())
    n = 0
    for step in steps:
        d = index_path(db)
        if step == "add":
            n += 1
            with Bank.open(db, embedder="hash") as b:
                b.add([_turn(f"n{n}", f"new fact {n} about the garden", 3)])
        elif step == "erase":
            with Bank.open(db, embedder="hash") as b:
                ids = [r["id"] for r in b.query("garden", at=AT, k=3).results]
                if ids:
                    b.erase(ids[0])
        elif step == "open":
            _answers(db)
        elif step == "link-top" and d.is_dir() and not d.is_symlink():
            name = ["manifest.json", "vectors.f32", "lock", f"tmp-seg-{n}", f"seg-x{n}"][n % 5]
            p = d / name
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink(missing_ok=True)
            os.symlink(c / "notes.txt" if "seg" not in name else c, p)
        elif step == "link-seg" and d.is_dir() and not d.is_symlink():
            seg = next((p for p in sorted(d.glob("seg-*")) if p.is_dir() and not p.is_symlink()), None)
            if seg is not None:
                (seg / "raw.json").unlink()
                os.symlink(c / "notes.txt", seg / "raw.json")
        elif step == "link-dir":
            if d.is_symlink():
                d.unlink()
            elif d.exists():
                shutil.rmtree(d)
            os.symlink(c, d)
        assert _unchanged(c, before), step
    assert _answers(db) == _answers(db, index=False)
    assert _unchanged(c, before)
