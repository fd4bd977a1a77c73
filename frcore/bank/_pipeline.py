"""FR-Bank's eight-stage retrieval pipeline (SPEC §4, the paper's appendix Z).

1. cosine candidates, 2. BM25 candidates, 3. category-forced candidates (up to 20 edges from the
query's top routed category), 4. dedup, 5. staleness-aware distillation to the top 20,
6. lifecycle filters, 7. blended log-score (frcore), 8. top-10.

The pipeline is a pure function of a snapshot's arrays, the query's embedding and BM25 scores,
its routing and intent, and a :class:`PipelineConfig`. Every baseline and ablation of the
benchmark is a configuration of this one function (``ranker`` picks the final ordering; the
stages can be switched off), never a copy.

Our choices where the paper is silent (documented, not the paper's):

- σ fed to the score is (1 − γ)·cos + γ·bm25/max(bm25) with γ = ``hybrid_weight`` = 0.3, the
  value set before any measurement; cosine is clipped to [0, 1]. It is a trade-off, not an
  optimum: on LifecycleBench's development split γ = 0 scores higher, on LoCoMo γ = 0 drops
  FR-full 3.6 pp below flat cosine (README, "Design choices", for the numbers and commands). We keep
  the one configuration that holds up on both rather than tune per benchmark.
- Distillation (an LLM call in the paper) is deterministic here: candidates whose lifecycle state
  the intent does not admit go last, then by hybrid σ; the first ``n_distill`` are kept.
- Lifecycle-linked similarity: an edge that supersedes, contradicts, retracts or is tentative
  for another edge — or a later edge in the same slot — is about the same attribute, so it
  inherits ``propagation`` x its predecessor's cosine when that is higher than its own
  (``related`` pairs; default factor 1.0). A question about "the phone" then finds "switched to a
  Galaxy" through the "uses an iPhone" it replaced, and a retraction statement through the plan
  it withdrew. Flat baselines never see links and do not propagate.
- Ages on the three clocks: absolute = hours from said-at to the query time; inter-session = hours
  from said-at to the latest said-at in the bank (time inside the conversation's own timeline,
  idle time after the last session excluded); conversational = number of items said after it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from .. import _types as T
from .._params import LifecycleParams
from .._packed import pack_candidates, pack_params, pack_query, score_top_k_rows
from .._ontology import N_CATEGORIES
from .._scoring import Candidates, Query, ScoreTerms
from .._types import COMPATIBLE, N_STATES, Intent, ScoreConfig, State
from .._validate import WEIGHT_SUM_TOL, bucket_size, make_candidates, make_query

STAGES = ("cosine", "bm25", "forced")
RANKERS = ("lifecycle", "cosine", "bm25")


@dataclass(frozen=True)
class PipelineConfig:
    """One system = one configuration of the pipeline.

    Attributes:
      score: the :class:`~frcore.ScoreConfig` switches of the blended score (ablations).
      ranker: ``lifecycle`` (the frcore score), ``cosine`` or ``bm25`` (flat baselines: final
        order by that similarity alone, no lifecycle stage).
      n_cosine, n_bm25, n_forced: candidates from each stage (0 switches a stage off).
      n_distill: size after staleness-aware distillation (0 = no distillation).
      staleness_aware: distillation puts intent-incompatible states last.
      hybrid_weight: γ of the hybrid similarity.
      overwrite: emulate an overwrite store (Mem0-style UPDATE/DELETE): superseded and retracted
        edges, and all but the newest edge of a contested slot, are deleted before retrieval.
      untyped_expiry: expire every edge whose event time has passed, whatever its category (the
        untyped three-primitive arm has no ontology to say which categories expire).
      propagation: factor of lifecycle-linked similarity (0 = off; see the module docstring).
      k: results returned.
    """

    score: ScoreConfig = field(default_factory=ScoreConfig)
    ranker: str = "lifecycle"
    n_cosine: int = 30
    n_bm25: int = 30
    n_forced: int = 20
    n_distill: int = 20
    staleness_aware: bool = True
    hybrid_weight: float = 0.3
    overwrite: bool = False
    untyped_expiry: bool = False
    propagation: float = 1.0
    k: int = 10

    def __post_init__(self) -> None:
        if self.ranker not in RANKERS:
            raise ValueError(f"PipelineConfig.ranker: unknown ranker {self.ranker!r}; expected one of {RANKERS}")
        if not 0.0 <= self.hybrid_weight <= 1.0:
            raise ValueError(f"PipelineConfig.hybrid_weight: {self.hybrid_weight} outside [0, 1]")
        if not 0.0 <= self.propagation <= 1.0:
            raise ValueError(f"PipelineConfig.propagation: {self.propagation} outside [0, 1]")
        for name in ("n_cosine", "n_bm25", "n_forced", "n_distill", "k"):
            if getattr(self, name) < 0:
                raise ValueError(f"PipelineConfig.{name}: must be ≥ 0")
        if self.k < 1:
            raise ValueError("PipelineConfig.k: must be ≥ 1")


@dataclass(frozen=True)
class Retrieved:
    """One ranked result: snapshot row, score, named terms and the stages that found it."""

    row: int
    score: float
    terms: dict[str, float]
    stages: tuple[str, ...]


@dataclass(frozen=True)
class Retrieval:
    """Ranked results plus the scored candidate set (rows, validated kernel inputs, query), so
    sweeps can re-score the same candidates under other parameters in one batched call."""

    results: tuple[Retrieved, ...]
    n_candidates: int  # after dedup
    n_distilled: int
    rows: np.ndarray | None = None  # (k,) snapshot rows of the scored candidates
    candidates: object | None = None  # frcore.Candidates padded to a bucket
    query: object | None = None  # frcore.Query


_PACKED: list = [None, None]  # (params object, its packed vector): packed once per parameter set


def _packed_params(params: LifecycleParams) -> np.ndarray:
    if _PACKED[0] is not params:
        _PACKED[:] = [params, jax.device_put(pack_params(params))]  # device-resident: no per-query transfer
    return _PACKED[1]


def clock_ages(said_at_h: np.ndarray, at_h: float) -> np.ndarray:
    """(n, 3) ages: absolute hours, inter-session hours, conversational messages (see module doc)."""
    said = np.asarray(said_at_h, dtype=np.float64)
    if said.size == 0:
        return np.zeros((0, 3))
    absolute = np.maximum(at_h - said, 0.0)
    latest = min(float(said.max()), at_h)
    inter = np.maximum(latest - said, 0.0)
    order = np.sort(said)
    after = said.size - np.searchsorted(order, said, side="right")
    return np.stack([absolute, inter, after.astype(np.float64)], axis=1)


def related_pairs(slots: Sequence, said_at_h: np.ndarray, links: Sequence[dict], index: dict) -> tuple[np.ndarray, np.ndarray]:
    """(src, dst) row pairs: src supersedes / contradicts / retracts / is tentative for dst (by
    link), or src is a later edge than dst in the same slot (by said-at, ties by row)."""
    src: list[int] = []
    dst: list[int] = []
    for i, lk in enumerate(links):
        if not lk:
            continue
        for targets in lk.values():
            for t in (targets,) if isinstance(targets, str) else targets:
                j = index.get(t)
                if j is not None and j != i:
                    src.append(i)
                    dst.append(j)
    link_src, link_dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    # Slot pairs: each slot's rows in (said-at, row) order; every row pairs with all before it.
    codes: dict[object, int] = {}
    code = np.fromiter((-1 if s is None else codes.setdefault(s, len(codes)) for s in slots), dtype=np.int64, count=len(slots))
    rows = np.flatnonzero(code >= 0)
    if rows.size < 2:
        return link_src, link_dst
    said = np.asarray(said_at_h, dtype=np.float64)
    rows = rows[np.lexsort((rows, said[rows], code[rows]))]
    c = code[rows]
    starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
    sizes = np.diff(np.r_[starts, rows.size])
    before = np.arange(rows.size) - np.repeat(starts, sizes)  # rows before each in its slot
    total = int(before.sum())
    if total == 0:
        return link_src, link_dst
    offsets = np.repeat(np.cumsum(before) - before, before)
    first = np.repeat(np.repeat(starts, sizes), before)
    slot_src = np.repeat(rows, before)
    slot_dst = rows[first + np.arange(total) - offsets]
    return np.concatenate([link_src, slot_src]), np.concatenate([link_dst, slot_dst])


def overwrite_keep(state: np.ndarray, slots: Sequence, said_at_h: np.ndarray) -> np.ndarray:
    """Rows an overwrite store still holds: drop superseded and retracted edges, and in each
    contested slot all but the newest edge (an UPDATE overwrites the old value)."""
    keep = (state != State.SUPERSEDED) & (state != State.RETRACTED)
    newest: dict[object, int] = {}
    for i in np.flatnonzero(state == State.CONTESTED):
        s = slots[i]
        if s is None:
            continue
        j = newest.get(s)
        if j is None or said_at_h[i] >= said_at_h[j]:
            newest[s] = i
    for i in np.flatnonzero(state == State.CONTESTED):
        s = slots[i]
        if s is not None and newest[s] != i:
            keep[i] = False
    return keep


def admitted(state: np.ndarray, numeric: np.ndarray, hours_to_event: np.ndarray, intent: int, config: ScoreConfig) -> np.ndarray:
    """NumPy view of the compatibility mask (used by distillation; the score applies the same
    table through :func:`frcore.compatibility_mask`)."""
    if not config.lifecycle:
        return np.ones(state.shape, dtype=bool)
    st = state.copy()
    if config.numeric_exemption:
        st[numeric & ((st == State.SUPERSEDED) | (st == State.EXPIRED))] = State.ACTIVE
    ok = COMPATIBLE[intent, st]
    if intent == Intent.UPCOMING:
        ok &= ~np.isnan(hours_to_event) & (np.nan_to_num(hours_to_event, nan=-1.0) >= 0)
    return ok


class Prepared:
    """Per-snapshot arrays of :func:`retrieve` that depend only on the snapshot and ``at``
    (hours to event, ages, rows by primary category, the grouping of related pairs, the
    lifecycle variants of the state and alive mask), built once and reused by every query
    against that snapshot. Everything query-dependent is computed per call."""

    def __init__(
        self,
        *,
        weights: np.ndarray,
        said_at_h: np.ndarray,
        event_h: np.ndarray,
        state: np.ndarray,
        confidence: np.ndarray,
        numeric: np.ndarray,
        slots: Sequence,
        eligible: np.ndarray,
        at_h: float,
        related: tuple[np.ndarray, np.ndarray] | None = None,
        primary_rows: np.ndarray | None = None,
    ) -> None:
        self.at_h = at_h
        self.weights = weights
        self.said_at_h = said_at_h
        self.state = np.asarray(state)
        self.n = self.state.shape[0]
        self.confidence = np.asarray(confidence)
        self.numeric = np.asarray(numeric, bool)
        self.slots = slots
        self.eligible = np.asarray(eligible, dtype=bool)
        self.hours_to_event = np.asarray(event_h, dtype=np.float64) - at_h
        self._ages = None
        self._primary = primary_rows
        self._by_primary: dict[int, np.ndarray] = {}
        self.related = related
        self._groups = None
        self._variants: dict[tuple[bool, bool], tuple] = {}
        self._kernel_rows: tuple | None = None

    @property
    def ages(self) -> np.ndarray:
        if self._ages is None:
            self._ages = clock_ages(self.said_at_h, self.at_h)
        return self._ages

    def rows_of_primary(self, cat: int) -> np.ndarray:
        """Rows whose primary category (argmax weight, first on ties) is ``cat``, ascending."""
        rows = self._by_primary.get(cat)
        if rows is None:
            primary = np.argmax(self.weights, axis=1) if self._primary is None else self._primary
            rows = self._by_primary[cat] = np.flatnonzero(primary == cat)
        return rows

    def related_groups(self):
        """(unique src rows, dst rows ordered by src, start of each src's run): the related
        pairs grouped by source, for a per-source maximum with ``np.maximum.reduceat``."""
        if self._groups is None:
            src, dst = self.related
            order = np.argsort(src, kind="stable")
            s = src[order]
            starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
            self._groups = (s[starts], dst[order], starts)
        return self._groups

    def variant(self, untyped_expiry: bool, overwrite: bool):
        """(state, alive mask, alive rows or None when every row is alive) for the pipeline's
        lifecycle switches (untyped expiry rewrites states; overwrite drops rows)."""
        key = (untyped_expiry, overwrite)
        v = self._variants.get(key)
        if v is None:
            state = self.state
            if untyped_expiry:
                state = state.copy()
                he = self.hours_to_event
                past = ~np.isnan(he) & (np.nan_to_num(he, nan=0.0) < 0)
                state[past & ((state == State.ACTIVE) | (state == State.CONTESTED))] = State.EXPIRED
            alive = self.eligible.copy()
            if overwrite:
                alive &= overwrite_keep(state, self.slots, self.said_at_h)
            v = self._variants[key] = (state, alive, None if alive.all() else np.flatnonzero(alive))
        return v

    def kernel_rows(self) -> tuple | None:
        """Every row's kernel inputs in the kernel's dtypes (float32 weights, ages, hours to
        event with NaN → 0, confidence; has_event), or None when some row would fail
        :func:`frcore.make_candidates`' checks — then each query calls it, and it raises on
        the offending candidate exactly as before."""
        if self._kernel_rows is None:
            w = np.asarray(self.weights, dtype=np.float64)
            a = np.asarray(self.ages, dtype=np.float64)
            he = self.hours_to_event
            conf = np.asarray(self.confidence, dtype=np.float64)
            ok = (
                w.shape == (self.n, N_CATEGORIES) and a.shape == (self.n, 3) and conf.shape == (self.n,)
                and bool(np.isfinite(w).all()) and bool((w >= 0).all())
                and bool((np.abs(w.sum(axis=1) - 1.0) <= WEIGHT_SUM_TOL).all())
                and bool(np.isfinite(a).all()) and bool((a >= 0).all())
                and not bool(np.isinf(he).any())
                and bool(((conf >= 0) & (conf <= 1)).all())
            )
            if ok:
                has_event = ~np.isnan(he)
                self._kernel_rows = (
                    w.astype(np.float32), a.astype(np.float32), has_event,
                    np.where(has_event, he, 0.0).astype(np.float32), conf.astype(np.float32),
                )
            else:
                self._kernel_rows = ()
        return self._kernel_rows or None


def _state_ok(st: np.ndarray) -> bool:
    return np.issubdtype(st.dtype, np.integer) and bool(((st >= 0) & (st < N_STATES)).all())


def kernel_inputs(prep: Prepared, cand: np.ndarray, sim: np.ndarray, state: np.ndarray, intent: int, routing: np.ndarray):
    """(Candidates padded to a bucket, Query) on the host, equal to what
    :func:`frcore.make_candidates` / :func:`frcore.make_query` return for these rows; the
    per-row checks were done once per snapshot (:meth:`Prepared.kernel_rows`), so only the
    query's own values are checked here. Anything that would not pass goes through
    make_candidates / make_query, which raise as before."""
    k = cand.size
    rows = prep.kernel_rows()
    st = state[cand]
    if rows is None or not bool(np.isfinite(sim).all()) or not _state_ok(st):
        cands = make_candidates(
            sim=np.clip(sim, 0.0, 1.0), weights=prep.weights[cand], ages=prep.ages[cand], state=st,
            hours_to_event=prep.hours_to_event[cand], confidence=prep.confidence[cand], numeric=prep.numeric[cand],
            pad_to=bucket_size(k), device=False,
        )
    else:
        w32, a32, has_event, he32, conf32 = rows
        m = bucket_size(k)
        f = np.float32
        s = np.zeros(m, f)
        s[:k] = np.clip(sim, 0.0, 1.0)
        w = np.zeros((m, N_CATEGORIES), f)
        w[:k] = w32[cand]
        w[k:, N_CATEGORIES - 1] = 1.0  # padding rows: valid weights, masked by `valid`
        a = np.zeros((m, 3), f)
        a[:k] = a32[cand]
        he_flag = np.zeros(m, bool)
        he_flag[:k] = has_event[cand]
        he = np.zeros(m, f)
        he[:k] = he32[cand]
        state_p = np.zeros(m, np.int32)
        state_p[:k] = st
        conf = np.ones(m, f)
        conf[:k] = conf32[cand]
        num = np.zeros(m, bool)
        num[:k] = prep.numeric[cand]
        valid = np.zeros(m, bool)
        valid[:k] = True
        cands = Candidates(sim=s, weights=w, ages=a, has_event=he_flag, hours_to_event=he, state=state_p, confidence=conf, numeric=num, valid=valid)
    r = np.clip(np.asarray(routing, dtype=np.float64), 0.0, 1.0)
    if r.shape == (N_CATEGORIES,) and bool(np.isfinite(r).all()):
        query = Query(intent=np.asarray(intent, dtype=np.int32), routing=r.astype(np.float32))
    else:
        query = make_query(intent, r, device=False)
    return cands, query


def _top(vals: np.ndarray, idx: np.ndarray | None, count: int) -> np.ndarray:
    """The ``count`` rows with the largest values, ties by row (ascending): ``vals`` are the
    values of rows ``idx`` (``None``: of every row, ``vals`` indexed by row). A partial
    selection first when the pool is large; ties at the cut are kept and resolved by row."""
    neg = -vals
    if neg.shape[0] > 4 * count:
        keep = np.flatnonzero(neg <= np.partition(neg, count - 1)[count - 1])
        idx = keep if idx is None else idx[keep]
        neg = neg[keep]
    elif idx is None:
        idx = np.arange(neg.shape[0])
    return idx[np.lexsort((idx, neg))][:count]


def retrieve(
    prep: Prepared,
    *,
    cosine: np.ndarray,
    bm25: np.ndarray,
    routing: np.ndarray,
    intent: str | int,
    params: LifecycleParams,
    config: PipelineConfig,
) -> Retrieval:
    """Run the eight stages over one bank snapshot for one query.

    ``prep`` carries the snapshot's per-edge arrays as of one valid time (:class:`Prepared`,
    built once per snapshot and shared by its queries); ``cosine`` and ``bm25`` are the query's
    similarities to every row. Returns up to ``config.k`` results.
    """
    n = cosine.shape[0]
    intent_i = T.intent_index(intent)
    hours_to_event = prep.hours_to_event
    state, alive, alive_idx = prep.variant(config.untyped_expiry, config.overwrite)
    cos_raw = np.array(cosine, dtype=np.float64)  # a copy: clipped in place
    np.clip(cos_raw, 0.0, 1.0, out=cos_raw)
    cos = cos_raw
    rel = prep.related
    if rel is not None and config.propagation > 0 and config.ranker == "lifecycle" and len(rel[0]):
        # per source row, the maximum of propagation x cos over its related rows (as np.maximum.at)
        src, dst, starts = prep.related_groups()
        cos = cos_raw.copy()
        cos[src] = np.maximum(cos_raw[src], np.maximum.reduceat(config.propagation * cos_raw[dst], starts))
    bm = np.asarray(bm25, dtype=np.float64)
    if alive_idx is None:
        bm_max = bm.max() if n else 0.0
    else:
        bm_max = bm[alive_idx].max() if alive_idx.size else 0.0
    hw = config.hybrid_weight

    def bm_n(rows: np.ndarray) -> np.ndarray:
        return bm[rows] / bm_max if bm_max > 0 else np.zeros(rows.shape[0])

    def sigma(rows: np.ndarray) -> np.ndarray:
        return (1.0 - hw) * cos[rows] + hw * bm_n(rows)

    # Flat baselines: one similarity, no lifecycle stage.
    if config.ranker in ("cosine", "bm25"):
        s = cos_raw if config.ranker == "cosine" else bm
        idx = np.arange(n) if alive_idx is None else alive_idx
        if config.ranker == "bm25":
            idx = idx[bm[idx] > 0]
        order = _top(s[idx], idx, config.k) if idx.size else idx
        return Retrieval(
            tuple(Retrieved(int(i), float(s[i]), {config.ranker: float(s[i])}, (config.ranker,)) for i in order),
            int(idx.size),
            int(idx.size),
        )

    # Stages 1-3: candidate generation (each: top count of its pool by its value, ties by row).
    found: list[tuple[str, np.ndarray]] = []
    stages_sets = None
    if config.n_cosine > 0 and n:
        if alive_idx is None:
            found.append(("cosine", _top(cos, None, config.n_cosine)))
        elif alive_idx.size:
            found.append(("cosine", _top(cos[alive_idx], alive_idx, config.n_cosine)))
    if config.n_bm25 > 0:
        positive = bm > 0
        if alive_idx is None and n and positive.all():  # every row matches: no index gather
            found.append(("bm25", _top(bm, None, config.n_bm25)))
        else:
            idx = np.flatnonzero(positive)
            if alive_idx is not None:
                idx = idx[alive[idx]]
            if idx.size:
                found.append(("bm25", _top(bm[idx], idx, config.n_bm25)))
    if config.n_forced and config.score.routing and routing.max() > 0:
        idx = prep.rows_of_primary(int(np.argmax(routing)))
        if alive_idx is not None:
            idx = idx[alive[idx]]
        if idx.size:
            found.append(("forced", _top(sigma(idx), idx, config.n_forced)))

    # Stage 4: dedup (a row found by several stages appears once, with every stage recorded).
    if not found:
        return Retrieval((), 0, 0)
    cand = np.unique(np.concatenate([rows for _, rows in found])) if len(found) > 1 else np.sort(found[0][1])
    n_cand = cand.size
    sig = sigma(cand)

    # Stage 5: staleness-aware distillation.
    if config.n_distill and n_cand > config.n_distill:
        if config.staleness_aware:
            ok = admitted(state[cand], prep.numeric[cand], hours_to_event[cand], intent_i, config.score)
            order = np.lexsort((cand, -sig, -ok.astype(np.int64)))
        else:
            order = np.lexsort((cand, -sig))
        order = order[: config.n_distill]
        cand, sig = cand[order], sig[order]

    # Stages 6-7: lifecycle filters and the blended log-score (frcore kernel).
    k = cand.size
    cands, query = kernel_inputs(prep, cand, sig, state, intent_i, routing)
    top = np.asarray(score_top_k_rows(_packed_params(params), pack_query(query), pack_candidates(cands), config.k, config.score))
    values, order = top[0].tolist(), top[1].astype(np.int64).tolist()
    terms_l = [(name, top[2 + i].astype(np.float64).tolist()) for i, name in enumerate(ScoreTerms._fields)]  # terms of the top k
    out = []
    for pos, (v, j) in enumerate(zip(values, order)):
        if not math.isfinite(v) or j >= k:
            continue
        row = int(cand[j])
        t = {name: arr[pos] for name, arr in terms_l}
        t["sim_cosine"] = float(cos_raw[row])
        t["sim_linked"] = float(cos[row])
        t["sim_bm25"] = float(bm[row] / bm_max) if bm_max > 0 else 0.0
        if stages_sets is None:
            stages_sets = [(name, set(rows.tolist())) for name, rows in found]
        out.append(Retrieved(row, v, t, tuple(name for name, rows in stages_sets if row in rows)))
    return Retrieval(tuple(out), n_cand, k, cand, cands, query)
