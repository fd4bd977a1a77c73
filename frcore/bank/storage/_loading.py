"""The store's contents as read at one version (from the bank's index and SQLite), and every read built on them."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np

from ..._time import micros_since_epoch, time_from_micros
from ..records import (
    INVISIBLE,
    OWNER,
    FactRecord,
    Snapshot,
    Transition,
    concat_columns,
    edge_columns,
    retracted_by_transitions,
    row_lifecycle,
    slot_codes,
    snapshot_from_columns,
    states_from_columns,
)
from ..search import Postings
from ._common import (
    SNAPSHOT_CACHE_SIZE,
    _decode,
    _mapped,
    _row_to_record,
    iso_text,
    micros_of_text,
)
from ._grow import appended
from ._handle import Handle
from ._index import LIFE_COLUMNS, BankIndex, IndexSpec, Rows, encode, row_stamp
from ._loaded import _Loaded, _with_releases
from ._schema import has_releases, select_columns
from ._tables import Tables

#: the BM25 tokens of stored fact texts, one list per text: the tokenizer the bank hands its
#: store (:meth:`Loads.use_index`; the store never tokenizes on its own)
Tokenize = Callable[[Sequence[str]], list[list[str]]]


class Written(NamedTuple):
    """What an add wrote for its new rows (their ``ids``, in order), handed to :meth:`Loads.sync_index`
    so that the index update takes it instead of recomputing it: the ``vectors`` of model ``model``
    the add's transaction stored, and the rows' BM25 ``tokens`` as the bank computed them with the
    tokenizer it handed the store (either ``None``: not given)."""

    ids: list[str]
    model: str | None = None
    vectors: np.ndarray | None = None
    tokens: Sequence[list[str]] | None = None


def _segment_slot_codes(seg: Rows, vocab: dict[str, int]) -> np.ndarray:
    """The slot codes of a segment's rows, numbering (in ``vocab``) the slots it is first to hold."""
    values, local = seg.slot_codes if seg.slot_codes is not None else encode(seg.cols["slots"])
    remap = np.array([vocab.setdefault(v, len(vocab)) for v in values] + [-1], dtype=np.int64)
    return remap[local]


#: the links of a row without any, shared by every such row of a load (never written)
_NO_LINKS: Mapping[str, tuple[str, ...]] = MappingProxyType({})


def _links_column(texts: list[str]) -> list[Mapping[str, tuple[str, ...]]]:
    """:func:`_links` of every row's stored links, the rows with some decoded as one JSON
    document (most rows have none: they share :data:`_NO_LINKS`)."""
    some = [i for i, x in enumerate(texts) if x != "{}"]
    out: list[Mapping[str, tuple[str, ...]]] = [_NO_LINKS] * len(texts)
    if some:
        decoded = _decode("[" + ",".join([texts[i] for i in some]) + "]")
        for i, lk in zip(some, decoded):
            out[i] = {k: tuple(v) for k, v in lk.items()}
    return out


@dataclass(frozen=True, eq=False)
class ReadView:
    """What one query reads of the store (:meth:`Loads.read`), all of one load — one store
    version, so every part is of the same rows:

    - ``version``: the store version read; ``snapshot``: the user's facts as of the cuts;
    - ``sources``: the index's (n, d) vector matrix and BM25 postings (one part per segment) of
      every row of the load, in row order, when the index holds all of them; else ``None``;
    - :attr:`ann`: the approximate index asked for, when ``sources`` are given and one is valid;
    - :attr:`links`: the links of the snapshot's rows;
    - :attr:`vectors`, :attr:`missing`: without ``sources``, the stored vectors of the
      snapshot's ids ((n, d) float32, a NaN row for each id in ``missing``, which has none);
      ``None`` and ``()`` when ``sources`` are given or no model was named.

    Links and vectors are gathered from what the load read, and the approximate index is the
    caller's (:class:`frcore.bank.search.ApproximateFiles`), asked for when first needed: a view
    the bank has cached never asks."""

    version: int
    snapshot: Snapshot
    sources: tuple[np.ndarray, list[Postings]] | None
    _row_links: list[Mapping[str, tuple[str, ...]]] = field(repr=False)
    _stored: tuple[list[str], dict[str, int], np.ndarray] | None = field(repr=False)
    _ann: Callable[[], Any] | None = field(repr=False)

    @functools.cached_property
    def ann(self) -> Any:
        return None if self._ann is None else self._ann()

    @functools.cached_property
    def links(self) -> list[Mapping[str, tuple[str, ...]]]:
        rows = self.snapshot.rows
        assert rows is not None  # a store's snapshot names its rows
        return [self._row_links[i] for i in np.asarray(rows, dtype=np.int64).tolist()]

    @functools.cached_property
    def _gathered(self) -> tuple[np.ndarray | None, tuple[str, ...]]:
        if self._stored is None:
            return None, ()
        all_ids, where, mat = self._stored
        ids = list(self.snapshot.ids)
        if ids == all_ids:
            return mat, ()
        src = np.fromiter((where.get(fid, -1) for fid in ids), dtype=np.int64, count=len(ids))
        hit = src >= 0
        if hit.all():
            return mat[src], ()
        out = np.full((len(ids), mat.shape[1]), np.nan, dtype=np.float32)
        out[hit] = mat[src[hit]]
        return out, tuple(fid for fid, h in zip(ids, hit.tolist()) if not h)

    @property
    def vectors(self) -> np.ndarray | None:
        return self._gathered[0]

    @property
    def missing(self) -> tuple[str, ...]:
        return self._gathered[1]


class Loads:
    """The store's contents as read at one version, and every read built on them: the rows
    loaded from the bank's index and SQLite through ``handle`` (:meth:`load`, cached per version;
    a writable store extends the index with the rows it read), snapshots (cached), the read of
    one query (:meth:`read`), edges, transitions, summaries and export.

    ``tables`` gives what is read straight from SQLite; ``all_embeddings`` (default:
    ``tables.all_embeddings``) reads a model's stored vectors for :meth:`read` when the index
    does not hold every row."""

    def __init__(
        self,
        handle: Handle,
        tables: Tables,
        all_embeddings: Callable[[str], tuple[list[str], np.ndarray]] | None = None,
    ) -> None:
        self.handle = handle
        self.tables = tables
        self._all_embeddings = tables.all_embeddings if all_embeddings is None else all_embeddings
        #: the bank's index beside its file (:meth:`use_index`; ``None``: none is kept)
        self.index: BankIndex | None = None
        #: the tokenizer of the index's rows, handed by the bank with the index (:meth:`use_index`)
        self.tokenize: Tokenize | None = None
        self._snap_cache: collections.OrderedDict[tuple, Snapshot] = collections.OrderedDict()
        self._load_cache: _Loaded | None = None
        self._recent: collections.OrderedDict[int, _Loaded] = collections.OrderedDict()  # last loads by version
        # what an add wrote for its new rows, while :meth:`sync_index` runs: what the index update
        # would otherwise read back from SQLite (vectors) or compute again (tokens) (:meth:`_extend_index`)
        self._written: Written | None = None

    @_mapped
    def load(self) -> _Loaded:
        """All edges (insertion order) with their recorded_at and column arrays, and all
        transitions, read in one read transaction (a consistent cut: whole batches only).

        Cached per store version; after appends only the new rows are read (rows are never
        updated except by an erase, which bumps the ``erasures`` counter: then it reloads). A
        fresh load starts from the bank's index (:meth:`use_index`): only the rows after its
        segments are read from SQLite; a writable store then adds them to the index."""
        index = self.index
        read = self._read_new_rows(index)
        if isinstance(read, _Loaded):
            return read
        loaded = _combine(*read)
        rows = read[6]
        if index is not None and not self.handle.readonly and loaded.records:
            loaded = self._extend_index(loaded, rows)
        with self.handle.lock:
            self._load_cache = loaded
            self._recent[loaded.version] = loaded
            while len(self._recent) > 2:
                self._recent.popitem(last=False)
        return loaded

    def _read_new_rows(self, index: BankIndex | None) -> _Loaded | tuple:
        """:meth:`load`'s read transaction: the cached load when the version has not moved, else
        (version, erasures, released, the load to extend or ``None``, index segments, the last
        seq before the rows read, edge rows, the last transition seq before, transition rows)."""
        with self.handle.lock:
            conn = self.handle.conn
            conn.execute("BEGIN")
            try:
                version = int(conn.execute("SELECT value FROM meta WHERE key='version'").fetchone()[0])
                old = self._load_cache
                if old is not None and old.version == version:
                    return old
                erow = conn.execute("SELECT value FROM meta WHERE key='erasures'").fetchone()
                rrow = conn.execute("SELECT value FROM meta WHERE key='releases'").fetchone()
                # an erase or a release changes rows already read: either one means a full reload
                erasures = ("" if erow is None else str(erow[0])) + "/" + ("" if rrow is None else str(rrow[0]))
                released = frozenset(
                    {r[0] for r in conn.execute("SELECT edge_id FROM releases")}
                    if rrow is not None and has_releases(conn)
                    else set()
                )
                if old is not None and old.erasures != erasures:
                    old = None
                count = int(conn.execute("SELECT COUNT(*) FROM edges").fetchone()[0])
                segments: tuple[Rows, ...] = ()
                if old is None and index is not None:
                    segments = tuple(
                        index.load(
                            self.handle.bank_id(),
                            int(erow[0]) if erow is not None else 0,
                            lambda hi: int(
                                conn.execute("SELECT COUNT(*) FROM edges WHERE seq <= ?", (hi,)).fetchone()[0]
                            ),
                            lambda hi: _stamp(conn, hi),
                        )
                    )
                since = 0 if old is None else old.max_seq
                if segments:
                    since = segments[-1].hi
                columns = select_columns(self.handle.schema)
                rows = conn.execute(f"SELECT seq, {columns} FROM edges WHERE seq > ? ORDER BY seq", (since,)).fetchall()
                n_before = (len(old.cols["ids"]) if old is not None else 0) + sum(s.n for s in segments)
                if n_before + len(rows) != count:
                    old, since, segments = None, 0, ()
                    rows = conn.execute(f"SELECT seq, {columns} FROM edges ORDER BY seq").fetchall()
                tsince = 0 if old is None else old.max_tseq
                trows = conn.execute(
                    "SELECT seq, edge_id, kind, effective_at, recorded_at, "
                    "reason FROM transitions WHERE seq > ? ORDER BY seq",
                    (tsince,),
                ).fetchall()
            finally:
                conn.execute("COMMIT")
        return version, erasures, released, old, segments, since, rows, tsince, trows

    def _extend_index(self, loaded: _Loaded, rows: list[tuple]) -> _Loaded:
        """Add the rows of ``loaded`` read from SQLite to the bank's index (when they are the
        rows of this load and every one has its vector); returns ``loaded`` with them as a
        segment. Anything else leaves both as they are."""
        index = self.index
        assert index is not None
        k = loaded.indexed
        recs = loaded.records
        if len(rows) != len(recs) or not rows:
            return loaded  # rows read by earlier loads are still outside: the next fresh load indexes them
        ids = [e.id for e in recs]
        written = self._written
        if written is None or written.ids != ids:
            written = Written(ids)  # not (only) this add's rows: read back and tokenized here
        if written.vectors is not None and written.model == index.spec.model:
            vecs, missing = written.vectors, []  # these rows' vectors, as this add's transaction stored them
        else:
            vecs, missing = self.tables.get_embeddings(index.spec.model, ids)
        if missing or vecs.shape[1] != index.spec.dim:
            return loaded
        sl = slice(k, loaded.n)
        # copies, not views: a view would keep this version's whole column arrays alive
        cols = {key: v[sl].copy() for key, v in loaded.cols.items()}
        cols["quarantined"] = np.array([bool(r[13]) for r in rows], dtype=bool)  # as stored; releases apply on load
        life = {key: v[sl].copy() for key, v in loaded.life.items()}
        tokens = written.tokens
        if tokens is None:  # rows another process wrote, or an add that gave none: the bank's tokenizer
            assert self.tokenize is not None  # handed with the index (use_index)
            tokens = self.tokenize([e.text for e in recs])
        covered = loaded.segments[-1].hi if loaded.segments else 0
        raw = [tuple(r[1:]) for r in rows]
        seg = Rows(
            lo=covered + 1,
            hi=int(rows[-1][0]),
            seq=loaded.seqs.copy(),
            cols=cols,
            recorded=loaded.recorded[sl].copy(),
            life={key: life[key] for key in LIFE_COLUMNS},
            links=[r[8] for r in raw],  # the links column as stored
            vectors=vecs,
            postings=Postings.build(tokens),
            raw=raw,
        )
        with self.handle.lock:
            bank_id = self.handle.bank_id()
            erasures = self.handle.erasures()
        if bank_id is None:
            return loaded
        stamp = row_stamp(rows[-1][1], rows[-1][14])
        if not index.append(seg, bank_id, erasures, covered, stamp):
            return loaded
        seg.cols = dict(seg.cols, quarantined=loaded.cols["quarantined"][sl].copy())
        # indexed: drop this process's copies of what the index and SQLite now hold
        seg.vectors = np.zeros((0, index.spec.dim), dtype=np.float32)
        seg.raw = functools.partial(self._raw_rows, seg.lo, seg.hi)
        return dataclasses.replace(
            loaded, segments=loaded.segments + (seg,), records=[], seqs=np.zeros(0, np.int64), derived=loaded.derived
        )

    def _raw_rows(self, lo: int, hi: int) -> list[tuple]:
        """The stored rows with sequence numbers lo … hi, as the index's raw rows."""
        with self.handle.lock:
            rows = self.handle.conn.execute(
                f"SELECT {select_columns(self.handle.schema)} FROM edges WHERE seq BETWEEN ? AND ? ORDER BY seq",
                (lo, hi),
            ).fetchall()
        return [tuple(r) for r in rows]

    def use_index(self, spec: IndexSpec | None, tokenize: Tokenize | None = None) -> None:
        """Keep (and read) the bank's index beside its file for ``spec`` (:mod:`frcore.bank.storage._index`;
        ``None``: none). A scratch (``:memory:``) store has none. A writable store first removes
        what a crashed write left in the folder (:meth:`~frcore.bank.storage._index.BankIndex.tidy`).

        ``tokenize`` (required with a ``spec``): the BM25 tokens of stored texts, normalised as
        ``spec`` says (:func:`frcore.bank.search.tokenize_stored`): the index's postings of rows
        read from SQLite are built from them; an add hands its own rows' tokens (:meth:`sync_index`)."""
        if spec is not None and tokenize is None:
            raise ValueError("use_index: an index needs the tokenizer of its rows (tokenize)")
        index = (
            None
            if spec is None or self.handle.path == ":memory:"
            else BankIndex(self.handle.path, spec, self.handle.readonly)
        )
        if index is not None and not self.handle.readonly:
            with contextlib.suppress(OSError):
                index.tidy()
        with self.handle.lock:
            self.index = index
            self.tokenize = None if index is None else tokenize
            self._load_cache = None
            self._recent.clear()
            self._snap_cache.clear()

    def distrust_index(self) -> None:
        """Stop reading the bank's index (it was found damaged): this store reads SQLite from
        now on; a writable one scrubs the index, which the next process to open the bank for
        writing rebuilds."""
        with self.handle.lock:
            index, self.index = self.index, None
            self._load_cache = None
            self._recent.clear()
            self._snap_cache.clear()
        if index is not None and not self.handle.readonly:
            with contextlib.suppress(OSError):
                index.scrub()

    def sync_index(self, written: Written | None = None) -> None:
        """Bring the bank's index up to date with the stored rows (a writable store with an
        index; called after each add so that the next process to open the bank reads them
        from it). ``written``: what the add just stored for its new rows (:class:`Written`: their
        vectors, their tokens), taken for those rows instead of reading back or tokenizing again."""
        if self.index is not None and not self.handle.readonly:
            self._written = written
            try:
                self.load()
            finally:
                self._written = None

    def read(
        self,
        at: datetime,
        known_at: datetime | None = None,
        include_quarantined: bool = False,
        *,
        user: str = OWNER,
        approximate: Callable[[], Any] | None = None,
        embedding_key: str | None = None,
    ) -> ReadView:
        """What one query reads of the store, all from one load (one version, a consistent cut):
        the :meth:`snapshot` of ``user`` as of ``at`` / ``known_at``, the links of its rows, and
        the rows' vectors and BM25 postings from the bank's index when it holds every row (then
        ``approximate()``, when given, is the approximate index over them, asked for when first
        needed) — else the stored vectors of model ``embedding_key`` (read once per version).
        See :class:`ReadView`."""
        loaded = self.load()
        index = self.index
        snap = self._snapshot(loaded, at, known_at, include_quarantined, user)
        sources = self._sources(loaded, index)
        stored = None
        if sources is None and embedding_key is not None:
            stored = self._stored_vectors(loaded, embedding_key)
        return ReadView(loaded.version, snap, sources, loaded.links, stored, approximate if sources else None)

    def _sources(self, loaded: _Loaded, index: BankIndex | None) -> tuple[np.ndarray, list[Postings]] | None:
        """The ``index``'s vector matrix and BM25 postings (one part per segment) of every row
        of ``loaded``, in row order, when it holds all of them; else ``None``."""
        if loaded.records or not loaded.segments or index is None:
            return None
        matrix = loaded.derived.get("vectors")
        if matrix is None:
            try:
                matrix = loaded.derived["vectors"] = index.matrix(loaded.indexed)
            except (OSError, ValueError):
                return None
        return matrix, [s.postings for s in loaded.segments]

    def _stored_vectors(self, loaded: _Loaded, model: str) -> tuple[list[str], dict[str, int], np.ndarray]:
        """(ids, {id: row}, matrix) of every vector of ``model`` stored (``all_embeddings``),
        read once per version: the first read of a version drops the older versions' matrix."""
        key = f"stored vectors {model}"
        got = loaded.derived.get(key)
        if got is None:
            with self.handle.lock:
                for other in self._recent.values():
                    other.derived.pop(key, None)
            ids, mat = self._all_embeddings(model)
            got = loaded.derived[key] = (ids, {fid: i for i, fid in enumerate(ids)}, mat)
        return got

    def _user_mask(self, loaded: _Loaded, user: str) -> np.ndarray:
        """(n,) bool: the edges of ``loaded`` that are facts of ``user`` (derived once per version)."""
        with self.handle.lock:
            masks = loaded.derived.setdefault("users", {})
            got = masks.get(user)
            if got is None:
                got = masks[user] = np.asarray(loaded.cols["users"] == user, dtype=bool).reshape(loaded.n)
            return got

    def edges(
        self,
        known_at: datetime | None = None,
        include_quarantined: bool = True,
        *,
        user: str = OWNER,
    ) -> list[FactRecord]:
        """Stored edges of ``user`` in insertion order, optionally only those recorded by
        ``known_at``."""
        loaded = self.load()
        edges = loaded.edges
        if known_at is not None:
            k = micros_since_epoch(known_at)
            edges = [e for e, r in zip(edges, loaded.recorded <= k) if r]
        edges = [e for e in edges if e.user == user]
        if not include_quarantined:
            edges = [e for e in edges if not e.quarantined]
        return list(edges)

    def transitions(self, known_at: datetime | None = None, *, user: str = OWNER) -> list[Transition]:
        """Recorded lifecycle transitions of the facts of ``user``, optionally only those recorded
        by ``known_at``."""
        loaded = self.load()
        mine = set(loaded.cols["ids"][self._user_mask(loaded, user)].tolist())
        trs = [t for t in loaded.transitions if t.edge_id in mine]
        if known_at is not None:
            trs = [t for t in trs if t.recorded_at <= known_at]
        return list(trs)

    def slot_facts(
        self, slot: str, known_at: datetime | None = None, *, user: str = OWNER
    ) -> list[tuple[FactRecord, datetime]]:
        """The facts of ``user`` stored under ``slot`` (recorded by ``known_at``, if given), each
        with its recorded_at, in the order stored."""
        loaded = self.load()
        mask = (loaded.cols["slots"] == slot) & self._user_mask(loaded, user)
        if known_at is not None:
            mask &= loaded.recorded <= micros_since_epoch(known_at)
        return [(loaded.record(int(i)), time_from_micros(loaded.recorded[i])) for i in np.flatnonzero(mask)]

    def summary(self, *, user: str = OWNER) -> dict[str, int]:
        """Counts of the facts of ``user``: ``facts`` and ``turns`` (by kind), distinct ``slots``,
        ``retractions`` (recorded retract transitions)."""
        loaded = self.load()
        mine = self._user_mask(loaded, user)
        kinds = loaded.cols["kinds"][mine]
        slots = loaded.cols["slots"][mine]
        ids = set(loaded.cols["ids"][mine].tolist())
        return {
            "facts": int(np.count_nonzero(kinds == "fact")),
            "turns": int(np.count_nonzero(kinds == "turn")),
            "slots": len({x for x in slots.tolist() if x}),
            "retractions": sum(1 for t in loaded.transitions if t.kind == "retract" and t.edge_id in ids),
        }

    def snapshot(
        self, at: datetime, known_at: datetime | None = None, include_quarantined: bool = False, *, user: str = OWNER
    ) -> Snapshot:
        """:func:`frcore.bank.records._lifecycle.snapshot` over the facts of ``user`` in this store (their
        lifecycle derived among themselves: a slot is one user's), cached per (at, known_at,
        include_quarantined, user, store version). Like every time the store takes, ``at`` and
        ``known_at`` are naive-UTC datetimes, parsed where they entered (:mod:`frcore._time`)."""
        return self._snapshot(self.load(), at, known_at, include_quarantined, user)

    def _snapshot(
        self, loaded: _Loaded, at: datetime, known_at: datetime | None, include_quarantined: bool, user: str
    ) -> Snapshot:
        """:meth:`snapshot` of the store as ``loaded`` holds it."""
        at_n, known_n = at, known_at  # naive UTC, parsed by the caller
        key = (at_n, known_n, bool(include_quarantined), user, loaded.version)
        with self.handle.lock:
            hit = self._snap_cache.get(key)
            if hit is not None:
                self._snap_cache.move_to_end(key)
                return hit
        mask = np.ones(loaded.n, dtype=bool)
        trs = loaded.transitions
        if known_n is not None:
            mask &= loaded.recorded <= micros_since_epoch(known_n)
            trs = [t for t in trs if t.recorded_at is not None and t.recorded_at <= known_n]
        if not include_quarantined:
            mask &= ~loaded.cols["quarantined"]
        mask &= self._user_mask(loaded, user)
        idx = np.flatnonzero(mask)
        with self.handle.lock:  # the per-version derivation cache is shared by threads
            index, life = loaded.lifecycle()
        codes = life.slot  # of every row (a subset's are equal exactly when its slots are)
        retract_rows = retracted_by_transitions(trs, at_n, index)
        if idx.size != loaded.n:  # a subset: positions and links among its edges only
            local = np.full(loaded.n, -1, dtype=np.int64)
            local[idx] = np.arange(idx.size)
            retract_rows = local[retract_rows]
            retract_rows = retract_rows[retract_rows >= 0]
            life = life.take(idx)
        state = states_from_columns(life, at_n, retract_rows)
        keep = state != INVISIBLE
        rows = idx[keep]
        every = rows.size == loaded.n  # ascending positions: all of them means 0 … n-1
        snap = snapshot_from_columns(
            loaded.cols, loaded.life, rows, state[keep], at_n, known_n, loaded.version, index if every else None, codes
        )
        with self.handle.lock:
            self._snap_cache[key] = snap
            while len(self._snap_cache) > SNAPSHOT_CACHE_SIZE:
                self._snap_cache.popitem(last=False)
        return snap

    def export(self, *, user: str = OWNER) -> dict[str, Any]:
        """Everything of ``user``, JSON-able: schema version, the recorded embedder, the user's
        edges (with recorded_at; ``quarantined``: held out of retrieval now; ``user`` for a user
        other than the owner), their transitions and releases from quarantine, the audit records
        of the user's erasures, and ``user`` (``None`` for the owner)."""
        loaded = self.load()
        mine = {e.id for e in loaded.edges if e.user == user}
        trs = [t for t in loaded.transitions if t.edge_id in mine]
        out_edges = []
        for e, r in zip(loaded.edges, loaded.recorded.tolist()):
            if e.user != user:
                continue
            d = e.to_json()
            d["recorded_at"] = iso_text(time_from_micros(r))
            out_edges.append(d)
        return {
            "schema_version": self.handle.schema,
            "version": self.handle.version(),
            "edges": out_edges,
            "transitions": [
                {
                    "edge_id": t.edge_id,
                    "kind": t.kind,
                    "effective_at": iso_text(t.effective_at),
                    "recorded_at": iso_text(t.recorded_at),
                    "reason": t.reason,
                }
                for t in trs
            ],
            "releases": [r for r in self.tables.releases() if r["edge_id"] in mine],
            "audit": self.tables.audit_log(user=user),
            "user": None if user == OWNER else user,
            "embedder": None if (emb := self.tables.recorded_embedder()) is None else {"name": emb[0], "dim": emb[1]},
        }


def _stamp(conn: sqlite3.Connection, seq: int) -> str | None:
    """The :func:`frcore.bank.storage._index.row_stamp` of the stored row ``seq`` (``None``: none)."""
    row = conn.execute("SELECT id, recorded_at FROM edges WHERE seq = ?", (seq,)).fetchone()
    return None if row is None else row_stamp(row[0], row[1])


def _combine(version, erasures, released, old, segments, since, rows, tsince, trows) -> _Loaded:
    """The :class:`_Loaded` of :meth:`Loads.load`: the rows read appended to ``old`` (or, with
    no ``old``, to the index ``segments``)."""
    new_edges = _with_releases([_row_to_record(r[1:]) for r in rows], released)
    new_seq = np.array([r[0] for r in rows], dtype=np.int64)
    new_rec = np.array([micros_of_text(r[14]) for r in rows], dtype=np.int64)
    new_cols = edge_columns(new_edges)
    new_cols["users"] = np.array([e.user for e in new_edges] or [OWNER], dtype=object)[: len(new_edges)]
    new_life = row_lifecycle(new_edges)
    new_links: list[Mapping[str, tuple[str, ...]]] = [e.links for e in new_edges]
    new_trs = [
        Transition(e, k, datetime.fromisoformat(eff), datetime.fromisoformat(rec), why)
        for _s, e, k, eff, rec, why in trows
    ]
    if old is None:
        parts_cols = [s.cols for s in segments] + [new_cols]
        cols = concat_columns(parts_cols[0], *parts_cols[1:]) if len(parts_cols) > 1 else new_cols
        if segments and released:
            cols["quarantined"] = cols["quarantined"] & ~np.isin(cols["ids"], list(released))
        recorded = np.concatenate([s.recorded for s in segments] + [new_rec])
        life = {
            k: np.concatenate(
                [s.life[k] if k != "confidence" else s.cols["confidence"] for s in segments] + [new_life[k]]
            )
            for k in new_life
        }
        links = _links_column([x for s in segments for x in s.links]) + new_links
        records, seqs, trs = new_edges, new_seq, new_trs
        slot_vocab: dict[str, int] = {}
        codes = [_segment_slot_codes(seg, slot_vocab) for seg in segments]
        row_codes = np.concatenate([*codes, slot_codes([e.slot for e in new_edges], slot_vocab)])
    else:
        # the old load's rows are not copied again (their buffers grow: ._grow)
        cols = {k: appended(old.cols[k], new_cols[k]) for k in old.cols}
        recorded = appended(old.recorded, new_rec)
        life = {k: appended(old.life[k], new_life[k]) for k in new_life}
        links = old.links + new_links
        segments = old.segments
        records, seqs = old.records + new_edges, np.concatenate([old.seqs, new_seq])
        trs = old.transitions + new_trs
        slot_vocab = dict(old.slot_vocab)  # the old load's stays as it was (its readers may be in threads)
        row_codes = appended(old.slot_codes, slot_codes([e.slot for e in new_edges], slot_vocab))
    loaded = _Loaded(
        version=version,
        erasures=erasures,
        max_seq=rows[-1][0] if rows else (since if old is None else old.max_seq),
        max_tseq=trows[-1][0] if trows else tsince,
        n=len(cols["ids"]),
        recorded=recorded,
        cols=cols,
        life=life,
        links=links,
        transitions=trs,
        released=released,
        segments=segments,
        records=records,
        seqs=seqs,
        slot_codes=row_codes,
        slot_vocab=slot_vocab,
    )
    return loaded
