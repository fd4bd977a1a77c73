"""Rules written once and read by several boundaries: the primary category (the kernel's rule on
the host: FR-Bank's preparation, routing and fact records), the tolerance on Σ_c w_c = 1 (the
score's boundary, FR-Bank's fact schema, LifecycleBench's suite format) and the link kinds (the
fact schema and the suite format)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, strategies as st
from support.suites import SOURCE, _mini

import frcore as fr
from frcore._ontology import CATEGORY_NAMES, N_CATEGORIES, primary_index, primary_name
from frcore._types import LINK_KINDS
from frcore._validate import WEIGHT_SUM_TOL
from frcore.bank import parse_fact
from frcore.bank.records import FactError
from frcore.bench._suite import SuiteError, parse_suite


def _w(**by_name: float) -> list[float]:
    return [by_name.get(name, 0.0) for name in CATEGORY_NAMES]


#: (weights by name, the primary category worked by hand): ties go to the first in table order
#: (IDENTITY_SELF_CONCEPT, RELATIONAL_BONDS, ..., OBLIGATIONS, LOGISTICAL_CONTEXT, OTHER)
PRIMARY_CASES = {
    "single": ({"HEALTH_WELLBEING": 1.0}, "HEALTH_WELLBEING"),
    "largest": ({"OTHER": 0.6, "IDENTITY_SELF_CONCEPT": 0.4}, "OTHER"),
    "tie-first-in-table": ({"OTHER": 0.5, "OBLIGATIONS": 0.5}, "OBLIGATIONS"),
    "three-way-tie": ({"OTHER": 0.25, "LOGISTICAL_CONTEXT": 0.25, "RELATIONAL_BONDS": 0.25}, "RELATIONAL_BONDS"),
    "all-zero": ({}, "IDENTITY_SELF_CONCEPT"),
}


@pytest.mark.parametrize("cats, want", PRIMARY_CASES.values(), ids=PRIMARY_CASES.keys())
def test_primary_index_and_name(cats, want):
    assert int(primary_index(_w(**cats))) == CATEGORY_NAMES.index(want)
    assert primary_name(cats) == want


def test_primary_index_batches_rows():
    rows = [_w(**cats) for cats, _ in PRIMARY_CASES.values()]
    want = [CATEGORY_NAMES.index(name) for _, name in PRIMARY_CASES.values()]
    assert primary_index(np.asarray(rows)).tolist() == want
    assert primary_index(np.zeros((0, N_CATEGORIES))).shape == (0,)


def test_fact_record_primary_category_is_primary_name():
    cats, want = PRIMARY_CASES["tie-first-in-table"]
    fact = parse_fact({"id": "f", "text": "t", "categories": cats, "said_at": "2025-01-01"})
    assert fact.primary_category == want


@given(
    st.lists(
        st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=N_CATEGORIES, max_size=N_CATEGORIES),
        min_size=1,
        max_size=8,
    )
)
def test_primary_index_is_the_kernels_rule(rows):
    """The host rule picks what the kernel's :func:`frcore.primary_category` picks (ties included)."""
    w = np.asarray(rows, dtype=np.float32)
    assert primary_index(w).tolist() == np.asarray(fr.primary_category(w)).tolist()


def _suite_with_weights(cats: dict[str, float]) -> dict:
    doc = copy.deepcopy(_mini())
    doc["facts"][0]["categories"] = cats
    return doc


def _fact_with_weights(cats: dict[str, float]) -> dict:
    return {"id": "f", "text": "t", "categories": cats, "said_at": "2025-01-01"}


#: each boundary that checks Σ_c w_c = 1: a call that raises (a ValueError) when the sum is out of tolerance
BOUNDARIES = {
    "score": lambda cats: fr.make_candidates([0.5], [cats], [[1.0, 1.0, 1.0]], dtype=np.float64, device=False),
    "fact": lambda cats: parse_fact(_fact_with_weights(cats)),
    "suite": lambda cats: parse_suite(_suite_with_weights(cats), SOURCE),
}


@pytest.mark.parametrize("check", BOUNDARIES.values(), ids=BOUNDARIES.keys())
@pytest.mark.parametrize("excess, ok", [(0.5, True), (-0.5, True), (2.0, False), (-2.0, False)])
def test_weight_sum_tolerance_is_shared(check, excess, ok):
    """Every boundary accepts a sum within WEIGHT_SUM_TOL of 1 and rejects one twice as far."""
    cats = {"OTHER": 0.5, "OBLIGATIONS": 0.5 + excess * WEIGHT_SUM_TOL}
    if ok:
        check(cats)
    else:
        with pytest.raises((ValueError, FactError, SuiteError), match="sum"):
            check(cats)


@pytest.mark.parametrize("kind", LINK_KINDS)
def test_link_kinds_are_shared(kind):
    """The fact schema and the suite format accept each link kind and list them in one order."""
    fact = parse_fact(_fact_with_weights({"OTHER": 1.0}) | {"links": {kind: "g"}})
    assert fact.links == {kind: ("g",)}
    doc = _suite_with_weights({"OTHER": 1.0})
    doc["facts"][1]["links"] = {kind: doc["facts"][0]["id"]}
    parse_suite(doc, SOURCE)


def test_unknown_link_kind_lists_the_kinds_in_order():
    listed = "expected one of supersedes, retracts, contradicts, tentative_for"
    with pytest.raises(FactError, match=listed):
        parse_fact(_fact_with_weights({"OTHER": 1.0}) | {"links": {"replaces": "g"}})
    doc = _suite_with_weights({"OTHER": 1.0})
    doc["facts"][1]["links"] = {"replaces": doc["facts"][0]["id"]}
    with pytest.raises(SuiteError, match=listed):
        parse_suite(doc, SOURCE)
