"""Score parameters as an immutable pytree (a NamedTuple of numeric leaves).

Closure-captured floats would be compile-time constants; keeping every number a leaf lets a
sweep be one ``vmap`` over stacked parameters (:func:`stack_params`) instead of a recompile per
value. Defaults come from the ontology table only (one source of truth).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ._ontology import (
    ANTICIPATION,
    CATEGORY_NAMES,
    GLOBAL_ALPHA_DEFAULT,
    HOURS_PER_MESSAGE,
    N_CATEGORIES,
    UNIFORM_RATE_PER_HOUR,
    as_arrays,
)
from ._shown import SHOWN_CHARS, shown
from ._types import Leaf

#: Our choice (the paper gives no number): routing term = log(1 + ROUTING_BOOST · Σ_c w_c r_c).
ROUTING_BOOST = 0.5
#: Our choice: floor of the confidence used as the soft-supersession weight (keeps log finite).
MIN_SUPERSESSION_WEIGHT = 1e-3
#: Our choice: blend values are clipped below at this before the log.
MIN_BLEND = 1e-12
#: Our choice: weight ω_num of an edge admitted *only* through the numeric exemption (a
#: superseded or expired numeric edge under an intent that would otherwise mask it). The paper
#: exempts numeric edges from the supersession and expiry filters; kept at full weight they are
#: a main source of staleness (development split, MiniLM: 81.7% pass / 10.1% staleness at
#: ω_num = 1 vs 85.2% / 2.7% at 0.1 — ``fr bench run --suite ../shared/data/lifemembench
#: --systems fr-full --param numeric_exempt_weight=1.0``), so they stay retrievable but rank
#: below comparable live edges: term log ω_num.
NUMERIC_EXEMPT_WEIGHT = 0.1


class LifecycleParams(NamedTuple):
    """All numeric parameters of the lifecycle score (leaves are arrays; stackable)."""

    rates: Leaf  # (C,) λ_c per hour
    alpha: Leaf  # (C,) α_c
    floors: Leaf  # (C,) F_c
    clocks: Leaf  # (C, 3) clock sensitivities (absolute, inter-session, conversational)
    cognitive_rates: Leaf  # (C,) rate of each category's cognitive type
    uniform_rate: Leaf  # () uniform-decay ablation rate
    global_alpha: Leaf  # () global-α ablation value
    hours_per_message: Leaf  # ()
    antic_window: Leaf  # () hours before the event where the ramp starts
    antic_start: Leaf  # ()
    antic_peak: Leaf  # ()
    antic_post_decay: Leaf  # () per hour after the event
    staleness_floor: Leaf  # ()
    floor_sim_threshold: Leaf  # () σ at or above which the semantic floor applies
    numeric_sim_threshold: Leaf  # () σ at or above which numeric rescue applies
    numeric_rescue: Leaf  # () numeric rescue factor (0.95)
    routing_boost: Leaf  # ()
    numeric_exempt_weight: Leaf  # () ω_num


class ParamField(NamedTuple):
    """One row of :data:`PARAM_TABLE`: a leaf of :class:`LifecycleParams`, its shape, the range
    its values must lie in and what it means."""

    name: str
    shape: tuple[int, ...]  # (C,) per category, (C, 3) the clocks, () a scalar
    range: str  # "> 0", "[0, 1]", "≥ 0, rows sum to 1" (the clocks) or "" (any finite number)
    meaning: str


#: The parameter table: every leaf of :class:`LifecycleParams`, in field order. Validation
#: (:func:`validate_params`), the parameter file and its overrides (``frcore._params_io``),
#: packing (``frcore._packed``) and FR-Bank's relative floor read their shapes, ranges and
#: places from it.
PARAM_TABLE: tuple[ParamField, ...] = (
    ParamField("rates", (N_CATEGORIES,), "> 0", "λ_c, decay rate per hour of each category"),
    ParamField("alpha", (N_CATEGORIES,), "[0, 1]", "α_c, weight of activation in the blend"),
    ParamField("floors", (N_CATEGORIES,), "[0, 1]", "F_c, semantic floor of each category"),
    ParamField("clocks", (N_CATEGORIES, 3), "≥ 0, rows sum to 1", "clock sensitivities (abs, session, conv)"),
    ParamField("cognitive_rates", (N_CATEGORIES,), "> 0", "rate of each category's cognitive type"),
    ParamField("uniform_rate", (), "> 0", "uniform-decay ablation rate"),
    ParamField("global_alpha", (), "[0, 1]", "global-α ablation value"),
    ParamField("hours_per_message", (), "", "effective hours of one conversational message"),
    ParamField("antic_window", (), "> 0", "hours before the event where the anticipation ramp starts"),
    ParamField("antic_start", (), "", "anticipation at the start of the ramp"),
    ParamField("antic_peak", (), "", "anticipation at the event"),
    ParamField("antic_post_decay", (), "", "anticipation decay per hour after the event"),
    ParamField("staleness_floor", (), "", "anticipation floor of a past event"),
    ParamField("floor_sim_threshold", (), "", "σ at or above which the semantic floor applies"),
    ParamField("numeric_sim_threshold", (), "", "σ at or above which numeric rescue applies"),
    ParamField("numeric_rescue", (), "", "numeric rescue factor"),
    ParamField("routing_boost", (), "", "β of the routing term log(1 + β Σ_c w_c r_c)"),
    ParamField("numeric_exempt_weight", (), "[0, 1]", "ω_num, weight of an edge admitted only as numeric"),
)
assert tuple(f.name for f in PARAM_TABLE) == LifecycleParams._fields, "PARAM_TABLE: one row per leaf, in field order"
#: Shape of each leaf, by name.
PARAM_SHAPES: dict[str, tuple[int, ...]] = {f.name: f.shape for f in PARAM_TABLE}
#: Leaves whose values must be > 0, and leaves whose values must lie in [0, 1] (in field order).
POSITIVE_PARAMS: tuple[str, ...] = tuple(f.name for f in PARAM_TABLE if f.range == "> 0")
UNIT_PARAMS: tuple[str, ...] = tuple(f.name for f in PARAM_TABLE if f.range == "[0, 1]")
#: Tolerance on each clock row's sum Σ_k s_ck = 1.
CLOCK_SUM_TOL = 1e-6


def param_offset(name: str) -> int:
    """Place of leaf ``name``'s first value in the packed parameter vector (``frcore._packed``):
    the number of values of the leaves before it."""
    names = [f.name for f in PARAM_TABLE]
    return sum(int(np.prod(f.shape, dtype=np.int64)) for f in PARAM_TABLE[: names.index(name)])


def default_params(dtype=jnp.float32) -> LifecycleParams:
    """The released parameters (SPEC §2–3) as a pytree of ``dtype`` arrays (converted on the
    host and put on the device: no computation to compile)."""
    o = as_arrays()
    f = lambda x: jax.device_put(np.asarray(x, dtype=np.dtype(dtype)))  # noqa: E731
    return LifecycleParams(
        rates=f(o.rates),
        alpha=f(o.alpha),
        floors=f(o.floors),
        clocks=f(o.clocks),
        cognitive_rates=f(o.cognitive_rates),
        uniform_rate=f(UNIFORM_RATE_PER_HOUR),
        global_alpha=f(GLOBAL_ALPHA_DEFAULT),
        hours_per_message=f(HOURS_PER_MESSAGE),
        antic_window=f(ANTICIPATION.window_hours),
        antic_start=f(ANTICIPATION.start),
        antic_peak=f(ANTICIPATION.peak),
        antic_post_decay=f(ANTICIPATION.post_decay_per_hour),
        staleness_floor=f(ANTICIPATION.staleness_floor),
        floor_sim_threshold=f(0.95),
        numeric_sim_threshold=f(0.85),
        numeric_rescue=f(0.95),
        routing_boost=f(ROUTING_BOOST),
        numeric_exempt_weight=f(NUMERIC_EXEMPT_WEIGHT),
    )


def params_to_numpy(params: LifecycleParams) -> LifecycleParams:
    """The same pytree with float64 NumPy leaves (for the reference twin and for files)."""
    return LifecycleParams(*(np.asarray(x, dtype=np.float64) for x in params))


#: Leaves with one value per category (in table order), and their override group names.
CATEGORY_LEAVES = {"rates": "rate", "alpha": "alpha", "floors": "floor", "cognitive_rates": "cognitive_rate"}
#: Clock kinds (columns of ``clocks``).
CLOCK_KINDS = ("abs", "session", "conv")


class ParamsError(ValueError):
    """A malformed parameter file or override; ``field`` names the offending field and
    ``source`` the file or flag it came from (both in the one-line message)."""

    def __init__(self, field: str, problem: str, source: str | None = None):
        self.field, self.problem, self.source = field, problem, source
        named = field if len(field) <= SHOWN_CHARS else shown(field)  # an override NAME=VALUE as given
        super().__init__(f"{source}: {named}: {problem}" if source else f"{named}: {problem}")


def _fmt(v: float) -> str:
    return f"{float(v):.6g}"


def check_leaves(leaves: Mapping[str, np.ndarray], source: str | None = None, prefix: str = "params.") -> None:
    """Check shapes and ranges of float64 leaves, naming the field (and category) of the first
    violation: ``params.alpha.OBLIGATIONS: must lie in [0, 1], got 1.5``."""
    C = N_CATEGORIES
    for name in LifecycleParams._fields:
        v = leaves[name]
        want = PARAM_SHAPES[name]
        if v.shape != want:
            what = {
                (C,): f"{C} numbers (one per category, in table order)",
                (C, 3): f"{C} rows of 3 numbers",
                (): "a number",
            }[want]
            raise ParamsError(prefix + name, f"expected {what}, got shape {v.shape}", source)

    def where(name: str, flat: int) -> str:
        if name in CATEGORY_LEAVES:
            return f"{prefix}{name}.{CATEGORY_NAMES[flat]}"
        if name == "clocks":
            return f"{prefix}clocks.{CATEGORY_NAMES[flat // 3]}.{CLOCK_KINDS[flat % 3]}"
        return prefix + name

    for name in LifecycleParams._fields:
        v = np.atleast_1d(leaves[name]).ravel()
        bad = np.flatnonzero(~np.isfinite(v))
        if bad.size:
            raise ParamsError(where(name, int(bad[0])), f"not a finite number ({v[bad[0]]})", source)
        if name in POSITIVE_PARAMS:
            bad = np.flatnonzero(v <= 0)
            if bad.size:
                raise ParamsError(where(name, int(bad[0])), f"must be > 0, got {_fmt(v[bad[0]])}", source)
        if name in UNIT_PARAMS:
            bad = np.flatnonzero((v < 0) | (v > 1))
            if bad.size:
                raise ParamsError(where(name, int(bad[0])), f"must lie in [0, 1], got {_fmt(v[bad[0]])}", source)
    clocks = leaves["clocks"]
    neg = np.argwhere(clocks < 0)
    if neg.size:
        r, k = (int(x) for x in neg[0])
        raise ParamsError(
            f"{prefix}clocks.{CATEGORY_NAMES[r]}.{CLOCK_KINDS[k]}", f"must be ≥ 0, got {_fmt(clocks[r, k])}", source
        )
    rows = np.flatnonzero(np.abs(clocks.sum(axis=1) - 1.0) > CLOCK_SUM_TOL)
    if rows.size:
        r = int(rows[0])
        raise ParamsError(
            f"{prefix}clocks.{CATEGORY_NAMES[r]}",
            f"the row must sum to 1, got {_fmt(clocks[r].sum())} ({'/'.join(map(_fmt, clocks[r]))})",
            source,
        )


def validate_params(params: LifecycleParams) -> LifecycleParams:
    """Check shapes and ranges at the boundary; a ``ValueError`` (``ParamsError``)
    naming the leaf and, for a per-category value, the category by name, never an index:
    ``params.rates.OTHER: must be > 0, got -0.001``, ``params.clocks.OBLIGATIONS.conv: must be ≥ 0``
    (the rule of a parameter file, :func:`check_leaves`)."""
    check_leaves(params_to_numpy(params)._asdict())
    return params


def replace(params: LifecycleParams, **changes) -> LifecycleParams:
    """A copy with some leaves replaced (validated)."""
    dtype = params.rates.dtype
    new = params._replace(**{k: jnp.asarray(v, dtype=dtype) for k, v in changes.items()})
    return validate_params(new)


def stack_params(params: Sequence[LifecycleParams]) -> LifecycleParams:
    """Stack parameter sets along a new leading axis, for one vmapped sweep call."""
    if not params:
        raise ValueError("stack_params: empty sequence")
    for p in params:
        validate_params(p)
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *params)


def scale_rates(params: LifecycleParams, multipliers) -> LifecycleParams:
    """Multiply each category's rate λ_c by ``multipliers[c]`` (the multiplier sweep)."""
    m = jnp.asarray(multipliers, dtype=params.rates.dtype)
    return replace(params, rates=params.rates * m)
