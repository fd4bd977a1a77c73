"""Lexical retrieval: Okapi BM25 with ``bm25s`` (English stopwords removed, optional stemming).

Stopwords: the NLTK English list (bm25s' ``"en_plus"``, 179 words). bm25s' short ``"en"`` list
(33 words) keeps question words and auxiliaries — "what", "do", "does", "how", "where", "i",
"my" — so a question matched statements through them alone (a turn about a pressure cooker got
the top BM25 score for "What exercise does Priya do?" through "do"/"does"). Queries are
questions and memories are statements: those words carry no content here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import bm25s
import numpy as np

try:  # optional: PyStemmer gives Snowball stemming to bm25s
    import Stemmer  # type: ignore

    _STEMMER = Stemmer.Stemmer("english")
except Exception:  # pragma: no cover - depends on the environment
    _STEMMER = None

#: the stopword list, as named to bm25s.tokenize
STOPWORDS = "en_plus"
try:  # the list bm25s.tokenize uses for stopwords="en_plus"
    from bm25s.stopwords import STOPWORDS_EN_PLUS as _STOPWORDS_LIST
except Exception:  # pragma: no cover - depends on the bm25s version
    _STOPWORDS_LIST = None

#: bm25s.tokenize's default token pattern (scikit-learn's CountVectorizer)
_SPLIT = re.compile(r"(?u)\b\w\w+\b").findall
_STOP = frozenset(_STOPWORDS_LIST) if _STOPWORDS_LIST is not None else None


def _tokenize(texts: Sequence[str]) -> list[list[str]]:
    out = bm25s.tokenize(list(texts), stopwords=STOPWORDS, stemmer=_STEMMER, return_ids=False, show_progress=False)
    return [list(t) for t in out]


def _tokenize_many(texts: Sequence[str]) -> list[list[str]]:
    """Tokens of each text, equal to ``_tokenize(texts)`` (each token's stem depends on the
    token alone, so stemming every distinct token once gives what bm25s gives)."""
    if _STOP is None:
        return _tokenize(texts)
    stop = _STOP
    docs = [[t for t in _SPLIT(text.lower()) if t not in stop] for text in texts]
    if _STEMMER is None:
        return docs
    unique = list({t: None for d in docs for t in d})
    stem = dict(zip(unique, _STEMMER.stemWords(unique)))
    return [[stem[t] for t in d] for d in docs]


def _tokenize_one(text: str) -> list[str]:
    """Tokens of one text, equal to ``_tokenize([text])[0]`` (lower-case, split on the same
    pattern, English stopwords dropped, each token stemmed) without bm25s' per-call setup."""
    if _STOP is None:
        return _tokenize([text])[0]
    tokens = [t for t in _SPLIT(text.lower()) if t not in _STOP]
    if _STEMMER is None or not tokens:
        return tokens
    unique = list(dict.fromkeys(tokens))
    stem = dict(zip(unique, _STEMMER.stemWords(unique)))
    return [stem[t] for t in tokens]


class LexicalIndex:
    """BM25 over a fixed list of texts; :meth:`scores` returns one score per text.

    ``tokens``, when given, are the texts' tokens as :func:`_tokenize` returns them (e.g.
    kept from an earlier index over an overlapping corpus)."""

    def __init__(
        self, texts: Sequence[str], k1: float = 1.5, b: float = 0.75, tokens: Sequence[Sequence[str]] | None = None
    ):
        self.n = len(texts)
        self._bm25 = None
        self._dense: dict[int, bool] = {}  # token id → its postings are every text, in order
        if self.n:
            if tokens is None:
                tokens = _tokenize(texts)
            elif len(tokens) != self.n:
                raise ValueError(f"tokens: {len(tokens)} token lists for {self.n} texts")
            # bm25s refuses an all-empty corpus; a placeholder token keeps indices aligned.
            tokens = [t if t else ["\u2400"] for t in tokens]
            self._bm25 = bm25s.BM25(k1=k1, b=b)
            self._bm25.index(tokens, show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every indexed text for ``query`` (zeros when no term matches)."""
        if self._bm25 is None:
            return np.zeros(0)
        bm = self._bm25
        vocab = bm.vocab_dict
        ids = [vocab[t] for t in _tokenize_one(query) if t in vocab]
        if not ids:
            return np.zeros(self.n)
        sc = bm.scores
        if bm.nonoccurrence_array is not None or max(ids) >= len(sc["indptr"]) - 1:
            return np.asarray(bm.get_scores_from_ids(ids), dtype=np.float64)
        # bm25s' own accumulation (np.add.at per query token, in query order, in its dtype),
        # with one shortcut: a token found in every text in row order adds its whole column
        # at once — the same additions, element by element.
        data, indices, indptr = sc["data"], sc["indices"], sc["indptr"]
        scores = np.zeros(sc["num_docs"], dtype=np.dtype(bm.dtype))
        for t in ids:
            start, end = int(indptr[t]), int(indptr[t + 1])
            if self._in_every_text(sc, t, start, end):
                scores += data[start:end]
            else:
                np.add.at(scores, indices[start:end], data[start:end])
        return np.asarray(scores, dtype=np.float64)

    def _in_every_text(self, sc: dict[str, Any], token: int, start: int, end: int) -> bool:
        """Whether ``token`` occurs in every indexed text (``sc``: the index's ``scores`` arrays; memoised)."""
        dense = self._dense.get(token)
        if dense is None:
            idx = sc["indices"][start:end]
            n = sc["num_docs"]
            dense = self._dense[token] = end - start == n and bool((idx == np.arange(n)).all())
        return dense
