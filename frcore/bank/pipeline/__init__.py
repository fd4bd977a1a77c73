"""Retrieval: query understanding (intents, routing) and the eight-stage pipeline.

What the rest of FR-Bank uses of this layer is imported from here; its modules are its own.
"""

from ._pipeline import (
    PartialCosine as PartialCosine,
    PipelineConfig as PipelineConfig,
    Prepared as Prepared,
    Retrieval as Retrieval,
    related_pairs as related_pairs,
    retrieve as retrieve,
    scale_sigma_max as scale_sigma_max,
)
from ._query import (
    INTENT_RULES as INTENT_RULES,
    Router as Router,
    check_intent as check_intent,
    infer_intent as infer_intent,
    routing_from_categories as routing_from_categories,
)

__all__ = [
    "INTENT_RULES",
    "PartialCosine",
    "PipelineConfig",
    "Prepared",
    "Retrieval",
    "Router",
    "check_intent",
    "infer_intent",
    "related_pairs",
    "retrieve",
    "routing_from_categories",
    "scale_sigma_max",
]
