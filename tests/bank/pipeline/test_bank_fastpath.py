"""FR-Bank's query fast paths give exactly what the plain paths give: the query tokeniser vs
bm25s.tokenize, host kernel inputs vs make_candidates / make_query, vectorised related pairs vs
the plain loop, the row-set cache (two valid times over the same edges, then a write) vs a
fresh bank, and a snapshot with no edges."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import random_snapshot
from hypothesis import example, given, settings, strategies as st

from frcore import State
from frcore._packed import pack_candidates, pack_query, unpack_candidates_host, unpack_query_host
from frcore._validate import bucket_size, make_candidates, make_query
from frcore.bank import Bank, PipelineConfig
from frcore.bank.pipeline import Prepared, related_pairs
from frcore.bank.pipeline._prepare import kernel_inputs
from frcore.bank.search._lexical import LexicalIndex, _tokenize, _tokenize_one, tokenize_many
from frcore.bank.storage._synthetic import synthetic_facts

WORDS = [
    "the",
    "running",
    "runs",
    "Café",
    "naïve",
    "user's",
    "a",
    "x1",
    "__init__",
    "can't",
    "ÉCOLE",
    "42",
    "and",
    "flights",
    "flying",
    "über",
]


@settings(max_examples=200)
@given(st.one_of(st.text(max_size=40), st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join)))
def test_query_tokens_equal_bm25s(text):
    assert _tokenize_one(text) == _tokenize([text])[0]


@settings(max_examples=100)
@given(
    st.lists(st.one_of(st.text(max_size=30), st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join)), max_size=6)
)
def test_corpus_tokens_equal_bm25s(texts):
    assert tokenize_many(texts) == _tokenize(texts)


@settings(max_examples=60)
@given(
    st.lists(
        st.lists(st.sampled_from(WORDS + ["common"]), max_size=6).map(lambda w: " ".join(["common"] + w)),
        min_size=1,
        max_size=12,
    ),
    st.lists(st.sampled_from(WORDS + ["common", "absent"]), max_size=6).map(" ".join),
    st.booleans(),
)
def test_bm25_scores_equal_bm25s(texts, query, one_sparse):
    """Accumulation with the every-text shortcut equals bm25s' own, bit for bit."""
    if one_sparse:
        texts = texts + ["no shared words here"]  # "common" is then not in every text
    ix = LexicalIndex(texts)
    vocab = ix._bm25.vocab_dict
    ids = [vocab[t] for t in _tokenize([query])[0] if t in vocab]
    ref = np.asarray(ix._bm25.get_scores_from_ids(ids), dtype=np.float64) if ids else np.zeros(len(texts))
    np.testing.assert_array_equal(ix.scores(query), ref)


def test_lexical_index_from_given_tokens_scores_the_same():
    texts = [f["text"] for f in synthetic_facts(200, seed=2)] + ["", "the and of"]
    a, b = LexicalIndex(texts), LexicalIndex(texts, tokens=_tokenize(texts))
    for q in ("synthetic fact about topic 7", "number 12", "zzz", "the"):
        np.testing.assert_array_equal(a.scores(q), b.scores(q))
    with pytest.raises(ValueError, match="tokens"):
        LexicalIndex(texts, tokens=[["x"]])


def _plain_related(slots, said_at_h, links, index):
    src, dst = [], []
    for i, lk in enumerate(links):
        for targets in (lk or {}).values():
            for t in (targets,) if isinstance(targets, str) else targets:
                j = index.get(t)
                if j is not None and j != i:
                    src.append(i)
                    dst.append(j)
    by_slot = {}
    for i, s in enumerate(slots):
        if s is not None:
            by_slot.setdefault(s, []).append(i)
    for rows in by_slot.values():
        rows.sort(key=lambda r: (said_at_h[r], r))
        for a in range(len(rows)):
            for b in range(a):
                src.append(rows[a])
                dst.append(rows[b])
    return sorted(zip(src, dst))


@settings(max_examples=150)
@given(st.data())
def test_related_pairs_equal_the_plain_loop(data):
    n = data.draw(st.integers(0, 30))
    ids = [f"x{i}" for i in range(n)]
    slots = data.draw(st.lists(st.sampled_from([None, "a", "b", "c"]), min_size=n, max_size=n))
    said = np.array(data.draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)), dtype=np.float64)
    target = st.sampled_from(ids + ["gone"]) if n else st.just("gone")
    links = data.draw(
        st.lists(
            st.one_of(
                st.just({}),
                st.none(),
                st.dictionaries(
                    st.sampled_from(["supersedes", "retracts"]),
                    st.one_of(target, st.lists(target, max_size=2).map(tuple)),
                    max_size=2,
                ),
            ),
            min_size=n,
            max_size=n,
        )
    )
    index = {x: i for i, x in enumerate(ids)}
    src, dst = related_pairs(slots, said, links, index)
    assert sorted(zip(src.tolist(), dst.tolist())) == _plain_related(slots, said, links, index)


@settings(max_examples=60)
@given(st.data())
def test_kernel_inputs_equal_make_candidates(data):
    n = data.draw(st.integers(1, 40))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    w = rng.dirichlet(np.ones(11), size=n) * (rng.random((n, 1)) < 0.8) + np.eye(11)[rng.integers(0, 11, n)] * 0
    w[w.sum(axis=1) == 0, 3] = 1.0
    event = np.where(rng.random(n) < 0.4, rng.uniform(-500, 500, n), np.nan)
    prep = Prepared(
        weights=w,
        said_at_h=rng.uniform(0, 1000, n),
        event_h=event,
        state=rng.integers(0, len(State), n),
        confidence=rng.choice([0.0, 0.4, 0.7, 1.0], n),
        numeric=rng.random(n) < 0.2,
        slots=[None if rng.random() < 0.7 else "s" for _ in range(n)],
        eligible=np.ones(n, bool),
        at_h=800.0,
        kinds=rng.choice(["fact", "turn"], n).tolist(),
    )
    k = data.draw(st.integers(1, n))
    cand = np.sort(rng.choice(n, size=k, replace=False))
    sim = rng.uniform(-0.1, 1.1, k)
    routing = rng.uniform(-0.2, 1.2, 11)
    cmat, qvec = kernel_inputs(prep, cand, sim, prep.state, 2, routing)
    ref = make_candidates(
        sim=np.clip(sim, 0, 1),
        weights=w[cand],
        ages=prep.ages[cand],
        state=prep.state[cand],
        hours_to_event=prep.hours_to_event[cand],
        confidence=prep.confidence[cand],
        numeric=prep.numeric[cand],
        typed=prep.typed[cand],
        pad_to=bucket_size(k),
        device=False,
    )
    ref_mat = pack_candidates(ref)
    assert cmat.dtype == ref_mat.dtype and cmat.shape == ref_mat.shape and cmat.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(cmat, ref_mat)
    for a, b in zip(unpack_candidates_host(cmat), ref):  # and back: make_candidates' dtypes
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    ref_q = make_query(2, np.clip(routing, 0, 1), device=False)
    np.testing.assert_array_equal(qvec, pack_query(ref_q))
    assert qvec.dtype == np.float32
    for a, b in zip(unpack_query_host(qvec), ref_q):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(a, b)


def test_kernel_inputs_fall_back_and_raise_like_make_candidates():
    prep = Prepared(
        weights=np.full((3, 11), 0.5),
        said_at_h=np.zeros(3),
        event_h=np.full(3, np.nan),
        state=np.zeros(3, np.int64),
        confidence=np.ones(3),
        numeric=np.zeros(3, bool),
        slots=[None] * 3,
        eligible=np.ones(3, bool),
        at_h=10.0,
    )
    assert prep.kernel_table() is None  # rows do not sum to 1
    with pytest.raises(ValueError, match="weights: row 0 sums to"):
        kernel_inputs(prep, np.array([0, 2]), np.array([0.5, 0.5]), prep.state, 0, np.zeros(11))


def _dump(res):
    return (
        res.intent,
        res.categories,
        [(r["id"], r["score"], r["terms"], r["stages"], r["state"]) for r in res.results],
        res.n_candidates,
        res.candidate_ids,
    )


def test_row_set_cache_equals_a_fresh_bank(tmp_path):
    facts = synthetic_facts(400, seed=5)
    configs = [
        PipelineConfig(),
        PipelineConfig(ranker="cosine", overwrite=True),
        PipelineConfig(untyped_expiry=True),
        PipelineConfig(ranker="bm25"),
    ]
    queries = ["synthetic fact about topic 7", "any upcoming obligations this week", "number 3"]
    ats = ["2025-07-01", "2025-08-01", "2024-06-01", "2025-07-01"]
    with Bank.open(str(tmp_path / "a.db"), embedder="hash") as bank:
        bank.add(facts[:300])
        got = [_dump(bank.query(q, at=at, config=c)) for at in ats for q in queries for c in configs]
        assert len(bank._rows) == 2  # two valid times after the last edge share one row set
        bank.add(facts[300:])
        bank.retract(facts[1]["id"], at="2024-01-01")
        got += [_dump(bank.query(q, at=at, config=c)) for at in ats for q in queries for c in configs]
    fresh = []
    for stage in (0, 1):
        for at in ats:
            for q in queries:
                for c in configs:
                    with Bank.open(str(tmp_path / f"f{stage}.db"), embedder="hash") as b:
                        if not b.store.count():
                            b.add(facts[:300] if stage == 0 else facts)
                            if stage == 1:
                                b.retract(facts[1]["id"], at="2024-01-01")
                        fresh.append(_dump(b.query(q, at=at, config=c)))
    assert got == fresh


def test_query_on_a_snapshot_with_no_edges(tmp_path):
    import datetime as dt

    with Bank.open(str(tmp_path / "e.db"), embedder="hash") as bank:
        bank.add(synthetic_facts(20, seed=0), recorded_at=dt.datetime(2025, 1, 1))
        res = bank.query("synthetic fact", at="2025-06-01", known_at="2020-01-01")
        assert res.results == () and res.n_candidates == 0
        assert (
            bank.query(
                "synthetic fact", at="2025-06-01", known_at="2020-01-01", config=PipelineConfig(ranker="cosine")
            ).results
            == ()
        )


def test_question_words_are_not_lexical_evidence():
    """A question matches statements through its content words only: wh-words, auxiliaries and
    pronouns are stopwords (a statement sharing only "do"/"does" with a question scores 0)."""
    assert _tokenize_one("What exercise does Priya do?") == _tokenize_one("exercise Priya")
    idx = LexicalIndex(["I do like my new pressure cooker, does it show?", "Priya swims every morning"])
    assert idx.scores("What does Priya do?")[0] == 0.0


def _routing_arrays(proto: np.ndarray | None, hits: np.ndarray, v: np.ndarray | None):
    """The array form of Router.raw_scores + _keep_top (the oracle of the scalar form)."""
    from frcore.bank.pipeline._query import _OTHER, KEYWORD_SHARE, ROUTING_MAX_CATEGORIES, ROUTING_MIN_SCORE

    top = hits.max()
    kw = hits / top if top > 0 else hits
    if proto is not None:
        sim = proto @ v
        sim[_OTHER] = -np.inf
        finite = np.isfinite(sim)
        lo, hi = np.min(sim[finite]), np.max(sim)
        raw = KEYWORD_SHARE * kw + (1 - KEYWORD_SHARE) * np.where(finite, (sim - lo) / (hi - lo + 1e-12), 0.0)
    else:
        raw = kw
    w = np.zeros(11)
    top = raw.max()
    if top > 0:
        scaled = raw / top
        order = np.argsort(-scaled, kind="stable")[:ROUTING_MAX_CATEGORIES]
        order = order[scaled[order] >= ROUTING_MIN_SCORE]
        w[order] = scaled[order]
    return raw, w


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_routing_scalar_form_equals_the_array_form(data):
    """Router.raw_scores / _keep_top compute in Python floats; bit-for-bit the array form,
    ties, NaN and infinite similarities included."""
    from frcore.bank.pipeline import _query as Q

    words = data.draw(
        st.lists(
            st.sampled_from(
                ["work", "job", "flight", "rent", "dog", "gym", "book", "deadline", "coffee", "xyz", "next"]
            ),
            max_size=8,
        )
    )
    text = " ".join(words)
    d = data.draw(st.integers(1, 6))
    values = st.one_of(st.floats(-2, 2, allow_nan=False), st.sampled_from([0.0, -0.0, 0.5, 1.0]))
    router = Q.Router()
    with_proto = data.draw(st.booleans())
    v = None
    if with_proto:
        special = st.sampled_from([np.nan, np.inf, -np.inf])
        row = st.lists(values, min_size=d, max_size=d)
        if data.draw(st.booleans()):  # some prototype rows non-finite: NaN / inf beside finite similarities
            row = st.one_of(row, st.lists(st.one_of(values, special), min_size=d, max_size=d))
        router._proto = np.array(data.draw(st.lists(row, min_size=11, max_size=11)))
        v = np.array(
            data.draw(
                st.lists(st.one_of(values, special) if data.draw(st.booleans()) else values, min_size=d, max_size=d)
            )
        )
    hits = np.array(Q._keyword_counts(text), dtype=np.float64)
    with np.errstate(all="ignore"):
        try:
            raw_ref, w_ref = _routing_arrays(router._proto if with_proto else None, hits, v)
        except ValueError:  # no finite similarity at all: both forms refuse
            with pytest.raises(ValueError):
                router.route(text, v)
            return
        raw, h, _ = router.raw_scores(text, v)
        w = router.route(text, v).weights
    np.testing.assert_array_equal(h, hits)
    assert raw.tobytes() == raw_ref.tobytes() or np.array_equal(raw, raw_ref, equal_nan=True)
    assert w.tobytes() == w_ref.tobytes(), (w, w_ref)


FRAGMENTS = [
    "used to",
    "before switching",
    "upcoming",
    "still planning",
    "decided against",
    "tell me about",
    "how has it changed",
    "over time",
    "previous",
    "next week",
    "free time",
    "is she pursuing",
    "the",
    "dog",
    "flight",
    "Used To",
    "will attend",
    "job",
]


@settings(max_examples=300)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=6))
def test_intent_prefilter_equals_the_rule_loop(parts):
    """infer_intent's one-scan prefilter changes nothing: the first matching rule in order wins."""
    from frcore.bank.pipeline._query import INTENT_RULES, infer_intent

    text = " ".join(parts)
    expect = next(((i, n) for i, n, p in INTENT_RULES if p.search(text)), ("current", "default"))
    d = infer_intent(text)
    assert (d.intent, d.rule) == expect


@settings(max_examples=400)
@given(st.data())
def test_top_equals_a_full_sort(data):
    """_top (partial selection, ties filled in row order) = the first ``count`` of a full
    stable sort by (−value, row), for pools with many ties, zeros of both signs and subsets."""
    from frcore.bank.pipeline._select import _top

    n = data.draw(st.integers(1, 300))
    count = data.draw(st.integers(1, 40))
    pool = (
        st.sampled_from([0.0, -0.0, 0.25, 0.5, 1.0]) if data.draw(st.booleans()) else st.floats(-1, 1, allow_nan=False)
    )
    vals = np.array(data.draw(st.lists(pool, min_size=n, max_size=n)), dtype=np.float64)
    idx = None
    if data.draw(st.booleans()):
        idx = np.sort(
            np.array(sorted(data.draw(st.sets(st.integers(0, 10_000), min_size=n, max_size=n))), dtype=np.int64)
        )
    rows = np.arange(n) if idx is None else idx
    expect = rows[np.lexsort((rows, -vals))][:count]
    np.testing.assert_array_equal(_top(vals, idx, count), expect)


@settings(max_examples=40, deadline=None)
@example(0, 60_000, 300, "strided", False)  # the sample's cut holds 94 rows: fewer than count
@example(1, 60_000, 300, "strided", True)
@example(2, 20_000, 30, "mostly zero", False)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(16_384, 60_000),
    st.integers(1, 300),
    st.sampled_from(["distinct", "few", "mostly zero", "nan", "sorted", "strided"]),
    st.booleans(),
)
def test_top_of_a_large_pool_equals_a_full_sort(seed, n, count, kind, subset):
    """_top over pools large enough for its sampled cut: still the first ``count`` of a full
    stable sort by (−value, row) — with distinct values, few distinct ones (ties at the cut),
    mostly zeros (the cut at 0: the full selection), NaNs among them, sorted values, and the
    high values all in the sample (its cut above the count-th largest: the full selection)."""
    from frcore.bank.pipeline._select import _top

    rng = np.random.default_rng(seed)
    if kind == "distinct":
        vals = rng.random(n)
    elif kind == "few":
        vals = rng.choice([0.0, -0.0, 0.25, 0.5, 1.0], size=n)
    elif kind == "mostly zero":
        vals = np.where(rng.random(n) < 0.002, rng.random(n), 0.0)
    elif kind == "nan":
        vals = np.where(rng.random(n) < 0.1, np.nan, rng.random(n))
    elif kind == "sorted":
        vals = np.sort(rng.random(n))
    else:  # high values exactly where the sample looks: its cut can hold fewer than count rows
        vals = rng.random(n) * 0.5
        vals[:: max(1, n // 4096)] += 0.5
    idx = np.sort(rng.choice(4 * n, size=n, replace=False)) if subset else None
    rows = np.arange(n) if idx is None else idx
    if kind == "nan":  # NaN rows are never among the top of a pool with enough other rows
        ok = ~np.isnan(vals)
        expect = rows[ok][np.lexsort((rows[ok], -vals[ok]))][:count]
    else:
        expect = rows[np.lexsort((rows, -vals))][:count]
    np.testing.assert_array_equal(_top(vals, idx, count), expect)


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_retrieve_float32_cosines_equal_float64(data):
    """retrieve selects over float32 cosines in float32 (σ in float64 from the selected rows):
    the results are those of the same cosines given as float64, ties and propagation included."""
    from frcore import default_params
    from frcore.bank.pipeline import retrieve

    n = data.draw(st.integers(1, 200))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    prep = Prepared(**random_snapshot(rng, n))
    cos32 = (
        rng.choice(np.array([-0.2, 0.0, 0.3, 0.3, 0.7], np.float32), n)
        if data.draw(st.booleans())
        else rng.uniform(-0.3, 1, n).astype(np.float32)
    )
    bm = rng.choice([0.0, 1.5, 2.0], n)
    routing = np.zeros(11)
    routing[rng.integers(0, 11)] = 1.0
    config = PipelineConfig(
        propagation=data.draw(st.sampled_from([0.0, 0.5, 1.0])),
        ranker=data.draw(st.sampled_from(["lifecycle", "cosine"])),
    )
    kw = dict(
        bm25=bm,
        routing=routing,
        intent=data.draw(st.sampled_from(["current", "historical"])),
        params=default_params(),
        config=config,
    )
    a, b = retrieve(prep, cosine=cos32, **kw), retrieve(prep, cosine=cos32.astype(np.float64), **kw)
    assert a.results == b.results
    assert a.n_candidates == b.n_candidates and a.n_distilled == b.n_distilled
