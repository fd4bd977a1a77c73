"""FR-Bank facade, query understanding and the eight-stage pipeline (hash embedder, fast)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from frcore import State
from frcore._types import score_summands
from frcore.bank import Bank, PipelineConfig, infer_intent
from frcore.bank.pipeline._prepare import clock_ages, overwrite_keep
from frcore.bank.pipeline._query import Router, routing_from_categories
from frcore.bank.records import neutralize, owner_pattern

FACTS = [
    {
        "id": "diet1",
        "text": "Is vegetarian and has been for years",
        "categories": {"PREFERENCES_HABITS": 1.0},
        "slot": "diet",
        "said_at": "2025-01-05",
    },
    {
        "id": "diet2",
        "text": "Started eating fish again, pescatarian now",
        "categories": {"PREFERENCES_HABITS": 1.0},
        "slot": "diet",
        "said_at": "2025-06-01",
        "links": {"supersedes": "diet1"},
    },
    {
        "id": "trip",
        "text": "Flying to Lisbon for a conference on March 3",
        "categories": {"LOGISTICAL_CONTEXT": 1.0},
        "said_at": "2025-02-01",
        "event_time": "2025-03-03",
    },
    {
        "id": "dog",
        "text": "Thinking about adopting a dog",
        "categories": {"PROJECTS_ENDEAVORS": 1.0},
        "said_at": "2025-02-10",
    },
    {
        "id": "nodog",
        "text": "Decided against the dog after all",
        "categories": {"PROJECTS_ENDEAVORS": 1.0},
        "said_at": "2025-03-10",
        "links": {"retracts": "dog"},
    },
    {
        "id": "sister",
        "text": "Has a sister named Ines who lives in Porto",
        "categories": {"RELATIONAL_BONDS": 1.0},
        "said_at": "2025-01-02",
        "role": "stable",
    },
]


@pytest.fixture()
def bank(tmp_path):
    b = Bank.open(str(tmp_path / "bank.db"), embedder="hash")
    b.add(FACTS)
    yield b
    b.close()


def test_current_query_masks_superseded_value(bank):
    res = bank.query("is the user vegetarian or pescatarian diet", at="2025-07-01")
    assert "diet2" in res.ids and "diet1" not in res.ids
    assert res.intent == "current"
    for r in res.results:  # stale items only through the numeric exemption, and demoted
        assert r["state"] in ("active", "contested") or r["terms"]["exemption"] < 0, r


def test_time_travel_before_the_supersession(bank):
    # As of April the superseding fact was not yet said: the old value is current.
    res = bank.query("is the user vegetarian or pescatarian diet", at="2025-04-01")
    assert "diet1" in res.ids and "diet2" not in res.ids


def test_historical_intent_admits_superseded(bank):
    res = bank.query("what diet did the user use to follow before switching", at="2025-07-01")
    assert res.intent == "historical"
    assert "diet1" in res.ids


def test_retracted_never_surfaces_but_retraction_does(bank):
    for intent in ("current", "historical", "change_history", "broad", "retraction_aware"):
        res = bank.query("is the user still planning to adopt a dog", at="2025-07-01", intent=intent)
        assert "dog" not in res.ids, intent
    assert "nodog" in bank.query("is the user still planning to adopt a dog", at="2025-07-01").ids


def test_upcoming_admits_only_future_events(bank):
    before = bank.query("any upcoming trips or conferences", at="2025-02-20")
    after = bank.query("any upcoming trips or conferences", at="2025-04-01")
    assert before.intent == "upcoming" and "trip" in before.ids
    assert "trip" not in after.ids


def test_explain_returns_every_named_term_and_stage(bank):
    res = bank.explain("sister in Porto", at="2025-07-01")
    top = res.results[0]
    assert top["id"] == "sister"
    for name in ("rate", "age", "activation", "blend", "log_blend", "routing", "supersession", "mask", "total"):
        assert name in top["terms"]
    assert np.isclose(top["terms"]["total"], sum(v for _, v in score_summands(top["terms"])), atol=1e-5)
    assert set(top["stages"]) <= {"cosine", "bm25", "forced"} and top["stages"]
    d = res.to_dict()
    assert set(d) >= {"results", "intent", "categories"}
    json.dumps(d)


def test_bad_input_names_the_field(bank):
    with pytest.raises(ValueError, match="text"):
        bank.query("   ")
    with pytest.raises(ValueError, match="at"):
        bank.query("x", at="not a date")
    with pytest.raises(ValueError, match="intent"):
        bank.query("x", intent="sometimes")
    with pytest.raises(ValueError, match="categories"):
        bank.query("x", categories=["NOT_A_CATEGORY"])
    with pytest.raises(ValueError):
        bank.add([{"id": "bad", "text": "t", "categories": {"OTHER": 0.5}, "said_at": "2025-01-01"}])


def test_failed_batch_adds_nothing(bank):
    n = bank.store.count()
    with pytest.raises(ValueError):
        bank.add(
            [
                {"id": "ok1", "text": "fine", "categories": {"OTHER": 1.0}, "said_at": "2025-01-01"},
                {"id": "bad", "text": "t", "categories": {"NOPE": 1.0}, "said_at": "2025-01-01"},
            ]
        )
    assert bank.store.count() == n


def test_role_key_is_ignored(tmp_path):
    """A suite's ``role`` must never influence state or ranking."""
    a = Bank.open(str(tmp_path / "a.db"), embedder="hash")
    b = Bank.open(str(tmp_path / "b.db"), embedder="hash")
    a.add([dict(f, role="stable") for f in FACTS])
    b.add([dict(f, role="retracted") for f in FACTS])
    for q in ("diet", "dog plans", "trip", "sister"):
        assert a.query(q, at="2025-07-01").ids == b.query(q, at="2025-07-01").ids


def test_owner_name_is_neutralised():
    pat = owner_pattern("Ana Souza")
    assert neutralize("Where does Ana live? Ana's sister too", pat) == "Where does the user live? the user's sister too"
    assert neutralize("Banana", pat) == "Banana"
    assert owner_pattern(None) is None


@pytest.mark.parametrize(
    "text,intent",
    [
        ("What did she use to eat?", "historical"),
        ("What car did he drive before switching to a bike?", "historical"),
        ("Does he have any upcoming deadlines?", "upcoming"),
        ("Is she still planning to move abroad?", "retraction_aware"),
        ("How has his job changed over time?", "change_history"),
        ("Tell me about her background", "broad"),
        ("What phone does he use?", "current"),
    ],
)
def test_intent_rules(text, intent):
    assert infer_intent(text).intent == intent


def test_routing_keeps_at_most_five_categories_above_threshold():
    r = Router().route("salary rent budget trip flight doctor sister hobby project deadline")
    kept = r.weights[r.weights > 0]
    assert 1 <= kept.size <= 5 and kept.min() >= 0.15 and kept.max() == 1.0
    w = Router().categorize("my sister and her dog")
    assert abs(sum(w.values()) - 1) < 1e-6 and "RELATIONAL_BONDS" in w
    assert Router().categorize("zzzz qqqq") == {"OTHER": 1.0}
    with pytest.raises(ValueError, match="categories"):
        routing_from_categories({"OTHER": 2.0})


def test_clock_ages():
    ages = clock_ages(np.array([0.0, 10.0, 30.0]), at_h=100.0)
    assert np.allclose(ages[:, 0], [100, 90, 70])
    assert np.allclose(ages[:, 1], [30, 20, 0])
    assert np.allclose(ages[:, 2], [2, 1, 0])


def test_overwrite_keeps_newest_of_contested_slot():
    st = np.array([State.CONTESTED, State.CONTESTED, State.SUPERSEDED, State.ACTIVE, State.RETRACTED])
    keep = overwrite_keep(st, ["a", "a", "b", None, None], np.array([1.0, 2.0, 0.0, 0.0, 0.0]))
    assert keep.tolist() == [False, True, False, True, False]


def test_pipeline_config_rejects_bad_fields():
    with pytest.raises(ValueError, match="ranker"):
        PipelineConfig(ranker="magic")
    with pytest.raises(ValueError, match="hybrid_weight"):
        PipelineConfig(hybrid_weight=2.0)


def test_cli_end_to_end(tmp_path):
    facts = tmp_path / "facts.jsonl"
    facts.write_text("\n".join(json.dumps(f) for f in FACTS))
    db = str(tmp_path / "cli.db")

    def run(*a: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "frcore.cli", "bank", *a], capture_output=True, text=True, timeout=300
        )

    assert run("init", db).returncode == 0
    r = run("add", db, str(facts), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["added"] == len(FACTS)
    r = run("query", db, "is the user still planning to adopt a dog", "--at", "2025-07-01", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert set(out) >= {"results", "intent", "categories"}
    assert {"id", "text", "score", "terms", "stages", "state"} <= set(out["results"][0])
    assert "dog" not in [x["id"] for x in out["results"]]
    r = run("explain", db, "sister", "--at", "2025-07-01")
    assert r.returncode == 0 and "log_blend=" in r.stdout
    r = run("erase", db, "sister", "--json")
    assert r.returncode == 0, r.stderr
    r = run("query", db, "sister named Ines", "--at", "2025-07-01", "--json")
    assert "sister" not in [x["id"] for x in json.loads(r.stdout)["results"]]
    r = run("query", str(tmp_path / "missing.db"), "x")
    assert r.returncode != 0 and "does not exist" in r.stderr


def test_related_pairs_from_links_and_slots():
    from frcore.bank.pipeline import related_pairs

    slots = ["phone", None, "phone", None]
    said = np.array([0.0, 1.0, 5.0, 6.0])
    links = [{}, {}, {}, {"retracts": ("b",)}]
    src, dst = related_pairs(slots, said, links, {"a": 0, "b": 1, "c": 2, "d": 3})
    assert sorted(zip(src.tolist(), dst.tolist())) == [(2, 0), (3, 1)]


def test_linked_similarity_surfaces_the_replacement(tmp_path):
    """A question worded like the old value finds the new value through the slot link."""
    facts = [
        {
            "id": "old",
            "text": "uses an iphone for calls",
            "categories": {"PREFERENCES_HABITS": 1.0},
            "slot": "phone",
            "said_at": "2025-01-01",
        },
        {
            "id": "new",
            "text": "switched to a galaxy android handset",
            "categories": {"PREFERENCES_HABITS": 1.0},
            "slot": "phone",
            "said_at": "2025-05-01",
        },
    ] + [
        {
            "id": f"x{i}",
            "text": f"unrelated chatter number {i} about weather and iphone news",
            "categories": {"OTHER": 1.0},
            "said_at": "2025-03-01",
        }
        for i in range(30)
    ]
    with Bank.open(str(tmp_path / "l.db"), embedder="hash") as b:
        b.add(facts)
        on = b.query("which iphone does the user use for calls", at="2025-06-01", k=3)
        off = b.query(
            "which iphone does the user use for calls", at="2025-06-01", k=3, config=PipelineConfig(propagation=0.0)
        )
    assert on.ids[0] == "new" and on.results[0]["terms"]["sim_linked"] > on.results[0]["terms"]["sim_cosine"]
    assert "old" not in on.ids
    assert "new" not in off.ids[:1]


#: SPEC §3, typed from the definition (not read from frcore.COMPATIBLE): the states each intent admits.
_SPEC_ADMITS = {
    "current": {"active", "contested"},
    "broad": {"active", "contested"},
    "retraction_aware": {"active", "contested"},
    "upcoming": {"active"},  # and only with an event ahead (h ≥ 0)
    "historical": {"active", "contested", "superseded", "expired"},
    "change_history": {"active", "contested", "superseded", "expired"},
}


@pytest.mark.parametrize(
    ("lifecycle", "exemption", "untyped_upcoming"),
    [(True, True, False), (True, False, False), (False, True, False), (True, True, True), (True, False, True)],
    ids=["default", "no-exemption", "off", "untyped-upcoming", "untyped-upcoming-no-exemption"],
)
def test_distillation_mask_is_the_spec_rule(lifecycle, exemption, untyped_upcoming):
    """Distillation's mask and frcore's kernel mask both admit exactly what SPEC §3 says, over
    every (state, intent, numeric, event, typed) combination: the table above; a numeric
    superseded or expired edge counts as active (numeric exemption, when on); ``upcoming`` also
    needs an event time not in the past, of a typed edge only with ``untyped_upcoming``; with the
    lifecycle off everything is admitted."""
    import itertools

    import frcore
    from frcore.bank.pipeline._prepare import admitted

    config = frcore.ScoreConfig(lifecycle=lifecycle, numeric_exemption=exemption, untyped_upcoming=untyped_upcoming)

    def spec(state: str, intent: str, numeric: bool, h: float, typed: bool) -> bool:
        if not lifecycle:
            return True
        if exemption and numeric and state in ("superseded", "expired"):
            state = "active"
        ok = state in _SPEC_ADMITS[intent]
        if intent != "upcoming" or (untyped_upcoming and not typed):
            return ok
        return ok and (h >= 0)  # NaN: no event time, never ahead

    states = [s.name.lower() for s in frcore.State]
    combos = list(itertools.product(states, (False, True), (np.nan, -5.0, 0.0, 5.0), (False, True)))
    state = np.array([int(frcore.State[s.upper()]) for s, *_ in combos])
    numeric = np.array([c[1] for c in combos])
    he = np.array([c[2] for c in combos])
    typed = np.array([c[3] for c in combos])
    assert sorted(_SPEC_ADMITS) == sorted(i.name.lower() for i in frcore.Intent)  # every intent has its row
    for intent in frcore.Intent:
        want = [spec(s, intent.name.lower(), n, h, t) for s, n, h, t in combos]
        got = admitted(state, numeric, he, typed, int(intent), config)
        np.testing.assert_array_equal(got, want, err_msg=intent.name)
        kernel = [
            np.isfinite(
                float(
                    frcore.compatibility_mask(
                        np.int32(s),
                        np.int32(intent),
                        np.bool_(not np.isnan(h)),
                        np.float32(0.0 if np.isnan(h) else h),
                        np.bool_(n),
                        np.bool_(t),
                        config,
                    )
                )
            )
            for s, n, h, t in zip(state, numeric, he, typed)
        ]
        np.testing.assert_array_equal(kernel, want, err_msg=intent.name)


@pytest.mark.parametrize(
    "kinds, want",
    [
        # raw turns: an event time or a link orders them, it does not type them (evidence turns)
        (["fact", "turn", "turn", "turn", "turn", "turn"], [True, True, False, False, False, False]),
        # rows that are not raw turns: an event time or a link (source or target) types them
        (["fact", "fact", "fact", "fact", "fact", "turn"], [True, True, True, True, True, False]),
    ],
)
def test_typed_rows_carry_lifecycle_metadata(kinds, want):
    """Prepared.typed: a fact, or a row with a slot, is typed; an event time or a link (as its
    source or its target) types a row that is not a raw turn; a raw turn with none of these is
    not typed (docs/derive.md, "Ranking raw turns")."""
    from frcore.bank.pipeline import Prepared, related_pairs

    ids = ["fact", "slotted", "event", "linker", "linked", "raw"]
    slots = [None, "home", None, None, None, None]
    said = np.arange(6, dtype=np.float64)
    links = [{}, {}, {}, {"supersedes": ("linked",)}, {}, {}]
    prep = Prepared(
        weights=np.eye(11)[[6] * 6],
        said_at_h=said,
        event_h=np.array([np.nan, np.nan, 30.0, np.nan, np.nan, np.nan]),
        state=np.zeros(6, np.int64),
        confidence=np.ones(6),
        numeric=np.zeros(6, bool),
        slots=slots,
        eligible=np.ones(6, bool),
        at_h=10.0,
        related=related_pairs(slots, said, links, {x: i for i, x in enumerate(ids)}),
        kinds=kinds,
    )
    np.testing.assert_array_equal(prep.typed, want)


@pytest.mark.parametrize("untyped_upcoming", [False, True])
def test_upcoming_request_reaches_untyped_turns_with_the_switch(untyped_upcoming, tmp_path):
    """A bank of raw turns (no slot, event time or link): under ``upcoming`` every turn is masked
    by default, and with ``untyped_upcoming`` the stated preference is retrieved; a typed fact
    without an event ahead stays masked either way."""
    import frcore

    bank = Bank.open(str(tmp_path / "turns.db"), embedder="hash")
    bank.add(
        [
            {"id": "t1", "kind": "turn", "text": "I prefer boutique hotels near the beach", "said_at": "2025-01-02"},
            {"id": "t2", "kind": "turn", "text": "My cat likes tuna", "said_at": "2025-01-03"},
            {
                "id": "f1",
                "text": "Prefers boutique hotels with a pool",
                "categories": {"PREFERENCES_HABITS": 1.0},
                "said_at": "2025-01-04",
            },
        ]
    )
    config = PipelineConfig(score=frcore.ScoreConfig(untyped_upcoming=untyped_upcoming))
    res = bank.query("boutique hotels", at="2025-02-01", intent="upcoming", config=config)
    assert ("t1" in res.ids) == untyped_upcoming
    assert "f1" not in res.ids
    assert res.ids == (["t1", "t2"] if untyped_upcoming else [])


def test_distillation_uses_the_kernels_compatibility_rule(monkeypatch):
    """FR-Bank has no compatibility table of its own: a change to the kernel's rule (here its
    admits bit mask, built from frcore.COMPATIBLE, made to admit superseded edges under
    ``current``) reaches the distillation mask."""
    import frcore
    import frcore._scoring as scoring
    from frcore.bank.pipeline._prepare import admitted

    state = np.array([frcore.State.ACTIVE, frcore.State.SUPERSEDED, frcore.State.RETRACTED])
    args = (
        state,
        np.zeros(3, bool),
        np.full(3, np.nan),
        np.ones(3, bool),
        int(frcore.Intent.CURRENT),
        frcore.ScoreConfig(),
    )
    np.testing.assert_array_equal(admitted(*args), [True, False, False])
    bits = list(scoring._ADMITS_BITS)
    bits[frcore.Intent.CURRENT] |= 1 << frcore.State.SUPERSEDED
    monkeypatch.setattr(scoring, "_ADMITS_BITS", tuple(bits))
    np.testing.assert_array_equal(admitted(*args), [True, True, False])


def test_a_write_by_another_connection_is_seen(tmp_path):
    """Cached per-snapshot views are keyed by the store's persisted version counter."""
    path = str(tmp_path / "shared.db")
    reader = Bank.open(path, embedder="hash")
    reader.add(FACTS[:1])
    assert "sister" not in reader.query("sister named Ines in Porto", at="2025-07-01").ids
    with Bank.open(path, embedder="hash") as writer:
        writer.add([FACTS[-1]])
    assert "sister" in reader.query("sister named Ines in Porto", at="2025-07-01").ids
    reader.close()
