"""The closed-form lifecycle log-score (SPEC §3) as stateless JAX kernels.

Every kernel is written for **one candidate edge** and vmapped over candidates; the vmapped
forms are jit-compiled, with the :class:`~frcore.ScoreConfig` switches static and every number
a leaf of :class:`~frcore.LifecycleParams`, so a parameter sweep is one call over stacked
parameters. Inputs reach these functions only through :func:`frcore.make_candidates` /
:func:`frcore.make_query`, which validate at the boundary; nothing here checks values.

The score of a candidate is the sum of the named summands :data:`frcore._types.SCORE_SUMMANDS`,
in this order::

    s = log_blend + routing + supersession + mask + exemption

Each kernel's docstring quotes the formula of its term from :mod:`frcore.symbolic`, the one
symbolic (SymPy) form of the score: the same text as ``frcore.symbolic.equation(name)`` (a test
keeps them in sync and checks the kernels against the expressions numerically). Its symbols
are listed in ``frcore.symbolic.INPUTS`` and in docs/score.md; p is the primary category
(:func:`primary_category`), K(ι, ξ) the table :data:`frcore.COMPATIBLE`.
"""

from __future__ import annotations

import functools
import operator
from typing import TYPE_CHECKING, NamedTuple, TypeAlias

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Bool, Float, Int, Shaped

from ._params import MIN_BLEND, MIN_SUPERSESSION_WEIGHT, LifecycleParams
from ._types import COMPATIBLE, Intent, Leaf, ScoreConfig, State

_DEFAULT = ScoreConfig()

#: The array type of the jaxtyping annotations below: the kernels take device or host arrays, NumPy
#: scalars included (one field of one candidate, an intent, a leaf of host parameters returned as it
#: is); mypy reads it as Leaf, a NumPy scalar passing for a 0-d array. The intent may also be a
#: Python int. Dimensions: ``*k`` the candidate axes (none inside the vmapped forms, where each
#: kernel sees one candidate), ``c`` the C categories, ``3`` the clocks, ``kk`` the kept candidates
#: of :func:`top_k`. The annotations are checked under pytest only (jaxtyping's import hook with
#: beartype, set in pyproject.toml's pytest options); outside the tests they cost nothing.
if TYPE_CHECKING:
    AnyArray: TypeAlias = jax.Array | np.ndarray
else:
    AnyArray: TypeAlias = jax.Array | np.ndarray | np.generic
#: COMPATIBLE as one bit mask per intent (bit s set: the intent admits state s). The row is
#: selected once per query and each candidate tests its bit — no per-candidate table gather.
_ADMITS_BITS = tuple(
    int(sum(1 << s for s in range(COMPATIBLE.shape[1]) if COMPATIBLE[i, s])) for i in range(COMPATIBLE.shape[0])
)


def _admits(intent, state, xp=jnp):
    """COMPATIBLE[intent, state] as a bit test of the intent's admits mask (``xp``: jax.numpy
    inside the kernels, numpy for host arrays)."""
    bits = xp.asarray(_ADMITS_BITS, dtype=xp.int32)[intent]
    return ((bits >> state.astype(xp.int32)) & 1) == 1


class Candidates(NamedTuple):
    """Per-edge inputs (leading axis k after validation; one row per candidate edge).

    ages are (absolute hours, inter-session hours, conversational messages) since the edge
    was said; ``hours_to_event`` = event time − query time in hours (> 0: ahead), meaningful
    only where ``has_event``; ``typed``: the edge carries lifecycle metadata (an extracted fact, or
    a slot, an event time or a link; False for a raw turn), read only under
    ``ScoreConfig.untyped_upcoming``; ``valid`` is False for shape-bucket padding.
    """

    sim: Leaf  # (k,) σ in [0, 1]
    weights: Leaf  # (k, C) soft category weights, rows sum to 1
    ages: Leaf  # (k, 3)
    has_event: Leaf  # (k,) bool
    hours_to_event: Leaf  # (k,)
    state: Leaf  # (k,) int32 lifecycle state
    confidence: Leaf  # (k,) in [0, 1]
    numeric: Leaf  # (k,) bool
    typed: Leaf  # (k,) bool
    valid: Leaf  # (k,) bool


class Query(NamedTuple):
    """Per-query inputs: intent index and category routing weights r (C,)."""

    intent: Leaf  # () int32
    routing: Leaf  # (C,) in [0, 1]


class ScoreTerms(NamedTuple):
    """Every named term of the score for one candidate (or arrays of them)."""

    rate: Leaf  # λ_eff
    age: Leaf  # effective age in hours
    activation: Leaf  # a
    blend: Leaf  # b (after floor and numeric rescue)
    log_blend: Leaf  # log b
    routing: Leaf  # log(1 + β w·r)
    supersession: Leaf  # log ω
    mask: Leaf  # 0 or -inf
    exemption: Leaf  # log ω_num for edges admitted only by the numeric exemption, else 0
    total: Leaf  # s


# --------------------------------------------------------------------------- one candidate


def _columns(x: Shaped[AnyArray, "*k c"]) -> list[AnyArray]:
    """The C entries of a per-candidate category vector as C scalars (C is static)."""
    return [x[..., c] for c in range(x.shape[-1])]


def _csum(terms) -> AnyArray:
    """Σ over categories, unrolled at trace time.

    Every sum over the C categories is written as C − 1 elementwise adds, never a reduce op:
    under ``vmap`` XLA's CPU backend turns a reduce into a separate (YNNPACK) kernel, each a
    dispatch and a pass over memory. Elementwise work fuses into a single loop: score + top-k
    is 3 kernels (docs/performance.md compares it with a kernel that reduces over the
    categories).
    """
    return functools.reduce(operator.add, terms)


def _primary_pick(weights: Float[AnyArray, "*k c"], *tables: Shaped[AnyArray, " c"]) -> list[jax.Array]:
    """``table[argmax_c w_c]`` for each (C,) table, first category on ties.

    The maximum weight by a chain of elementwise maxima, then a chain of ``where`` selects from
    the last category back to the first, so the first category at the maximum wins. No
    arg-reduction, gather or one-hot, and no value shared across many consumers, so XLA fuses
    it into the candidate loop.
    """
    w = _columns(weights)
    top = functools.reduce(jnp.maximum, w)
    picked = [t[-1] for t in tables]
    for c in range(len(w) - 2, -1, -1):  # from the last category back: the first maximum wins
        is_max = w[c] == top
        picked = [jnp.where(is_max, t[c], v) for t, v in zip(tables, picked)]
    return picked


def primary_category(weights: Float[AnyArray, "*k c"]) -> Int[jax.Array, "*k"]:
    """Primary category = argmax_c w_c (first on ties), as an index."""
    return _primary_pick(weights, jnp.arange(weights.shape[-1], dtype=jnp.int32))[0]


def effective_rate(
    params: LifecycleParams, weights: Float[AnyArray, "*k c"], config: ScoreConfig = _DEFAULT
) -> Float[AnyArray, "*#k"]:
    """Effective decay rate λ_eff of one edge: the harmonic mean of the category rates under the
    soft weights (Lemma 1). Formula (``frcore.symbolic``, term ``rate``)::

        lambda_eff = Sum(w[c], (c, 1, C))/Sum(w[c]/lambda[c], (c, 1, C))

    Ablations: ``arithmetic`` Σ w_c λ_c / Σ w_c, ``primary``
    λ_{argmax w}, ``uniform`` one rate, ``cognitive`` harmonic mean of the cognitive-type rates.
    """
    mode = config.decay
    if mode == "uniform":
        return params.uniform_rate
    rates = params.cognitive_rates if mode == "cognitive" else params.rates
    if mode == "primary":
        return _primary_pick(weights, rates)[0]
    w = _columns(weights)
    if mode == "arithmetic":
        return _csum(wc * rates[c] for c, wc in enumerate(w)) / _csum(w)
    inverse = 1.0 / rates  # one (C,) op per parameter set, hoisted out of the candidate loop
    return _csum(w) / _csum(wc * inverse[c] for c, wc in enumerate(w))


def effective_age(
    params: LifecycleParams, weights: Float[AnyArray, "*k c"], ages: Float[AnyArray, " 3 *k"]
) -> Float[jax.Array, "*k"]:
    """Multi-clock effective age with the primary category's clock sensitivities; the
    conversational clock counts ``hours_per_message`` (h_msg) hours per message. Formula
    (``frcore.symbolic``, term ``age``)::

        age_eff = s_abs*t_abs + s_inter*t_inter + h_msg*n_conv*s_conv
    """
    s = _primary_pick(weights, *(params.clocks[:, i] for i in range(3)))  # columns: no (C, 3) copy
    return s[0] * ages[0] + s[1] * ages[1] + s[2] * params.hours_per_message * ages[2]


def anticipatory_activation(params: LifecycleParams, hours_to_event: Float[AnyArray, "*k"]) -> Float[jax.Array, "*k"]:
    """Anticipatory event kernel (SPEC §2): for h = hours until the event, a ramp from a_0
    (``antic_start``) to the peak a_1 (``antic_peak``) before it, decay at d (``antic_post_decay``)
    after it, and 0 below the staleness floor. Formula (``frcore.symbolic``, term ``anticipatory``)::

        a_ev = Piecewise((a_0 + (1 - h/W)*(a_1 - a_0), h >= 0), (0, f_stale > a_1*exp(d*h)),
            (a_1*exp(d*h), True))

    For h > W (beyond the window) it is not used: :func:`activation` decays ordinarily.
    """
    h = hours_to_event
    ramp = params.antic_start + (params.antic_peak - params.antic_start) * (1.0 - h / params.antic_window)
    post = params.antic_peak * jnp.exp(-params.antic_post_decay * jnp.maximum(-h, 0.0))
    post = jnp.where(post < params.staleness_floor, jnp.zeros_like(post), post)
    return jnp.where(h >= 0, ramp, post)


def activation(
    params: LifecycleParams,
    weights: Float[AnyArray, "*k c"],
    ages: Float[AnyArray, " 3 *k"],
    has_event: Bool[AnyArray, "*k"],
    hours_to_event: Float[AnyArray, "*k"],
    config: ScoreConfig = _DEFAULT,
) -> tuple[Float[jax.Array, "*k"], Float[AnyArray, "*#k"], Float[jax.Array, "*k"]]:
    """Activation a of one edge and the (λ_eff, age_eff) behind it: exponential decay, replaced
    by :func:`anticipatory_activation` (a_ev) when the edge has an event time (E) within the
    anticipation window or past it (unless ``config.anticipation`` is off). Formula
    (``frcore.symbolic``, term ``activation``)::

        a = Piecewise((a_ev, E & (W >= h)), (exp(-age_eff*lambda_eff), True))
    """
    rate = effective_rate(params, weights, config)
    age = effective_age(params, weights, ages)
    a = jnp.exp(-rate * age)
    if config.anticipation:
        in_kernel = has_event & (hours_to_event <= params.antic_window)
        a = jnp.where(in_kernel, anticipatory_activation(params, hours_to_event), a)
    return a, rate, age


def blend(
    params: LifecycleParams,
    sim: Float[AnyArray, "*k"],
    weights: Float[AnyArray, "*k c"],
    act: Float[AnyArray, "*k"],
    numeric: Bool[AnyArray, "*k"],
    config: ScoreConfig = _DEFAULT,
) -> Float[AnyArray, "*k"]:
    """Blend of σ and the activation with the semantic floor and the numeric rescue (ν: the edge
    is numeric), with the primary category's α_p and F_p (``global_alpha`` under
    ``config.global_alpha``). Formula (``frcore.symbolic``, term ``blend``)::

        b = Max(a*alpha_p + sigma*(1 - alpha_p), Piecewise((F_p*sigma, sigma >= theta_F), (0, True)),
            Piecewise((rho*sigma, nu & (sigma >= theta_num)), (0, True)))

    (b ≥ 0, so a 0 in the max is no floor.)
    """
    alpha_c, floor_c = _primary_pick(weights, params.alpha, params.floors)
    alpha = params.global_alpha if config.global_alpha else alpha_c
    b = (1.0 - alpha) * sim + alpha * act
    if config.floors:
        b = jnp.where(sim >= params.floor_sim_threshold, jnp.maximum(b, floor_c * sim), b)
    if config.numeric_rescue:
        rescue = numeric & (sim >= params.numeric_sim_threshold)
        b = jnp.where(rescue, jnp.maximum(b, params.numeric_rescue * sim), b)
    return b


def admitted(
    state: Int[AnyArray, "*k"],
    intent: Int[AnyArray, ""] | int,
    has_event: Bool[AnyArray, "*k"],
    hours_to_event: Float[AnyArray, "*k"],
    numeric: Bool[AnyArray, "*k"],
    typed: Bool[AnyArray, "*k"],
    config: ScoreConfig = _DEFAULT,
    *,
    xp=jnp,
):
    """Whether the query's intent admits the edge: the compatibility rule, written once.

    :data:`frcore.COMPATIBLE` [intent, state] after the numeric exemption (a numeric superseded or
    expired edge counts as active, with ``config.numeric_exemption``), and for ``upcoming`` an
    event ahead (h ≥ 0) — required of ``typed`` edges only with ``config.untyped_upcoming`` (an
    edge without lifecycle metadata is then admitted as its state allows); every edge with
    ``config.lifecycle`` off. :func:`compatibility_mask` is 0 where this holds and −∞ elsewhere.
    ``xp`` is the array namespace: jax.numpy in the kernels; FR-Bank's distillation calls it with
    ``xp=numpy`` over a snapshot's rows (``intent`` a Python int), so one rule serves the score
    and the pipeline.
    """
    if not config.lifecycle:
        return xp.ones(xp.shape(state), dtype=bool)
    st = state
    if config.numeric_exemption:
        exempt = numeric & ((state == State.SUPERSEDED) | (state == State.EXPIRED))
        st = xp.where(exempt, xp.asarray(State.ACTIVE, dtype=state.dtype), state)
    ok = _admits(intent, st, xp)
    ahead = has_event & (hours_to_event >= 0)
    if config.untyped_upcoming:
        ahead = ahead | ~typed
    return xp.where(intent == Intent.UPCOMING, ok & ahead, ok)


def compatibility_mask(
    state: Int[AnyArray, "*k"],
    intent: Int[AnyArray, ""] | int,
    has_event: Bool[AnyArray, "*k"],
    hours_to_event: Float[AnyArray, "*k"],
    numeric: Bool[AnyArray, "*k"],
    typed: Bool[AnyArray, "*k"],
    config: ScoreConfig = _DEFAULT,
) -> Float[jax.Array, "*k"]:
    """Query-conditioned compatibility mask m ∈ {0, −∞} from (state, intent): 0 where
    :func:`admitted` holds. Retracted edges are admitted by no intent; with ``config.lifecycle``
    off everything is 0. Formula (``frcore.symbolic``, terms ``mask_state`` and ``mask``; ξ the
    state, ι the intent, K the table :data:`frcore.COMPATIBLE`, T the edge is typed, U the switch
    ``config.untyped_upcoming``)::

        xi_m = Piecewise((active, nu & (Eq(expired, xi) | Eq(superseded, xi))), (xi, True))
        mask = Piecewise((0, Eq(K(iota, xi_m), 1) & (Ne(iota, upcoming) | (U & ~T) | (E & (h >= 0)))),
            (-oo, True))
    """
    ok = admitted(state, intent, has_event, hours_to_event, numeric, typed, config)
    return jnp.where(ok, jnp.zeros((), hours_to_event.dtype), jnp.full((), -jnp.inf, hours_to_event.dtype))


def routing_term(
    params: LifecycleParams,
    weights: Float[AnyArray, "*k c"],
    routing: Float[AnyArray, " c"],
    config: ScoreConfig = _DEFAULT,
) -> Float[jax.Array, "*#k"]:
    """Routing boost from the overlap of the edge's categories with the query's routing; 0 when
    routing is off. Formula (``frcore.symbolic``, term ``routing``)::

        routing = log(1 + beta*Sum(r[c]*w[c], (c, 1, C)))
    """
    if not config.routing:
        return jnp.zeros((), dtype=weights.dtype)
    return jnp.log1p(params.routing_boost * _csum(wc * routing[c] for c, wc in enumerate(_columns(weights))))


def supersession_term(
    state: Int[AnyArray, "*k"], confidence: Float[AnyArray, "*k"], config: ScoreConfig = _DEFAULT
) -> Float[jax.Array, "*#k"]:
    """Soft-supersession weight log ω of a contested edge (κ: its confidence; ω_min =
    ``MIN_SUPERSESSION_WEIGHT``), else 0. Formula (``frcore.symbolic``, term ``supersession``)::

        supersession = Piecewise((log(Max(kappa, omega_min)), Eq(contested, xi)), (0, True))
    """
    if not (config.supersession_weight and config.lifecycle):
        return jnp.zeros((), dtype=confidence.dtype)
    w = jnp.log(jnp.maximum(confidence, MIN_SUPERSESSION_WEIGHT))
    return jnp.where(state == State.CONTESTED, w, jnp.zeros_like(w))


def exemption_term(
    params: LifecycleParams,
    state: Int[AnyArray, "*k"],
    intent: Int[AnyArray, ""] | int,
    numeric: Bool[AnyArray, "*k"],
    config: ScoreConfig = _DEFAULT,
) -> Float[jax.Array, "*#k"]:
    """log ω_num for a numeric edge that the intent admits only through the numeric exemption
    (superseded or expired, and not admitted by :data:`frcore.COMPATIBLE` on its own), else 0.
    Formula (``frcore.symbolic``, term ``exemption``)::

        exemption = Piecewise((log(Max(omega_min, omega_num)), nu & Eq(K(iota, xi), 0) & (Eq(expired, xi) |
            Eq(superseded, xi))), (0, True))
    """
    if not (config.lifecycle and config.numeric_exemption):
        return jnp.zeros((), dtype=params.numeric_exempt_weight.dtype)
    stale = (state == State.SUPERSEDED) | (state == State.EXPIRED)
    only_exempt = numeric & stale & ~_admits(intent, state)
    # log of a per-candidate weight (ω_num or 1) rather than a select between log ω_num and 0:
    # same value, but nothing parameter-only for XLA to hoist into a kernel of its own
    w = jnp.maximum(params.numeric_exempt_weight, MIN_SUPERSESSION_WEIGHT)
    return jnp.log(jnp.where(only_exempt, w, jnp.ones_like(w)))


def score(params: LifecycleParams, query: Query, cand: Candidates, config: ScoreConfig = _DEFAULT) -> ScoreTerms:
    """Lifecycle log-score of one candidate edge, every term named (SPEC §3); padding rows
    (``valid`` False) get s = −∞. Formulas (``frcore.symbolic``, terms ``log_blend`` and
    ``total``; b_min = ``MIN_BLEND``)::

        log_blend = log(Max(b, b_min))
        s = log_blend + routing + supersession + mask + exemption
    """
    act, rate, age = activation(params, cand.weights, cand.ages, cand.has_event, cand.hours_to_event, config)
    b = blend(params, cand.sim, cand.weights, act, cand.numeric, config)
    log_b = jnp.log(jnp.maximum(b, MIN_BLEND))
    r = routing_term(params, cand.weights, query.routing, config)
    w = supersession_term(cand.state, cand.confidence, config)
    m = compatibility_mask(
        cand.state, query.intent, cand.has_event, cand.hours_to_event, cand.numeric, cand.typed, config
    )
    m = jnp.where(cand.valid, m, -jnp.inf)
    x = exemption_term(params, cand.state, query.intent, cand.numeric, config)
    return ScoreTerms(rate, age, act, b, log_b, r, w, m, x, log_b + r + w + m + x)


# --------------------------------------------------------------------------- batched forms

_score_over_candidates = jax.vmap(score, in_axes=(None, None, 0, None))


@functools.partial(jax.jit, static_argnames=("config",))
def score_candidates(
    params: LifecycleParams, query: Query, cands: Candidates, config: ScoreConfig = _DEFAULT
) -> ScoreTerms:
    """:func:`score` vmapped over k candidates: every term has shape (k,)."""
    return _score_over_candidates(params, query, cands, config)


_score_over_queries = jax.vmap(_score_over_candidates, in_axes=(None, 0, 0, None))


@functools.partial(jax.jit, static_argnames=("config",))
def score_queries(
    params: LifecycleParams, queries: Query, cands: Candidates, config: ScoreConfig = _DEFAULT
) -> ScoreTerms:
    """Batched over B queries, each with its own k candidates: terms of shape (B, k)."""
    return _score_over_queries(params, queries, cands, config)


_score_over_params = jax.vmap(_score_over_queries, in_axes=(0, None, None, None))


@functools.partial(jax.jit, static_argnames=("config",))
def score_sweep(
    params: LifecycleParams, queries: Query, cands: Candidates, config: ScoreConfig = _DEFAULT
) -> ScoreTerms:
    """One call over P stacked parameter sets (:func:`frcore.stack_params`): terms (P, B, k)."""
    return _score_over_params(params, queries, cands, config)


@functools.partial(jax.jit, static_argnames=("k",))
def top_k(total: Float[AnyArray, "*b k"], k: int) -> tuple[Float[jax.Array, "*b kk"], Int[jax.Array, "*b kk"]]:
    """Top-k (values, indices) along the last axis; ties go to the lower index.

    Masked candidates carry −∞ and come last; callers drop entries whose value is −∞. A total
    of −0.0 is returned as +0.0: ``lax.top_k`` orders −0.0 below +0.0 where a stable sort does
    not, so zeros are folded first (and returning ``lax.top_k``'s own values saves a gather).
    """
    kk = min(k, total.shape[-1])
    # lax.top_k returns equal values lower index first (tested against the twin's stable
    # sort); docs/performance.md compares it with a full argsort and a two-stage selection.
    # (lax.top_k returns a list: unpacked, so that this returns the tuple its annotation says)
    values, indices = jax.lax.top_k(jnp.where(total == 0, jnp.zeros_like(total), total), kk)
    return values, indices
