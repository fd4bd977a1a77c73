"""Tests of the built-in suite generator (frcore.bench._generator).

Every expected value is stated independently of the generator: structure comes from SPEC §5,
gold semantics from the real data's conventions (AV1 support = superseding, wrong = superseded;
AV2 support = upcoming, wrong = expired; AV7 support = retraction, wrong = retracted plan;
AV9 support = existing + tentative), and the lexical statistic is checked on hand-made suites.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from datetime import date, datetime
from functools import cache

import pytest
from hypothesis import given, settings, strategies as st

from frcore import CATEGORY_NAMES
from frcore.bench import _suite
from frcore.bench._generator import (
    content_words,
    generate_suite,
    generate_suites,
    lexical_overlap_stats,
    write_suites,
)

ATTACK_VECTORS = (
    "AV1_superseded_preference",
    "AV2_expired_logistics",
    "AV3_stable_identity",
    "AV4_multi_version_fact",
    "AV5_broad_query",
    "AV6_cross_session_contradiction",
    "AV7_selective_forgetting",
    "AV8_numeric_preservation",
    "AV9_soft_supersession",
)
ROLES = {
    "stable",
    "superseded",
    "superseding",
    "expiring",
    "contradicted",
    "contradicting",
    "retracted",
    "retraction",
    "ambiguous_existing",
    "tentative",
    "annotated",
}
INTENTS = {  # SPEC / real data: which intents each attack vector may carry
    "AV1_superseded_preference": {"current"},
    "AV2_expired_logistics": {"upcoming", "historical"},
    "AV3_stable_identity": {"current", "broad"},
    "AV4_multi_version_fact": {"current"},
    "AV5_broad_query": {"broad"},
    "AV6_cross_session_contradiction": {"current"},
    "AV7_selective_forgetting": {"retraction_aware"},
    "AV8_numeric_preservation": {"current", "historical"},
    "AV9_soft_supersession": {"current"},
}
TOP_KEYS = {"persona", "name", "asked_at", "sessions", "facts", "turns", "questions"}
FACT_KEYS = {
    "id",
    "text",
    "categories",
    "slot",
    "session",
    "said_at",
    "event_time",
    "confidence",
    "numeric",
    "role",
    "links",
    "source",
}
TURN_KEYS = {"id", "session", "said_at", "role", "text"}
QUESTION_KEYS = {
    "id",
    "text",
    "asked_at",
    "attack_vector",
    "relevant_categories",
    "correct_answer",
    "wrong_answer_indicators",
    "intent",
    "support",
    "wrong",
    "notes",
    "conflict",
}

indices = st.integers(min_value=0, max_value=50_000)
seeds = st.integers(min_value=0, max_value=2**32 - 1)


@cache
def _suites(n: int, seed: int) -> tuple[dict, ...]:
    return tuple(generate_suites(n, seed))


def _t(text: str) -> datetime:
    return datetime.fromisoformat(text)


# --------------------------------------------------------------------------- determinism


@settings(max_examples=10)
@given(indices, seeds)
def test_same_seed_same_json(index, seed):
    a = json.dumps(generate_suite(index, seed), sort_keys=True)
    b = json.dumps(generate_suite(index, seed), sort_keys=True)
    assert a == b


@settings(max_examples=10)
@given(indices, seeds)
def test_different_seed_or_index_differs(index, seed):
    base = generate_suite(index, seed)
    assert generate_suite(index, seed + 1) != base
    assert generate_suite(index + 1, seed) != base


def test_personas_are_independent_of_batch():
    batch = generate_suites(6, seed=11)
    assert [generate_suite(i, 11) for i in range(6)] == batch
    assert len({s["persona"] for s in batch}) == 6


def test_global_random_state_untouched():
    import random

    import numpy as np

    random.seed(5)
    np.random.seed(5)
    expect = (random.random(), np.random.random())
    random.seed(5)
    np.random.seed(5)
    generate_suite(3, 3)
    assert (random.random(), np.random.random()) == expect


# --------------------------------------------------------------------------- validation


def check_suite(s: dict) -> None:
    """Independent structural validation of one generated suite (SPEC §5)."""
    assert TOP_KEYS <= set(s)
    key = s["persona"]
    asked = _t(s["asked_at"])
    sessions = s["sessions"]
    assert [x["id"] for x in sessions] == list(range(1, 36))
    dates = {x["id"]: date.fromisoformat(x["date"]) for x in sessions}
    assert all(dates[i] < dates[i + 1] for i in range(1, 35)), "session dates must increase"
    assert all(x["type"] in ("critical", "filler") and x["topic"] for x in sessions)
    n_filler = sum(x["type"] == "filler" for x in sessions)
    assert 14 <= n_filler <= 21, n_filler
    assert sessions[-1]["date"] == s["asked_at"]
    session_type = {x["id"]: x["type"] for x in sessions}

    facts = {f["id"]: f for f in s["facts"]}
    turns = {t["id"]: t for t in s["turns"]}
    assert len(facts) == len(s["facts"]) and len(turns) == len(s["turns"])
    assert not set(facts) & set(turns), "fact and turn ids share one namespace"
    for fid, f in facts.items():
        assert set(f) >= FACT_KEYS, fid
        assert re.fullmatch(rf"{re.escape(key)}\.[fa]\d\d", fid), fid
        assert f["role"] in ROLES, fid
        assert f["source"] == "generator"
        assert f["said_at"] == dates[f["session"]].isoformat(), fid
        assert session_type[f["session"]] == "critical", fid
        assert _t(f["said_at"]) <= asked, fid
        cats = f["categories"]
        assert cats and set(cats) <= set(CATEGORY_NAMES), fid
        assert all(0 < w <= 1 for w in cats.values()), fid
        assert sum(cats.values()) == pytest.approx(1.0, abs=1e-9), fid
        assert f["confidence"] == (0.4 if f["role"] == "tentative" else 1.0), fid
        assert isinstance(f["numeric"], bool)
        for kind, target in f["links"].items():
            assert kind in ("supersedes", "retracts", "contradicts", "tentative_for"), fid
            assert target in facts and target != fid, (fid, target)
            assert facts[target]["said_at"] < f["said_at"], "links point to earlier facts"
            if kind != "retracts":
                assert f["slot"] is not None and facts[target]["slot"] == f["slot"], fid
        if f["role"] == "expiring":
            assert f["event_time"] is not None and set(cats) <= {"LOGISTICAL_CONTEXT", "OBLIGATIONS"}
            assert _t(f["event_time"]) > _t(f["said_at"]), fid
        else:
            assert f["event_time"] is None, fid
    required_link = {
        "superseding": "supersedes",
        "retraction": "retracts",
        "contradicting": "contradicts",
        "tentative": "tentative_for",
    }
    for f in facts.values():
        if f["role"] in required_link:
            assert set(f["links"]) == {required_link[f["role"]]}, f["id"]
    for t in s["turns"]:
        assert set(t) >= TURN_KEYS
        assert re.fullmatch(rf"{re.escape(key)}\.s\d\d\.t\d\d", t["id"]), t["id"]
        assert t["said_at"] == dates[t["session"]].isoformat()
        assert t["role"] in ("user", "assistant") and t["text"]
        n = int(t["id"][-2:])
        assert t["role"] == ("user" if n % 2 else "assistant"), t["id"]

    filler_user = {t["id"] for t in s["turns"] if t["role"] == "user" and session_type[t["session"]] == "filler"}
    qids = [q["id"] for q in s["questions"]]
    assert len(set(qids)) == len(qids)
    for q in s["questions"]:
        assert set(q) >= QUESTION_KEYS, q["id"]
        assert q["attack_vector"] in ATTACK_VECTORS
        assert q["intent"] in INTENTS[q["attack_vector"]], q["id"]
        assert q["asked_at"] == s["asked_at"] and q["conflict"] is False
        assert q["relevant_categories"] and set(q["relevant_categories"]) <= set(CATEGORY_NAMES)
        assert q["support"], q["id"]
        assert len(set(q["support"])) == len(q["support"])
        assert len(set(q["wrong"])) == len(q["wrong"])
        assert not set(q["support"]) & set(q["wrong"]), q["id"]
        for i in q["support"] + q["wrong"]:
            # every referenced item is in the retrieval corpus: a fact or a filler user turn
            assert i in facts or i in filler_user, (q["id"], i)


@settings(max_examples=25)
@given(indices, seeds)
def test_generated_suite_is_valid(index, seed):
    check_suite(generate_suite(index, seed))


@settings(max_examples=15)
@given(indices, seeds)
def test_loader_accepts_generated_suite(index, seed):
    obj = generate_suite(index, seed)
    suite = _suite.parse_suite(obj, f"generated[{index}]")
    assert _suite.suite_to_dict(suite) == obj
    corpus_ids = {item.id for item in _suite.corpus(suite)}
    for q in obj["questions"]:
        assert set(q["support"]) | set(q["wrong"]) <= corpus_ids


def test_write_suites_round_trips(tmp_path):
    paths = write_suites(tmp_path / "gen", 3, seed=4)
    assert [p.name for p in paths] == [f"{s['persona']}.json" for s in generate_suites(3, 4)]
    loaded = _suite.load_suites(tmp_path / "gen")
    assert sorted(s.persona for s in loaded) == sorted(s["persona"] for s in generate_suites(3, 4))
    for p in paths:
        assert json.loads(p.read_text(encoding="utf-8")) == generate_suite(
            json.loads(p.read_text(encoding="utf-8"))["persona_index"], 4
        )


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda: generate_suite(-1), "persona_index"),
        (lambda: generate_suite(1.5), "persona_index"),
        (lambda: generate_suite(True), "persona_index"),
        (lambda: generate_suite(0, seed=-3), "seed"),
        (lambda: generate_suite(0, seed="7"), "seed"),
        (lambda: generate_suites(-2), "n"),
        (lambda: write_suites("/tmp/never-created-by-this-test", -1), "n"),
    ],
    ids=["negative-index", "float-index", "bool-index", "negative-seed", "str-seed", "negative-n", "write-negative-n"],
)
def test_bad_arguments_raise_naming_the_field(call, field):
    with pytest.raises(ValueError, match=field):
        call()


# --------------------------------------------------------------------------- gold semantics


def _by_av(s: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for q in s["questions"]:
        out.setdefault(q["attack_vector"], []).append(q)
    return out


@settings(max_examples=25)
@given(indices, seeds)
def test_gold_semantics_follow_the_real_data(index, seed):
    s = generate_suite(index, seed)
    facts = {f["id"]: f for f in s["facts"]}
    turns = {t["id"]: t for t in s["turns"]}
    asked = _t(s["asked_at"])
    by_av = _by_av(s)

    def fact_roles(ids):
        return [facts[i]["role"] for i in ids if i in facts]

    for av in ("AV1_superseded_preference", "AV4_multi_version_fact"):
        for q in by_av[av]:
            sup = [facts[i] for i in q["support"] if i in facts]
            assert [f["role"] for f in sup] == ["superseding"], q["id"]
            slot = sup[0]["slot"]
            wrong_facts = [facts[i] for i in q["wrong"] if i in facts]
            assert wrong_facts and all(f["role"] == "superseded" and f["slot"] == slot for f in wrong_facts), q["id"]
            # the chain: support → supersedes → … reaches every wrong fact
            chain, cur = [], sup[0]
            while "supersedes" in cur["links"]:
                cur = facts[cur["links"]["supersedes"]]
                chain.append(cur["id"])
            assert sorted(chain) == sorted(f["id"] for f in wrong_facts)
            # wrong turns restate an OLD value before the change; support turns come after
            for i in q["wrong"]:
                if i in turns:
                    assert turns[i]["said_at"] < sup[0]["said_at"], i
                    assert any(v.lower() in turns[i]["text"].lower() for v in q["wrong_answer_indicators"]), i
            for i in q["support"]:
                if i in turns:
                    assert turns[i]["said_at"] > sup[0]["said_at"], i

    for q in by_av["AV2_expired_logistics"]:
        sup = [facts[i] for i in q["support"]]
        assert all(f["role"] == "expiring" for f in sup), q["id"]
        if q["intent"] == "upcoming":
            assert all(_t(f["event_time"]) > asked for f in sup), q["id"]
            for i in q["wrong"]:
                if i in facts:
                    assert _t(facts[i]["event_time"]) < asked, i
        else:
            assert all(_t(f["event_time"]) < asked for f in sup) and not q["wrong"]

    (q7,) = by_av["AV7_selective_forgetting"]
    (ret,) = [facts[i] for i in q7["support"]]
    assert ret["role"] == "retraction" and ret["links"]["retracts"] in q7["wrong"]
    assert fact_roles(q7["wrong"]) == ["retracted"]

    (q6,) = by_av["AV6_cross_session_contradiction"]
    assert fact_roles(q6["support"]) == ["contradicting"]
    assert facts[q6["support"][0]]["links"]["contradicts"] in q6["wrong"]

    (q9,) = by_av["AV9_soft_supersession"]
    sup = [facts[i] for i in q9["support"] if i in facts]
    assert sorted(f["role"] for f in sup) == ["ambiguous_existing", "tentative"]
    tent = next(f for f in sup if f["role"] == "tentative")
    assert tent["confidence"] == 0.4 and tent["links"]["tentative_for"] in q9["support"]
    assert q9["wrong"] == []

    for q in by_av.get("AV3_stable_identity", []):
        assert set(fact_roles(q["support"])) == {"stable"} and q["wrong"] == []
    for q in by_av.get("AV8_numeric_preservation", []):
        assert all(facts[i]["numeric"] for i in q["support"] if i in facts), q["id"]
        assert re.search(r"\d", q["correct_answer"]), q["id"]
    (q5,) = by_av["AV5_broad_query"]
    assert set(fact_roles(q5["wrong"])) <= {"superseded"}
    assert set(fact_roles(q5["support"])) <= {"annotated", "superseding", "stable"}


# --------------------------------------------------------------------------- shape and mix


def test_attack_vector_mix_and_counts():
    suites = _suites(60, 0)
    total = Counter()
    for s in suites:
        counts = Counter(q["attack_vector"] for q in s["questions"])
        total += counts
        assert 10 <= len(s["questions"]) <= 17, s["persona"]
        for av in ATTACK_VECTORS:
            if av != "AV8_numeric_preservation":
                assert counts[av] >= 1, (s["persona"], av)
        assert counts["AV3_stable_identity"] >= 2
    assert total.most_common(1)[0][0] == "AV3_stable_identity"
    # real development split: AV3 22%, AV2 17%, AV1 14%, others 7–9%
    share = {av: total[av] / sum(total.values()) for av in ATTACK_VECTORS}
    assert 0.17 <= share["AV3_stable_identity"] <= 0.27
    assert 0.11 <= share["AV2_expired_logistics"] <= 0.2
    assert 0.11 <= share["AV1_superseded_preference"] <= 0.2
    assert 0.03 <= share["AV8_numeric_preservation"] <= 0.12
    assert 11.5 <= statistics.mean(len(s["questions"]) for s in suites) <= 14.5


def test_persona_shape_mirrors_real_data():
    suites = _suites(60, 0)
    facts = [len(s["facts"]) for s in suites]
    users = [sum(t["role"] == "user" for t in s["turns"]) for s in suites]
    assert 20 <= statistics.mean(facts) <= 27
    assert 250 <= statistics.mean(users) <= 340
    months = [
        (date.fromisoformat(s["asked_at"]) - date.fromisoformat(s["sessions"][0]["date"])).days / 30.4 for s in suites
    ]
    assert 14 <= statistics.mean(months) <= 20
    roles = Counter(f["role"] for s in suites for f in s["facts"])
    assert set(roles) == ROLES
    # soft membership: often one category, sometimes two
    two = sum(len(f["categories"]) == 2 for s in suites for f in s["facts"])
    assert 0.15 <= two / sum(facts) <= 0.6
    # some multi-version chains of three, some expiring items past and some upcoming
    assert any(
        len([i for i in q["wrong"] if i.split(".")[-1][0] == "f"]) == 2
        for s in suites
        for q in s["questions"]
        if q["attack_vector"] == "AV4_multi_version_fact"
    )
    for s in suites:
        asked = _t(s["asked_at"])
        events = [_t(f["event_time"]) for f in s["facts"] if f["role"] == "expiring"]
        assert any(e < asked for e in events) and any(e > asked for e in events)


# --------------------------------------------------------------------------- lexical variety


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Which city is Maren based in these days?", {"city", "maren", "based", "day"}),
        ("What's Teo's go-to hot beverage?", {"teo", "go", "hot", "beverage"}),
        ("Does she have any siblings?", {"sibling"}),
        ("class glass", {"class", "glass"}),
        ("", set()),
    ],
)
def test_content_words(text, expected):
    assert content_words(text) == expected


def _mini_suite(question: str, support_text: str, wrong_text: str) -> dict:
    return {
        "facts": [{"id": "p.f01", "text": support_text}, {"id": "p.f02", "text": wrong_text}],
        "turns": [],
        "questions": [{"text": question, "support": ["p.f01"], "wrong": ["p.f02"]}],
    }


def test_lexical_overlap_stats_on_hand_made_suites():
    disjoint = _mini_suite(
        "Which city is Ana based in?", "Relocated to Porto for a design job", "Lives in Lisbon, a lovely city"
    )
    shared = _mini_suite("Where does Ana live?", "Ana lives in Porto", "Used to live in Lisbon")
    stats = lexical_overlap_stats([disjoint, shared])
    assert stats["questions"] == 2
    assert stats["disjoint_facts"] == 0.5 and stats["disjoint_support"] == 0.5
    # only the first question has a wrong item closer to the question than its support
    assert stats["wrong_closer"] == 0.5


@settings(max_examples=10)
@given(st.text(alphabet="abc xyz'S", max_size=30))
def test_content_words_ignore_case_and_stopwords(text):
    words = content_words(text)
    assert words == content_words(text.upper())
    assert not words & {"the", "a", "is", "and"}


def test_questions_rarely_share_content_words_with_support():
    stats = lexical_overlap_stats(_suites(60, 0))
    # measured 0.95 on 300 personas (seed 0); the real development split measures 0.56
    assert stats["disjoint_facts"] >= 0.5
    # not easier than real data: some wrong items are lexically closer than the support
    # (measured 0.18; the real development split measures 0.25)
    assert stats["wrong_closer"] >= 0.1


def test_filler_holds_hard_distractors():
    """Filler user turns that share a content word with a question without being gold."""
    suites = _suites(30, 0)
    with_distractor = n = 0
    for s in suites:
        filler = {x["id"] for x in s["sessions"] if x["type"] == "filler"}
        pool = [t for t in s["turns"] if t["role"] == "user" and t["session"] in filler]
        for q in s["questions"]:
            gold = set(q["support"]) | set(q["wrong"])
            qw = content_words(q["text"]) - content_words(s["name"])
            n += 1
            with_distractor += any(qw & content_words(t["text"]) for t in pool if t["id"] not in gold)
    # measured 0.85 on 300 personas (seed 0); the real development split measures 0.70
    assert with_distractor / n >= 0.6


# --------------------------------------------------------------------------- scale


@pytest.mark.slow
def test_thousand_personas_complete():
    suites = generate_suites(1000, seed=2)
    assert len(suites) == 1000
    assert len({s["persona"] for s in suites}) == 1000
