"""Every system of LifecycleBench as a configuration of the one FR-Bank pipeline (SPEC §5).

A :class:`System` is a :class:`~frcore.bank.PipelineConfig` plus an optional parameter
transform — never a copy of the pipeline. Baselines: ``flat-cosine``, ``bm25``,
``uniform-decay`` (recency-weighted uniform decay as in MemoryBank), ``overwrite`` (an overwrite
store that deletes on update, as Mem0's UPDATE/DELETE). Ablations of FR are named ``fr-<mode>``.
Diagnostic variants (:data:`DIAGNOSTIC_SYSTEMS`, e.g. ``fr-sigma-max``) resolve by name but are
not in the default table (``all``). ``fr-plus`` (FR-full plus three pipeline rules, docs/fr-plus.md)
and its ablations ``fr-plus-no-<rule>`` (:data:`PLUS_SYSTEMS`) are in it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import jax.numpy as jnp
import numpy as np

from .._ontology import CATEGORY_NAMES, N_CATEGORIES
from .._params import LifecycleParams, default_params
from .._partitions import optimal_table_partitions
from .._types import ScoreConfig
from ..bank import FR_BANK_PIPELINE, DeriveConfig, PipelineConfig


@dataclass(frozen=True)
class System:
    name: str
    pipeline: PipelineConfig
    description: str
    params_fn: Callable[[LifecycleParams], LifecycleParams] | None = None
    #: the derivation rules its bank applies to raw turns (docs/derive.md); ``None``: none
    derive: DeriveConfig | None = None

    def params(self, base: LifecycleParams | None = None) -> LifecycleParams:
        p = base if base is not None else default_params()
        return self.params_fn(p) if self.params_fn else p


def collapse_params(params: LifecycleParams, groups: Sequence[Sequence[str]]) -> LifecycleParams:
    """Collapse the ontology to the given groups of categories: every category takes its
    group's mean rate, α, floor and clock sensitivities (the granularity sweep's k clusters)."""
    seen = [c for g in groups for c in g]
    missing = set(CATEGORY_NAMES) - set(seen)
    if missing or len(seen) != len(set(seen)):
        raise ValueError(
            f"groups: must partition the {N_CATEGORIES} categories (missing {sorted(missing)}, duplicates "
            f"{len(seen) - len(set(seen))})"
        )
    rates = np.asarray(params.rates, dtype=np.float64).copy()
    alpha = np.asarray(params.alpha, dtype=np.float64).copy()
    floors = np.asarray(params.floors, dtype=np.float64).copy()
    clocks = np.asarray(params.clocks, dtype=np.float64).copy()
    for g in groups:
        idx = [CATEGORY_NAMES.index(c) for c in g]
        rates[idx] = rates[idx].mean()
        alpha[idx] = alpha[idx].mean()
        floors[idx] = floors[idx].mean()
        clocks[idx] = clocks[idx].mean(axis=0)
    dt = params.rates.dtype
    return params._replace(
        rates=jnp.asarray(rates, dt),
        alpha=jnp.asarray(alpha, dt),
        floors=jnp.asarray(floors, dt),
        clocks=jnp.asarray(clocks, dt),
    )


def _untyped_params(p: LifecycleParams) -> LifecycleParams:
    # score = σ: a global α of 0 removes activation and decay from the blend.
    return p._replace(global_alpha=jnp.zeros_like(p.global_alpha))


_NO_LIFECYCLE = ScoreConfig(
    lifecycle=False, routing=False, floors=False, numeric_rescue=False, anticipation=False, supersession_weight=False
)


#: §I's initial "800×" rate configuration: rates from λ = 0.0001 (Identity) to λ = 0.080
#: (Logistical). The paper gives only the two ends; ours stretches the default rates
#: log-linearly onto them: log λ' = log 0.0001 + (log λ − log λ_min)/(log λ_max − log λ_min) · log 800,
#: with λ_min, λ_max the default ontology's slowest and fastest rate (0.0015, 0.008).
SQUATTING_RATES = (0.0001, 0.080)
#: §I: the slowest rate that prevented multi-month category squatting (Procedural, λ = 0.003).
SQUATTING_RATE_FLOOR = 0.003


def stretched_rates(p: LifecycleParams) -> LifecycleParams:
    """The 800× configuration of §I (:data:`SQUATTING_RATES`): every rate stretched log-linearly
    from the default's [λ_min, λ_max] onto [0.0001, 0.080]."""
    lam = np.asarray(p.rates, dtype=np.float64)
    lo, hi = float(lam.min()), float(lam.max())
    a, b = SQUATTING_RATES
    out = np.exp(np.log(a) + (np.log(lam) - np.log(lo)) / (np.log(hi) - np.log(lo)) * (np.log(b) - np.log(a)))
    return p._replace(rates=jnp.asarray(out, p.rates.dtype))


def floored_rates(p: LifecycleParams) -> LifecycleParams:
    """The 800× configuration with no rate below :data:`SQUATTING_RATE_FLOOR`: max(λ', 0.003)."""
    q = stretched_rates(p)
    lam = np.maximum(np.asarray(q.rates, dtype=np.float64), SQUATTING_RATE_FLOOR)
    return q._replace(rates=jnp.asarray(lam, q.rates.dtype))


def _systems() -> dict[str, System]:
    S = {}

    def add(name, pipeline, description, params_fn=None, derive=None):
        S[name] = System(name, pipeline, description, params_fn, derive)

    add(
        "fr-full",
        PipelineConfig(),
        "Fortunate Recall: hybrid + category-forced candidates, "
        "staleness-aware distillation, lifecycle mask, blended log-score",
    )
    add("flat-cosine", PipelineConfig(ranker="cosine"), "baseline: cosine similarity over every item, no lifecycle")
    add("bm25", PipelineConfig(ranker="bm25"), "baseline: BM25 over every item, no lifecycle")
    add(
        "uniform-decay",
        PipelineConfig(
            score=replace(_NO_LIFECYCLE, decay="uniform", global_alpha=True),
            hybrid_weight=0.0,
            n_bm25=0,
            propagation=0.0,
            n_forced=0,
            staleness_aware=False,
        ),
        "baseline: cosine blended with one uniform recency decay (MemoryBank-style), no lifecycle",
    )
    add(
        "overwrite",
        PipelineConfig(ranker="cosine", overwrite=True),
        "baseline: overwrite store — updates delete the old value (Mem0 UPDATE/DELETE), cosine ranking",
    )
    # Ablations of FR (same pipeline, one switch each).
    add(
        "fr-no-routing",
        PipelineConfig(score=ScoreConfig(routing=False), n_forced=0),
        "FR without category routing or category-forced candidates",
    )
    add(
        "fr-uniform-decay",
        PipelineConfig(score=ScoreConfig(decay="uniform")),
        "FR with one decay rate for every category",
    )
    add(
        "fr-global-alpha",
        PipelineConfig(score=ScoreConfig(global_alpha=True)),
        "FR with one blend weight α for every category",
    )
    add("fr-no-floors", PipelineConfig(score=ScoreConfig(floors=False)), "FR without semantic floors")
    add(
        "fr-arithmetic-blend",
        PipelineConfig(score=ScoreConfig(decay="arithmetic")),
        "FR with arithmetic instead of harmonic rate blending",
    )
    add(
        "fr-primary-only",
        PipelineConfig(score=ScoreConfig(decay="primary")),
        "FR with the primary category's rate only",
    )
    add(
        "fr-no-anticipation",
        PipelineConfig(score=ScoreConfig(anticipation=False)),
        "FR without the anticipatory event kernel",
    )
    add(
        "fr-cognitive",
        PipelineConfig(score=ScoreConfig(decay="cognitive")),
        "FR with cognitive (episodic/semantic/procedural) rates instead of behavioral ones",
    )
    add(
        "fr-lifecycle-off",
        PipelineConfig(
            score=ScoreConfig(lifecycle=False, supersession_weight=False), staleness_aware=False, propagation=0.0
        ),
        "FR with the lifecycle mask, staleness-aware distillation and lifecycle-linked similarity off",
    )
    add("fr-no-linking", PipelineConfig(propagation=0.0), "FR without lifecycle-linked similarity")
    add(
        "fr-untyped",
        PipelineConfig(
            score=ScoreConfig(global_alpha=True, floors=False, numeric_rescue=False, anticipation=False, routing=False),
            n_forced=0,
            untyped_expiry=True,
        ),
        "untyped three-primitive arm: supersession + expiry + "
        "retraction masks only (no ontology, routing, decay or blending)",
        _untyped_params,
    )
    # fr-plus: FR-full plus the rules of docs/fr-plus.md, and fr-plus without each rule.
    # FR-Bank's retrieval (its default, FR_BANK_PIPELINE): fr-plus's rules for typed facts and
    # the rules for raw conversation (docs/benchmark.md, "FR-Bank's retrieval")
    plus = FR_BANK_PIPELINE
    add(
        "fr-plus",
        plus,
        "FR-Bank's retrieval: FR-full + turns aged as the oldest typed fact, semantic floor relative to the "
        "query's best σ, activation floor F_c for categories that do not expire, untyped turns scored by σ, "
        "the question's time window, coverage of episodes",
    )
    for rule, without, what in (
        ("turn-age", replace(plus, turn_age="said"), "turns aged from their own said-at"),
        ("relative-floor", replace(plus, floor_reference="absolute"), "the paper's absolute floor threshold σ ≥ 0.95"),
        ("activation-floor", replace(plus, stable_activation_floor=False), "no activation floor for stable categories"),
        ("sigma-turns", replace(plus, untyped_score="kernel"), "untyped turns scored by the kernel as every row"),
        ("time-window", replace(plus, time_window=False), "no time window from the question's words"),
        ("coverage", replace(plus, coverage=False), "no coverage of episodes"),
    ):
        add(f"fr-plus-no-{rule}", without, f"fr-plus with {what}")
    add(
        "fr-plus-lifecycle-off",
        replace(
            plus,
            score=replace(plus.score, lifecycle=False, supersession_weight=False),
            staleness_aware=False,
            propagation=0.0,
        ),
        "fr-plus with the lifecycle mask, staleness-aware distillation and lifecycle-linked similarity off",
    )
    add(
        "fr-plus-time-order",
        replace(plus, time_order=True),
        "fr-plus with the question's order words (earliest, latest) reordering the top k by time",
    )
    add(
        "fr-plus-turn-context",
        replace(plus, turn_context=True),
        "fr-plus with turn context: a row's σ at least half its better neighbour's in its episode",
    )
    # Derived metadata (docs/derive.md): the bank derives lifecycle metadata from raw turns.
    # Raw turns are evidence: one superseded by raw turns ranks below its superseder, one whose
    # event has passed stays admitted (docs/derive.md, "Ranking raw turns").
    derived = PipelineConfig(turn_supersession="order", turn_expiry="keep", score=ScoreConfig(untyped_upcoming=True))
    add("fr-derived", derived, "FR-full on lifecycle metadata derived from raw turns", derive=DeriveConfig())
    plus_derived = replace(
        plus,
        turn_supersession="order",
        turn_expiry="keep",
        score=replace(plus.score, untyped_upcoming=True),
        propagation=0.0,
    )
    add(
        "fr-plus-derived",
        plus_derived,
        "fr-plus on lifecycle metadata derived from raw turns (derived links order raw turns; "
        "they carry no similarity)",
        derive=DeriveConfig(),
    )
    add(
        "fr-plus-derived-soft-updates",
        plus_derived,
        'fr-plus-derived with the soft-update rule on (off by default: docs/derive.md, "Soft updates")',
        derive=DeriveConfig(soft_updates=True),
    )
    add(
        "fr-derived-mask",
        PipelineConfig(),
        "fr-derived on FR-full's pipeline: superseded and expired raw turns masked, upcoming's rule on every edge",
        derive=DeriveConfig(),
    )
    add(
        "fr-derived-mask-expired",
        replace(derived, turn_expiry="mask"),
        "fr-derived with raw turns whose event has passed masked (expired) as every edge",
        derive=DeriveConfig(),
    )
    for rule in ("updates", "retractions", "tentative", "event_times"):
        add(
            f"fr-derived-no-{rule.replace('_', '-')}",
            derived,
            f"fr-derived without the {rule.replace('_', ' ')} rule",
            derive=DeriveConfig(**{rule: False}),
        )
    # Diagnostic variants (by name only; not in DEFAULT_SYSTEMS).
    add(
        "fr-sigma-max",
        PipelineConfig(sigma_scale="max"),
        "FR-full with σ max-normalised per query (diagnosis of the σ scale)",
    )
    add(
        "fr-no-numeric",
        PipelineConfig(score=ScoreConfig(numeric_exemption=False, numeric_rescue=False)),
        "FR-full without the numeric exemption from the supersession and expiry filters and without the 0.95× "
        "numeric rescue floor (appendix H)",
    )
    add("fr-rates-800x", PipelineConfig(), "FR-full with §I's initial 800× rate configuration", stretched_rates)
    add(
        "fr-rates-800x-floor",
        PipelineConfig(),
        "FR-full with §I's 800× rates, none below the slowest rate 0.003",
        floored_rates,
    )
    return S


SYSTEMS: dict[str, System] = _systems()
BASELINES = ("flat-cosine", "bm25", "uniform-decay", "overwrite")
#: variants for diagnosis: resolvable by name, not part of the default table
DIAGNOSTIC_SYSTEMS = ("fr-sigma-max", "fr-no-numeric", "fr-rates-800x", "fr-rates-800x-floor")
#: systems on derived metadata (docs/derive.md): by name only, not in the default table
DERIVED_SYSTEMS = tuple(n for n, s in SYSTEMS.items() if s.derive is not None)
#: fr-plus and its ablations (one rule off each)
PLUS_SYSTEMS = (
    "fr-plus",
    "fr-plus-no-turn-age",
    "fr-plus-no-relative-floor",
    "fr-plus-no-activation-floor",
    "fr-plus-no-sigma-turns",
    "fr-plus-no-time-window",
    "fr-plus-no-coverage",
    "fr-plus-lifecycle-off",
    "fr-plus-time-order",
    "fr-plus-turn-context",
)
ABLATION_SYSTEMS = tuple(
    n
    for n in SYSTEMS
    if n.startswith("fr-")
    and n != "fr-full"
    and n not in DIAGNOSTIC_SYSTEMS
    and n not in PLUS_SYSTEMS
    and n not in DERIVED_SYSTEMS
)
DEFAULT_SYSTEMS = ("fr-full",) + BASELINES + ABLATION_SYSTEMS + PLUS_SYSTEMS


def collapsed_system(k: int, groups: Sequence[Sequence[str]]) -> System:
    """The ontology collapsed to ``k`` clusters (``groups``), as an FR configuration."""
    groups = [tuple(g) for g in groups]
    return System(
        f"fr-collapsed-{k}",
        PipelineConfig(),
        f"FR with the ontology collapsed to {k} clusters",
        lambda p: collapse_params(p, groups),
    )


def cognitive_partition() -> list[list[str]]:
    """The cognitive 3-partition (episodic / semantic / procedural) of the 11 categories."""
    from .._ontology import ONTOLOGY

    groups: dict[int, list[str]] = {}
    for row in ONTOLOGY:
        groups.setdefault(int(row.cognitive_type), []).append(row.category.name)
    return [groups[k] for k in sorted(groups)]


def resolve_systems(names: str | Sequence[str | System] | None) -> list[System]:
    """System objects from a comma-separated list or sequence of names (``all`` = the default
    table, :data:`DEFAULT_SYSTEMS`; diagnostic variants by name only); a :class:`System` in the
    sequence is kept as it is."""
    if names is None or names == "all" or names == ["all"]:
        return [SYSTEMS[n] for n in DEFAULT_SYSTEMS]
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    out: list[System] = []
    for n in names:
        if isinstance(n, System):  # already a configuration (e.g. `fr compare`'s two sides)
            out.append(n)
        elif n in SYSTEMS:
            out.append(SYSTEMS[n])
        elif n.startswith("fr-collapsed-") and n.rsplit("-", 1)[1].isdigit():
            k = int(n.rsplit("-", 1)[1])
            out.append(collapsed_system(k, _default_partition(k)))
        elif n == "fr-cognitive-partition":
            out.append(
                System(
                    n,
                    PipelineConfig(),
                    "FR with the ontology collapsed to the cognitive 3-partition",
                    lambda p: collapse_params(p, cognitive_partition()),
                )
            )
        else:
            raise ValueError(
                f"systems: unknown system {n!r}; known: "
                f"{', '.join(list(SYSTEMS) + ['fr-collapsed-K', 'fr-cognitive-partition'])}"
            )
    return out


def _default_partition(k: int) -> list[list[str]]:
    """Partition of the categories into k groups minimising within-group parameter variance
    (A.5's exact enumeration on the ontology table, the same as the granularity sweep)."""
    if not 1 <= k <= N_CATEGORIES:
        raise ValueError(f"systems: fr-collapsed-{k}: k must lie in 1..{N_CATEGORIES}")
    return optimal_table_partitions()[k]


def with_overrides(systems: Sequence[System], pipeline: dict | None = None) -> list[System]:
    """The systems with PipelineConfig fields overridden on every lifecycle-ranked system
    (flat baselines keep theirs), e.g. ``{"hybrid_weight": 0.3}``; unknown fields raise."""
    if not pipeline:
        return list(systems)
    fields = set(PipelineConfig.__dataclass_fields__)
    bad = sorted(set(pipeline) - fields - {"score"})
    if bad:
        raise ValueError(f"pipeline: unknown field(s) {bad}; known: {sorted(fields)}")
    defaults = PipelineConfig()
    typed = {}
    for k, v in pipeline.items():
        kind = type(getattr(defaults, k))
        if kind is not str and isinstance(v, str):
            raise ValueError(f"pipeline.{k}: expected a number, got {v!r}")
        typed[k] = kind(v)
    return [
        replace(s, pipeline=replace(s.pipeline, **typed)) if s.pipeline.ranker == "lifecycle" else s for s in systems
    ]
