"""Search: embedders and their cache, BM25, and the approximate nearest-neighbour index.

What the rest of FR-Bank uses of this layer is imported from here; its modules are its own.
"""

from ._ann import (
    AnnConfig as AnnConfig,
    ApproximateFiles as ApproximateFiles,
    ApproximateRows as ApproximateRows,
)
from ._cache import (
    CachedEmbedder as CachedEmbedder,
)
from ._embed import (
    DEFAULT_EMBEDDER as DEFAULT_EMBEDDER,
    benchmark_throughput as benchmark_throughput,
    embedder_identity as embedder_identity,
    get_embedder as get_embedder,
)
from ._lexical import (
    Lexicon as Lexicon,
    Postings as Postings,
    concat_postings as concat_postings,
    tokenize_many as tokenize_many,
    tokenize_stored as tokenize_stored,
)
from ._partial import PartialCosine as PartialCosine

__all__ = [
    "PartialCosine",
    "AnnConfig",
    "ApproximateFiles",
    "ApproximateRows",
    "CachedEmbedder",
    "DEFAULT_EMBEDDER",
    "Lexicon",
    "Postings",
    "benchmark_throughput",
    "concat_postings",
    "embedder_identity",
    "get_embedder",
    "tokenize_many",
    "tokenize_stored",
]
