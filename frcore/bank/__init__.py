"""FR-Bank: a persistent, append-only, bi-temporal lifecycle-aware memory store with the
eight-stage retrieval pipeline (SPEC §4)."""

from ._bank import (
    Bank as Bank,
    EmbedderMismatch as EmbedderMismatch,
    QueryResult as QueryResult,
    result_limit as result_limit,
)
from .derive import DeriveConfig as DeriveConfig, derive_records as derive_records
from .guard import (
    Detection as Detection,
    detect as detect_injection,
    instruction_rule as instruction_rule,
    looks_like_instruction as looks_like_instruction,
)
from .pipeline import (
    FR_BANK_PIPELINE as FR_BANK_PIPELINE,
    INTENT_RULES as INTENT_RULES,
    PipelineConfig as PipelineConfig,
    Router as Router,
    hybrid_sigma as hybrid_sigma,
    infer_intent as infer_intent,
    retrieve as retrieve,
    scale_sigma_max as scale_sigma_max,
)
from .records import (
    FACT_FIELDS as FACT_FIELDS,
    FactRecord as FactRecord,
    derive_states as derive_states,
    neutralize as neutralize,
    owner_pattern as owner_pattern,
    parse_fact as parse_fact,
)
from .search import AnnConfig as AnnConfig, CachedEmbedder as CachedEmbedder, get_embedder as get_embedder

__all__ = [
    "Bank",
    "QueryResult",
    "PipelineConfig",
    "FR_BANK_PIPELINE",  # the retrieval Bank.query uses by default (the fr-plus family's)
    "Router",
    "infer_intent",
    "retrieve",
    # query understanding: the intent rules, the owner's name read as "the user", the largest k
    "INTENT_RULES",
    "owner_pattern",
    "neutralize",
    "result_limit",
    # facts and their lifecycle states
    "FACT_FIELDS",  # the fact format's fields: the one table of the bank, MCP and suite loaders
    "FactRecord",
    "parse_fact",
    "derive_states",
    # embedders (a bank records its own: opening it with another raises EmbedderMismatch)
    "get_embedder",
    "CachedEmbedder",
    "EmbedderMismatch",
    # lifecycle metadata derived from raw turns (Bank.open(..., derive=DeriveConfig(...)), docs/derive.md)
    "DeriveConfig",
    "derive_records",
    # the approximate nearest-neighbour index's settings (Bank.open(..., ann=AnnConfig(...)))
    "AnnConfig",
    # σ: the hybrid of cosine and BM25, and the σ-scale rule of PipelineConfig(sigma_scale="max")
    "hybrid_sigma",
    "scale_sigma_max",
    # the prompt-injection detector behind quarantine
    "Detection",
    "detect_injection",
    "instruction_rule",
    "looks_like_instruction",
]
