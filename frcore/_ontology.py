"""The behavioral ontology (10 + 1 categories) as one immutable table.

The numbers are those of the paper's released implementation (SPEC §2): per-hour decay
rates λ_c (half-life = ln 2 / λ_c; the spread 0.008 / 0.0015 = 5.3x is the paper's
"decay rates span 5.3x"), blend weights α_c, semantic floors F_c, clock sensitivities
(absolute, inter-session, conversational; each row sums to 1), and which categories expire at
their event time. The cognitive-type column is *our* assignment for the cognitive
3-partition ablation (SPEC §2), not the paper's.

The table is a tuple of frozen rows; :func:`as_arrays` derives the array view once.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np


class Category(enum.IntEnum):
    """The 10 + 1 behavioral categories, in table order (the index is the array position)."""

    IDENTITY_SELF_CONCEPT = 0
    RELATIONAL_BONDS = 1
    INTELLECTUAL_INTERESTS = 2
    HEALTH_WELLBEING = 3
    PROJECTS_ENDEAVORS = 4
    HOBBIES_RECREATION = 5
    PREFERENCES_HABITS = 6
    FINANCIAL_MATERIAL = 7
    OBLIGATIONS = 8
    LOGISTICAL_CONTEXT = 9
    OTHER = 10


class CognitiveType(enum.IntEnum):
    """Cognitive memory types, used only by the cognitive-typology ablation."""

    EPISODIC = 0
    SEMANTIC = 1
    PROCEDURAL = 2


@dataclass(frozen=True)
class CategoryRow:
    """One row of the ontology table (SPEC §2)."""

    category: Category
    rate_per_hour: float
    alpha: float
    floor: float
    clocks: tuple[float, float, float]  # (absolute, inter-session, conversational)
    cognitive_type: CognitiveType
    expires_at_event: bool

    @property
    def half_life_hours(self) -> float:
        """ln 2 / λ_c."""
        return float(np.log(2.0) / self.rate_per_hour)


_E, _S, _P = CognitiveType.EPISODIC, CognitiveType.SEMANTIC, CognitiveType.PROCEDURAL
C = Category

ONTOLOGY: tuple[CategoryRow, ...] = (
    CategoryRow(C.IDENTITY_SELF_CONCEPT, 0.0015, 0.10, 0.95, (0.4, 0.3, 0.3), _S, False),
    CategoryRow(C.RELATIONAL_BONDS, 0.0015, 0.10, 0.95, (0.2, 0.6, 0.2), _S, False),
    CategoryRow(C.INTELLECTUAL_INTERESTS, 0.0020, 0.15, 0.90, (0.3, 0.4, 0.3), _S, False),
    CategoryRow(C.HEALTH_WELLBEING, 0.0025, 0.10, 0.95, (0.5, 0.3, 0.2), _S, False),
    CategoryRow(C.PROJECTS_ENDEAVORS, 0.0025, 0.30, 0.75, (0.5, 0.2, 0.3), _E, False),
    CategoryRow(C.HOBBIES_RECREATION, 0.0035, 0.20, 0.92, (0.3, 0.5, 0.2), _P, False),
    CategoryRow(C.PREFERENCES_HABITS, 0.0050, 0.20, 0.85, (0.6, 0.2, 0.2), _S, False),
    CategoryRow(C.FINANCIAL_MATERIAL, 0.0055, 0.05, 0.97, (0.5, 0.3, 0.2), _S, False),
    CategoryRow(C.OBLIGATIONS, 0.0060, 0.35, 0.70, (0.7, 0.1, 0.2), _E, True),
    CategoryRow(C.LOGISTICAL_CONTEXT, 0.0080, 0.40, 0.00, (0.8, 0.1, 0.1), _E, True),
    CategoryRow(C.OTHER, 0.0050, 0.10, 0.00, (0.4, 0.3, 0.3), _S, False),
)
del C

N_CATEGORIES = len(ONTOLOGY)
CATEGORY_NAMES: tuple[str, ...] = tuple(row.category.name for row in ONTOLOGY)

#: Released cognitive-ablation rates per hour (SPEC §2): episodic, semantic, procedural.
COGNITIVE_RATES_PER_HOUR: tuple[float, float, float] = (0.050, 0.005, 0.003)


class AnticipationConstants(NamedTuple):
    """Anticipatory activation (SPEC §2): a linear ramp from ``start`` to ``peak`` over the
    ``window_hours`` before an event, then ``peak · exp(-post_decay · hours past)``; below
    ``staleness_floor`` the post-event activation is 0."""

    window_hours: float = 168.0
    start: float = 0.3
    peak: float = 3.0
    post_decay_per_hour: float = 0.15
    staleness_floor: float = 0.01


ANTICIPATION = AnticipationConstants()

#: Supersession applies when its confidence is ≥ this; below it the slot is soft-superseded
#: (both values stay, contested).
SUPERSESSION_CONFIDENCE_THRESHOLD = 0.7
#: One conversational message counts as this many effective hours.
HOURS_PER_MESSAGE = 0.5
#: Uniform-decay ablation rate per hour and the global-α ablation default.
UNIFORM_RATE_PER_HOUR = 0.003
GLOBAL_ALPHA_DEFAULT = 0.1


class OntologyArrays(NamedTuple):
    """Array view of :data:`ONTOLOGY` (read-only NumPy arrays, float64)."""

    rates: np.ndarray  # (C,)
    alpha: np.ndarray  # (C,)
    floors: np.ndarray  # (C,)
    clocks: np.ndarray  # (C, 3)
    cognitive_type: np.ndarray  # (C,) int
    cognitive_rates: np.ndarray  # (C,) rate of each category's cognitive type
    expires_at_event: np.ndarray  # (C,) bool


@functools.cache
def as_arrays() -> OntologyArrays:
    """Derive the array view of the ontology once (cached; arrays are read-only)."""
    cog = np.array([int(r.cognitive_type) for r in ONTOLOGY], dtype=np.int64)
    arrays = OntologyArrays(
        rates=np.array([r.rate_per_hour for r in ONTOLOGY], dtype=np.float64),
        alpha=np.array([r.alpha for r in ONTOLOGY], dtype=np.float64),
        floors=np.array([r.floor for r in ONTOLOGY], dtype=np.float64),
        clocks=np.array([r.clocks for r in ONTOLOGY], dtype=np.float64),
        cognitive_type=cog,
        cognitive_rates=np.asarray(COGNITIVE_RATES_PER_HOUR, dtype=np.float64)[cog],
        expires_at_event=np.array([r.expires_at_event for r in ONTOLOGY], dtype=bool),
    )
    for a in arrays:
        a.setflags(write=False)
    return arrays


def category_index(name: str) -> int:
    """Index of a category by its canonical name; ``ValueError`` naming it if unknown."""
    try:
        return int(Category[name])
    except KeyError:
        raise ValueError(f"unknown category {name!r}; expected one of {', '.join(CATEGORY_NAMES)}") from None


def primary_index(weights) -> np.ndarray:
    """Primary category p = argmax_c w_c of (..., C) soft category weights, as indices: the first
    category in table order among equal maxima (so all-zero weights give 0). The kernel's rule
    (:func:`frcore.primary_category`), on the host: FR-Bank's preparation, routing and fact
    records call this one function."""
    return np.argmax(np.asarray(weights), axis=-1)


def primary_name(categories: Mapping[str, float]) -> str:
    """Primary category of soft weights ``{CATEGORY: w_c}``, by name: :func:`primary_index` of
    the weights in table order (an absent category weighs 0)."""
    return CATEGORY_NAMES[int(primary_index([float(categories.get(name, 0.0)) for name in CATEGORY_NAMES]))]


def _check_table() -> None:
    for i, row in enumerate(ONTOLOGY):
        assert int(row.category) == i, row
        assert abs(sum(row.clocks) - 1.0) < 1e-12, row


_check_table()
