"""LoCoMo evaluation: loader (real counts, malformed evidence), metrics, summary, CLI end-to-end.

Expected counts come from the data's README (recounted upstream), never from the loader. Tests on
the real file are skipped when ``../shared/data/locomo/locomo10.json`` is absent.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import re

import numpy as np
import pytest
from hypothesis import given, strategies as st

from frcore.bench import locomo as L

REAL = L.DEFAULT_DATA
needs_data = pytest.mark.skipif(not REAL.is_file(), reason=f"LoCoMo data not found at {REAL}")
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


# --------------------------------------------------------------------------- a tiny hand-made LoCoMo


def _turn(speaker, dia, text, **extra):
    return {"speaker": speaker, "dia_id": dia, "text": text, **extra}


def tiny() -> list[dict]:
    """Two conversations in LoCoMo's format, with every kind of evidence defect."""
    conv_a = {
        "sample_id": "conv-a",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                _turn("Ann", "D1:1", "I adopted a greyhound called Pixel last week."),
                _turn("Bob", "D1:2", "Lovely! I just started pottery classes downtown."),
                _turn(
                    "Ann",
                    "D1:3",
                    "Look at this.",
                    img_url=["x"],
                    blip_caption="a photo of a dog on a beach",
                    query="dog beach",
                ),
            ],
            "session_2_date_time": "10:04 am on 19 June, 2023",
            "session_2": [
                _turn("Bob", "D2:1", "My pottery teacher says my vases are getting better."),
                _turn("Ann", "D2:2", "Pixel ran in the park with a frisbee today."),
                _turn("Bob", "D2:3", "I am flying to Lisbon for a conference in July."),
            ],
            "session_3_date_time": "8:00 pm on 1 December, 2023",  # an orphan date: no session_3 list
        },
        "qa": [
            {
                "question": "What is the name of Ann's greyhound?",
                "answer": "Pixel",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "Which classes did Bob start and how are his vases?",
                "answer": "pottery",
                "evidence": ["D1:2", "D2:1", "D1:2"],
                "category": 1,
            },
            {
                "question": "When is Bob flying to Lisbon?",
                "answer": 2023,
                "evidence": ["D2:3", "D9:9", "D2:3; D1:1"],
                "category": 2,
            },
            {
                "question": "Would Ann enjoy a beach trip with her dog?",
                "answer": "Likely yes",
                "evidence": [],
                "category": 3,
            },
            {
                "question": "What did Bob's greyhound catch?",
                "adversarial_answer": "a frisbee",
                "evidence": ["D2:2", "D"],
                "category": 5,
            },
            {"question": "Where does Ann's dog play?", "answer": "park", "evidence": ["D:2:2"], "category": 4},
        ],
    }
    conv_b = {
        "sample_id": "conv-b",
        "conversation": {
            "speaker_a": "Cy",
            "speaker_b": "Di",
            "session_1_date_time": "9:15 am on 2 January, 2022",
            "session_1": [
                _turn("Cy", "D1:1", "I planted tomatoes and basil in the garden."),
                _turn("Di", "D1:2", "I am training for the Berlin marathon."),
            ],
        },
        "qa": [
            {
                "question": "What did Cy plant in the garden?",
                "answer": "tomatoes and basil",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {"question": "Which marathon is Di training for?", "answer": "Berlin", "evidence": ["D1:2"], "category": 2},
        ],
    }
    return [conv_a, conv_b]


# --------------------------------------------------------------------------- loader on the real file


@needs_data
def test_real_counts_match_the_readme():
    d = L.load_locomo(REAL)
    c = d.counts()
    assert (c["conversations"], c["sessions"], c["turns"], c["qa"]) == (10, 272, 5882, 1986)
    assert c["qa_per_category"] == {"1": 282, "2": 321, "3": 96, "4": 841, "5": 446}
    assert all(19 <= len(conv.sessions) <= 32 for conv in d.conversations)
    raw = [
        t
        for conv in json.loads(REAL.read_text())
        for k, v in conv["conversation"].items()
        if re.fullmatch(r"session_\d+", k)
        for t in v
    ]
    assert sum(1 for t in raw if "img_url" in t) == 910  # README: 910 turns carry an image URL
    # every turn with a caption (some have no URL) carries it as "[shares ...]"
    assert sum(1 for conv in d.conversations for t in conv.turns if "[shares " in t.text) == sum(
        1 for t in raw if t.get("blip_caption")
    )


@needs_data
def test_real_malformed_evidence_reported_and_skipped():
    d = L.load_locomo(REAL)
    skipped = {(s["sample_id"], s["evidence"]): s["reason"] for s in d.skipped_evidence}
    assert len(d.skipped_evidence) == 9
    for bad in [("conv-26", "D8:6; D9:17"), ("conv-43", "D:11:26"), ("conv-42", "D")]:
        assert skipped[bad] == "malformed"
    assert skipped[("conv-50", "D30:05")] == "no such turn"
    # every kept evidence id names a turn of its own conversation
    for conv in d.conversations:
        ids = {t.dia_id for t in conv.turns}
        for q in conv.qa:
            assert set(q.evidence) <= ids
    # the 4 upstream questions without evidence are among those left without any
    assert sum(1 for conv in d.conversations for q in conv.qa if not q.raw_evidence) == 4
    assert sum(1 for conv in d.conversations for q in conv.qa if not q.evidence) >= 4


@needs_data
def test_real_first_conversation_dates_and_ids():
    d = L.load_locomo(REAL, conversations=1)
    conv = d.conversations[0]
    assert conv.sample_id == "conv-26"
    assert conv.sessions[0].date == dt.datetime(2023, 5, 8, 13, 56)  # "1:56 pm on 8 May, 2023"
    assert conv.turns[0].dia_id == "D1:1" and conv.turns[0].speaker == "Caroline"
    assert [s.date for s in conv.sessions] == sorted(s.date for s in conv.sessions)


# --------------------------------------------------------------------------- loader on hand-made data


def test_tiny_loader_sessions_turns_caption_and_dates():
    d = L.parse_locomo(tiny())
    a, b = d.conversations
    assert [len(s.turns) for s in a.sessions] == [3, 3]
    assert a.turns[2].text == "Look at this. [shares a photo of a dog on a beach]"
    assert a.turns[0].text == "I adopted a greyhound called Pixel last week."
    assert a.sessions[1].date == dt.datetime(2023, 6, 19, 10, 4)
    assert a.turns[4].said_at == dt.datetime(2023, 6, 19, 10, 4) and a.turns[4].session == 2
    # the orphan session_3 date is ignored: the last session is session 2
    assert a.last_date == dt.datetime(2023, 6, 19, 10, 4)
    assert L.query_time(a) == dt.datetime(2023, 6, 19, 11, 4)
    assert b.last_date == dt.datetime(2022, 1, 2, 9, 15)


def test_tiny_evidence_dedup_skip_and_report():
    d = L.parse_locomo(tiny())
    qa = d.conversations[0].qa
    assert qa[0].evidence == ("D1:1",)
    assert qa[1].evidence == ("D1:2", "D2:1")  # duplicate D1:2 kept once
    assert qa[2].evidence == ("D2:3",)
    assert qa[2].answer == "2023"  # integer answers become strings
    assert qa[3].evidence == ()
    assert qa[4].evidence == ("D2:2",) and qa[4].answer is None and qa[4].adversarial_answer == "a frisbee"
    assert qa[5].evidence == ()
    got = sorted((s["sample_id"], s["qa_index"], s["evidence"], s["reason"]) for s in d.skipped_evidence)
    assert got == [
        ("conv-a", 2, "D2:3; D1:1", "malformed"),
        ("conv-a", 2, "D9:9", "no such turn"),
        ("conv-a", 4, "D", "malformed"),
        ("conv-a", 5, "D:2:2", "malformed"),
    ]
    assert d.counts()["qa_per_category"] == {"1": 1, "2": 2, "3": 1, "4": 3, "5": 1}


def _mutate(fn):
    data = tiny()
    fn(data)
    return data


BAD_CASES = {
    "category-6": (lambda d: d[0]["qa"][1].update(category=6), r"conv-a.*qa\[1\].*category"),
    "category-str": (lambda d: d[1]["qa"][0].update(category="4"), r"conv-b.*qa\[0\].*category"),
    "duplicate-dia": (
        lambda d: d[0]["conversation"]["session_2"][1].update(dia_id="D1:1"),
        r"conv-a.*session_2\[1\].*duplicate dia_id 'D1:1'",
    ),
    "bad-date": (
        lambda d: d[1]["conversation"].update(session_1_date_time="sometime in May"),
        r"conv-b.*session_1_date_time.*'sometime in May'",
    ),
    "missing-date": (
        lambda d: d[1]["conversation"].pop("session_1_date_time"),
        r"conv-b.*session_1_date_time.*missing",
    ),
    "missing-speaker": (
        lambda d: d[0]["conversation"]["session_1"][0].pop("speaker"),
        r"conv-a.*session_1\[0\].*speaker",
    ),
    "missing-question": (lambda d: d[1]["qa"][1].pop("question"), r"conv-b.*qa\[1\].*question"),
    "evidence-not-list": (lambda d: d[1]["qa"][1].update(evidence="D1:2"), r"conv-b.*qa\[1\].*evidence"),
    "duplicate-sample": (lambda d: d[1].update(sample_id="conv-a"), r"conversations\[1\].*duplicate sample_id"),
    "no-sessions": (
        lambda d: [d[1]["conversation"].pop(k) for k in ("session_1", "session_1_date_time")],
        r"conv-b.*no session",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_input_raises_naming_where(case):
    fn, pattern = BAD_CASES[case]
    with pytest.raises(ValueError, match=pattern):
        L.parse_locomo(_mutate(fn))


def test_load_locomo_missing_file_and_bad_json(tmp_path):
    with pytest.raises(FileNotFoundError, match="data"):
        L.load_locomo(tmp_path / "nope.json")
    p = tmp_path / "bad.json"
    p.write_text("{not json")
    with pytest.raises(ValueError, match="data: .*not valid JSON"):
        L.load_locomo(p)
    p.write_text(json.dumps({"sample_id": "x"}))
    with pytest.raises(ValueError, match="list of conversations"):
        L.load_locomo(p)


DATE_CASES = [
    ("1:56 pm on 8 May, 2023", dt.datetime(2023, 5, 8, 13, 56)),
    ("12:00 am on 1 January, 2022", dt.datetime(2022, 1, 1, 0, 0)),
    ("12:30 pm on 31 December, 2023", dt.datetime(2023, 12, 31, 12, 30)),
    ("9:05 AM on 29 February, 2024", dt.datetime(2024, 2, 29, 9, 5)),
    ("10:04 am on  19 June,  2023", dt.datetime(2023, 6, 19, 10, 4)),
]


@pytest.mark.parametrize("text,expected", DATE_CASES, ids=[c[0] for c in DATE_CASES])
def test_parse_session_date_table(text, expected):
    assert L.parse_session_date(text) == expected


@pytest.mark.parametrize(
    "text", ["", "8 May 2023", "25:00 pm on 8 May, 2023", "1:56 pm on 30 February, 2023", None, 20230508]
)
def test_parse_session_date_rejects(text):
    with pytest.raises(ValueError, match="where-field"):
        L.parse_session_date(text, "where-field")


@given(st.datetimes(min_value=dt.datetime(1990, 1, 1), max_value=dt.datetime(2100, 12, 31)))
def test_parse_session_date_round_trip(t):
    t = t.replace(second=0, microsecond=0)
    h12 = t.hour % 12 or 12
    text = f"{h12}:{t.minute:02d} {'am' if t.hour < 12 else 'pm'} on {t.day} {MONTHS[t.month - 1]}, {t.year}"
    assert L.parse_session_date(text) == t


# --------------------------------------------------------------------------- metrics


RECALL_CASES = [
    # ranked, evidence, k, recall, all
    (["a", "x", "b"], ["a", "b", "c"], 1, 1 / 3, False),
    (["a", "x", "b"], ["a", "b", "c"], 2, 1 / 3, False),
    (["a", "x", "b"], ["a", "b", "c"], 3, 2 / 3, False),
    (["a", "x", "b", "c"], ["a", "b", "c"], 4, 1.0, True),
    (["x", "y"], ["a"], 20, 0.0, False),
    (["b", "a"], ["a", "b"], 2, 1.0, True),
    (["b", "a"], ["a", "a", "b"], 1, 0.5, False),  # duplicate evidence counts once
    ([], ["a"], 10, 0.0, False),
]


@pytest.mark.parametrize("ranked,evidence,k,recall,all_", RECALL_CASES)
def test_recall_and_all_evidence_by_hand(ranked, evidence, k, recall, all_):
    assert L.evidence_recall(ranked, evidence, k) == pytest.approx(recall)
    assert L.all_evidence(ranked, evidence, k) is all_


@pytest.mark.parametrize(
    "evidence,k,pattern",
    [([], 5, "evidence: empty"), ("D1:1", 5, "evidence: .*single string"), (["a"], 0, "k: "), (["a"], True, "k: ")],
)
def test_metric_rejects(evidence, k, pattern):
    with pytest.raises(ValueError, match=pattern):
        L.evidence_recall(["a"], evidence, k)


ids = st.sampled_from([f"D{i}:{j}" for i in range(1, 4) for j in range(1, 6)])


@given(st.lists(ids, unique=True, max_size=15), st.lists(ids, min_size=1, max_size=6))
def test_recall_properties(ranked, evidence):
    ev = set(evidence)
    rs = [L.evidence_recall(ranked, evidence, k) for k in L.KS]
    assert all(0.0 <= r <= 1.0 for r in rs)
    assert rs == sorted(rs)  # monotone in k
    for k, r in zip(L.KS, rs):
        assert L.all_evidence(ranked, evidence, k) == (r == 1.0)
        # exact count: number of evidence ids among the first k
        assert r * len(ev) == pytest.approx(sum(1 for x in ranked[:k] if x in ev))
        # reordering inside the top k changes nothing
        assert L.evidence_recall(list(reversed(ranked[:k])) + ranked[k:], evidence, k) == pytest.approx(r)
    assert rs[-1] == pytest.approx(len(ev & set(ranked)) / len(ev))  # 20 ≥ len(ranked)


def test_question_scores_keys():
    s = L.question_scores(["a", "b"], ["b"])
    assert set(s) == {f"{m}@{k}" for m in ("recall", "all_evidence") for k in (1, 5, 10, 20)}
    assert s["recall@1"] == 0.0 and s["recall@5"] == 1.0 and s["all_evidence@1"] == 0.0


def test_paired_bootstrap_mean_exact_cases():
    a = np.array([0.5, 1.0, 0.0, 0.25])
    same = L.paired_bootstrap_mean(a, a, n_boot=200)
    assert same["diff"] == 0.0 and same["ci_low"] == 0.0 and same["ci_high"] == 0.0
    shifted = L.paired_bootstrap_mean(a, a - 0.25, n_boot=200)  # constant paired difference
    assert (
        shifted["diff"] == pytest.approx(0.25)
        and shifted["ci_low"] == pytest.approx(0.25)
        and shifted["ci_high"] == pytest.approx(0.25)
    )
    assert shifted["mean_a"] == pytest.approx(0.4375) and shifted["n"] == 4


@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=30), st.integers(0, 3))
def test_paired_bootstrap_mean_properties(pairs, seed):
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    r = L.paired_bootstrap_mean(a, b, n_boot=300, seed=seed)
    assert r["ci_low"] <= r["ci_high"]
    assert min(a - b) - 1e-12 <= r["ci_low"] and r["ci_high"] <= max(a - b) + 1e-12
    flipped = L.paired_bootstrap_mean(b, a, n_boot=300, seed=seed)
    assert flipped["diff"] == pytest.approx(-r["diff"])
    assert flipped["ci_low"] == pytest.approx(-r["ci_high"]) and flipped["ci_high"] == pytest.approx(-r["ci_low"])
    dominated = L.paired_bootstrap_mean(np.maximum(a, b), b, n_boot=300, seed=seed)
    assert dominated["ci_low"] >= 0.0


@pytest.mark.parametrize(
    "a,b,pattern",
    [
        ([1.0], [1.0, 0.0], "equal lengths"),
        ([], [], "empty"),
        ([0.5, float("nan")], [0.5, 0.5], r"a\[1\]"),
        ([[1.0]], [[1.0]], "1-d"),
    ],
)
def test_paired_bootstrap_mean_rejects(a, b, pattern):
    with pytest.raises(ValueError, match=pattern):
        L.paired_bootstrap_mean(a, b)


def _rec(system, qa_index, category, ranked, evidence, sample="s"):
    return {
        "system": system,
        "sample_id": sample,
        "qa_index": qa_index,
        "category": category,
        "scores": L.question_scores(ranked, evidence),
    }


def test_summarize_by_hand():
    recs = [
        _rec("fr-full", 0, "1", ["a", "b"], ["a", "b"]),
        _rec("fr-full", 1, "4", ["q", "a"], ["a"]),
        _rec("fr-full", 2, "5", ["z"], ["a"]),
        _rec("bm25", 0, "1", ["a", "x"], ["a", "b"]),
        _rec("bm25", 1, "4", ["a"], ["a"]),
        _rec("bm25", 2, "5", ["a"], ["a"]),
    ]
    out = L.summarize_locomo(recs, ["fr-full", "bm25"], n_boot=200)
    fr, bm = out["systems"]["fr-full"], out["systems"]["bm25"]
    assert fr["recall@k"]["1"] == {"1": 0.5, "2": None, "3": None, "4": 0.0, "5": 0.0}
    assert fr["recall@k"]["5"]["1"] == 1.0 and fr["recall@k"]["5"]["4"] == 1.0
    assert fr["all_evidence@10"] == {"1": 1.0, "2": None, "3": None, "4": 1.0, "5": 0.0}
    assert bm["recall@k"]["10"] == {"1": 0.5, "2": None, "3": None, "4": 1.0, "5": 1.0}
    assert fr["n"] == {"1": 1, "2": 0, "3": 0, "4": 1, "5": 1}
    assert fr["pooled_1_4"]["recall@10"] == 1.0 and bm["pooled_1_4"]["recall@10"] == 0.75 and fr["pooled_1_4"]["n"] == 2
    comp = out["comparisons"]["bm25"]["recall@10"]
    assert comp["diff"] == pytest.approx(0.25) and comp["n"] == 2  # category 5 left out
    assert out["comparisons"]["bm25"]["all_evidence@10"]["diff"] == pytest.approx(0.5)


def test_summarize_rejects_unknown_and_duplicate():
    with pytest.raises(ValueError, match=r"records\[0\].*'nope'"):
        L.summarize_locomo([_rec("nope", 0, "1", ["a"], ["a"])], ["fr-full"])
    with pytest.raises(ValueError, match=r"records\[1\].*duplicate"):
        L.summarize_locomo([_rec("fr-full", 0, "1", ["a"], ["a"])] * 2, ["fr-full"])


# --------------------------------------------------------------------------- running and CLI


SYSTEMS4 = "fr-full,flat-cosine,bm25,uniform-decay"


def _check_contract(result, systems):
    assert list(result["systems"]) == systems
    for name in systems:
        s = result["systems"][name]
        assert set(s["recall@k"]) == {"1", "5", "10", "20"}
        for k in ("1", "5", "10", "20"):
            assert set(s["recall@k"][k]) == {"1", "2", "3", "4", "5"}
        assert set(s["all_evidence@10"]) == {"1", "2", "3", "4", "5"}


def test_cli_end_to_end_on_tiny(tmp_path, capsys):
    from frcore.cli import main

    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(tiny()))
    out, md = tmp_path / "r.json", tmp_path / "r.md"
    rc = main(
        [
            "bench",
            "locomo",
            "--data",
            str(data),
            "--systems",
            SYSTEMS4,
            "--embedder",
            "hash",
            "--json",
            str(out),
            "--markdown",
            str(md),
            "--n-boot",
            "200",
            "--questions",
        ]
    )
    assert rc == 0
    res = json.loads(out.read_text())
    _check_contract(res, SYSTEMS4.split(","))
    # 8 questions, 2 left without evidence (indices 3 and 5 of conv-a)
    assert res["n_no_evidence"] == 2 and res["skipped_evidence"]["count"] == 4
    assert res["counts"]["qa"] == 8
    n = res["systems"]["fr-full"]["n"]
    assert n == {"1": 1, "2": 2, "3": 0, "4": 2, "5": 1}
    assert res["systems"]["bm25"]["recall@k"]["1"]["3"] is None
    for s in res["systems"].values():
        for k in ("1", "5", "10", "20"):
            for c in ("1", "2", "4", "5"):
                assert 0.0 <= s["recall@k"][k][c] <= 1.0
    # with at most 6 turns per bank, cosine-ranked systems return every turn in their top 20
    assert res["systems"]["flat-cosine"]["recall@k"]["20"] == {"1": 1.0, "2": 1.0, "3": None, "4": 1.0, "5": 1.0}
    assert res["systems"]["fr-full"]["recall@k"]["20"] == {"1": 1.0, "2": 1.0, "3": None, "4": 1.0, "5": 1.0}
    qs = [q for q in res["questions"] if q["system"] == "bm25"]
    assert len(qs) == 6 and all(
        len(q["ranked"]) <= 20 and all(re.fullmatch(r"D\d+:\d+", r) for r in q["ranked"]) for q in qs
    )
    # conv-b's garden question shares 'plant', 'garden' with D1:1 only: BM25 ranks it first
    garden = next(q for q in qs if q["sample_id"] == "conv-b" and q["qa_index"] == 0)
    assert garden["ranked"][0] == "D1:1"
    assert set(res["comparisons"]) == {"flat-cosine", "bm25", "uniform-decay"}
    printed = capsys.readouterr().out
    assert "| fr-full | recall@10 |" in printed and md.read_text().strip() in printed


def test_turn_records_shape():
    from frcore.bank.pipeline._query import Router
    from frcore.bank.search._embed import get_embedder

    emb = get_embedder("hash")
    conv = L.parse_locomo(tiny()).conversations[0]
    recs = L.turn_records(conv, Router(emb), emb)
    assert [r["id"] for r in recs] == [f"conv-a:{d}" for d in ("D1:1", "D1:2", "D1:3", "D2:1", "D2:2", "D2:3")]
    assert recs[2]["text"] == "Ann: Look at this. [shares a photo of a dog on a beach]"
    assert recs[3]["said_at"] == "2023-06-19T10:04:00" and recs[3]["session"] == 2 and recs[3]["kind"] == "turn"
    for r in recs:
        assert "slot" not in r and abs(sum(r["categories"].values()) - 1.0) < 1e-3


@needs_data
def test_cli_on_a_real_subset(tmp_path):
    """The first two sessions of the first real conversation and the questions they answer."""
    from frcore.cli import main

    conv = copy.deepcopy(json.loads(REAL.read_text())[0])
    c = conv["conversation"]
    for key in [k for k in c if re.fullmatch(r"session_\d+(_date_time)?", k) and int(k.split("_")[1]) > 2]:
        del c[key]
    kept = {t["dia_id"] for k in ("session_1", "session_2") for t in c[k]}
    conv["qa"] = [q for q in conv["qa"] if q.get("evidence") and set(q["evidence"]) <= kept]
    assert len(conv["qa"]) >= 5
    data = tmp_path / "subset.json"
    data.write_text(json.dumps([conv]))
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "bench",
                "locomo",
                "--data",
                str(data),
                "--systems",
                "fr-full,bm25",
                "--embedder",
                "hash",
                "--json",
                str(out),
                "--n-boot",
                "200",
            ]
        )
        == 0
    )
    res = json.loads(out.read_text())
    _check_contract(res, ["fr-full", "bm25"])
    assert res["counts"]["sessions"] == 2 and res["counts"]["qa"] == len(conv["qa"])
    assert res["skipped_evidence"]["count"] == 0
