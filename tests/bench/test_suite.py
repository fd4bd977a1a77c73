"""Suite format v1 (SPEC §5): the real development split loads, round-trips, and every
validation rule rejects a mutated suite with a message naming file, item id and field."""

from __future__ import annotations

import copy
import json
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, strategies as st
from support.paths import SHARED_DATA
from support.suites import SOURCE, _mini

import frcore
from frcore.bench._suite import (
    ATTACK_VECTORS,
    CorpusItem,
    SuiteError,
    attack_vector_key,
    corpus,
    load_suite,
    load_suites,
    parse_suite,
    suite_to_dict,
)

DATA = SHARED_DATA / "lifemembench"


def _by_id(obj: dict, section: str, item_id):
    return next(x for x in obj[section] if x["id"] == item_id)


def _set(section, item_id, fld, value):
    def mutate(obj):
        _by_id(obj, section, item_id)[fld] = value

    return mutate


def _del(section, item_id, fld):
    def mutate(obj):
        del _by_id(obj, section, item_id)[fld]

    return mutate


def _dup(section, index):
    def mutate(obj):
        obj[section].append(copy.deepcopy(obj[section][index]))

    return mutate


def _fact_turn_clash(obj):
    obj["turns"][0]["id"] = "ann.f01"


# (case id, mutation, item id that must be named, field that must be named)
RULES = [
    ("missing_fact_text", _del("facts", "ann.f02", "text"), "ann.f02", "text"),
    ("missing_question_wrong", _del("questions", "ann_q01", "wrong"), "ann_q01", "wrong"),
    ("missing_turn_role", _del("turns", "ann.s02.t01", "role"), "ann.s02.t01", "role"),
    ("missing_suite_asked_at", lambda o: o.pop("asked_at"), "ann", "asked_at"),
    ("illtyped_confidence", _set("facts", "ann.f01", "confidence", "high"), "ann.f01", "confidence"),
    ("illtyped_numeric", _set("facts", "ann.f01", "numeric", "no"), "ann.f01", "numeric"),
    ("illtyped_session", _set("facts", "ann.f01", "session", "1"), "ann.f01", "session"),
    ("illtyped_slot", _set("facts", "ann.f01", "slot", 3), "ann.f01", "slot"),
    ("illtyped_support", _set("questions", "ann_q01", "support", "ann.f02"), "ann_q01", "support"),
    ("illtyped_conflict", _set("questions", "ann_q01", "conflict", 0), "ann_q01", "conflict"),
    ("illtyped_link", _set("facts", "ann.f02", "links", {"supersedes": 5}), "ann.f02", "links.supersedes"),
    ("unknown_category", _set("facts", "ann.f01", "categories", {"FOOD": 1.0}), "ann.f01", "categories.FOOD"),
    (
        "unknown_relevant_category",
        _set("questions", "ann_q02", "relevant_categories", ["OBLIGATIONS_COMMITMENTS"]),
        "ann_q02",
        "relevant_categories[0]",
    ),
    (
        "weights_sum_low",
        _set("facts", "ann.f02", "categories", {"PREFERENCES_HABITS": 0.7, "HEALTH_WELLBEING": 0.2}),
        "ann.f02",
        "categories",
    ),
    (
        "weights_sum_high",
        _set("facts", "ann.f02", "categories", {"PREFERENCES_HABITS": 0.7, "HEALTH_WELLBEING": 0.302}),
        "ann.f02",
        "categories",
    ),
    (
        "weight_negative",
        _set("facts", "ann.f02", "categories", {"PREFERENCES_HABITS": 1.5, "HEALTH_WELLBEING": -0.5}),
        "ann.f02",
        "categories.PREFERENCES_HABITS",
    ),
    ("weights_empty", _set("facts", "ann.f02", "categories", {}), "ann.f02", "categories"),
    ("dangling_link", _set("facts", "ann.f02", "links", {"supersedes": "ann.f99"}), "ann.f02", "links.supersedes"),
    (
        "dangling_link_in_list",
        _set("facts", "ann.f04", "links", {"tentative_for": ["ann.f03", "ann.f99"]}),
        "ann.f04",
        "links.tentative_for",
    ),
    ("link_to_turn", _set("facts", "ann.f02", "links", {"contradicts": "ann.s03.t01"}), "ann.f02", "links.contradicts"),
    ("self_link", _set("facts", "ann.f02", "links", {"supersedes": "ann.f02"}), "ann.f02", "links.supersedes"),
    ("unknown_link_kind", _set("facts", "ann.f02", "links", {"replaces": "ann.f01"}), "ann.f02", "links.replaces"),
    ("dangling_support", _set("questions", "ann_q01", "support", ["ann.f02", "ann.s09.t01"]), "ann_q01", "support[1]"),
    ("dangling_wrong", _set("questions", "ann_q01", "wrong", ["ann.f77"]), "ann_q01", "wrong[0]"),
    ("empty_support", _set("questions", "ann_q01", "support", []), "ann_q01", "support"),
    ("support_wrong_overlap", _set("questions", "ann_q01", "wrong", ["ann.f01", "ann.f02"]), "ann_q01", "wrong[1]"),
    ("duplicate_in_support", _set("questions", "ann_q01", "support", ["ann.f02", "ann.f02"]), "ann_q01", "support[1]"),
    ("bad_said_at", _set("facts", "ann.f03", "said_at", "March 1st"), "ann.f03", "said_at"),
    ("bad_event_time", _set("facts", "ann.f03", "event_time", "2025-13-01"), "ann.f03", "event_time"),
    ("bad_turn_said_at", _set("turns", "ann.s02.t02", "said_at", "2025-02-30"), "ann.s02.t02", "said_at"),
    ("bad_question_asked_at", _set("questions", "ann_q02", "asked_at", "soon"), "ann_q02", "asked_at"),
    ("bad_session_date", _set("sessions", 2, "date", ""), "session 2", "date"),
    ("fact_after_asked_at", _set("facts", "ann.f04", "said_at", "2025-06-02"), "ann.f04", "said_at"),
    ("fact_after_asked_at_same_day", _set("facts", "ann.f04", "said_at", "2025-06-01T09:00:00"), "ann.f04", "said_at"),
    ("turn_after_asked_at", _set("turns", "ann.s03.t02", "said_at", "2026-01-01"), "ann.s03.t02", "said_at"),
    ("session_after_asked_at", _set("sessions", 3, "date", "2025-07-01"), "session 3", "date"),
    ("question_after_suite", _set("questions", "ann_q01", "asked_at", "2025-07-01"), "ann_q01", "asked_at"),
    ("support_after_question", _set("questions", "ann_q01", "asked_at", "2025-02-15"), "ann_q01", "support[0]"),
    ("confidence_above_one", _set("facts", "ann.f04", "confidence", 1.2), "ann.f04", "confidence"),
    ("confidence_negative", _set("facts", "ann.f04", "confidence", -0.1), "ann.f04", "confidence"),
    ("confidence_nan", _set("facts", "ann.f04", "confidence", float("nan")), "ann.f04", "confidence"),
    (
        "unknown_attack_vector",
        _set("questions", "ann_q01", "attack_vector", "AV10_time_travel"),
        "ann_q01",
        "attack_vector",
    ),
    ("bare_attack_vector", _set("questions", "ann_q01", "attack_vector", "AV1"), "ann_q01", "attack_vector"),
    ("unknown_intent", _set("questions", "ann_q01", "intent", "present"), "ann_q01", "intent"),
    ("unknown_fact_role", _set("facts", "ann.f01", "role", "obsolete"), "ann.f01", "role"),
    ("unknown_turn_role", _set("turns", "ann.s02.t01", "role", "system"), "ann.s02.t01", "role"),
    ("unknown_session_type", _set("sessions", 2, "type", "bonus"), "session 2", "type"),
    ("unknown_fact_session", _set("facts", "ann.f01", "session", 9), "ann.f01", "session"),
    ("unknown_turn_session", _set("turns", "ann.s02.t01", "session", 9), "ann.s02.t01", "session"),
    ("duplicate_fact_id", _dup("facts", 0), "ann.f01", "id"),
    ("duplicate_turn_id", _dup("turns", 1), "ann.s02.t02", "id"),
    ("fact_turn_id_clash", _fact_turn_clash, "ann.f01", "id"),
    ("duplicate_question_id", _dup("questions", 1), "ann_q02", "id"),
    ("duplicate_session_id", _dup("sessions", 0), "session 1", "id"),
    ("unsupported_version", lambda o: o.update(version=2), "ann", "version"),
]


def test_mini_suite_is_valid():
    s = parse_suite(_mini(), SOURCE)
    assert s.persona == "ann" and s.path == SOURCE
    assert [f.id for f in s.facts] == ["ann.f01", "ann.f02", "ann.f03", "ann.f04"]
    assert s.asked_at == datetime(2025, 6, 1)


@pytest.mark.parametrize("mutate, item_id, field", [r[1:] for r in RULES], ids=[r[0] for r in RULES])
def test_validation_rule_names_file_id_and_field(mutate, item_id, field):
    obj = _mini()
    mutate(obj)
    with pytest.raises(SuiteError) as info:
        parse_suite(obj, SOURCE)
    msg = str(info.value)
    assert SOURCE in msg, msg
    assert repr(item_id) in msg or item_id in msg, msg
    assert f"'{field}'" in msg, msg


def test_suite_error_is_a_value_error():
    assert issubclass(SuiteError, ValueError)


def test_root_must_be_object():
    with pytest.raises(SuiteError, match=SOURCE):
        parse_suite([1, 2], SOURCE)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- normalisation


def test_links_normalised_to_tuples():
    s = parse_suite(_mini(), SOURCE)
    assert s.facts[1].links == {"supersedes": ("ann.f01",)}
    assert s.facts[3].links == {"tentative_for": ("ann.f03", "ann.f01")}
    assert s.facts[0].links == {}


def test_dates_and_datetimes():
    s = parse_suite(_mini(), SOURCE)
    assert s.facts[0].said_at == datetime(2025, 1, 1)
    assert s.facts[2].event_time == datetime(2025, 5, 1, 14, 0, 0)
    assert s.facts[0].event_time is None


def test_aware_datetime_is_converted_to_naive_utc():
    obj = _mini()
    _by_id(obj, "facts", "ann.f03")["event_time"] = "2025-05-01T16:00:00+02:00"
    s = parse_suite(obj, SOURCE)
    assert s.facts[2].event_time == datetime(2025, 5, 1, 14, 0, 0)


def test_extra_keys_kept_but_not_fields():
    s = parse_suite(_mini(), SOURCE)
    assert s.facts[0].extra == {"source_field": "x"}
    assert s.facts[3].extra == {"evidence": ["ann.s03.t01"]}
    assert s.questions[0].extra == {"temporal_notes": "kept"}
    assert s.extra == {"suite": "test", "version": 1}


def test_round_trip_mini():
    obj = _mini()
    s = parse_suite(obj, SOURCE)
    assert suite_to_dict(s) == obj
    assert parse_suite(suite_to_dict(s), SOURCE) == s


def test_parse_does_not_mutate_input():
    obj = _mini()
    before = copy.deepcopy(obj)
    parse_suite(obj, SOURCE)
    assert obj == before


def test_attack_vector_key():
    assert attack_vector_key("AV1_superseded_preference") == "AV1"
    assert attack_vector_key("AV9") == "AV9"
    assert [attack_vector_key(a) for a in ATTACK_VECTORS] == [f"AV{i}" for i in range(1, 10)]
    for bad in ("AV10_x", "AV0", "av1_x", "XAV1", ""):
        with pytest.raises(ValueError, match="attack_vector"):
            attack_vector_key(bad)


# --------------------------------------------------------------------------- corpus


def test_corpus_is_facts_plus_filler_user_turns():
    items = corpus(parse_suite(_mini(), SOURCE))
    assert [(i.id, i.kind) for i in items] == [
        ("ann.f01", "fact"),
        ("ann.f02", "fact"),
        ("ann.f03", "fact"),
        ("ann.f04", "fact"),
        ("ann.s02.t01", "turn"),
    ]
    fact = items[1]
    assert fact.categories == {"PREFERENCES_HABITS": 0.7, "HEALTH_WELLBEING": 0.3}
    assert fact.slot == "diet" and fact.confidence == 1.0 and fact.numeric is False
    assert fact.links == {"supersedes": ("ann.f01",)} and fact.session == 3
    turn = items[-1]
    assert turn.session == 2 and turn.said_at == datetime(2025, 2, 1)
    assert turn.categories == {} and turn.slot is None and turn.confidence is None and turn.event_time is None


def test_corpus_carries_no_ground_truth():
    names = set(CorpusItem.__dataclass_fields__)
    assert not names & {"role", "source", "extra"}


# --------------------------------------------------------------------------- files


def test_load_suite_and_folder(tmp_path):
    obj = _mini()
    (tmp_path / "b.json").write_text(json.dumps(obj))
    obj2 = _mini()
    obj2["persona"] = "aaron"
    (tmp_path / "a.json").write_text(json.dumps(obj2))
    (tmp_path / "notes.txt").write_text("ignored")
    suites = load_suites(tmp_path)
    assert [s.persona for s in suites] == ["aaron", "ann"]  # sorted by file name
    assert load_suite(tmp_path / "b.json").path == str(tmp_path / "b.json")
    assert [s.persona for s in load_suites(tmp_path / "b.json")] == ["ann"]


def test_load_errors_name_the_file(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text("{not json")
    with pytest.raises(SuiteError, match="broken.json"):
        load_suite(bad)
    obj = _mini()
    obj["facts"][0]["confidence"] = 2.0
    p = tmp_path / "ann.json"
    p.write_text(json.dumps(obj))
    with pytest.raises(SuiteError, match=r"ann\.json.*ann\.f01.*'confidence'"):
        load_suite(p)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SuiteError, match="no \\*.json"):
        load_suites(empty)
    with pytest.raises(FileNotFoundError):
        load_suites(tmp_path / "absent")


def test_duplicate_persona_across_files(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(_mini()))
    (tmp_path / "b.json").write_text(json.dumps(_mini()))
    with pytest.raises(SuiteError, match=r"b\.json.*'persona'"):
        load_suites(tmp_path)


# --------------------------------------------------------------------------- properties

_CATS = st.lists(st.sampled_from(frcore.CATEGORY_NAMES), min_size=1, max_size=4, unique=True)


@given(cats=_CATS, raw=st.lists(st.floats(0.01, 1.0), min_size=4, max_size=4))
def test_normalised_weights_accepted(cats, raw):
    total = sum(raw[: len(cats)])
    obj = _mini()
    _by_id(obj, "facts", "ann.f01")["categories"] = {c: w / total for c, w in zip(cats, raw)}
    s = parse_suite(obj, SOURCE)
    assert abs(sum(s.facts[0].categories.values()) - 1.0) <= 1e-9


@given(cats=_CATS, raw=st.lists(st.floats(0.01, 1.0), min_size=4, max_size=4), off=st.floats(0.0011, 0.5))
def test_weights_off_by_more_than_tolerance_rejected(cats, raw, off):
    total = sum(raw[: len(cats)])
    weights = {c: w / total * (1.0 - off) for c, w in zip(cats, raw)}
    obj = _mini()
    _by_id(obj, "facts", "ann.f01")["categories"] = weights
    with pytest.raises(SuiteError, match=r"ann\.f01.*'categories'"):
        parse_suite(obj, SOURCE)


@given(
    n_links=st.integers(1, 3),
    hours=st.integers(0, 23),
    conf=st.floats(0.0, 1.0),
    numeric=st.booleans(),
)
def test_round_trip_property(n_links, hours, conf, numeric):
    obj = _mini()
    f = _by_id(obj, "facts", "ann.f04")
    targets = ["ann.f01", "ann.f02", "ann.f03"][:n_links]
    f["links"] = {"contradicts": targets[0] if n_links == 1 else targets}
    f["confidence"] = conf
    f["numeric"] = numeric
    f["said_at"] = f"2025-03-01T{hours:02d}:30:00"
    s = parse_suite(obj, SOURCE)
    assert suite_to_dict(s) == obj
    assert parse_suite(suite_to_dict(s), SOURCE) == s


# --------------------------------------------------------------------------- real data

needs_data = pytest.mark.skipif(
    not DATA.is_dir(), reason=f"LifeMemBench development split not found at {DATA} (../shared/data/lifemembench)"
)


@pytest.fixture(scope="module")
def real_suites():
    return load_suites(DATA)


@needs_data
def test_every_real_file_loads(real_suites):
    files = sorted(p.name for p in DATA.glob("*.json"))
    assert len(files) == 20
    assert [Path(s.path).name for s in real_suites] == files
    assert sum(len(s.questions) for s in real_suites) == sum(
        len(json.loads(p.read_text())["questions"]) for p in DATA.glob("*.json")
    )


@needs_data
def test_real_files_round_trip(real_suites):
    for s in real_suites:
        raw = json.loads(Path(s.path).read_text())
        assert suite_to_dict(s) == raw, s.path


@needs_data
def test_real_corpus_matches_definition(real_suites):
    for s in real_suites:
        raw = json.loads(Path(s.path).read_text())
        filler = {x["id"] for x in raw["sessions"] if x["type"] == "filler"}
        expected = [f["id"] for f in raw["facts"]] + [
            t["id"] for t in raw["turns"] if t["role"] == "user" and t["session"] in filler
        ]
        assert [i.id for i in corpus(s)] == expected, s.path
        assert len(set(expected)) == len(expected)
