"""Derivation on the bank's records: which are derivable, and the records with what was derived.

A record is *derivable* (docs/derive.md, "What is derived") when it is a raw user turn without
lifecycle metadata of its own; only such records are changed, and only in ``links``,
``confidence`` and ``event_time``. Every turn of a user (derivable or not) is an earlier turn
derivation may link to; an extracted fact never is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from ..records import FactRecord, injection_finding
from ._rules import DeriveConfig, Derived, Turn, TurnIndex, derive, derive_one

#: Speakers whose turns are not a person's own words (any other speaker, or none, is a person).
MACHINE_SPEAKERS: frozenset[str] = frozenset({"assistant", "system", "tool", "bot"})


def is_user_turn(rec: FactRecord, checked: bool = False) -> bool:
    """A turn said by a person (no speaker, ``user`` or a name; not :data:`MACHINE_SPEAKERS`),
    not read as an instruction to the model (a quarantined turn is neither derived nor a link
    target). A ``checked`` record's quarantine flag is the guard's (a stored record, or one of a
    batch the guard has read: derivation changes none of the fields the guard reads); any other
    is checked here."""
    if rec.kind != "turn" or (rec.speaker or "user").lower() in MACHINE_SPEAKERS or rec.quarantined:
        return False
    return checked or injection_finding(rec) is None


def is_derivable(rec: FactRecord) -> bool:
    """A raw user turn carrying no lifecycle metadata of its own."""
    return is_user_turn(rec) and _unannotated(rec)


def _unannotated(rec: FactRecord) -> bool:
    return rec.slot is None and rec.event_time is None and not rec.links and rec.confidence == 1.0


def turn_of(rec: FactRecord) -> Turn:
    """The turn as derivation reads it; its speaker is part of whose words they are (a turn is
    only linked to turns of the same user and speaker; no speaker is the speaker ``user``)."""
    speaker = rec.speaker if rec.speaker not in (None, "user") else ""
    return Turn(rec.id, rec.text, rec.said_at, f"{rec.user}\x1f{speaker}" if speaker else rec.user)


def turn_index(
    records: Iterable[FactRecord], memo: dict | None = None, embed=None, vectors=None, soft: bool = True
) -> TurnIndex:
    """The earlier turns derivation reads: every stored user turn (``memo``: :attr:`TurnIndex.memo`;
    ``embed``, ``vectors``, ``soft``: :attr:`TurnIndex.embed`, :attr:`TurnIndex.vectors`,
    :attr:`TurnIndex.soft`)."""
    turns = (turn_of(r) for r in records if is_user_turn(r, checked=True))
    return TurnIndex.build(turns, memo, embed, vectors, soft)


def derive_records(
    records: Sequence[FactRecord], index: TurnIndex, cfg: DeriveConfig, checked: bool = False
) -> tuple[list[FactRecord], dict[str, Derived]]:
    """The records with the metadata derived for their derivable turns (others unchanged), and
    id → :class:`Derived` of every derivable turn; ``index`` gains the batch's user turns.
    ``checked``: the guard has read the records (their quarantine flags are its findings)."""
    turns = [r for r in records if is_user_turn(r, checked)]
    only = {r.id for r in turns if _unannotated(r)}
    got = derive(index, [turn_of(r) for r in turns], cfg, only)
    out = []
    for r in records:
        d = got.get(r.id)
        if d is None or d.empty:
            out.append(r)
            continue
        links = {k: tuple(v) for k, v in d.links.items()}
        out.append(dataclasses.replace(r, links=links, confidence=d.confidence, event_time=d.event_time))
    return out, got


def explain_derivation(rec: FactRecord, index: TurnIndex, cfg: DeriveConfig | None = None) -> dict | None:
    """Why a stored turn carries its lifecycle metadata, if derivation gives it: the turn
    derived again against the user's stored turns (``index``, :func:`turn_index`; derivation
    reads only those said before it, and is deterministic).
    ``None`` for a record derivation does not touch; else ``{"reproduced": bool, "evidence":
    [...]}`` — ``reproduced`` False when the stored metadata is not what derivation gives now
    (the turn came with metadata of its own, or the bank gained earlier turns after it was stored)."""
    if not is_user_turn(rec, checked=True) or rec.slot is not None:
        return None
    raw = dataclasses.replace(rec, links={}, confidence=1.0, event_time=None)
    d = derive_one(turn_of(raw), index, cfg or DeriveConfig())
    stored_links = {k: tuple(v) for k, v in rec.links.items()}
    reproduced = (
        {k: tuple(v) for k, v in d.links.items()} == stored_links
        and d.confidence == rec.confidence
        and d.event_time == rec.event_time
    )
    if d.empty and not stored_links and rec.event_time is None and rec.confidence == 1.0:
        return None
    return {"reproduced": reproduced, "evidence": [e.to_dict() for e in d.evidence]}


class Deriver:
    """A bank's derivation state (docs/derive.md): the readings of its turns and the vectors of
    their statements (each computed once), and the index of the user's stored turns, kept across
    adds and grown with each batch derived — read again from the store only when the store
    changed otherwise (an erase, a retraction, another process), so an add costs what its own
    turns cost, whatever the bank's size.

    ``embed``: the meaning test's embedder (``None``: the rules read words only)."""

    def __init__(self, cfg: DeriveConfig, embed=None) -> None:
        self.cfg = cfg
        self.embed = embed
        self.memo: dict = {}  # (id, text) → a turn's reading (texts never change)
        self.vectors: dict = {}  # statement → unit vector
        self._kept: tuple[int, TurnIndex] | None = None  # (store version, index of its stored turns)
        self._pending: tuple[int, TurnIndex] | None = None  # (version derived against, index with the batch)

    def index(self, stored: Iterable[FactRecord]) -> TurnIndex:
        """An index of ``stored`` (the user's stored records)."""
        return turn_index(stored, self.memo, self.embed, self.vectors, self.cfg.soft_updates)

    def derive(self, records: Sequence[FactRecord], version: int, stored, checked: bool = False) -> list[FactRecord]:
        """``records`` with their derived metadata, against the stored turns as of store
        ``version`` (``stored()``: the user's stored records, read only when the kept index is
        not of that version); ``checked``: the guard has read them (:func:`derive_records`)."""
        kept, self._kept = self._kept, None
        index = kept[1] if kept is not None and kept[0] == version else self.index(stored())
        out, _ = derive_records(records, index, self.cfg, checked)
        self._pending = (version, index)
        if len(self.memo) > 4 * sum(map(len, index.entries.values())) + 10_000:  # erased turns' readings
            self.memo.clear()
            self.vectors.clear()
        return out

    def stored(self, version: int) -> None:
        """The batch last derived is stored, and the store is now at ``version``: its index is
        kept when that store was written by this add alone."""
        pending, self._pending = self._pending, None
        if pending is not None and version == pending[0] + 1:
            self._kept = (version, pending[1])
