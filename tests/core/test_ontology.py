"""Facts of the 10 + 1 behavioral ontology table (SPEC §2)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import frcore as fr
from frcore._ontology import ANTICIPATION, GLOBAL_ALPHA_DEFAULT, UNIFORM_RATE_PER_HOUR


def test_eleven_rows_in_enum_order():
    assert len(fr.ONTOLOGY) == 11 == fr.N_CATEGORIES
    assert [int(r.category) for r in fr.ONTOLOGY] == list(range(11))
    assert fr.CATEGORY_NAMES[-1] == "OTHER"


def test_rate_spread_is_5_3x():
    rates = [r.rate_per_hour for r in fr.ONTOLOGY]
    assert max(rates) == 0.008 and min(rates) == 0.0015
    assert round(max(rates) / min(rates), 1) == 5.3


def test_clock_sensitivities_sum_to_one():
    for row in fr.ONTOLOGY:
        assert math.isclose(sum(row.clocks), 1.0, abs_tol=1e-12), row.category.name
        assert all(s >= 0 for s in row.clocks)


def test_expiring_categories_are_logistics_and_obligations():
    expiring = {r.category.name for r in fr.ONTOLOGY if r.expires_at_event}
    assert expiring == {"LOGISTICAL_CONTEXT", "OBLIGATIONS"}


#: Half-lives in hours, hand computed from the table's rates (ln 2 / λ: 0.693147 / 0.0015 = 462.1, …).
HALF_LIVES_H = {
    "IDENTITY_SELF_CONCEPT": 462.1,
    "RELATIONAL_BONDS": 462.1,
    "INTELLECTUAL_INTERESTS": 346.6,
    "HEALTH_WELLBEING": 277.3,
    "PROJECTS_ENDEAVORS": 277.3,
    "HOBBIES_RECREATION": 198.0,
    "PREFERENCES_HABITS": 138.6,
    "FINANCIAL_MATERIAL": 126.0,
    "OBLIGATIONS": 115.5,
    "LOGISTICAL_CONTEXT": 86.6,
    "OTHER": 138.6,
}


@pytest.mark.parametrize("row", fr.ONTOLOGY, ids=lambda r: r.category.name)
def test_half_life_halves_the_kernels_activation(row):
    """``half_life_hours`` is the effective age at which the score's decay halves an edge's
    activation (a one-category edge, every clock reading that age, no event) — read from the
    kernel, not from the property's formula — and twice it quarters it; the values are the hand
    computed ones."""
    w = np.zeros(fr.N_CATEGORIES, np.float32)
    w[int(row.category)] = 1.0

    def act(t: float) -> float:
        ages = np.array([t, t, t / fr.HOURS_PER_MESSAGE], np.float32)  # clock sensitivities sum to 1
        a, _, age = fr.activation(fr.default_params(), w, ages, np.bool_(False), np.float32(0.0))
        assert math.isclose(float(age), t, rel_tol=1e-6)
        return float(a)

    t = row.half_life_hours
    assert act(0.0) == 1.0
    assert math.isclose(act(t), 0.5, rel_tol=1e-5)
    assert math.isclose(act(2 * t), 0.25, rel_tol=1e-5)
    assert round(t, 1) == HALF_LIVES_H[row.category.name]


def test_paper_constants():
    assert fr.COGNITIVE_RATES_PER_HOUR == (0.050, 0.005, 0.003)
    assert UNIFORM_RATE_PER_HOUR == 0.003 and GLOBAL_ALPHA_DEFAULT == 0.1
    assert (ANTICIPATION.window_hours, ANTICIPATION.start, ANTICIPATION.peak) == (168.0, 0.3, 3.0)
    assert (ANTICIPATION.post_decay_per_hour, ANTICIPATION.staleness_floor) == (0.15, 0.01)
    assert fr.HOURS_PER_MESSAGE == 0.5 and fr.SUPERSESSION_CONFIDENCE_THRESHOLD == 0.7


def test_alpha_and_floors_in_unit_interval():
    for row in fr.ONTOLOGY:
        assert 0 <= row.alpha <= 1 and 0 <= row.floor <= 1, row.category.name


def test_array_view_matches_rows_and_is_read_only():
    o = fr.as_arrays()
    np.testing.assert_array_equal(o.rates, [r.rate_per_hour for r in fr.ONTOLOGY])
    np.testing.assert_array_equal(o.clocks, [r.clocks for r in fr.ONTOLOGY])
    assert o.clocks.shape == (11, 3)
    for name, a in zip(o._fields, o):
        assert not a.flags.writeable, name
        with pytest.raises(ValueError):
            a[0] = a[0]
    assert fr.as_arrays() is o  # derived once


def test_default_params_come_from_the_table():
    """float32 leaves (x64 is off) equal the table's numbers rounded to float32."""
    p = fr.params_to_numpy(fr.default_params())
    o = fr.as_arrays()
    f32 = lambda a: np.asarray(a, np.float32).astype(np.float64)  # noqa: E731
    np.testing.assert_array_equal(p.rates, f32(o.rates))
    np.testing.assert_array_equal(p.alpha, f32(o.alpha))
    np.testing.assert_array_equal(p.floors, f32(o.floors))
    np.testing.assert_array_equal(p.clocks, f32(o.clocks))
    np.testing.assert_array_equal(p.cognitive_rates, f32(np.asarray(fr.COGNITIVE_RATES_PER_HOUR)[o.cognitive_type]))


@pytest.mark.parametrize("name", list(fr.CATEGORY_NAMES))
def test_category_index_round_trip(name):
    assert fr.CATEGORY_NAMES[fr.category_index(name)] == name


def test_unknown_category_raises_naming_it():
    with pytest.raises(ValueError, match=r"unknown category 'HOBBIES'"):
        fr.category_index("HOBBIES")


def test_compatibility_table_facts():
    """SPEC §3: retracted admitted by no intent; historical/change_history add superseded and expired."""
    t = fr.COMPATIBLE
    assert not t[:, fr.State.RETRACTED].any()
    assert t[fr.Intent.HISTORICAL, fr.State.SUPERSEDED] and t[fr.Intent.HISTORICAL, fr.State.EXPIRED]
    assert not t[fr.Intent.CURRENT, fr.State.SUPERSEDED] and not t[fr.Intent.CURRENT, fr.State.EXPIRED]
    assert not t.flags.writeable


#: The paper's released ontology table, written out as literal data (never read from frcore):
#: category → (λ per hour, α_c, floor F_c, clock sensitivities (absolute, relative, conversational),
#: expires at its event time). A typo in any cell of frcore's table fails this test.
PAPER_TABLE = {
    "IDENTITY_SELF_CONCEPT": (0.0015, 0.10, 0.95, (0.4, 0.3, 0.3), False),
    "RELATIONAL_BONDS": (0.0015, 0.10, 0.95, (0.2, 0.6, 0.2), False),
    "INTELLECTUAL_INTERESTS": (0.0020, 0.15, 0.90, (0.3, 0.4, 0.3), False),
    "HEALTH_WELLBEING": (0.0025, 0.10, 0.95, (0.5, 0.3, 0.2), False),
    "PROJECTS_ENDEAVORS": (0.0025, 0.30, 0.75, (0.5, 0.2, 0.3), False),
    "HOBBIES_RECREATION": (0.0035, 0.20, 0.92, (0.3, 0.5, 0.2), False),
    "PREFERENCES_HABITS": (0.0050, 0.20, 0.85, (0.6, 0.2, 0.2), False),
    "FINANCIAL_MATERIAL": (0.0055, 0.05, 0.97, (0.5, 0.3, 0.2), False),
    "OBLIGATIONS": (0.0060, 0.35, 0.70, (0.7, 0.1, 0.2), True),
    "LOGISTICAL_CONTEXT": (0.0080, 0.40, 0.00, (0.8, 0.1, 0.1), True),
    "OTHER": (0.0050, 0.10, 0.00, (0.4, 0.3, 0.3), False),
}
#: our cognitive-type assignment for the 3-partition ablation (documented as ours)
COGNITIVE = {
    "IDENTITY_SELF_CONCEPT": "semantic",
    "RELATIONAL_BONDS": "semantic",
    "INTELLECTUAL_INTERESTS": "semantic",
    "HEALTH_WELLBEING": "semantic",
    "PROJECTS_ENDEAVORS": "episodic",
    "HOBBIES_RECREATION": "procedural",
    "PREFERENCES_HABITS": "semantic",
    "FINANCIAL_MATERIAL": "semantic",
    "OBLIGATIONS": "episodic",
    "LOGISTICAL_CONTEXT": "episodic",
    "OTHER": "semantic",
}


@pytest.mark.parametrize("name", list(PAPER_TABLE))
def test_ontology_row_is_the_papers(name):
    row = next(r for r in fr.ONTOLOGY if r.category.name == name)
    rate, alpha, floor, clocks, expires = PAPER_TABLE[name]
    assert (row.rate_per_hour, row.alpha, row.floor, tuple(row.clocks), row.expires_at_event) == (
        rate,
        alpha,
        floor,
        clocks,
        expires,
    )
    assert row.cognitive_type.name.lower() == COGNITIVE[name]


def test_table_order_and_default_params_follow_the_table():
    assert list(fr.CATEGORY_NAMES) == list(PAPER_TABLE)
    p = fr.params_to_numpy(fr.default_params())
    np.testing.assert_allclose(p.rates, [v[0] for v in PAPER_TABLE.values()], rtol=1e-6)
    np.testing.assert_allclose(p.alpha, [v[1] for v in PAPER_TABLE.values()], rtol=1e-6)
    np.testing.assert_allclose(p.floors, [v[2] for v in PAPER_TABLE.values()], rtol=1e-6)
    np.testing.assert_allclose(p.clocks, [v[3] for v in PAPER_TABLE.values()], rtol=1e-6)
