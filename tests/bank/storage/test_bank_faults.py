"""Fault injection for FR-Bank: SIGKILL at random points of add, retract and erase; concurrent
readers with a writer and an eraser; the erase-between-snapshot-and-embedding race.

After every kill the bank must pass ``PRAGMA integrity_check``, hold every acknowledged write
(an acknowledged erase: gone everywhere), hold no partial batch, and hold a vector for every
fact (facts and vectors commit together); the natural retry of the interrupted add succeeds
(re-adding identical facts is a no-op). ``FRCORE_FAULT_TRIALS`` (default 30) sets the number of
kill trials; the CLI kill trials run ``fr bank add`` itself (``FRCORE_FAULT_CLI_TRIALS``,
default 1). Read-only storage, full disks and corrupted files: tests/bank/test_bank_errors.py.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from collections import Counter
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from support.paths import ROOT

from frcore.bank import Bank
from frcore.bank.storage._store import Store

REPO = ROOT
TRIALS = int(os.environ.get("FRCORE_FAULT_TRIALS", "30"))
CLI_TRIALS = int(os.environ.get("FRCORE_FAULT_CLI_TRIALS", "1"))
BATCH = 12
DIM = 8
MODEL = "fault-vec"


def vec(fid: str) -> np.ndarray:
    """The deterministic vector of a fact id (so a stored vector can be checked to be its own)."""
    rng = np.random.default_rng(abs(hash_id(fid)))
    v = rng.standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def hash_id(fid: str) -> int:
    import hashlib

    return int.from_bytes(hashlib.blake2b(fid.encode(), digest_size=8).digest(), "little") >> 1


# The child imports only frcore.bank.storage._store (stub packages skip frcore/__init__, which imports
# JAX: ~2 s per process), so each trial starts in ~0.4 s. It prints each operation's intent
# before it starts ("a <batch json>", "r <id>", "e <id>") and its acknowledgement after it
# returned ("A <batch>", "R <id>", "E <id>"); a line cut by the kill is not acknowledged.
CHILD = (
    textwrap.dedent(
        """
    import hashlib, json, os, random, sys, types
    import numpy as np
    root, path, trial, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    for name, sub in (("frcore", "frcore"), ("frcore.bank", os.path.join("frcore", "bank"))):
        mod = types.ModuleType(name)
        mod.__path__ = [os.path.join(root, sub)]
        sys.modules[name] = mod
    from frcore.bank.storage._store import Store

    def vec(fid):
        h = int.from_bytes(hashlib.blake2b(fid.encode(), digest_size=8).digest(), "little") >> 1
        v = np.random.default_rng(h).standard_normal(DIM).astype(np.float32)
        return v / np.linalg.norm(v)

    def vectors(facts):  # one vector per fact of the batch
        return MODEL, np.stack([vec(f["id"]) for f in facts])

    rng = random.Random(seed)
    store = Store.open(path)
    live = [e.id for e in store.edges()]
    print("ready", flush=True)
    k = 0
    while True:
        op = rng.choice("aaarre") if live else "a"
        if op == "a":
            name = f"t{trial}.b{k}"
            k += 1
            batch = []
            for i in range(BATCH):
                fid = f"{name}.{i}"
                f = {"id": fid, "text": f"fact {i} of batch {name} about topic {rng.randrange(50)}",
                     "categories": {"OTHER": 1.0}, "said_at": f"2025-01-{1 + i % 28:02d}",
                     "slot": f"s{rng.randrange(40)}", "speaker": f"speaker-{fid}"}
                if live and rng.random() < 0.3:
                    f["links"] = {"supersedes": rng.choice(live)}
                batch.append(f)
            print("a " + json.dumps(batch), flush=True)
            store.add_facts(batch, vectors=vectors(batch))
            print("A " + name, flush=True)
            live += [f["id"] for f in batch]
        elif op == "r":
            fid = rng.choice(live)
            print("r " + fid, flush=True)
            store.retract(fid, reason=f"retracted {fid} on request")
            print("R " + fid, flush=True)
        else:
            fid = live.pop(rng.randrange(len(live)))
            print("e " + fid, flush=True)
            store.erase(fid, reason=f"erase {fid}", wait=0.05)
            print("E " + fid, flush=True)
    """
    )
    .replace("BATCH", str(BATCH))
    .replace("DIM", str(DIM))
    .replace("MODEL", repr(MODEL))
)


def _vectors(facts):
    return MODEL, np.stack([vec(f["id"]) for f in facts])


class Model:
    """What the acknowledgements say the bank must hold."""

    def __init__(self) -> None:
        self.batches: dict[str, list[str]] = {}  # acknowledged batch → its ids
        self.erased: set[str] = set()  # acknowledged erasures
        self.erase_tried: set[str] = set()  # erasures started (perhaps committed, unacknowledged)
        self.retracted: set[str] = set()

    def check(self, store: Store, pending_batch: list[str] | None) -> None:
        assert store.integrity_check() == "ok"
        ids = [e.id for e in store.edges()]
        present = set(ids)
        assert len(ids) == len(present)
        for batch in self.batches.values():
            for fid in batch:
                assert fid in present or fid in self.erase_tried, f"acknowledged fact {fid} lost"
        # no partial batch: a batch is all there (but for erasures) or not at all
        by_batch = Counter(fid.rsplit(".", 1)[0] for fid in ids)
        for name, n in by_batch.items():
            erased_here = sum(1 for fid in self.erase_tried if fid.rsplit(".", 1)[0] == name)
            assert BATCH - erased_here <= n <= BATCH, f"partial batch {name}: {n} of {BATCH}"
        if pending_batch:
            got = sum(fid in present for fid in pending_batch)
            assert got in (0, len(pending_batch)), f"interrupted batch partially stored: {got} of {len(pending_batch)}"
        # every fact has its own vector (one transaction with the fact)
        vids, mat = store.all_embeddings(MODEL)
        assert set(vids) == present, (
            f"facts without vectors: {sorted(present - set(vids))[:3]}, vectors without facts: "
            f"{sorted(set(vids) - present)[:3]}"
        )
        for fid, v in zip(vids[:50], mat[:50]):
            np.testing.assert_array_equal(v, vec(fid))
        # an acknowledged erase is gone everywhere but the audit hash; an acknowledged retract is kept
        conn = store.conn
        reasons = [
            r[0] for r in conn.execute("SELECT reason FROM transitions UNION ALL SELECT reason FROM audit") if r[0]
        ]
        for fid in self.erased:
            assert fid not in present and store.was_erased(fid)
            assert conn.execute("SELECT COUNT(*) FROM transitions WHERE edge_id=?", (fid,)).fetchone()[0] == 0
            named = re.compile(rf"(?<!\w){re.escape(fid)}(?!\w)")
            assert not [r for r in reasons if named.search(r)], f"a reason still names the erased {fid}"
            assert conn.execute("SELECT COUNT(*) FROM edge_links WHERE src=? OR dst=?", (fid, fid)).fetchone()[0] == 0
            assert (
                conn.execute("SELECT COUNT(*) FROM edges WHERE instr(links, ?) > 0", (json.dumps(fid),)).fetchone()[0]
                == 0
            )
        trs = {t.edge_id for t in store.transitions()}
        for fid in self.retracted - self.erase_tried:
            assert fid in trs, f"acknowledged retraction of {fid} lost"


def _kill_trial(script: Path, db: Path, trial: int, rng: random.Random, model: Model) -> dict:
    proc = subprocess.Popen(
        [sys.executable, str(script), str(REPO), str(db), str(trial), str(rng.randrange(1 << 30))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    first = proc.stdout.readline()
    assert first == "ready\n", proc.stderr.read()
    time.sleep(rng.uniform(0.0, 0.3))
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read()
    lines = proc.stdout.read().splitlines(keepends=True)
    proc.stdout.close()
    proc.stderr.close()
    pending: list | None = None
    last_op = None
    for line in lines:
        if not line.endswith("\n"):
            break  # cut by the kill: neither acknowledged nor a complete intent
        tag, _, rest = line.rstrip("\n").partition(" ")
        if tag == "a":
            pending, last_op = json.loads(rest), "add"
        elif tag == "A":
            model.batches[rest] = [f["id"] for f in pending]
            pending = None
        elif tag == "r":
            last_op = "retract"
        elif tag == "R":
            model.retracted.add(rest)
        elif tag == "e":
            model.erase_tried.add(rest)
            last_op = "erase"
        elif tag == "E":
            model.erased.add(rest)
    with Store.open(db) as store:
        model.check(store, [f["id"] for f in pending] if pending else None)
        if pending:  # the natural retry of the interrupted add: a no-op if it had committed
            added = store.add_facts(pending, vectors=_vectors(pending))
            assert len(added) + len(added.unchanged) == len(pending) and (not added or not added.unchanged)
            model.batches[pending[0]["id"].rsplit(".", 1)[0]] = [f["id"] for f in pending]
            model.check(store, None)
    return {"last_op": last_op, "retried": bool(pending)}


def test_sigkill_during_add_retract_erase(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    db = tmp_path / "fault.db"
    rng = random.Random(16)
    model = Model()
    t0 = time.perf_counter()
    outcomes = [_kill_trial(script, db, trial, rng, model) for trial in range(TRIALS)]
    elapsed = time.perf_counter() - t0
    ops = Counter(o["last_op"] for o in outcomes)
    assert len(model.batches) >= TRIALS and model.erased and model.retracted, (ops, len(model.batches))
    # the kills landed inside every kind of operation
    assert TRIALS < 20 or (ops["add"] and ops["erase"] and ops["retract"]), ops
    print(
        f"{TRIALS} kill trials in {elapsed:.1f} s; interrupted ops {dict(ops)}; "
        f"{len(model.batches)} batches, {len(model.erased)} erasures, {len(model.retracted)} retractions acknowledged"
    )


def test_sigkill_during_cli_add_then_retry(tmp_path):
    """``fr bank add`` killed at a random moment; rerunning the same command completes the job
    (identical facts already stored are skipped), and the bank holds every fact once, with its
    vector."""
    facts = [
        {
            "id": f"c{i}",
            "text": f"cli fact {i} about the topic {i % 97}",
            "categories": {"OTHER": 1.0},
            "said_at": "2025-02-01",
            "slot": f"s{i % 300}",
        }
        for i in range(6000)
    ]
    src = tmp_path / "facts.json"
    src.write_text(json.dumps(facts))
    rng = random.Random(7)
    for trial in range(CLI_TRIALS):
        db = tmp_path / f"cli{trial}.db"
        Store.open(db, embedder=("hash-256", 256)).close()  # the hashing embedder, recorded
        proc = subprocess.Popen(
            [sys.executable, "-m", "frcore.cli", "bank", "add", str(db), str(src)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(rng.uniform(1.0, 4.0))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        with Store.open(db) as s:
            assert s.integrity_check() == "ok" and s.count() in (0, len(facts))
        r = subprocess.run(
            [sys.executable, "-m", "frcore.cli", "bank", "add", str(db), str(src), "--json"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert out["added"] + len(out["unchanged"]) == len(facts) and (out["added"] == 0 or not out["unchanged"])
        with Store.open(db) as s:
            assert s.count() == len(facts)
            ids, _ = s.all_embeddings("hash-256")
            assert sorted(ids) == sorted(f["id"] for f in facts)


# ----------------------------------------------------------------------------- races


def _home_bank(path: Path, index: bool = True) -> Bank:
    bank = Bank.open(str(path), embedder="hash", index=index)
    bank.add(
        [
            {
                "id": "home-old",
                "text": "I live in Porto, in a flat near the river.",
                "categories": {"IDENTITY_SELF_CONCEPT": 1.0},
                "said_at": "2025-01-02",
                "slot": "home_city",
            },
            {
                "id": "home-now",
                "text": "I moved to Lisbon, where I live now.",
                "categories": {"IDENTITY_SELF_CONCEPT": 1.0},
                "said_at": "2025-06-01",
                "slot": "home_city",
                "links": {"supersedes": "home-old"},
            },
        ]
        + [
            {
                "id": f"filler{i}",
                "text": f"I enjoy activity number {i} with friends on weekends",
                "categories": {"HOBBIES_RECREATION": 1.0},
                "said_at": "2025-03-01",
            }
            for i in range(40)
        ]
    )
    return bank


def test_erase_between_snapshot_and_embedding_keeps_the_current_fact(tmp_path, monkeypatch):
    """The race of issue 16: a fact erased after a reader took its snapshot, before it read the
    vectors. Its vector is gone; it must be left out (never NaN), and the fact it links to —
    the current one in its slot — must stay in the top 10, without any warning."""
    db = tmp_path / "race.db"
    reader = _home_bank(db, index=False)  # vectors read from SQLite (the index's race: the next test)
    eraser = Store.open(db)
    original = reader.store.all_embeddings
    fired = []

    def erase_then_read(model):
        if not fired:
            fired.append(eraser.erase("home-old", reason="race"))  # between snapshot and embedding
        return original(model)

    monkeypatch.setattr(reader.store, "all_embeddings", erase_then_read)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = reader.query("where do I live?", at="2026-01-01", intent="historical")
    assert fired and fired[0]["purged"] in (True, False)
    assert "home-now" in res.ids[:10], res.ids
    assert "home-old" not in res.ids  # erased: never surfaces, even from the older snapshot
    assert all(np.isfinite(r["score"]) and all(np.isfinite(v) for v in r["terms"].values()) for r in res.results)
    again = reader.query("where do I live?", at="2026-01-01")
    assert again.ids[0] == "home-now"
    reader.close()
    eraser.close()


def test_erase_during_a_query_of_the_index_never_surfaces(tmp_path, monkeypatch):
    """The same race when the vectors come from the bank's index: another process erases (and
    scrubs the index segment holding the fact) while a query ranks. The query ranks again
    against the bank as it is now: the erased fact never surfaces, every score is finite."""
    from frcore.bank import _bank

    db = tmp_path / "race.db"
    reader = _home_bank(db)
    Bank.open(str(db)).query("where do I live?", at="2026-01-01")  # the index holds every row
    assert reader.store.read(datetime(2026, 1, 1)).sources is not None
    eraser = Bank.open(str(db))
    original = _bank.IndexedRows.__matmul__
    fired = []

    def erase_then_rank(self, q):
        if not fired:
            fired.append(eraser.erase("home-old", reason="race"))
        return original(self, q)

    monkeypatch.setattr(_bank.IndexedRows, "__matmul__", erase_then_rank)
    res = reader.query("where do I live?", at="2026-01-01", intent="historical")
    assert fired, "the query did not rank from the index"
    assert "home-old" not in res.ids
    assert "home-now" in res.ids[:10], res.ids
    assert all(np.isfinite(r["score"]) for r in res.results)
    assert not any(b"Porto" in f.read_bytes() for f in Path(str(db) + ".index").rglob("*") if f.is_file())
    reader.close()
    eraser.close()


def test_a_ranking_that_fails_on_what_an_erase_zeroed_ranks_again(tmp_path, monkeypatch):
    """An erase overwrites with zeros the index files a reader has mapped: the reader's ranking
    may then fail on what it reads (the kernel's boundary refuses a row of weights that sums to
    0, seen in the concurrency test below). A ranking that raises while a write committed ranks
    again against the bank as it is now; one that raises with no write between is the caller's
    error, raised as it is."""
    from frcore.bank import _bank

    db = tmp_path / "zeroed.db"
    reader = _home_bank(db)
    Bank.open(str(db)).query("where do I live?", at="2026-01-01")  # the index holds every row
    eraser = Bank.open(str(db))
    original = _bank.IndexedRows.__matmul__
    calls = []

    def erase_then_fail(self, q):
        calls.append(1)
        if len(calls) == 1:
            eraser.erase("home-old", reason="race")
            raise ValueError("weights: row 0 sums to 0, not 1")  # what the zeroed columns give
        return original(self, q)

    monkeypatch.setattr(_bank.IndexedRows, "__matmul__", erase_then_fail)
    res = reader.query("where do I live?", at="2026-01-01", intent="historical")
    assert len(calls) == 2 and "home-old" not in res.ids and "home-now" in res.ids[:10], res.ids

    def fail(self, q):
        raise ValueError("a failure of the ranking itself")

    monkeypatch.setattr(_bank.IndexedRows, "__matmul__", fail)
    with pytest.raises(ValueError, match="ranking itself"):
        reader.query("where do I live now?", at="2026-01-01")
    reader.close()
    eraser.close()


def test_query_never_uses_a_nan_vector(tmp_path):
    """Even a vector row that is not finite (a damaged cache) is excluded, never ranked."""
    db = tmp_path / "nan.db"
    bank = _home_bank(db, index=False)
    nan = np.full(256, np.nan, dtype=np.float32).tobytes()
    bank.store.conn.execute("UPDATE embeddings SET vector=? WHERE id='home-old'", (nan,))
    bank.store.conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='version'")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = bank.query("where do I live?", at="2026-01-01", intent="historical")
    assert "home-now" in res.ids[:10] and "home-old" not in res.ids
    assert all(np.isfinite(r["score"]) for r in res.results)
    bank.close()


def test_a_damaged_index_is_never_trusted(tmp_path):
    """A non-finite vector written into the bank's index (a damaged file) fails the segment's
    checksum when the bank is opened: its rows are read from SQLite — the same results as a bank
    without an index — and a writable open scrubs the segment and indexes its rows again. A
    vector damaged after the open verified it (the file changed under the process) is met by the
    query: it ranks from SQLite instead, and the store stops reading the index."""
    db = tmp_path / "nan.db"
    _home_bank(db).close()
    folder = Path(str(db) + ".index")
    vec_file = folder / "vectors.f32"

    def damage() -> None:
        damaged = np.memmap(vec_file, dtype="<f4", mode="r+")
        damaged[:256] = np.nan  # the first row's vector (hash-256)
        damaged.flush()
        del damaged

    damage()
    before = {p.name for p in folder.glob("seg-*")}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with Bank.open(str(db)) as bank:
            res = bank.query("where do I live?", at="2026-01-01", intent="historical")
        with Bank.open(str(db), index=False, readonly=True) as plain:
            ref = plain.query("where do I live?", at="2026-01-01", intent="historical")
    assert res.results == ref.results
    assert all(np.isfinite(r["score"]) for r in res.results)
    after = {p.name for p in folder.glob("seg-*")}
    assert after and not before & after  # the damaged segment scrubbed, its rows indexed again
    assert np.isfinite(np.fromfile(vec_file, dtype="<f4")).all()
    with Bank.open(str(db)) as bank:
        assert bank.query("where do I live?", at="2026-01-01", intent="historical").results == ref.results
        assert bank.store.read(datetime(2026, 1, 1)).sources is not None  # verified: ranked from the index
        damage()  # under the open bank, after it verified the segment
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert bank.query("where do I live?", at="2026-01-01", intent="historical").results == ref.results
        assert bank.store._index is None  # the store no longer reads the index


def test_a_failed_embedding_stores_nothing(tmp_path):
    db = tmp_path / "atomic.db"
    with Bank.open(str(db), embedder="hash") as bank:
        bank.add([{"id": "a", "text": "first", "categories": {"OTHER": 1.0}, "said_at": "2025-01-01"}])
        v = bank.store.version()

        def broken(texts):
            raise RuntimeError("encoder crashed")

        bank.embedder = type("E", (), {"embed": staticmethod(broken), "dim": 256, "name": "hash-256"})()
        with pytest.raises(RuntimeError, match="encoder crashed"):
            bank.add([{"id": "b", "text": "second", "categories": {"OTHER": 1.0}, "said_at": "2025-01-02"}])
        assert bank.store.count() == 1 and bank.store.version() == v  # no fact without its vector


def _enough(counts: Counter) -> bool:
    return counts["queries"] >= 10 and counts["erasures"] >= 5 and counts["batches"] >= 5


def test_concurrent_readers_writer_and_eraser(tmp_path):
    """Two readers query while a writer adds batches and an eraser keeps adding and erasing
    older values of the readers' slot: every query ranks the current value in its top 10, every
    score is finite, nothing warns, and the bank stays sound."""
    db = tmp_path / "conc.db"
    _home_bank(db).close()
    stop = threading.Event()
    errors: list[BaseException] = []
    counts = Counter()

    def guard(fn):
        def run():
            try:
                fn()
            except BaseException as e:
                errors.append(e)
                stop.set()

        return run

    def reader():
        with Bank.open(str(db), embedder="hash") as bank:
            while not stop.is_set():
                res = bank.query("where do I live now?", at="2026-01-01")
                assert "home-now" in res.ids[:10], res.ids
                assert all(np.isfinite(r["score"]) for r in res.results)
                counts["queries"] += 1

    def writer():
        with Bank.open(str(db), embedder="hash") as bank:
            b = 0
            while not stop.is_set():
                bank.add(
                    [
                        {
                            "id": f"w{b}.{i}",
                            "text": f"unrelated note {i} of batch {b}",
                            "categories": {"OTHER": 1.0},
                            "said_at": "2025-04-01",
                        }
                        for i in range(10)
                    ]
                )
                b += 1
                counts["batches"] += 1

    def eraser():
        with Bank.open(str(db), embedder="hash") as bank:
            i = 0
            while not stop.is_set():
                fid = f"old-home-{i}"
                bank.add(
                    [
                        {
                            "id": fid,
                            "text": f"I lived in Porto, in flat number {i}.",
                            "categories": {"IDENTITY_SELF_CONCEPT": 1.0},
                            "said_at": "2025-02-01",
                            "slot": "home_city",
                        }
                    ]
                )
                bank.erase(fid, wait=0.05)
                i += 1
                counts["erasures"] += 1

    threads = [threading.Thread(target=guard(f)) for f in (reader, reader, writer, eraser)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for t in threads:
            t.start()
        # at least this long, then until every thread has done enough (a loaded machine is slow)
        # or an error stopped them; at most a minute more
        time.sleep(float(os.environ.get("FRCORE_FAULT_CONCURRENCY_S", "6")))
        deadline = time.monotonic() + 60
        while not stop.is_set() and time.monotonic() < deadline and not _enough(counts):
            time.sleep(0.1)
        stop.set()
        for t in threads:
            t.join(timeout=120)
    assert not errors, errors[0]
    assert _enough(counts), counts
    with Store.open(db) as s:
        assert s.integrity_check() == "ok"
        assert not [e.id for e in s.edges() if e.id.startswith("old-home-")]
        assert s.purge(timeout=10)["purged"] and not s.purge_pending()
