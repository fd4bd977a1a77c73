"""The bank's persisted index (frcore.bank.storage._index) and the BM25 scorer it serves.

What must hold: a bank opened from its index answers every query exactly as the same bank read
from SQLite alone (``index=False``) — after any interleaving of adds, retractions, erasures,
releases and users; the index is rebuilt when missing, stale, of another bank or of another
owner normalisation; an erase leaves no byte of the erased fact in the index folder; and the
postings scorer equals bm25s bit for bit on any subset of rows.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from frcore.bank import Bank
from frcore.bank.records._lifecycle import slot_codes
from frcore.bank.search._lexical import (
    STOPWORDS,
    LexicalIndex,
    Lexicon,
    Postings,
    _tokenize,
    concat_postings,
    tokenize_many,
)
from frcore.bank.storage._index import decode, encode, index_path
from frcore.bank.storage._merging import merge_count
from frcore.bank.storage._synthetic import synthetic_facts

WORDS = ["apple", "banana", "moved", "moving", "paris", "city", "topic", "run", "runs", "the", "what", "42", "x"]


def test_stopwords_are_bm25s_list():
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    assert STOPWORDS == tuple(STOPWORDS_EN_PLUS)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), max_size=8), min_size=1, max_size=30), st.data())
def test_postings_scores_equal_bm25s_on_any_subset(docs, data):
    """:class:`Lexicon` over a subset of rows (split into parts at any cut) gives bm25s' scores
    over the texts of that subset, bit for bit."""
    texts = [" ".join(d) for d in docs]
    tokens = tokenize_many(texts)
    assert tokens == _tokenize(texts)
    n = len(texts)
    rows = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1))), dtype=np.int64)
    cut = data.draw(st.integers(0, n))
    parts = [Postings.build(tokens[:cut]), Postings.build(tokens[cut:])]
    ref = LexicalIndex([texts[i] for i in rows], tokens=[tokens[i] for i in rows])
    query = " ".join(data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5)))
    want = ref.scores(query)
    lexicon = Lexicon(parts, rows)
    assert np.array_equal(lexicon.scores(query), want)
    assert np.array_equal(lexicon.scores(query), want)  # again, from its memo
    assert np.array_equal(Lexicon([concat_postings(parts)], rows).scores(query), want)
    if rows.size == n:
        assert np.array_equal(Lexicon(parts).scores(query), want)


QUERIES = ["what is the latest about topic 42", "any upcoming obligations", "which slot changed recently"]
TIMES = ["2024-03-01", "2024-09-01", "2025-06-01"]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), st.sampled_from(["", "a", "b", "slot:x", "é"])), max_size=40))
def test_coded_column_round_trip(values):
    """A coded string column (slots, kinds, speakers, users) reads back as it was written: every
    row's value, ``None`` included, one object per distinct value, codes as slot codes number them."""
    column = np.empty(len(values), dtype=object)
    column[:] = values
    distinct, codes = encode(column)
    back = decode(distinct, codes)
    assert back.tolist() == values
    assert len({id(x) for x in back.tolist() if x is not None}) == len(distinct) == len(set(values) - {None})
    assert np.array_equal(codes, slot_codes(values))
    with pytest.raises(ValueError):
        decode(distinct, np.array([len(distinct)], dtype=np.int32))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.sampled_from(["", "a", "b", "slot:x", "é"])), max_size=40),
    st.lists(st.sampled_from(["a", "c", "slot:x", "z"]), max_size=4, unique=True),
)
def test_slot_codes_number_keys_in_order_of_first_occurrence(values, before):
    """Slot codes by their definition: -1 for no slot, else the key's position among the distinct
    keys, those numbered before (``vocab``) first, then the new ones as they first occur."""
    vocab = {k: i for i, k in enumerate(before)}
    order = list(before) + [
        v for i, v in enumerate(values) if v is not None and v not in before and v not in values[:i]
    ]
    want = [-1 if v is None else order.index(v) for v in values]
    assert slot_codes(values, vocab).tolist() == want
    assert list(vocab) == order  # extended with the new keys, in that order


def _answers(bank: Bank, users=(None,)) -> list:
    out = []
    for user in users:
        b = bank.for_user(user)
        for q in QUERIES:
            for at in TIMES:
                r = b.query(q, at=at, k=15)
                out.append((user, q, at, r.results, r.candidate_ids))
            out.append((user, q, "known", b.query(q, at=TIMES[-1], known_at="2000-01-01", k=5).results))
            out.append((user, q, "quarantine", b.query(q, at=TIMES[-1], include_quarantined=True, k=5).results))
    return out


def _equal(x: np.ndarray, y: np.ndarray) -> bool:
    if x.dtype.kind == "f":
        return np.array_equal(x, y, equal_nan=True)
    return x.dtype == y.dtype and x.shape == y.shape and list(x.tolist()) == list(y.tolist())


def _same_rows(a: Bank, b: Bank) -> None:
    la, lb = a.store._load(), b.store._load()
    assert la.n == lb.n
    for k in la.cols:
        assert _equal(la.cols[k], lb.cols[k]), k
    for k in la.life:
        assert _equal(la.life[k], lb.life[k]), k
    assert la.links == lb.links
    assert np.array_equal(la.slot_codes, lb.slot_codes)
    assert np.array_equal(la.recorded, lb.recorded)
    assert la.edges == lb.edges


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(1, 60), st.sampled_from([None, "ana", "bo"])),
        st.tuples(st.just("erase"), st.integers(0, 10_000), st.none()),
        st.tuples(st.just("retract"), st.integers(0, 10_000), st.none()),
        st.tuples(st.just("reopen"), st.none(), st.none()),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(OPS, st.integers(0, 2**16))
def test_an_indexed_bank_answers_as_sqlite_alone(tmp_path_factory, ops, seed):
    """Any interleaving of adds (by several users), erasures, retractions and reopenings: the
    bank read through its index (reopened in a fresh object, as a new process would) answers
    every query — several valid times, a transaction-time cut, quarantine included — exactly as
    the same file read from SQLite alone; its rows, edges and lifecycle inputs are equal."""
    d = tmp_path_factory.mktemp("idx")
    db = str(d / "b.db")
    facts = synthetic_facts(400, seed=seed)
    rng = random.Random(seed)
    writer = Bank.open(db, embedder="hash-64")
    used = 0
    stored: list[tuple[str, str | None]] = []
    for op, x, user in ops:
        if op == "add" and used < len(facts):
            batch = [dict(f, user=user) if user else f for f in facts[used : used + x]]
            for f in batch:  # links only to this user's earlier facts
                f.pop("links", None)
            if stored and rng.random() < 0.5:
                mine = [i for i, u in stored if u == user]
                if mine:
                    batch[-1]["links"] = {"supersedes": rng.choice(mine)}
            used += len(batch)
            writer.for_user(user).add(batch)
            stored += [(f["id"], user) for f in batch]
        elif op == "erase" and stored:
            fid, user = stored.pop(x % len(stored))
            writer.for_user(user).erase(fid, reason="test")
        elif op == "retract" and stored:
            fid, user = stored[x % len(stored)]
            writer.for_user(user).retract(fid, at="2024-06-01")
        elif op == "reopen":
            writer.close()
            writer = Bank.open(db)
        got = writer.store._load()  # read incrementally, or from the index and SQLite after a reopen
        assert np.array_equal(got.slot_codes, slot_codes(got.cols["slots"].tolist()))
    writer.close()
    users = (None, "ana", "bo")
    with Bank.open(db, readonly=True) as indexed, Bank.open(db, readonly=True, index=False) as plain:
        if stored:
            assert indexed.store._load().segments, "the index was not used"
        assert _answers(indexed, users) == _answers(plain, users)
        _same_rows(indexed, plain)


def _bank(db: str, n: int = 300, seed: int = 1) -> None:
    with Bank.open(db, embedder="hash-64") as b:
        facts = synthetic_facts(n, seed=seed)
        for s in range(0, n, 100):
            b.add(facts[s : s + 100])


def test_readonly_open_of_a_stale_index_reads_the_rest_from_sqlite(tmp_path):
    """Facts added by a writer that keeps no index are read from SQLite by a read-only process
    (which writes nothing); the next writable open adds them to the index."""
    db = str(tmp_path / "b.db")
    _bank(db)
    extra = synthetic_facts(350, seed=1)[300:]
    with Bank.open(db, index=False) as w:
        w.add(extra)
    before = sorted(p.name for p in index_path(db).iterdir())
    with Bank.open(db, readonly=True) as r, Bank.open(db, readonly=True, index=False) as plain:
        assert r.store._load().indexed == 300 and r.store._load().n == 350
        assert _answers(r) == _answers(plain)
    assert sorted(p.name for p in index_path(db).iterdir()) == before
    with Bank.open(db) as w:
        assert w.store._load().indexed == 350
        w2 = json.loads((index_path(db) / "manifest.json").read_text())
        assert sum(s["n"] for s in w2["segments"]) == 350


def test_missing_index_is_rebuilt(tmp_path):
    db = str(tmp_path / "b.db")
    _bank(db)
    with Bank.open(db, readonly=True) as r:
        want = _answers(r)
    import shutil

    shutil.rmtree(index_path(db))
    with Bank.open(db) as w:
        assert _answers(w) == want
    with Bank.open(db, readonly=True) as r:
        assert r.store._load().indexed == 300
        assert _answers(r) == want


def test_an_index_of_an_older_format_is_replaced_whole(tmp_path):
    """An index folder this version does not read (an older format, a damaged manifest) is
    ignored by readers; the next writer scrubs every file of it before writing its own — no text
    or id of the old segments stays — and the bank answers as before."""
    db = str(tmp_path / "b.db")
    _bank(db)
    with Bank.open(db, readonly=True) as r:
        want = _answers(r)
    manifest = index_path(db) / "manifest.json"
    m = json.loads(manifest.read_text())
    old = [index_path(db) / s["dir"] for s in m["segments"]]
    manifest.write_text(json.dumps(m | {"format": "frcore-bank-index-v1"}))
    (index_path(db) / "tmp-seg-000000000001-000000000300-00000000").mkdir()  # a crashed write's
    (index_path(db) / "tmp-seg-000000000001-000000000300-00000000" / "strings.json").write_text('["bench.7"]')
    with Bank.open(db, readonly=True) as r:
        assert not r.store._load().segments
        assert _answers(r) == want
    with Bank.open(db) as w:
        assert _answers(w) == want
    assert not any(p.exists() for p in old)
    assert not (index_path(db) / "tmp-seg-000000000001-000000000300-00000000").exists()
    with Bank.open(db, readonly=True) as r:
        assert r.store._load().indexed == 300
        assert _answers(r) == want


def test_an_index_of_another_bank_or_owner_is_not_used(tmp_path):
    """A new bank at the path of a deleted one never reads the old bank's index; a bank opened
    with another owner normalisation (other tokens and vectors) does not read it either."""
    db = str(tmp_path / "b.db")
    _bank(db, seed=1)
    for suffix in ("", "-wal", "-shm"):
        Path(db + suffix).unlink(missing_ok=True)
    _bank(db, n=50, seed=2)
    with Bank.open(db, readonly=True) as r, Bank.open(db, readonly=True, index=False) as plain:
        assert r.store._load().n == 50
        assert _answers(r) == _answers(plain)
    with Bank.open(db, readonly=True, owner="Topic Person") as r:
        assert not r.store._load().segments
    with (
        Bank.open(db, readonly=True, owner="Topic Person") as r,
        Bank.open(db, readonly=True, owner="Topic Person", index=False) as plain,
    ):
        assert _answers(r) == _answers(plain)


def _index_bytes(db: str) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(index_path(db).rglob("*")) if p.is_file())


@pytest.mark.parametrize("which", [0, 150, 299])
def test_erase_leaves_nothing_of_the_fact_in_the_index(tmp_path, which):
    """After an erase, no file of the index holds the erased fact's id, text or vector; the
    index is rebuilt for the facts after it and answers as SQLite alone."""
    db = str(tmp_path / "b.db")
    _bank(db)
    facts = synthetic_facts(300, seed=1)
    target = facts[which]
    with Bank.open(db) as b:
        vec = b.embedder.embed([target["text"]])[0].astype(np.float32).tobytes()
        assert target["text"].encode() in _index_bytes(db) and vec in _index_bytes(db)
        b.erase(target["id"], reason="gdpr")
        blob = _index_bytes(db)
        assert target["text"].encode() not in blob
        assert f'"{target["id"]}"'.encode() not in blob
        assert vec not in blob
        b.query("anything about topic 42", at="2025-06-01")  # rebuilds the dropped segments
    blob = _index_bytes(db)
    assert target["text"].encode() not in blob and vec not in blob
    with Bank.open(db, readonly=True) as r, Bank.open(db, readonly=True, index=False) as plain:
        assert r.store._load().indexed == 299
        assert _answers(r) == _answers(plain)


def test_an_erase_through_a_store_without_an_index_still_scrubs_it(tmp_path):
    """An erase through the store alone (``fr bank erase``, a ``Store`` opened without a bank)
    scrubs the index too: no byte of the fact stays in the folder, and the rest stays usable."""
    from frcore.bank.storage._store import Store

    db = str(tmp_path / "b.db")
    _bank(db)
    target = synthetic_facts(300, seed=1)[250]  # in the second segment: the first (rows 1-200) is kept
    with Store.open(db) as store:
        store.erase(target["id"], reason="gdpr")
    assert target["text"].encode() not in _index_bytes(db)
    with Bank.open(db, readonly=True) as r, Bank.open(db, readonly=True, index=False) as plain:
        assert r.store._load().indexed == 200
        assert _answers(r) == _answers(plain)


def test_an_index_older_than_an_unseen_erase_is_scrubbed(tmp_path):
    """An erase the index never saw (by a program that knows no index: simulated by counting an
    erase in the bank behind the index's back) leaves the index stale: a read-only open never
    reads it; the next writable open scrubs it and rebuilds it; the next erase scrubs it whole."""
    import sqlite3

    db = str(tmp_path / "b.db")
    _bank(db)
    con = sqlite3.connect(db)
    con.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key IN ('erasures', 'version')")
    con.commit()
    con.close()
    with Bank.open(db, readonly=True) as r, Bank.open(db, readonly=True, index=False) as plain:
        assert not r.store._load().segments
        assert _answers(r) == _answers(plain)
    first = sorted(p.name for p in index_path(db).glob("seg-*"))
    with Bank.open(db) as w:
        w.query("topic", at="2025-06-01")
    assert not set(first) & {p.name for p in index_path(db).glob("seg-*")}  # scrubbed, rebuilt anew
    with Bank.open(db, readonly=True) as r:
        assert r.store._load().indexed == 300


def _adds(sizes, fan_in):
    """Segment sizes after each add of ``sizes`` under :func:`merge_count`, and how many times
    each row was written (its add, then each merge it took part in)."""
    segs: list[list[int]] = []  # each segment's rows, by global row number
    writes: list[int] = []
    for n in sizes:
        segs.append(list(range(len(writes), len(writes) + n)))
        writes += [1] * n
        while k := merge_count([len(s) for s in segs], fan_in):
            merged = [r for s in segs[-k:] for r in s]
            for r in merged:
                writes[r] += 1
            segs[-k:] = [merged]
    return [len(s) for s in segs], writes


def test_fan_in_two_is_binary_counter_merging():
    """F = 2: the last two merge exactly while the older is not larger."""
    for sizes in ([5, 3], [3, 5], [4, 4], [8, 4, 2, 2], [8, 4, 2, 1]):
        assert merge_count(sizes, 2) == (2 if sizes[-2] <= sizes[-1] else 0)
    assert merge_count([7], 2) == 0


@settings(max_examples=200, deadline=None)
@given(
    st.integers(2, 6),
    st.integers(1, 400),
    st.integers(1, 9),
)
def test_equal_adds_make_a_base_f_counter(fan_in, adds, size):
    """Adds of one size b: the segments are the base-F digits of the add count (each digit d as
    d segments of b·F^position rows, largest first), so at most F - 1 segments of each size,
    and no row is written more than 1 + floor(log_F(adds)) times."""
    sizes, writes = _adds([size] * adds, fan_in)
    digits, m = [], adds
    while m:
        digits.append(m % fan_in)
        m //= fan_in
    expected = [size * fan_in**p for p in reversed(range(len(digits))) for _ in range(digits[p])]
    assert sizes == expected
    assert max(writes) <= len(digits)


@settings(max_examples=300, deadline=None)
@given(st.integers(3, 6), st.lists(st.integers(1, 60), min_size=1, max_size=150))
def test_any_adds_leave_few_segments(fan_in, sizes):
    """Any adds (slowly shrinking ones too, under which binary-counter merging never merges):
    every row is kept, and every F consecutive segments shrink by more than F - 1, so there are
    at most (F - 1)(log_{F-1}(rows) + 1) segments."""
    got, writes = _adds(sizes, fan_in)
    assert sum(got) == sum(sizes) == len(writes)
    assert all(got[i] > (fan_in - 1) * got[i + fan_in - 1] for i in range(len(got) - fan_in + 1))
    assert len(got) <= (fan_in - 1) * (math.log(sum(sizes), fan_in - 1) + 1)


def test_shrinking_adds_are_merged():
    """Adds of 100, 99, …, 61 rows (40 adds): four at a time they merge (F = 4), where the
    older-not-larger rule of F = 2 keeps all 40 apart."""
    sizes = list(range(100, 60, -1))
    assert len(_adds(sizes, 2)[0]) == 40
    assert len(_adds(sizes, 4)[0]) <= 6


def test_segments_stay_few(tmp_path):
    """Merging four at a time: 40 adds of 10 facts leave the base-4 digits of 40 (2, 2, 0):
    segments of 160, 160, 40 and 40 rows."""
    db = str(tmp_path / "b.db")
    facts = synthetic_facts(400, seed=3)
    with Bank.open(db, embedder="hash-64") as b:
        for s in range(0, 400, 10):
            b.add(facts[s : s + 10])
    m = json.loads((index_path(db) / "manifest.json").read_text())
    assert [s["n"] for s in m["segments"]] == [160, 160, 40, 40]
    his = [s["hi"] for s in m["segments"]]
    assert his == sorted(his)
    assert len(list(index_path(db).glob("seg-*"))) == len(m["segments"])  # merged-away ones removed


def test_an_add_indexes_the_vectors_it_stored_without_reading_them_back(tmp_path, monkeypatch):
    """The index takes an add's vectors as that add's transaction stored them: equal to SQLite's,
    row for row, and not read back from it."""
    from frcore import parse_time
    from frcore.bank.storage._tables import Tables

    db = str(tmp_path / "b.db")
    facts = synthetic_facts(120, seed=5)
    with Bank.open(db, embedder="hash-64") as b:
        b.add(facts[:60])
        reads: list = []
        real = Tables.get_embeddings
        monkeypatch.setattr(Tables, "get_embeddings", lambda self, *a: reads.append(a) or real(self, *a))
        b.add(facts[60:])
        monkeypatch.undo()
        assert b.store._load().indexed == 120 and reads == []
        stored, missing = b.store.get_embeddings(b.embedding_key, [f["id"] for f in facts])
        assert missing == []
    with Bank.open(db, readonly=True) as r:
        sources = r.store.read(parse_time("2030-01-01")).sources
        assert sources is not None
        assert np.array_equal(np.asarray(sources[0]), stored)


def test_concurrent_writers_keep_the_index_whole(tmp_path):
    """Three processes adding to one bank at once (50 facts per add): every fact ends up in the
    index, and it answers as the file read from SQLite alone."""
    import subprocess
    import sys

    db = str(tmp_path / "b.db")
    Bank.open(db, embedder="hash-64").close()
    code = (
        "import sys\n"
        "from frcore.bank import Bank\n"
        "from frcore.bank.storage._synthetic import synthetic_facts\n"
        "who = int(sys.argv[1])\n"
        "facts = synthetic_facts(300, seed=who, prefix=f'w{who}')\n"
        "for f in facts:\n    f.pop('links', None)\n"
        "with Bank.open(sys.argv[2]) as b:\n"
        "    for s in range(0, 300, 50):\n        b.add(facts[s : s + 50])\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(i), db]) for i in range(3)]
    assert [p.wait(timeout=600) for p in procs] == [0, 0, 0]
    with Bank.open(db) as w:  # a write open indexes whatever a lost race left outside
        w.query("topic", at="2025-06-01")
    with Bank.open(db, readonly=True) as r, Bank.open(db, readonly=True, index=False) as plain:
        assert r.store._load().n == 900 and r.store._load().indexed == 900
        assert _answers(r) == _answers(plain)
        _same_rows(r, plain)
