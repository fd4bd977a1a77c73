"""What the pipeline is given and what it returns: :class:`PipelineConfig` (one system = one
configuration of :func:`~frcore.bank.pipeline.retrieve`), :class:`Retrieved` (one ranked result) and
:class:`Retrieval` (a query's results with the candidate set the kernel scored)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..._packed import unpack_candidates_host, unpack_query_host
from ..._types import ScoreConfig

#: the candidate stages 1-3, in the order a result's ``stages`` names them
STAGES = ("cosine", "bm25", "forced")
RANKERS = ("lifecycle", "cosine", "bm25")
SIGMA_SCALES = ("raw", "max")
TURN_AGES = ("said", "oldest_fact")
TURN_SHARES = ("own", "least")
FLOOR_REFERENCES = ("absolute", "query_max")
TURN_SUPERSESSIONS = ("mask", "order")
TURN_EXPIRIES = ("mask", "keep")
UNTYPED_SCORES = ("kernel", "sigma")


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
      hybrid_weight: γ of the hybrid similarity (:func:`~frcore.bank.pipeline.hybrid_sigma`).
      overwrite: emulate an overwrite store (Mem0-style UPDATE/DELETE): superseded and retracted
        edges, and all but the newest edge of a contested slot, are deleted before retrieval.
      untyped_expiry: expire every edge whose event time has passed, whatever its category (the
        untyped three-primitive arm has no ontology to say which categories expire).
      propagation: factor of lifecycle-linked similarity (0 = off; see
        :class:`~frcore.bank.pipeline._stages.Similarities`).
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
      turn_supersession: a raw turn superseded only by raw turns (by links derivation gave them,
        docs/derive.md): ``mask`` (the lifecycle rules apply as to every edge) or ``order`` (it is
        admitted as active and ranked directly below the best-ranked result that supersedes it,
        when it would rank above it: raw turns are evidence, and what supersession must
        guarantee among them is the order, not removal).
      turn_expiry: a raw turn whose event time (derived, docs/derive.md) has passed: ``mask`` (expired
        as every edge) or ``keep`` (admitted as active, its reported state staying expired: a raw
        turn is evidence of a past event; under ``upcoming`` it is still masked, its event being
        behind).
      untyped_score: the score of a raw turn (``kind: "turn"``) without lifecycle metadata (no
        slot, event time or link): ``kernel`` (the blended log-score, as every
        row) or ``sigma`` (log σ: blend = σ, routing term 0, the compatibility mask kept;
        docs/benchmark.md, "FR-Bank's retrieval").
      turn_context: a candidate's neighbours in its episode (the previous and next row of its
        session, else of its said-at day) join the candidates, and every row's σ is at least
        half its better neighbour's.
      time_window: the question's time words (``frcore.bank.derive.question_time``) give a window
        over when rows were said or happened: the best rows inside it join the candidates, and
        rows outside it have their σ halved, when some row lies inside.
      time_order: the question's order words (earliest, latest) reorder the top k by time
        (docs/benchmark.md).
      coverage: for a question that asks for every mention (how many, in total, all, each), no
        episode holds more than ⌈k/2⌉ of the top k.
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
    turn_supersession: str = "mask"
    turn_expiry: str = "mask"
    untyped_score: str = "kernel"
    turn_context: bool = False
    time_window: bool = False
    time_order: bool = False
    coverage: bool = False
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
        if self.turn_supersession not in TURN_SUPERSESSIONS:
            raise ValueError(
                f"PipelineConfig.turn_supersession: unknown rule {self.turn_supersession!r}; "
                f"expected one of {TURN_SUPERSESSIONS}"
            )
        if self.turn_expiry not in TURN_EXPIRIES:
            raise ValueError(
                f"PipelineConfig.turn_expiry: unknown rule {self.turn_expiry!r}; expected one of {TURN_EXPIRIES}"
            )
        if self.untyped_score not in UNTYPED_SCORES:
            raise ValueError(
                f"PipelineConfig.untyped_score: unknown rule {self.untyped_score!r}; expected one of {UNTYPED_SCORES}"
            )
        for name in ("turn_context", "time_window", "time_order", "coverage"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"PipelineConfig.{name}: expected a bool, got {getattr(self, name)!r}")
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


#: FR-Bank's retrieval: the default of ``Bank.query`` (CLI, MCP) and the pipeline of the ``fr-plus``
#: family — the paper's eight stages (``PipelineConfig()``, the system ``fr-full``) plus fr-plus's
#: rules for typed facts (docs/fr-plus.md) and the rules for raw conversation (untyped turns
#: scored by σ, the question's time window, coverage of episodes; docs/benchmark.md, "FR-Bank's
#: retrieval"). ``turn_context`` and ``time_order`` stay off: on the first LongMemEval development
#: part they cost turn recall_all@10 (docs/benchmark.md).
FR_BANK_PIPELINE = PipelineConfig(
    turn_age="oldest_fact",
    floor_reference="query_max",
    stable_activation_floor=True,
    untyped_score="sigma",
    time_window=True,
    coverage=True,
)
