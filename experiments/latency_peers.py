"""The peers of the JAX kernel in ``fr latency``: the lifecycle score + top-10 as a latency-minded
user would write it without JAX — vectorised NumPy, and a numba loop.

Both score under the default :class:`frcore.ScoreConfig` (the configuration ``fr latency``
times) and implement the formula of :func:`frcore.score` (docs/score.md)::

    s = log max(b, b_min) + log(1 + β w·r) + log ω + m + log ω_num

reading every number from frcore: the parameters from the parameter pytree
(:func:`frcore.default_params`, or any :class:`frcore.LifecycleParams`), the floors
``MIN_BLEND`` / ``MIN_SUPERSESSION_WEIGHT``, the compatibility table :data:`frcore.COMPATIBLE`
and the states from :class:`frcore.State`. No constant is retyped here; what ties each peer to
the kernel is tests/experiments/test_latency_peers.py, which checks both against the JAX kernel on random
inputs (hypothesis) to float32 tolerance.

- :func:`numpy_score` / :func:`numpy_top_k`: float32 NumPy over the whole candidate set at once
  (no Python loop over candidates), from the validated NumPy field arrays
  (:func:`frcore.make_candidates` with ``device=False``) — what ``jax_from_numpy`` starts from;
- :func:`numba_kernel` (:func:`numba_top_k`): one ``@numba.njit`` loop over the candidates (float64 arithmetic on the
  float32 inputs) from the same three packed arrays the JAX kernel takes
  (:func:`frcore.pack_params`, :func:`frcore.pack_query`, :func:`frcore.pack_candidates`),
  reading them through frcore's packed layout (``frcore._packed``).

Both return the top-10 as the kernel does: descending score, ties to the lower index, −0.0 as
+0.0, −∞ (masked or padding) entries last.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

import frcore
from frcore import MIN_BLEND, MIN_SUPERSESSION_WEIGHT, PACKED_PARAM_SIZES, PACKED_ROW_START

_F32 = np.float32
#: start of each leaf of :class:`frcore.LifecycleParams` in the packed parameter vector
#: (:func:`frcore.pack_params`: field order, ``clocks`` column by column)
PARAM_START: dict[str, int] = dict(
    zip(
        frcore.LifecycleParams._fields, np.cumsum([0] + [PACKED_PARAM_SIZES[n] for n in frcore.LifecycleParams._fields])
    )
)
#: :data:`frcore.COMPATIBLE` as int8, intent x state (the numba loop indexes it)
_ADMITS = np.ascontiguousarray(np.asarray(frcore.COMPATIBLE, dtype=np.int8))


def numpy_params(params: frcore.LifecycleParams) -> frcore.LifecycleParams:
    """The parameter pytree as float32 NumPy leaves (converted once, outside any timing)."""
    return frcore.LifecycleParams(*(np.asarray(x, dtype=_F32) for x in params))


def numpy_score(params: frcore.LifecycleParams, query: frcore.Query, cands: frcore.Candidates) -> np.ndarray:
    """Total score s of every candidate, float32, vectorised over the candidate axis (``params``
    from :func:`numpy_params`; ``cands`` from :func:`frcore.make_candidates` with ``device=False``)."""
    p = params
    w = cands.weights
    prim = np.argmax(w, axis=1)  # primary category: the first maximum
    # λ_eff = Σ w_c / Σ w_c/λ_c (harmonic, Lemma 1), with 1/λ taken once per parameter set
    rate = w.sum(axis=1) / (w @ (_F32(1) / p.rates))
    clk = p.clocks[prim]
    ages = cands.ages
    age = clk[:, 0] * ages[:, 0] + clk[:, 1] * ages[:, 1] + clk[:, 2] * p.hours_per_message * ages[:, 2]
    a = np.exp(-rate * age)
    h = cands.hours_to_event
    ramp = p.antic_start + (p.antic_peak - p.antic_start) * (_F32(1) - h / p.antic_window)
    post = p.antic_peak * np.exp(-p.antic_post_decay * np.maximum(-h, _F32(0)))
    post = np.where(post < p.staleness_floor, _F32(0), post)
    a = np.where(cands.has_event & (h <= p.antic_window), np.where(h >= 0, ramp, post), a)
    sim = cands.sim
    alpha = p.alpha[prim]
    b = (_F32(1) - alpha) * sim + alpha * a
    b = np.where(sim >= p.floor_sim_threshold, np.maximum(b, p.floors[prim] * sim), b)
    b = np.where(cands.numeric & (sim >= p.numeric_sim_threshold), np.maximum(b, p.numeric_rescue * sim), b)
    total = np.log(np.maximum(b, _F32(MIN_BLEND)))
    total += np.log1p(p.routing_boost * (w @ query.routing))
    state = cands.state
    contested = state == frcore.State.CONTESTED
    total += np.where(contested, np.log(np.maximum(cands.confidence, _F32(MIN_SUPERSESSION_WEIGHT))), _F32(0))
    intent = int(query.intent)
    admits = np.asarray(frcore.COMPATIBLE)[intent]
    stale = cands.numeric & ((state == frcore.State.SUPERSEDED) | (state == frcore.State.EXPIRED))
    ok = admits[np.where(stale, frcore.State.ACTIVE, state)]  # the numeric exemption
    if intent == frcore.Intent.UPCOMING:
        ok &= cands.has_event & (h >= 0)
    total += np.where(
        stale & ~admits[state], np.log(np.maximum(p.numeric_exempt_weight, _F32(MIN_SUPERSESSION_WEIGHT))), _F32(0)
    )
    return np.where(ok & cands.valid, total, _F32(-np.inf))


def numpy_top_k(total: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-min(k, n) (values, indices) of ``total`` in O(n): a partition at the k-th value, the
    ties at it taken lowest index first, then the k kept sorted by (−value, index)."""
    t = np.where(total == 0, _F32(0), total)  # −0.0 as +0.0
    n = t.shape[0]
    kk = min(int(k), n)
    if kk == 0:
        return t[:0], np.zeros(0, np.int64)
    kth = np.partition(t, n - kk)[n - kk]
    above = np.flatnonzero(t > kth)
    idx = np.concatenate([above, np.flatnonzero(t == kth)[: kk - above.size]])
    idx = idx[np.lexsort((idx, -t[idx]))]
    return t[idx], idx


def numpy_score_top_k(params, query, cands, k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`numpy_score` then :func:`numpy_top_k`: the NumPy peer's single query."""
    return numpy_top_k(numpy_score(params, query, cands), k)


@functools.cache
def _numba_kernel() -> Any:
    """Compile (lazily: numba is imported only by ``fr latency``) the numba score + top-k loop."""
    import numba

    C = frcore.N_CATEGORIES
    P = {name: int(s) for name, s in PARAM_START.items()}
    R = {name: int(s) for name, s in PACKED_ROW_START.items()}
    contested, superseded, expired, active = (
        int(frcore.State.CONTESTED),
        int(frcore.State.SUPERSEDED),
        int(frcore.State.EXPIRED),
        int(frcore.State.ACTIVE),
    )
    upcoming = int(frcore.Intent.UPCOMING)
    min_blend, min_sup = float(MIN_BLEND), float(MIN_SUPERSESSION_WEIGHT)
    admits_table = _ADMITS
    p_rates, p_alpha, p_floors, p_clocks = P["rates"], P["alpha"], P["floors"], P["clocks"]
    p_hpm, p_win, p_a0, p_a1 = P["hours_per_message"], P["antic_window"], P["antic_start"], P["antic_peak"]
    p_d, p_stale, p_thf, p_thn = (
        P["antic_post_decay"],
        P["staleness_floor"],
        P["floor_sim_threshold"],
        P["numeric_sim_threshold"],
    )
    p_rho, p_beta, p_omega = P["numeric_rescue"], P["routing_boost"], P["numeric_exempt_weight"]
    r_sim, r_w, r_ages, r_has, r_h = R["sim"], R["weights"], R["ages"], R["has_event"], R["hours_to_event"]
    r_state, r_conf, r_num, r_valid = R["state"], R["confidence"], R["numeric"], R["valid"]

    @numba.njit(cache=False, fastmath=False)
    def kernel(pvec, qvec, cmat, top):  # pragma: no cover - compiled by numba; tested through its results
        n = cmat.shape[1]
        kk = min(top, n)
        out = np.empty((2, kk), np.float64)  # row 0 the values, row 1 the indices (as the kernel's rows)
        filled = 0
        intent = int(qvec[0])
        omega = math.log(max(float(pvec[p_omega]), min_sup))
        a0, a1, win, d = float(pvec[p_a0]), float(pvec[p_a1]), float(pvec[p_win]), float(pvec[p_d])
        stale_floor, hpm, beta = float(pvec[p_stale]), float(pvec[p_hpm]), float(pvec[p_beta])
        th_floor, th_num, rho = float(pvec[p_thf]), float(pvec[p_thn]), float(pvec[p_rho])
        inverse = np.empty(C, np.float64)  # 1/λ_c once per call, as the kernel hoists it
        for c in range(C):
            inverse[c] = 1.0 / float(pvec[p_rates + c])
        for i in range(n):
            prim = 0
            wsum = 0.0
            den = 0.0
            dot = 0.0
            for c in range(C):
                wc = float(cmat[r_w + c, i])
                if wc > cmat[r_w + prim, i]:
                    prim = c
                wsum += wc
                den += wc * inverse[c]
                dot += wc * float(qvec[1 + c])
            rate = wsum / den
            age = (
                float(pvec[p_clocks + prim]) * float(cmat[r_ages, i])
                + float(pvec[p_clocks + C + prim]) * float(cmat[r_ages + 1, i])
                + float(pvec[p_clocks + 2 * C + prim]) * hpm * float(cmat[r_ages + 2, i])
            )
            a = math.exp(-rate * age)
            h = float(cmat[r_h, i])
            has = cmat[r_has, i] > 0.5
            if has and h <= win:
                if h >= 0:
                    a = a0 + (a1 - a0) * (1.0 - h / win)
                else:
                    a = a1 * math.exp(-d * (-h))
                    if a < stale_floor:
                        a = 0.0
            sim = float(cmat[r_sim, i])
            alpha = float(pvec[p_alpha + prim])
            b = (1.0 - alpha) * sim + alpha * a
            if sim >= th_floor:
                b = max(b, float(pvec[p_floors + prim]) * sim)
            numeric = cmat[r_num, i] > 0.5
            if numeric and sim >= th_num:
                b = max(b, rho * sim)
            s = math.log(max(b, min_blend)) + math.log1p(beta * dot)
            state = int(cmat[r_state, i])
            if state == contested:
                s += math.log(max(float(cmat[r_conf, i]), min_sup))
            st = state
            if numeric and (state == superseded or state == expired):
                if admits_table[intent, state] == 0:
                    s += omega
                st = active
            ok = admits_table[intent, st] == 1 and cmat[r_valid, i] > 0.5
            if intent == upcoming and not (has and h >= 0):
                ok = False
            if not ok:
                s = -math.inf
            if s == 0.0:
                s = 0.0  # −0.0 as +0.0
            # insertion into the kept top-kk: strictly better only, so ties keep the lower index
            if filled < kk:
                j = filled
                filled += 1
            elif s > out[0, kk - 1]:
                j = kk - 1
            else:
                continue
            while j > 0 and out[0, j - 1] < s:
                out[0, j] = out[0, j - 1]
                out[1, j] = out[1, j - 1]
                j -= 1
            out[0, j] = s
            out[1, j] = i
        return out

    return kernel


def numba_kernel() -> Any:
    """The compiled numba peer ``f(pvec, qvec, cmat, k)`` → one (2, min(k, n)) float64 array:
    row 0 the top values, row 1 their candidate indices (as :func:`frcore.score_top_k_rows`
    without terms). The first call compiles."""
    return _numba_kernel()


def numba_top_k(pvec: np.ndarray, qvec: np.ndarray, cmat: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The numba peer's single query as (values, indices)."""
    rows = _numba_kernel()(pvec, qvec, cmat, k)
    return rows[0], rows[1].astype(np.int64)
