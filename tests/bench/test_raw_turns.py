"""LifecycleBench raw-turn mode: every user turn and no fact in the bank; only questions whose
support names a turn are scored, the others are reported (hash embedder, small suites)."""

from __future__ import annotations

import json

import pytest
from suite_builders import suite_fact

from frcore.bank import Bank, Router
from frcore.bench import bank_records, raw_turn_corpus, raw_turn_questions, run_benchmark
from frcore.bench._generator import generate_suites
from frcore.bench._runner import run_persona
from frcore.bench._suite import parse_suite
from frcore.bench._systems import resolve_systems
from frcore.cli import main as fr_main

SYSTEMS = "fr-derived,fr-full,flat-cosine"


def _question(qid: str, av: str, support: list[str], wrong: list[str]) -> dict:
    return {
        "id": qid,
        "text": f"What about {qid}?",
        "asked_at": "2025-03-01",
        "attack_vector": av,
        "relevant_categories": [],
        "correct_answer": "-",
        "wrong_answer_indicators": [],
        "intent": "current",
        "support": support,
        "wrong": wrong,
        "notes": "",
        "conflict": False,
    }


def _fact(fid: str, text: str, session: int, said_at: str, **kw) -> dict:
    return suite_fact(fid, text, "PREFERENCES_HABITS", session, said_at, **{"slot": "drink", **kw})


def _turn(tid: str, session: int, said_at: str, role: str, text: str) -> dict:
    return {"id": tid, "session": session, "said_at": said_at, "role": role, "text": text}


#: critical session 1 (a fact and its turns), filler session 2, critical session 3 (an update)
HAND = {
    "persona": "hand",
    "name": "Hana",
    "asked_at": "2025-03-01",
    "sessions": [
        {"id": 1, "date": "2025-01-01", "type": "critical", "topic": "drinks"},
        {"id": 2, "date": "2025-01-15", "type": "filler", "topic": "weather"},
        {"id": 3, "date": "2025-02-01", "type": "critical", "topic": "drinks"},
    ],
    "facts": [
        _fact("hand.f1", "Drinks coffee every morning", 1, "2025-01-01", role="superseded"),
        _fact("hand.f2", "Switched to green tea", 3, "2025-02-01", role="superseding", links={"supersedes": "hand.f1"}),
    ],
    "turns": [
        _turn("hand.s1.t1", 1, "2025-01-01", "user", "I drink coffee every single morning."),
        _turn("hand.s1.t2", 1, "2025-01-01", "assistant", "Coffee is a fine start to the day."),
        _turn("hand.s2.t1", 2, "2025-01-15", "user", "It rained all week here, I still had my coffee."),
        _turn("hand.s2.t2", 2, "2025-01-15", "assistant", "Rainy weeks call for warm drinks."),
        _turn("hand.s3.t1", 3, "2025-02-01", "user", "I switched from coffee to green tea now."),
        _turn("hand.s3.t2", 3, "2025-02-01", "assistant", "Green tea it is."),
    ],
    "questions": [
        # support: a fact and a critical-session user turn; wrong: a fact and a filler user turn
        _question("hand_q1", "AV1_superseded_preference", ["hand.f2", "hand.s3.t1"], ["hand.f1", "hand.s2.t1"]),
        # support: facts only
        _question("hand_q2", "AV1_superseded_preference", ["hand.f2"], ["hand.f1"]),
        # support: an assistant turn only (no corpus holds assistant turns)
        _question("hand_q3", "AV3_stable_identity", ["hand.s3.t2"], []),
        # support: a filler user turn only
        _question("hand_q4", "AV3_stable_identity", ["hand.s2.t1"], []),
    ],
}

USER_TURNS = ["hand.s1.t1", "hand.s2.t1", "hand.s3.t1"]


@pytest.fixture(scope="module")
def hand():
    return parse_suite(HAND, "hand")


@pytest.fixture(scope="module")
def generated():
    return [parse_suite(obj, f"gen#{i}") for i, obj in enumerate(generate_suites(2, seed=5))]


@pytest.fixture(scope="module")
def emb(hash_embedder):
    return hash_embedder


def test_raw_corpus_is_every_user_turn_and_no_fact(hand, emb):
    """Every user turn of every session (critical ones included) in file order; no fact, no assistant turn."""
    items = raw_turn_corpus(hand)
    assert [it.id for it in items] == USER_TURNS
    recs = bank_records(hand, Router(emb), emb, raw_turns=True)
    assert [r["id"] for r in recs] == USER_TURNS
    for r in recs:
        assert r["kind"] == "turn" and r["speaker"] == "user"
        assert "slot" not in r and "links" not in r and "event_time" not in r
        assert set(r["categories"]) and abs(sum(r["categories"].values()) - 1.0) < 1e-3
    # the normal corpus: both facts, then only the filler session's user turn
    assert [r["id"] for r in bank_records(hand, Router(emb), emb)] == ["hand.f1", "hand.f2", "hand.s2.t1"]


def test_scorable_questions_keep_only_their_user_turns(hand):
    scorable, not_scorable = raw_turn_questions(hand)
    assert [(q.id, q.support, q.wrong) for q in scorable] == [
        ("hand_q1", ("hand.s3.t1",), ("hand.s2.t1",)),
        ("hand_q4", ("hand.s2.t1",), ()),
    ]
    assert not_scorable == [
        {"id": "hand_q2", "reason": "support names no turn"},
        {"id": "hand_q3", "reason": "support names only assistant turns"},
    ]


@pytest.mark.parametrize("suite_name", ["hand", "generated"])
def test_raw_mode_stores_no_fact(suite_name, hand, generated, emb, monkeypatch):
    """Every bank run_persona opens (one per derivation setting) stores exactly the suite's user turns."""
    suite = hand if suite_name == "hand" else generated[0]
    exported: list[dict] = []
    close = Bank.close

    def spy(self):
        exported.append(self.export())
        close(self)

    monkeypatch.setattr(Bank, "close", spy)
    run_persona(suite, resolve_systems(SYSTEMS), emb, keep_terms=False, raw_turns=True)
    assert len(exported) == 2  # fr-derived's bank and the one fr-full and flat-cosine share
    user_turns = {t.id for t in suite.turns if t.role == "user"}
    for ex in exported:
        edges = ex["edges"]
        assert {e["id"] for e in edges} == user_turns and len(edges) == len(user_turns)
        assert all(e["kind"] == "turn" and e["speaker"] == "user" and e["slot"] is None for e in edges)
    # the bank without derivation keeps the turns bare: no link, no event time
    assert any(all(not e["links"] and e["event_time"] is None for e in ex["edges"]) for ex in exported)


def test_hand_suite_scores_exactly_the_turn_supported_questions(hand, emb):
    res = run_benchmark([hand], SYSTEMS, emb, progress=False, keep_terms=False, raw_turns=True)
    json.dumps(res, default=str)
    assert res["raw_turns"] is True
    assert res["n_scorable"] == res["n_questions"] == 2 and res["n_suite_questions"] == 4
    assert res["not_scorable"] == {
        "hand": [
            {"id": "hand_q2", "reason": "support names no turn"},
            {"id": "hand_q3", "reason": "support names only assistant turns"},
        ]
    }
    assert sorted({r["id"] for r in res["questions"]}) == ["hand_q1", "hand_q4"]
    for name in SYSTEMS.split(","):
        assert res["systems"][name]["overall"]["n"] == 2
        assert set(res["systems"][name]["per_av"]) == {"AV1", "AV3"}
    # every ranked id is a user turn: no fact can surface
    assert {x for r in res["questions"] for x in r["ranked"]} <= set(USER_TURNS)


def test_generated_suites_score_the_questions_whose_support_names_a_user_turn(generated, emb):
    objs = generate_suites(2, seed=5)
    want, unscored = set(), {}
    for obj in objs:
        users = {t["id"] for t in obj["turns"] if t["role"] == "user"}
        for q in obj["questions"]:
            if any(x in users for x in q["support"]):
                want.add((obj["persona"], q["id"]))
            else:
                unscored.setdefault(obj["persona"], []).append(q["id"])
    n_all = sum(len(obj["questions"]) for obj in objs)
    assert 0 < len(want) < n_all  # the generated suites have both kinds
    res = run_benchmark(generated, SYSTEMS, emb, progress=False, keep_terms=False, raw_turns=True)
    assert {(r["persona"], r["id"]) for r in res["questions"]} == want
    assert len(res["questions"]) == 3 * len(want)
    assert res["n_scorable"] == len(want) and res["n_suite_questions"] == n_all
    assert {p: [x["id"] for x in v] for p, v in res["not_scorable"].items() if v} == unscored


def test_normal_mode_reports_no_raw_fields_and_scores_every_question(hand, emb):
    res = run_benchmark([hand], "flat-cosine", emb, progress=False, keep_terms=False)
    assert not {"raw_turns", "n_scorable", "n_suite_questions", "not_scorable"} & set(res)
    assert res["n_questions"] == 4


def test_a_suite_with_no_turn_supported_question_is_an_error(emb):
    d = json.loads(json.dumps(HAND))
    d["questions"] = [q for q in d["questions"] if q["id"] == "hand_q2"]
    with pytest.raises(ValueError, match="raw-turn mode: no question"):
        run_benchmark([parse_suite(d, "facts-only")], "flat-cosine", emb, progress=False, raw_turns=True)


def test_cli_raw_turns(tmp_path, capsys):
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(HAND))
    out = tmp_path / "r.json"
    md = tmp_path / "r.md"
    argv = ["bench", "run", "--suite", str(path), "--embedder", "hash", "--systems", SYSTEMS, "--raw-turns"]
    assert fr_main([*argv, "--json", str(out), "--markdown", str(md)]) == 0
    printed = capsys.readouterr().out
    assert "raw-turn mode: 2 of 4 questions scorable" in printed
    assert md.read_text().startswith("raw-turn mode: 2 of 4 questions scorable\n")
    res = json.loads(out.read_text())
    assert res["raw_turns"] is True and res["n_scorable"] == 2
    assert fr_main(["bench", "report", str(out)]) == 0
    assert "raw-turn mode: 2 of 4 questions scorable" in capsys.readouterr().out
