"""The stages of FR-Bank's retrieval for raw conversation (frcore/bank/pipeline/_recall.py;
docs/benchmark.md, "FR-Bank's retrieval") on hand-built snapshots whose outcome is known by
construction: untyped turns scored by σ, the question's time window, coverage of episodes, turn
context; and the invariants of their helpers (hypothesis)."""

from __future__ import annotations

import datetime as _dt
from dataclasses import replace

import numpy as np
from hypothesis import given, settings, strategies as st

from frcore import CATEGORY_NAMES, default_params
from frcore.bank import FR_BANK_PIPELINE, Bank, PipelineConfig
from frcore.bank.pipeline import Prepared, read_question, retrieve
from frcore.bank.pipeline._recall import HALF, episode_coverage, episodes, neighbour_rows

C = len(CATEGORY_NAMES)
PARAMS = default_params()
ASKED = _dt.datetime(2023, 5, 30, 12)  # a Tuesday
EPOCH = _dt.datetime(1970, 1, 1)
AT_H = (ASKED - EPOCH) / _dt.timedelta(hours=1)
DAY = 24.0
SIGMA = PipelineConfig(untyped_score="sigma")


def prepared(days_before: list[float], session: list[int] | None = None, kinds: str = "turn") -> Prepared:
    """A snapshot of raw turns (``kinds``) said ``days_before`` the question, all in one category."""
    n = len(days_before)
    w = np.zeros((n, C))
    w[:, CATEGORY_NAMES.index("PREFERENCES_HABITS")] = 1.0
    return Prepared(
        weights=w,
        said_at_h=np.array([AT_H - d * DAY for d in days_before]),
        event_h=np.full(n, np.nan),
        state=np.zeros(n, dtype=np.int64),
        confidence=np.ones(n),
        numeric=np.zeros(n, dtype=bool),
        slots=[None] * n,
        eligible=np.ones(n, dtype=bool),
        at_h=AT_H,
        kinds=[kinds] * n,
        session=None if session is None else np.asarray(session),
    )


def rows(prep: Prepared, cos, config: PipelineConfig, question: str | None = None, bm25=None) -> list[int]:
    cos = np.asarray(cos, dtype=np.float64)
    bm = np.zeros_like(cos) if bm25 is None else np.asarray(bm25, dtype=np.float64)
    reading = None if question is None else read_question(question, ASKED)
    res = retrieve(
        prep,
        cosine=cos,
        bm25=bm,
        routing=np.zeros(C),
        intent="current",
        params=PARAMS,
        config=config,
        question=reading,
    )
    return [r.row for r in res.results]


# ------------------------------------------------------------------ untyped turns scored by σ


def test_sigma_turns_rank_by_sigma_where_the_kernel_prefers_recent_turns():
    """An old turn of higher σ above a recent turn of lower σ: by σ alone; the kernel's activation
    (recency) puts the recent one first."""
    prep = prepared([300.0, 0.5])
    cos = [0.60, 0.55]
    assert rows(prep, cos, SIGMA)[:2] == [0, 1]
    assert rows(prep, cos, PipelineConfig())[:2] == [1, 0]


def test_sigma_turns_score_is_log_sigma_and_routing_zero():
    prep = prepared([10.0, 20.0, 30.0])
    cos = np.array([0.7, 0.4, 0.2])
    res = retrieve(
        prep, cosine=cos, bm25=np.zeros(3), routing=np.ones(C) / C, intent="current", params=PARAMS, config=SIGMA
    )
    for r in res.results:
        assert abs(r.score - np.log(0.7 * cos[r.row])) < 1e-9  # σ = 0.7·cos (no BM25 match)
        assert r.terms["routing"] == 0.0 and r.terms["blend"] == r.terms["sim_cosine"] * 0.7


def test_sigma_turns_leave_typed_facts_and_rows_of_unknown_kind_to_the_kernel():
    for kinds in ("fact", None):
        prep = prepared([300.0, 0.5], kinds=kinds) if kinds else prepared([300.0, 0.5])
        if kinds is None:
            prep = Prepared(
                weights=prep.weights,
                said_at_h=prep.said_at_h,
                event_h=prep.hours_to_event + AT_H,
                state=prep.state,
                confidence=prep.confidence,
                numeric=prep.numeric,
                slots=prep.slots,
                eligible=prep.eligible,
                at_h=AT_H,
            )
        cos = [0.60, 0.55]
        assert rows(prep, cos, SIGMA) == rows(prep, cos, PipelineConfig())


def test_fused_sigma_never_below_its_best_part_on_a_constructed_case():
    """Two gold turns, one found only by cosine (no shared word), one only by BM25 (low cosine):
    the flat rankers each find one in the top 2; σ-ranked turns find both (the hybrid σ keeps a
    part's best match ahead of rows that neither part ranks high)."""
    n = 12
    prep = prepared([float(i + 1) for i in range(n)])
    cos = np.full(n, 0.30)
    bm = np.zeros(n)
    cos[3], bm[3] = 0.80, 0.0  # found by cosine
    cos[7], bm[7] = 0.10, 9.0  # found by BM25
    cos[5], bm[5] = 0.45, 1.0  # a decoy both parts rank second
    got = rows(prep, cos, SIGMA, bm25=bm)
    by_cos = list(np.argsort(-cos, kind="stable")[:2])
    by_bm = list(np.argsort(-bm, kind="stable")[:2])
    gold = {3, 7}
    assert len(gold & set(got[:2])) >= max(len(gold & set(by_cos)), len(gold & set(by_bm)))
    assert set(got[:2]) == gold


# ------------------------------------------------------------------ the question's time window


def test_time_window_puts_the_turn_said_two_weeks_ago_first():
    """Two equally similar turns, 14 and 60 days before: "two weeks ago" ranks the first above the
    second, halving σ outside the window; the same question without time words keeps row order."""
    prep = prepared([60.0, 14.0, 3.0])
    cos = [0.5, 0.5, 0.1]
    cfg = replace(SIGMA, time_window=True)
    assert rows(prep, cos, cfg, "What did I buy two weeks ago?")[0] == 1
    assert rows(prep, cos, cfg, "What did I buy?")[:2] == [0, 1]


def test_time_window_adds_rows_inside_that_no_other_stage_found():
    """A turn inside the window with a low σ (below the other stages' candidate counts) joins the
    candidates and outranks rows outside whose halved σ is lower than its own."""
    n = 40
    days = [100.0 + i for i in range(n)] + [28.0]
    cos = [0.30] * n + [0.20]
    prep = prepared(days)
    cfg = replace(SIGMA, time_window=True, n_cosine=5, n_bm25=0, n_forced=5, n_distill=10)
    got = rows(prep, cos, cfg, "What milestone did I mention four weeks ago?")
    assert got[0] == n
    assert n not in rows(prep, cos, replace(cfg, time_window=False), "What milestone did I mention four weeks ago?")


def test_time_window_changes_nothing_without_time_words_or_rows_inside():
    prep = prepared([5.0, 9.0, 30.0, 31.0])
    cos = [0.2, 0.6, 0.4, 0.5]
    on, off = replace(SIGMA, time_window=True), SIGMA
    assert rows(prep, cos, on, "Where do I live?") == rows(prep, cos, off, "Where do I live?")
    # "in 2019": no row said then — nothing halved
    assert rows(prep, cos, on, "What did I buy in 2019?") == rows(prep, cos, off)


def test_halving_is_the_stated_factor():
    prep = prepared([60.0, 14.0])
    res = retrieve(
        prep,
        cosine=np.array([0.6, 0.5]),
        bm25=np.zeros(2),
        routing=np.zeros(C),
        intent="current",
        params=PARAMS,
        config=replace(SIGMA, time_window=True),
        question=read_question("What did I buy two weeks ago?", ASKED),
    )
    terms = {r.row: r.terms for r in res.results}
    assert terms[0]["sigma_window"] == HALF and terms[1]["sigma_window"] == 1.0
    assert abs(terms[0]["blend"] - HALF * 0.7 * 0.6) < 1e-9


# ------------------------------------------------------------------ coverage of episodes


def test_coverage_keeps_one_session_to_half_the_top_k():
    """Session 0 holds eight turns more similar than any other session's: for "how many" the top 4
    holds two of them and the best turn of two other sessions; without the cue, four of session 0."""
    sess = [0] * 8 + [1, 2, 3]
    prep = prepared([10.0] * 8 + [20.0, 30.0, 40.0], session=sess)
    cos = [0.9, 0.89, 0.88, 0.87, 0.86, 0.85, 0.84, 0.83, 0.5, 0.4, 0.3]
    cfg = replace(SIGMA, coverage=True, k=4)
    assert rows(prep, cos, cfg, "How many concerts did I go to?") == [0, 1, 8, 9]
    assert rows(prep, cos, cfg, "Which concert did I like?") == [0, 1, 2, 3]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=30), st.integers(1, 12))
def test_episode_coverage_is_a_permutation_with_capped_top(episode_list, k):
    ep = np.asarray(episode_list)
    ranked = list(range(len(ep)))
    out, moved = episode_coverage(ranked, ep, k)
    assert sorted(out) == ranked
    cap = -(-k // 2)
    top = out[:k]
    counts = {e: sum(1 for r in top if ep[r] == e) for e in set(ep[top].tolist())}
    # an episode holds more than the cap only when every row that is not moved is in the top
    # already: moved rows fill the places no other episode can
    if any(c > cap for c in counts.values()):
        assert set(ranked) - moved <= set(top)
    kept = [r for r in out if r not in moved]
    assert kept == sorted(kept)  # the order of what stays is the given order


# ------------------------------------------------------------------ turn context


def test_turn_context_gives_a_thin_turn_half_its_neighbours_sigma():
    """Row 1 ("yes, that one") sits between row 0 (a strong match) and row 2 in session 0: with
    turn context its σ is half row 0's and it ranks above row 3 of another session."""
    prep = prepared([10.0, 10.0, 10.0, 50.0], session=[0, 0, 0, 1])
    cos = [0.9, 0.05, 0.1, 0.2]
    cfg = replace(SIGMA, turn_context=True, n_cosine=1, n_bm25=0, n_forced=0)
    got = rows(prep, cos, cfg)
    assert got.index(1) < len(got)
    res = retrieve(
        prep, cosine=np.array(cos), bm25=np.zeros(4), routing=np.zeros(C), intent="current", params=PARAMS, config=cfg
    )
    terms = {r.row: r.terms for r in res.results}
    assert abs(terms[1]["sigma_context"] - HALF * 0.7 * 0.9) < 1e-9
    assert 3 not in terms  # not a neighbour of any candidate


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-1, 3), st.integers(0, 5)), min_size=1, max_size=25))
def test_neighbours_are_adjacent_rows_of_one_episode(items):
    session = np.array([s for s, _ in items])
    said = np.array([d * 24.0 + 1.0 for _, d in items])
    ep = episodes(session, said)
    # one episode per session; rows without one share it per day
    for i in range(len(items)):
        for j in range(len(items)):
            same = (session[i] == session[j] != -1) or (
                session[i] == session[j] == -1 and int(said[i] // 24) == int(said[j] // 24)
            )
            assert (ep[i] == ep[j]) == same
    prev, nxt = neighbour_rows(ep, said)
    for i in range(len(items)):
        for j in (prev[i], nxt[i]):
            if j >= 0:
                assert ep[j] == ep[i]
        if nxt[i] >= 0:
            assert prev[nxt[i]] == i
    # each episode is one chain: as many ends as episodes
    assert int((prev < 0).sum()) == len(set(ep.tolist()))


# ------------------------------------------------------------------ through the bank


def test_bank_default_reads_the_question_and_says_what_it_read(tmp_path):
    with Bank.open(str(tmp_path / "b.db"), embedder="hash") as bank:
        bank.add(
            [
                {"id": "t1", "kind": "turn", "text": "I bought a blue kayak.", "said_at": "2023-03-01"},
                {"id": "t2", "kind": "turn", "text": "I bought a red kayak.", "said_at": "2023-05-16"},
            ]
        )
        res = bank.query("Which kayak did I buy two weeks ago?", at="2023-05-30T12:00:00")
        assert res.ids[0] == "t2"
        assert res.question is not None and res.question["time"]["words"]
        assert res.to_dict()["question"] == res.question
        assert bank.query("Which kayak did I buy?", at="2023-05-30", config=PipelineConfig()).question is None
    assert FR_BANK_PIPELINE.time_window and FR_BANK_PIPELINE.untyped_score == "sigma"


def test_explain_prints_the_question_reading_and_each_results_window_factor(tmp_path, capsys):
    from frcore.bank.cli import _print_result

    with Bank.open(str(tmp_path / "b.db"), embedder="hash") as bank:
        bank.add(
            [
                {"id": "t1", "kind": "turn", "text": "I bought a blue kayak.", "said_at": "2023-03-01"},
                {"id": "t2", "kind": "turn", "text": "I bought a red kayak.", "said_at": "2023-05-16"},
            ]
        )
        res = bank.explain("How many kayaks did I buy two weeks ago?", at="2023-05-30T12:00:00")
    _print_result(res, full=True)
    out = capsys.readouterr().out
    assert "time words: 'two weeks ago' → window 2023-05-12T00:00:00 .. 2023-05-20T23:59:59" in out
    assert "coverage: 'how many'" in out
    assert "time window x0.5" in out and "time window x1;" in out


# ------------------------------------------------------------------ the question's order


def test_order_words_reorder_the_top_k_and_never_change_its_rows():
    """Three equally similar turns said 300, 200 and 100 days before: "most recently" puts the
    latest first, "the first time" the earliest; a fourth, less similar turn stays out of the top 3
    either way; without order words the order is by row."""
    prep = prepared([300.0, 200.0, 100.0, 50.0])
    cos = [0.5, 0.5, 0.5, 0.2]
    cfg = replace(SIGMA, time_order=True, k=3)
    latest = rows(prep, cos, cfg, "Which camera did I buy most recently?")
    earliest = rows(prep, cos, cfg, "Which camera did I buy the first time?")
    plain = rows(prep, cos, cfg, "Which camera did I buy?")
    assert plain == [0, 1, 2]
    assert latest == [2, 1, 0] and earliest == [0, 1, 2]
    assert set(latest) == set(earliest) == set(plain)


def test_order_gain_is_log_of_half_plus_half_the_place():
    prep = prepared([300.0, 200.0, 100.0])
    res = retrieve(
        prep,
        cosine=np.array([0.6, 0.5, 0.4]),
        bm25=np.zeros(3),
        routing=np.zeros(C),
        intent="current",
        params=PARAMS,
        config=replace(SIGMA, time_order=True, k=3),
        question=read_question("What is my current camera?", ASKED),
    )
    gains = {r.row: r.terms["time_order"] for r in res.results}
    assert gains == {0: np.log(HALF), 1: np.log(HALF + HALF * 0.5), 2: 0.0}
    keys = [r.score + r.terms["time_order"] for r in res.results]
    assert keys == sorted(keys, reverse=True)
