"""Retrieval from raw conversation (docs/benchmark.md, "FR-Bank's retrieval"): what a question's
own words ask of the ranking, and the four switchable stages that read them.

- :func:`read_question`: a question's time words (:func:`frcore.bank.derive.question_time`,
  one parser for turns and questions) and whether it asks for every mention
  (:data:`COVERAGE_CUES`).
- :func:`turn_context` (``PipelineConfig.turn_context``): a turn's neighbours in its episode are
  evidence for it: σ_i ← max(σ_i, :data:`HALF` · max σ of its neighbours).
- :func:`time_window` (``time_window``): the question's window over when a row was said or
  happened (its event time when it has one, else its said-at) adds the best rows inside it as
  candidates, and halves the σ of every row outside it (:data:`HALF`), when some alive row lies
  inside.
- :func:`sigma_ranked` (``untyped_score="sigma"``): a raw turn (``kind: "turn"``) without
  lifecycle metadata (:attr:`Prepared.typed` false: no slot, event time or link) is scored by
  its σ alone: blend b = σ, the
  routing term 0 — nothing stated says how fast it ages or which category it is, and the
  router's guess from its words repeats what σ measures — with the kernel's compatibility mask
  kept. Typed rows keep the kernel's score.
- :func:`episode_coverage` (``coverage``): for a question that asks for every mention, no
  episode (a session, else a said-at day) holds more than ⌈k/2⌉ of the top k.
- :func:`time_order` (``time_order``): the question's order words (``earliest`` /
  ``latest``) reorder the top k, never change which rows are in it.

One constant, :data:`HALF`, for every "how much weaker" of these stages: written before any
measurement, a factor two being the least that reads as a clear preference and the most that
still lets a much better match win.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from dataclasses import dataclass

import numpy as np

from ..derive import QuestionTime, question_time
from ._select import _top, _union

#: every "weaker by" factor of the stages of this module (see the module's docstring)
HALF = 0.5
#: Raw turns' newest-first order acts inside the first results only (the default k of a query):
#: a derived link orders what retrieval found, it never decides what is found.
NEWEST_FIRST_WINDOW = 10

#: Words by which a question asks for every mention of something (how many, in total, all, each).
COVERAGE_CUES = re.compile(
    r"\b(how many|how much|in total|total|altogether|combined|all (?:the|of|my)|each of|every)\b", re.I
)


@dataclass(frozen=True)
class QuestionReading:
    """What a question's own words ask of the ranking: its time words (``time``, None without
    any) and whether it asks for every mention (``coverage``, the cue that matched or None)."""

    time: QuestionTime | None = None
    coverage: str | None = None

    @property
    def order(self) -> str | None:
        """``earliest`` or ``latest`` when the question's order words ask for one, else None."""
        return None if self.time is None else self.time.order

    @property
    def window(self) -> tuple[float, float] | None:
        """The time window in hours since the epoch (open sides ±inf), or None."""
        t = self.time
        if t is None or (t.start is None and t.end is None):
            return None
        return (_hours(t.start) if t.start else -math.inf, _hours(t.end) if t.end else math.inf)

    def to_dict(self) -> dict:
        t = self.time
        return {
            "time": None
            if t is None
            else {
                "words": t.words,
                "kind": t.kind,
                "start": t.start.isoformat() if t.start else None,
                "end": t.end.isoformat() if t.end else None,
                "order": t.order,
            },
            "coverage": self.coverage,
        }


_EPOCH = _dt.datetime(1970, 1, 1)


def _hours(t: _dt.datetime) -> float:
    return (t - _EPOCH) / _dt.timedelta(hours=1)


def read_question(text: str, asked_at: _dt.datetime) -> QuestionReading:
    """The :class:`QuestionReading` of ``text`` asked at ``asked_at`` (naive UTC)."""
    cue = COVERAGE_CUES.search(text)
    try:
        when = question_time(text, asked_at)
    except (OverflowError, ValueError):  # a date the calendar cannot hold: no window
        when = None
    return QuestionReading(when, cue.group(0).lower() if cue else None)


def row_times(said_at_h: np.ndarray, event_h: np.ndarray) -> np.ndarray:
    """When each row was said or happened, in hours: its event time when it has one, else its said-at."""
    return np.where(np.isnan(event_h), said_at_h, event_h)


def turn_context(
    neighbours: tuple[np.ndarray, np.ndarray], cand: np.ndarray, sig: np.ndarray, sigma_of, alive: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stage 4a: the candidates and their neighbours (previous and next row of the same episode,
    alive), each with σ ← max(own σ, :data:`HALF` · the larger neighbour's own σ). ``sigma_of(rows)``
    gives rows' own σ. Returns (rows ascending, σ, the row whose σ each took or −1)."""
    prev, nxt = neighbours
    near = np.concatenate([prev[cand], nxt[cand]])
    near = near[near >= 0]
    near = near[alive[near]]
    rows = _union([cand, near]) if near.size else cand
    own = sigma_of(rows)
    pos = {r: i for i, r in enumerate(rows.tolist())}
    out = own.copy()
    source = np.full(rows.shape, -1, dtype=np.int64)
    for i, r in enumerate(rows.tolist()):
        for j in (int(prev[r]), int(nxt[r])):
            k = pos.get(j)
            if k is not None and HALF * own[k] > out[i]:
                out[i] = HALF * own[k]
                source[i] = j
    return rows, out, source


def time_window(
    times: tuple[np.ndarray, ...],
    window: tuple[float, float],
    cand: np.ndarray,
    sig: np.ndarray,
    sigma_of,
    alive: np.ndarray,
    alive_idx: np.ndarray | None,
    count: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Stage 4b: the ``count`` alive rows of highest σ inside ``window`` (hours, inclusive) join
    the candidates; when some alive row lies inside, every candidate outside has its σ multiplied
    by :data:`HALF`. ``times``: arrays of each row's times (when it was said, when it happened): a
    row lies inside when one of its times does. Returns (rows ascending, σ,
    inside mask of the rows); the candidates as given and None when no alive row is inside."""
    lo, hi = window
    inside_all = np.logical_or.reduce([(t >= lo) & (t <= hi) for t in times])
    pool = np.flatnonzero(inside_all if alive_idx is None else inside_all & alive)
    if not pool.size:
        return cand, sig, None
    best = _top(sigma_of(pool), pool, count) if count > 0 else pool[:0]
    rows = _union([cand, best])
    if rows.size != cand.size:
        extra = np.setdiff1d(best, cand, assume_unique=True)
        sig_all = np.empty(rows.shape, dtype=np.float64)
        sig_all[np.searchsorted(rows, cand)] = sig
        sig_all[np.searchsorted(rows, extra)] = sigma_of(extra)
        sig = sig_all
    inside = inside_all[rows]
    return rows, np.where(inside, sig, HALF * sig), inside


def sigma_ranked(top: np.ndarray, sig: np.ndarray, untyped_turn: np.ndarray, fields: tuple[str, ...]) -> np.ndarray:
    """The kernel's rows for every candidate (``top``: (2 + T, m) as
    :func:`frcore._packed.score_top_k_rows` gives them, values, candidate positions, then the
    terms named ``fields``), with each untyped raw turn (``untyped_turn``, by position) scored by
    σ: blend = σ, log_blend = log max(σ, 10⁻¹²), routing = supersession = exemption = 0, the mask
    kept, total = log_blend + mask; then ordered by total (descending, ties by position)."""
    top = np.array(top, dtype=np.float64)
    f = {name: 2 + i for i, name in enumerate(fields)}
    pos = top[1].astype(np.int64)
    valid = pos < sig.size
    untyped = np.zeros(top.shape[1], dtype=bool)
    untyped[valid] = untyped_turn[pos[valid]]
    if untyped.any():
        s = sig[pos[untyped]]
        log_b = np.log(np.maximum(s, 1e-12))
        top[f["blend"], untyped] = s
        top[f["log_blend"], untyped] = log_b
        for name in ("routing", "supersession", "exemption"):
            top[f[name], untyped] = 0.0
        total = log_b + top[f["mask"], untyped]
        top[f["total"], untyped] = total
        top[0, untyped] = total
    value = np.where(np.isfinite(top[0]), top[0], -np.inf)
    order = np.lexsort((pos, -value))
    return top[:, order]


def episode_coverage(rows: list[int], episode: np.ndarray, k: int) -> tuple[list[int], set[int]]:
    """Stage 8a: ``rows`` (best first) with every row that would make its episode hold more than
    ⌈k/2⌉ of the first k moved after them (order kept otherwise). Returns (rows, the moved rows)."""
    cap = -(-k // 2)
    head: list[int] = []
    moved: list[int] = []
    held: dict[int, int] = {}
    for r in rows:
        e = int(episode[r])
        if len(head) < k and held.get(e, 0) >= cap:
            moved.append(r)
            continue
        head.append(r)
        held[e] = held.get(e, 0) + 1
    return head[:k] + moved + head[k:], set(moved)


def time_order(results: tuple, times: np.ndarray, order: str) -> tuple:
    """Stage 8b: the top k (``results``, best first, each with ``row`` and ``score``) sorted again
    by score + log(:data:`HALF` + :data:`HALF` · r), r ∈ [0, 1] the place of the result's time
    (``times[row]``) among the top k's distinct times, 1 at the end ``order`` asks for (``latest``:
    the latest; ``earliest``: the earliest). Each result's terms gain ``time_order`` (that log);
    its score stays the kernel's. Unchanged when the top k holds fewer than two distinct times."""
    if len(results) < 2:
        return results
    t = times[[r.row for r in results]]
    distinct = np.unique(t)
    if distinct.size < 2:
        return results
    place = np.searchsorted(distinct, t) / (distinct.size - 1)
    if order == "earliest":
        place = 1.0 - place
    gain = np.log(HALF + HALF * place)
    key = [r.score + g for r, g in zip(results, gain.tolist())]
    ranked = sorted(range(len(results)), key=lambda i: (-key[i], i))
    return tuple(results[i]._replace(terms=results[i].terms | {"time_order": float(gain[i])}) for i in ranked)


def episodes(session: np.ndarray | None, said_at_h: np.ndarray) -> np.ndarray:
    """(n,) episode codes: rows of one session share one; a row without a session (−1) shares
    one with the rows without a session said on the same UTC day."""
    n = said_at_h.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    sess = np.full(n, -1, dtype=np.int64) if session is None else np.asarray(session, dtype=np.int64)
    none = sess == -1
    day = np.floor(np.nan_to_num(np.asarray(said_at_h, dtype=np.float64)) / 24.0).astype(np.int64)
    keys = np.stack([none.astype(np.int64), np.where(none, day, sess)], axis=1)
    _, code = np.unique(keys, axis=0, return_inverse=True)
    return code.reshape(-1).astype(np.int64)


def neighbour_rows(episode: np.ndarray, said_at_h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(previous, next) row of each row in its episode, ordered by (said-at, row); −1 at an end."""
    n = episode.shape[0]
    prev = np.full(n, -1, dtype=np.int64)
    nxt = np.full(n, -1, dtype=np.int64)
    if n < 2:
        return prev, nxt
    order = np.lexsort((np.arange(n), np.nan_to_num(said_at_h), episode))
    same = episode[order[1:]] == episode[order[:-1]]
    prev[order[1:][same]] = order[:-1][same]
    nxt[order[:-1][same]] = order[1:][same]
    return prev, nxt
