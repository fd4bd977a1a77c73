"""Test oracle: a plain-loop lifecycle-state derivation, written from the definitions
(docs/formats.md: primary category, links, confidence; docs/ontology.md: the categories that
expire at their event; SPEC §3: the states), so the vectorised
:func:`frcore.bank.records._lifecycle.derive_states` can be checked against it on generated fact
sets. It borrows nothing of the code it checks: only frcore's public ontology table (the data the
definitions name) and the ``State`` codes. Not used by the library.

The rules, in order (a later state overrides an earlier one):

* an edge said after ``at`` is invisible (``-1``);
* retracted: a visible edge ``retracts`` it, or a ``retract`` transition effective at or before
  ``at`` names it; a retracted edge takes part in nothing below ("live" = visible, not retracted);
* per slot, among its live edges in said-at order (ties: input order): every edge before the last
  confident one (confidence ≥ the supersession threshold) is superseded, and if two or more
  edges stand from that one on, they are all contested;
* a confident live edge that ``supersedes`` or ``contradicts`` an earlier live edge supersedes it;
  an unconfident one, or any ``tentative_for`` link, contests both ends;
* expired: a live edge with an event time before ``at`` whose primary category (the largest
  weight, the first in table order on ties) expires at its event;
* precedence: retracted > superseded > expired > contested > active.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

import numpy as np

import frcore as fr
from frcore import State

#: The code of an edge said after the query time (docs: ``-1``).
INVISIBLE = -1
#: Categories whose edges expire at their event time: the ontology table's column.
EXPIRING = frozenset(row.category.name for row in fr.ONTOLOGY if row.expires_at_event)


def primary(categories: Mapping[str, float]) -> str:
    """The largest weight; on ties the category first in the ontology table."""
    return min(categories, key=lambda name: (-categories[name], fr.CATEGORY_NAMES.index(name)))


def utc_naive(t: datetime) -> datetime:
    """A datetime as naive UTC (an aware one converted; a naive one is UTC already)."""
    return t if t.tzinfo is None else t.astimezone(timezone.utc).replace(tzinfo=None)


def _field(t: Any, name: str) -> Any:
    return t[name] if isinstance(t, Mapping) else getattr(t, name)


def derive_states_loop(
    edges: Sequence[Any],
    at: datetime,
    transitions: Iterable[Any] = (),
) -> np.ndarray:
    """The states of ``edges`` (fact records) as of ``at``, by the rules above: an (n,) int64
    array of ``State`` codes, ``-1`` for edges said after ``at``. ``transitions``: records or
    mappings with ``edge_id``, ``kind`` and a datetime ``effective_at``."""
    at = utc_naive(at)
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
    for tr in transitions:
        if _field(tr, "kind") == "retract" and utc_naive(_field(tr, "effective_at")) <= at:
            j = index.get(_field(tr, "edge_id"))
            if j is not None and visible[j]:
                retracted[j] = True
    live = visible & ~retracted

    superseded = np.zeros(n, dtype=bool)
    contested = np.zeros(n, dtype=bool)
    thr = fr.SUPERSESSION_CONFIDENCE_THRESHOLD

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
        if live[i] and e.event_time is not None and e.event_time < at and primary(e.categories) in EXPIRING:
            expired[i] = True

    state = np.full(n, int(State.ACTIVE), dtype=np.int64)
    state[contested] = int(State.CONTESTED)
    state[expired] = int(State.EXPIRED)
    state[superseded] = int(State.SUPERSEDED)
    state[retracted] = int(State.RETRACTED)
    state[~visible] = INVISIBLE
    return state
