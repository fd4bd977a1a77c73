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

Rules beyond the paper (off by default; the system ``fr-plus`` turns them on, docs/fr-plus.md):
``turn_age`` ages unextracted turns as the bank's oldest typed fact and ``turn_share`` gives them
the smallest similarity share 1 − α a typed fact can have, ``floor_reference`` reads
the semantic floor's threshold relative to the query's best σ, ``stable_activation_floor`` keeps
the activation of a typed fact in a category that does not expire at an event at or above F_c.
They change what the kernel is given (ages, σ of turns, the floor threshold), never the score's
formula.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

import jax
import numpy as np

from ... import _types as T
from ..._ontology import N_CATEGORIES, as_arrays
from ..._packed import (
    N_FEATURES,
    ROW_START,
    pack_candidates,
    pack_params,
    pack_query,
    score_top_k_rows,
    unpack_candidates_host,
    unpack_query_host,
)
from ..._params import LifecycleParams
from ..._runtime import cached_call
from ..._scoring import ScoreTerms, admitted as _admitted, effective_age, effective_rate
from ..._types import N_STATES, ScoreConfig, State
from ..._validate import WEIGHT_SUM_TOL, bucket_size, make_candidates, make_query
from ..records import slot_codes

STAGES = ("cosine", "bm25", "forced")
RANKERS = ("lifecycle", "cosine", "bm25")
SIGMA_SCALES = ("raw", "max")
TURN_AGES = ("said", "oldest_fact")
TURN_SHARES = ("own", "least")
FLOOR_REFERENCES = ("absolute", "query_max")


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
      sigma_scale: σ handed to the score: ``raw`` (the hybrid σ) or ``max`` (σ' = σ / max_j σ_j
        over the query's distilled candidate set, so its best candidate has σ' = 1; σ stays as
        it is when that maximum is not positive). ``max`` puts σ on the scale the paper's
        thresholds assume (floor σ ≥ 0.95, numeric rescue σ ≥ 0.85) by a per-query rule with
        nothing fitted; for diagnosis of the σ scale.
      turn_age: ages of an unextracted turn (``kind: "turn"``): ``said`` (from its said-at, as
        every item) or ``oldest_fact`` (on each clock, the largest age of a typed fact in the
        bank, so a turn has no recency advantage over a typed fact; nothing changes in a bank
        without typed facts).
      turn_share: similarity share of an unextracted turn: ``own`` (1 − α of its router-assigned
        primary category, as every item) or ``least`` (the σ handed to the score is scaled by
        (1 − max_c α_c) / (1 − α_p), so its blend at activation 0 is (1 − max_c α_c)·σ, the
        smallest share any typed fact has; nothing changes in a bank without typed facts or
        under ``global_alpha``).
      floor_reference: the semantic floor's condition σ ≥ θ_F: ``absolute`` (the paper's) or
        ``query_max`` (σ ≥ θ_F · σ_max, σ_max the largest σ among the query's distilled
        candidates; the paper's threshold when σ_max is not positive).
      stable_activation_floor: a typed fact whose primary category does not expire at its event
        time and has a semantic floor F_c > 0 keeps activation ≥ F_c (its effective age capped
        at −ln F_c / λ_eff; the anticipatory kernel is unchanged).
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
    sigma_scale: str = "raw"
    turn_age: str = "said"
    turn_share: str = "own"
    floor_reference: str = "absolute"
    stable_activation_floor: bool = False
    k: int = 10

    def __post_init__(self) -> None:
        if self.ranker not in RANKERS:
            raise ValueError(f"PipelineConfig.ranker: unknown ranker {self.ranker!r}; expected one of {RANKERS}")
        if not 0.0 <= self.hybrid_weight <= 1.0:
            raise ValueError(f"PipelineConfig.hybrid_weight: {self.hybrid_weight} outside [0, 1]")
        if not 0.0 <= self.propagation <= 1.0:
            raise ValueError(f"PipelineConfig.propagation: {self.propagation} outside [0, 1]")
        if self.sigma_scale not in SIGMA_SCALES:
            raise ValueError(
                f"PipelineConfig.sigma_scale: unknown scale {self.sigma_scale!r}; expected one of {SIGMA_SCALES}"
            )
        if self.turn_age not in TURN_AGES:
            raise ValueError(f"PipelineConfig.turn_age: unknown rule {self.turn_age!r}; expected one of {TURN_AGES}")
        if self.turn_share not in TURN_SHARES:
            raise ValueError(
                f"PipelineConfig.turn_share: unknown rule {self.turn_share!r}; expected one of {TURN_SHARES}"
            )
        if self.floor_reference not in FLOOR_REFERENCES:
            raise ValueError(
                f"PipelineConfig.floor_reference: unknown reference {self.floor_reference!r}; "
                f"expected one of {FLOOR_REFERENCES}"
            )
        if not isinstance(self.stable_activation_floor, bool):
            raise ValueError(
                f"PipelineConfig.stable_activation_floor: expected a bool, got {self.stable_activation_floor!r}"
            )
        for name in ("n_cosine", "n_bm25", "n_forced", "n_distill", "k"):
            if getattr(self, name) < 0:
                raise ValueError(f"PipelineConfig.{name}: must be ≥ 0")
        if self.k < 1:
            raise ValueError("PipelineConfig.k: must be ≥ 1")


class Retrieved(NamedTuple):
    """One ranked result: snapshot row, score, named terms and the stages that found it.
    (Immutable; a NamedTuple, not a frozen dataclass: built ten times per query, and a frozen
    dataclass's __init__ costs several times more.)"""

    row: int
    score: float
    terms: dict[str, float]
    stages: tuple[str, ...]


class Retrieval(NamedTuple):
    """Ranked results plus the scored candidate set (rows, validated kernel inputs, query), so
    sweeps can re-score the same candidates under other parameters in one batched call."""

    results: tuple[Retrieved, ...]
    n_candidates: int  # after dedup
    n_distilled: int
    rows: np.ndarray | None = None  # (k,) snapshot rows of the scored candidates
    packed_candidates: np.ndarray | None = None  # (F, bucket) as scored (frcore.pack_candidates layout)
    packed_query: np.ndarray | None = None  # (1 + C,) as scored (frcore.pack_query layout)

    @property
    def candidates(self):
        """The scored candidates as :class:`frcore.Candidates` (host arrays, padded to a bucket)."""
        return None if self.packed_candidates is None else unpack_candidates_host(self.packed_candidates)

    @property
    def query(self):
        """The scored query as :class:`frcore.Query`."""
        return None if self.packed_query is None else unpack_query_host(self.packed_query)


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


def related_pairs(
    slots: Sequence, said_at_h: np.ndarray, links: Sequence[dict], index: dict, codes: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(src, dst) row pairs: src supersedes / contradicts / retracts / is tentative for dst (by
    link), or src is a later edge than dst in the same slot (by said-at, ties by row).
    ``codes``: the slots' codes when known (:attr:`frcore.bank.records._lifecycle.Snapshot.slot_codes`,
    equal exactly when the slots are; ``slots`` is then not read). The pairs of one row, as source
    or as related row, come in the same order whatever the codes."""
    src: list[int] = []
    dst: list[int] = []
    for i in itertools.compress(range(len(links)), links):  # the rows with links (most have none)
        lk = links[i]
        for targets in lk.values():
            for t in (targets,) if isinstance(targets, str) else targets:
                j = index.get(t)
                if j is not None and j != i:
                    src.append(i)
                    dst.append(j)
    link_src, link_dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    # Slot pairs: each slot's rows in (said-at, row) order; every row pairs with all before it.
    code = slot_codes(slots) if codes is None else np.asarray(codes, dtype=np.int64)
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
    for i in np.flatnonzero(state == State.CONTESTED).tolist():
        s = slots[i]
        if s is None:
            continue
        j = newest.get(s)
        if j is None or said_at_h[i] >= said_at_h[j]:
            newest[s] = i
    for i in np.flatnonzero(state == State.CONTESTED).tolist():
        s = slots[i]
        if s is not None and newest[s] != i:
            keep[i] = False
    return keep


def admitted(
    state: np.ndarray, numeric: np.ndarray, hours_to_event: np.ndarray, intent: int, config: ScoreConfig
) -> np.ndarray:
    """Which rows the intent admits (used by distillation): the kernel's own compatibility rule,
    :func:`frcore._scoring.admitted` (the one behind :func:`frcore.compatibility_mask`), over
    host arrays. ``hours_to_event`` is NaN for a row without an event time."""
    has_event = ~np.isnan(hours_to_event)
    return _admitted(state, intent, has_event, np.where(has_event, hours_to_event, 0.0), numeric, config, xp=np)


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
        kinds: Sequence | None = None,
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
        self._ages: np.ndarray | None = None
        self._primary = primary_rows
        self._by_primary: dict[int, np.ndarray] = {}
        self.related = related
        self._variants: dict[tuple[bool, bool], tuple] = {}
        self._kernel_table: np.ndarray | Literal[False] | None = None  # False: some row fails the checks
        self._admitted: dict[tuple, np.ndarray] = {}  # admitted mask per (variant, intent, switches)
        self._states_valid: dict[tuple, bool] = {}  # state indices in range, per variant
        if kinds is not None and len(kinds) != self.n:
            raise ValueError(f"Prepared.kinds: expected {self.n} entries (one per row), got {len(kinds)}")
        #: (n,) bool: the row is an unextracted turn (``kind == "turn"``) / a typed fact (``"fact"``);
        #: both all False without kinds (no row is known to be either: the fr-plus rules that
        #: tell them apart change nothing)
        self.turn = np.zeros(self.n, dtype=bool)
        self.typed = np.zeros(self.n, dtype=bool)
        if kinds is not None:
            kind = np.asarray(kinds, dtype=object)
            self.turn = kind == "turn"
            self.typed = kind == "fact"
        self._rule_ages: dict[tuple, tuple] = {}  # ages under the rules, per (rules, decay, params id): (params, ages)
        self._rule_tables: dict[tuple, tuple] = {}  # kernel table for those ages: (params, table or False)
        self._turn_share: dict[int, tuple] = {}  # factor of turn_share="least", per params id: (params, factor)
        self._related_csr: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # by source / related row

    @property
    def ages(self) -> np.ndarray:
        if self._ages is None:
            self._ages = clock_ages(self.said_at_h, self.at_h)
        return self._ages

    def related_of(self, rows: np.ndarray, by: str = "source") -> tuple[np.ndarray, np.ndarray]:
        """(source, related row) of the related pairs whose source (``by="source"``) or related
        row (``by="related"``) is one of ``rows``."""
        got = self._related_csr.get(by)
        if got is None:
            src, dst = self.related if self.related is not None else (np.zeros(0, np.int64), np.zeros(0, np.int64))
            src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
            key = src if by == "source" else dst
            order = np.argsort(key, kind="stable")
            indptr = np.zeros(self.n + 1, dtype=np.int64)
            np.cumsum(np.bincount(key, minlength=self.n), out=indptr[1:])
            got = self._related_csr[by] = (indptr, src[order], dst[order])
        indptr, src, dst = got
        starts = indptr[rows]
        counts = indptr[rows + 1] - starts
        total = int(counts.sum())
        if not total:
            return src[:0], dst[:0]
        pos = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(total)
        return src[pos], dst[pos]

    def rows_of_primary(self, cat: int) -> np.ndarray:
        """Rows whose primary category (argmax weight, first on ties) is ``cat``, ascending."""
        rows = self._by_primary.get(cat)
        if rows is None:
            primary = np.argmax(self.weights, axis=1) if self._primary is None else self._primary
            rows = self._by_primary[cat] = np.flatnonzero(primary == cat)
        return rows

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

    def states_valid(self, untyped_expiry: bool, overwrite: bool) -> bool:
        """Whether every state of a lifecycle variant is a valid state index (cached)."""
        key = (untyped_expiry, overwrite)
        ok = self._states_valid.get(key)
        if ok is None:
            ok = self._states_valid[key] = _state_ok(self.variant(untyped_expiry, overwrite)[0])
        return ok

    def admitted_rows(self, untyped_expiry: bool, overwrite: bool, intent: int, config: ScoreConfig) -> np.ndarray:
        """:func:`admitted` over every row of a lifecycle variant, for one intent (cached: it
        depends on the snapshot, not on the query's text)."""
        key = (untyped_expiry, overwrite, intent, config.lifecycle, config.numeric_exemption)
        ok = self._admitted.get(key)
        if ok is None:
            state = self.variant(untyped_expiry, overwrite)[0]
            ok = self._admitted[key] = admitted(state, self.numeric, self.hours_to_event, intent, config)
        return ok

    def rule_ages(self, config: PipelineConfig, params: LifecycleParams) -> tuple[tuple | None, np.ndarray]:
        """(key, (n, 3) ages) under the pipeline's age rules (``turn_age``,
        ``stable_activation_floor``); key None and :attr:`ages` when neither is on. Cached per
        rule set, decay mode and parameter set (the activation floor depends on the rates, clocks
        and floors)."""
        if (config.turn_age, config.stable_activation_floor) == ("said", False):
            return None, self.ages
        key = (config.turn_age, config.stable_activation_floor, config.score.decay, id(params))
        got = self._rule_ages.get(key)
        if got is not None and got[0] is params:
            return key, got[1]
        ages = np.array(self.ages, dtype=np.float64)
        typed = self.typed
        if config.turn_age == "oldest_fact":
            facts = typed & self.eligible
            if facts.any() and self.turn.any():
                ages[self.turn] = ages[facts].max(axis=0)
        if config.stable_activation_floor and typed.any():
            ages = activation_floor_ages(ages, self.weights, typed, params, config.score)
        self._rule_ages[key] = (params, ages)
        return key, ages

    def turn_share_factor(self, params: LifecycleParams, config: ScoreConfig) -> np.ndarray | None:
        """(n,) factor of σ under ``turn_share="least"``: (1 − max_c α_c) / (1 − α_p) for a turn
        (α_p of its primary category), 1 for a typed fact; None when it changes nothing (no turn,
        no eligible typed fact, or one α for every category under ``global_alpha``)."""
        if config.global_alpha:
            return None
        facts = self.typed & self.eligible
        if not (self.turn.any() and facts.any()):
            return None
        got = self._turn_share.get(id(params))
        if got is not None and got[0] is params:
            return got[1]
        alpha = np.asarray(params.alpha, dtype=np.float64)
        primary = self._primary
        if primary is None:
            primary = np.argmax(np.asarray(self.weights, dtype=np.float64), axis=1)
        own = 1.0 - alpha[primary]
        least = 1.0 - float(alpha.max())
        factor = np.ones(self.n)
        share = self.turn & (own > 0)
        factor[share] = least / own[share]
        self._turn_share[id(params)] = (params, factor)
        return factor

    def rule_ages_of(self, ages_key: tuple) -> np.ndarray:
        """The ages :meth:`rule_ages` cached under ``ages_key``."""
        return self._rule_ages[ages_key][1]

    def kernel_table(self, ages_key: tuple | None = None, params: LifecycleParams | None = None) -> np.ndarray | None:
        """:meth:`_kernel_table_own` with the ages of :meth:`rule_ages` (``ages_key`` from it, with the
        same ``params``); ``ages_key`` None: the snapshot's own ages."""
        if ages_key is None:
            return self._kernel_table_own()
        got = self._rule_tables.get(ages_key)
        if got is None or got[0] is not params:
            base = self._kernel_table_own()
            table: np.ndarray | Literal[False] = False
            if base is not None:
                ages = self._rule_ages[ages_key][1]
                if bool(np.isfinite(ages).all()) and bool((ages >= 0).all()):
                    aged = base.copy()
                    aged[:, _COL["ages"] : _COL["ages"] + 3] = ages
                    table = aged
            got = self._rule_tables[ages_key] = (params, table)
        return got[1] if got[1] is not False else None

    def _kernel_table_own(self) -> np.ndarray | None:
        """Every row's kernel inputs as an (n, F) float32 table in the packed layout of
        :func:`frcore.pack_candidates` (weights, ages, has_event, hours to event with NaN → 0,
        confidence, numeric; sim and state are the query's, filled per call; valid = 1), or None
        when some row would fail :func:`frcore.make_candidates`' checks — then each query calls
        it, and it raises on the offending candidate exactly as before."""
        if self._kernel_table is None:
            w = np.asarray(self.weights, dtype=np.float64)
            a = np.asarray(self.ages, dtype=np.float64)
            he = self.hours_to_event
            conf = np.asarray(self.confidence, dtype=np.float64)
            ok = (
                w.shape == (self.n, N_CATEGORIES)
                and a.shape == (self.n, 3)
                and conf.shape == (self.n,)
                and bool(np.isfinite(w).all())
                and bool((w >= 0).all())
                and bool((np.abs(w.sum(axis=1) - 1.0) <= WEIGHT_SUM_TOL).all())
                and bool(np.isfinite(a).all())
                and bool((a >= 0).all())
                and not bool(np.isinf(he).any())
                and bool(((conf >= 0) & (conf <= 1)).all())
            )
            if ok:
                has_event = ~np.isnan(he)
                table = np.zeros((self.n, N_FEATURES), dtype=np.float32)
                table[:, _COL["weights"] : _COL["weights"] + N_CATEGORIES] = w
                table[:, _COL["ages"] : _COL["ages"] + 3] = a
                table[:, _COL["has_event"]] = has_event
                table[:, _COL["hours_to_event"]] = np.where(has_event, he, 0.0)
                table[:, _COL["confidence"]] = conf
                table[:, _COL["numeric"]] = self.numeric
                table[:, _COL["valid"]] = 1.0
                self._kernel_table = table
            else:
                self._kernel_table = False
        return self._kernel_table if self._kernel_table is not False else None


#: categories whose items end at an event (the ontology's ``expires at event``)
_EXPIRES = np.asarray(as_arrays().expires_at_event, dtype=bool)


def activation_floor_ages(
    ages: np.ndarray, weights: np.ndarray, typed: np.ndarray, params: LifecycleParams, config: ScoreConfig
) -> np.ndarray:
    """Ages under ``stable_activation_floor``: for a ``typed`` row whose primary category c (the
    kernel's: argmax weight, first on ties) does not expire at its event time and has F_c > 0,
    the three clock ages scaled by one factor so that age_eff ≤ −ln F_c / λ_eff, hence
    exp(−λ_eff · age_eff) ≥ F_c. λ_eff and age_eff are the kernel's own functions
    (:func:`frcore.effective_rate`, :func:`frcore.effective_age`) under ``config.decay``; other
    rows are returned unchanged."""
    ages = np.array(ages, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if ages.shape[0] == 0:
        return ages
    floors = np.asarray(params.floors, dtype=np.float64)
    stable = ~_EXPIRES & (floors > 0)
    primary = np.argmax(w, axis=1)
    a_min = np.where(np.asarray(typed, bool) & stable[primary], floors[primary], 0.0)
    rows = np.flatnonzero(a_min > 0)
    if rows.size == 0:
        return ages
    rate = np.asarray(effective_rate(params, w[rows], config), dtype=np.float64)
    age = np.asarray(effective_age(params, w[rows], ages[rows].T), dtype=np.float64)
    cap = -np.log(np.minimum(a_min[rows], 1.0)) / rate  # a_min = 1: age 0
    over = age > cap
    factor = np.ones(rows.size)
    factor[over] = cap[over] / age[over]
    ages[rows] *= factor[:, None]
    return ages


def _state_ok(st: np.ndarray) -> bool:
    return np.issubdtype(st.dtype, np.integer) and bool(((st >= 0) & (st < N_STATES)).all())


#: column of each field in a row of the kernel table (a row of frcore.pack_candidates' matrix)
_COL = ROW_START
#: a padding candidate in the packed layout, as make_candidates pads (masked by valid = 0)
_PAD_ROW = pack_candidates(
    make_candidates(
        sim=np.zeros(0),
        weights=np.zeros((0, N_CATEGORIES)),
        ages=np.zeros((0, 3)),
        state=np.zeros(0, np.int64),
        pad_to=1,
        device=False,
    )
)[:, 0]


def kernel_inputs(
    prep: Prepared,
    cand: np.ndarray,
    sim: np.ndarray,
    state: np.ndarray,
    intent: int,
    routing: np.ndarray,
    states_valid: bool = False,
    ages_key: tuple | None = None,
    params: LifecycleParams | None = None,
):
    """(candidates (F, bucket), query (1 + C,)) as float32 host arrays in the packed layout,
    equal to ``pack_candidates(make_candidates(..., pad_to=bucket_size(k)))`` and
    ``pack_query(make_query(...))`` for these rows. The per-row checks were done once per
    snapshot (:meth:`Prepared.kernel_table`), so only the query's own values are checked here;
    anything that would not pass goes through make_candidates / make_query, which raise as before.
    ``states_valid``: every entry of ``state`` is known to be a valid state index (checked once
    per snapshot variant by :meth:`Prepared.states_valid`). ``ages_key`` (with its ``params``):
    the ages of :meth:`Prepared.rule_ages` instead of the snapshot's own."""
    k = cand.size
    table = prep.kernel_table(ages_key, params)
    ages = prep.ages if ages_key is None else prep.rule_ages_of(ages_key)
    st = state[cand]
    m = bucket_size(k)
    if table is None or not bool(np.isfinite(sim).all()) or not (states_valid or _state_ok(st)):
        cmat = pack_candidates(
            make_candidates(
                sim=np.clip(sim, 0.0, 1.0),
                weights=prep.weights[cand],
                ages=ages[cand],
                state=st,
                hours_to_event=prep.hours_to_event[cand],
                confidence=prep.confidence[cand],
                numeric=prep.numeric[cand],
                pad_to=m,
                device=False,
            )
        )
    else:
        rows = np.empty((m, N_FEATURES), dtype=np.float32)
        np.take(table, cand, axis=0, out=rows[:k])
        rows[:k, _COL["sim"]] = np.clip(sim, 0.0, 1.0)
        rows[:k, _COL["state"]] = st
        rows[k:] = _PAD_ROW
        cmat = np.ascontiguousarray(rows.T)
    r = np.asarray(routing, dtype=np.float64)
    rl = r.tolist() if r.shape == (N_CATEGORIES,) else None
    if rl is not None and all(0.0 <= x <= 1.0 for x in rl):  # in range (so finite): clipping changes nothing
        qvec = np.array([intent, *rl], dtype=np.float32)
    else:
        qvec = pack_query(make_query(intent, np.clip(r, 0.0, 1.0), device=False))
    return cmat, qvec


def scale_sigma_max(sig: np.ndarray) -> np.ndarray:
    """σ' = σ / max_j σ_j over one query's candidates (``sigma_scale="max"``); unchanged when
    the maximum is not positive (no candidate matches: σ stays 0, never NaN)."""
    top = sig.max() if sig.size else 0.0
    return sig / top if top > 0 else sig


_HOST_PACKED: list = [None, None, 0]  # (params object, its packed host vector, offset of floor_sim_threshold)


def relative_floor_params(params: LifecycleParams, sigma_max: float) -> np.ndarray:
    """The packed parameter vector with the floor's threshold θ_F replaced by θ_F · σ_max
    (``floor_reference="query_max"``); θ_F unchanged when σ_max is not positive."""
    if _HOST_PACKED[0] is not params:
        names = type(params)._fields
        offset = sum(int(np.size(getattr(params, f))) for f in names[: names.index("floor_sim_threshold")])
        _HOST_PACKED[:] = [params, pack_params(params), offset]
    vec = _HOST_PACKED[1].copy()
    if sigma_max > 0:
        vec[_HOST_PACKED[2]] = np.float32(vec[_HOST_PACKED[2]] * np.float32(sigma_max))
    return vec


#: pools of at least this many rows are first cut at a value taken from a strided sample of
#: ``_SAMPLE`` rows (:func:`_top`; exact: used only when every row of the top is above the cut)
_SAMPLE_FROM = 16_384
_SAMPLE = 4096


def _top(vals: np.ndarray, idx: np.ndarray | None, count: int) -> np.ndarray:
    """The ``count`` rows with the largest values, ties by row (ascending): ``vals`` are the
    values of rows ``idx`` (ascending; ``None``: of every row, ``vals`` indexed by row).

    When the pool is large, a partial selection: every row above the count-th largest value is
    in, ordered by (−value, row); rows equal to it fill the rest in row order (a bank often has
    hundreds of rows tied at one value, e.g. cosine clipped to 0). A NaN threshold (NaN values)
    falls back to ordering by −value. Of a very large pool, the selection is made among the rows
    at or above a cut taken from a strided sample, when at least ``count`` and few rows are."""
    n = vals.shape[0]
    if n >= _SAMPLE_FROM and n > 64 * count:
        # a cut at most the count-th largest value, from a strided sample: the rows at or above
        # it hold every row of the top, and the count-th largest among them is the same value
        sample = vals[:: max(1, n // _SAMPLE)]
        j = min(sample.shape[0] - 1, 4 * count * sample.shape[0] // n + 8)
        cut = -np.partition(-sample, j)[j]
        if cut == cut:
            over = vals >= cut
            size = int(np.count_nonzero(over))
            if count <= size <= n // 8:
                rows = np.flatnonzero(over)
                return _top(vals[rows], rows if idx is None else idx[rows], count)
    if n > 4 * count:
        # the count-th largest by selecting the count-th smallest of −vals: NumPy's introselect
        # at a kth near the top of an array of few distinct values (cosine clipped to 0) took
        # 15x longer (0.36 vs 0.024 ms at 20k) than near the bottom
        neg = -vals
        neg_thr = np.partition(neg, count - 1)[count - 1]
        if neg_thr == neg_thr:
            thr = -neg_thr
            above = np.flatnonzero(vals > thr)
            above = above[np.lexsort((above, neg[above]))]
            tied = np.flatnonzero(vals == thr)[: count - above.size]
            pos = np.concatenate([above, tied])
            return pos if idx is None else idx[pos]
        keep = np.flatnonzero(neg <= neg_thr)
        idx = keep if idx is None else idx[keep]
        neg = neg[keep]
    else:
        neg = -vals
        if idx is None:
            idx = np.arange(n)
    return idx[np.lexsort((idx, neg))][:count]


@dataclass
class PartialCosine:
    """A query's cosine known exactly on some rows only (an approximate index's candidates and
    the rows it does not hold), computed for any other row when :func:`retrieve` needs it.

    ``values`` (n,) holds the exact cosine where ``known``, 0 elsewhere; ``bound`` is an upper
    bound of every unknown row's cosine (the smallest cosine among the approximate index's
    candidates: a bound when they are the rows nearest the query); ``exact(rows)`` returns the
    exact cosine of ``rows`` (ascending). :func:`retrieve` then ranks exactly as with the full
    cosine array whenever the bound holds: the cosine stage needs only the nearest rows (a row's
    lifecycle-linked cosine is its own or a related row's), the forced stage computes every row
    whose upper bound could reach its top, and σ of every candidate is computed exactly.
    ``damaged``: a row computed later had a non-finite cosine (it counts as 0). ``rows``: the
    known rows when it was made (ascending), ``finite``: whether their cosines are all finite
    (``None``: not given; both spare a pass over every row)."""

    values: np.ndarray
    known: np.ndarray
    bound: float
    exact: Callable[[np.ndarray], np.ndarray]
    damaged: bool = False
    rows: np.ndarray | None = None
    finite: bool | None = None

    def known_rows(self) -> np.ndarray:
        """The known rows, ascending."""
        if self.rows is not None and int(np.count_nonzero(self.known)) == self.rows.size:
            return self.rows  # known only grows from ``rows``: as many means the same rows
        return np.flatnonzero(self.known)

    def fill(self, rows: np.ndarray) -> np.ndarray:
        """Compute the unknown ``rows`` (ascending, distinct); returns the rows computed."""
        rows = rows[~self.known[rows]]
        if rows.size:
            v = np.asarray(self.exact(rows), dtype=self.values.dtype)
            bad = ~np.isfinite(v)
            if bad.any():
                self.damaged = True
                v[bad] = 0.0
            self.values[rows] = v
            self.known[rows] = True
        return rows


#: most rows the forced stage computes beyond its first candidates over a partial cosine (when
#: more could reach its top, the ones with the highest bound are computed: approximate)
FORCED_FILL_MAX = 2048


def _forced_top(idx, count, sigma, complete, cos, exact, partial, bm, bm_n, hw) -> np.ndarray:
    """The forced stage's ``_top(sigma(idx), idx, count)`` over a :class:`PartialCosine`.

    First computed: the ``count`` best rows of ``idx`` by BM25 and the ``count`` best by cosine
    among the known ones. An unknown row's σ is at most (1 − γ)·max(c, ``partial.bound``) +
    γ·bm25 (c: its linked cosine so far). Then every row whose bound reaches the ``count``-th best
    computed σ is computed (at most :data:`FORCED_FILL_MAX`, those of highest bound), and the top
    is taken over computed rows: exact whenever the bound holds and no more than that many rows
    could reach the top."""
    known = idx[partial.known[idx]]
    pool = [idx[exact[idx]], _top(bm[idx], idx, count)]
    if known.size:
        pool.append(_top(cos[known], known, count))
    done = _union(pool)
    complete(done)
    if done.size < count:  # idx has fewer rows than that
        complete(idx)
        return _top(sigma(idx), idx, count)
    threshold = np.sort(sigma(done))[-count]
    bound = max(0.0, min(1.0, float(partial.bound)))
    upper = (1.0 - hw) * np.maximum(cos[idx], bound).astype(np.float64)
    upper += hw * bm_n(idx)
    reach = upper >= threshold
    reach &= ~exact[idx]
    more = idx[reach]
    if more.size > FORCED_FILL_MAX:
        more = np.sort(_top(upper[reach], more, FORCED_FILL_MAX))
    if more.size:
        complete(more)
        done = _union([done, more])
    return _top(sigma(done), done, count)


def _union(parts: list[np.ndarray]) -> np.ndarray:
    """Sorted distinct rows of the stages' results (``np.unique`` of their concatenation)."""
    c = np.concatenate(parts) if len(parts) > 1 else parts[0].copy()
    c.sort()
    if c.size < 2:
        return c
    first = np.empty(c.size, dtype=bool)
    first[0] = True
    np.not_equal(c[1:], c[:-1], out=first[1:])
    return c[first]


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
    similarities to every row (``cosine`` may be a :class:`PartialCosine`: known on some rows,
    computed for others as needed). Returns up to ``config.k`` results.
    """
    partial = cosine if isinstance(cosine, PartialCosine) else None
    if partial is not None:
        cosine = partial.values
    n = cosine.shape[0]
    intent_i = T.intent_index(intent)
    state, alive, alive_idx = prep.variant(config.untyped_expiry, config.overwrite)
    rel = prep.related
    propagate = rel is not None and config.propagation > 0 and config.ranker == "lifecycle" and len(rel[0])
    # float32 cosines (an embedder's) stay float32 while rows are selected over the whole bank:
    # clipping, maxima and orderings are exact in either width, and every σ is computed in
    # float64 from the selected rows (half the memory traffic over n rows; results identical)
    work = (
        np.float32
        if (np.asarray(cosine).dtype == np.float32 and not (propagate and config.propagation != 1.0))
        else np.float64
    )
    cos_raw = np.clip(np.asarray(cosine, dtype=work), 0.0, 1.0)
    cos = cos_raw
    # of a partial cosine: the rows whose cosine can be above 0 before any is computed (the known
    # ones and the sources of their related pairs; every other row's counts as 0 until computed)
    reached = partial.known_rows() if partial is not None else None
    if propagate and rel is not None:
        # per source row, the maximum of propagation x cos over its related rows
        if reached is None:
            src, dst = rel
        else:
            src, dst = prep.related_of(reached, by="related")
            reached = _union([reached, src]) if src.size else reached
        cos = cos_raw.copy()
        linked = cos_raw[dst]
        if config.propagation != 1.0:
            linked *= config.propagation
        np.maximum.at(cos, src, linked)  # one hop from cos_raw; max is exact in any order
    exact = np.zeros(n, dtype=bool) if partial is not None else None  # rows whose cos is computed exactly

    def complete(rows: np.ndarray) -> None:
        """Make cos_raw and cos exact on ``rows`` (ascending, distinct) of a partial cosine."""
        if partial is None or exact is None:
            return
        rows = rows[~exact[rows]]
        if not rows.size:
            return
        if propagate:
            src_e, dst_e = prep.related_of(rows)
            need = _union([rows, dst_e]) if dst_e.size else rows
        else:
            need = rows
        done = partial.fill(need)
        if done.size:
            cos_raw[done] = np.clip(partial.values[done].astype(work), 0.0, 1.0)
        if propagate:
            cos[rows] = cos_raw[rows]
            if dst_e.size:
                linked_e = cos_raw[dst_e]
                if config.propagation != 1.0:
                    linked_e = linked_e * config.propagation
                np.maximum.at(cos, src_e, linked_e)
        exact[rows] = True

    bm = np.asarray(bm25, dtype=np.float64)
    if alive_idx is None:
        bm_max = bm.max() if n else 0.0
    else:  # the maximum over alive rows (without gathering them)
        bm_max = bm.max(where=alive, initial=-np.inf) if alive_idx.size else 0.0
    hw = config.hybrid_weight

    def bm_n(rows: np.ndarray) -> np.ndarray:
        return bm[rows] / bm_max if bm_max > 0 else np.zeros(rows.shape[0])

    def sigma(rows: np.ndarray) -> np.ndarray:
        return (1.0 - hw) * cos[rows].astype(np.float64) + hw * bm_n(rows)

    # Flat baselines: one similarity, no lifecycle stage.
    if config.ranker in ("cosine", "bm25"):
        s = cos_raw if config.ranker == "cosine" else bm
        idx = np.arange(n) if alive_idx is None else alive_idx
        if config.ranker == "bm25":
            idx = idx[bm[idx] > 0]
        order = _top(s[idx], idx, config.k) if idx.size else idx
        if partial is not None and config.ranker == "cosine" and order.size:
            rows = np.sort(order)
            complete(rows)
            order = _top(s[rows], rows, config.k)
        return Retrieval(
            tuple(Retrieved(int(i), float(s[i]), {config.ranker: float(s[i])}, (config.ranker,)) for i in order),
            int(idx.size),
            int(idx.size),
        )

    # Stages 1-3: candidate generation (each: top count of its pool by its value, ties by row).
    found: list[tuple[str, np.ndarray]] = []
    if config.n_cosine > 0 and n:
        top_cos = None
        if reached is not None:
            # every row outside ``reached`` is at 0: when the count-th best of those inside is above
            # 0, it is the top over every row
            pool = reached if alive_idx is None else reached[alive[reached]]
            top_cos = _top(cos[pool], pool, config.n_cosine) if pool.size >= config.n_cosine else None
            if top_cos is not None and not cos[top_cos[-1]] > 0:
                top_cos = None
        if top_cos is not None:
            found.append(("cosine", top_cos))
        elif alive_idx is None:
            found.append(("cosine", _top(cos, None, config.n_cosine)))
        elif alive_idx.size:
            found.append(("cosine", _top(cos[alive_idx], alive_idx, config.n_cosine)))
    if config.n_bm25 > 0:
        positive = bm > 0
        if alive_idx is None and n and positive.all():  # every row matches: no index gather
            found.append(("bm25", _top(bm, None, config.n_bm25)))
        else:
            if alive_idx is not None:
                positive &= alive
            idx = np.flatnonzero(positive)
            if idx.size:
                found.append(("bm25", _top(bm[idx], idx, config.n_bm25)))
    top_routed = max(range(routing.shape[0]), key=routing.item) if routing.shape[0] else 0  # first maximum, as argmax
    if config.n_forced and config.score.routing and routing.shape[0] and routing.item(top_routed) > 0:
        idx = prep.rows_of_primary(top_routed)
        if alive_idx is not None:
            idx = idx[alive[idx]]
        if idx.size and partial is not None:
            found.append(
                ("forced", _forced_top(idx, config.n_forced, sigma, complete, cos, exact, partial, bm, bm_n, hw))
            )
        elif idx.size:
            found.append(("forced", _top(sigma(idx), idx, config.n_forced)))

    # Stage 4: dedup (a row found by several stages appears once, with every stage recorded).
    if not found:
        return Retrieval((), 0, 0)
    cand = _union([rows for _, rows in found])
    n_cand = cand.size
    complete(cand)
    sig = sigma(cand)

    # Stage 5: staleness-aware distillation.
    if config.n_distill and n_cand > config.n_distill:
        if config.staleness_aware:
            ok = prep.admitted_rows(config.untyped_expiry, config.overwrite, intent_i, config.score)[cand]
            order = np.lexsort((cand, -sig, -ok.astype(np.int64)))
        else:
            order = np.lexsort((cand, -sig))
        order = order[: config.n_distill]
        cand, sig = cand[order], sig[order]

    # Stages 6-7: lifecycle filters and the blended log-score (frcore kernel).
    k = cand.size
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
        intent_i,
        routing,
        prep.states_valid(config.untyped_expiry, config.overwrite),
        ages_key,
        rule_ages_params,
    )
    pvec = _packed_params(params)
    if config.floor_reference == "query_max":
        pvec = relative_floor_params(params, float(sig.max()) if sig.size else 0.0)
    top = np.asarray(cached_call(score_top_k_rows, pvec, qvec, cmat, k=config.k, config=config.score))
    # one row per ranked position: [value, candidate index, *terms] (float32 → Python float, exact)
    ranked = [r for r in top.T.tolist() if math.isfinite(r[0]) and r[1] < k]
    rows = cand[[int(r[1]) for r in ranked]]
    sims = zip(
        cos_raw[rows].tolist(), cos[rows].tolist(), (bm[rows] / bm_max).tolist() if bm_max > 0 else [0.0] * rows.size
    )
    stages_sets = [(name, set(found_rows.tolist())) for name, found_rows in found]
    fields = ScoreTerms._fields
    out = []
    for r, row, (s_cos, s_linked, s_bm) in zip(ranked, rows.tolist(), sims):
        t = dict(zip(fields, r[2:]))
        t["sim_cosine"], t["sim_linked"], t["sim_bm25"] = s_cos, s_linked, s_bm
        out.append(Retrieved(row, r[0], t, tuple(name for name, found_rows in stages_sets if row in found_rows)))
    return Retrieval(tuple(out), n_cand, k, cand, cmat, qvec)
