"""Lifecycle-state derivation (frcore.bank.records._lifecycle): one hand-built history per rule, the
precedence order, a state machine checked against an independent plain-dict model, role
blindness, time travel, and agreement with LifeMemBench's role labels on the real data."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from support.paths import SHARED_DATA

from frcore import State
from frcore.bank.records._facts import FactRecord, parse_fact, to_utc_naive
from frcore.bank.records._lifecycle import INVISIBLE, Transition, derive_states, snapshot

DATA = SHARED_DATA / "lifemembench"
A, C, S, E, R = State.ACTIVE, State.CONTESTED, State.SUPERSEDED, State.EXPIRED, State.RETRACTED
T0 = datetime(2025, 1, 1)


def day(d: int) -> datetime:
    return T0 + timedelta(days=d)


def fact(fid, d, slot=None, conf=1.0, cat="PREFERENCES_HABITS", event=None, **links) -> FactRecord:
    """A validated fact said on day ``d`` (links as keyword lists: supersedes=["x"])."""
    return parse_fact(
        {
            "id": fid,
            "text": f"fact {fid}",
            "categories": {cat: 1.0},
            "said_at": day(d),
            "slot": slot,
            "confidence": conf,
            "event_time": None if event is None else day(event),
            "links": links,
        }
    )


def states(edges, at_day, transitions=()):
    return [State(s) if s >= 0 else s for s in derive_states(edges, day(at_day), transitions)]


# ----------------------------------------------------------------------------- one test per rule

RULE_CASES = {
    "retracts-link": ([fact("a", 0), fact("b", 5, retracts=["a"])], 10, [R, A]),
    "retracts-link-not-yet-said": ([fact("a", 0), fact("b", 5, retracts=["a"])], 3, [A, INVISIBLE]),
    "slot-supersession": ([fact("a", 0, "s"), fact("b", 5, "s"), fact("c", 9, "s")], 10, [S, S, A]),
    "slot-other-slots-untouched": ([fact("a", 0, "s"), fact("b", 5, "t")], 10, [A, A]),
    "slot-soft-supersession": ([fact("a", 0, "s"), fact("b", 5, "s", conf=0.4)], 10, [C, C]),
    "slot-soft-then-confident": ([fact("a", 0, "s"), fact("b", 5, "s", conf=0.4), fact("c", 7, "s")], 10, [S, S, A]),
    "slot-confident-then-two-soft": (
        [fact("a", 0, "s"), fact("b", 5, "s", conf=0.9), fact("c", 7, "s", conf=0.5), fact("d", 8, "s", conf=0.69)],
        10,
        [S, C, C, C],
    ),
    "slot-lone-tentative-is-active": ([fact("a", 0, "s", conf=0.3)], 10, [A]),
    "slot-threshold-is-inclusive": ([fact("a", 0, "s"), fact("b", 5, "s", conf=0.7)], 10, [S, A]),
    "slot-ties-by-insertion-order": ([fact("a", 5, "s"), fact("b", 5, "s")], 10, [S, A]),
    "slot-order-by-said-at-not-input": ([fact("b", 5, "s"), fact("a", 0, "s")], 10, [A, S]),
    "supersedes-link-across-slots": ([fact("a", 0, "s"), fact("b", 5, "t", supersedes=["a"])], 10, [S, A]),
    "contradicts-link": ([fact("a", 0), fact("b", 5, contradicts=["a"])], 10, [S, A]),
    "supersedes-link-low-confidence": ([fact("a", 0), fact("b", 5, conf=0.4, supersedes=["a"])], 10, [C, C]),
    "tentative-for-link": ([fact("a", 0), fact("b", 5, tentative_for=["a"])], 10, [C, C]),
    "supersedes-link-from-earlier-edge-ignored": ([fact("a", 0, supersedes=["b"]), fact("b", 5)], 10, [A, A]),
    "expiry-logistics": ([fact("a", 0, cat="LOGISTICAL_CONTEXT", event=5)], 10, [E]),
    "expiry-obligations": ([fact("a", 0, cat="OBLIGATIONS", event=5)], 10, [E]),
    "expiry-event-ahead": ([fact("a", 0, cat="OBLIGATIONS", event=15)], 10, [A]),
    "expiry-not-for-other-categories": ([fact("a", 0, cat="HEALTH_WELLBEING", event=5)], 10, [A]),
    "retracted-edge-supersedes-nothing": (
        [fact("a", 0, "s"), fact("b", 5, "s"), fact("c", 6, retracts=["b"])],
        10,
        [A, R, A],
    ),
    "retracting-a-retraction-restores-nothing": (
        [fact("a", 0), fact("b", 2, retracts=["a"]), fact("c", 4, retracts=["b"])],
        10,
        [R, R, A],
    ),
    "invisible-edges": ([fact("a", 0, "s"), fact("b", 20, "s")], 10, [A, INVISIBLE]),
}


@pytest.mark.parametrize("name", list(RULE_CASES))
def test_rule(name):
    edges, at, expected = RULE_CASES[name]
    assert states(edges, at) == expected


def test_retract_transition_effective_time():
    edges = [fact("a", 0)]
    tr = [Transition("a", "retract", day(5), day(5))]
    assert states(edges, 4, tr) == [A]
    assert states(edges, 5, tr) == [R]
    assert states(edges, 6, [{"edge_id": "a", "kind": "retract", "effective_at": "2025-01-06"}]) == [R]


def test_primary_category_decides_expiry():
    mixed = lambda fid, w: parse_fact(  # noqa: E731
        {
            "id": fid,
            "text": "x",
            "said_at": day(0),
            "event_time": day(2),
            "categories": {"LOGISTICAL_CONTEXT": w, "RELATIONAL_BONDS": 1 - w},
        }
    )
    assert states([mixed("a", 0.6), mixed("b", 0.4)], 10) == [E, A]
    # tie: first in table order (RELATIONAL_BONDS before LOGISTICAL_CONTEXT) is primary
    assert states([mixed("c", 0.5)], 10) == [A]


PRECEDENCE_CASES = {
    # RETRACTED > SUPERSEDED
    "retracted-over-superseded": ([fact("a", 0, "s"), fact("b", 1, "s"), fact("c", 2, retracts=["a"])], [R, A, A]),
    # SUPERSEDED > EXPIRED
    "superseded-over-expired": (
        [fact("a", 0, "s", cat="OBLIGATIONS", event=3), fact("b", 1, "s", cat="OBLIGATIONS", event=20)],
        [S, A],
    ),
    # EXPIRED > CONTESTED
    "expired-over-contested": (
        [fact("a", 0, "s", cat="OBLIGATIONS", event=3), fact("b", 1, "s", conf=0.4)],
        [E, C],
    ),
    # SUPERSEDED > CONTESTED (contested by a tentative link, superseded by slot)
    "superseded-over-contested": (
        [fact("a", 0, "s"), fact("t", 1, tentative_for=["a"]), fact("b", 2, "s")],
        [S, C, A],
    ),
    # RETRACTED > EXPIRED
    "retracted-over-expired": ([fact("a", 0, cat="OBLIGATIONS", event=3), fact("b", 1, retracts=["a"])], [R, A]),
}


@pytest.mark.parametrize("name", list(PRECEDENCE_CASES))
def test_precedence(name):
    edges, expected = PRECEDENCE_CASES[name]
    assert states(edges, 10) == expected


def test_duplicate_ids_raise_naming_the_id():
    with pytest.raises(ValueError, match=r"duplicate id 'a' at index 1"):
        derive_states([fact("a", 0), fact("a", 1)], day(5))


def test_unknown_transition_kind_raises():
    with pytest.raises(ValueError, match=r"transitions\[0\].*'kind'"):
        derive_states([fact("a", 0)], day(5), [Transition("a", "forget", day(1))])


def test_derive_states_is_pure():
    edges = [fact("a", 0, "s"), fact("b", 5, "s", conf=0.4), fact("c", 6, retracts=["a"])]
    before = [e.to_json() for e in edges]
    first = derive_states(edges, day(10))
    second = derive_states(edges, day(10))
    assert first.tolist() == second.tolist()
    assert [e.to_json() for e in edges] == before


# ----------------------------------------------------------------------------- time travel


def test_time_travel_slot_before_and_after_superseding_fact():
    edges = [fact("old", 0, "employer"), fact("new", 30, "employer")]
    assert states(edges, 29) == [A, INVISIBLE]
    assert states(edges, 30) == [S, A]
    snap_before = snapshot(edges, day(29))
    assert snap_before.ids.tolist() == ["old"] and snap_before.state.tolist() == [A]
    snap_after = snapshot(edges, day(31))
    assert snap_after.ids.tolist() == ["old", "new"] and snap_after.state.tolist() == [S, A]


def test_known_at_hides_later_recorded_edges_and_transitions():
    edges = [fact("old", 0, "employer"), fact("new", 30, "employer")]
    recorded = [day(1), day(40)]  # "new" was said on day 30 but only ingested on day 40
    tr = [Transition("old", "retract", day(2), recorded_at=day(50))]
    assert snapshot(edges, day(35), known_at=day(35), recorded_at=recorded).state.tolist() == [A]
    assert snapshot(edges, day(35), known_at=day(45), recorded_at=recorded, transitions=tr).state.tolist() == [S, A]
    assert snapshot(edges, day(35), known_at=day(55), recorded_at=recorded, transitions=tr).state.tolist() == [R, A]
    with pytest.raises(ValueError, match="recorded_at"):
        snapshot(edges, day(35), known_at=day(35))


# ----------------------------------------------------------------------------- role blindness

ROLES = ["stable", "superseded", "superseding", "expiring", "retracted", "retraction", "tentative", "annotated"]


def _raw_history():
    return [
        {
            "id": "a",
            "text": "works at Acme",
            "categories": {"PROJECTS_ENDEAVORS": 1.0},
            "said_at": "2025-01-01",
            "slot": "employer",
        },
        {
            "id": "b",
            "text": "works at Beta",
            "categories": {"PROJECTS_ENDEAVORS": 1.0},
            "said_at": "2025-03-01",
            "slot": "employer",
            "links": {"supersedes": "a"},
        },
        {
            "id": "c",
            "text": "dentist June 2",
            "categories": {"LOGISTICAL_CONTEXT": 1.0},
            "said_at": "2025-05-01",
            "event_time": "2025-06-02",
        },
        {"id": "d", "text": "wants a dog", "categories": {"PREFERENCES_HABITS": 1.0}, "said_at": "2025-02-01"},
        {
            "id": "e",
            "text": "no dog after all",
            "categories": {"PREFERENCES_HABITS": 1.0},
            "said_at": "2025-04-01",
            "links": {"retracts": ["d"]},
        },
        {
            "id": "f",
            "text": "might move",
            "categories": {"LOGISTICAL_CONTEXT": 1.0},
            "said_at": "2025-04-01",
            "slot": "city",
            "confidence": 0.4,
        },
        {
            "id": "g",
            "text": "lives in Austin",
            "categories": {"LOGISTICAL_CONTEXT": 1.0},
            "said_at": "2025-01-01",
            "slot": "city",
        },
    ]


@settings(max_examples=25)
@given(st.lists(st.sampled_from(ROLES + [None, 42, {"x": 1}]), min_size=7, max_size=7))
def test_role_key_never_changes_states_or_snapshot(roles):
    plain = [parse_fact(x) for x in _raw_history()]
    labelled = []
    for x, role in zip(_raw_history(), roles):
        x["role"] = role
        labelled.append(parse_fact(x))
    assert labelled == plain
    at = datetime(2025, 7, 1)
    assert derive_states(labelled, at).tolist() == derive_states(plain, at).tolist() == [S, A, E, R, A, C, C]
    s1, s2 = snapshot(labelled, at), snapshot(plain, at)
    assert s1.ids.tolist() == s2.ids.tolist() and s1.state.tolist() == s2.state.tolist()
    np.testing.assert_array_equal(s1.weights, s2.weights)


# ----------------------------------------------------------------------------- state machine

THRESHOLD = 0.7
EXPIRING = {"OBLIGATIONS", "LOGISTICAL_CONTEXT"}


def model_states(facts: list[dict], retractions: list[tuple[str, int]], at: int) -> dict[str, str]:
    """Independent model: plain dicts, day numbers, pairwise quantifiers (no sorting, no
    'standing set' bookkeeping). Returns {id: state name} for the facts said by ``at``."""
    order = {f["id"]: i for i, f in enumerate(facts)}
    byid = {f["id"]: f for f in facts}
    seen = {f["id"]: f for f in facts if f["day"] <= at}

    def later(x, y):  # x said after y (ties by insertion)
        return (x["day"], order[x["id"]]) > (y["day"], order[y["id"]])

    retracted = {
        fid
        for fid in seen
        if any(fid in g["links"].get("retracts", ()) for g in seen.values())
        or any(r == fid and d <= at for r, d in retractions)
    }
    live = {fid: f for fid, f in seen.items() if fid not in retracted}
    slot_sup = {
        fid
        for fid, f in live.items()
        if f["slot"] and any(g["slot"] == f["slot"] and later(g, f) and g["conf"] >= THRESHOLD for g in live.values())
    }
    superseded = set(slot_sup)
    contested = set()
    for fid, f in live.items():
        if not f["slot"] or fid in slot_sup:
            continue
        for gid, g in live.items():
            if gid != fid and g["slot"] == f["slot"] and gid not in slot_sup:
                last = g if later(g, f) else f
                if last["conf"] < THRESHOLD:
                    contested.add(fid)
    for gid, g in live.items():
        for kind, targets in g["links"].items():
            for t in targets:
                if kind == "retracts" or t not in live:
                    continue
                if kind in ("supersedes", "contradicts") and g["conf"] >= THRESHOLD:
                    if later(g, byid[t]):
                        superseded.add(t)
                else:
                    contested.update({gid, t})
    expired = {fid for fid, f in live.items() if f["event"] is not None and f["event"] < at and f["cat"] in EXPIRING}
    out = {}
    for fid in seen:
        for name, group in (
            ("RETRACTED", retracted),
            ("SUPERSEDED", superseded),
            ("EXPIRED", expired),
            ("CONTESTED", contested),
        ):
            if fid in group:
                out[fid] = name
                break
        else:
            out[fid] = "ACTIVE"
    return out


class LifecycleMachine(RuleBasedStateMachine):
    """Adds facts (slots, confidence, links, event times), retraction transitions and queries
    at random days; checks derive_states / snapshot against :func:`model_states`."""

    @initialize()
    def start(self):
        self.facts: list[dict] = []
        self.retractions: list[tuple[str, int]] = []

    @rule(
        d=st.integers(0, 30),
        slot=st.sampled_from([None, "s1", "s2"]),
        conf=st.sampled_from([1.0, 0.9, 0.7, 0.69, 0.4]),
        cat=st.sampled_from(["PREFERENCES_HABITS", "OBLIGATIONS", "LOGISTICAL_CONTEXT"]),
        event=st.one_of(st.none(), st.integers(0, 40)),
        link_kind=st.sampled_from([None, "supersedes", "contradicts", "retracts", "tentative_for"]),
        pick=st.integers(0, 10**6),
    )
    def add_fact(self, d, slot, conf, cat, event, link_kind, pick):
        fid = f"f{len(self.facts)}"
        links: dict[str, list[str]] = {}
        if link_kind and self.facts:
            links[link_kind] = [self.facts[pick % len(self.facts)]["id"]]
        self.facts.append({"id": fid, "day": d, "slot": slot, "conf": conf, "cat": cat, "event": event, "links": links})

    @precondition(lambda self: self.facts)
    @rule(pick=st.integers(0, 10**6), d=st.integers(0, 30))
    def retract(self, pick, d):
        self.retractions.append((self.facts[pick % len(self.facts)]["id"], d))

    def _records(self):
        recs = []
        for f in self.facts:
            recs.append(
                FactRecord(
                    id=f["id"],
                    text=f"fact {f['id']}",
                    categories={f["cat"]: 1.0},
                    said_at=day(f["day"]),
                    event_time=None if f["event"] is None else day(f["event"]),
                    slot=f["slot"],
                    confidence=f["conf"],
                    numeric=False,
                    links={k: tuple(v) for k, v in f["links"].items()},
                )
            )
        return recs

    @rule(at=st.integers(0, 35))
    def query(self, at):
        recs = self._records()
        trs = [Transition(fid, "retract", day(d), day(d)) for fid, d in self.retractions]
        got = derive_states(recs, day(at), trs)
        expected = model_states(self.facts, self.retractions, at)
        names = {f["id"]: (State(s).name if s >= 0 else None) for f, s in zip(self.facts, got)}
        assert {k: v for k, v in names.items() if v is not None} == expected
        snap = snapshot(recs, day(at), transitions=trs)
        assert dict(zip(snap.ids.tolist(), (State(s).name for s in snap.state))) == expected

    @invariant()
    def ids_unique(self):
        assert len({f["id"] for f in self.facts}) == len(self.facts)


LifecycleMachine.TestCase.settings = settings(max_examples=30, stateful_step_count=25, deadline=None)
TestLifecycleMachine = LifecycleMachine.TestCase


def test_model_matches_hand_cases():
    """The model itself agrees with a few hand-built histories (so it is not vacuous)."""
    f = lambda fid, d, slot=None, conf=1.0, **links: {  # noqa: E731
        "id": fid,
        "day": d,
        "slot": slot,
        "conf": conf,
        "cat": "PREFERENCES_HABITS",
        "event": None,
        "links": links,
    }
    assert model_states([f("a", 0, "s"), f("b", 5, "s", 0.4)], [], 10) == {"a": "CONTESTED", "b": "CONTESTED"}
    assert model_states([f("a", 0, "s"), f("b", 5, "s")], [], 10) == {"a": "SUPERSEDED", "b": "ACTIVE"}
    assert model_states([f("a", 0), f("b", 5, retracts=["a"])], [], 10) == {"a": "RETRACTED", "b": "ACTIVE"}


# ----------------------------------------------------------------------------- real data

ROLE_TO_STATE = {
    "superseded": S,
    "contradicted": S,
    "retracted": R,
    "tentative": C,
    "ambiguous_existing": C,
    "stable": A,
    "superseding": A,
    "contradicting": A,
    "retraction": A,
}
PERSONAS = sorted(DATA.glob("*.json")) if DATA.is_dir() else []


@pytest.mark.skipif(not PERSONAS, reason=f"LifeMemBench development split not found at {DATA}")
def test_real_personas_are_twenty():
    assert len(PERSONAS) == 20


@pytest.mark.skipif(not PERSONAS, reason=f"LifeMemBench development split not found at {DATA}")
@pytest.mark.parametrize("path", PERSONAS, ids=lambda p: p.stem)
def test_derived_states_agree_with_role_labels(path):
    suite = json.loads(path.read_text())
    records = [parse_fact(x, f"{path.name}:facts[{i}]") for i, x in enumerate(suite["facts"])]
    at = to_utc_naive(suite["asked_at"], "asked_at", path.name, None)
    derived = derive_states(records, at)
    disagreements = []
    checked = 0
    for x, rec, s in zip(suite["facts"], records, derived):
        role = x["role"]
        if role == "annotated":
            continue  # no lifecycle label
        if role == "expiring":
            expected = E if rec.event_time < at else A
        else:
            expected = ROLE_TO_STATE[role]
        checked += 1
        if s != expected:
            disagreements.append((x["id"], role, State(s).name, expected.name))
    assert checked >= 15
    assert not disagreements, disagreements


@pytest.mark.skipif(not PERSONAS, reason=f"LifeMemBench development split not found at {DATA}")
def test_scrambled_roles_on_real_data_change_nothing():
    suite = json.loads(PERSONAS[0].read_text())
    at = to_utc_naive(suite["asked_at"], "asked_at", "x", None)
    plain = derive_states([parse_fact(x) for x in suite["facts"]], at)
    rng = random.Random(0)
    roles = [x["role"] for x in suite["facts"]]
    rng.shuffle(roles)
    scrambled = [dict(x, role=r) for x, r in zip(suite["facts"], roles)]
    assert derive_states([parse_fact(x) for x in scrambled], at).tolist() == plain.tolist()
    stripped = [{k: v for k, v in x.items() if k != "role"} for x in suite["facts"]]
    assert derive_states([parse_fact(x) for x in stripped], at).tolist() == plain.tolist()
