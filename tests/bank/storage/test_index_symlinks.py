"""The index scrub never writes outside the bank (issue 40, item 1): a ``tmp-seg-*`` that is a
symbolic link to another folder, a segment file or ``vectors.f32`` replaced by a link to a file
elsewhere — every add and erase removes the link and leaves its target as it was."""

from __future__ import annotations

import os
from pathlib import Path

from frcore.bank import Bank
from frcore.bank.storage._index import _scrub, _zero_file, index_path

SECRET = b"the owner's own file, not the bank's\n"


def _outside(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "outside"
    folder.mkdir()
    f = folder / "notes.txt"
    f.write_bytes(SECRET)
    return folder, f


def _turn(i: str, text: str) -> dict:
    return {"id": i, "text": text, "said_at": "2024-01-01", "kind": "turn"}


def _bank(db: str) -> None:
    with Bank.open(db, embedder="hash") as b:
        b.add([_turn(f"f{i}", f"fact number {i} about the garden") for i in range(20)])


def test_a_tmp_seg_link_to_a_folder_outside_is_removed_not_followed(tmp_path):
    folder, f = _outside(tmp_path)
    db = str(tmp_path / "b.db")
    _bank(db)
    link = index_path(db) / "tmp-seg-000000000001-000000000009-deadbeef"
    os.symlink(folder, link)
    with Bank.open(db, embedder="hash") as b:
        b.add([_turn("g", "another fact about the garden")])
        b.erase("f3")
    assert f.read_bytes() == SECRET
    assert not os.path.lexists(link)


def test_a_segment_file_replaced_by_a_link_is_never_written_through(tmp_path):
    folder, f = _outside(tmp_path)
    db = str(tmp_path / "b.db")
    _bank(db)
    seg = next(p for p in index_path(db).glob("seg-*") if p.is_dir())
    target = seg / "strings.json"
    target.unlink()
    os.symlink(f, target)
    with Bank.open(db, embedder="hash") as b:
        b.erase("f3")  # the erase scrubs the segment holding f3
    assert f.read_bytes() == SECRET


def test_scrub_and_zero_never_follow_links(tmp_path):
    folder, f = _outside(tmp_path)
    d = tmp_path / "seg"
    d.mkdir()
    (d / "own.npy").write_bytes(b"bank bytes")
    os.symlink(f, d / "link.json")
    _zero_file(d / "link.json")
    assert f.read_bytes() == SECRET
    _scrub(d)
    assert not d.exists() and f.read_bytes() == SECRET
    os.symlink(folder, tmp_path / "dirlink")
    _scrub(tmp_path / "dirlink")
    assert not os.path.lexists(tmp_path / "dirlink") and f.read_bytes() == SECRET


def test_a_vectors_file_replaced_by_a_link_is_never_zeroed(tmp_path):
    folder, f = _outside(tmp_path)
    db = str(tmp_path / "b.db")
    _bank(db)
    vec = index_path(db) / "vectors.f32"
    if vec.exists():
        vec.unlink()
    os.symlink(f, vec)
    with Bank.open(db, embedder="hash") as b:
        b.erase("f3")
        b.add([_turn("g", "another fact about the garden")])
    assert f.read_bytes() == SECRET
