"""Plain NumPy / Python float64 twin of every public kernel — a test oracle and latency baseline.

Written independently of the JAX code from SPEC §2–3 and the kernel docstrings: scalar loops
over candidates, no ``jax`` anywhere. Numbers are never retyped here: they come from the
parameter pytree (``params_to_numpy(default_params())``) and the ontology module. The one
table written out below is the state x intent compatibility rule, restated from SPEC §3 (and
the :data:`frcore.COMPATIBLE` docstring) so that a change to either side shows up in parity.

:data:`REFERENCE` maps each name in :data:`frcore.KERNELS` to its twin, taking the same
arguments (NumPy arrays, or the same NamedTuples with NumPy leaves) and returning NumPy values.
:func:`score_python` is the pure-Python (``math`` module) whole score, the plain-Python
latency baseline.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from ._params import MIN_BLEND, MIN_SUPERSESSION_WEIGHT, LifecycleParams
from ._scoring import Candidates, Query, ScoreTerms
from ._types import Intent, ScoreConfig, State

_DEFAULT = ScoreConfig()
_F = np.float64

# SPEC §3, restated: which lifecycle states each intent admits (before the upcoming-event check).
_LIVE = frozenset({State.ACTIVE, State.CONTESTED})
ADMITS: dict[int, frozenset[int]] = {
    Intent.CURRENT: _LIVE,
    Intent.BROAD: _LIVE,
    Intent.RETRACTION_AWARE: _LIVE,  # the retraction statement itself is an active edge
    Intent.UPCOMING: frozenset({State.ACTIVE}),  # SPEC §3: active edges only, event ahead (checked below)
    Intent.HISTORICAL: _LIVE | {State.SUPERSEDED, State.EXPIRED},
    Intent.CHANGE_HISTORY: _LIVE | {State.SUPERSEDED, State.EXPIRED},  # all but retracted
}


def _np(params: LifecycleParams) -> LifecycleParams:
    return LifecycleParams(*(np.asarray(x, dtype=_F) for x in params))


def _cands_np(c: Candidates) -> Candidates:
    return Candidates(
        sim=np.asarray(c.sim, _F),
        weights=np.asarray(c.weights, _F),
        ages=np.asarray(c.ages, _F),
        has_event=np.asarray(c.has_event, bool),
        hours_to_event=np.asarray(c.hours_to_event, _F),
        state=np.asarray(c.state, np.int64),
        confidence=np.asarray(c.confidence, _F),
        numeric=np.asarray(c.numeric, bool),
        typed=np.asarray(c.typed, bool),
        valid=np.asarray(c.valid, bool),
    )


def _query_np(q: Query) -> Query:
    return Query(intent=np.asarray(q.intent, np.int64), routing=np.asarray(q.routing, _F))


# --------------------------------------------------------------------------- one candidate


def primary_category(weights) -> np.ndarray:
    """argmax_c w_c, the first maximal index on ties (explicit loop)."""
    w = np.asarray(weights, _F)
    best = 0
    for c in range(1, w.shape[-1]):
        if w[c] > w[best]:
            best = c
    return np.asarray(best)


def effective_rate(params: LifecycleParams, weights, config: ScoreConfig = _DEFAULT) -> np.ndarray:
    """λ_eff: harmonic Σ w_c / Σ (w_c / λ_c) (Lemma 1); ablations arithmetic Σ w_c λ_c / Σ w_c,
    primary λ_{argmax w}, uniform one rate, cognitive harmonic over cognitive-type rates."""
    p = _np(params)
    w = np.asarray(weights, _F)
    if config.decay == "uniform":
        return np.asarray(float(p.uniform_rate))
    rates = p.cognitive_rates if config.decay == "cognitive" else p.rates
    if config.decay == "primary":
        return np.asarray(rates[int(primary_category(w))])
    num = den = 0.0
    for c in range(w.shape[0]):
        if config.decay == "arithmetic":
            num += w[c] * rates[c]
            den += w[c]
        else:  # harmonic, cognitive
            num += w[c]
            den += w[c] / rates[c]
    return np.asarray(num / den)


def effective_age(params: LifecycleParams, weights, ages) -> np.ndarray:
    """Σ_i s_i · age_i with the primary category's clock sensitivities; messages count
    ``hours_per_message`` hours each."""
    p = _np(params)
    a = np.asarray(ages, _F)
    s = p.clocks[int(primary_category(weights))]
    return np.asarray(s[0] * a[0] + s[1] * a[1] + s[2] * a[2] * float(p.hours_per_message))


def anticipatory_activation(params: LifecycleParams, hours_to_event) -> np.ndarray:
    """h ≥ 0: start + (peak − start)(1 − h/W); h < 0: peak · exp(−d|h|), 0 below the staleness
    floor. Elementwise over any shape."""
    p = _np(params)
    h = np.asarray(hours_to_event, _F)
    out = np.empty(h.shape, _F)
    for idx in np.ndindex(h.shape):
        x = float(h[idx])
        if x >= 0:
            v = p.antic_start + (p.antic_peak - p.antic_start) * (1.0 - x / p.antic_window)
        else:
            v = p.antic_peak * math.exp(-float(p.antic_post_decay) * (-x))
            if v < p.staleness_floor:
                v = 0.0
        out[idx] = v
    return out


def activation(params, weights, ages, has_event, hours_to_event, config: ScoreConfig = _DEFAULT):
    """(a, λ_eff, age_eff): a = exp(−λ_eff · age_eff), or the anticipatory kernel when the edge
    has an event no further ahead than the window (and anticipation is on)."""
    p = _np(params)
    rate = float(effective_rate(p, weights, config))
    age = float(effective_age(p, weights, ages))
    a = math.exp(-rate * age)
    h = float(hours_to_event)
    if config.anticipation and bool(has_event) and h <= p.antic_window:
        a = float(anticipatory_activation(p, h))
    return np.asarray(a), np.asarray(rate), np.asarray(age)


def blend(params, sim, weights, act, numeric, config: ScoreConfig = _DEFAULT) -> np.ndarray:
    """b = (1 − α_c)σ + α_c a; floor max(b, F_c σ) if σ ≥ 0.95; numeric rescue max(b, 0.95σ)
    if numeric and σ ≥ 0.85 (primary category's α_c, F_c)."""
    p = _np(params)
    c = int(primary_category(weights))
    s, a = float(sim), float(act)
    alpha = float(p.global_alpha) if config.global_alpha else float(p.alpha[c])
    b = (1.0 - alpha) * s + alpha * a
    if config.floors and s >= p.floor_sim_threshold:
        b = max(b, float(p.floors[c]) * s)
    if config.numeric_rescue and bool(numeric) and s >= p.numeric_sim_threshold:
        b = max(b, float(p.numeric_rescue) * s)
    return np.asarray(b)


def compatibility_mask(
    state, intent, has_event, hours_to_event, numeric, typed, config: ScoreConfig = _DEFAULT
) -> np.ndarray:
    """m = 0 if the intent admits the (numeric-exempted) state, and for ``upcoming`` the event
    lies ahead (h ≥ 0) or, with ``untyped_upcoming``, the edge is untyped; else −∞. Everything
    is 0 with the lifecycle off."""
    if not config.lifecycle:
        return np.asarray(0.0)
    st = int(state)
    if config.numeric_exemption and bool(numeric) and st in (State.SUPERSEDED, State.EXPIRED):
        st = int(State.ACTIVE)
    ok = st in ADMITS[int(intent)]
    if int(intent) == Intent.UPCOMING:
        ahead = bool(has_event) and float(hours_to_event) >= 0
        ok = ok and (ahead or (config.untyped_upcoming and not bool(typed)))
    return np.asarray(0.0 if ok else -np.inf)


def routing_term(params, weights, routing, config: ScoreConfig = _DEFAULT) -> np.ndarray:
    """log(1 + β Σ_c w_c r_c); 0 with routing off."""
    if not config.routing:
        return np.asarray(0.0)
    p = _np(params)
    w, r = np.asarray(weights, _F), np.asarray(routing, _F)
    dot = 0.0
    for c in range(w.shape[0]):
        dot += w[c] * r[c]
    return np.asarray(math.log1p(float(p.routing_boost) * dot))


def supersession_term(state, confidence, config: ScoreConfig = _DEFAULT) -> np.ndarray:
    """log max(confidence, 1e-3) for contested edges, else 0 (off without lifecycle)."""
    if not (config.supersession_weight and config.lifecycle) or int(state) != State.CONTESTED:
        return np.asarray(0.0)
    return np.asarray(math.log(max(float(confidence), MIN_SUPERSESSION_WEIGHT)))


def exemption_term(params, state, intent, numeric, config: ScoreConfig = _DEFAULT) -> np.ndarray:
    """log ω_num if the edge is numeric, superseded or expired, and the intent admits its state
    only through the numeric exemption; else 0 (and 0 with the lifecycle or exemption off)."""
    if not (config.lifecycle and config.numeric_exemption):
        return np.asarray(0.0)
    st = int(state)
    if bool(numeric) and st in (State.SUPERSEDED, State.EXPIRED) and st not in ADMITS[int(intent)]:
        return np.asarray(math.log(max(float(_np(params).numeric_exempt_weight), MIN_SUPERSESSION_WEIGHT)))
    return np.asarray(0.0)


def score(params, query: Query, cand: Candidates, config: ScoreConfig = _DEFAULT) -> ScoreTerms:
    """All named terms of s = log b + log(1 + β w·r) + log ω + m + log ω_num for one candidate; −∞ for
    padding."""
    p = _np(params)
    a, rate, age = activation(p, cand.weights, cand.ages, cand.has_event, cand.hours_to_event, config)
    b = blend(p, cand.sim, cand.weights, a, cand.numeric, config)
    log_b = math.log(max(float(b), MIN_BLEND))
    r = float(routing_term(p, cand.weights, query.routing, config))
    w = float(supersession_term(cand.state, cand.confidence, config))
    m = float(
        compatibility_mask(
            cand.state, query.intent, cand.has_event, cand.hours_to_event, cand.numeric, cand.typed, config
        )
    )
    if not bool(cand.valid):
        m = -math.inf
    x = float(exemption_term(p, cand.state, query.intent, cand.numeric, config))
    vals = (rate, age, a, b, log_b, r, w, m, x, log_b + r + w + m + x)
    return ScoreTerms(*(np.asarray(float(v)) for v in vals))


# --------------------------------------------------------------------------- batched forms


def _stack_terms(rows: Sequence[ScoreTerms], shape: tuple[int, ...]) -> ScoreTerms:
    return ScoreTerms(*(np.array([float(getattr(t, f)) for t in rows], _F).reshape(shape) for f in ScoreTerms._fields))


def score_candidates(params, query: Query, cands: Candidates, config: ScoreConfig = _DEFAULT) -> ScoreTerms:
    """:func:`score` looped over the k candidates: every term (k,)."""
    p, q, c = _np(params), _query_np(query), _cands_np(cands)
    k = c.sim.shape[0]
    rows = [score(p, q, Candidates(*(leaf[i] for leaf in c)), config) for i in range(k)]
    return _stack_terms(rows, (k,))


def score_queries(params, queries: Query, cands: Candidates, config: ScoreConfig = _DEFAULT) -> ScoreTerms:
    """Looped over B queries, each with its own candidates: terms (B, k)."""
    q, c = _query_np(queries), _cands_np(cands)
    per = [
        score_candidates(params, Query(*(leaf[b] for leaf in q)), Candidates(*(leaf[b] for leaf in c)), config)
        for b in range(q.intent.shape[0])
    ]
    return ScoreTerms(*(np.stack([getattr(t, f) for t in per]) for f in ScoreTerms._fields))


def score_sweep(params, queries: Query, cands: Candidates, config: ScoreConfig = _DEFAULT) -> ScoreTerms:
    """Looped over P stacked parameter sets: terms (P, B, k)."""
    p = _np(params)
    n = p.rates.shape[0]
    per = [score_queries(LifecycleParams(*(leaf[i] for leaf in p)), queries, cands, config) for i in range(n)]
    return ScoreTerms(*(np.stack([getattr(t, f) for t in per]) for f in ScoreTerms._fields))


def top_k(total, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-min(k, n) (values, indices) along the last axis, by descending score, ties to the
    lower index (−∞ entries last, among themselves by index)."""
    t = np.asarray(total, _F)
    n = t.shape[-1]
    kk = min(int(k), n)
    flat = t.reshape(-1, n)
    vals = np.empty((flat.shape[0], kk), _F)
    idx = np.empty((flat.shape[0], kk), np.int64)
    for r in range(flat.shape[0]):
        order = sorted(range(n), key=lambda i: (-flat[r, i], i))[:kk]
        idx[r] = order
        vals[r] = flat[r, order]
    return vals.reshape(t.shape[:-1] + (kk,)), idx.reshape(t.shape[:-1] + (kk,))


REFERENCE: dict[str, Callable] = {
    "primary_category": primary_category,
    "effective_rate": effective_rate,
    "effective_age": effective_age,
    "anticipatory_activation": anticipatory_activation,
    "activation": activation,
    "blend": blend,
    "compatibility_mask": compatibility_mask,
    "routing_term": routing_term,
    "supersession_term": supersession_term,
    "exemption_term": exemption_term,
    "score": score,
    "score_candidates": score_candidates,
    "score_queries": score_queries,
    "score_sweep": score_sweep,
    "top_k": top_k,
}


# --------------------------------------------------------------------------- pure Python baseline


class PyCandidate(NamedTuple):
    """One candidate as plain Python values (for :func:`score_python`)."""

    sim: float
    weights: tuple[float, ...]
    ages: tuple[float, float, float]
    has_event: bool
    hours_to_event: float
    state: int
    confidence: float
    numeric: bool
    typed: bool
    valid: bool


class PyParams(NamedTuple):
    """:class:`LifecycleParams` with plain Python floats / tuples (for :func:`score_python`)."""

    rates: tuple
    alpha: tuple
    floors: tuple
    clocks: tuple
    cognitive_rates: tuple
    uniform_rate: float
    global_alpha: float
    hours_per_message: float
    antic_window: float
    antic_start: float
    antic_peak: float
    antic_post_decay: float
    staleness_floor: float
    floor_sim_threshold: float
    numeric_sim_threshold: float
    numeric_rescue: float
    routing_boost: float
    numeric_exempt_weight: float


def python_inputs(
    params, query: Query, cands: Candidates
) -> tuple[PyParams, tuple[int, tuple[float, ...]], list[PyCandidate]]:
    """Convert (params, query, candidates) to plain Python values once, outside any timing."""

    def conv(x):
        x = np.asarray(x, _F).tolist()
        return tuple(tuple(r) if isinstance(r, list) else r for r in x) if isinstance(x, list) else x

    pp = PyParams(*(conv(x) for x in params))
    q = (int(np.asarray(query.intent)), tuple(np.asarray(query.routing, _F).tolist()))
    c = _cands_np(cands)
    rows = [
        PyCandidate(
            float(c.sim[i]),
            tuple(c.weights[i].tolist()),
            tuple(c.ages[i].tolist()),
            bool(c.has_event[i]),
            float(c.hours_to_event[i]),
            int(c.state[i]),
            float(c.confidence[i]),
            bool(c.numeric[i]),
            bool(c.typed[i]),
            bool(c.valid[i]),
        )
        for i in range(c.sim.shape[0])
    ]
    return pp, q, rows


def score_python(params, query, cands, config: ScoreConfig = _DEFAULT) -> list[float]:
    """The whole lifecycle score s for each candidate, in pure Python (``math``, scalar loops).

    ``params``/``query``/``cands`` are either the outputs of :func:`python_inputs` (the fast
    path used for latency) or the usual NamedTuples, converted here.
    """
    if not isinstance(params, PyParams):
        params, query, cands = python_inputs(params, query, cands)
    p = params
    intent, routing = query
    admits = ADMITS[intent]
    exp, log, log1p, inf = math.exp, math.log, math.log1p, math.inf
    decay = config.decay
    rates = p.cognitive_rates if decay == "cognitive" else p.rates
    n_cat = len(rates)
    out = []
    for c in cands:
        w = c.weights
        prim = 0
        for j in range(1, n_cat):
            if w[j] > w[prim]:
                prim = j
        if decay == "uniform":
            rate = p.uniform_rate
        elif decay == "primary":
            rate = rates[prim]
        elif decay == "arithmetic":
            num = den = 0.0
            for j in range(n_cat):
                num += w[j] * rates[j]
                den += w[j]
            rate = num / den
        else:
            num = den = 0.0
            for j in range(n_cat):
                num += w[j]
                den += w[j] / rates[j]
            rate = num / den
        s0, s1, s2 = p.clocks[prim]
        ages = c.ages
        age = s0 * ages[0] + s1 * ages[1] + s2 * ages[2] * p.hours_per_message
        a = exp(-rate * age)
        h = c.hours_to_event
        if config.anticipation and c.has_event and h <= p.antic_window:
            if h >= 0:
                a = p.antic_start + (p.antic_peak - p.antic_start) * (1.0 - h / p.antic_window)
            else:
                a = p.antic_peak * exp(p.antic_post_decay * h)
                if a < p.staleness_floor:
                    a = 0.0
        sim = c.sim
        alpha = p.global_alpha if config.global_alpha else p.alpha[prim]
        b = (1.0 - alpha) * sim + alpha * a
        if config.floors and sim >= p.floor_sim_threshold:
            fb = p.floors[prim] * sim
            if fb > b:
                b = fb
        if config.numeric_rescue and c.numeric and sim >= p.numeric_sim_threshold:
            nb = p.numeric_rescue * sim
            if nb > b:
                b = nb
        total = log(b if b > MIN_BLEND else MIN_BLEND)
        if config.routing:
            dot = 0.0
            for j in range(n_cat):
                dot += w[j] * routing[j]
            total += log1p(p.routing_boost * dot)
        st = c.state
        if config.lifecycle:
            if config.supersession_weight and st == State.CONTESTED:
                conf = c.confidence
                total += log(conf if conf > MIN_SUPERSESSION_WEIGHT else MIN_SUPERSESSION_WEIGHT)
            if config.numeric_exemption and c.numeric and (st == State.SUPERSEDED or st == State.EXPIRED):
                if st not in admits:
                    x = p.numeric_exempt_weight
                    total += log(x if x > MIN_SUPERSESSION_WEIGHT else MIN_SUPERSESSION_WEIGHT)
                st = State.ACTIVE
            ok = st in admits
            if intent == Intent.UPCOMING:
                ok = ok and ((c.has_event and h >= 0) or (config.untyped_upcoming and not c.typed))
            if not ok:
                total = -inf
        if not c.valid:
            total = -inf
        out.append(total)
    return out
