"""Lexical retrieval: Okapi BM25 with ``bm25s`` (English stopwords removed, optional stemming)."""

from __future__ import annotations

from typing import Sequence

import bm25s
import numpy as np

try:  # optional: PyStemmer gives Snowball stemming to bm25s
    import Stemmer  # type: ignore

    _STEMMER = Stemmer.Stemmer("english")
except Exception:  # pragma: no cover - depends on the environment
    _STEMMER = None


def _tokenize(texts: Sequence[str]) -> list[list[str]]:
    out = bm25s.tokenize(list(texts), stopwords="en", stemmer=_STEMMER, return_ids=False, show_progress=False)
    return [list(t) for t in out]


class LexicalIndex:
    """BM25 over a fixed list of texts; :meth:`scores` returns one score per text."""

    def __init__(self, texts: Sequence[str], k1: float = 1.5, b: float = 0.75):
        self.n = len(texts)
        self._bm25 = None
        if self.n:
            tokens = _tokenize(texts)
            # bm25s refuses an all-empty corpus; a placeholder token keeps indices aligned.
            tokens = [t if t else ["\u2400"] for t in tokens]
            self._bm25 = bm25s.BM25(k1=k1, b=b)
            self._bm25.index(tokens, show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every indexed text for ``query`` (zeros when no term matches)."""
        if self._bm25 is None:
            return np.zeros(0)
        q = _tokenize([query])[0]
        vocab = self._bm25.vocab_dict
        q = [t for t in q if t in vocab]
        if not q:
            return np.zeros(self.n)
        return np.asarray(self._bm25.get_scores(q), dtype=np.float64)
