"""Validation at the boundary: array inputs are checked here, once, before any jitted code.

Every error is a ``ValueError`` naming the field and the first offending index.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from ._ontology import CATEGORY_NAMES, N_CATEGORIES, category_index
from ._scoring import Candidates, Query
from ._types import N_STATES, intent_index

#: Tolerance on Σ_c w_c = 1 for an edge's soft category weights: the score's boundary, FR-Bank's
#: fact schema and LifecycleBench's suite format all check against it.
WEIGHT_SUM_TOL = 1e-3
#: Shape buckets for k: candidate counts are padded up to the next bucket so a sweep over k
#: compiles once per bucket, not once per k.
BUCKETS: tuple[int, ...] = tuple(2**i for i in range(3, 21))


def bucket_size(k: int) -> int:
    """Smallest bucket ≥ k (powers of two from 8)."""
    for b in BUCKETS:
        if b >= k:
            return b
    raise ValueError(f"k: {k} candidates exceeds the largest bucket {BUCKETS[-1]}")


def _first_bad(mask: np.ndarray) -> str:
    idx = np.argwhere(mask)[0]
    return str(int(idx[0])) if idx.size == 1 else str(tuple(int(i) for i in idx))


def _as_float(name: str, x, shape: tuple[int, ...] | None = None) -> np.ndarray:
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{name}: not numeric ({e})") from None
    if shape is not None and a.shape != shape:
        raise ValueError(f"{name}: expected shape {shape}, got {a.shape}")
    if np.isnan(a).any():
        raise ValueError(f"{name}: NaN at index {_first_bad(np.isnan(a))}")
    return a


def category_weights_matrix(categories: Sequence[Mapping[str, float]]) -> np.ndarray:
    """Soft weights {CATEGORY: weight} per edge → (k, C) array; unknown names raise."""
    w = np.zeros((len(categories), N_CATEGORIES))
    for i, cats in enumerate(categories):
        if not cats:
            raise ValueError(f"categories: empty at index {i}")
        for name, value in cats.items():
            try:
                w[i, category_index(name)] += float(value)
            except ValueError as e:
                raise ValueError(f"categories: index {i}: {e}") from None
    return w


def make_candidates(
    sim,
    weights,
    ages,
    state=None,
    hours_to_event=None,
    confidence=None,
    numeric=None,
    typed=None,
    *,
    pad_to: int | None = None,
    dtype=jnp.float32,
    device: bool = True,
) -> Candidates:
    """Validate per-edge arrays and build :class:`Candidates` (optionally padded to a bucket).

    Args:
      sim: (k,) cosine similarity σ, each in [0, 1] (clip before calling; values outside
        [-1e-6, 1 + 1e-6] are rejected, tiny excursions are clipped).
      weights: (k, C) soft category weights ≥ 0, rows summing to 1 (±1e-3), or a sequence of
        ``{CATEGORY: weight}`` mappings.
      ages: (k, 3) ages since the edge was said: absolute hours, inter-session hours,
        conversational messages; all ≥ 0.
      state: (k,) int lifecycle states (default all active).
      hours_to_event: (k,) event time − query time in hours; NaN = no event (default none).
      confidence: (k,) in [0, 1] (default 1).
      numeric: (k,) bool (default False).
      typed: (k,) bool, the edge carries lifecycle metadata — an extracted fact, or a slot, an event
        time or a link (default True: every edge typed, so ``upcoming`` needs an event ahead on each).
      pad_to: pad to this many rows (``"bucket"``-style: pass :func:`bucket_size`\\ (k)).
      device: return device arrays (default) or the validated host (NumPy) arrays.
    """
    s = _as_float("sim", sim)
    if s.ndim != 1:
        raise ValueError(f"sim: expected shape (k,), got {s.shape}")
    k = s.shape[0]
    bad = (s < -1e-6) | (s > 1 + 1e-6) | ~np.isfinite(s)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"sim: value {s[i]} at index {i} outside [0, 1]")
    s = np.clip(s, 0.0, 1.0)

    if len(np.shape(weights)) != 2 and not isinstance(weights, np.ndarray):
        weights = category_weights_matrix(weights)
    w = _as_float("weights", weights)
    if w.shape != (k, N_CATEGORIES):
        raise ValueError(f"weights: expected shape ({k}, {N_CATEGORIES}), got {w.shape}")
    if (w < 0).any() or not np.isfinite(w).all():
        raise ValueError(f"weights: negative or non-finite weight at index {_first_bad((w < 0) | ~np.isfinite(w))}")
    sums = w.sum(axis=1)
    bad = np.abs(sums - 1.0) > WEIGHT_SUM_TOL
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"weights: row {i} sums to {sums[i]:.6g}, not 1")

    a = _as_float("ages", ages)
    if a.shape != (k, 3):
        raise ValueError(f"ages: expected shape ({k}, 3), got {a.shape}")
    if (a < 0).any() or not np.isfinite(a).all():
        raise ValueError(f"ages: negative or non-finite age at index {_first_bad((a < 0) | ~np.isfinite(a))}")

    if state is None:
        st = np.zeros(k, dtype=np.int32)
    else:
        st = np.asarray(state)
        if st.shape != (k,):
            raise ValueError(f"state: expected shape ({k},), got {st.shape}")
        if not np.issubdtype(st.dtype, np.integer):
            raise ValueError("state: expected integer lifecycle states")
        bad = (st < 0) | (st >= N_STATES)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"state: unknown state {st[i]} at index {i}")
        st = st.astype(np.int32)

    if hours_to_event is None:
        he = np.full(k, np.nan)
    else:
        he = np.asarray(hours_to_event, dtype=np.float64)
        if he.shape != (k,):
            raise ValueError(f"hours_to_event: expected shape ({k},), got {he.shape}")
        if np.isinf(he).any():
            raise ValueError(f"hours_to_event: infinite at index {_first_bad(np.isinf(he))}")
    has_event = ~np.isnan(he)
    he = np.where(has_event, he, 0.0)

    conf = np.ones(k) if confidence is None else _as_float("confidence", confidence, (k,))
    bad = (conf < 0) | (conf > 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"confidence: value {conf[i]} at index {i} outside [0, 1]")

    num = np.zeros(k, dtype=bool) if numeric is None else np.asarray(numeric)
    if num.shape != (k,):
        raise ValueError(f"numeric: expected shape ({k},), got {num.shape}")
    num = num.astype(bool)

    ty = np.ones(k, dtype=bool) if typed is None else np.asarray(typed)
    if ty.shape != (k,):
        raise ValueError(f"typed: expected shape ({k},), got {ty.shape}")
    ty = ty.astype(bool)

    n = k if pad_to is None else int(pad_to)
    if n < k:
        raise ValueError(f"pad_to: {n} is smaller than the number of candidates {k}")
    pad = n - k

    def p(x, fill):
        if pad == 0:
            return x
        out = np.full((n,) + x.shape[1:], fill, dtype=x.dtype)
        out[:k] = x
        return out

    w_pad = p(w, 0.0)
    if pad:
        w_pad[k:, N_CATEGORIES - 1] = 1.0  # padding rows: valid weights, masked by `valid`
    f = np.dtype(dtype)
    host = Candidates(
        sim=p(s, 0.0).astype(f),
        weights=w_pad.astype(f),
        ages=p(a, 0.0).astype(f),
        has_event=p(has_event, False),
        hours_to_event=p(he, 0.0).astype(f),
        state=p(st, 0).astype(np.int32),
        confidence=p(conf, 1.0).astype(f),
        numeric=p(num, False),
        typed=p(ty, True),
        valid=p(np.ones(k, dtype=bool), False),
    )
    # One transfer for the whole tuple (per-array jnp.asarray(dtype=...) dispatches a convert
    # op each); ``device=False`` keeps validated NumPy arrays for a jitted call to take as is.
    return Candidates(*jax.device_put(tuple(host))) if device else host


def make_query(intent, routing=None, *, dtype=jnp.float32, device: bool = True) -> Query:
    """Validate a query: intent (name or index) and routing weights.

    ``routing`` is a (C,) array in [0, 1] or a ``{CATEGORY: weight}`` mapping (default none).
    """
    i = intent_index(intent)
    if routing is None:
        r = np.zeros(N_CATEGORIES)
    elif isinstance(routing, Mapping):
        r = np.zeros(N_CATEGORIES)
        for name, v in routing.items():
            try:
                r[category_index(name)] = float(v)
            except ValueError as e:
                raise ValueError(f"routing: {e}") from None
    else:
        r = _as_float("routing", routing, (N_CATEGORIES,))
    bad = (r < 0) | (r > 1) | ~np.isfinite(r)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise ValueError(f"routing: weight {r[j]} for {CATEGORY_NAMES[j]} (index {j}) outside [0, 1]")
    host = Query(intent=np.asarray(i, dtype=np.int32), routing=r.astype(np.dtype(dtype)))
    return Query(*jax.device_put(tuple(host))) if device else host


def stack_queries(queries: Sequence[Query]) -> Query:
    """Stack validated queries along a leading batch axis."""
    return Query(intent=jnp.stack([q.intent for q in queries]), routing=jnp.stack([q.routing for q in queries]))


def stack_candidates(cands: Sequence[Candidates]) -> Candidates:
    """Stack validated candidate sets of equal (padded) length along a leading batch axis."""
    lengths = {int(c.sim.shape[0]) for c in cands}
    if len(lengths) != 1:
        raise ValueError(
            f"stack_candidates: candidate sets have different lengths {sorted(lengths)}; pad them to one bucket"
        )
    return Candidates(*(jnp.stack(xs) for xs in zip(*cands)))
