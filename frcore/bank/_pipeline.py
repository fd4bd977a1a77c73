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
  FR-full below flat cosine (README, "Design choices", for the numbers and commands). We keep
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

from dataclasses import dataclass, field, replace
from typing import Sequence

import jax.numpy as jnp
import numpy as np

from .. import _types as T
from .._params import LifecycleParams
from .._packed import pack_candidates, pack_params, pack_query, score_top_k_packed
from .._types import COMPATIBLE, Intent, ScoreConfig, State
from .._validate import bucket_size, make_candidates, make_query

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
        _PACKED[:] = [params, pack_params(params)]
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
    link), or src is a later edge than dst in the same slot."""
    src: list[int] = []
    dst: list[int] = []
    for i, lk in enumerate(links):
        for targets in (lk or {}).values():
            for t in (targets,) if isinstance(targets, str) else targets:
                j = index.get(t)
                if j is not None and j != i:
                    src.append(i)
                    dst.append(j)
    by_slot: dict[object, list[int]] = {}
    for i, s in enumerate(slots):
        if s is not None:
            by_slot.setdefault(s, []).append(i)
    for rows in by_slot.values():
        rows.sort(key=lambda r: (said_at_h[r], r))
        for a in range(len(rows)):
            for b in range(a):
                src.append(rows[a])
                dst.append(rows[b])
    return np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)


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


def retrieve(
    *,
    weights: np.ndarray,
    said_at_h: np.ndarray,
    event_h: np.ndarray,
    state: np.ndarray,
    confidence: np.ndarray,
    numeric: np.ndarray,
    slots: Sequence,
    eligible: np.ndarray,
    cosine: np.ndarray,
    bm25: np.ndarray,
    routing: np.ndarray,
    intent: str | int,
    at_h: float,
    params: LifecycleParams,
    config: PipelineConfig,
    ages: np.ndarray | None = None,
    related: tuple[np.ndarray, np.ndarray] | None = None,
    primary_rows: np.ndarray | None = None,
) -> Retrieval:
    """Run the eight stages over one bank snapshot for one query.

    ``cosine`` and ``bm25`` are the query's similarities to every row; ``eligible`` is False for
    rows that must never surface (quarantined, erased); ``ages`` may be passed precomputed
    (:func:`clock_ages`) when many queries share a snapshot. Returns up to ``config.k`` results.
    """
    n = cosine.shape[0]
    intent_i = T.intent_index(intent)
    state = np.asarray(state).copy()
    hours_to_event = np.asarray(event_h, dtype=np.float64) - at_h
    has_event = ~np.isnan(hours_to_event)
    if config.untyped_expiry:
        past = has_event & (np.nan_to_num(hours_to_event, nan=0.0) < 0)
        state[past & ((state == State.ACTIVE) | (state == State.CONTESTED))] = State.EXPIRED
    alive = np.asarray(eligible, dtype=bool).copy()
    if config.overwrite:
        alive &= overwrite_keep(state, slots, said_at_h)
    cos_raw = np.clip(np.asarray(cosine, dtype=np.float64), 0.0, 1.0)
    cos = cos_raw
    if related is not None and config.propagation > 0 and config.ranker == "lifecycle" and len(related[0]):
        src, dst = related
        cos = cos_raw.copy()
        np.maximum.at(cos, src, config.propagation * cos_raw[dst])
    bm = np.asarray(bm25, dtype=np.float64)
    bm_max = bm[alive].max() if alive.any() else 0.0
    bm_n = bm / bm_max if bm_max > 0 else np.zeros(n)
    sigma = (1.0 - config.hybrid_weight) * cos + config.hybrid_weight * bm_n

    # Flat baselines: one similarity, no lifecycle stage.
    if config.ranker in ("cosine", "bm25"):
        s = cos_raw if config.ranker == "cosine" else bm
        idx = np.flatnonzero(alive)
        if config.ranker == "bm25":
            idx = idx[bm[idx] > 0]
        order = idx[np.lexsort((idx, -s[idx]))][: config.k]
        return Retrieval(
            tuple(Retrieved(int(i), float(s[i]), {config.ranker: float(s[i])}, (config.ranker,)) for i in order),
            int(idx.size),
            int(idx.size),
        )

    # Stages 1-3: candidate generation.
    stages: dict[int, list[str]] = {}

    def take(name: str, values: np.ndarray, count: int, pool: np.ndarray) -> None:
        idx = np.flatnonzero(pool)
        if count <= 0 or idx.size == 0:
            return
        if idx.size > 4 * count:  # partial selection first; ties at the cut resolved below by index
            v = values[idx]
            cut = np.partition(-v, count - 1)[count - 1]
            idx = idx[-v <= cut]
        order = idx[np.lexsort((idx, -values[idx]))][:count]
        for i in order:
            stages.setdefault(int(i), []).append(name)

    take("cosine", cos, config.n_cosine, alive)
    take("bm25", bm, config.n_bm25, alive & (bm > 0))
    if config.n_forced and config.score.routing and routing.max() > 0:
        top_cat = int(np.argmax(routing))
        primary = np.argmax(weights, axis=1) if primary_rows is None else primary_rows
        take("forced", sigma, config.n_forced, alive & (primary == top_cat))

    # Stage 4: dedup (a row found by several stages appears once, with every stage recorded).
    cand = np.array(sorted(stages), dtype=np.int64)
    n_cand = cand.size
    if n_cand == 0:
        return Retrieval((), 0, 0)

    # Stage 5: staleness-aware distillation.
    ok = admitted(state[cand], np.asarray(numeric, bool)[cand], hours_to_event[cand], intent_i, config.score)
    if config.n_distill and n_cand > config.n_distill:
        prio = ok.astype(np.int64) if config.staleness_aware else np.zeros(n_cand, dtype=np.int64)
        order = np.lexsort((cand, -sigma[cand], -prio))
        cand = cand[order[: config.n_distill]]

    # Stages 6-7: lifecycle filters and the blended log-score (frcore kernel).
    k = cand.size
    cands = make_candidates(
        sim=np.clip(sigma[cand], 0.0, 1.0),
        weights=weights[cand],
        ages=(clock_ages(said_at_h, at_h) if ages is None else ages)[cand],
        state=state[cand],
        hours_to_event=hours_to_event[cand],
        confidence=np.asarray(confidence)[cand],
        numeric=np.asarray(numeric, bool)[cand],
        pad_to=bucket_size(k),
        device=False,
    )
    query = make_query(intent_i, np.clip(routing, 0.0, 1.0), device=False)
    values, order, terms = score_top_k_packed(
        _packed_params(params), pack_query(query), pack_candidates(cands), config.k, config.score, with_terms=True
    )
    values, order = np.asarray(values), np.asarray(order)
    terms_np = {name: np.asarray(v) for name, v in terms._asdict().items()}  # terms of the top k
    out = []
    for pos, (v, j) in enumerate(zip(values, order)):
        if not np.isfinite(v) or j >= k:
            continue
        row = int(cand[j])
        t = {name: float(arr[pos]) for name, arr in terms_np.items()}
        t["sim_cosine"] = float(cos_raw[row])
        t["sim_linked"] = float(cos[row])
        t["sim_bm25"] = float(bm_n[row])
        out.append(Retrieved(row, float(v), t, tuple(stages[row])))
    return Retrieval(tuple(out), n_cand, k, cand, cands, query)
