"""Derivation of lifecycle metadata from raw turns (docs/derive.md): each rule on hand-written
conversations whose derived links are known, and the properties every derivation keeps."""

from __future__ import annotations

import datetime as dt
import json
import random

import pytest
from hypothesis import given, settings, strategies as st

from frcore.bank import Bank, DeriveConfig
from frcore.bank.derive import (
    CUE_CONFIDENCE,
    TENTATIVE_CONFIDENCE,
    VALUE_CONFIDENCE,
    Turn,
    TurnIndex,
    claims,
    derive,
    event_time,
    statements,
)


def _t(i: str, text: str, day: str) -> Turn:
    return Turn(i, text, dt.datetime.fromisoformat(day))


def _derive(turns, cfg=None):
    return derive(TurnIndex(), turns, cfg)


# ----------------------------------------------------------------------------- statements


def test_statements_are_first_person_and_not_questions_or_requests():
    text = (
        "Hi! Can you suggest a hotel in Miami? I've been running three miles every morning. "
        "What do you think about tea? Thanks, that sounds great. The weather is lovely today.\n"
        "By the way, could you help me plan a trip"
    )
    assert statements(text) == ["I've been running three miles every morning."]


def test_a_claim_needs_two_key_words_and_values_are_masked():
    (c,) = [
        c for c in claims("I've tried three different ones recently, and each has its own flavor") if "tried" in c.keys
    ]
    assert c.keys == {"tried", "different"}
    assert c.values == {"3"}
    (d,) = claims("I have a cocktail-making class on Fridays")
    assert d.values == {"friday"} and d.keys == {"cocktail-making", "class"}


# ----------------------------------------------------------------------------- updates


def test_a_changed_value_supersedes_the_earlier_statement():
    out = _derive(
        [
            _t("a", "By the way, have you tried Korean food? I've tried three different ones recently.", "2023-08-11"),
            _t("b", "I've tried four different ones so far, and I love them.", "2023-09-30"),
        ]
    )
    assert dict(out["b"].links) == {"supersedes": ("a",)}
    assert out["b"].confidence == VALUE_CONFIDENCE
    assert out["a"].empty
    ev = out["b"].evidence[0]
    assert ev.rule == "updates" and ev.target == "a" and ev.detail["values"] == ["4"]


def test_an_update_cue_gives_the_higher_confidence_and_a_tentative_clause_the_soft_one():
    out = _derive(
        [
            _t("a", "I need 125 stars to reach the gold level.", "2023-07-01"),
            _t("b", "Actually, I need 120 stars to reach the gold level.", "2023-07-30"),
            _t("c", "I have a yoga class on Thursday.", "2023-07-01"),
            _t("d", "I might have a yoga class on Friday instead.", "2023-07-30"),
        ]
    )
    assert out["b"].links == {"supersedes": ("a",)} and out["b"].confidence == CUE_CONFIDENCE
    assert out["d"].links == {"supersedes": ("c",)} and out["d"].confidence == TENTATIVE_CONFIDENCE


def test_a_restatement_with_the_same_value_and_no_cue_links_nothing():
    out = _derive(
        [
            _t("a", "I run three miles every morning before work.", "2023-01-01"),
            _t("b", "I run three miles every morning before work, rain or shine.", "2023-02-01"),
        ]
    )
    assert out["b"].empty


def test_different_attributes_are_not_linked():
    out = _derive(
        [
            _t("a", "My sister lives in Porto with her two cats.", "2023-01-01"),
            _t("b", "I bought 4 new tomato plants for the garden.", "2023-02-01"),
        ]
    )
    assert out["b"].empty


def test_updates_rule_switched_off_links_nothing():
    turns = [
        _t("a", "I've tried three different ones recently.", "2023-08-11"),
        _t("b", "I've tried four different ones so far.", "2023-09-30"),
    ]
    assert _derive(turns)["b"].links == {"supersedes": ("a",)}  # the update rule's link; no soft one besides
    assert "supersedes" not in _derive(turns, DeriveConfig(updates=False))["b"].links
    assert _derive(turns, DeriveConfig(updates=False, soft_updates=False))["b"].empty


# ----------------------------------------------------------------------------- retractions


def test_a_retraction_takes_back_the_statement_it_names():
    out = _derive(
        [
            _t("a", "I have a dentist appointment on Friday at noon.", "2023-02-01"),
            _t("b", "I adopted a puppy named Rex last week.", "2023-02-02"),
            _t("c", "Forget what I said about the dentist.", "2023-02-03"),
            _t("d", "Scratch that.", "2023-02-04"),
        ]
    )
    assert out["c"].links == {"retracts": ("a",)}
    # no object: the latest earlier turn holding a statement (c holds none: it is a retraction)
    assert out["d"].links == {"retracts": ("b",)}
    assert _derive(
        [_t("a", "I adopted a puppy named Rex.", "2023-02-01"), _t("c", "Scratch that.", "2023-02-03")],
        DeriveConfig(retractions=False),
    )["c"].empty


def test_tentative_turn_gets_the_low_confidence():
    out = _derive([_t("a", "I'm thinking about learning the cello next year.", "2023-01-01")])
    assert out["a"].confidence == TENTATIVE_CONFIDENCE
    assert _derive([_t("a", "I'm learning the cello.", "2023-01-01")])["a"].confidence == 1.0
    assert (
        _derive([_t("a", "I'm thinking about learning the cello.", "2023-01-01")], DeriveConfig(tentative=False))[
            "a"
        ].confidence
        == 1.0
    )


# ----------------------------------------------------------------------------- event times

SAID = dt.datetime(2023, 2, 1, 9, 30)  # a Wednesday


@pytest.mark.parametrize(
    "sentence, day",
    [
        ("I have a flight tomorrow.", dt.date(2023, 2, 2)),
        ("I'm cooking for friends tonight.", dt.date(2023, 2, 1)),
        ("I have a dentist appointment next Friday.", dt.date(2023, 2, 3)),
        ("My sister visits next week.", dt.date(2023, 2, 6)),
        ("I'm moving in two weeks.", dt.date(2023, 2, 15)),
        ("I'm starting the job in 3 months.", dt.date(2023, 5, 1)),
        ("My flight to Lisbon is booked for March 3.", dt.date(2023, 3, 3)),
        ("I will meet them on the 10th of January.", dt.date(2024, 1, 10)),
        ("The deadline for my thesis is 2023-06-30.", dt.date(2023, 6, 30)),
        ("I have my meeting on Monday.", dt.date(2023, 2, 6)),
    ],
)
def test_time_expressions_ahead_resolve_against_said_at(sentence, day):
    got = event_time(sentence, SAID)
    assert got is not None and got[0] == dt.datetime(day.year, day.month, day.day, 12)


@pytest.mark.parametrize(
    "sentence",
    [
        "I went to the dentist on March 3.",  # a bare date without a future marker: when it happened
        "I take a pottery class on Fridays.",  # a habit
        "I started my job in 2019.",
        "I ran 5 miles yesterday.",
        "My trip is booked for 2025-06-30.",  # more than 366 days ahead
    ],
)
def test_expressions_that_are_not_ahead_give_no_event_time(sentence):
    assert event_time(sentence, SAID) is None


def test_event_time_rule_sets_the_turn_event_time():
    out = _derive([_t("a", "I have a dentist appointment tomorrow.", "2023-02-01")])
    assert out["a"].event_time == dt.datetime(2023, 2, 2, 12)
    assert (
        _derive([_t("a", "I have a dentist appointment tomorrow.", "2023-02-01")], DeriveConfig(event_times=False))[
            "a"
        ].event_time
        is None
    )


# ----------------------------------------------------------------------------- properties

_WORDS = ["run", "miles", "class", "yoga", "stars", "gold", "level", "dentist", "tried", "restaurants", "city"]
_VALUES = ["three", "four", "5", "Friday", "Thursday", "120", "125"]
_CUES = ["", "now ", "actually ", "I might "]


@st.composite
def conversations(draw):
    n = draw(st.integers(2, 8))
    turns = []
    for i in range(n):
        words = draw(st.lists(st.sampled_from(_WORDS), min_size=2, max_size=4, unique=True))
        value = draw(st.sampled_from(_VALUES))
        cue = draw(st.sampled_from(_CUES))
        kind = draw(st.sampled_from(["claim", "claim", "retract", "time"]))
        if kind == "claim":
            text = f"{cue}I have {value} {' '.join(words)}."
        elif kind == "retract":
            text = f"Forget what I said about the {words[0]}."
        else:
            text = f"I have a {words[0]} appointment tomorrow."
        day = draw(st.integers(1, 4))  # few days: many turns share a timestamp
        turns.append(_t(f"t{i}", text, f"2023-03-0{day}"))
    return turns


@settings(max_examples=60, deadline=None)
@given(conversations(), st.randoms(use_true_random=False))
def test_derivation_is_deterministic_order_independent_and_only_links_back(turns, rnd):
    a = _derive(turns)
    shuffled = list(turns)
    rnd.shuffle(shuffled)
    b = _derive(shuffled)
    assert a == b  # the order of a batch (and within one timestamp) changes nothing
    said = {t.id: t.said_at for t in turns}
    for d in a.values():
        for targets in d.links.values():
            for t in targets:
                assert said[t] < said[d.id]  # never a link to a turn said at the same time or later


def test_derivation_in_one_batch_equals_derivation_turn_by_turn():
    turns = [
        _t("a", "I've tried three different ones recently.", "2023-08-11"),
        _t("b", "I've tried four different ones so far.", "2023-09-30"),
        _t("c", "Forget what I said about the different ones.", "2023-10-01"),
    ]
    index = TurnIndex()
    one_by_one = {}
    for t in turns:
        one_by_one.update(derive(index, [t]))
    assert one_by_one == _derive(turns)


# ----------------------------------------------------------------------------- in the bank


def _turn(i, text, day, **kw):
    return {"id": i, "text": text, "said_at": day, "kind": "turn", "speaker": "user", **kw}


def test_a_bank_with_derive_gives_raw_turns_lifecycle_states():
    bank = Bank.open(":memory:", embedder="hash", derive=True)
    bank.add([_turn("a", "I've been using my Fitbit Charge 3 for 6 months now.", "2023-06-18")])
    bank.add(
        [
            _turn("x", "I have a dentist appointment tomorrow at 3pm.", "2023-06-20"),
            _turn("b", "I've been using my Fitbit Charge 3 for 9 months now.", "2023-09-02"),
            _turn("c", "Forget what I said about the dentist.", "2023-09-03"),
        ]
    )
    assert bank.states(at="2023-09-05") == {"a": "superseded", "x": "retracted", "b": "active", "c": "active"}
    bank.close()


def test_derivation_never_touches_a_fact_or_a_turn_with_its_own_metadata():
    facts = [
        {"id": "f", "text": "I run 3 miles a day.", "categories": {"HEALTH_WELLBEING": 1.0}, "said_at": "2023-01-01"},
        _turn("g", "I run 4 miles a day.", "2023-02-01", slot="running"),
        _turn("h", "I run 5 miles a day now, tomorrow too.", "2023-03-01", confidence=0.95),
        {
            "id": "s",
            "text": "I run 6 miles a day now.",
            "said_at": "2023-04-01",
            "kind": "turn",
            "speaker": "assistant",
        },
    ]
    plain = Bank.open(":memory:", embedder="hash")
    plain.add(facts)
    derived = Bank.open(":memory:", embedder="hash", derive=True)
    derived.add(facts)
    assert [e.to_json() for e in derived.store.edges()] == [e.to_json() for e in plain.store.edges()]


def test_an_erased_turn_leaves_no_derived_link(tmp_path):
    bank = Bank.open(str(tmp_path / "b.db"), embedder="hash", derive=True)
    bank.add([_turn("a", "I've tried three different ones recently.", "2023-08-11")])
    bank.add([_turn("b", "I've tried four different ones so far.", "2023-09-30")])
    assert bank.store.edges()[1].links == {"supersedes": ("a",)}
    bank.erase("a")
    assert [e.links for e in bank.store.edges()] == [{}]
    bank.add([_turn("c", "I've tried five different ones so far.", "2023-10-30")])
    assert {e.id: e.links for e in bank.store.edges()} == {"b": {}, "c": {"supersedes": ("b",)}}
    bank.close()


def test_derive_off_stores_turns_as_given():
    bank = Bank.open(":memory:", embedder="hash")
    bank.add(
        [
            _turn("a", "I've tried three different ones.", "2023-08-11"),
            _turn("b", "I've tried four different ones.", "2023-09-30"),
        ]
    )
    assert all(not e.links for e in bank.store.edges())


def test_shuffled_batches_store_the_same_derived_metadata():
    turns = [
        _turn(f"t{i}", text, day)
        for i, (text, day) in enumerate(
            [
                ("I need 125 stars to reach the gold level.", "2023-07-01"),
                ("Actually, I need 120 stars to reach the gold level.", "2023-07-30"),
                ("I have a dentist appointment tomorrow.", "2023-07-30"),
                ("Never mind the dentist.", "2023-08-02"),
            ]
        )
    ]
    want = None
    for seed in range(3):
        batch = list(turns)
        random.Random(seed).shuffle(batch)
        bank = Bank.open(":memory:", embedder="hash", derive=True)
        bank.add(batch)
        got = {e.id: (e.links, e.confidence, e.event_time) for e in bank.store.edges()}
        want = want or got
        assert got == want
    assert want["t1"][0] == {"supersedes": ("t0",)} and want["t3"][0] == {"retracts": ("t2",)}


def test_explanations_read_the_stored_turns_once_per_store_version(monkeypatch):
    """The index of the stored turns an explanation reads is built once per store version (a
    bank read again and again builds it once), and again after any write: an earlier turn
    stored after ``b`` makes ``b``'s stored links no longer what derivation gives now."""
    bank = Bank.open(":memory:", embedder="hash", derive=True)
    bank.add([_turn("b", "I've tried four different ones so far.", "2023-09-30")])
    builds = []
    index = bank._deriver.index
    monkeypatch.setattr(bank._deriver, "index", lambda stored: builds.append(1) or index(stored))
    ask = dict(at="2023-10-01", intent="historical")
    for _ in range(3):
        res = bank.explain("How many different ones have I tried?", **ask)
        assert {r["id"] for r in res.results} == {"b"} and "derivation" not in res.results[0]
    assert len(builds) == 1
    bank.add([_turn("a", "I've tried three different ones recently.", "2023-08-11")])  # earlier, stored later
    builds.clear()
    by_id = {r["id"]: r for r in bank.explain("How many different ones have I tried?", **ask).results}
    assert builds == [1]
    why = by_id["b"]["derivation"]
    assert why["reproduced"] is False and why["evidence"][0]["target"] == "a"
    bank.close()


def test_a_stored_turn_said_at_the_same_time_is_never_linked():
    index = TurnIndex.build([_t("a", "I've tried three different ones recently.", "2023-08-11")])
    later = derive(index, [_t("b", "I've tried four different ones so far.", "2023-08-11")])
    assert later["b"].empty
    index = TurnIndex.build([_t("a", "I've tried three different ones recently.", "2023-08-11")])
    assert derive(index, [_t("b", "I've tried four different ones so far.", "2023-08-12")])["b"].links


def test_explain_shows_each_derived_link_with_its_rule_and_evidence():
    bank = Bank.open(":memory:", embedder="hash", derive=True)
    bank.add([_turn("a", "I've tried three different ones recently.", "2023-08-11")])
    bank.add([_turn("b", "I've tried four different ones so far.", "2023-09-30")])
    res = bank.explain("How many different ones have I tried?", at="2023-10-01", intent="historical")
    by_id = {r["id"]: r for r in res.results}
    why = by_id["b"]["derivation"]
    assert why["reproduced"] is True
    (ev,) = why["evidence"]
    assert (ev["field"], ev["rule"], ev["target"]) == ("supersedes", "updates", "a")
    assert ev["values"] == ["4"] and ev["earlier_values"] == ["3"]
    assert "derivation" not in by_id["a"]  # nothing was derived for the first statement
    bank.close()


def test_cli_flags_reach_the_bank(tmp_path, capsys):
    from frcore.cli import build_parser, main

    parser, _ = build_parser()
    assert parser.parse_args(["serve", "--bank", "b.db", "--derive"]).derive is True
    facts = tmp_path / "t.jsonl"
    facts.write_text(
        "\n".join(
            json.dumps(_turn(i, text, day))
            for i, text, day in (
                ("a", "I've tried three different ones recently.", "2023-08-11"),
                ("b", "I've tried four different ones so far.", "2023-09-30"),
            )
        )
    )
    db = str(tmp_path / "c.db")
    assert main(["bank", "init", db, "--embedder", "hash"]) == 0
    assert main(["bank", "add", db, str(facts), "--derive"]) == 0
    assert main(["bank", "explain", db, "different ones tried", "--at", "2023-10-01", "--intent", "historical"]) == 0
    out = capsys.readouterr().out
    assert "derived supersedes a (rule updates, confidence 0.8)" in out


def test_order_rule_puts_the_superseding_turn_directly_above_the_turn_it_supersedes():
    from frcore.bank import PipelineConfig

    bank = Bank.open(":memory:", embedder="hash", derive=True)
    bank.add([_turn("a", "I've tried three different Korean restaurants in my city.", "2023-08-11")])
    bank.add([_turn(f"n{i}", f"I watered the {w} plants on the balcony.", "2023-09-01") for i, w in enumerate("abcde")])
    bank.add([_turn("b", "Actually, I've tried four different Korean restaurants so far.", "2023-09-30")])
    q = "How many different Korean restaurants have I tried in my city?"
    # asked long after: activation ≈ 0 for both, and a matches the question better than b
    order = bank.query(q, at="2025-10-01", intent="current", config=PipelineConfig(turn_supersession="order"))
    ids = order.ids
    assert "a" in ids and ids.index("a") == ids.index("b") + 1
    assert "above-superseded" in order.results[ids.index("b")]["stages"]  # it ranked below a before the move
    assert order.results[ids.index("a")]["state"] == "superseded"
    masked = bank.query(q, at="2025-10-01", intent="current", config=PipelineConfig())
    assert "a" not in masked.ids[: masked.ids.index("b") + 1] and masked.ids[0] == "b"
    bank.close()


def test_order_rule_never_admits_a_turn_superseded_by_a_fact():
    from frcore.bank import PipelineConfig

    bank = Bank.open(":memory:", embedder="hash")
    bank.add(
        [
            _turn("a", "I live in Porto.", "2023-01-01"),
            {
                "id": "f",
                "text": "The user lives in Lisbon.",
                "categories": {"IDENTITY_SELF_CONCEPT": 1.0},
                "said_at": "2023-02-01",
                "links": {"supersedes": "a"},
            },
        ]
    )
    res = bank.query(
        "Where do I live?", at="2023-03-01", intent="current", config=PipelineConfig(turn_supersession="order")
    )
    assert "a" not in res.ids
    bank.close()


def test_each_speaker_updates_only_their_own_statements():
    bank = Bank.open(":memory:", embedder="hash", derive=True)
    bank.add(
        [
            _turn("a", "Caroline: I've tried three different ones recently.", "2023-08-11", speaker="Caroline"),
            _turn("b", "Melanie: I've tried four different ones so far.", "2023-09-30", speaker="Melanie"),
            _turn("c", "Caroline: I've tried five different ones so far.", "2023-10-30", speaker="Caroline"),
        ]
    )
    assert {e.id: e.links for e in bank.store.edges()} == {"a": {}, "b": {}, "c": {"supersedes": ("a",)}}
    bank.close()


def test_a_statement_glued_to_a_question_is_still_a_statement():
    text = "By the way, I've been using my Fitbit for 6 months now - do you have any tips on motivation?"
    assert statements(text) == ["By the way, I've been using my Fitbit for 6 months now"]
    assert statements("By the way, have you tried any good Korean restaurants lately?") == []
    out = _derive(
        [
            _t("a", text, "2023-06-18"),
            _t("b", "I just realized I've been using my Fitbit for 9 months now - it's crazy", "2023-09-02"),
        ]
    )
    assert out["b"].links == {"supersedes": ("a",)}


def test_keep_rule_admits_an_expired_raw_turn_except_under_upcoming():
    from frcore.bank import PipelineConfig

    bank = Bank.open(":memory:", embedder="hash", derive=True)
    logistics = {"LOGISTICAL_CONTEXT": 1.0}
    bank.add([_turn("x", "I have a dentist appointment tomorrow at noon.", "2023-02-01", categories=logistics)])
    assert bank.states(at="2023-03-01") == {"x": "expired"}
    q, at = "When is my dentist appointment?", "2023-03-01"
    keep = bank.query(q, at=at, intent="current", config=PipelineConfig(turn_expiry="keep"))
    assert keep.ids == ["x"] and keep.results[0]["state"] == "expired"
    assert bank.query(q, at=at, intent="current", config=PipelineConfig()).ids == []
    assert bank.query(q, at=at, intent="upcoming", config=PipelineConfig(turn_expiry="keep")).ids == []
    bank.close()


def test_fr_serve_derive_shows_derived_states_and_evidence_to_an_agent():
    """fr serve --derive: remembered raw turns take lifecycle states an agent sees in recall, and
    explain gives the rule and evidence of each derived link."""
    from frcore.bank.serve import Memory

    memory = Memory(Bank.open(":memory:", embedder="hash", derive=True), ":memory:")
    memory.remember(turns=[{"text": "I've tried three different Korean restaurants.", "at": "2023-08-11"}])
    memory.remember(turns=[{"text": "I've tried four different Korean restaurants so far.", "at": "2023-09-30"}])
    memory.remember(turns=[{"text": "I have a dentist appointment tomorrow.", "at": "2023-09-30"}])
    memory.remember(turns=[{"text": "Forget what I said about the dentist.", "at": "2023-10-01"}])
    got = memory.recall("Korean restaurants dentist", at="2023-10-02", intent="historical", k=10)
    states = sorted(r["state"] for r in got["results"])
    assert states.count("superseded") == 1 and "retracted" not in states  # a retracted fact is never recalled
    why = memory.explain("different Korean restaurants tried", at="2023-10-02", intent="historical", k=10)
    derived = [r for r in why["results"] if r.get("derivation")]
    assert derived and derived[0]["derivation"]["evidence"][0]["rule"] == "updates"
