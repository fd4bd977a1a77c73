"""FR-Bank: a persistent, append-only, bi-temporal lifecycle-aware memory store with the
eight-stage retrieval pipeline (SPEC §4)."""

from ._bank import Bank as Bank, QueryResult as QueryResult, parse_time as parse_time, to_hours as to_hours
from ._pipeline import PipelineConfig as PipelineConfig, retrieve as retrieve
from ._query import Router as Router, infer_intent as infer_intent

__all__ = ["Bank", "QueryResult", "PipelineConfig", "Router", "infer_intent", "retrieve", "parse_time", "to_hours"]
