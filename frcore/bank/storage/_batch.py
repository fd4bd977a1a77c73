"""A batch of facts as the store takes it: validated for one user (:func:`parse_batch`), with
what it is accepted with but told about (:func:`batch_warnings`: an event time before the fact
is said, a supersession cycle within the batch)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from ..._ontology import ONTOLOGY, SUPERSESSION_CONFIDENCE_THRESHOLD, category_index
from ..._shown import shown
from ..._time import now
from ..records import OWNER, FactRecord, check_user, injection_finding, parse_fact, to_utc_naive
from ._common import StoreError, shown_user


@dataclass(frozen=True)
class Batch:
    """A batch of facts validated for one user (:func:`parse_batch`): the records, the label of
    each in errors, id → position, the transaction time, and what it is accepted with but told
    about (:func:`batch_warnings`)."""

    records: list[FactRecord]
    labels: list[str]
    seen: dict[str, int]
    recorded_at: datetime
    warnings: tuple[str, ...] = ()
    #: id → (field, rule) of each fact to store quarantined, when checked with the batch
    #: (:func:`checked`; its records then carry the mark), else ``None``: the store checks
    findings: dict[str, tuple[str, str]] | None = None


def parse_batch(
    facts: list, where: Sequence[str] | None = None, user: str | None = None, recorded_at: datetime | None = None
) -> Batch:
    """Validate a batch for ``user`` (see :meth:`Store.add_facts`): each fact by
    :func:`parse_fact` (``where[i]`` names it in errors, default ``facts[i]``), its user, ids
    unique in the batch; ``recorded_at`` (default now, UTC) is the transaction time. The batch's
    warnings are :func:`batch_warnings`'."""
    labels = [f"facts[{i}]" for i in range(len(facts))] if where is None else [str(w) for w in where]
    if len(labels) != len(facts):
        raise StoreError(f"add_facts: where: {len(labels)} labels for {len(facts)} facts")
    # a batch's fields are parsed here, where they enter: its facts' times and recorded_at
    rec_at = now() if recorded_at is None else to_utc_naive(recorded_at, "recorded_at", "store", None)
    records: list[FactRecord] = []
    seen: dict[str, int] = {}
    if user is not None:
        user = check_user(user)
    for i, f in enumerate(facts):
        if user is not None and user != OWNER and isinstance(f, Mapping) and f.get("user") is None:
            f = {**f, "user": user}
        r = parse_fact(f, labels[i])
        if user is not None and r.user != user:
            raise StoreError(
                f"{labels[i]}: fact {shown(r.id)}: field 'user': {shown_user(r.user)} is not the user this batch "
                f"is written for ({shown_user(user)}); write it for that user (Bank.for_user, fr bank --user)"
            )
        if r.id in seen:
            raise StoreError(
                f"{labels[i]}: fact {shown(r.id)}: field 'id': duplicate in batch (also {labels[seen[r.id]]})"
            )
        seen[r.id] = i
        records.append(r)
    return Batch(records, labels, seen, rec_at, batch_warnings(records, labels, seen))


#: ids a warning lists before it says how many more there are
_SHOWN = 5


def _shown_ids(ids: Sequence[str]) -> str:
    head = ", ".join(repr(i) for i in ids[:_SHOWN])
    return head + (f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else "")


def batch_warnings(records: Sequence[FactRecord], labels: Sequence[str], seen: Mapping[str, int]) -> tuple[str, ...]:
    """What a valid batch is accepted with, but told about: one line each, in batch order,
    ``LABEL: fact 'ID': field 'NAME': …``. Neither case is refused (existing data holds both)
    and neither changes what is stored or how its lifecycle is derived.

    - ``event_time`` before ``said_at``: the event was past when it was said (a fact of a
      category that expires at its event time is expired from the moment it is said);
    - a cycle of ``supersedes`` links among the batch's facts (:func:`supersession_cycles`;
      only a batch can hold one: a link names a fact stored before it or in its batch). Its
      links stand as given, and as every link they supersede only a target said before their
      source (on equal ``said_at``, earlier in the batch) when the source's confidence is at
      least :data:`frcore.SUPERSESSION_CONFIDENCE_THRESHOLD`: the warning names the links of
      the cycle that supersede nothing.
    """
    found: list[tuple[int, str]] = []
    for i, r in enumerate(records):
        if r.event_time is not None and r.event_time < r.said_at:
            primary = r.primary_category
            consequence = (
                f"its primary category, {primary}, expires at its event time: it is expired from when it is said"
                if ONTOLOGY[category_index(primary)].expires_at_event
                else "the event was past when it was said"
            )
            found.append(
                (
                    i,
                    f"{labels[i]}: fact {shown(r.id)}: field 'event_time': {r.event_time.isoformat()} is before its "
                    f"said_at {r.said_at.isoformat()}; accepted as given ({consequence})",
                )
            )
    for cycle in supersession_cycles(records, seen):
        found.append((cycle[0], _cycle_warning(records, labels, seen, cycle)))
    return tuple(line for _, line in sorted(found, key=lambda x: x[0]))


def _cycle_warning(
    records: Sequence[FactRecord], labels: Sequence[str], seen: Mapping[str, int], cycle: list[int]
) -> str:
    """The warning for one cycle of ``supersedes`` links (batch positions ``cycle``), naming its
    first fact and the confident links of the cycle that supersede nothing (to a fact not said
    before their source)."""
    members = set(cycle)
    idle = [
        f"{shown(records[u].id)} → {shown(records[v].id)}"
        for u in cycle
        if records[u].confidence >= SUPERSESSION_CONFIDENCE_THRESHOLD
        for v in (seen[t] for t in records[u].links.get("supersedes", ()) if t in seen)
        if v in members and not _said_before(records, v, u)
    ]
    line = (
        f"{labels[cycle[0]]}: fact {shown(records[cycle[0]].id)}: field 'links': supersedes links form a cycle among "
        f"{_shown_ids([records[k].id for k in cycle])} in this batch; accepted as given"
    )
    if idle:
        listed = ", ".join(idle[:_SHOWN]) + (", …" if len(idle) > _SHOWN else "")
        verb = "supersedes" if len(idle) == 1 else "supersede"
        line += f": a link supersedes only a fact said before its source, so {listed} {verb} nothing"
    return line


def _said_before(records: Sequence[FactRecord], d: int, s: int) -> bool:
    """Whether fact ``d`` of a batch was said before fact ``s`` (on equal ``said_at``: earlier in it)."""
    return (records[d].said_at, d) < (records[s].said_at, s)


def supersession_cycles(records: Sequence[FactRecord], seen: Mapping[str, int]) -> list[list[int]]:
    """The cycles of ``supersedes`` links among a batch's facts: the strongly connected
    components of two facts or more of the graph ``i → j`` (fact ``i`` supersedes fact ``j`` of
    the batch), by Tarjan's algorithm (iterative), each as sorted batch positions, in order of
    their first position."""
    graph = {
        i: [seen[t] for t in r.links["supersedes"] if t in seen]
        for i, r in enumerate(records)
        if "supersedes" in r.links
    }
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    stack: list[int] = []
    on_stack: set[int] = set()
    cycles: list[list[int]] = []
    for root in graph:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(graph.get(root, ())))]
        while work:
            v, successors = work[-1]
            for w in successors:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(graph.get(w, ()))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        cycles.append(sorted(component))
    return sorted(cycles)


def quarantine_findings(records: list[FactRecord]) -> dict[str, tuple[str, str]]:
    """The prompt-injection check of every free-text field of a batch, before any lock or
    transaction: id → (field, rule) of each fact to store quarantined (``records`` are marked)."""
    findings: dict[str, tuple[str, str]] = {}
    for i, r in enumerate(records):
        found = injection_finding(r)
        if found is None and r.quarantined:
            found = ("quarantined", "given as quarantined")
        if found is not None:
            findings[r.id] = found
            if not r.quarantined:
                records[i] = dataclasses.replace(r, quarantined=True)
    return findings


def checked(batch: Batch) -> Batch:
    """``batch`` with its prompt-injection findings (:func:`quarantine_findings`), as the store
    takes it without checking it again."""
    if batch.findings is not None:
        return batch
    records = list(batch.records)
    return dataclasses.replace(batch, records=records, findings=quarantine_findings(records))
