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

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .._ontology import CATEGORY_NAMES, N_CATEGORIES, SUPERSESSION_CONFIDENCE_THRESHOLD, as_arrays
from .._types import State
from ._facts import FactRecord, hours_since_epoch, to_utc_naive

#: Transition kinds recorded by the store. Only ``retract`` changes a derived state (an erased
#: edge is physically gone; its ``erase`` transition is an audit trail).
TRANSITION_KINDS: tuple[str, ...] = ("retract", "erase")
#: State value for an edge not yet said as of ``at`` (derive_states output only).
INVISIBLE = -1

_EXPIRING = frozenset(
    name for name, flag in zip(CATEGORY_NAMES, as_arrays().expires_at_event) if bool(flag)
)
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
        raise ValueError(f"transitions[{i}]: field 'kind': unknown kind {tr.kind!r}; expected one of {TRANSITION_KINDS}")
    if not isinstance(tr.effective_at, datetime):
        eff = to_utc_naive(tr.effective_at, "effective_at", f"transitions[{i}]", tr.edge_id)
        tr = Transition(tr.edge_id, tr.kind, eff, tr.recorded_at, tr.reason)
    return tr


def _primary(categories: Mapping[str, float]) -> str:
    best = max(categories.values())
    for name in CATEGORY_NAMES:
        if categories.get(name, -1.0) == best:
            return name
    raise ValueError(f"categories: no canonical category in {dict(categories)!r}")


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
    n = len(edges)
    index: dict[str, int] = {}
    for i, e in enumerate(edges):
        if e.id in index:
            raise ValueError(f"edges: duplicate id {e.id!r} at index {i} (first at {index[e.id]})")
        index[e.id] = i
    visible = np.fromiter((e.said_at <= at for e in edges), dtype=bool, count=n)

    retracted = np.zeros(n, dtype=bool)
    for i, e in enumerate(edges):
        if visible[i]:
            for t in e.links.get("retracts", ()):
                j = index.get(t)
                if j is not None and visible[j]:
                    retracted[j] = True
    for k, raw in enumerate(transitions):
        tr = _as_transition(raw, k)
        if tr.kind == "retract" and tr.effective_at <= at:
            j = index.get(tr.edge_id)
            if j is not None and visible[j]:
                retracted[j] = True
    live = visible & ~retracted

    superseded = np.zeros(n, dtype=bool)
    contested = np.zeros(n, dtype=bool)
    thr = SUPERSESSION_CONFIDENCE_THRESHOLD

    slots: dict[str, list[int]] = {}
    for i, e in enumerate(edges):
        if live[i] and e.slot is not None:
            slots.setdefault(e.slot, []).append(i)
    for members in slots.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda i: (edges[i].said_at, i))
        last_confident = 0
        for pos, i in enumerate(members):
            if edges[i].confidence >= thr:
                last_confident = pos
        for i in members[:last_confident]:
            superseded[i] = True
        standing = members[last_confident:]
        if len(standing) >= 2:
            contested[standing] = True

    for i, e in enumerate(edges):
        if not live[i] or not e.links:
            continue
        key_i = (e.said_at, i)
        confident = e.confidence >= thr
        for kind in ("supersedes", "contradicts", "tentative_for"):
            for t in e.links.get(kind, ()):
                j = index.get(t)
                if j is None or not live[j]:
                    continue
                if kind != "tentative_for" and confident:
                    if (edges[j].said_at, j) < key_i:
                        superseded[j] = True
                else:
                    contested[i] = contested[j] = True

    expired = np.zeros(n, dtype=bool)
    for i, e in enumerate(edges):
        if live[i] and e.event_time is not None and e.event_time < at and _primary(e.categories) in _EXPIRING:
            expired[i] = True

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
      said_at_h: (n,) hours since the Unix epoch. event_h: (n,) hours since the epoch, NaN = none.
      session: (n,) int, -1 = none. state: (n,) int :class:`frcore.State`.
      confidence: (n,) float64. numeric: (n,) bool. quarantined: (n,) bool.
      slots, kinds, speakers: per-row lists (slot may be None).
      at, known_at: the cuts. index: ``{id: row}``.
    """

    ids: np.ndarray
    texts: list[str]
    weights: np.ndarray
    said_at_h: np.ndarray
    event_h: np.ndarray
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

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    @property
    def at_h(self) -> float:
        """``at`` in hours since the Unix epoch."""
        return hours_since_epoch(self.at)


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
    if hasattr(store_or_edges, "snapshot") and not isinstance(store_or_edges, (list, tuple)):
        return store_or_edges.snapshot(at, known_at=known_at, include_quarantined=include_quarantined)
    edges = list(store_or_edges)
    at = to_utc_naive(at, "at", "snapshot", None)
    trs = [_as_transition(t, i) for i, t in enumerate(transitions)]
    if known_at is not None:
        known_at = to_utc_naive(known_at, "known_at", "snapshot", None)
        if recorded_at is None:
            raise ValueError("snapshot: field 'recorded_at': required (one per edge) when known_at is given")
        if len(recorded_at) != len(edges):
            raise ValueError(f"snapshot: field 'recorded_at': {len(recorded_at)} times for {len(edges)} edges")
        edges = [e for e, r in zip(edges, recorded_at) if r <= known_at]
        for i, t in enumerate(trs):
            if t.recorded_at is None:
                raise ValueError(f"transitions[{i}]: field 'recorded_at': required when known_at is given")
        trs = [t for t in trs if t.recorded_at <= known_at]
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
    nan = float("nan")
    ids = np.empty(n, dtype=object)
    ids[:] = [e.id for e in rows]
    return {
        "ids": ids,
        "texts": np.array([e.text for e in rows] or [""], dtype=object)[:n],
        "weights": weights,
        "said_at_h": np.array([hours_since_epoch(e.said_at) for e in rows], dtype=np.float64),
        "event_h": np.array([nan if e.event_time is None else hours_since_epoch(e.event_time) for e in rows], dtype=np.float64),
        "session": np.array([-1 if e.session is None else e.session for e in rows], dtype=np.int64),
        "confidence": np.array([e.confidence for e in rows], dtype=np.float64),
        "numeric": np.array([bool(e.numeric) for e in rows], dtype=bool),
        "slots": np.array([e.slot for e in rows] or [None], dtype=object)[:n],
        "kinds": np.array([e.kind for e in rows] or [""], dtype=object)[:n],
        "speakers": np.array([e.speaker for e in rows] or [None], dtype=object)[:n],
        "quarantined": np.array([e.quarantined for e in rows], dtype=bool),
    }


def concat_columns(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Columns of ``rows_a + rows_b`` from the columns of each part."""
    return {k: np.concatenate([a[k], b[k]]) for k in a}


def snapshot_from_columns(
    cols: dict[str, Any], rows: np.ndarray, state: np.ndarray, at: datetime, known_at: datetime | None
) -> Snapshot:
    """A :class:`Snapshot` of the given row indices of precomputed :func:`edge_columns`."""
    rows = np.asarray(rows, dtype=np.int64)
    ids = cols["ids"][rows]
    return Snapshot(
        ids=_readonly(ids),
        texts=cols["texts"][rows].tolist(),
        weights=_readonly(cols["weights"][rows]),
        said_at_h=_readonly(cols["said_at_h"][rows]),
        event_h=_readonly(cols["event_h"][rows]),
        session=_readonly(cols["session"][rows]),
        state=_readonly(np.asarray(state, dtype=np.int64).copy()),
        confidence=_readonly(cols["confidence"][rows]),
        numeric=_readonly(cols["numeric"][rows]),
        slots=cols["slots"][rows].tolist(),
        kinds=cols["kinds"][rows].tolist(),
        speakers=cols["speakers"][rows].tolist(),
        quarantined=_readonly(cols["quarantined"][rows]),
        at=at,
        known_at=known_at,
        index={fid: i for i, fid in enumerate(ids.tolist())},
    )


def _columns(rows: Sequence[FactRecord], state: np.ndarray, at: datetime, known_at: datetime | None) -> Snapshot:
    return snapshot_from_columns(edge_columns(rows), np.arange(len(rows)), state, at, known_at)
