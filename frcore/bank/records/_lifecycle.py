"""Lifecycle-state derivation and bi-temporal snapshots of FR-Bank (pure functions).

The lifecycle state ξ of each edge is *derived* from slots, links, times and confidence as of a
valid time ``at`` — never read from labels (SPEC §5). Rules (:func:`derive_states`):

- **Visibility.** Only edges with ``said_at ≤ at`` exist as of ``at``; :func:`derive_states`
  returns ``-1`` for the others (so its output stays aligned with its input) and they take no
  part in any rule; :func:`snapshot` drops them.
- **Retraction.** An edge is RETRACTED if a visible edge links ``retracts`` to it, or a
  ``retract`` transition with effective time ≤ ``at`` exists for it. Our choices: retracting
  a retraction statement masks that statement only (it does not restore the target — restoring
  a value takes restating it), and a retracted edge takes no part in supersession: it neither
  supersedes nor contests anything, by slot or by link (it is as if it had not been said).
- **Supersession by slot key.** Among visible, unretracted edges sharing a non-null slot,
  ordered by ``said_at`` (ties by input order), an edge with confidence ≥
  :data:`frcore.SUPERSESSION_CONFIDENCE_THRESHOLD` (0.7) supersedes every earlier edge of the
  slot (SUPERSEDED). A later edge with confidence below it is a soft supersession: it and the
  value(s) still standing in the slot become CONTESTED (both stay). Equivalently, with H the
  last confident edge of the slot, the edges from H on are the standing ones; if there are two
  or more of them, all are CONTESTED. A lone low-confidence first statement is ACTIVE.
- **Explicit links.** ``supersedes`` / ``contradicts`` from a visible, unretracted edge said
  after its target (by the same order) with confidence ≥ 0.7 make the target SUPERSEDED, across
  slots too. ``tentative_for``, or ``supersedes`` / ``contradicts`` with confidence < 0.7,
  make both ends CONTESTED. A link to an edge that is not visible (or not present: erased)
  has no effect.
- **Expiry.** An edge whose primary category (argmax weight, first on ties) expires at its
  event time (LOGISTICAL_CONTEXT, OBLIGATIONS) and whose event time is before ``at`` is EXPIRED.
- **Precedence.** RETRACTED > SUPERSEDED > EXPIRED > CONTESTED > ACTIVE.

The numeric exemption (numeric edges pass the supersession and expiry filters) belongs to the
score's mask, not here: states are reported honestly.

:func:`snapshot` turns edges + transitions into column arrays for retrieval, with bi-temporal
cuts: ``at`` is the valid time (ages, expiry, ``said_at ≤ at``), ``known_at`` the transaction
time (only edges and transitions *recorded* by then), so "what did the bank believe on D" is
``snapshot(..., at=D, known_at=D)``.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from ..._ontology import CATEGORY_NAMES, N_CATEGORIES, SUPERSESSION_CONFIDENCE_THRESHOLD, as_arrays
from ..._time import hours_from_micros, hours_since_epoch, micros_since_epoch
from ..._types import LINK_KINDS, State
from ._facts import FactRecord, to_utc_naive

#: Transition kinds recorded by the store. Only ``retract`` changes a derived state (an erased
#: edge is physically gone; its ``erase`` transition is an audit trail).
TRANSITION_KINDS: tuple[str, ...] = ("retract", "erase")
#: State value for an edge not yet said as of ``at`` (derive_states output only).
INVISIBLE = -1

_EXPIRING = frozenset(name for name, flag in zip(CATEGORY_NAMES, as_arrays().expires_at_event) if bool(flag))
_CAT_INDEX = {name: i for i, name in enumerate(CATEGORY_NAMES)}


@dataclass(frozen=True)
class Transition:
    """A lifecycle transition of one edge: ``kind`` effective at ``effective_at`` (valid time),
    recorded at ``recorded_at`` (transaction time)."""

    edge_id: str
    kind: str
    effective_at: datetime
    recorded_at: datetime | None = None
    reason: str | None = None


def _as_transition(t: Any, i: int) -> Transition:
    if isinstance(t, Transition):
        tr = t
    elif isinstance(t, Mapping):
        try:
            tr = Transition(t["edge_id"], t["kind"], t["effective_at"], t.get("recorded_at"), t.get("reason"))
        except KeyError as e:
            raise ValueError(f"transitions[{i}]: missing field {e.args[0]!r}") from None
    else:
        raise ValueError(f"transitions[{i}]: expected a Transition or mapping, got {type(t).__name__}")
    if tr.kind not in TRANSITION_KINDS:
        raise ValueError(
            f"transitions[{i}]: field 'kind': unknown kind {tr.kind!r}; expected one of {TRANSITION_KINDS}"
        )
    if not isinstance(tr.effective_at, datetime):
        eff = to_utc_naive(tr.effective_at, "effective_at", f"transitions[{i}]", tr.edge_id)
        tr = Transition(tr.edge_id, tr.kind, eff, tr.recorded_at, tr.reason)
    return tr


#: Codes of the link kinds in :attr:`LifecycleColumns.link_kind`: each kind's index in ``LINK_KINDS``.
_RETRACTS, _TENTATIVE = LINK_KINDS.index("retracts"), LINK_KINDS.index("tentative_for")


def row_lifecycle(edges: Sequence[FactRecord]) -> dict[str, np.ndarray]:
    """What :func:`derive_states` reads of each edge alone: ``said`` and ``event`` (exact
    microseconds), ``has_event``, ``expiring`` (an event time and a primary category that expires
    at it) and ``confidence``."""
    n = len(edges)
    has_event = np.fromiter((e.event_time is not None for e in edges), dtype=bool, count=n)
    event = np.zeros(n, dtype=np.int64)
    expiring = np.zeros(n, dtype=bool)
    for i in np.flatnonzero(has_event).tolist():
        e = edges[i]
        event[i] = micros_since_epoch(e.event_time)
        expiring[i] = e.primary_category in _EXPIRING
    return {
        "said": np.fromiter((micros_since_epoch(e.said_at) for e in edges), dtype=np.int64, count=n),
        "event": event,
        "has_event": has_event,
        "expiring": expiring,
        "confidence": np.fromiter((e.confidence for e in edges), dtype=np.float64, count=n),
    }


def slot_codes(slots: Sequence[str | None], vocab: dict[str, int] | None = None) -> np.ndarray:
    """(n,) int64 code of each slot key: equal exactly when the keys are, numbered in order of
    first occurrence (0, 1, ...); -1 for no slot. ``vocab``: the codes of slots numbered before
    (the keys of rows before these), extended with the new ones."""
    codes: dict[str, int] = {} if vocab is None else vocab
    for s in dict.fromkeys(slots):  # the distinct keys, in order of first occurrence
        if s is not None and s not in codes:
            codes[s] = len(codes)
    code_of: Any = codes.get  # code_of(key, -1): -1 for None (never a key)
    return np.fromiter(map(code_of, slots, itertools.repeat(-1)), dtype=np.int64, count=len(slots))


@dataclass(frozen=True)
class LifecycleColumns:
    """What :func:`derive_states` reads of each edge, as arrays in edge order.

    Times are exact integer microseconds since the epoch. ``slot`` codes are equal exactly
    when the slot keys are (-1 = no slot). ``expiring``: the edge has an event time and its
    primary category expires at it. Links are (src, dst, kind) rows between edges of this
    list (links to ids outside it are dropped: they have no effect).
    """

    said: np.ndarray
    event: np.ndarray
    has_event: np.ndarray
    slot: np.ndarray
    confidence: np.ndarray
    expiring: np.ndarray
    link_src: np.ndarray
    link_dst: np.ndarray
    link_kind: np.ndarray

    def __len__(self) -> int:
        return int(self.said.shape[0])

    @classmethod
    def from_edges(cls, edges: Sequence[FactRecord], index: Mapping[str, int]) -> LifecycleColumns:
        """Columns of ``edges``; ``index`` maps each id to its position in ``edges``."""
        return cls.from_rows(row_lifecycle(edges), [e.slot for e in edges], [e.links for e in edges], index)

    @classmethod
    def from_rows(
        cls,
        life: Mapping[str, np.ndarray],
        slots: Sequence[str | None],
        links: Sequence[Mapping[str, Sequence[str]]],
        index: Mapping[str, int],
        codes: np.ndarray | None = None,
    ) -> LifecycleColumns:
        """Columns from each edge's :func:`row_lifecycle` arrays, slot key and links (aligned
        with ``index``, which maps each id to its position). ``codes``: the slots'
        :func:`slot_codes`, when known (``slots`` is then not read)."""
        slot = slot_codes(slots) if codes is None else np.asarray(codes, dtype=np.int64)
        src: list[int] = []
        dst: list[int] = []
        kind: list[int] = []
        for i in itertools.compress(range(len(links)), links):  # the rows with links (most have none)
            lk = links[i]
            for k, name in enumerate(LINK_KINDS):
                for t in lk.get(name, ()):
                    j = index.get(t)
                    if j is not None:
                        src.append(i)
                        dst.append(j)
                        kind.append(k)
        return cls(
            np.asarray(life["said"], dtype=np.int64),
            np.asarray(life["event"], dtype=np.int64),
            np.asarray(life["has_event"], dtype=bool),
            slot,
            np.asarray(life["confidence"], dtype=np.float64),
            np.asarray(life["expiring"], dtype=bool),
            np.array(src, dtype=np.int64),
            np.array(dst, dtype=np.int64),
            np.array(kind, dtype=np.int8),
        )

    def take(self, rows: np.ndarray) -> LifecycleColumns:
        """Columns of the edges ``rows`` (ascending positions), with the links among them."""
        rows = np.asarray(rows, dtype=np.int64)
        local = np.full(len(self), -1, dtype=np.int64)
        local[rows] = np.arange(rows.size)
        src, dst = local[self.link_src], local[self.link_dst]
        keep = (src >= 0) & (dst >= 0)
        return LifecycleColumns(
            self.said[rows],
            self.event[rows],
            self.has_event[rows],
            self.slot[rows],
            self.confidence[rows],
            self.expiring[rows],
            src[keep],
            dst[keep],
            self.link_kind[keep],
        )


def _index(edges: Sequence[FactRecord]) -> dict[str, int]:
    index: dict[str, int] = {}
    for i, e in enumerate(edges):
        if e.id in index:
            raise ValueError(f"edges: duplicate id {e.id!r} at index {i} (first at {index[e.id]})")
        index[e.id] = i
    return index


def retracted_by_transitions(
    transitions: Iterable[Transition | Mapping[str, Any]], at: datetime, index: Mapping[str, int]
) -> np.ndarray:
    """Positions (per ``index``) of edges with a ``retract`` transition effective by ``at``
    (every transition is validated; ids not in ``index`` are skipped)."""
    rows = []
    for k, raw in enumerate(transitions):
        tr = _as_transition(raw, k)
        if tr.kind == "retract" and tr.effective_at <= at:
            j = index.get(tr.edge_id)
            if j is not None:
                rows.append(j)
    return np.array(rows, dtype=np.int64)


def derive_states(
    edges: Sequence[FactRecord],
    at: datetime,
    transitions: Iterable[Transition | Mapping[str, Any]] = (),
) -> np.ndarray:
    """Lifecycle state of every edge as of valid time ``at`` (module docstring for the rules).

    Args:
      edges: validated fact edges, in insertion order (the tie-break for equal ``said_at``);
        ids must be unique.
      at: the valid time (naive UTC, or aware — converted).
      transitions: lifecycle transitions (only ``retract`` ones with ``effective_at ≤ at``
        matter).

    Returns:
      (n,) int64 array of :class:`frcore.State` values, ``-1`` for edges said after ``at``.
    """
    at = to_utc_naive(at, "at", "derive_states", None)
    index = _index(edges)
    cols = LifecycleColumns.from_edges(edges, index)
    return states_from_columns(cols, at, retracted_by_transitions(transitions, at, index))


def states_from_columns(cols: LifecycleColumns, at: datetime, retract_rows: np.ndarray | None = None) -> np.ndarray:
    """:func:`derive_states` over precomputed columns (vectorised; no per-edge Python).

    ``at``: a naive-UTC datetime (parsed by the caller); ``retract_rows``: positions of edges
    with a ``retract`` transition effective by ``at``.
    """
    n = len(cols)
    at_us = micros_since_epoch(at)
    thr = SUPERSESSION_CONFIDENCE_THRESHOLD
    said = cols.said
    visible = said <= at_us
    src, dst, kind = cols.link_src, cols.link_dst, cols.link_kind

    # Retraction: by a visible edge's `retracts` link to a visible edge, or by a transition.
    retracted = np.zeros(n, dtype=bool)
    m = (kind == _RETRACTS) & visible[src] & visible[dst]
    retracted[dst[m]] = True
    if retract_rows is not None and len(retract_rows):
        rows = np.asarray(retract_rows, dtype=np.int64)
        retracted[rows[visible[rows]]] = True
    live = visible & ~retracted

    superseded = np.zeros(n, dtype=bool)
    contested = np.zeros(n, dtype=bool)

    # Supersession by slot key: group live slotted edges by slot, ordered by (said_at, position).
    members = np.flatnonzero(live & (cols.slot >= 0))
    if members.size > 1:
        order = members[np.lexsort((members, said[members], cols.slot[members]))]
        slot = cols.slot[order]
        starts = np.flatnonzero(np.r_[True, slot[1:] != slot[:-1]])
        sizes = np.diff(np.r_[starts, order.size])
        pos = np.arange(order.size)
        # last confident edge of each slot (its first edge when none is confident)
        last = np.maximum.reduceat(np.where(cols.confidence[order] >= thr, pos, -1), starts)
        last = np.where(last < 0, starts, last)
        last_of = np.repeat(last, sizes)
        superseded[order[pos < last_of]] = True
        standing_many = np.repeat(starts + sizes - last >= 2, sizes)
        contested[order[(pos >= last_of) & standing_many]] = True

    # Explicit links between live edges.
    m = (kind != _RETRACTS) & live[src] & live[dst]
    s, d, k = src[m], dst[m], kind[m]
    hard = (k != _TENTATIVE) & (cols.confidence[s] >= thr)
    earlier = (said[d] < said[s]) | ((said[d] == said[s]) & (d < s))
    superseded[d[hard & earlier]] = True
    soft = ~hard
    contested[s[soft]] = True
    contested[d[soft]] = True

    expired = live & cols.has_event & (cols.event < at_us) & cols.expiring

    state = np.full(n, int(State.ACTIVE), dtype=np.int64)
    state[contested] = int(State.CONTESTED)
    state[expired] = int(State.EXPIRED)
    state[superseded] = int(State.SUPERSEDED)
    state[retracted] = int(State.RETRACTED)
    state[~visible] = INVISIBLE
    return state


# ----------------------------------------------------------------------------- snapshots


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class Snapshot:
    """Column view of the bank as of valid time ``at`` (and transaction time ``known_at``).

    Rows are the edges visible at ``at`` (``said_at ≤ at``), in insertion order; arrays are
    read-only.

    Attributes:
      ids: (n,) object edge ids. texts: n texts.
      weights: (n, C) float64 soft category weights (columns in ``CATEGORY_NAMES`` order).
      said_us: (n,) int64 microseconds since the Unix epoch. event_us: (n,) int64, the event
        time where ``has_event`` (0 elsewhere). said_at_h, event_h: the same in hours (NaN = no
        event), computed from them once (:func:`frcore._time.hours_from_micros`).
      session: (n,) int, -1 = none. state: (n,) int :class:`frcore.State`.
      confidence: (n,) float64. numeric: (n,) bool. quarantined: (n,) bool.
      slots, kinds, speakers: per-row lists (slot may be None).
      at, known_at: the cuts. index: ``{id: row}``. rows, version: see the fields.
    """

    ids: np.ndarray
    texts: list[str]
    weights: np.ndarray
    said_us: np.ndarray
    event_us: np.ndarray
    has_event: np.ndarray
    session: np.ndarray
    state: np.ndarray
    confidence: np.ndarray
    numeric: np.ndarray
    slots: list
    kinds: list
    speakers: list
    quarantined: np.ndarray
    at: datetime
    known_at: datetime | None = None
    index: dict[str, int] = field(default_factory=dict)
    #: positions of the rows in the edge list the snapshot was cut from (a store's load order)
    #: and that list's version (a store's write counter; None outside a store): equal
    #: (version, rows) means the same edges, whatever ``at``
    rows: np.ndarray | None = field(default=None, repr=False, compare=False)
    version: int | None = None
    #: (n,) codes of ``slots``, equal exactly when the slots are (:func:`slot_codes`, or a
    #: store's over every row it holds); None: not known
    slot_codes: np.ndarray | None = field(default=None, repr=False, compare=False)

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    @property
    def at_h(self) -> float:
        """``at`` in hours since the Unix epoch."""
        return hours_since_epoch(self.at)

    @functools.cached_property
    def said_at_h(self) -> np.ndarray:
        """(n,) float64 hours since the epoch at which each row was said."""
        return _readonly(hours_from_micros(self.said_us))

    @functools.cached_property
    def event_h(self) -> np.ndarray:
        """(n,) float64 hours since the epoch of each row's event time, NaN = none."""
        return _readonly(np.where(self.has_event, hours_from_micros(self.event_us), np.nan))


def snapshot(
    store_or_edges: Any,
    at: datetime,
    known_at: datetime | None = None,
    include_quarantined: bool = False,
    transitions: Iterable[Transition | Mapping[str, Any]] = (),
    recorded_at: Sequence[datetime] | None = None,
) -> Snapshot:
    """The bank as of valid time ``at`` and transaction time ``known_at``, as column arrays.

    Args:
      store_or_edges: a :class:`frcore.bank.Store` (delegates to ``Store.snapshot``) or a
        sequence of :class:`FactRecord` in insertion order.
      at: valid time: visibility (``said_at ≤ at``), expiry, retraction effective times.
      known_at: transaction-time cut: only edges with ``recorded_at ≤ known_at`` (needs
        ``recorded_at``) and transitions recorded by then; ``None`` = everything.
      include_quarantined: keep edges quarantined as instruction-like (excluded by default —
        they then take no part in lifecycle derivation either, so an injected "retraction"
        retracts nothing).
      transitions: lifecycle transitions (see :func:`derive_states`).
      recorded_at: per-edge transaction times, aligned with the edges (required with
        ``known_at``).
    """
    at = to_utc_naive(at, "at", "snapshot", None)
    if known_at is not None:
        known_at = to_utc_naive(known_at, "known_at", "snapshot", None)
    if hasattr(store_or_edges, "snapshot") and not isinstance(store_or_edges, (list, tuple)):
        return store_or_edges.snapshot(at, known_at=known_at, include_quarantined=include_quarantined)
    edges = list(store_or_edges)
    trs = [_as_transition(t, i) for i, t in enumerate(transitions)]
    if known_at is not None:
        if recorded_at is None:
            raise ValueError("snapshot: field 'recorded_at': required (one per edge) when known_at is given")
        if len(recorded_at) != len(edges):
            raise ValueError(f"snapshot: field 'recorded_at': {len(recorded_at)} times for {len(edges)} edges")
        edges = [e for e, r in zip(edges, recorded_at) if r <= known_at]
        for i, t in enumerate(trs):
            if t.recorded_at is None:
                raise ValueError(f"transitions[{i}]: field 'recorded_at': required when known_at is given")
        trs = [t for t in trs if t.recorded_at is not None and t.recorded_at <= known_at]
    if not include_quarantined:
        edges = [e for e in edges if not e.quarantined]
    state = derive_states(edges, at, trs)
    keep = state != INVISIBLE
    rows = [e for e, k in zip(edges, keep) if k]
    return _columns(rows, state[keep], at, known_at)


def edge_columns(rows: Sequence[FactRecord]) -> dict[str, Any]:
    """Per-edge column arrays of a snapshot (everything but ``state``), in row order."""
    n = len(rows)
    weights = np.zeros((n, N_CATEGORIES), dtype=np.float64)
    for i, e in enumerate(rows):
        for name, w in e.categories.items():
            weights[i, _CAT_INDEX[name]] = w
    ids = np.empty(n, dtype=object)
    ids[:] = [e.id for e in rows]
    return {
        "ids": ids,
        "texts": np.array([e.text for e in rows] or [""], dtype=object)[:n],
        "weights": weights,
        "session": np.array([-1 if e.session is None else e.session for e in rows], dtype=np.int64),
        "confidence": np.array([e.confidence for e in rows], dtype=np.float64),
        "numeric": np.array([bool(e.numeric) for e in rows], dtype=bool),
        "slots": np.array([e.slot for e in rows] or [None], dtype=object)[:n],
        "kinds": np.array([e.kind for e in rows] or [""], dtype=object)[:n],
        "speakers": np.array([e.speaker for e in rows] or [None], dtype=object)[:n],
        "quarantined": np.array([e.quarantined for e in rows], dtype=bool),
    }


def concat_columns(first: dict[str, Any], *rest: dict[str, Any]) -> dict[str, Any]:
    """Columns of the rows of every part, one part after another, from the columns of each."""
    return {k: np.concatenate([first[k], *(r[k] for r in rest)]) for k in first}


def snapshot_from_columns(
    cols: dict[str, Any],
    life: Mapping[str, np.ndarray],
    rows: np.ndarray,
    state: np.ndarray,
    at: datetime,
    known_at: datetime | None,
    version: int | None = None,
    index: dict[str, int] | None = None,
    slot_codes: np.ndarray | None = None,
) -> Snapshot:
    """A :class:`Snapshot` of the given row indices (ascending) of precomputed
    :func:`edge_columns` and :func:`row_lifecycle` (its times: ``said``, ``event``,
    ``has_event``) (``index``: ``{id: position}`` of every row of ``cols``, reused when
    ``rows`` is all of them; ``slot_codes``: codes of every row's slot, as
    :attr:`Snapshot.slot_codes`). Of every row, the arrays are read-only views of the columns
    (which are never written), not copies."""
    rows = np.asarray(rows, dtype=np.int64)
    n = len(cols["ids"])
    every = rows.size == n and (n == 0 or (int(rows[0]) == 0 and int(rows[-1]) == n - 1))  # 0 … n-1

    def take(a: np.ndarray) -> np.ndarray:
        return _readonly(a.view() if every else a[rows])

    ids = take(cols["ids"])
    return Snapshot(
        ids=ids,
        texts=take(cols["texts"]).tolist(),
        weights=take(cols["weights"]),
        said_us=take(np.asarray(life["said"], dtype=np.int64)),
        event_us=take(np.asarray(life["event"], dtype=np.int64)),
        has_event=take(np.asarray(life["has_event"], dtype=bool)),
        session=take(cols["session"]),
        state=_readonly(np.asarray(state, dtype=np.int64).copy()),
        confidence=take(cols["confidence"]),
        numeric=take(cols["numeric"]),
        slots=take(cols["slots"]).tolist(),
        kinds=take(cols["kinds"]).tolist(),
        speakers=take(cols["speakers"]).tolist(),
        quarantined=take(cols["quarantined"]),
        at=at,
        known_at=known_at,
        index=index
        if index is not None and every and rows.size == len(index)
        else dict(zip(ids.tolist(), range(ids.shape[0]))),
        rows=_readonly(rows.copy()),
        version=version,
        slot_codes=None if slot_codes is None else take(np.asarray(slot_codes, dtype=np.int64)),
    )


def _columns(rows: Sequence[FactRecord], state: np.ndarray, at: datetime, known_at: datetime | None) -> Snapshot:
    return snapshot_from_columns(edge_columns(rows), row_lifecycle(rows), np.arange(len(rows)), state, at, known_at)
