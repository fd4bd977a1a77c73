"""The :class:`Bank` facade: a persistent store + embedder + BM25 + query understanding + the
eight-stage pipeline, behind add / retract / erase / query / explain / export."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import functools
import hashlib
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._ontology import primary_index
from .._params import LifecycleParams, default_params, validate_params
from .._time import now, parse_time_arg
from .._types import STATE_NAMES
from ._ingest import EMBED_CHUNK, ReadyBatch, collector_paused, embed_records
from .derive import DeriveConfig, Deriver, TurnIndex, explain_derivation
from .pipeline import (
    FR_BANK_PIPELINE,
    PipelineConfig,
    Prepared,
    Retrieval,
    Router,
    check_intent,
    explain_results,
    infer_intent,
    read_question,
    related_pairs,
    retrieve,
    routing_from_categories,
)
from .records import FactRecord, check_user, neutralize, owner_pattern
from .search import (
    DEFAULT_EMBEDDER,
    AnnConfig,
    ApproximateFiles,
    ApproximateRows,
    Lexicon,
    Postings,
    embedder_identity,
    get_embedder,
    tokenize_many,
    tokenize_stored,
)
from .storage import IndexSpec, ReadView, StoreError, checked, parse_batch


class EmbedderMismatch(StoreError):
    """A bank opened with an embedder other than its own (see :meth:`Bank.open`); the message
    names both."""

    def __init__(self, message: str):
        super().__init__(message, "embedder")


def _vectors_embedder(store) -> tuple[str, int] | None:
    """The embedder (name, dim) of every vector a bank without a recorded embedder stores: the
    model keys without their owner suffix, if exactly one; else ``None``."""
    bases = {m.split("|owner=", 1)[0]: d for m, d in store.embedding_models().items()}
    if len(bases) != 1:
        return None
    ((name, dim),) = bases.items()
    try:
        known = embedder_identity(name)
    except ValueError:  # vectors of a caller's own embedder object: nothing to infer from the name
        return None
    return known if known[1] == dim else None


def result_limit(config: PipelineConfig) -> int | None:
    """The most results one query can return under ``config``: the lifecycle ranker scores the
    distilled candidates (``n_distill``; without distillation, every candidate the three stages
    found); a flat ranker (cosine, BM25) ranks every row (``None``: no limit but the bank)."""
    if config.ranker != "lifecycle":
        return None
    return config.n_distill if config.n_distill else config.n_cosine + config.n_bm25 + config.n_forced


_DEFAULT_PIPELINE = FR_BANK_PIPELINE  # immutable: shared by every query that passes no config


@dataclass(frozen=True)
class QueryResult:
    """Ranked results with every named score term, the stage(s) that found each, and the
    query understanding behind them (intent, the rule that fired, routing weights)."""

    query: str
    at: _dt.datetime
    intent: str
    intent_rule: str
    categories: dict[str, float]
    results: tuple[dict[str, Any], ...]
    n_candidates: int = 0
    n_distilled: int = 0
    #: the scored candidate set (ids in kernel order) for sweeps
    candidate_ids: tuple[str, ...] = ()
    #: the pipeline's Retrieval (kernel inputs as scored); read through the two properties below
    scored: Any = field(default=None, repr=False, compare=False)
    #: what the question's own words asked (time words, window, coverage cue), when the
    #: configuration reads them (``time_window``, ``coverage``); None otherwise
    question: dict[str, Any] | None = None

    @property
    def candidates(self):
        """The validated kernel inputs of the scored candidate set (:class:`frcore.Candidates`)."""
        return None if self.scored is None else self.scored.candidates

    @property
    def kernel_query(self):
        """The scored query as :class:`frcore.Query`."""
        return None if self.scored is None else self.scored.query

    @property
    def ids(self) -> list[str]:
        return [r["id"] for r in self.results]

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "at": self.at.isoformat(),
            "intent": self.intent,
            "intent_rule": self.intent_rule,
            "categories": self.categories,
            "n_candidates": self.n_candidates,
            "n_distilled": self.n_distilled,
            **({"question": self.question} if self.question is not None else {}),
            "results": list(self.results),
        }


@dataclass
class _Rows:
    """What depends only on which edges a snapshot holds (not on ``at``): vectors, the BM25
    index, eligibility, related pairs, primary categories. Shared by every snapshot with the
    same (store version, rows), e.g. two valid times after the last edge was said."""

    vectors: Any  # (n, d) float32 array, or IndexedRows of the index's vector matrix
    lexical: Lexicon
    eligible: np.ndarray
    related: tuple[np.ndarray, np.ndarray]
    primary: np.ndarray


#: index folder → its approximate index's files (shared by every Bank over one store: loaded once)
_APPROXIMATE: weakref.WeakKeyDictionary[Any, ApproximateFiles] = weakref.WeakKeyDictionary()


def _ann_config(ann: AnnConfig | bool | None) -> AnnConfig | None:
    """The approximate index's settings asked for (``True``: the defaults; ``None``/``False``: none)."""
    if ann is None or ann is False:
        return None
    if ann is True:
        return AnnConfig()
    if isinstance(ann, AnnConfig):
        return ann
    raise ValueError(f"ann: expected True, False, None or an AnnConfig, got {type(ann).__name__}")


class IndexedRows:
    """Rows ``rows`` (``None``: every row) of the index's vector matrix, as the (n, d) matrix a
    query multiplies: ``IndexedRows(matrix, rows) @ q`` is ``matrix[rows] @ q`` exactly. A float32
    matrix–vector product's value for a row depends on the shape of the matrix it is computed in
    (BLAS blocks and threads rows by the matrix), so the product is always taken over exactly the
    snapshot's rows — the memory-mapped matrix in place for every row, else a copy of the
    snapshot's rows gathered on first use — as a bank read from SQLite alone computes it."""

    def __init__(self, matrix: np.ndarray, rows: np.ndarray | None):
        self.shape = (int(matrix.shape[0]) if rows is None else int(rows.size), int(matrix.shape[1]))
        self._source, self._rows = matrix, rows
        self._matrix: np.ndarray | None = matrix if rows is None else None

    def matrix(self) -> np.ndarray:
        if self._matrix is None:
            self._matrix = np.ascontiguousarray(self._source[self._rows])
        return self._matrix

    def __matmul__(self, q: np.ndarray) -> np.ndarray:
        return np.asarray(self.matrix() @ q)


@dataclass
class _View:
    """Per-snapshot arrays derived once and reused by every query against that snapshot."""

    snapshot: Any
    vectors: Any
    lexical: Lexicon
    prepared: Prepared  # per-edge arrays as of the view's valid time (ages, eligibility, related pairs, ...)


class Bank:
    """FR-Bank: a persistent, append-only, bi-temporal lifecycle-aware memory store.

    >>> bank = Bank.open(":memory:")                                # doctest: +SKIP
    >>> bank.add([{"id": "f1", "text": "Lives in Porto", "categories": {"IDENTITY_SELF_CONCEPT": 1},
    ...            "said_at": "2025-01-02", "slot": "city"}])        # doctest: +SKIP
    >>> bank.query("Where does the user live?", at="2025-02-01").ids  # doctest: +SKIP
    ['f1']

    Users: every fact belongs to a user (a fact that names none, to the bank's single owner). A
    ``Bank`` object is bound to one user (``user``; ``None`` is the owner): every read and write
    through it — add, query, explain, export, retract, erase, quarantine, release — sees and
    touches that user's facts only; their BM25 index, vectors, lifecycle derivation (a slot is
    one user's) and snapshot caches are that user's. :meth:`for_user` gives the same bank bound
    to another user.
    """

    def __init__(
        self,
        store,
        embedder,
        params: LifecycleParams | None = None,
        router: Router | None = None,
        owner: str | None = None,
        user: str | None = None,
        *,
        index: bool = True,
        ann: AnnConfig | bool | None = None,
        derive: DeriveConfig | bool | None = None,
    ):
        #: the user this object reads and writes for (:data:`frcore.bank.records._facts.OWNER`, ``""``: the owner)
        self.user: str = check_user(user)
        self.store = store
        self.embedder = embedder
        self.owner = owner
        self._owner_re = owner_pattern(owner)
        # Vectors depend on the owner normalisation: cache them under a key that says so.
        self.embedding_key = embedder.name + (
            f"|owner={owner.strip().lower()}" if owner is not None and self._owner_re else ""
        )
        self.params = validate_params(params) if params is not None else default_params()
        self.router = router if router is not None else Router(embedder)
        self._views: dict[tuple, _View] = {}
        self._rows: dict[tuple, _Rows] = {}
        self._tokens: dict[str, list[str]] = {}  # normalised text → BM25 tokens (texts never change)
        self._mem_vectors: dict[str, np.ndarray] = {}  # re-embedded for a read-only store (never written)
        #: whether the bank keeps its index beside its file (:mod:`frcore.bank.storage._index`)
        self.index = bool(index)
        #: the approximate index's settings (:mod:`frcore.bank.search._ann`), ``None``: exact cosine only
        self.ann: AnnConfig | None = _ann_config(ann)
        if self.ann is not None and not self.index:
            raise ValueError("ann: an approximate index needs the bank's index (index=True)")
        #: the derivation rules applied to raw turns as they are added (docs/derive.md), ``None``: none
        self.derive: DeriveConfig | None = DeriveConfig() if derive is True else (derive or None)
        # the meaning test uses the bank's embedder, unless it is the hashing one (its vectors are
        # words, which the rules already read; docs/derive.md, "Same attribute, by meaning")
        words_only = str(embedder.name).startswith("hash")
        self._deriver = Deriver(self.derive or DeriveConfig(), None if words_only else embedder.embed)
        #: (store version, stored records by id, index of their turns) explanations read (:meth:`_stored_turns`)
        self._explaining: tuple[int, dict[str, FactRecord], TurnIndex] | None = None
        if self.ann is not None and int(embedder.dim) % self.ann.pq_dims:
            raise ValueError(f"ann.pq_dims: {self.ann.pq_dims} does not divide the embedder's dimension {embedder.dim}")
        spec = (
            IndexSpec(self.embedding_key, int(embedder.dim), self.embedding_key[len(embedder.name) :], owner)
            if self.index
            else None
        )
        # the BM25 tokens of stored texts as the index keeps them: the bank tokenizes its index's
        # rows, the store never does (it is handed this function, and an add's tokens)
        self._index_tokens = None if spec is None else functools.partial(tokenize_stored, normalize=spec.normalize)
        current = store.index_folder
        if (None if current is None else current.spec) != spec:
            store.use_index(spec, self._index_tokens)
        folder = store.index_folder
        #: the approximate index's files in the bank's index folder (a bank opened with ``ann``)
        self.approximate: ApproximateFiles | None = None
        if self.ann is not None and folder is not None:  # one per folder: the users of a store share it
            self.approximate = _APPROXIMATE.setdefault(folder, ApproximateFiles(folder))

    # ------------------------------------------------------------------ lifecycle
    @classmethod
    def open(
        cls,
        path: str,
        embedder: str | Any | None = None,
        params: LifecycleParams | None = None,
        owner: str | None = None,
        *,
        readonly: bool = False,
        create: bool = True,
        user: str | None = None,
        index: bool = True,
        ann: AnnConfig | bool | None = None,
        derive: DeriveConfig | bool | None = None,
        router: Router | None = None,
    ) -> Bank:
        """Open (or create, with ``create``) the bank at ``path``, bound to ``user`` (``None``:
        the bank's owner; see the class docstring); ``owner`` is the owner's name (see
        :func:`owner_pattern`). ``readonly``: never write (queries
        re-embed a missing vector in memory); works on read-only storage. A file that is not an
        FR-Bank is refused, untouched.

        The bank's embedder is recorded in the bank (name and dimension, when it is created; a
        bank without a record records it on its first write). ``embedder=None`` uses the
        recorded one — for a bank without a record, the one all its stored vectors were made
        with, else :data:`frcore.bank.search._embed.DEFAULT_EMBEDDER` (MiniLM). An embedder asked for
        explicitly (a name: ``hash``, ``hash-<dim>``, ``minilm``; or an object with ``name``,
        ``dim``, ``embed``) must be the recorded one: another raises :class:`EmbedderMismatch`
        naming both, and nothing is written (cosines between two embedders' vectors mean
        nothing; to change embedder, export the facts and add them to a new bank).

        ``ann``: rank with an approximate nearest-neighbour index (``True``: the default
        :class:`frcore.bank.search._ann.AnnConfig`) once the bank is large enough; a writable bank
        builds and extends it as facts are added (:mod:`frcore.bank.search._ann`).

        ``derive``: give raw turns the lifecycle metadata their words state as they are added
        (``True``: every rule; a :class:`frcore.bank.DeriveConfig` names them; docs/derive.md).

        ``router``: the :class:`frcore.bank.Router` that routes the bank's queries to categories
        (default: a new one over the bank's embedder); a caller that opens several banks on one
        embedder passes one router to all, so its category vectors are computed once.
        """
        from .storage import Store

        check_user(user)  # a bad user name fails before the bank is opened
        asked = None
        if embedder is not None:
            asked = (
                embedder_identity(embedder) if isinstance(embedder, str) else (str(embedder.name), int(embedder.dim))
            )
        # first: a bad path fails before a model loads
        store = Store.open(
            path, readonly=readonly, create=create, embedder=asked or embedder_identity(DEFAULT_EMBEDDER)
        )
        try:
            recorded, source = store.recorded_embedder(), "recorded in the bank"
            if recorded is None:
                recorded, source = _vectors_embedder(store), "the embedder of its stored vectors"
            if asked is not None and recorded is not None and asked != recorded:
                raise EmbedderMismatch(
                    f"{path}: the bank's embedder is {recorded[0]!r} ({recorded[1]}-d, {source}); "
                    f"asked for {asked[0]!r} "
                    f"({asked[1]}-d): open it without an embedder (fr bank: without --embedder) to use its own; "
                    f"vectors of two embedders are not comparable (to change embedder, export the facts and add them "
                    f"to a new bank)"
                )
            if embedder is not None and not isinstance(embedder, str):
                emb = embedder
            else:
                name = embedder if embedder is not None else (recorded[0] if recorded is not None else DEFAULT_EMBEDDER)
                try:
                    emb = get_embedder(name)
                except ValueError:
                    raise EmbedderMismatch(
                        f"{path}: the bank's embedder {name!r} ({source}) is not a built-in one; "
                        f"open it with that embedder object (Bank.open(path, embedder=...))"
                    ) from None
                if recorded is not None and (emb.name, emb.dim) != recorded:
                    raise EmbedderMismatch(
                        f"{path}: the bank's embedder {recorded[0]!r} ({recorded[1]}-d, {source}) "
                        f"loads as {emb.name!r} ({emb.dim}-d)"
                    )
            if not store.readonly:  # recorded by the first write of a bank that has no record yet
                store.handle.embedder_to_record = (str(emb.name), int(emb.dim))
            return cls(store, emb, params, router, owner=owner, user=user, index=index, ann=ann, derive=derive)
        except BaseException:
            store.close()
            raise

    def for_user(self, user: str | None) -> Bank:
        """This bank bound to ``user`` (``None``: the owner): the same store, embedder, parameters
        and router, with that user's own caches. Closing either closes the shared store."""
        return type(self)(
            self.store,
            self.embedder,
            self.params,
            self.router,
            owner=self.owner,
            user=check_user(user),
            index=self.index,
            ann=self.ann,
            derive=self.derive,
        )

    def normalize(self, text: str) -> str:
        """The text as embedded and indexed: the owner's name replaced by "the user"."""
        return neutralize(text, self._owner_re)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Bank:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ writes
    def add(
        self,
        facts: Iterable[Mapping[str, Any]],
        recorded_at: _dt.datetime | None = None,
        *,
        where: Sequence[str] | None = None,
    ) -> list[str]:
        """Validate, embed and store facts with their vectors in one transaction (all or nothing).

        Returns the ids stored (a :class:`frcore.bank.storage._store.Added` list; ``.unchanged`` lists
        facts skipped because an identical fact is already stored — a retry is a no-op;
        ``.quarantined`` lists the stored facts held in quarantine: ``id``, ``field``, ``rule``,
        ``slot``; ``.warnings``, what the batch is accepted with but told about: an event time
        before its said time, a supersession cycle). A different fact under a stored id is an
        error. ``where[i]`` names fact ``i`` in errors (default ``facts[i]``). Facts are stored
        for this bank's :attr:`user`: a fact that names no ``user`` becomes theirs, one of another
        user is refused (field ``user``)."""
        with collector_paused():  # validate → embed → store (the guard, the transaction and the index)
            return self._store_prepared(self._prepare(facts, where, recorded_at))

    def add_batches(
        self,
        batches: Iterable[Iterable[Mapping[str, Any]]],
        recorded_at: _dt.datetime | None = None,
        *,
        where: Iterable[Sequence[str] | None] | None = None,
        workers: int = 1,
    ) -> list[list[str]]:
        """:meth:`add` of each batch in turn, each in its own transaction (``where``: each batch's
        labels); returns each one's result. With ``workers=1`` a worker process prepares each batch
        (validates, checks, embeds) while the one before it is stored (:mod:`frcore.bank._ingest`);
        with 0, or with raw-turn derivation (it reads the stored turns), this process does. A batch
        that fails raises its error; the batches before it stay stored."""
        from . import _ingest

        if workers not in (0, 1):
            raise ValueError(f"workers: {workers!r}: 0 (prepare every batch here) or 1 (a worker process)")
        args = (self.user, recorded_at, self.embedding_key, self.owner)
        job = None if not workers or self.derive is not None or self.store.readonly else (lambda f, w: (f, w, *args))
        with collector_paused():
            here = functools.partial(self._prepare, recorded_at=recorded_at)
            return _ingest.add_batches(here, self._store_prepared, job, batches, where, self.embedder)

    def _prepare(self, facts, where, recorded_at) -> ReadyBatch:
        """A batch parsed and validated for this bank's user, checked for prompt injection (once:
        derivation and the store take its findings), derived (raw turns), embedded."""
        batch = checked(parse_batch(list(facts), where, self.user, recorded_at))
        if self.derive is not None:  # raw turns take the metadata their words state (docs/derive.md)
            batch = self._derived(batch, self.derive)
        return ReadyBatch(batch, None if self.store.readonly else self._embed_records(batch.records))

    def _store_prepared(self, prep: ReadyBatch) -> list[str]:
        vectors = prep.vectors
        if vectors is None and not self.store.readonly:  # prepared by a worker without the embedder
            vectors = self._embed_records(prep.batch.records)
        tokens = None
        if self._index_tokens is not None and self.store.index_folder is not None and not self.store.readonly:
            tokens = self._index_tokens([r.text for r in prep.batch.records])  # once: the index takes them
        added = self.store.add_facts(prep.batch, vectors=vectors, tokens=tokens)
        if self.approximate is not None and self.ann is not None:
            self.approximate.update(self.ann)  # extended when due; an error leaves queries exact
        self._views.clear()
        self._rows.clear()
        if self.derive is not None:
            self._deriver.stored(self.store.version())
        return added

    def _derived(self, batch, cfg: DeriveConfig):
        """``batch`` with its raw turns' derived metadata (:class:`frcore.bank.derive.Deriver`:
        against the user's stored turns, the index of them kept across adds)."""
        stored = functools.partial(self.store.edges, user=self.user)
        records = self._deriver.derive(batch.records, self.store.version(), stored, batch.findings is not None)
        return dataclasses.replace(batch, records=records)

    def update_ann(self, complete: bool = True) -> bool:
        """Build or extend the approximate index now (``complete``: over every row, even when
        it is not yet due; a bank opened with ``ann``). Returns whether one was written."""
        if self.ann is None:
            raise ValueError("ann: this bank was opened without an approximate index (Bank.open(..., ann=True))")
        self.store.sync_index()
        return self.approximate is not None and self.approximate.update(self.ann, complete)

    def _embed_records(self, records) -> tuple[str, np.ndarray]:
        """(model key, vectors) of facts about to be stored (:func:`frcore.bank._ingest.embed_records`)."""
        return embed_records(self.embedder, self.embedding_key, self.normalize, records)

    def release(self, edge_id: str, reason: str | None = None) -> dict:
        """Release a quarantined fact as the owner's decision (an append-only release row; the
        fact then takes part in retrieval). See :meth:`frcore.bank.storage._store.Store.release`."""
        out = self.store.release(edge_id, reason=reason, user=self.user)
        self._views.clear()
        self._rows.clear()
        return out

    def quarantine(self, include_released: bool = False) -> list[dict]:
        """The facts held in quarantine, with the field and rule that fired
        (:meth:`frcore.bank.storage._store.Store.quarantine`)."""
        return self.store.quarantine(include_released=include_released, user=self.user)

    def retract(self, edge_id: str, at=None, reason: str | None = None) -> None:
        """Record a retraction (the edge is masked from then on, and kept for audit)."""
        self.store.retract(edge_id, at=parse_time_arg(at), reason=reason, user=self.user)
        self._views.clear()
        self._rows.clear()

    def erase(self, edge_id: str, reason: str | None = None, *, wait: float | None = None) -> dict:
        """Physically remove an edge (text, vector, the id everywhere); an audit record with a
        salted hash of the id remains. Returns it with ``purged`` / ``remaining`` / ``note``:
        ``purged`` when the WAL purge finished (readers may leave it pending: :meth:`purge`
        finishes it) and a scan of every file of the bank found none of the erased bytes, else
        the files where some remain (:meth:`frcore.bank.storage.Store.erase`)."""
        out = (
            self.store.erase(edge_id, reason=reason, user=self.user)
            if wait is None
            else self.store.erase(edge_id, reason=reason, wait=wait, user=self.user)
        )
        self.store.sync_index()  # the index segments the erase scrubbed are rebuilt from SQLite
        self._views.clear()
        self._rows.clear()
        self._mem_vectors.pop(edge_id, None)
        return out

    def purge(self, timeout: float = 10.0) -> dict:
        """Finish a pending erase purge (see :meth:`frcore.bank.storage._store.Store.purge`)."""
        return self.store.purge(timeout=timeout)

    def states(self, at=None, known_at=None) -> dict[str, str]:
        """The lifecycle state (its name) of every fact of this user said by ``at`` (default now),
        as the bank knew it at ``known_at`` (default: everything recorded); ``"quarantined"``
        for a fact held in quarantine (it takes no part in lifecycle derivation)."""
        at_t = parse_time_arg(at, "at") or now().replace(microsecond=0)
        known_t = parse_time_arg(known_at, "known_at")
        snap = self.store.snapshot(at_t, known_at=known_t, include_quarantined=False, user=self.user)
        out = {str(i): STATE_NAMES[int(x)] for i, x in zip(snap.ids.tolist(), snap.state.tolist())}
        every = self.store.snapshot(at_t, known_at=known_t, include_quarantined=True, user=self.user)
        held = every.ids[every.quarantined].tolist()
        out.update({str(i): "quarantined" for i in held})
        return out

    def slot_history(self, slot: str, known_at=None) -> list[tuple[Any, _dt.datetime]]:
        """This user's facts stored under ``slot`` (recorded by ``known_at``), each with its
        recorded_at, in the order they were said (``said_at``; ties in the order stored)."""
        facts = self.store.slot_facts(slot, parse_time_arg(known_at, "known_at"), user=self.user)
        order = sorted(range(len(facts)), key=lambda i: (facts[i][0].said_at, i))
        return [facts[i] for i in order]

    def export(self) -> dict:
        """This user's facts, transitions, releases and erasure audit records, JSON-able
        (:meth:`frcore.bank.storage._store.Store.export`)."""
        return self.store.export(user=self.user)

    def _embed_missing(self, ids: Sequence[str], texts: Mapping[str, str] | None = None) -> dict[str, np.ndarray]:
        """Embed the ``ids`` that have no vector and are still stored (``texts``: their texts, if
        known); cache the vectors in the store (in memory for a read-only store). Returns them."""
        out: dict[str, np.ndarray] = {}
        if not ids:
            return out
        _, missing = self.store.get_embeddings(self.embedding_key, ids)
        missing = [i for i in missing if i not in self._mem_vectors] if self.store.readonly else missing
        if missing:
            alive = self.store.existing(missing, user=self.user)  # an id erased meanwhile is never re-embedded
            if texts is None or any(i not in texts for i in missing if i in alive):
                texts = {e.id: e.text for e in self.store.edges(user=self.user) if e.id in alive}
            order = [i for i in missing if i in alive and i in texts]
            for start in range(0, len(order), EMBED_CHUNK):
                chunk = order[start : start + EMBED_CHUNK]
                vecs = np.asarray(self.embedder.embed([self.normalize(texts[i]) for i in chunk]), dtype=np.float32)
                if self.store.readonly:
                    self._mem_vectors.update(zip(chunk, vecs))
                else:
                    self.store.put_embeddings(self.embedding_key, chunk, vecs, skip_missing=True)
                out.update(zip(chunk, vecs))
        return out

    # ------------------------------------------------------------------ reads
    def _read(self, at: _dt.datetime, known_at: _dt.datetime | None, include_quarantined: bool) -> ReadView:
        """The one read of the store behind a ranking (:meth:`frcore.bank.storage.Store.read`)."""
        ann, files = self.ann, self.approximate
        return self.store.read(
            at,
            known_at,
            include_quarantined,
            user=self.user,
            approximate=None if ann is None or files is None else functools.partial(files.index, ann),
            embedding_key=self.embedding_key,
        )

    def _view(
        self, read: ReadView, at: _dt.datetime, known_at: _dt.datetime | None, include_quarantined: bool
    ) -> _View:
        """The view of ``read``, cached by (at, known_at, include_quarantined, store version); the
        store's version counter is persisted, so writes by other processes invalidate too."""
        key = (at, known_at, include_quarantined, read.version)
        view = self._views.get(key)
        if view is not None:
            return view
        with collector_paused():  # (the first view reads every row: objects by the hundred thousand)
            return self._new_view(key, read)

    def _new_view(self, key: tuple, read: ReadView) -> _View:
        snap = read.snapshot
        rows = self._rows_of(read)
        if len(self._views) > 8:
            self._views.clear()
        prepared = Prepared(
            weights=snap.weights,
            said_at_h=snap.said_at_h,
            event_h=snap.event_h,
            state=snap.state,
            confidence=snap.confidence,
            numeric=snap.numeric,
            slots=snap.slots,
            eligible=rows.eligible,
            at_h=snap.at_h,
            related=rows.related,
            primary_rows=rows.primary,
            kinds=snap.kinds,
            session=snap.session,
        )
        view = _View(snap, rows.vectors, rows.lexical, prepared)
        self._views[key] = view
        return view

    def _snapshot_vectors(self, ids: list, read: ReadView, eligible: np.ndarray) -> np.ndarray:
        """The (n, d) float32 vectors of a snapshot's rows as stored (``read.vectors``; a row
        without a vector is re-embedded if still stored; one that cannot be is zero and not
        ``eligible``)."""
        vecs: Any = read.vectors if read.vectors is not None else np.zeros((len(ids), 0), dtype=np.float32)
        missing = list(read.missing) if read.vectors is not None else list(ids)
        if missing:  # an edge without a vector: re-embed it if still stored (an erased one stays out)
            texts_of = dict(zip(ids, read.snapshot.texts))
            found = {i: self._mem_vectors[i] for i in missing if i in self._mem_vectors}
            found.update(self._embed_missing([i for i in missing if i not in found], {i: texts_of[i] for i in missing}))
            if found:
                vecs = np.array(vecs, dtype=np.float32).reshape(len(ids), -1)
                if vecs.shape[1] == 0:
                    vecs = np.full((len(ids), self.embedder.dim), np.nan, dtype=np.float32)
                pos = {fid: r for r, fid in enumerate(ids)}
                for fid, v in found.items():
                    vecs[pos[fid]] = v
        vecs = np.asarray(vecs, dtype=np.float32)
        vecs = vecs.reshape(len(ids), -1) if len(ids) else np.zeros((0, self.embedder.dim), dtype=np.float32)
        # No NaN may reach a ranking: a row without a vector (an edge erased after the snapshot
        # was read, before its vectors were) gets the zero vector and can never surface, so its
        # cosine is 0 and the lifecycle-linked similarity of its neighbours stays finite.
        bad = ~np.isfinite(vecs).all(axis=1) if vecs.shape[1] else np.ones(len(ids), dtype=bool)
        if bad.any():
            vecs = np.array(vecs, dtype=np.float32)
            if vecs.shape[1] == 0:
                vecs = np.zeros((len(ids), self.embedder.dim), dtype=np.float32)
            vecs[bad] = 0.0
            eligible &= ~bad
        return vecs

    def _rows_of(self, read: ReadView) -> _Rows:
        """The :class:`_Rows` of a read's snapshot, cached by (store version, rows)."""
        snap = read.snapshot
        key = None
        if snap.rows is not None:
            key = (read.version, snap.rows.size, hashlib.blake2b(snap.rows.tobytes(), digest_size=16).digest())
            got = self._rows.get(key)
            if got is not None:
                return got
        ids = list(snap.ids)
        eligible = np.ones(len(ids), dtype=bool)
        if read.sources is not None and snap.rows is not None and len(ids):
            matrix, postings = read.sources
            # snapshot rows are ascending positions: as many as the matrix has means every row
            sub = None if snap.rows.size == matrix.shape[0] else snap.rows
            # a snapshot of under a tenth of the rows (another user's, an early cut) is ranked
            # exactly: its own rows are few, and the index's candidates would be mostly others'
            few = sub is not None and sub.size * 10 < matrix.shape[0]
            ann = read.ann if self.ann is not None and not few else None
            vecs: Any = (
                ApproximateRows(matrix, ann, self.ann, sub)
                if ann is not None and self.ann is not None
                else IndexedRows(matrix, sub)  # the index holds only finite vectors
            )
            lexical = Lexicon(postings, sub)
        else:
            vecs = self._snapshot_vectors(ids, read, eligible)
            lexical = None
        links: Any = read.links  # a row's links: {kind: ids} (related_pairs reads them as dicts)
        related = related_pairs(snap.slots, snap.said_at_h, links, snap.index, snap.slot_codes)
        primary = primary_index(snap.weights) if len(ids) else np.zeros(0, np.int64)
        if lexical is None:
            texts = [self.normalize(t) for t in snap.texts]
            if len(self._tokens) > 2 * len(texts) + 10_000:
                self._tokens.clear()
            new = [t for t in dict.fromkeys(texts) if t not in self._tokens]
            if new:
                self._tokens.update(zip(new, tokenize_many(new)))
            lexical = Lexicon([Postings.build([self._tokens[t] for t in texts])])
        rows = _Rows(vecs, lexical, eligible, related, primary)
        if key is not None:
            if len(self._rows) >= 4:
                self._rows.clear()
            self._rows[key] = rows
        return rows

    def query(
        self,
        text: str,
        at=None,
        k: int = 10,
        intent: str | None = None,
        categories: Sequence[str] | Mapping[str, float] | None = None,
        known_at=None,
        config: PipelineConfig | None = None,
        params: LifecycleParams | None = None,
        include_quarantined: bool = False,
        query_vec: np.ndarray | None = None,
        explain: bool = False,
    ) -> QueryResult:
        """Retrieve the top-k edges for ``text`` as of ``at`` (valid time; default now) and
        ``known_at`` (transaction-time cut; default everything recorded).

        ``intent`` and ``categories`` override query understanding. Every result carries its
        named score terms, the stages that found it and its lifecycle state as of ``at``; with
        ``explain``, also an ``explanation`` (:func:`frcore.bank.pipeline.explanation`: σ and its sources, activation,
        blend, and the additive terms whose sum is the total). Ranking and terms do not depend
        on ``explain``.
        """
        if not isinstance(text, str) or not text.strip():
            raise ValueError("text: the query text is empty")
        if int(k) < 1:
            raise ValueError(f"k: must be ≥ 1, got {k}")
        at_t = parse_time_arg(at, "at") or now().replace(microsecond=0)
        known_t = parse_time_arg(known_at, "known_at")
        cfg = config or _DEFAULT_PIPELINE
        if cfg.k != k:
            from dataclasses import replace as _replace

            cfg = _replace(cfg, k=int(k))
        # One read of the store per ranking (Store.read). A write committed while this query
        # ranked (another process or thread) may have erased a fact the read still holds — and
        # an erase overwrites with zeros the index files the read has mapped, so the ranking may
        # even fail on what it reads (a row of weights now zero). The version read again after
        # ranking — the guard of the erase promise, not a read of facts — makes it rank again,
        # once, against the bank as it is now, whether the first ranking returned or raised.
        for attempt in (0, 1):
            read = self._read(at_t, known_t, include_quarantined)
            try:
                out = self._rank(
                    text, at_t, known_t, include_quarantined, read, cfg, intent, categories, params, query_vec, explain
                )
            except Exception:
                if attempt or self.store.version() == read.version:
                    raise
                continue
            if attempt or self.store.version() == read.version:
                return out
        raise AssertionError("unreachable")

    def _rank(
        self, text, at_t, known_t, include_quarantined, read, cfg, intent, categories, params, query_vec, explain
    ) -> QueryResult:
        """One ranking of :meth:`query` from one read of the store (``read``, a :class:`ReadView`)."""
        view = self._view(read, at_t, known_t, include_quarantined)
        snap = view.snapshot
        qtext = self.normalize(text)
        qv = np.asarray(query_vec if query_vec is not None else self.embedder.embed([qtext])[0], dtype=np.float32)
        if not np.isfinite(qv).all():
            raise ValueError("query vector: non-finite values (NaN or inf); refusing to rank with it")
        if intent is None:
            decision = infer_intent(qtext)
            intent_name, rule = decision.intent, decision.rule
        else:
            intent_name, rule = check_intent(intent), "given"
        routing = routing_from_categories(categories) if categories is not None else self.router.route(qtext, qv)
        approximate = isinstance(view.vectors, ApproximateRows) and len(snap.ids)
        partial = view.vectors.partial(qv) if approximate else None
        cosine: np.ndarray = (
            partial.values if partial is not None else view.vectors @ qv if len(snap.ids) else np.zeros(0)
        )
        finite = (
            partial.finite if partial is not None and partial.finite is not None else bool(np.isfinite(cosine).all())
        )
        if not finite and isinstance(view.vectors, (IndexedRows, ApproximateRows)):
            # the index holds only finite vectors: this one is damaged; rank from SQLite instead
            return self._rank_from_sqlite(
                text, at_t, known_t, include_quarantined, cfg, intent, categories, params, query_vec, explain
            )
        if not finite:  # never reached with finite vectors; NaN must never enter a ranking
            cosine = np.nan_to_num(cosine, nan=0.0, posinf=0.0, neginf=0.0)
        bm = view.lexical.scores(qtext) if len(snap.ids) else np.zeros(0)
        reading = read_question(text, at_t) if (cfg.time_window or cfg.time_order or cfg.coverage) else None
        r: Retrieval = retrieve(
            view.prepared,
            cosine=partial if partial is not None else cosine,
            bm25=bm,
            routing=routing.weights,
            intent=intent_name,
            params=params or self.params,
            config=cfg,
            question=reading,
        )
        if partial is not None and partial.damaged:  # a row computed late was damaged: as above
            return self._rank_from_sqlite(
                text, at_t, known_t, include_quarantined, cfg, intent, categories, params, query_vec, explain
            )
        results = tuple(
            {
                "id": str(snap.ids[x.row]),
                "text": snap.texts[x.row],
                "score": x.score,
                "terms": x.terms,
                "stages": list(x.stages),
                "state": STATE_NAMES[int(snap.state[x.row])],
            }
            for x in r.results
        )
        cand_ids = tuple(str(snap.ids[i]) for i in r.rows.tolist()) if r.rows is not None else ()
        if explain:
            results = explain_results(results, r, cfg, snap, view.prepared.related, cosine)
        asked = None if reading is None else reading.to_dict()
        return QueryResult(
            text, at_t, intent_name, rule, routing.as_dict(), results, r.n_candidates, r.n_distilled, cand_ids, r, asked
        )

    def _rank_from_sqlite(self, text, at_t, known_t, include_quarantined, *rest) -> QueryResult:
        """:meth:`_rank` after the bank's index was found damaged (it held a non-finite vector):
        the store stops reading it, and a new read ranks from SQLite."""
        self.store.distrust_index()
        self._views.clear()
        self._rows.clear()
        read = self._read(at_t, known_t, include_quarantined)
        return self._rank(text, at_t, known_t, include_quarantined, read, *rest)

    def _stored_turns(self) -> tuple[dict[str, FactRecord], TurnIndex]:
        """The user's stored records by id and the index of their turns that explanations read,
        kept per store version: a bank read again and again builds them once (building reads
        every stored turn: 120 ms at 5,000 turns)."""
        version = self.store.version()
        kept = self._explaining
        if kept is not None and kept[0] == version:
            return kept[1], kept[2]
        stored = self.store.edges(user=self.user)
        by_id = {e.id: e for e in stored}
        index = self._deriver.index(stored)  # its own: derivation grows the index it keeps
        if self.store.version() == version:  # nothing written while it was read
            self._explaining = (version, by_id, index)
        return by_id, index

    def explain(self, text: str, *args, **kwargs) -> QueryResult:
        """:meth:`query` with ``explain=True``: every result also carries its ``explanation``,
        and a turn whose lifecycle metadata derivation gives its ``derivation`` (the rule and
        evidence of each derived link and event time, :func:`frcore.bank.derive.explain_derivation`)."""
        # forwarded as given (typed as such: a caller's own ``explain`` is Python's TypeError)
        query: Callable[..., QueryResult] = self.query
        res = query(text, *args, explain=True, **kwargs)
        if res.results:
            by_id, index = self._stored_turns()
            for r in res.results:
                rec = by_id.get(r["id"])
                why = None if rec is None else explain_derivation(rec, index, self.derive)
                if why is not None:
                    r["derivation"] = why
        return res
