"""FR-Bank: a persistent, append-only, bi-temporal lifecycle-aware memory store with the
eight-stage retrieval pipeline (SPEC §4)."""

from ._bank import Bank as Bank, QueryResult as QueryResult, parse_time as parse_time, to_hours as to_hours
from ._cache import CachedEmbedder as CachedEmbedder
from ._embed import get_embedder as get_embedder
from ._facts import FactRecord as FactRecord, parse_fact as parse_fact
from ._injection import Detection as Detection, detect as detect_injection, instruction_rule as instruction_rule
from ._injection import looks_like_instruction as looks_like_instruction
from ._lifecycle import derive_states as derive_states
from ._pipeline import PipelineConfig as PipelineConfig, retrieve as retrieve, scale_sigma_max as scale_sigma_max
from ._query import Router as Router, infer_intent as infer_intent

__all__ = [
    "Bank", "QueryResult", "PipelineConfig", "Router", "infer_intent", "retrieve", "parse_time", "to_hours",
    # facts and their lifecycle states
    "FactRecord", "parse_fact", "derive_states",
    # embedders
    "get_embedder", "CachedEmbedder",
    # the σ-scale rule of PipelineConfig(sigma_scale="max")
    "scale_sigma_max",
    # the prompt-injection detector behind quarantine
    "Detection", "detect_injection", "instruction_rule", "looks_like_instruction",
]
