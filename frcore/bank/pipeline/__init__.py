"""Retrieval: query understanding (intents, routing) and the eight-stage pipeline.

Modules: ``_query`` (intents, routing), ``_config`` (:class:`PipelineConfig`, the results),
``_sigma`` (the hybrid σ and its scale), ``_prepare`` (per-snapshot arrays, kernel inputs),
``_select`` (top rows), ``_partial`` (a partially known cosine), ``_stages`` (the eight stages)
and ``_retrieve`` (:func:`retrieve`, the stages in order). What the rest of FR-Bank uses of this
layer is imported from here; its modules are its own.
"""

from ._config import (
    FR_BANK_PIPELINE as FR_BANK_PIPELINE,
    PipelineConfig as PipelineConfig,
    Retrieval as Retrieval,
)
from ._explain import explain_results as explain_results, explanation as explanation
from ._prepare import Prepared as Prepared, related_pairs as related_pairs
from ._query import (
    INTENT_RULES as INTENT_RULES,
    Router as Router,
    check_intent as check_intent,
    infer_intent as infer_intent,
    routing_from_categories as routing_from_categories,
)
from ._recall import QuestionReading as QuestionReading, read_question as read_question
from ._retrieve import retrieve as retrieve
from ._sigma import hybrid_sigma as hybrid_sigma, scale_sigma_max as scale_sigma_max

__all__ = [
    "FR_BANK_PIPELINE",
    "explain_results",
    "explanation",
    "INTENT_RULES",
    "PipelineConfig",
    "Prepared",
    "QuestionReading",
    "Retrieval",
    "Router",
    "check_intent",
    "hybrid_sigma",
    "infer_intent",
    "read_question",
    "related_pairs",
    "retrieve",
    "routing_from_categories",
    "scale_sigma_max",
]
