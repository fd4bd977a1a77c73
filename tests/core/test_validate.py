"""Boundary validation: bad input raises ValueError naming the field and the offending index."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frcore as fr

C = fr.N_CATEGORIES


def good(k: int = 4) -> dict:
    w = np.zeros((k, C))
    w[:, 0] = 1.0
    return dict(
        sim=np.full(k, 0.5),
        weights=w,
        ages=np.ones((k, 3)),
        state=np.zeros(k, np.int32),
        hours_to_event=np.full(k, np.nan),
        confidence=np.ones(k),
        numeric=np.zeros(k, bool),
    )


def with_(k=4, **changes) -> dict:
    d = good(k)
    for name, (idx, value) in changes.items():
        d[name] = np.array(d[name], dtype=np.asarray(d[name]).dtype if name not in ("state",) else np.int64)
        d[name][idx] = value
    return d


def test_good_input_passes():
    c = fr.make_candidates(**good())
    assert c.sim.shape == (4,)


@pytest.mark.parametrize(
    "field, idx, value, pattern",
    [
        ("sim", 2, np.nan, r"sim: NaN at index 2"),
        ("sim", 1, 1.5, r"sim: value 1.5 at index 1 outside \[0, 1\]"),
        ("sim", 3, -0.2, r"sim: value -0.2 at index 3 outside \[0, 1\]"),
        ("sim", 0, np.inf, r"sim: value inf at index 0"),
        ("ages", (2, 1), -1.0, r"ages: negative or non-finite age at index \(2, 1\)"),
        ("ages", (1, 0), np.inf, r"ages: negative or non-finite age at index \(1, 0\)"),
        ("ages", (3, 2), np.nan, r"ages: NaN at index \(3, 2\)"),
        ("weights", (1, 3), -0.1, r"weights: negative or non-finite weight at index \(1, 3\)"),
        ("weights", (2, 0), np.nan, r"weights: NaN at index \(2, 0\)"),
        ("state", 3, 7, r"state: unknown state 7 at index 3"),
        ("state", 0, -1, r"state: unknown state -1 at index 0"),
        ("confidence", 2, 1.2, r"confidence: value 1.2 at index 2 outside \[0, 1\]"),
        ("confidence", 1, np.nan, r"confidence: NaN at index 1"),
        ("hours_to_event", 1, np.inf, r"hours_to_event: infinite at index 1"),
    ],
)
def test_bad_value_names_field_and_index(field, idx, value, pattern):
    with pytest.raises(ValueError, match=pattern):
        fr.make_candidates(**with_(**{field: (idx, value)}))


@settings(max_examples=25)
@given(k=st.integers(2, 10), data=st.data())
def test_weights_not_summing_to_one_name_the_row(k, data):
    i = data.draw(st.integers(0, k - 1))
    off = data.draw(st.floats(0.01, 5.0))
    d = good(k)
    d["weights"][i, 1] += off
    with pytest.raises(ValueError, match=rf"weights: row {i} sums to"):
        fr.make_candidates(**d)


@settings(max_examples=25)
@given(k=st.integers(1, 10), data=st.data())
def test_out_of_range_similarity_names_the_index(k, data):
    i = data.draw(st.integers(0, k - 1))
    v = data.draw(st.one_of(st.floats(1.001, 1e6), st.floats(-1e6, -0.001)))
    d = good(k)
    d["sim"][i] = v
    with pytest.raises(ValueError, match=rf"sim: value .* at index {i} outside"):
        fr.make_candidates(**d)


def test_tiny_similarity_excursions_are_clipped_not_rejected():
    d = good(2)
    d["sim"] = np.array([1 + 1e-7, -1e-7])
    np.testing.assert_array_equal(np.asarray(fr.make_candidates(**d).sim), [1.0, 0.0])


@pytest.mark.parametrize(
    "field, value, pattern",
    [
        ("weights", np.full((4, C - 1), 1.0 / (C - 1)), r"weights: expected shape \(4, 11\), got \(4, 10\)"),
        ("weights", np.full((3, C), 1.0 / C), r"weights: expected shape \(4, 11\), got \(3, 11\)"),
        ("ages", np.ones((4, 2)), r"ages: expected shape \(4, 3\), got \(4, 2\)"),
        ("state", np.zeros(5, np.int32), r"state: expected shape \(4,\), got \(5,\)"),
        ("hours_to_event", np.zeros(3), r"hours_to_event: expected shape \(4,\), got \(3,\)"),
        ("confidence", np.ones(2), r"confidence: expected shape \(4,\), got \(2,\)"),
        ("numeric", np.zeros(6, bool), r"numeric: expected shape \(4,\), got \(6,\)"),
        ("sim", np.ones((4, 1)) * 0.5, r"sim: expected shape \(k,\), got \(4, 1\)"),
    ],
)
def test_mismatched_shapes_name_the_field(field, value, pattern):
    d = good()
    d[field] = value
    with pytest.raises(ValueError, match=pattern):
        fr.make_candidates(**d)


def test_unknown_category_names_the_edge_index():
    cats = [{"OBLIGATIONS": 1.0}, {"OBLIGATIONS": 0.5, "NOT_A_CATEGORY": 0.5}]
    with pytest.raises(ValueError, match=r"categories: index 1: unknown category 'NOT_A_CATEGORY'"):
        fr.make_candidates([0.5, 0.5], cats, np.ones((2, 3)))


def test_empty_category_mapping_names_the_index():
    with pytest.raises(ValueError, match=r"categories: empty at index 1"):
        fr.make_candidates([0.5, 0.5], [{"OTHER": 1.0}, {}], np.ones((2, 3)))


def test_category_mappings_are_accepted():
    c = fr.make_candidates([0.5], [{"OBLIGATIONS": 0.25, "LOGISTICAL_CONTEXT": 0.75}], np.ones((1, 3)))
    w = np.asarray(c.weights)[0]
    assert w[fr.Category.OBLIGATIONS] == 0.25 and w[fr.Category.LOGISTICAL_CONTEXT] == 0.75


@pytest.mark.parametrize("intent", ["sometime", 17, -1, "", "CURRENTLY"])
def test_unknown_intent_raises(intent):
    with pytest.raises(ValueError, match=r"intent: "):
        fr.make_query(intent)


@pytest.mark.parametrize("intent", ["current", "HISTORICAL", " upcoming ", 2, fr.Intent.BROAD])
def test_known_intents_pass(intent):
    assert 0 <= int(fr.make_query(intent).intent) < len(fr.Intent)


@pytest.mark.parametrize(
    "routing, pattern",
    [
        ({"NOPE": 1.0}, r"routing: unknown category 'NOPE'"),
        ({"OBLIGATIONS": 1.5}, r"routing: weight 1.5 for OBLIGATIONS \(index 8\) outside \[0, 1\]"),
        (np.full(C, -0.5), r"routing: weight -0.5 for IDENTITY_SELF_CONCEPT \(index 0\)"),
        (np.ones(C - 1), r"routing: expected shape \(11,\), got \(10,\)"),
        (np.r_[np.ones(3), np.nan, np.ones(C - 4)], r"routing: NaN at index 3"),
    ],
)
def test_bad_routing_names_the_category(routing, pattern):
    with pytest.raises(ValueError, match=pattern):
        fr.make_query("current", routing)


def test_pad_to_smaller_than_k_raises():
    with pytest.raises(ValueError, match=r"pad_to: 2 is smaller than the number of candidates 4"):
        fr.make_candidates(**good(), pad_to=2)


def test_bucket_size_beyond_largest_raises():
    with pytest.raises(ValueError, match=r"k: .* exceeds the largest bucket"):
        fr.bucket_size(2**21)


@settings(max_examples=50)
@given(k=st.integers(1, 2**20))
def test_bucket_size_is_the_smallest_power_of_two_at_least_k_and_8(k):
    b = fr.bucket_size(k)
    assert b >= k and b >= 8 and (b & (b - 1)) == 0
    assert b == 8 or b // 2 < k


def test_stack_candidates_of_different_lengths_raises():
    a = fr.make_candidates(**good(4))
    b = fr.make_candidates(**good(3))
    with pytest.raises(ValueError, match=r"stack_candidates: .*different lengths \[3, 4\]"):
        fr.stack_candidates([a, b])


@pytest.mark.parametrize(
    "change, pattern",
    [
        (
            dict(rates=np.r_[np.full(5, 0.002), -0.001, np.full(5, 0.002)]),
            r"^params\.rates\.HOBBIES_RECREATION: must be > 0, got -0\.001$",
        ),
        (
            dict(alpha=np.r_[np.full(3, 0.1), 1.5, np.full(7, 0.1)]),
            r"^params\.alpha\.HEALTH_WELLBEING: must lie in \[0, 1\], got 1\.5$",
        ),
        (dict(clocks=np.full((11, 3), 0.5)), r"^params\.clocks\.IDENTITY_SELF_CONCEPT: the row must sum to 1"),
        (
            dict(clocks=np.r_[np.full((8, 3), 1 / 3), [[1.2, -0.2, 0.0]], np.full((2, 3), 1 / 3)]),
            r"^params\.clocks\.OBLIGATIONS\.session: must be ≥ 0, got -0\.2$",
        ),
        (dict(rates=np.full(10, 0.002)), r"^params\.rates: expected 11 numbers .*, got shape \(10,\)$"),
        (dict(floors=np.r_[np.full(9, 0.5), np.nan, 0.5]), r"^params\.floors\.LOGISTICAL_CONTEXT: not a finite number"),
    ],
)
def test_bad_params_name_the_field_and_category(change, pattern):
    """A bad value names its leaf and category by name (issue 40), never an index."""
    with pytest.raises(ValueError, match=pattern):
        fr.replace_params(fr.default_params(), **change)


def test_unknown_decay_mode_raises():
    with pytest.raises(ValueError, match=r"ScoreConfig.decay: unknown mode 'geometric'"):
        fr.ScoreConfig(decay="geometric")
