"""Soft updates, the bounds of derivation and the newest-first order of raw turns (docs/derive.md,
"Soft updates" and "Bounds"; docs/benchmark.md, "FR-Bank's retrieval"). Each bound has a test
that goes red when the bound is removed."""

from __future__ import annotations

import datetime as dt

import numpy as np

import frcore.bank.derive._rules as rules
from frcore.bank.derive import DeriveConfig, Turn, TurnIndex, derive
from frcore.bank.derive._text import claims
from frcore.bank.pipeline._config import Retrieved
from frcore.bank.pipeline._retrieve import above_superseded


def _t(i: str, text: str, day: str) -> Turn:
    return Turn(i, text, dt.datetime.fromisoformat(day))


SOFT = DeriveConfig(soft_updates=True)


def _turn_fact(t: Turn) -> dict:
    return {"id": t.id, "text": t.text, "said_at": t.said_at.isoformat(), "kind": "turn"}


def _derive(turns, cfg=SOFT):
    return derive(TurnIndex(), turns, cfg)


SNEAKERS = [
    _t("a", "By the way, I keep my old sneakers under my bed for storage.", "2023-05-01"),
    _t("b", "I got rid of clutter, and my old sneakers are currently on a shoe rack in the closet.", "2023-06-01"),
]


def test_a_restatement_with_a_cue_on_rare_shared_terms_is_a_soft_update():
    got = _derive(SNEAKERS)["b"]
    assert got.links == {"tentative_for": ("a",)}  # soft: both kept, contested
    assert got.confidence == 1.0
    (ev,) = got.evidence
    assert ev.rule == "soft_updates" and ev.detail["cue"] == "currently"
    assert {"old", "sneaker"} <= set(ev.detail["shared_terms"])


def test_other_quantities_on_rare_shared_terms_are_a_soft_update_without_a_cue():
    turns = [
        _t("a", "I go to the gym on Tuesdays and Thursdays with my sister.", "2023-05-01"),
        _t("b", "My sister and I hit the gym four times a week.", "2023-06-01"),
    ]
    got = _derive(turns)["b"]
    assert got.links == {"tentative_for": ("a",)}
    assert got.evidence[0].detail["quantities"] == ["4"]


def test_no_soft_update_without_a_cue_or_other_quantities():
    turns = [
        _t("a", "I keep my old sneakers under my bed.", "2023-05-01"),
        _t("b", "My old sneakers smell a bit.", "2023-06-01"),
    ]
    assert _derive(turns)["b"].empty


def test_no_soft_update_on_one_shared_term():
    turns = [
        _t("a", "I keep my sneakers under the bed.", "2023-05-01"),
        _t("b", "I currently wash the sneakers by hand.", "2023-06-01"),
    ]
    assert _derive(turns)["b"].empty  # only "sneaker" is shared


def test_a_term_said_in_many_earlier_turns_is_not_rare_and_links_nothing():
    common = [_t(f"c{i}", f"My old sneakers got muddy on walk {i}.", f"2023-04-{i + 1:02d}") for i in range(4)]
    assert rules.RARE_TURNS < len(common) + 1
    got = _derive([*common, *SNEAKERS])
    assert "tentative_for" not in got["b"].links


def test_the_soft_rule_switched_off_links_nothing():
    assert _derive(SNEAKERS, DeriveConfig(soft_updates=False))["b"].empty
    assert _derive(SNEAKERS, DeriveConfig())["b"].empty  # off by default


def _many_updates(n: int) -> list[Turn]:
    earlier = [_t(f"e{i}", f"I've tried {i} different Korean restaurants.", f"2023-01-{i + 1:02d}") for i in range(n)]
    return [*earlier, _t("z", "I've tried 40 different Korean restaurants.", "2023-03-01")]


def test_a_turn_supersedes_at_most_max_supersedes_earlier_turns(monkeypatch):
    got = _derive(_many_updates(8))["z"]
    assert len(got.links["supersedes"]) == rules.MAX_SUPERSEDES == 3
    assert got.links["supersedes"] == ("e5", "e6", "e7")  # equal evidence: the latest win
    monkeypatch.setattr(rules, "MAX_SUPERSEDES", 100)  # the cap removed: every earlier turn
    assert len(_derive(_many_updates(8))["z"].links["supersedes"]) == 8


def test_a_turn_soft_links_at_most_max_soft_links_earlier_turns(monkeypatch):
    names = ["Ava", "Ben", "Cal", "Dan", "Eve"]
    earlier = [
        _t(f"e{i}", f"My cousin {n} and I saw the Rockets play on Friday.", f"2023-01-{i + 1:02d}")
        for i, n in enumerate(names[:3])
    ]
    earlier += [_t("f", "My cousin and I saw the Rockets play twice.", "2023-01-20")]
    later = _t("z", "My cousin and I have now seen the Rockets play 9 times.", "2023-03-01")
    monkeypatch.setattr(rules, "RARE_TURNS", 10)
    got = _derive([*earlier, later])["z"]
    n = len(got.links.get("tentative_for", ())) + len(got.links.get("supersedes", ()))
    assert len(got.links.get("tentative_for", ())) <= rules.MAX_SOFT_LINKS == 3 and n >= 3
    monkeypatch.setattr(rules, "MAX_SOFT_LINKS", 100)
    more = _derive([*earlier, later])["z"]
    assert len(more.links.get("tentative_for", ())) + len(more.links.get("supersedes", ())) > n


def test_the_update_index_reads_at_most_max_postings_per_key_word():
    """The earlier claims compared with a new claim come from the postings of its key words, the
    most recent MAX_POSTINGS of each: with every earlier claim matching, no more than that."""
    n = rules.MAX_POSTINGS + 200
    index = TurnIndex()
    for i in range(n):
        index.add(_t(f"e{i}", f"I've tried {i} different Korean restaurants.", "2023-01-01"))
    (claim,) = claims("I've tried 999 different Korean restaurants.")
    found = index.matches("", claim, dt.datetime(2023, 2, 1))
    assert 0 < len(found) <= rules.MAX_POSTINGS
    assert {e.turn.id for e, _, _ in found} == {f"e{i}" for i in range(n - rules.MAX_POSTINGS, n)}


def test_a_retraction_reads_at_most_the_retraction_window():
    index = TurnIndex()
    for i in range(rules.RETRACTION_WINDOW + 50):
        index.add(_t(f"e{i}", f"I booked table {i} at the bistro.", "2023-01-01"))
    assert len(index.earlier("", dt.datetime(2023, 2, 1))) == rules.RETRACTION_WINDOW


def test_rare_terms_keep_bounded_postings():
    index = TurnIndex()
    for i in range(50):
        index.add(_t(f"e{i}", "I watered the balcony plants again.", f"2023-01-{i % 28 + 1:02d}"))
    assert index.rare[""]["balcony"] is None  # no longer rare: its turns are no longer kept
    assert index.rare_earlier("", "balcony", dt.datetime(2024, 1, 1)) == []


def _results(rows):
    return tuple(Retrieved(r, -float(i), {}, ("cosine",)) for i, r in enumerate(rows))


def test_newest_first_moves_a_superseding_result_directly_above_what_it_supersedes():
    got = above_superseded(_results([0, 1, 2, 3, 4]), {1: {3}}, window=10)
    assert [r.row for r in got] == [0, 3, 1, 2, 4]
    assert "above-superseded" in got[1].stages


def test_newest_first_never_changes_which_results_are_in_the_window():
    """A superseder ranked below the window stays there: the window's set is retrieval's."""
    rows = list(range(15))
    got = above_superseded(_results(rows), {2: {12}}, window=10)
    assert [r.row for r in got] == rows
    got = above_superseded(_results(rows), {2: {12}}, window=15)  # the window widened: it moves
    assert [r.row for r in got][:4] == [0, 1, 12, 2]


def test_newest_first_orders_a_chain():
    got = above_superseded(_results([0, 1, 2]), {0: {1}, 1: {2}}, window=10)
    assert [r.row for r in got] == [2, 1, 0]


def test_a_linked_raw_turn_is_not_typed_by_its_link():
    """Under ``upcoming`` with ``untyped_upcoming``, raw turns without an event are admitted; a
    derived link between two of them does not make them typed facts that need an event ahead."""
    from frcore.bank import Bank
    from frcore.bench import SYSTEMS

    bank = Bank.open(":memory:", embedder="hash", derive=SOFT)
    bank.add([{"id": t.id, "text": t.text, "said_at": t.said_at.isoformat(), "kind": "turn"} for t in SNEAKERS])
    cfg = SYSTEMS["fr-plus-derived-soft-updates"].pipeline
    got = bank.query("where are my old sneakers", at="2023-07-01", intent="upcoming", config=cfg)
    assert set(got.ids) == {"a", "b"}
    assert got.ids == ["b", "a"]  # newest first
    bank.close()


def test_explain_shows_a_soft_update_with_its_evidence():
    from frcore.bank import Bank
    from frcore.bank.cli import derivation_lines

    bank = Bank.open(":memory:", embedder="hash", derive=SOFT)
    bank.add([_turn_fact(t) for t in SNEAKERS])
    res = bank.explain("where are my old sneakers", at="2023-07-01")
    (b,) = [r for r in res.results if r["id"] == "b"]
    lines = derivation_lines(b["derivation"])
    assert b["derivation"]["reproduced"] is True
    assert any("derived tentative_for a (rule soft_updates)" in x and "cue 'currently'" in x for x in lines)
    bank.close()


class _Meaning:
    """A fake sentence embedder: texts containing the same marker word embed to the same unit
    vector, others to orthogonal ones (so the cosine is 1 or 0, chosen by the test)."""

    def __init__(self, *markers: str):
        self.markers = markers
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        out = np.zeros((len(texts), len(self.markers) + len(texts) + 1))
        for i, t in enumerate(texts):
            hit = [j for j, m in enumerate(self.markers) if m in t.lower()]
            out[i, hit[0] if hit else len(self.markers) + 1 + i] = 1.0
        return out


def test_with_an_embedder_a_link_needs_statements_of_the_same_meaning():
    turns = [
        _t("a", "I've tried three different Korean restaurants.", "2023-08-11"),
        _t("b", "I've tried four different Korean restaurants.", "2023-09-30"),
    ]
    same = derive(TurnIndex(embed=_Meaning("korean").embed), turns)["b"]
    assert same.links == {"supersedes": ("a",)} and same.evidence[0].detail["cosine"] == 1.0
    other = derive(TurnIndex(embed=_Meaning("nothing").embed), turns)["b"]
    assert other.empty  # the words match, the meaning test does not: no link
    assert derive(TurnIndex(), turns)["b"].links == {"supersedes": ("a",)}  # words only without an embedder


def test_the_meaning_test_gates_soft_updates_too_and_embeds_each_statement_once():
    m = _Meaning("nothing")
    assert derive(TurnIndex(embed=m.embed), SNEAKERS, SOFT)["b"].empty
    m = _Meaning("sneakers")
    index = TurnIndex(embed=m.embed)
    assert derive(index, SNEAKERS, SOFT)["b"].links == {"tentative_for": ("a",)}
    texts = [t for call in m.calls for t in call]
    assert len(texts) == len(set(texts)) and set(index.vectors) == set(texts)


def test_the_meaning_threshold_is_the_documented_one(monkeypatch):
    """SAME_ATTRIBUTE_COSINE decides: a pair at cosine 0.6 passes a 0.5 threshold, not 0.7."""
    turns = [
        _t("a", "I've tried three different Korean restaurants.", "2023-08-11"),
        _t("b", "I've tried four different Korean restaurants.", "2023-09-30"),
    ]

    def embed(texts):
        return np.array([[1.0, 0.0] if "three" in t else [0.6, 0.8] for t in texts])

    assert rules.SAME_ATTRIBUTE_COSINE == 0.7
    assert derive(TurnIndex(embed=embed), turns)["b"].empty
    monkeypatch.setattr(rules, "SAME_ATTRIBUTE_COSINE", 0.5)
    assert derive(TurnIndex(embed=embed), turns)["b"].links == {"supersedes": ("a",)}


def _links(bank) -> dict:
    return {e.id: {k: tuple(v) for k, v in e.links.items()} for e in bank.store.edges(user=bank.user) if e.links}


def test_the_kept_turn_index_derives_as_the_whole_history_does():
    """Turns added one at a time (the index kept and grown across adds) get the links one batch
    of all of them gets."""
    from frcore.bank import Bank

    turns = [*_many_updates(5), *SNEAKERS]
    one = Bank.open(":memory:", embedder="hash", derive=SOFT)
    one.add([_turn_fact(t) for t in turns])
    each = Bank.open(":memory:", embedder="hash", derive=SOFT)
    for t in sorted(turns, key=lambda t: t.said_at):
        each.add([_turn_fact(t)])
    assert each._deriver._kept is not None  # kept across adds
    assert _links(each) == _links(one) and _links(one)
    one.close()
    each.close()


def test_a_write_by_another_handle_is_read_before_deriving(tmp_path):
    """The kept index belongs to one store version: a turn another handle stored is seen."""
    from frcore.bank import Bank

    path = str(tmp_path / "b.db")
    first = Bank.open(path, embedder="hash", derive=True)
    first.add([_turn_fact(_t("x", "I watered the balcony plants.", "2023-01-01"))])
    second = Bank.open(path, embedder="hash", derive=True)
    second.add([_turn_fact(_many_updates(1)[0])])  # e0: "I've tried 0 different Korean restaurants."
    first.add([_turn_fact(_t("z", "I've tried 40 different Korean restaurants.", "2023-03-01"))])
    assert _links(first)["z"] == {"supersedes": ("e0",)}
    first.close()
    second.close()


def test_i_cancelled_retracts_the_plan_it_names():
    turns = [
        _t("a", "I booked a weekend cabin at Lake Tahoe for my anniversary.", "2023-05-01"),
        _t("n", "I watered the balcony plants this morning.", "2023-05-02"),
        _t("b", "I cancelled the cabin at Lake Tahoe, the weather looks bad.", "2023-05-10"),
    ]
    got = _derive(turns)["b"]
    assert got.links == {"retracts": ("a",)}
    assert got.evidence[0].detail["object_key_words"] == ["cabin"]


def test_we_called_off_retracts_and_a_cancellation_without_a_match_retracts_nothing():
    turns = [
        _t("a", "We're throwing a surprise party for my sister on Saturday.", "2023-05-01"),
        _t("b", "We called off the surprise party, she found out.", "2023-05-03"),
        _t("c", "I cancelled my gym membership.", "2023-05-04"),
    ]
    got = _derive(turns)
    assert got["b"].links == {"retracts": ("a",)}
    assert "retracts" not in got["c"].links  # no earlier turn names the gym membership


def test_a_rescheduled_plan_gets_its_new_day_as_event_time():
    (got,) = _derive([_t("a", "My dentist appointment was rescheduled to June 3.", "2023-05-10")]).values()
    assert got.event_time == dt.datetime(2023, 6, 3, 12)
    (got,) = _derive([_t("a", "Our family trip to Denver was moved to May 20.", "2023-05-10")]).values()
    assert got.event_time == dt.datetime(2023, 5, 20, 12)  # "trip" is the future marker
    (got,) = _derive([_t("a", "My team meeting got postponed until next Tuesday.", "2023-05-10")]).values()
    assert got.event_time == dt.datetime(2023, 5, 16, 12)  # 2023-05-10 is a Wednesday
