"""Preparation: what :func:`~frcore.bank.pipeline.retrieve` reads of a snapshot, built once per
snapshot and valid time (:class:`Prepared`: ages on the three clocks, related pairs, lifecycle
variants, the kernel table), and the kernel's inputs for one query's candidates
(:func:`kernel_inputs`, the packed parameters).

The fr-plus rules (``turn_age``, ``turn_share``, ``floor_reference``, ``stable_activation_floor``;
docs/fr-plus.md) change what the kernel is given here (ages, σ of turns, the floor threshold),
never the score's formula."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Literal

import jax
import numpy as np

from ..._ontology import N_CATEGORIES, as_arrays, primary_index
from ..._packed import N_FEATURES, ROW_START, pack_candidates, pack_params, pack_query
from ..._params import LifecycleParams, param_offset
from ..._scoring import admitted as _admitted, effective_age, effective_rate
from ..._types import N_STATES, ScoreConfig, State
from ..._validate import WEIGHT_SUM_TOL, bucket_size, make_candidates, make_query
from ..records import slot_codes
from ._config import PipelineConfig
from ._recall import episodes, neighbour_rows, row_times

_PACKED: list = [None, None]  # (params object, its packed vector): packed once per parameter set


def _packed_params(params: LifecycleParams) -> np.ndarray:
    """``pack_params(params)`` on the device, packed once per parameter object."""
    if _PACKED[0] is not params:
        _PACKED[:] = [params, jax.device_put(pack_params(params))]  # device-resident: no per-query transfer
    return _PACKED[1]


def clock_ages(said_at_h: np.ndarray, at_h: float) -> np.ndarray:
    """(n, 3) ages on the three clocks: absolute = hours from said-at to the query time ``at_h``;
    inter-session = hours from said-at to the latest said-at in the bank (time inside the
    conversation's own timeline, idle time after the last session excluded); conversational =
    number of items said after it."""
    said = np.asarray(said_at_h, dtype=np.float64)
    if said.size == 0:
        return np.zeros((0, 3))
    absolute = np.maximum(at_h - said, 0.0)
    latest = min(float(said.max()), at_h)
    inter = np.maximum(latest - said, 0.0)
    order = np.sort(said)
    after = said.size - np.searchsorted(order, said, side="right")
    return np.stack([absolute, inter, after.astype(np.float64)], axis=1)


def related_pairs(
    slots: Sequence, said_at_h: np.ndarray, links: Sequence[dict], index: dict, codes: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(src, dst) row pairs: src supersedes / contradicts / retracts / is tentative for dst (by
    link), or src is a later edge than dst in the same slot (by said-at, ties by row).
    ``codes``: the slots' codes when known (:attr:`frcore.bank.records._lifecycle.Snapshot.slot_codes`,
    equal exactly when the slots are; ``slots`` is then not read). The pairs of one row, as source
    or as related row, come in the same order whatever the codes."""
    src: list[int] = []
    dst: list[int] = []
    for i in itertools.compress(range(len(links)), links):  # the rows with links (most have none)
        lk = links[i]
        for targets in lk.values():
            for t in (targets,) if isinstance(targets, str) else targets:
                j = index.get(t)
                if j is not None and j != i:
                    src.append(i)
                    dst.append(j)
    link_src, link_dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    # Slot pairs: each slot's rows in (said-at, row) order; every row pairs with all before it.
    code = slot_codes(slots) if codes is None else np.asarray(codes, dtype=np.int64)
    rows = np.flatnonzero(code >= 0)
    if rows.size < 2:
        return link_src, link_dst
    said = np.asarray(said_at_h, dtype=np.float64)
    rows = rows[np.lexsort((rows, said[rows], code[rows]))]
    c = code[rows]
    starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
    sizes = np.diff(np.r_[starts, rows.size])
    before = np.arange(rows.size) - np.repeat(starts, sizes)  # rows before each in its slot
    total = int(before.sum())
    if total == 0:
        return link_src, link_dst
    offsets = np.repeat(np.cumsum(before) - before, before)
    first = np.repeat(np.repeat(starts, sizes), before)
    slot_src = np.repeat(rows, before)
    slot_dst = rows[first + np.arange(total) - offsets]
    return np.concatenate([link_src, slot_src]), np.concatenate([link_dst, slot_dst])


def overwrite_keep(state: np.ndarray, slots: Sequence, said_at_h: np.ndarray) -> np.ndarray:
    """Rows an overwrite store still holds: drop superseded and retracted edges, and in each
    contested slot all but the newest edge (an UPDATE overwrites the old value)."""
    keep = (state != State.SUPERSEDED) & (state != State.RETRACTED)
    newest: dict[object, int] = {}
    for i in np.flatnonzero(state == State.CONTESTED).tolist():
        s = slots[i]
        if s is None:
            continue
        j = newest.get(s)
        if j is None or said_at_h[i] >= said_at_h[j]:
            newest[s] = i
    for i in np.flatnonzero(state == State.CONTESTED).tolist():
        s = slots[i]
        if s is not None and newest[s] != i:
            keep[i] = False
    return keep


def admitted(
    state: np.ndarray,
    numeric: np.ndarray,
    hours_to_event: np.ndarray,
    typed: np.ndarray,
    intent: int,
    config: ScoreConfig,
) -> np.ndarray:
    """Which rows the intent admits (used by distillation): the kernel's own compatibility rule,
    :func:`frcore._scoring.admitted` (the one behind :func:`frcore.compatibility_mask`), over
    host arrays. ``hours_to_event`` is NaN for a row without an event time; ``typed``: the row
    carries lifecycle metadata (:attr:`Prepared.typed`)."""
    has_event = ~np.isnan(hours_to_event)
    he = np.where(has_event, hours_to_event, 0.0)
    return _admitted(state, intent, has_event, he, numeric, typed, config, xp=np)


class Prepared:
    """Per-snapshot arrays of :func:`retrieve` that depend only on the snapshot and ``at``
    (hours to event, ages, rows by primary category, the grouping of related pairs, the
    lifecycle variants of the state and alive mask), built once and reused by every query
    against that snapshot. Everything query-dependent is computed per call."""

    def __init__(
        self,
        *,
        weights: np.ndarray,
        said_at_h: np.ndarray,
        event_h: np.ndarray,
        state: np.ndarray,
        confidence: np.ndarray,
        numeric: np.ndarray,
        slots: Sequence,
        eligible: np.ndarray,
        at_h: float,
        related: tuple[np.ndarray, np.ndarray] | None = None,
        primary_rows: np.ndarray | None = None,
        kinds: Sequence | None = None,
        session: np.ndarray | None = None,
    ) -> None:
        self.at_h = at_h
        self.session = None if session is None else np.asarray(session, dtype=np.int64)
        self._episodes: np.ndarray | None = None
        self._neighbours: tuple[np.ndarray, np.ndarray] | None = None
        self._times: np.ndarray | None = None
        self.weights = weights
        self.said_at_h = said_at_h
        self.state = np.asarray(state)
        self.n = self.state.shape[0]
        self.confidence = np.asarray(confidence)
        self.numeric = np.asarray(numeric, bool)
        self.slots = slots
        self.eligible = np.asarray(eligible, dtype=bool)
        self.hours_to_event = np.asarray(event_h, dtype=np.float64) - at_h
        self._ages: np.ndarray | None = None
        self._primary = primary_rows
        self._by_primary: dict[int, np.ndarray] = {}
        self.related = related
        self._variants: dict[tuple[bool, bool], tuple] = {}
        self._turn_orders: dict[tuple, tuple] = {}  # turn_evidence(), per lifecycle variant and rules
        self._kernel_table: np.ndarray | Literal[False] | None = None  # False: some row fails the checks
        self._admitted: dict[tuple, np.ndarray] = {}  # admitted mask per (variant, intent, switches)
        self._states_valid: dict[tuple, bool] = {}  # state indices in range, per variant
        if kinds is not None and len(kinds) != self.n:
            raise ValueError(f"Prepared.kinds: expected {self.n} entries (one per row), got {len(kinds)}")
        #: (n,) bool: the row is an unextracted turn (``kind == "turn"``) / a typed fact (``"fact"``);
        #: both all False without kinds (no row is known to be either: the fr-plus rules that
        #: tell them apart change nothing)
        self.turn = np.zeros(self.n, dtype=bool)
        self.fact = np.zeros(self.n, dtype=bool)
        if kinds is not None:
            kind = np.asarray(kinds, dtype=object)
            self.turn = kind == "turn"
            self.fact = kind == "fact"
        self._typed: np.ndarray | None = None
        self._evidence_turn: np.ndarray | None = None
        self._slotted: np.ndarray | None = None
        self._rule_ages: dict[tuple, tuple] = {}  # ages under the rules, per (rules, decay, params id): (params, ages)
        self._rule_tables: dict[tuple, tuple] = {}  # kernel table for those ages: (params, table or False)
        self._turn_share: dict[int, tuple] = {}  # factor of turn_share="least", per params id: (params, factor)
        self._related_csr: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # by source / related row

    @property
    def typed(self) -> np.ndarray:
        """(n,) bool: the row carries lifecycle metadata — a typed fact (``kind == "fact"``), or a
        slot, an event time, or a link (as source or target: a row of :attr:`related`'s link
        pairs; a slot pair's rows have slots) — an event time or a link types a row that is not
        an :attr:`evidence_turn` only (a raw turn's event time and links order it and place it in
        time; they do not make it a fact that ``upcoming`` requires to lie ahead). The
        kernel's ``typed`` input: with ``ScoreConfig.untyped_upcoming``, ``upcoming`` admits the
        other rows (raw turns) without an event ahead."""
        if self._typed is None:
            typed = self.fact | self.slotted
            stated = ~np.isnan(self.hours_to_event)
            if self.related is not None:
                for rows in self.related:
                    stated[np.asarray(rows, dtype=np.int64)] = True
            typed |= stated & ~self.evidence_turn
            self._typed = typed
        return self._typed

    @property
    def evidence_turn(self) -> np.ndarray:
        """(n,) bool: a raw turn without a slot — evidence of what was said, scored by σ under
        ``untyped_score="sigma"`` whatever links, confidence or event time it carries (given or
        derived): those act through its lifecycle state (the mask, the raw-turn rules), never
        through its score (docs/benchmark.md, "FR-Bank's retrieval")."""
        if self._evidence_turn is None:
            self._evidence_turn = self.turn & ~self.slotted
        return self._evidence_turn

    @property
    def slotted(self) -> np.ndarray:
        """(n,) bool: the row has a slot."""
        if self._slotted is None:
            self._slotted = np.fromiter((s is not None for s in self.slots), dtype=bool, count=self.n)
        return self._slotted

    @property
    def episode(self) -> np.ndarray:
        """(n,) episode codes (:func:`~frcore.bank.pipeline._recall.episodes`: a session, else a said-at day)."""
        if self._episodes is None:
            self._episodes = episodes(self.session, np.asarray(self.said_at_h, dtype=np.float64))
        return self._episodes

    @property
    def neighbours(self) -> tuple[np.ndarray, np.ndarray]:
        """(previous, next) row of each row in its episode, by said-at then row; −1 at an end."""
        if self._neighbours is None:
            self._neighbours = neighbour_rows(self.episode, np.asarray(self.said_at_h, dtype=np.float64))
        return self._neighbours

    @property
    def times(self) -> np.ndarray:
        """(n,) hours since the epoch when each row was said or happened (its event time, else its said-at)."""
        if self._times is None:
            self._times = row_times(np.asarray(self.said_at_h, dtype=np.float64), self.hours_to_event + self.at_h)
        return self._times

    @property
    def ages(self) -> np.ndarray:
        if self._ages is None:
            self._ages = clock_ages(self.said_at_h, self.at_h)
        return self._ages

    def related_of(self, rows: np.ndarray, by: str = "source") -> tuple[np.ndarray, np.ndarray]:
        """(source, related row) of the related pairs whose source (``by="source"``) or related
        row (``by="related"``) is one of ``rows``."""
        got = self._related_csr.get(by)
        if got is None:
            src, dst = self.related if self.related is not None else (np.zeros(0, np.int64), np.zeros(0, np.int64))
            src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
            key = src if by == "source" else dst
            order = np.argsort(key, kind="stable")
            indptr = np.zeros(self.n + 1, dtype=np.int64)
            np.cumsum(np.bincount(key, minlength=self.n), out=indptr[1:])
            got = self._related_csr[by] = (indptr, src[order], dst[order])
        indptr, src, dst = got
        starts = indptr[rows]
        counts = indptr[rows + 1] - starts
        total = int(counts.sum())
        if not total:
            return src[:0], dst[:0]
        pos = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(total)
        return src[pos], dst[pos]

    def rows_of_primary(self, cat: int) -> np.ndarray:
        """Rows whose primary category (argmax weight, first on ties) is ``cat``, ascending."""
        rows = self._by_primary.get(cat)
        if rows is None:
            primary = primary_index(self.weights) if self._primary is None else self._primary
            rows = self._by_primary[cat] = np.flatnonzero(primary == cat)
        return rows

    def variant(self, untyped_expiry: bool, overwrite: bool):
        """(state, alive mask, alive rows or None when every row is alive) for the pipeline's
        lifecycle switches (untyped expiry rewrites states; overwrite drops rows)."""
        key = (untyped_expiry, overwrite)
        v = self._variants.get(key)
        if v is None:
            state = self.state
            if untyped_expiry:
                state = state.copy()
                he = self.hours_to_event
                past = ~np.isnan(he) & (np.nan_to_num(he, nan=0.0) < 0)
                state[past & ((state == State.ACTIVE) | (state == State.CONTESTED))] = State.EXPIRED
            alive = self.eligible.copy()
            if overwrite:
                alive &= overwrite_keep(state, self.slots, self.said_at_h)
            v = self._variants[key] = (state, alive, None if alive.all() else np.flatnonzero(alive))
        return v

    def turn_evidence(
        self, untyped_expiry: bool, overwrite: bool, order: bool, keep_expired: bool
    ) -> tuple[np.ndarray, dict[int, set[int]], np.ndarray]:
        """The lifecycle variant's states under the raw-turn rules (``turn_supersession="order"``:
        a superseded raw turn whose every superseding edge is a raw turn made active;
        ``turn_expiry="keep"``: an expired raw turn made active), row → the rows superseding it,
        and the rows made active (:func:`turn_evidence`; cached per variant and rules)."""
        key = (untyped_expiry, overwrite, order, keep_expired)
        got = self._turn_orders.get(key)
        if got is None:
            state = self.variant(untyped_expiry, overwrite)[0]
            got = self._turn_orders[key] = turn_evidence(self.turn, self.related, state, order, keep_expired)
        return got

    def states_valid(self, untyped_expiry: bool, overwrite: bool) -> bool:
        """Whether every state of a lifecycle variant is a valid state index (cached)."""
        key = (untyped_expiry, overwrite)
        ok = self._states_valid.get(key)
        if ok is None:
            ok = self._states_valid[key] = _state_ok(self.variant(untyped_expiry, overwrite)[0])
        return ok

    def admitted_rows(self, untyped_expiry: bool, overwrite: bool, intent: int, config: ScoreConfig) -> np.ndarray:
        """:func:`admitted` over every row of a lifecycle variant, for one intent (cached: it
        depends on the snapshot, not on the query's text)."""
        key = (untyped_expiry, overwrite, intent, config.lifecycle, config.numeric_exemption, config.untyped_upcoming)
        ok = self._admitted.get(key)
        if ok is None:
            state = self.variant(untyped_expiry, overwrite)[0]
            ok = self._admitted[key] = admitted(state, self.numeric, self.hours_to_event, self.typed, intent, config)
        return ok

    def rule_ages(self, config: PipelineConfig, params: LifecycleParams) -> tuple[tuple | None, np.ndarray]:
        """(key, (n, 3) ages) under the pipeline's age rules (``turn_age``,
        ``stable_activation_floor``); key None and :attr:`ages` when neither is on. Cached per
        rule set, decay mode and parameter set (the activation floor depends on the rates, clocks
        and floors)."""
        if (config.turn_age, config.stable_activation_floor) == ("said", False):
            return None, self.ages
        key = (config.turn_age, config.stable_activation_floor, config.score.decay, id(params))
        got = self._rule_ages.get(key)
        if got is not None and got[0] is params:
            return key, got[1]
        ages = np.array(self.ages, dtype=np.float64)
        fact = self.fact
        if config.turn_age == "oldest_fact":
            facts = fact & self.eligible
            if facts.any() and self.turn.any():
                ages[self.turn] = ages[facts].max(axis=0)
        if config.stable_activation_floor and fact.any():
            ages = activation_floor_ages(ages, self.weights, fact, params, config.score)
        self._rule_ages[key] = (params, ages)
        return key, ages

    def turn_share_factor(self, params: LifecycleParams, config: ScoreConfig) -> np.ndarray | None:
        """(n,) factor of σ under ``turn_share="least"``: (1 − max_c α_c) / (1 − α_p) for a turn
        (α_p of its primary category), 1 for a typed fact; None when it changes nothing (no turn,
        no eligible typed fact, or one α for every category under ``global_alpha``)."""
        if config.global_alpha:
            return None
        facts = self.fact & self.eligible
        if not (self.turn.any() and facts.any()):
            return None
        got = self._turn_share.get(id(params))
        if got is not None and got[0] is params:
            return got[1]
        alpha = np.asarray(params.alpha, dtype=np.float64)
        primary = self._primary
        if primary is None:
            primary = primary_index(self.weights)
        own = 1.0 - alpha[primary]
        least = 1.0 - float(alpha.max())
        factor = np.ones(self.n)
        share = self.turn & (own > 0)
        factor[share] = least / own[share]
        self._turn_share[id(params)] = (params, factor)
        return factor

    def rule_ages_of(self, ages_key: tuple) -> np.ndarray:
        """The ages :meth:`rule_ages` cached under ``ages_key``."""
        return self._rule_ages[ages_key][1]

    def kernel_table(self, ages_key: tuple | None = None, params: LifecycleParams | None = None) -> np.ndarray | None:
        """:meth:`_kernel_table_own` with the ages of :meth:`rule_ages` (``ages_key`` from it, with the
        same ``params``); ``ages_key`` None: the snapshot's own ages."""
        if ages_key is None:
            return self._kernel_table_own()
        got = self._rule_tables.get(ages_key)
        if got is None or got[0] is not params:
            base = self._kernel_table_own()
            table: np.ndarray | Literal[False] = False
            if base is not None:
                ages = self._rule_ages[ages_key][1]
                if bool(np.isfinite(ages).all()) and bool((ages >= 0).all()):
                    aged = base.copy()
                    aged[:, _COL["ages"] : _COL["ages"] + 3] = ages
                    table = aged
            got = self._rule_tables[ages_key] = (params, table)
        return got[1] if got[1] is not False else None

    def _kernel_table_own(self) -> np.ndarray | None:
        """Every row's kernel inputs as an (n, F) float32 table in the packed layout of
        :func:`frcore.pack_candidates` (weights, ages, has_event, hours to event with NaN → 0,
        confidence, numeric, typed; sim and state are the query's, filled per call; valid = 1), or None
        when some row would fail :func:`frcore.make_candidates`' checks — then each query calls
        it, and it raises on the offending candidate exactly as before."""
        if self._kernel_table is None:
            w = np.asarray(self.weights, dtype=np.float64)
            a = np.asarray(self.ages, dtype=np.float64)
            he = self.hours_to_event
            conf = np.asarray(self.confidence, dtype=np.float64)
            ok = (
                w.shape == (self.n, N_CATEGORIES)
                and a.shape == (self.n, 3)
                and conf.shape == (self.n,)
                and bool(np.isfinite(w).all())
                and bool((w >= 0).all())
                and bool((np.abs(w.sum(axis=1) - 1.0) <= WEIGHT_SUM_TOL).all())
                and bool(np.isfinite(a).all())
                and bool((a >= 0).all())
                and not bool(np.isinf(he).any())
                and bool(((conf >= 0) & (conf <= 1)).all())
            )
            if ok:
                has_event = ~np.isnan(he)
                table = np.zeros((self.n, N_FEATURES), dtype=np.float32)
                table[:, _COL["weights"] : _COL["weights"] + N_CATEGORIES] = w
                table[:, _COL["ages"] : _COL["ages"] + 3] = a
                table[:, _COL["has_event"]] = has_event
                table[:, _COL["hours_to_event"]] = np.where(has_event, he, 0.0)
                table[:, _COL["confidence"]] = conf
                table[:, _COL["numeric"]] = self.numeric
                table[:, _COL["typed"]] = self.typed
                table[:, _COL["valid"]] = 1.0
                self._kernel_table = table
            else:
                self._kernel_table = False
        return self._kernel_table if self._kernel_table is not False else None


#: categories whose items end at an event (the ontology's ``expires at event``)
_EXPIRES = np.asarray(as_arrays().expires_at_event, dtype=bool)


def activation_floor_ages(
    ages: np.ndarray, weights: np.ndarray, fact: np.ndarray, params: LifecycleParams, config: ScoreConfig
) -> np.ndarray:
    """Ages under ``stable_activation_floor``: for a ``fact`` row (a typed fact) whose primary category c (the
    kernel's: argmax weight, first on ties) does not expire at its event time and has F_c > 0,
    the three clock ages scaled by one factor so that age_eff ≤ −ln F_c / λ_eff, hence
    exp(−λ_eff · age_eff) ≥ F_c. λ_eff and age_eff are the kernel's own functions
    (:func:`frcore.effective_rate`, :func:`frcore.effective_age`) under ``config.decay``; other
    rows are returned unchanged."""
    ages = np.array(ages, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if ages.shape[0] == 0:
        return ages
    floors = np.asarray(params.floors, dtype=np.float64)
    stable = ~_EXPIRES & (floors > 0)
    primary = primary_index(w)
    a_min = np.where(np.asarray(fact, bool) & stable[primary], floors[primary], 0.0)
    rows = np.flatnonzero(a_min > 0)
    if rows.size == 0:
        return ages
    # JAX compiles each of these elementwise operations once per input shape: the rows are padded
    # to a power of two (with uniform weights and zero ages, dropped after) so that a bank growing
    # by a fact does not compile them again (a few ms each; 50-70 ms per query after a write)
    n = rows.size
    size = _padded_rows(n)
    w_rows = np.full((size, w.shape[1]), 1.0 / w.shape[1], dtype=np.float64)
    w_rows[:n] = w[rows]
    age_rows = np.zeros((3, size), dtype=np.float64)
    age_rows[:, :n] = ages[rows].T
    rate = np.broadcast_to(np.asarray(effective_rate(params, w_rows, config), dtype=np.float64), (size,))[:n]
    age = np.asarray(effective_age(params, w_rows, age_rows), dtype=np.float64)[:n]
    cap = -np.log(np.minimum(a_min[rows], 1.0)) / rate  # a_min = 1: age 0
    over = age > cap
    factor = np.ones(rows.size)
    factor[over] = cap[over] / age[over]
    ages[rows] *= factor[:, None]
    return ages


def _padded_rows(n: int) -> int:
    """The rows :func:`activation_floor_ages` computes for ``n``: the next power of two, at least 8."""
    return max(8, 1 << (int(n) - 1).bit_length())


def _state_ok(st: np.ndarray) -> bool:
    return np.issubdtype(st.dtype, np.integer) and bool(((st >= 0) & (st < N_STATES)).all())


#: column of each field in a row of the kernel table (a row of frcore.pack_candidates' matrix)
_COL = ROW_START
#: a padding candidate in the packed layout, as make_candidates pads (masked by valid = 0)
_PAD_ROW = pack_candidates(
    make_candidates(
        sim=np.zeros(0),
        weights=np.zeros((0, N_CATEGORIES)),
        ages=np.zeros((0, 3)),
        state=np.zeros(0, np.int64),
        pad_to=1,
        device=False,
    )
)[:, 0]


def kernel_inputs(
    prep: Prepared,
    cand: np.ndarray,
    sim: np.ndarray,
    state: np.ndarray,
    intent: int,
    routing: np.ndarray,
    states_valid: bool = False,
    ages_key: tuple | None = None,
    params: LifecycleParams | None = None,
):
    """(candidates (F, bucket), query (1 + C,)) as float32 host arrays in the packed layout,
    equal to ``pack_candidates(make_candidates(..., pad_to=bucket_size(k)))`` and
    ``pack_query(make_query(...))`` for these rows. The per-row checks were done once per
    snapshot (:meth:`Prepared.kernel_table`), so only the query's own values are checked here;
    anything that would not pass goes through make_candidates / make_query, which raise as before.
    ``states_valid``: every entry of ``state`` is known to be a valid state index (checked once
    per snapshot variant by :meth:`Prepared.states_valid`). ``ages_key`` (with its ``params``):
    the ages of :meth:`Prepared.rule_ages` instead of the snapshot's own."""
    k = cand.size
    table = prep.kernel_table(ages_key, params)
    ages = prep.ages if ages_key is None else prep.rule_ages_of(ages_key)
    st = state[cand]
    m = bucket_size(k)
    if table is None or not bool(np.isfinite(sim).all()) or not (states_valid or _state_ok(st)):
        cmat = pack_candidates(
            make_candidates(
                sim=np.clip(sim, 0.0, 1.0),
                weights=prep.weights[cand],
                ages=ages[cand],
                state=st,
                hours_to_event=prep.hours_to_event[cand],
                confidence=prep.confidence[cand],
                numeric=prep.numeric[cand],
                typed=prep.typed[cand],
                pad_to=m,
                device=False,
            )
        )
    else:
        rows = np.empty((m, N_FEATURES), dtype=np.float32)
        np.take(table, cand, axis=0, out=rows[:k])
        rows[:k, _COL["sim"]] = np.clip(sim, 0.0, 1.0)
        rows[:k, _COL["state"]] = st
        rows[k:] = _PAD_ROW
        cmat = np.ascontiguousarray(rows.T)
    r = np.asarray(routing, dtype=np.float64)
    rl = r.tolist() if r.shape == (N_CATEGORIES,) else None
    if rl is not None and all(0.0 <= x <= 1.0 for x in rl):  # in range (so finite): clipping changes nothing
        qvec = np.array([intent, *rl], dtype=np.float32)
    else:
        qvec = pack_query(make_query(intent, np.clip(r, 0.0, 1.0), device=False))
    return cmat, qvec


_HOST_PACKED: list = [None, None, 0]  # (params object, its packed host vector, offset of floor_sim_threshold)


def relative_floor_params(params: LifecycleParams, sigma_max: float) -> np.ndarray:
    """The packed parameter vector with the floor's threshold θ_F replaced by θ_F · σ_max
    (``floor_reference="query_max"``); θ_F unchanged when σ_max is not positive."""
    if _HOST_PACKED[0] is not params:
        _HOST_PACKED[:] = [params, pack_params(params), param_offset("floor_sim_threshold")]
    vec = _HOST_PACKED[1].copy()
    if sigma_max > 0:
        vec[_HOST_PACKED[2]] = np.float32(vec[_HOST_PACKED[2]] * np.float32(sigma_max))
    return vec


def turn_evidence(
    turn: np.ndarray,
    related: tuple[np.ndarray, np.ndarray] | None,
    state: np.ndarray,
    order: bool = True,
    keep_expired: bool = False,
) -> tuple[np.ndarray, dict[int, set[int]], np.ndarray]:
    """Raw turns (``turn``) as evidence: with ``order``, every superseded or contested raw turn
    whose every superseding or contesting edge (by the ``related`` pairs: the source of a link
    to it) is a raw turn made active, and row → the rows superseding or contesting it; a
    contested raw turn contested only through links between raw turns is made active too (the
    source of a soft link: both are kept). With ``keep_expired``, every expired raw turn made
    active. Returns the states, that map, and the rows made active (ascending)."""
    by: dict[int, set[int]] = {}
    sources: set[int] = set()
    typed: set[int] = set()
    if order and related is not None and turn.any():
        src, dst = (np.asarray(x, dtype=np.int64) for x in related)
        hit = (state[dst] == State.SUPERSEDED) | (state[dst] == State.CONTESTED)
        for a, b in zip(src[hit].tolist(), dst[hit].tolist()):
            by.setdefault(b, set()).add(a)
            if state[a] == State.CONTESTED:
                sources.add(a)
            if not (turn[a] and turn[b]):
                typed.update((a, b))
        by = {b: s for b, s in by.items() if b not in typed}
    kept = np.zeros(state.shape, dtype=bool)
    kept[list(by)] = True
    kept[[a for a in sources if a not in typed]] = True
    if keep_expired:
        kept |= turn & (state == State.EXPIRED)
    if not kept.any():
        return state, by, np.zeros(0, np.int64)
    state = np.where(kept, np.asarray(State.ACTIVE, dtype=state.dtype), state)
    return state, by, np.flatnonzero(kept)
