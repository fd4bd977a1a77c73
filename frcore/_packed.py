"""The single-query fast path: score + top-k as one executable over three packed arrays.

A single query is dominated by fixed costs, not arithmetic: on XLA's CPU backend every
argument leaf and every separate kernel costs about a microsecond or more. The packed path
therefore hands the executable three arrays instead of 26 leaves —

- parameters: one (P,) vector (:func:`pack_params`; clock columns stored contiguously),
- query: one (1 + C,) vector, intent then routing weights (:func:`pack_query`),
- candidates: one feature-major (F, k) matrix, a row per field (:func:`pack_candidates`),

and unpacks them inside the jitted function, where slicing is free. The formula is the one in
:mod:`frcore._scoring` (:func:`frcore.score` vmapped over the candidate axis); only the layout
differs. Validation stays at the boundary: pack what :func:`frcore.make_candidates` /
:func:`frcore.make_query` returned.

jaxtyping dimensions (checked under pytest only, as in :mod:`frcore._scoring`): ``p`` the packed
parameters (P values), ``q`` the packed query (1 + C), ``f`` the candidate rows (F), ``k`` the
candidates, ``kk`` the kept candidates, ``r`` the output rows of :func:`score_top_k_rows`.
"""

from __future__ import annotations

import functools
import operator

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Float, Float32, Int

from ._ontology import N_CATEGORIES
from ._params import PARAM_SHAPES, LifecycleParams
from ._scoring import _DEFAULT, AnyArray, Candidates, Query, ScoreTerms, score, top_k
from ._types import ScoreConfig

C = N_CATEGORIES
#: rows of the packed candidate matrix, in order (weights: C rows, ages: 3 rows)
ROWS: tuple[tuple[str, int], ...] = (
    ("sim", 1),
    ("weights", C),
    ("ages", 3),
    ("has_event", 1),
    ("hours_to_event", 1),
    ("state", 1),
    ("confidence", 1),
    ("numeric", 1),
    ("typed", 1),
    ("valid", 1),
)
N_FEATURES = sum(n for _, n in ROWS)
#: first row of each field in the packed candidate matrix
ROW_START: dict[str, int] = dict(zip((name for name, _ in ROWS), np.cumsum([0] + [n for _, n in ROWS])[:-1].tolist()))

#: vmap axes of the unpacked (feature-major) candidates: weights and ages carry k last
_AXES = Candidates._make(1 if n > 1 else 0 for _, n in ROWS)
#: number of values of each leaf in the packed parameter vector (the parameter table's shapes)
PARAM_SIZES = {name: int(np.prod(shape, dtype=np.int64)) for name, shape in PARAM_SHAPES.items()}
#: length of the packed parameter vector (P) and of the packed query (1 + C): fixed sizes in the
#: jaxtyping annotations below, as is F (N_FEATURES)
N_PACKED_PARAMS = sum(PARAM_SIZES.values())
N_PACKED_QUERY = 1 + C
#: The packed arrays' shapes: parameter vector, query vector, candidate matrix (one column per candidate).
PackedParams = Float[AnyArray, f"p={N_PACKED_PARAMS}"]
PackedQuery = Float[AnyArray, f"q={N_PACKED_QUERY}"]
PackedCandidates = Float[AnyArray, f"f={N_FEATURES} k"]


def pack_params(params: LifecycleParams) -> Float32[np.ndarray, f"p={N_PACKED_PARAMS}"]:
    """Every leaf of ``params`` in one float32 vector (``clocks`` column by column)."""
    parts = []
    for name in LifecycleParams._fields:
        x = np.asarray(getattr(params, name), dtype=np.float32)
        if name == "clocks":
            x = x.T
        if x.size != PARAM_SIZES[name]:
            raise ValueError(
                f"params.{name}: expected {PARAM_SIZES[name]} values, got {x.size} (stacked params cannot be packed)"
            )
        parts.append(x.ravel())
    return np.concatenate(parts)


def unpack_params(vec: PackedParams) -> LifecycleParams:
    """Inverse of :func:`pack_params` (inside jit: slices only)."""
    out: dict[str, AnyArray] = {}
    i = 0
    for name in LifecycleParams._fields:
        n = PARAM_SIZES[name]
        x = vec[i : i + n]
        i += n
        if name == "clocks":
            out[name] = jnp.stack([x[j * C : (j + 1) * C] for j in range(3)], axis=1)
        elif n == 1:
            out[name] = x[0]
        else:
            out[name] = x
    return LifecycleParams(**out)


def pack_query(query: Query) -> Float32[np.ndarray, f"q={N_PACKED_QUERY}"]:
    """(1 + C,) float32: the intent index, then the routing weights."""
    return np.concatenate(
        [np.asarray(query.intent, dtype=np.float32).reshape(1), np.asarray(query.routing, dtype=np.float32)]
    )


def unpack_query(vec: PackedQuery) -> Query:
    return Query(intent=vec[0].astype(jnp.int32), routing=vec[1:])


def pack_candidates(cands: Candidates) -> Float32[np.ndarray, f"f={N_FEATURES} k"]:
    """(F, k) float32, one row per field of :class:`Candidates` (bools as 0/1, state as float)."""
    n = np.asarray(cands.sim).shape[0]
    out = np.empty((N_FEATURES, n), dtype=np.float32)
    for (name, rows), start in zip(ROWS, ROW_START.values()):
        x = np.asarray(getattr(cands, name))
        out[start : start + rows] = x.T if rows > 1 else x
    return out


def unpack_candidates_host(mat: PackedCandidates) -> Candidates:
    """NumPy inverse of :func:`pack_candidates`: host arrays with :func:`frcore.make_candidates`'
    dtypes and shapes (candidates first: weights (k, C), ages (k, 3))."""
    mat = np.asarray(mat, dtype=np.float32)
    f = {
        name: (mat[s : s + rows].T.copy() if rows > 1 else mat[s].copy())
        for (name, rows), s in zip(ROWS, ROW_START.values())
    }
    for name in ("has_event", "numeric", "typed", "valid"):
        f[name] = f[name] > 0.5
    f["state"] = f["state"].astype(np.int32)
    return Candidates(**f)


def unpack_query_host(vec: PackedQuery) -> Query:
    """NumPy inverse of :func:`pack_query` (intent as int32, routing float32)."""
    vec = np.asarray(vec, dtype=np.float32)
    return Query(intent=np.asarray(int(vec[0]), dtype=np.int32), routing=vec[1:].copy())


def unpack_candidates(mat: PackedCandidates) -> Candidates:
    """Inverse of :func:`pack_candidates` (inside jit: row slices, k on the last axis)."""
    f = {}
    for name, rows in ROWS:
        s = ROW_START[name]
        f[name] = mat[s : s + rows] if rows > 1 else mat[s]
    return Candidates(
        sim=f["sim"],
        weights=f["weights"],
        ages=f["ages"],
        has_event=f["has_event"] > 0.5,
        hours_to_event=f["hours_to_event"],
        state=f["state"].astype(jnp.int32),
        confidence=f["confidence"],
        numeric=f["numeric"] > 0.5,
        typed=f["typed"] > 0.5,
        valid=f["valid"] > 0.5,
    )


def score_packed(
    pvec: PackedParams,
    qvec: PackedQuery,
    cmat: PackedCandidates,
    config: ScoreConfig = _DEFAULT,
) -> ScoreTerms:
    """:func:`frcore.score` over the k packed candidates: every term of shape (k,)."""
    over = jax.vmap(score, in_axes=(None, None, _AXES, None))
    return over(unpack_params(pvec), unpack_query(qvec), unpack_candidates(cmat), config)


@functools.partial(jax.jit, static_argnames=("k", "config", "with_terms"))
def score_top_k_packed(
    pvec: PackedParams,
    qvec: PackedQuery,
    cmat: PackedCandidates,
    k: int,
    config: ScoreConfig = _DEFAULT,
    with_terms: bool = False,
) -> (
    tuple[Float[jax.Array, " kk"], Int[jax.Array, " kk"]]
    | tuple[Float[jax.Array, " kk"], Int[jax.Array, " kk"], ScoreTerms]
):
    """Score + top-k in one call: (values, indices) or, ``with_terms``, (values, indices, terms
    of the top k only). Same ordering as :func:`frcore.top_k` over :func:`frcore.score_candidates`."""
    terms = score_packed(pvec, qvec, cmat, config)
    values, order = top_k(terms.total, k)
    if not with_terms:
        return values, order
    return values, order, ScoreTerms(*(t[order] if t.ndim else jnp.broadcast_to(t, order.shape) for t in terms))


#: the largest candidate count whose top-k :func:`score_top_k_rows` (without terms) selects by
#: ranks (:func:`_top_k_rows_by_rank`) instead of ``lax.top_k``: the buckets 8, 16 and 32 (the
#: selection is n² elementwise ops, unrolled at trace time)
RANK_SELECT_MAX = 32


def _top_k_rows_by_rank(total: Float[AnyArray, " k"], k: int) -> Float[jax.Array, "2 kk"]:
    """:func:`frcore.top_k` of one (n,) total as (2, min(k, n)) rows — the values, then the
    indices as float32 — by ranks::

        rank_i = #{j : t_j > t_i  or  (t_j = t_i and j < i)}      (t: the total, −0.0 as +0.0)
        row[0, m] = t_j,  row[1, m] = j   for the j with rank_j = m

    the same values and indices as ``lax.top_k`` (descending, ties to the lower index, −∞
    last), written as n elementwise sums over the candidates rather than a reduce: XLA's CPU
    backend fuses it into two small loops, with no TopK custom call and no concatenation
    (docs/performance.md gives the measured difference)."""
    t = jnp.where(total == 0, jnp.zeros_like(total), total)
    n = t.shape[0]
    kk = min(k, n)
    # iotas, not host constants: XLA computes them inside the fused loops (a host constant per j
    # would be one more buffer for each loop to read)
    i = jnp.arange(n, dtype=jnp.int32)
    rank = functools.reduce(operator.add, [((t[j] > t) | ((t[j] == t) & (j < i))).astype(jnp.int32) for j in range(n)])
    slot = jnp.arange(kk, dtype=jnp.int32)[None, :]
    values_row = (jnp.arange(2, dtype=jnp.int32) == 0)[:, None]
    zero = jnp.zeros((), t.dtype)
    return functools.reduce(
        operator.add,
        [jnp.where(rank[j] == slot, jnp.where(values_row, t[j], jnp.asarray(j, t.dtype)), zero) for j in range(n)],
    )


@functools.partial(jax.jit, static_argnames=("k", "config", "with_terms"))
def score_top_k_rows(
    pvec: PackedParams,
    qvec: PackedQuery,
    cmat: PackedCandidates,
    k: int,
    config: ScoreConfig = _DEFAULT,
    with_terms: bool = True,
) -> Float[jax.Array, "r kk"]:
    """:func:`score_top_k_packed` as **one** float32 array: row 0 the values, row 1 the
    candidate indices (exact as float32 below 2^24), then (``with_terms``) one row per field of
    :class:`frcore.ScoreTerms` — shape (2 + T, k') or (2, k').

    One output array instead of a tuple: one device→host conversion for a caller that needs
    them all (FR-Bank's explain: one instead of 12), and one buffer per call, although the
    stack is one more kernel (docs/performance.md gives the measured difference). Without terms,
    up to :data:`RANK_SELECT_MAX` candidates are selected by :func:`_top_k_rows_by_rank` (the
    same rows, fused with the score)."""
    if not with_terms:
        if cmat.shape[1] <= RANK_SELECT_MAX:
            return _top_k_rows_by_rank(score_packed(pvec, qvec, cmat, config).total, k)
        values, order = score_top_k_packed(pvec, qvec, cmat, k, config)
        return jnp.stack([values, order.astype(values.dtype)])
    values, order, terms = score_top_k_packed(pvec, qvec, cmat, k, config, with_terms=True)
    return jnp.stack([values, order.astype(values.dtype), *(t.astype(values.dtype) for t in terms)])
