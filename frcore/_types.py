"""Lifecycle states, typed links, query intents, the compatibility table and the static ablation switches."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

import numpy as np

if TYPE_CHECKING:
    import jax

#: A leaf of the score's pytrees (:class:`LifecycleParams`, :class:`Query`, :class:`Candidates`,
#: :class:`ScoreTerms`): a JAX array in the kernels, a NumPy array in the reference twin and on the host.
Leaf: TypeAlias = "jax.Array | np.ndarray"


class State(enum.IntEnum):
    """Lifecycle state ξ of an edge as of the query time (derived, never read from labels)."""

    ACTIVE = 0
    CONTESTED = 1  # soft supersession: both values stay, weighted by confidence
    SUPERSEDED = 2
    EXPIRED = 3
    RETRACTED = 4


class Intent(enum.IntEnum):
    """Query intent (SPEC §3)."""

    CURRENT = 0
    HISTORICAL = 1  # "used to", "before switching"
    CHANGE_HISTORY = 2
    UPCOMING = 3
    RETRACTION_AWARE = 4
    BROAD = 5


N_STATES = len(State)
N_INTENTS = len(Intent)
STATE_NAMES = tuple(s.name.lower() for s in State)
INTENT_NAMES = tuple(i.name.lower() for i in Intent)
#: Kinds of the typed links an edge may carry to other edges (by id), in the order error messages
#: list them (docs/formats.md). FR-Bank's fact schema, its lifecycle derivation (a link's kind is
#: coded as its index here, in memory only: no file stores the code) and LifecycleBench's suite
#: format all read this one tuple.
LINK_KINDS: tuple[str, ...] = ("supersedes", "retracts", "contradicts", "tentative_for")


def _compatibility_table() -> np.ndarray:
    """COMPATIBLE[intent, state]: which lifecycle states each intent admits (SPEC §3).

    ``current``, ``broad`` and ``retraction_aware`` admit active / contested (a retraction-aware
    query may surface the retraction statement, which is itself an active edge);
    ``historical`` also admits superseded and expired; ``change_history`` admits all but
    retracted; ``upcoming`` admits active edges only, as SPEC §3 states (the kernel further
    requires the event to lie ahead). Retracted content is admitted by no intent.
    """
    t = np.zeros((N_INTENTS, N_STATES), dtype=bool)
    live = [State.ACTIVE, State.CONTESTED]
    for intent in (Intent.CURRENT, Intent.BROAD, Intent.RETRACTION_AWARE):
        t[intent, live] = True
    t[Intent.UPCOMING, State.ACTIVE] = True
    t[Intent.HISTORICAL, live + [State.SUPERSEDED, State.EXPIRED]] = True
    t[Intent.CHANGE_HISTORY, live + [State.SUPERSEDED, State.EXPIRED]] = True
    t.setflags(write=False)
    return t


COMPATIBLE = _compatibility_table()

DECAY_MODES = ("harmonic", "arithmetic", "primary", "uniform", "cognitive")


@dataclass(frozen=True)
class ScoreConfig:
    """Structural switches of the score (static under ``jit``; the ablation modes).

    Attributes:
      decay: how soft category weights combine rates — ``harmonic`` (Lemma 1, the default),
        ``arithmetic`` (Σ w_c λ_c), ``primary`` (primary category only), ``uniform`` (one rate for
        all), ``cognitive`` (rates of the cognitive types, harmonic-combined).
      global_alpha: use one α for every category instead of α_c.
      floors: apply the semantic floor F_c.
      numeric_rescue: apply the numeric rescue floor.
      anticipation: use the anticipatory event kernel for edges with an event time.
      lifecycle: apply the state x intent compatibility mask (off: everything admitted).
      routing: add the category-routing term.
      supersession_weight: add the soft-supersession (confidence) term for contested edges.
      numeric_exemption: numeric edges are exempt from the supersession and expiry filters.
      untyped_upcoming: under ``upcoming``, an edge without lifecycle metadata (candidate ``typed``
        false: a raw turn, no slot, event time or link) is admitted as its state allows, as under
        ``current``: nothing says its time is past. Off: ``upcoming`` needs an event ahead on
        every edge.
    """

    decay: str = "harmonic"
    global_alpha: bool = False
    floors: bool = True
    numeric_rescue: bool = True
    anticipation: bool = True
    lifecycle: bool = True
    routing: bool = True
    supersession_weight: bool = True
    numeric_exemption: bool = True
    untyped_upcoming: bool = False

    def __post_init__(self) -> None:
        if self.decay not in DECAY_MODES:
            raise ValueError(f"ScoreConfig.decay: unknown mode {self.decay!r}; expected one of {DECAY_MODES}")


#: The additive parts of the lifecycle log-score, by the kernel's own names (fields of
#: :class:`frcore.ScoreTerms`), in the kernel's order of summation:
#: ``total = log_blend + routing + supersession + mask + exemption``. The other fields (``rate``,
#: ``age``, ``activation``, ``blend``) are inputs of ``log_blend``, not parts of the sum. Every
#: explanation of a score lists these, through :func:`score_summands`.
SCORE_SUMMANDS: tuple[str, ...] = ("log_blend", "routing", "supersession", "mask", "exemption")


def score_summands(terms) -> tuple[tuple[str, object], ...]:
    """``(name, value)`` of each additive term of :data:`SCORE_SUMMANDS`, from a
    :class:`frcore.ScoreTerms` (values as arrays) or a mapping of term names (FR-Bank's
    ``terms``); their sum is the total, up to the float32 rounding of the kernel."""
    if isinstance(terms, Mapping):
        return tuple((name, terms[name]) for name in SCORE_SUMMANDS)
    return tuple((name, getattr(terms, name)) for name in SCORE_SUMMANDS)


#: Named ablation modes of the score, as configurations of the same kernels (issue 2).
ABLATIONS: dict[str, ScoreConfig] = {
    "full": ScoreConfig(),
    "arithmetic-blend": ScoreConfig(decay="arithmetic"),
    "primary-only": ScoreConfig(decay="primary"),
    "uniform-decay": ScoreConfig(decay="uniform"),
    "global-alpha": ScoreConfig(global_alpha=True),
    "no-floors": ScoreConfig(floors=False),
    "no-anticipation": ScoreConfig(anticipation=False),
    "cognitive": ScoreConfig(decay="cognitive"),
    "no-routing": ScoreConfig(routing=False),
    "lifecycle-off": ScoreConfig(lifecycle=False),
}


def intent_index(name: str | int) -> int:
    """Index of an intent by name (case-insensitive) or int; ``ValueError`` naming it otherwise."""
    if isinstance(name, (int, np.integer)) and not isinstance(name, bool):
        if 0 <= int(name) < N_INTENTS:
            return int(name)
        raise ValueError(f"intent: index {name} out of range 0..{N_INTENTS - 1}")
    key = str(name).strip().lower()
    if key in INTENT_NAMES:
        return INTENT_NAMES.index(key)
    raise ValueError(f"intent: unknown intent {name!r}; expected one of {', '.join(INTENT_NAMES)}")


def state_index(name: str | int) -> int:
    """Index of a lifecycle state by name or int; ``ValueError`` naming it otherwise."""
    if isinstance(name, (int, np.integer)) and not isinstance(name, bool):
        if 0 <= int(name) < N_STATES:
            return int(name)
        raise ValueError(f"state: index {name} out of range 0..{N_STATES - 1}")
    key = str(name).strip().lower()
    if key in STATE_NAMES:
        return STATE_NAMES.index(key)
    raise ValueError(f"state: unknown state {name!r}; expected one of {', '.join(STATE_NAMES)}")
