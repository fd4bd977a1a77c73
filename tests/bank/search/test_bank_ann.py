"""FR-Bank's approximate index (frcore.bank.search._ann): a query over a partial cosine ranks as over the
full one whenever the rows it knows include the nearest ones; the approximate index is built, extended,
ignored when stale and scrubbed by an erase."""

from __future__ import annotations

import json
import os
from datetime import datetime

import numpy as np
import pytest
from helpers import random_snapshot
from hypothesis import given, settings, strategies as st

from frcore import default_params
from frcore.bank._bank import Bank, IndexedRows
from frcore.bank.pipeline import PipelineConfig, Prepared, retrieve
from frcore.bank.search import PartialCosine
from frcore.bank.search._ann import SIDECAR, AnnConfig, ApproximateRows
from frcore.bank.storage._synthetic import synthetic_facts


def _linked(cos_raw: np.ndarray, related, propagation: float) -> np.ndarray:
    cos = cos_raw.copy()
    if propagation > 0 and len(related[0]):
        np.maximum.at(cos, related[0], propagation * cos_raw[related[1]])
    return cos


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_partial_cosine_ranks_as_the_full_one(data):
    """retrieve over a PartialCosine that knows every row whose cosine reaches the cosine
    stage's (or the flat ranker's) threshold, with any valid bound for the rest, returns exactly
    the results of the full cosine array: every stage, propagation, ties and dead rows included."""
    n = data.draw(st.integers(1, 160))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    prep_kw = random_snapshot(rng, n, dead=0.1)
    related = prep_kw["related"]
    cos = (
        rng.choice(np.array([-0.2, 0.0, 0.3, 0.3, 0.7], np.float32), n)
        if data.draw(st.booleans())
        else rng.uniform(-0.3, 1, n).astype(np.float32)
    )
    bm = rng.choice([0.0, 0.0, 1.5, 2.0, 3.0], n)
    routing = np.zeros(11)
    routing[rng.integers(0, 11)] = 1.0
    config = PipelineConfig(
        propagation=data.draw(st.sampled_from([0.0, 0.5, 1.0])),
        ranker=data.draw(st.sampled_from(["lifecycle", "lifecycle", "cosine"])),
        overwrite=data.draw(st.booleans()),
        n_cosine=data.draw(st.sampled_from([1, 5, 30])),
        n_forced=data.draw(st.sampled_from([0, 3, 20])),
        k=data.draw(st.sampled_from([1, 10])),
    )
    kw = dict(
        bm25=bm,
        routing=routing,
        intent=data.draw(st.sampled_from(["current", "historical"])),
        params=default_params(),
        config=config,
    )
    expect = retrieve(Prepared(**prep_kw), cosine=cos, **kw)

    # the thresholds the argument needs, over the rows alive in the pipeline's variant
    alive = Prepared(**prep_kw).variant(config.untyped_expiry, config.overwrite)[1]
    raw = np.clip(cos.astype(np.float64), 0, 1)
    lin = _linked(raw, related, config.propagation)
    need = []
    for vals, count in ((lin, config.n_cosine), (raw, config.k)):
        pool = np.sort(vals[alive])[::-1]
        need.append(pool[min(count, pool.size) - 1] if pool.size else 0.0)
    known = raw >= min(need)
    known |= rng.random(n) < data.draw(st.sampled_from([0.0, 0.3]))  # and some other rows
    unknown_max = float(cos[~known].max()) if (~known).any() else -1.0
    bound = unknown_max + data.draw(st.sampled_from([0.0, 0.05, 2.0]))  # any upper bound
    asked: list[np.ndarray] = []

    def exact(rows: np.ndarray) -> np.ndarray:
        assert np.all(np.diff(rows) > 0) and not known_at_start[rows].any()
        asked.append(rows)
        return cos[rows]

    known_at_start = known.copy()
    partial = PartialCosine(np.where(known, cos, 0).astype(np.float32), known.copy(), bound, exact)
    got = retrieve(Prepared(**prep_kw), cosine=partial, **kw)
    assert got.results == expect.results
    assert got.n_candidates == expect.n_candidates and got.n_distilled == expect.n_distilled
    np.testing.assert_array_equal(*(r.rows if r.rows is not None else [] for r in (got, expect)))
    assert not partial.damaged
    np.testing.assert_array_equal(partial.values[partial.known], cos[partial.known])


def _bank_facts(n: int) -> list[dict]:
    return synthetic_facts(n, seed=3)


QUERIES = [
    "what is the latest about topic 42",
    "synthetic fact number 17",
    "synthetic fact number 901 about topic",
    "any upcoming obligations this week",
    "which slot changed recently",
]


def _systems():
    from frcore.bench._systems import resolve_systems

    return resolve_systems("all")


def test_bank_with_an_exhaustive_ann_index_answers_as_without(tmp_path):
    """An index asked for more candidates than the bank has rows returns every row: every
    benchmark system then ranks exactly as the exact cosine does (results, scores, terms)."""
    path = str(tmp_path / "b.db")
    facts = _bank_facts(1200)
    cfg = AnnConfig(min_rows=0, candidates=2000, growth=0.5)
    with Bank.open(path, embedder="hash-384", ann=cfg) as bank:
        bank.add(facts[:1000])
        bank.add(facts[1000:])  # the index holds 1,000 rows; the other 200 are computed exactly
    side = json.loads((tmp_path / "b.db.index" / SIDECAR).read_text())
    assert side["rows"] == 1000
    a = Bank.open(path, readonly=True, ann=cfg)
    e = Bank.open(path, readonly=True)
    systems = _systems()
    for q in QUERIES:
        for s in systems:
            ra = a.query(q, at="2025-03-01", config=s.pipeline, k=s.pipeline.k, explain=True)
            re_ = e.query(q, at="2025-03-01", config=s.pipeline, k=s.pipeline.k, explain=True)
            assert [(r["id"], r["score"], r["terms"]) for r in ra.results] == [
                (r["id"], r["score"], r["terms"]) for r in re_.results
            ], (q, s.name)
            assert (ra.candidate_ids, ra.n_candidates) == (re_.candidate_ids, re_.n_candidates)
            assert [r["explanation"] for r in ra.results] == [r["explanation"] for r in re_.results]
    assert all(isinstance(v.vectors, ApproximateRows) for v in a._views.values())
    assert all(isinstance(v.vectors, IndexedRows) for v in e._views.values())
    a.close()
    e.close()


def test_ann_index_is_extended_when_due_and_found_rows_are_near(tmp_path):
    """The index grows once the rows it lacks exceed its growth share; its candidates are near
    the query (recall@10 against the exact cosine, over the bank's own texts)."""
    path = str(tmp_path / "b.db")
    facts = _bank_facts(3000)
    cfg = AnnConfig(min_rows=500, candidates=50, growth=0.5)
    folder = tmp_path / "b.db.index"
    with Bank.open(path, embedder="hash-384", ann=cfg) as bank:
        bank.add(facts[:400])
        assert not (folder / SIDECAR).exists()  # below min_rows
        bank.add(facts[400:1000])
        assert json.loads((folder / SIDECAR).read_text())["rows"] == 1000
        bank.add(facts[1000:1400])  # 400 ≤ 0.5 × 1000: not yet
        assert json.loads((folder / SIDECAR).read_text())["rows"] == 1000
        bank.add(facts[1400:3000])
        assert json.loads((folder / SIDECAR).read_text())["rows"] == 3000
        assert len(list(folder.glob("ann-*.faiss"))) == 1  # the superseded index is gone
    bank = Bank.open(path, readonly=True, ann=cfg)
    loaded = bank.store._load()
    read = bank._read(datetime(2026, 1, 1), None, False)  # every row, from the index
    index, matrix = read.ann, read.sources[0] if read.sources is not None else None
    assert index is not None and matrix is not None and loaded.n == 3000
    hits = []
    for i in range(0, 3000, 150):
        q = bank.embedder.embed([facts[i]["text"]])[0]
        exact = matrix @ q
        kth = np.sort(exact)[-10]
        found = index.search(q, 50)
        top = np.sort(exact[found])[-10:]
        hits.append(np.mean(top >= kth - 1e-6))
    assert np.mean(hits) >= 0.9
    # the partial cosine's known rows and finiteness, as given by the index's rows (of every row,
    # of a subset), equal those of its mask, before and after more rows are computed
    q = bank.embedder.embed([facts[7]["text"]])[0]
    for sub in (None, np.arange(0, 3000, 2)):
        p = ApproximateRows(matrix, index, cfg, sub).partial(q)
        assert p.rows is not None and p.finite is True
        assert np.array_equal(p.known_rows(), np.flatnonzero(p.known))
        unknown = np.flatnonzero(~p.known)[:5]
        assert unknown.size and np.array_equal(p.fill(unknown), unknown)
        assert np.array_equal(p.known_rows(), np.flatnonzero(p.known)) and p.known_rows().size == p.rows.size + 5
    bank.close()


def _pq_index(n: int, dim: int = 32, seed: int = 0):
    import faiss

    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, dim)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    index = faiss.IndexPQFastScan(dim, dim // 4, 4, faiss.METRIC_INNER_PRODUCT)
    index.train(x)
    index.add(x)
    return index, rng


@pytest.mark.parametrize("n,parts,k", [(5000, 2, 100), (5003, 3, 400), (777, 4, 1000), (96, 2, 50)])
def test_index_scanned_in_shards_finds_the_rows_of_the_whole(n, parts, k):
    """The k best of every shard's k best are the whole index's k best: the same scores, and
    rows outside the whole's result only where they tie with its k-th score."""
    import faiss

    from frcore.bank.search._ann import AnnIndex, split

    whole, rng = _pq_index(n)
    shards = split(faiss.clone_index(whole), parts)
    assert [first for first, _ in shards] == [n * i // parts for i in range(parts)]
    assert sum(int(s.ntotal) for _, s in shards) == n
    sharded = AnnIndex(shards, n, "x")
    for _ in range(20):
        q = rng.standard_normal(32).astype(np.float32)
        d, i = whole.search(q.reshape(1, -1), min(k, n))
        score = dict(zip(i[0].tolist(), d[0].tolist()))
        found = sharded.search(q, k)
        assert found.size == min(k, n) and np.array_equal(found, np.unique(found))
        # the shards' rows have the whole's k best scores
        d_all, i_all = whole.search(q.reshape(1, -1), n)
        all_score = dict(zip(i_all[0].tolist(), d_all[0].tolist()))
        assert sorted(all_score[r] for r in found.tolist()) == sorted(score.values())
        kth = min(score.values())
        assert all(all_score[r] == kth for r in set(found.tolist()) - set(score))


def test_bank_scans_its_index_in_shards_and_answers_as_with_one(tmp_path, monkeypatch):
    """A bank whose approximate index is scanned in shards ranks as with the index whole."""
    from frcore.bank.search import _ann

    path = str(tmp_path / "b.db")
    facts = _bank_facts(1500)
    cfg = AnnConfig(min_rows=0, candidates=300)
    with Bank.open(path, embedder="hash-384", ann=cfg) as bank:
        bank.add(facts)
    one = Bank.open(path, readonly=True, ann=cfg)
    whole = [[(r["id"], r["score"], r["terms"]) for r in one.query(q, at="2025-03-01").results] for q in QUERIES]
    monkeypatch.setattr(_ann, "shard_count", lambda rows: 3)
    three = Bank.open(path, readonly=True, ann=cfg)
    for q, expected in zip(QUERIES, whole):
        assert [(r["id"], r["score"], r["terms"]) for r in three.query(q, at="2025-03-01").results] == expected, q
    assert len(one.approximate.index(cfg).shards) == 1
    assert [f for f, _ in three.approximate.index(cfg).shards] == [0, 500, 1000]
    one.close()
    three.close()


def test_erase_scrubs_the_ann_index_and_the_next_add_rebuilds_it(tmp_path):
    """The index holds a (compressed) copy of every vector: an erase overwrites its file with
    zeros and deletes it; queries are exact until a write rebuilds it."""
    path = str(tmp_path / "b.db")
    facts = _bank_facts(700)
    cfg = AnnConfig(min_rows=100, candidates=30)
    folder = tmp_path / "b.db.index"
    with Bank.open(path, embedder="hash-384", ann=cfg) as bank:
        bank.add(facts[:600])
        (old,) = folder.glob("ann-*.faiss")
        bank.erase(facts[5]["id"])
        assert not old.exists() and not (folder / SIDECAR).exists() and not list(folder.glob("*ann-*"))
        assert bank.query("synthetic fact number 5", at="2025-03-01").ids[0] != facts[5]["id"]
        assert all(isinstance(v.vectors, IndexedRows) for v in bank._views.values())
        bank.add(facts[600:])
        assert json.loads((folder / SIDECAR).read_text())["rows"] == 699
    reader = Bank.open(path, readonly=True, ann=cfg)
    res = reader.query("synthetic fact number 6", at="2025-03-01")
    assert facts[5]["id"] not in res.ids
    assert all(isinstance(v.vectors, ApproximateRows) for v in reader._views.values())
    reader.close()


def test_stale_or_foreign_ann_index_is_not_used(tmp_path):
    """An index made for other settings, or whose sidecar names another bank, is ignored
    (the query is exact); an index file that does not load is ignored too."""
    path = str(tmp_path / "b.db")
    cfg = AnnConfig(min_rows=0, candidates=20)
    with Bank.open(path, embedder="hash-384", ann=cfg) as bank:
        bank.add(_bank_facts(300))
    folder = tmp_path / "b.db.index"
    other = AnnConfig(min_rows=0, candidates=20, pq_dims=8)
    reader = Bank.open(path, readonly=True, ann=other)
    reader.query("synthetic fact number 3", at="2025-03-01")
    assert all(isinstance(v.vectors, IndexedRows) for v in reader._views.values())
    reader.close()
    side = json.loads((folder / SIDECAR).read_text())
    (folder / SIDECAR).write_text(json.dumps(side | {"bank_id": "someone else"}))
    reader = Bank.open(path, readonly=True, ann=cfg)
    reader.query("synthetic fact number 3", at="2025-03-01")
    assert all(isinstance(v.vectors, IndexedRows) for v in reader._views.values())
    reader.close()
    (folder / SIDECAR).write_text(json.dumps(side))
    with open(folder / side["file"], "r+b") as fh:
        fh.write(b"\0" * 64)
    reader = Bank.open(path, readonly=True, ann=cfg)
    res = reader.query("synthetic fact number 3", at="2025-03-01")
    assert res.ids and all(isinstance(v.vectors, IndexedRows) for v in reader._views.values())
    reader.close()


@pytest.mark.parametrize(
    "field, value", [("candidates", 0), ("pq_dims", -1), ("min_rows", -5), ("growth", 0.0), ("candidates", True)]
)
def test_ann_config_names_a_bad_field(field, value):
    with pytest.raises(ValueError, match=f"ann.{field}"):
        AnnConfig(**{field: value})


def test_ann_needs_the_index(tmp_path):
    with pytest.raises(ValueError, match="ann"):
        Bank.open(os.path.join(tmp_path, "b.db"), embedder="hash-384", index=False, ann=True)


def test_ann_pq_dims_must_divide_the_embedders_dimension(tmp_path):
    with pytest.raises(ValueError, match="ann.pq_dims"):
        Bank.open(os.path.join(tmp_path, "b.db"), embedder="hash-384", ann=AnnConfig(pq_dims=5))
    assert not os.path.exists(os.path.join(tmp_path, "b.db.index"))


def test_cli_query_and_add_with_ann(tmp_path, capsys):
    """``fr bank add --ann`` extends an index the bank has; ``fr bank query --ann`` ranks through
    it, with the results of the exact cosine when every row is a candidate."""
    from frcore import cli

    path = str(tmp_path / "b.db")
    facts = _bank_facts(400)
    with Bank.open(path, embedder="hash-384", ann=AnnConfig(min_rows=0)) as bank:
        bank.add(facts[:300])
    (tmp_path / "more.json").write_text(json.dumps(facts[300:]))
    assert cli.main(["bank", "add", path, str(tmp_path / "more.json"), "--ann"]) == 0
    side = json.loads((tmp_path / "b.db.index" / SIDECAR).read_text())
    assert side["rows"] == 300  # --ann's own settings: below 50,000 rows it is not extended; rows after it are exact
    capsys.readouterr()
    out = {}
    for flag in ([], ["--ann"]):
        assert (
            cli.main(["bank", "query", path, "synthetic fact number 350", "--at", "2025-06-01", "--json", *flag]) == 0
        )
        out[bool(flag)] = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in out[True]["results"]] == [r["id"] for r in out[False]["results"]]
    assert [r["score"] for r in out[True]["results"]] == [r["score"] for r in out[False]["results"]]


def test_users_rank_through_the_index_or_exactly_and_never_see_each_other(tmp_path):
    """A user holding most rows ranks through the index (over their own rows only); one holding
    under a tenth is ranked exactly; both answer as without the index, with their own facts."""
    path = str(tmp_path / "b.db")
    cfg = AnnConfig(min_rows=0, candidates=2000)
    owner_facts = _bank_facts(900)
    bob_facts = synthetic_facts(60, seed=9, prefix="bob")
    with Bank.open(path, embedder="hash-384", ann=cfg) as bank:
        bank.add(owner_facts)
        bank.for_user("bob").add(bob_facts)
        bank.update_ann()
    approx, exact = Bank.open(path, readonly=True, ann=cfg), Bank.open(path, readonly=True)
    for user, prefix, kind in ((None, "bench.", ApproximateRows), ("bob", "bob.", IndexedRows)):  # 900 and 60 rows
        a, e = approx.for_user(user), exact.for_user(user)
        for q in QUERIES:
            ra, re_ = a.query(q, at="2026-01-01"), e.query(q, at="2026-01-01")
            assert [(r["id"], r["score"]) for r in ra.results] == [(r["id"], r["score"]) for r in re_.results]
            assert all(r["id"].startswith(prefix) for r in ra.results)
        assert all(isinstance(v.vectors, kind) for v in a._views.values()), user
    approx.close()
    exact.close()
