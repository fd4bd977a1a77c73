"""Hypothesis strategies for the lifecycle score: candidates, queries, parameters.

Shared with other test modules. Floats are bounded and float32-representable (``width=32``)
so that the JAX (float32) and twin (float64) sides see identical inputs. Weights come from
Dirichlet-like draws over a random support, plus one-hot rows and exact ties; ages reach
~2 years; events fall before / inside / at the edges of / after the anticipation window.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import frcore as fr

C = fr.N_CATEGORIES
WINDOW = fr.ANTICIPATION.window_hours
TWO_YEARS_H = 2 * 365 * 24.0


def f32(lo: float, hi: float) -> st.SearchStrategy[float]:
    """Bounded, finite, float32-representable floats."""
    lo32, hi32 = float(np.float32(lo)), float(np.float32(hi))
    return st.floats(lo32, hi32, allow_nan=False, allow_infinity=False, width=32)


@st.composite
def weight_rows(draw, mode: str | None = None) -> np.ndarray:
    """One row of soft category weights (C,), ≥ 0, summing to 1.

    Modes: ``one_hot``; ``tie`` (2–4 categories with exactly equal weight); ``dirichlet``
    (positive draws over a random support, normalized).
    """
    mode = mode or draw(st.sampled_from(["one_hot", "tie", "dirichlet", "dirichlet"]))
    w = np.zeros(C)
    if mode == "one_hot":
        w[draw(st.integers(0, C - 1))] = 1.0
    elif mode == "tie":
        support = draw(st.lists(st.integers(0, C - 1), min_size=2, max_size=4, unique=True))
        w[support] = 1.0 / len(support)
    else:
        support = draw(st.lists(st.integers(0, C - 1), min_size=1, max_size=C, unique=True))
        vals = draw(st.lists(f32(0.01, 1.0), min_size=len(support), max_size=len(support)))
        w[support] = vals
        w /= w.sum()
    return w.astype(np.float32).astype(np.float64)


SIM = st.one_of(
    f32(0.0, 1.0), st.sampled_from([0.0, 1.0, 0.95, 0.85, 0.9499, 0.8499, 0.5]).map(lambda x: float(np.float32(x)))
)


@st.composite
def hours_to_event(draw) -> float:
    """Event time − query time in hours: no event (NaN), beyond the window, inside it, at its
    edges, or in the past (including past the staleness floor)."""
    kind = draw(st.sampled_from(["none", "none", "beyond", "inside", "edge", "past", "long_past"]))
    if kind == "none":
        return float("nan")
    if kind == "beyond":
        return draw(f32(WINDOW + 1.0, 5000.0))
    if kind == "inside":
        return draw(f32(0.0, WINDOW))
    if kind == "edge":
        return draw(st.sampled_from([0.0, WINDOW, -0.0, 1e-3, -1e-3]))
    if kind == "past":
        return -draw(f32(1e-3, 40.0))
    return -draw(f32(40.0, TWO_YEARS_H))


@st.composite
def candidate_arrays(draw, min_k: int = 1, max_k: int = 12, weight_mode: str | None = None) -> dict:
    """Raw per-edge arrays for :func:`frcore.make_candidates` (k rows, every state, typed or not)."""
    k = draw(st.integers(min_k, max_k))
    rows = range(k)
    return dict(
        sim=np.array([draw(SIM) for _ in rows]),
        weights=np.stack([draw(weight_rows(weight_mode)) for _ in rows]),
        ages=np.array(
            [[draw(f32(0.0, TWO_YEARS_H)), draw(f32(0.0, TWO_YEARS_H)), draw(f32(0.0, 5000.0))] for _ in rows]
        ).reshape(k, 3),
        state=np.array([draw(st.sampled_from(list(fr.State))) for _ in rows], dtype=np.int32),
        hours_to_event=np.array([draw(hours_to_event()) for _ in rows]),
        confidence=np.array(
            [draw(st.one_of(f32(0.0, 1.0), st.sampled_from([0.0, 1e-4, 0.4, 0.7, 1.0]))) for _ in rows]
        ),
        numeric=np.array([draw(st.booleans()) for _ in rows]),
        typed=np.array([draw(st.booleans()) for _ in rows]),
    )


@st.composite
def candidates(
    draw,
    min_k: int = 1,
    max_k: int = 12,
    pad: bool | None = None,
    weight_mode: str | None = None,
    pad_to: int | None = None,
):
    """A validated :class:`frcore.Candidates` (float32), optionally padded (to ``pad_to`` or to
    its bucket)."""
    raw = draw(candidate_arrays(min_k, max_k, weight_mode))
    pad = draw(st.booleans()) if pad is None else pad
    k = raw["sim"].shape[0]
    return fr.make_candidates(**raw, pad_to=(pad_to or fr.bucket_size(k)) if pad else None)


@st.composite
def routing(draw) -> np.ndarray:
    """Category routing weights r (C,) in [0, 1]: none, one category, or several."""
    kind = draw(st.sampled_from(["none", "one", "many"]))
    r = np.zeros(C)
    if kind == "one":
        r[draw(st.integers(0, C - 1))] = draw(f32(0.0, 1.0))
    elif kind == "many":
        r[:] = draw(st.lists(f32(0.0, 1.0), min_size=C, max_size=C))
    return r


@st.composite
def queries(draw, intent=None):
    """A validated :class:`frcore.Query` (every intent)."""
    i = draw(st.sampled_from(list(fr.Intent))) if intent is None else intent
    return fr.make_query(int(i), draw(routing()))


@st.composite
def params(draw):
    """Valid parameter sets around the released ones: rates x[0.25, 4], α and floors in [0, 1]."""
    p = fr.default_params()
    mult = np.array(draw(st.lists(f32(0.25, 4.0), min_size=C, max_size=C)))
    alpha = np.array(draw(st.lists(f32(0.0, 1.0), min_size=C, max_size=C)))
    floors = np.array(draw(st.lists(f32(0.0, 1.0), min_size=C, max_size=C)))
    return fr.replace_params(
        p,
        rates=np.asarray(p.rates) * mult,
        alpha=alpha,
        floors=floors,
        global_alpha=draw(f32(0.0, 1.0)),
        routing_boost=draw(f32(0.0, 2.0)),
        numeric_exempt_weight=draw(st.one_of(st.just(float(p.numeric_exempt_weight)), f32(0.0, 1.0))),
    )


CONFIGS: dict[str, fr.ScoreConfig] = {
    **fr.ABLATIONS,
    "no-numeric-exemption": fr.ScoreConfig(numeric_exemption=False),
    "no-numeric-rescue": fr.ScoreConfig(numeric_rescue=False),
    "no-supersession-weight": fr.ScoreConfig(supersession_weight=False),
    "untyped-upcoming": fr.ScoreConfig(untyped_upcoming=True),
    "everything-off": fr.ScoreConfig(
        decay="uniform",
        global_alpha=True,
        floors=False,
        numeric_rescue=False,
        anticipation=False,
        lifecycle=False,
        routing=False,
        supersession_weight=False,
        numeric_exemption=False,
    ),
}
