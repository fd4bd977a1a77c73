"""Lexical retrieval: Okapi BM25 (Lucene variant; English stopwords removed, Snowball stemming).

Stopwords: the NLTK English list (179 words; bm25s' ``"en_plus"``, which :data:`STOPWORDS`
equals — a test checks it). bm25s' short ``"en"`` list (33 words) keeps question words and
auxiliaries — "what", "do", "does", "how", "where", "i", "my" — so a question matched
statements through them alone (a turn about a pressure cooker got the top BM25 score for "What
exercise does Priya do?" through "do"/"does"). Queries are questions and memories are
statements: those words carry no content here.

Two implementations of one score:

- :class:`Postings` (what FR-Bank ranks with): term → rows postings with raw term counts and
  document lengths, scored at query time over any subset of its rows — the rows of a snapshot —
  with that subset's own statistics (N, df, average length), so one index serves every valid
  time and user, and it can be written to disk (:mod:`frcore.bank.storage._index`) and extended by
  appending rows.
- :class:`LexicalIndex`: ``bm25s`` over a fixed list of texts, the reference the first is
  tested against bit for bit.

The score of text d for query tokens q₁…q_m (in query order, repeats counted):
Σᵢ float32(idf(qᵢ) · tf/(tf + k1·(1 − b + b·|d|/avgdl))), idf(t) = float32(ln(1 + (N − df + 0.5)/(df + 0.5))),
accumulated in float32 (bm25s' arithmetic, NumPy ≥ 2 type promotion); an empty text counts as
one token long.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

try:  # optional: PyStemmer gives Snowball stemming
    import Stemmer  # type: ignore

    _STEMMER = Stemmer.Stemmer("english")
except Exception:  # pragma: no cover - depends on the environment
    _STEMMER = None

#: BM25 parameters (bm25s' defaults)
K1, B = 1.5, 0.75

#: The English stopwords (NLTK's list, as bm25s names it ``"en_plus"``), dropped from every text.
STOPWORDS: tuple[str, ...] = (
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "ain",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "aren",
    "aren't",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "couldn",
    "couldn't",
    "d",
    "did",
    "didn",
    "didn't",
    "do",
    "does",
    "doesn",
    "doesn't",
    "doing",
    "don",
    "don't",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "hadn",
    "hadn't",
    "has",
    "hasn",
    "hasn't",
    "have",
    "haven",
    "haven't",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "isn",
    "isn't",
    "it",
    "it's",
    "its",
    "itself",
    "just",
    "ll",
    "m",
    "ma",
    "me",
    "mightn",
    "mightn't",
    "more",
    "most",
    "mustn",
    "mustn't",
    "my",
    "myself",
    "needn",
    "needn't",
    "no",
    "nor",
    "not",
    "now",
    "o",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "re",
    "s",
    "same",
    "shan",
    "shan't",
    "she",
    "she's",
    "should",
    "should've",
    "shouldn",
    "shouldn't",
    "so",
    "some",
    "such",
    "t",
    "than",
    "that",
    "that'll",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "ve",
    "very",
    "was",
    "wasn",
    "wasn't",
    "we",
    "were",
    "weren",
    "weren't",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "won",
    "won't",
    "wouldn",
    "wouldn't",
    "y",
    "you",
    "you'd",
    "you'll",
    "you're",
    "you've",
    "your",
    "yours",
    "yourself",
    "yourselves",
)

#: bm25s.tokenize's default token pattern (scikit-learn's CountVectorizer)
_SPLIT = re.compile(r"(?u)\b\w\w+\b").findall
_STOP = frozenset(STOPWORDS)
#: bm25s refuses an all-empty corpus; an empty text is indexed as this one token (never a query token)
PLACEHOLDER = "\u2400"


def _tokenize(texts: Sequence[str]) -> list[list[str]]:
    """bm25s' own tokenizer (the reference :func:`tokenize_many` is tested against)."""
    import bm25s

    out = bm25s.tokenize(list(texts), stopwords="en_plus", stemmer=_STEMMER, return_ids=False, show_progress=False)
    return [list(t) for t in out]


def tokenize_many(texts: Sequence[str]) -> list[list[str]]:
    """Tokens of each text: lower-case, split on :data:`_SPLIT`, stopwords dropped, each token
    stemmed (equal to bm25s' tokenizer; each token's stem depends on the token alone, so every
    distinct token is stemmed once)."""
    stop = _STOP
    docs = [[t for t in _SPLIT(text.lower()) if t not in stop] for text in texts]
    if _STEMMER is None:
        return docs
    unique = list({t: None for d in docs for t in d})
    stem = dict(zip(unique, _STEMMER.stemWords(unique)))
    return [[stem[t] for t in d] for d in docs]


def tokenize_stored(texts: Sequence[str], normalize: Callable[[str], str]) -> list[list[str]]:
    """The BM25 tokens of stored fact texts, as a bank's index keeps them: each text as
    ``normalize`` reads it (the bank's: the owner's name replaced), then :func:`tokenize_many`.
    The bank hands this (with its ``normalize`` bound) to its store, which never tokenizes on its own."""
    return tokenize_many([normalize(t) for t in texts])


def _tokenize_one(text: str) -> list[str]:
    """Tokens of one text, equal to ``tokenize_many([text])[0]``."""
    tokens = [t for t in _SPLIT(text.lower()) if t not in _STOP]
    if _STEMMER is None or not tokens:
        return tokens
    unique = list(dict.fromkeys(tokens))
    stem = dict(zip(unique, _STEMMER.stemWords(unique)))
    return [stem[t] for t in tokens]


@dataclass(frozen=True)
class Postings:
    """Term → rows postings of token lists (one per row, rows in order).

    ``vocab[t]`` is token t's id; its postings are ``rows[indptr[t]:indptr[t+1]]`` (ascending)
    with raw counts ``tf`` (float32, as bm25s counts); ``length[r]`` is row r's token count (an
    empty row counts 1, :data:`PLACEHOLDER`)."""

    vocab: dict[str, int]
    indptr: np.ndarray  # (V + 1,) int64
    rows: np.ndarray  # (nnz,) int64
    tf: np.ndarray  # (nnz,) float32
    length: np.ndarray  # (n,) int64

    @property
    def n(self) -> int:
        return int(self.length.shape[0])

    @classmethod
    def build(cls, tokens: Sequence[Sequence[str]]) -> Postings:
        """Postings of ``tokens`` (row r's token list at ``tokens[r]``)."""
        vocab: dict[str, int] = {}
        setdefault = vocab.setdefault
        flat = [setdefault(t, len(vocab)) for doc in tokens for t in (doc or (PLACEHOLDER,))]
        length = np.fromiter((len(doc) or 1 for doc in tokens), dtype=np.int64, count=len(tokens))
        tok = np.asarray(flat, dtype=np.int64)
        row = np.repeat(np.arange(len(tokens), dtype=np.int64), length)
        return cls.from_pairs(vocab, tok, row, length)

    @classmethod
    def from_pairs(cls, vocab: dict[str, int], tok: np.ndarray, row: np.ndarray, length: np.ndarray) -> Postings:
        """Postings from one (token id, row) pair per token occurrence."""
        v = max(len(vocab), 1)
        key, tf = np.unique(tok * np.int64(length.shape[0] or 1) + row, return_counts=True)  # sorted by (token, row)
        t_of, r_of = np.divmod(key, np.int64(length.shape[0] or 1))
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(t_of, minlength=v)[: len(vocab)], out=indptr[1:])
        return cls(vocab, indptr, r_of.astype(np.int64), tf.astype(np.float32), np.asarray(length, dtype=np.int64))

    def postings(self, token: str) -> tuple[np.ndarray, np.ndarray]:
        """(rows, tf) of ``token`` (empty when it occurs nowhere)."""
        t = self.vocab.get(token)
        if t is None:
            return _NO_ROWS, _NO_TF
        a, b = int(self.indptr[t]), int(self.indptr[t + 1])
        return self.rows[a:b], self.tf[a:b]


_NO_ROWS = np.zeros(0, dtype=np.int64)
_NO_TF = np.zeros(0, dtype=np.float32)


def concat_postings(parts: Sequence[Postings]) -> Postings:
    """The postings of the rows of ``parts`` one after another (row ids offset)."""
    if len(parts) == 1:
        return parts[0]
    vocab: dict[str, int] = {}
    toks, rows, tfs, lengths = [], [], [], []
    offset = 0
    for p in parts:
        remap = np.fromiter((vocab.setdefault(t, len(vocab)) for t in p.vocab), dtype=np.int64, count=len(p.vocab))
        counts = np.diff(p.indptr)
        toks.append(np.repeat(remap, counts))
        rows.append(p.rows + offset)
        tfs.append(p.tf)
        lengths.append(p.length)
        offset += p.n
    tok, row, tf = np.concatenate(toks), np.concatenate(rows), np.concatenate(tfs)
    order = np.lexsort((row, tok))
    tok, row, tf = tok[order], row[order], tf[order]
    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(np.bincount(tok, minlength=max(len(vocab), 1))[: len(vocab)], out=indptr[1:])
    return Postings(vocab, indptr, row, tf, np.concatenate(lengths) if lengths else _NO_ROWS)


class Lexicon:
    """BM25 over a subset of the rows of one or more :class:`Postings` (parts holding rows one
    after another): ``rows`` (ascending positions; ``None``: every row) are the texts scored,
    with their own N, document frequencies and average length. :meth:`scores` gives one score
    per row of the subset, in order."""

    def __init__(self, parts: Sequence[Postings], rows: np.ndarray | None = None, k1: float = K1, b: float = B):
        self.parts = tuple(parts)
        self.k1, self.b = k1, b
        offsets = np.cumsum([0] + [p.n for p in self.parts])
        self._offsets = offsets[:-1].tolist()
        total = int(offsets[-1])
        length = np.concatenate([p.length for p in self.parts]) if self.parts else _NO_ROWS
        if rows is None:
            self._local = None
            self.n = total
            sub_len = length
        else:
            rows = np.asarray(rows, dtype=np.int64)
            self._local = np.full(total, -1, dtype=np.int64)
            self._local[rows] = np.arange(rows.size)
            self.n = int(rows.size)
            sub_len = length[rows]
        self._length = length
        self._avg = sub_len.mean() if self.n else np.float64(1.0)
        self._memo: dict[str, tuple[np.ndarray | None, np.ndarray]] = {}
        self._memo_size = 0

    def _postings(self, token: str) -> tuple[np.ndarray, np.ndarray]:
        """(rows, tf) of ``token`` over every part (rows counted across the parts, ascending)."""
        got_rows, got_tf = [], []
        for off, p in zip(self._offsets, self.parts):
            r, tf = p.postings(token)
            if r.size:
                got_rows.append(r + off if off else r)
                got_tf.append(tf)
        if not got_rows:
            return _NO_ROWS, _NO_TF
        r = got_rows[0] if len(got_rows) == 1 else np.concatenate(got_rows)
        tf = got_tf[0] if len(got_tf) == 1 else np.concatenate(got_tf)
        return r, tf

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every row of the subset for ``query`` (zeros when no term matches)."""
        return self.scores_tokens(_tokenize_one(query))

    def scores_tokens(self, tokens: Sequence[str]) -> np.ndarray:
        """:meth:`scores` of already tokenized query tokens."""
        out = np.zeros(self.n, dtype=np.float32)
        if not self.n:
            return np.zeros(0)
        for token in tokens:
            pos, vals = self._contribution(token)
            if pos is None:
                out += vals  # the token is in every row, in order
            elif pos.size:
                out[pos] += vals
        return np.asarray(out, dtype=np.float64)

    def _contribution(self, token: str) -> tuple[np.ndarray | None, np.ndarray]:
        """(subset positions, float32 term scores) of ``token`` (positions ``None``: every row,
        in order), memoised: they depend only on the subset and the token."""
        got = self._memo.get(token)
        if got is not None:
            return got
        rows, tf = self._postings(token)
        if self._local is not None and rows.size:
            pos = self._local[rows]
            keep = pos >= 0
            if not keep.all():
                rows, tf, pos = rows[keep], tf[keep], pos[keep]
        else:
            pos = rows
        df = int(pos.size)
        if not df:
            got = (_NO_ROWS, _NO_TF)
        else:
            k1, b = self.k1, self.b
            idf = np.float32(math.log(1 + (self.n - df + 0.5) / (df + 0.5)))
            tfc = tf / (k1 * ((1 - b) + b * self._length[rows] / self._avg) + tf)
            vals = (idf * tfc).astype(np.float32)
            got = (None if df == self.n else pos, vals)  # df == n: the ascending positions are 0 … n-1
        self._memo_size += int(got[1].size)
        if self._memo_size > 4 * self.n + 65_536:
            self._memo.clear()
            self._memo_size = int(got[1].size)
        self._memo[token] = got
        return got


class LexicalIndex:
    """BM25 over a fixed list of texts with ``bm25s``; :meth:`scores` returns one score per
    text. The reference :class:`Lexicon` is tested against (``tokens``: the texts' tokens as
    :func:`tokenize_many` returns them)."""

    def __init__(
        self, texts: Sequence[str], k1: float = K1, b: float = B, tokens: Sequence[Sequence[str]] | None = None
    ):
        import bm25s

        self.n = len(texts)
        self._bm25 = None
        if self.n:
            if tokens is None:
                tokens = _tokenize(texts)
            elif len(tokens) != self.n:
                raise ValueError(f"tokens: {len(tokens)} token lists for {self.n} texts")
            tokens = [t if t else [PLACEHOLDER] for t in tokens]
            self._bm25 = bm25s.BM25(k1=k1, b=b)
            self._bm25.index(tokens, show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every indexed text for ``query`` (zeros when no term matches)."""
        if self._bm25 is None:
            return np.zeros(0)
        vocab = self._bm25.vocab_dict
        ids = [vocab[t] for t in _tokenize_one(query) if t in vocab]
        if not ids:
            return np.zeros(self.n)
        return np.asarray(self._bm25.get_scores_from_ids(ids), dtype=np.float64)
