"""LongMemEval: the benchmark's corpus ids, metrics by hand, the session widening, the lifecycle
measures, the loader's one-line errors, the benchmark's BM25 baseline and an end-to-end run whose
logs are re-scored by an independent copy of the benchmark's own metric code.

Expected values are computed by hand in the comments (or by :func:`_bench_*`, the benchmark's
``eval_utils.py`` written out index-based as it is upstream), never by the code under test.
"""

from __future__ import annotations

import gzip
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from support.longmemeval import _msg, tiny

from frcore.bench import longmemeval as L
from frcore.cli import main as fr_main

LOG3 = 1 / math.log2(3)  # 0.6309297535714575: the weight of position 3


# --------------------------------------------------------------------------- the benchmark's code


def _bench_dcg(relevances, k):
    relevances = np.asarray(relevances, dtype=np.float64)[:k]
    if relevances.size:
        return relevances[0] + np.sum(relevances[1:] / np.log2(np.arange(2, relevances.size + 1)))
    return 0.0


def _bench_ndcg(rankings, correct_docs, corpus_ids, k):
    relevances = [1 if doc_id in correct_docs else 0 for doc_id in [corpus_ids[idx] for idx in rankings[:k]]]
    ideal_relevance = [1] * len(correct_docs) + [0] * (len(corpus_ids) - len(correct_docs))
    ideal_dcg = _bench_dcg(ideal_relevance, k)
    actual_dcg = _bench_dcg(relevances, k)
    if ideal_dcg == 0:
        return 0.0
    return actual_dcg / ideal_dcg


def _bench_evaluate(rankings, correct_docs, corpus_ids, k):
    recalled_docs = set(corpus_ids[idx] for idx in rankings[:k])
    recall_any = float(any(doc in recalled_docs for doc in correct_docs))
    recall_all = float(all(doc in recalled_docs for doc in correct_docs))
    return recall_any, recall_all, _bench_ndcg(rankings, correct_docs, corpus_ids, k)


def _bench_turn2session(rankings, correct_docs, corpus_ids, k):
    def strip_turn_id(docid):
        return "_".join(docid.split("_")[:-1])

    correct_docs = list(set([strip_turn_id(x) for x in correct_docs]))
    corpus_ids_session = [strip_turn_id(x) for x in corpus_ids]
    effective_k = k
    unique_docids = set([corpus_ids_session[idx] for idx in rankings[:effective_k]])
    while effective_k <= len(corpus_ids_session) and len(unique_docids) < k:
        effective_k += 1
        unique_docids = set([corpus_ids_session[idx] for idx in rankings[:effective_k]])
    return _bench_evaluate(rankings, correct_docs, corpus_ids_session, effective_k)


def _bench_corpus_ids(entry):
    """run_retrieval.py's process_item_flat_index at granularity turn: the ids only."""
    ids = []
    for sess_id, sess in zip(entry["haystack_session_ids"], entry["haystack_sessions"]):
        for i_turn, turn in enumerate(sess):
            if turn["role"] == "user":
                if "answer" not in sess_id or turn["has_answer"]:
                    ids.append(sess_id + "_" + str(i_turn + 1))
                else:
                    ids.append((sess_id + "_" + str(i_turn + 1)).replace("answer", "noans"))
    return ids


# --------------------------------------------------------------------------- metrics by hand


def test_dcg_by_hand():
    assert L.dcg([1, 1, 1], 3) == pytest.approx(2 + LOG3)  # 1 + 1/log2(2) + 1/log2(3)
    assert L.dcg([0, 0, 1, 1], 4) == pytest.approx(LOG3 + 0.5)  # 1/log2(3) + 1/log2(4)
    assert L.dcg([1, 0, 1], 2) == 1.0  # cut at k
    assert L.dcg([], 5) == 0.0


def test_turn_metrics_by_hand():
    ranked = ["a", "x", "b", "y"]
    m1 = L.evaluate_retrieval(ranked, ["a", "b"], 4, 1)
    assert m1 == {"recall_any@1": 1.0, "recall_all@1": 0.0, "ndcg_any@1": 1.0}
    m3 = L.evaluate_retrieval(ranked, ["a", "b"], 4, 3)
    assert m3["recall_any@3"] == 1.0 and m3["recall_all@3"] == 1.0
    # DCG = 1 + 0 + 1/log2(3); ideal over the two gold = 1 + 1
    assert m3["ndcg_any@3"] == pytest.approx((1 + LOG3) / 2)


def test_ideal_dcg_is_over_every_gold_item():
    # three gold, one found at rank 1: 1 / (1 + 1 + 1/log2(3)) — the unretrieved gold count in the ideal
    m = L.evaluate_retrieval(["a", "x", "y"], ["a", "b", "c"], 10, 3)
    assert m["ndcg_any@3"] == pytest.approx(1 / (2 + LOG3))
    assert m["recall_all@3"] == 0.0
    # the ideal is cut at k: at k = 2 it is 1 + 1 whatever the number of gold
    assert L.evaluate_retrieval(["x", "a"], ["a", "b", "c"], 10, 2)["ndcg_any@2"] == pytest.approx(0.5)


def test_no_gold_is_all_of_nothing():
    assert L.evaluate_retrieval(["a", "b"], [], 2, 1) == {"recall_any@1": 0.0, "recall_all@1": 1.0, "ndcg_any@1": 0.0}


def test_session_widening_by_hand():
    ranked = ["s1_1", "s1_3", "answer_s2_2", "s3_1"]
    # turn level: the gold message is third
    assert L.evaluate_retrieval(ranked, ["answer_s2_2"], 4, 2)["recall_any@2"] == 0.0
    # session level: top 2 holds one session (s1), so k widens to 3, which holds s1 and answer_s2
    assert L.session_k([L.session_of(x) for x in ranked], 4, 2) == 3
    m = L.evaluate_turn2session(ranked, ["answer_s2_2"], 4, 2)
    assert m["recall_any@2"] == 1.0 and m["recall_all@2"] == 1.0
    assert m["ndcg_any@2"] == pytest.approx(LOG3)  # relevances [0, 0, 1] over the ideal [1, 0, 0]


def test_session_level_counts_every_message_of_a_gold_session():
    # two messages of the one gold session in the widened top 3: DCG 1 + 1 over the ideal 1
    ranked = ["answer_s2_2", "answer_s2_4", "s1_1"]
    m = L.evaluate_turn2session(ranked, ["answer_s2_2", "answer_s2_4"], 3, 2)
    assert m["ndcg_any@2"] == pytest.approx(2.0)
    assert m["recall_all@2"] == 1.0


def test_session_widening_stops_past_the_corpus():
    # one session only: k' runs to n + 1 and the top is the whole ranking
    assert L.session_k(["s_1", "s_1", "s_1"], 3, 2) == 4
    # every message is of session "s": the widened top is the whole ranking, and it holds the gold session
    m = L.evaluate_turn2session(["s_1", "s_2", "s_3"], ["s_2"], 3, 2)
    assert m["recall_all@2"] == 1.0
    assert m["ndcg_any@2"] == pytest.approx(2 + LOG3)  # three relevant positions over the ideal [1, 0, 0]


def test_session_of_strips_the_message_number():
    assert L.session_of("answer_4be1b6b4_1_9") == "answer_4be1b6b4_1"
    assert L.session_of("sharegpt_9MbC1u2_0_3") == "sharegpt_9MbC1u2_0"


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(["answer_a_1", "answer_b_2", "c_1", "d_1", "e_3"]), min_size=1, max_size=7).flatmap(
        lambda sessions: st.tuples(
            st.just([f"{s}_{j + 1}" for j, s in enumerate(sessions)]),
            st.permutations(list(range(len(sessions)))),
        )
    ),
    st.sampled_from(L.KS),
)
def test_metrics_equal_the_benchmark_code(ids_perm, k):
    """Random corpora (repeated session ids included) and rankings: our id-based metrics equal
    the benchmark's index-based code at both levels."""
    corpus_ids, perm = ids_perm
    gold = list(set(x for x in corpus_ids if "answer" in x))
    ranked = [corpus_ids[i] for i in perm]
    n = len(corpus_ids)
    ours = L.evaluate_retrieval(ranked, gold, n, k)
    assert (ours[f"recall_any@{k}"], ours[f"recall_all@{k}"]) == _bench_evaluate(perm, gold, corpus_ids, k)[:2]
    assert ours[f"ndcg_any@{k}"] == pytest.approx(_bench_evaluate(perm, gold, corpus_ids, k)[2])
    s = L.evaluate_turn2session(ranked, gold, n, k)
    ra, rl, nd = _bench_turn2session(perm, gold, corpus_ids, k)
    assert (s[f"recall_any@{k}"], s[f"recall_all@{k}"]) == (ra, rl)
    assert s[f"ndcg_any@{k}"] == pytest.approx(nd)


# --------------------------------------------------------------------------- a tiny hand-made LongMemEval
# (tiny(): tests/support/longmemeval.py)


def test_corpus_ids_follow_the_protocol():
    data = L.parse_longmemeval(tiny(), "tiny.json")
    ku = data.questions[0]
    assert [c.corpus_id for c in ku.corpus] == _bench_corpus_ids(tiny()[0])
    assert [c.corpus_id for c in ku.corpus] == [
        "sharegpt_f1_1",
        "answer_k_1_1",
        "ultrachat_f2_1",
        "noans_k_2_1",  # a user message of an answer session without has_answer
        "answer_k_2_3",  # numbered among every message of the session, the assistant's included
        "sharegpt_f3_1",
    ]
    assert ku.gold == ["answer_k_1_1", "answer_k_2_3"]
    assert data.questions[2].gold == []  # the evidence is the assistant's: not in a user-message corpus
    # question dated before its last session: asked at that session's date
    assert data.questions[1].asked_at == L.parse_date("2023/03/15 (Wed) 09:00", "d")
    assert data.questions[0].asked_at == data.questions[0].question_date


def test_session_granularity_ids():
    data = L.parse_longmemeval(tiny(), "tiny.json", granularity="session")
    assert [c.corpus_id for c in data.questions[0].corpus] == [
        "sharegpt_f1",
        "answer_k_1",
        "ultrachat_f2",
        "answer_k_2",
        "sharegpt_f3",
    ]
    assert data.questions[0].corpus[3].text == "Some small talk first. I now work at the library downtown."
    assert [c.corpus_id for c in data.questions[2].corpus] == ["ultrachat_f2", "noans_sa_1"]


def test_types_and_limit():
    data = L.parse_longmemeval(tiny(), "t", types=["single-session-user"], limit=1)
    assert [q.question_id for q in data.questions] == ["u1"]
    with pytest.raises(ValueError, match="no question of type"):
        L.parse_longmemeval(tiny(), "t", types=["temporal-reasoning"])


# --------------------------------------------------------------------------- lifecycle measures


def test_knowledge_update_measures_by_hand():
    q = L.parse_longmemeval(tiny(), "t").questions[0]  # old: answer_k_1_1 (Jan), new: answer_k_2_3 (Apr)
    assert L.knowledge_update_measures(q, ["answer_k_2_3", "x", "answer_k_1_1"]) == {
        "newest_above_older": True,
        "stale_only@10": False,
    }
    assert L.knowledge_update_measures(q, ["answer_k_1_1", "answer_k_2_3"]) == {
        "newest_above_older": False,
        "stale_only@10": False,
    }
    # newest unranked: below the older; the older in the top 10 alone is stale-only
    assert L.knowledge_update_measures(q, ["x", "answer_k_1_1"]) == {"newest_above_older": False, "stale_only@10": True}
    # newest ranked, older unranked: above it
    assert L.knowledge_update_measures(q, ["answer_k_2_3"])["newest_above_older"] is True
    # neither ranked: no order
    assert L.knowledge_update_measures(q, ["x"]) == {"newest_above_older": False, "stale_only@10": False}
    # the newest at rank 11, the older at 10: stale-only in the top 10
    assert L.knowledge_update_measures(q, ["y"] * 9 + ["answer_k_1_1", "answer_k_2_3"])["stale_only@10"] is True
    # evidence on one date only: not measured
    assert L.knowledge_update_measures(L.parse_longmemeval(tiny(), "t").questions[1], ["x"]) is None


# --------------------------------------------------------------------------- the benchmark's BM25


def test_lme_bm25_ranking_by_hand():
    corpus = ["the cat sat", "a red apple pie", "apple", "green tree", "blue sky", "the red car", "a dog ran"]
    r = L.lme_bm25_ranking(corpus, "red apple")
    assert sorted(r) == list(range(len(corpus)))
    # "red" and "apple" are each in 2 of 7 texts (same idf): doc 2 has "apple" alone in one word, the
    # shortest text with a query word; doc 1 has both; docs without either score 0 and come last
    assert set(r[:3]) == {1, 2, 5} and r[0] == 1
    # tokens are split on single spaces, case kept: "Red" is not "red"
    assert L.lme_bm25_ranking(["Red", "red", "x"], "red")[0] == 1


def test_lme_bm25_is_rank_bm25_okapi():
    from rank_bm25 import BM25Okapi

    corpus = ["I work at the bakery", "the library downtown is big", "work work work", "nothing here", "at the"]
    scores = BM25Okapi([d.split(" ") for d in corpus]).get_scores("where do I work".split(" "))
    assert L.lme_bm25_ranking(corpus, "where do I work") == [int(i) for i in np.argsort(scores)[::-1]]


# --------------------------------------------------------------------------- complete rankings


def test_complete_ranking_appends_the_rest_by_cosine():
    cos = np.array([0.1, 0.9, 0.5, 0.5, 0.7])
    eligible = np.array([True, True, True, False, True])
    # head first, then by cosine (ties in corpus order), the ineligible never
    assert L.complete_ranking([2], cos, eligible) == [2, 1, 4, 0]
    assert L.complete_ranking([], cos, np.ones(5, bool)) == [1, 4, 2, 3, 0]


# --------------------------------------------------------------------------- bad input


def _bad_cases():
    def mutate(fn):
        d = tiny()
        fn(d)
        return d

    return [
        ({"not": "a list"}, "expected a list of questions"),
        (mutate(lambda d: d[1].pop("question_date")), "question 'u1': field 'question_date' missing"),
        (
            mutate(lambda d: d[0]["haystack_dates"].pop()),
            "question 'ku1': fields 'haystack_session_ids', 'haystack_dates', 'haystack_sessions': expected equal",
        ),
        (
            mutate(lambda d: d[0]["haystack_dates"].__setitem__(2, "yesterday")),
            "question 'ku1': field 'haystack_dates'[2]: cannot parse date 'yesterday'",
        ),
        (
            mutate(lambda d: d[1].__setitem__("question_date", "2023/13/01 (Mon) 10:00")),
            "question 'u1': field 'question_date': cannot parse date",
        ),
        (
            mutate(lambda d: d[2]["haystack_sessions"][0][0].pop("role")),
            "question 'a1': field 'haystack_sessions'[0][0]",
        ),
        (mutate(lambda d: d.append(d[0])), "question 'ku1': field 'question_id': duplicate"),
    ]


@pytest.mark.parametrize("obj,message", _bad_cases())
def test_bad_input_names_the_question_and_field(obj, message):
    with pytest.raises(L.LongMemEvalError) as e:
        L.parse_longmemeval(obj, "data.json")
    assert message in str(e.value) and str(e.value).startswith("data.json: ")


@pytest.mark.parametrize("obj,message", _bad_cases()[1:4])
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, capsys, obj, message):
    p = tmp_path / "bad.json.gz"
    p.write_bytes(gzip.compress(json.dumps(obj).encode()))
    rc = fr_main(["bench", "longmemeval", "--data", str(p), "--embedder", "hash", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert len(err.splitlines()) == 1 and str(p) in err and message in err
    assert not (tmp_path / "o").exists()  # nothing written


def test_cli_unknown_system_and_missing_file(tmp_path, capsys):
    p = tmp_path / "d.json"
    p.write_text(json.dumps(tiny()))
    assert fr_main(["bench", "longmemeval", "--data", str(p), "--systems", "nope", "--out", str(tmp_path / "o")]) == 2
    assert "unknown system 'nope'" in capsys.readouterr().err
    assert fr_main(["bench", "longmemeval", "--data", str(tmp_path / "none.json"), "--out", str(tmp_path / "o")]) == 2
    assert "not found" in capsys.readouterr().err


# --------------------------------------------------------------------------- end to end


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("lme")
    (d / "tiny.json").write_text(json.dumps(tiny()))
    rc = fr_main(
        [
            "bench",
            "longmemeval",
            "--data",
            str(d / "tiny.json"),
            "--embedder",
            "hash",
            "--n-boot",
            "200",
            "--out",
            str(d / "out"),
        ]
    )
    assert rc == 0
    return d / "out"


def test_run_writes_every_system_log(tiny_run):
    summary = json.loads((tiny_run / "summary.json").read_text())
    assert summary["config"]["systems"] == list(L.DEFAULT_SYSTEMS)
    raw = {q["question_id"]: q for q in tiny()}
    for name in L.DEFAULT_SYSTEMS:
        lines = [json.loads(x) for x in (tiny_run / f"{name}.jsonl").read_text().splitlines()]
        assert [e["question_id"] for e in lines] == [q["question_id"] for q in tiny()]
        for e in lines:
            ids = [x["corpus_id"] for x in e["retrieval_results"]["ranked_items"]]
            corpus = _bench_corpus_ids(raw[e["question_id"]])
            # the whole corpus is ranked (nothing here is an injection), each message once
            assert sorted(ids) == sorted(corpus)
            assert e["question_type"] == raw[e["question_id"]]["question_type"]
    assert (tiny_run / "summary.md").read_text().startswith("LongMemEval retrieval")


def test_logged_metrics_equal_the_benchmark_code(tiny_run):
    raw = {q["question_id"]: q for q in tiny()}
    for name in L.DEFAULT_SYSTEMS:
        for line in (tiny_run / f"{name}.jsonl").read_text().splitlines():
            e = json.loads(line)
            corpus_ids = _bench_corpus_ids(raw[e["question_id"]])
            ranked = [x["corpus_id"] for x in e["retrieval_results"]["ranked_items"]]
            rankings = [corpus_ids.index(x) for x in ranked]
            correct = list(set(x for x in corpus_ids if "answer" in x))
            m = e["retrieval_results"]["metrics"]
            for k in L.KS:
                ra, rl, nd = _bench_evaluate(rankings, correct, corpus_ids, k)
                assert (m["turn"][f"recall_any@{k}"], m["turn"][f"recall_all@{k}"]) == (ra, rl)
                assert m["turn"][f"ndcg_any@{k}"] == pytest.approx(nd)
                ra, rl, nd = _bench_turn2session(rankings, correct, corpus_ids, k)
                assert (m["session"][f"recall_any@{k}"], m["session"][f"recall_all@{k}"]) == (ra, rl)
                assert m["session"][f"ndcg_any@{k}"] == pytest.approx(nd)


def test_summary_means_exclude_abstention(tiny_run):
    summary = json.loads((tiny_run / "summary.json").read_text())
    for name in L.DEFAULT_SYSTEMS:
        lines = [json.loads(x) for x in (tiny_run / f"{name}.jsonl").read_text().splitlines()]
        kept = [e for e in lines if not e["question_id"].endswith("_abs")]
        pooled = summary["systems"][name]["pooled"]
        assert pooled["n"] == 3
        for level in ("turn", "session"):
            for metric in ("recall_any@5", "recall_all@10", "ndcg_any@50"):
                want = sum(e["retrieval_results"]["metrics"][level][metric] for e in kept) / len(kept)
                assert pooled[level][metric] == pytest.approx(want)
        # the questions with gold: ku1 and u1 (a1's evidence is the assistant's, u2_abs abstains)
        assert summary["systems"][name]["pooled_evaluable"]["n"] == 2
        assert summary["systems"][name]["knowledge_update"]["n"] == 1
    assert summary["evaluable"] == 2 and summary["without_gold"] == ["a1"]
    pairs = {(c["a"], c["b"]) for c in summary["comparisons"]}
    assert ("fr-full", "fr-lifecycle-off") in pairs and ("lme-bm25", "flat-cosine") in pairs
    assert all(c["n"] == 2 for c in summary["comparisons"] if c["group"] == "pooled")


def test_an_empty_message_is_in_the_corpus_but_not_in_the_bank():
    from frcore.bank.pipeline._query import Router
    from frcore.bank.search._embed import get_embedder

    raw = tiny()[1]
    raw["haystack_sessions"][2].append(_msg("user", "  "))  # an empty user message, as the data has five
    q = L.parse_longmemeval([raw], "t").questions[0]
    assert [c.corpus_id for c in q.corpus] == _bench_corpus_ids(raw)  # kept, as the benchmark keeps it
    emb = get_embedder("hash")
    names, peers, systems = L.resolve("lme-bm25,flat-cosine,fr-full")
    rankings, info = L.run_question(q, systems, emb, Router(emb), peers=peers)
    empty = len(q.corpus) - 1
    assert sorted(rankings["lme-bm25"]) == list(range(len(q.corpus)))  # the benchmark's BM25 ranks it
    for name in ("flat-cosine", "fr-full"):
        assert sorted(rankings[name]) == list(range(empty))  # FR-Bank cannot store it: never ranked


@pytest.mark.skipif(not L.DEFAULT_DATA.is_file(), reason=f"LongMemEval data not found at {L.DEFAULT_DATA}")
def test_the_development_part_loads_with_the_readme_counts():
    """Counts from the data's README (../shared/data/longmemeval/README.md), not from the loader."""
    data = L.load_longmemeval()
    per_type = data.counts()["per_type"]
    assert len(data.questions) == 102
    assert per_type == {
        "knowledge-update": 16,
        "temporal-reasoning": 27,
        "multi-session": 27,
        "single-session-user": 14,
        "single-session-assistant": 12,
        "single-session-preference": 6,
    }
    for q in data.questions:  # every gold id follows the protocol: an answer session's message with has_answer
        assert all(g.startswith(tuple(s for s in q.session_ids if "answer" in s)) for g in q.gold)
        assert q.asked_at >= max(q.session_dates)


def test_summary_table_gives_session_recall_all_at_5_once(tiny_run):
    """The pooled table names session recall_all@5 (the metric published systems quote), from the
    summary's own figure, and no column twice (at session granularity the session columns are the
    first five)."""
    summary = json.loads((tiny_run / "summary.json").read_text())
    lines = L.markdown_longmemeval(summary).splitlines()
    header = next(x for x in lines if x.startswith("| system | turn R_any@5"))
    cols = [c.strip() for c in header.strip("|").split("|")]
    assert "session R_all@5" in cols and len(cols) == len(set(cols))
    row = next(x for x in lines if x.startswith("| fr-plus |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    want = summary["systems"]["fr-plus"]["pooled"]["session"]["recall_all@5"]
    assert cells[cols.index("session R_all@5")] == f"{100 * want:.1f}"
    session = dict(summary, config=dict(summary["config"], granularity="session"))
    head = next(x for x in L.markdown_longmemeval(session).splitlines() if x.startswith("| system |"))
    cols = [c.strip() for c in head.strip("|").split("|")]
    assert len(cols) == len(set(cols)) and "session R_all@5" in cols
