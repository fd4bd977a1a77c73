"""Test oracle: the plain-loop lifecycle-state derivation that FR-Bank used before
:func:`frcore.bank.records._lifecycle.derive_states` was vectorised (kept verbatim, only renamed), so the
vectorised version can be checked against it on generated fact sets. Not used by the library."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from frcore import State
from frcore._ontology import SUPERSESSION_CONFIDENCE_THRESHOLD, primary_name as _primary
from frcore.bank.records._facts import FactRecord, to_utc_naive
from frcore.bank.records._lifecycle import _EXPIRING, INVISIBLE, Transition, _as_transition


def derive_states_loop(
    edges: Sequence[FactRecord],
    at: datetime,
    transitions: Iterable[Transition | Mapping[str, Any]] = (),
) -> np.ndarray:
    """The loop :func:`frcore.bank.records._lifecycle.derive_states` replaced, kept as its oracle: same
    arguments, same (n,) int64 result (``-1`` for edges said after ``at``)."""
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
