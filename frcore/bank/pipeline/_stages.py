"""The eight stages of FR-Bank's retrieval (SPEC §4, the paper's appendix Z; docs/benchmark.md),
one function each, over one query's :class:`Similarities`:

1. :func:`cosine_candidates`, 2. :func:`bm25_candidates`, 3. :func:`forced_candidates`,
4. :func:`dedup`, 5. :func:`distill`, 6. :func:`lifecycle_filters`, 7. :func:`blended_log_score`,
8. :func:`top_k`. :func:`~frcore.bank.pipeline.retrieve` calls them in that order.

Each candidate stage returns the top of its pool by its value, ties by row, or ``None`` when it
is off or its pool is empty.
"""

from __future__ import annotations

import math

import numpy as np

from ..._ontology import primary_index
from ..._packed import score_top_k_rows
from ..._params import LifecycleParams
from ..._runtime import cached_call
from ..._scoring import ScoreTerms
from ..search import PartialCosine
from ._config import PipelineConfig, Retrieved
from ._prepare import Prepared, _packed_params, kernel_inputs, relative_floor_params
from ._select import _top, _union
from ._sigma import hybrid_sigma, scale_sigma_max


class Similarities:
    """One query's similarities to every row of a snapshot: the cosine clipped to [0, 1]
    (``cos_raw``), the lifecycle-linked cosine (``cos``), BM25 (``bm``) and its maximum over the
    alive rows (``bm_max``), with the hybrid σ of any rows (:meth:`sigma`).

    Lifecycle-linked similarity (our choice where the paper is silent): an edge that supersedes,
    contradicts, retracts or is tentative for another edge — or a later edge in the same slot —
    is about the same attribute, so it inherits ``propagation`` × its predecessor's cosine when
    that is higher than its own (``Prepared.related`` pairs; one hop, default factor 1.0). A
    question about "the phone" then finds "switched to a Galaxy" through the "uses an iPhone" it
    replaced, and a retraction statement through the plan it withdrew. Flat baselines never see
    links and do not propagate.

    ``cosine`` may be a :class:`PartialCosine`: ``cos_raw`` and ``cos`` are then exact on the rows
    :meth:`complete` was given (``exact``), and every other row counts as its cosine so far;
    ``reached`` are the rows whose cosine can be above 0 before any is computed (the known ones
    and the sources of their related pairs).
    """

    def __init__(
        self,
        prep: Prepared,
        cosine: np.ndarray | PartialCosine,
        bm25: np.ndarray,
        alive: np.ndarray,
        alive_idx: np.ndarray | None,
        config: PipelineConfig,
    ) -> None:
        partial, values = (cosine, cosine.values) if isinstance(cosine, PartialCosine) else (None, cosine)
        self.prep = prep
        self.partial = partial
        self.n = n = values.shape[0]
        self.propagation = config.propagation
        rel = prep.related
        self.propagate = bool(
            rel is not None and config.propagation > 0 and config.ranker == "lifecycle" and len(rel[0])
        )
        # float32 cosines (an embedder's) stay float32 while rows are selected over the whole bank:
        # clipping, maxima and orderings are exact in either width, and every σ is computed in
        # float64 from the selected rows (half the memory traffic over n rows; results identical)
        self.work = (
            np.float32
            if (np.asarray(values).dtype == np.float32 and not (self.propagate and config.propagation != 1.0))
            else np.float64
        )
        self.cos_raw = cos_raw = np.clip(np.asarray(values, dtype=self.work), 0.0, 1.0)
        self.cos = cos_raw
        reached = partial.known_rows() if partial is not None else None
        if self.propagate and rel is not None:
            # per source row, the maximum of propagation x cos over its related rows
            if reached is None:
                src, dst = rel
            else:
                src, dst = prep.related_of(reached, by="related")
                reached = _union([reached, src]) if src.size else reached
            self.cos = cos_raw.copy()
            linked = cos_raw[dst]
            if config.propagation != 1.0:
                linked *= config.propagation
            np.maximum.at(self.cos, src, linked)  # one hop from cos_raw; max is exact in any order
        self.reached = reached
        #: rows whose cos is computed exactly (of a partial cosine; None otherwise)
        self.exact = np.zeros(n, dtype=bool) if partial is not None else None
        self.bm = bm = np.asarray(bm25, dtype=np.float64)
        if alive_idx is None:
            self.bm_max = bm.max() if n else 0.0
        else:  # the maximum over alive rows (without gathering them)
            self.bm_max = bm.max(where=alive, initial=-np.inf) if alive_idx.size else 0.0
        self.hw = config.hybrid_weight

    def complete(self, rows: np.ndarray) -> None:
        """Make ``cos_raw`` and ``cos`` exact on ``rows`` (ascending, distinct) of a partial cosine."""
        partial, exact = self.partial, self.exact
        if partial is None or exact is None:
            return
        rows = rows[~exact[rows]]
        if not rows.size:
            return
        if self.propagate:
            src_e, dst_e = self.prep.related_of(rows)
            need = _union([rows, dst_e]) if dst_e.size else rows
        else:
            need = rows
        done = partial.fill(need)
        if done.size:
            self.cos_raw[done] = np.clip(partial.values[done].astype(self.work), 0.0, 1.0)
        if self.propagate:
            self.cos[rows] = self.cos_raw[rows]
            if dst_e.size:
                linked_e = self.cos_raw[dst_e]
                if self.propagation != 1.0:
                    linked_e = linked_e * self.propagation
                np.maximum.at(self.cos, src_e, linked_e)
        exact[rows] = True

    def bm25_share(self, rows: np.ndarray) -> np.ndarray:
        """BM25 / max BM25 of ``rows`` (0 when no alive row matches)."""
        return self.bm[rows] / self.bm_max if self.bm_max > 0 else np.zeros(rows.shape[0])

    def sigma(self, rows: np.ndarray) -> np.ndarray:
        """The hybrid σ of ``rows`` (:func:`hybrid_sigma` of the linked cosine, in float64)."""
        return hybrid_sigma(self.cos[rows].astype(np.float64), self.bm25_share(rows), self.hw)


def cosine_candidates(
    sims: Similarities, alive: np.ndarray, alive_idx: np.ndarray | None, count: int
) -> np.ndarray | None:
    """Stage 1, cosine candidates: the ``count`` alive rows of highest lifecycle-linked cosine."""
    if not (count > 0 and sims.n):
        return None
    cos, reached = sims.cos, sims.reached
    if reached is not None:
        # every row outside ``reached`` is at 0: when the count-th best of those inside is above
        # 0, it is the top over every row
        pool = reached if alive_idx is None else reached[alive[reached]]
        top_cos = _top(cos[pool], pool, count) if pool.size >= count else None
        if top_cos is not None and cos[top_cos[-1]] > 0:
            return top_cos
    if alive_idx is None:
        return _top(cos, None, count)
    if alive_idx.size:
        return _top(cos[alive_idx], alive_idx, count)
    return None


def bm25_candidates(
    sims: Similarities, alive: np.ndarray, alive_idx: np.ndarray | None, count: int
) -> np.ndarray | None:
    """Stage 2, BM25 candidates: the ``count`` alive rows of highest positive BM25."""
    if count <= 0:
        return None
    bm = sims.bm
    positive = bm > 0
    if alive_idx is None and sims.n and positive.all():  # every row matches: no index gather
        return _top(bm, None, count)
    if alive_idx is not None:
        positive &= alive
    idx = np.flatnonzero(positive)
    return _top(bm[idx], idx, count) if idx.size else None


def forced_candidates(
    prep: Prepared,
    sims: Similarities,
    routing: np.ndarray,
    alive: np.ndarray,
    alive_idx: np.ndarray | None,
    count: int,
) -> np.ndarray | None:
    """Stage 3, category-forced candidates: the ``count`` alive rows of highest hybrid σ among
    those whose primary category is the query's top routed category (the first maximum of
    ``routing``, as argmax); none when that category's routing weight is not positive."""
    top_routed = int(primary_index(routing)) if routing.shape[0] else 0
    if not (count and routing.shape[0] and routing.item(top_routed) > 0):
        return None
    idx = prep.rows_of_primary(top_routed)
    if alive_idx is not None:
        idx = idx[alive[idx]]
    if not idx.size:
        return None
    if sims.partial is not None:
        return _forced_top(idx, count, sims, sims.partial)
    return _top(sims.sigma(idx), idx, count)


#: most rows the forced stage computes beyond its first candidates over a partial cosine (when
#: more could reach its top, the ones with the highest bound are computed: approximate)
FORCED_FILL_MAX = 2048


def _forced_top(idx: np.ndarray, count: int, sims: Similarities, partial: PartialCosine) -> np.ndarray:
    """The forced stage's ``_top(sims.sigma(idx), idx, count)`` over a :class:`PartialCosine`.

    First computed: the ``count`` best rows of ``idx`` by BM25 and the ``count`` best by cosine
    among the known ones. An unknown row's σ is at most (1 − γ)·max(c, ``partial.bound``) +
    γ·bm25 (c: its linked cosine so far). Then every row whose bound reaches the ``count``-th best
    computed σ is computed (at most :data:`FORCED_FILL_MAX`, those of highest bound), and the top
    is taken over computed rows: exact whenever the bound holds and no more than that many rows
    could reach the top."""
    exact, cos, bm = sims.exact, sims.cos, sims.bm
    assert exact is not None  # a partial cosine's similarities track the exact rows
    known = idx[partial.known[idx]]
    pool = [idx[exact[idx]], _top(bm[idx], idx, count)]
    if known.size:
        pool.append(_top(cos[known], known, count))
    done = _union(pool)
    sims.complete(done)
    if done.size < count:  # idx has fewer rows than that
        sims.complete(idx)
        return _top(sims.sigma(idx), idx, count)
    threshold = np.sort(sims.sigma(done))[-count]
    bound = max(0.0, min(1.0, float(partial.bound)))
    upper = hybrid_sigma(np.maximum(cos[idx], bound).astype(np.float64), sims.bm25_share(idx), sims.hw)
    reach = upper >= threshold
    reach &= ~exact[idx]
    more = idx[reach]
    if more.size > FORCED_FILL_MAX:
        more = np.sort(_top(upper[reach], more, FORCED_FILL_MAX))
    if more.size:
        sims.complete(more)
        done = _union([done, more])
    return _top(sims.sigma(done), done, count)


def dedup(found: list[tuple[str, np.ndarray]], sims: Similarities) -> tuple[np.ndarray, np.ndarray]:
    """Stage 4, dedup: the rows the candidate stages found, each once (ascending), and their
    hybrid σ (exact: a partial cosine is computed on every candidate). Which stages found a row
    stays in ``found``."""
    cand = _union([rows for _, rows in found])
    sims.complete(cand)
    return cand, sims.sigma(cand)


def distill(
    prep: Prepared,
    cand: np.ndarray,
    sig: np.ndarray,
    intent: int,
    config: PipelineConfig,
    admitted_too: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Stage 5, staleness-aware distillation (deterministic here; an LLM call in the paper): the
    first ``config.n_distill`` candidates and their σ, ordered by (admitted by the intent first,
    when ``config.staleness_aware``; then σ descending; then row); all of them when there are no
    more than that or ``n_distill`` is 0. ``admitted_too``: rows counted as admitted besides
    (the raw turns that ``turn_supersession="order"`` and ``turn_expiry="keep"`` admit)."""
    if not (config.n_distill and cand.size > config.n_distill):
        return cand, sig
    if config.staleness_aware:
        ok = prep.admitted_rows(config.untyped_expiry, config.overwrite, intent, config.score)[cand]
        if admitted_too is not None and admitted_too.size:
            ok = ok | np.isin(cand, admitted_too)
        order = np.lexsort((cand, -sig, -ok.astype(np.int64)))
    else:
        order = np.lexsort((cand, -sig))
    order = order[: config.n_distill]
    return cand[order], sig[order]


def lifecycle_filters(
    prep: Prepared,
    cand: np.ndarray,
    sig: np.ndarray,
    state: np.ndarray,
    intent: int,
    routing: np.ndarray,
    params: LifecycleParams,
    config: PipelineConfig,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stage 6, lifecycle filters: the kernel inputs of the distilled candidates — each one's
    lifecycle state (of the pipeline's lifecycle variant ``state``) and the query's intent, from
    which the kernel's state × intent compatibility mask (:func:`frcore.compatibility_mask`, applied
    inside the kernel with the score of stage 7) excludes a candidate, with σ and ages under the
    pipeline's rules (``sigma_scale``, ``turn_age``, ``stable_activation_floor``, ``turn_share``).

    Returns (packed candidates (F, bucket), packed query (1 + C,), σ after ``sigma_scale``)."""
    if config.sigma_scale == "max":
        sig = scale_sigma_max(sig)
    ages_key = rule_ages_params = None
    if config.turn_age != "said" or config.stable_activation_floor:
        ages_key, _ = prep.rule_ages(config, params)
        rule_ages_params = params
    sig_kernel = sig
    if config.turn_share == "least":
        factor = prep.turn_share_factor(params, config.score)
        if factor is not None:
            sig_kernel = sig * factor[cand]
    cmat, qvec = kernel_inputs(
        prep,
        cand,
        sig_kernel,
        state,
        intent,
        routing,
        prep.states_valid(config.untyped_expiry, config.overwrite),
        ages_key,
        rule_ages_params,
    )
    return cmat, qvec, sig


def blended_log_score(
    cmat: np.ndarray, qvec: np.ndarray, sig: np.ndarray, params: LifecycleParams, config: PipelineConfig
) -> np.ndarray:
    """Stage 7, blended log-score: the frcore kernel (docs/score.md) over the packed candidates,
    masked by the compatibility mask, and its ``config.k`` best in one device call
    (:func:`frcore._packed.score_top_k_rows`). ``floor_reference="query_max"`` reads the floor's
    threshold relative to the largest ``sig``.

    Returns the kernel's (2 + T, k') float32 rows: values, candidate positions, score terms."""
    pvec = _packed_params(params)
    if config.floor_reference == "query_max":
        pvec = relative_floor_params(params, float(sig.max()) if sig.size else 0.0)
    return np.asarray(cached_call(score_top_k_rows, pvec, qvec, cmat, k=config.k, config=config.score))


def top_k(
    top: np.ndarray, cand: np.ndarray, sims: Similarities, found: list[tuple[str, np.ndarray]]
) -> tuple[Retrieved, ...]:
    """Stage 8, top-k: the kernel's best (selected in stage 7's call) as results, best first —
    a masked (non-finite) or padding position dropped; each with its score terms, its
    similarities (``sim_cosine``, ``sim_linked``, ``sim_bm25``) and the stages that found it."""
    k = cand.size
    # one row per ranked position: [value, candidate index, *terms] (float32 → Python float, exact)
    ranked = [r for r in top.T.tolist() if math.isfinite(r[0]) and r[1] < k]
    rows = cand[[int(r[1]) for r in ranked]]
    sim_rows = zip(sims.cos_raw[rows].tolist(), sims.cos[rows].tolist(), sims.bm25_share(rows).tolist())
    stages_sets = [(name, set(found_rows.tolist())) for name, found_rows in found]
    fields = ScoreTerms._fields
    out = []
    for r, row, (s_cos, s_linked, s_bm) in zip(ranked, rows.tolist(), sim_rows):
        t = dict(zip(fields, r[2:]))
        t["sim_cosine"], t["sim_linked"], t["sim_bm25"] = s_cos, s_linked, s_bm
        out.append(Retrieved(row, r[0], t, tuple(name for name, found_rows in stages_sets if row in found_rows)))
    return tuple(out)
