"""The parameter table (frcore._params.PARAM_TABLE) is what validation, the parameter file and
packing read: its shapes, ranges and places, checked against hand counts and both validators."""

from __future__ import annotations

import numpy as np
import pytest

import frcore
from frcore._packed import pack_params
from frcore._params import PARAM_TABLE, param_offset
from frcore._params_io import ParamsError, check_leaves


def test_floor_threshold_place_in_the_packed_vector():
    # 5 per-category leaves (4 of 11 values, clocks 33) = 77, then 8 scalars before floor_sim_threshold
    assert param_offset("floor_sim_threshold") == 85
    assert pack_params(frcore.default_params())[85] == np.float32(0.95)
    assert param_offset("rates") == 0 and param_offset("numeric_exempt_weight") == 85 + 4


@pytest.mark.parametrize("field", [f for f in PARAM_TABLE if f.range in ("> 0", "[0, 1]")], ids=lambda f: f.name)
def test_both_validators_enforce_the_table_ranges(field):
    bad = 0.0 if field.range == "> 0" else 1.5
    base = frcore.params_to_numpy(frcore.default_params())
    leaf = np.full(field.shape, bad)
    with pytest.raises(ValueError, match=f"params.{field.name}"):
        frcore.validate_params(base._replace(**{field.name: leaf}))
    leaves = {k: np.asarray(v, dtype=np.float64) for k, v in base._asdict().items()} | {field.name: leaf}
    with pytest.raises(ParamsError, match=f"params.{field.name}"):
        check_leaves(leaves)


def test_unconstrained_fields_accept_any_finite_number():
    base = frcore.params_to_numpy(frcore.default_params())
    for field in PARAM_TABLE:
        if field.range == "":
            frcore.validate_params(base._replace(**{field.name: np.asarray(-3.0)}))


def test_ranges_as_documented():
    """docs/score.md's constraints: rates, cognitive rates, the uniform rate and the anticipation
    window > 0; α, floors, the global α and ω_num in [0, 1]; clocks ≥ 0 with rows summing to 1."""
    by_range = {r: [f.name for f in PARAM_TABLE if f.range == r] for r in ("> 0", "[0, 1]", "≥ 0, rows sum to 1")}
    assert by_range == {
        "> 0": ["rates", "cognitive_rates", "uniform_rate", "antic_window"],
        "[0, 1]": ["alpha", "floors", "global_alpha", "numeric_exempt_weight"],
        "≥ 0, rows sum to 1": ["clocks"],
    }
