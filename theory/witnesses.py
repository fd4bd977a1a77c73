"""Non-identifiability witnesses: Theorems 1, 2/2′, 3′, 3″ and A.13, scored by frcore itself.

The model (ours, stated once). A *task* is a history of fact edges plus a query intent and the
edge that must rank first. Each edge carries what the paper's basis names: similarity σ, ages Δt
(absolute hours, inter-session hours, messages), category c, slot key κ, event time h (hours
from the query to the event) and the history event that targets it (a retraction), plus the
extractor's confidence, a numeric flag and typed links. The lifecycle state ξ is *derived* from
the history (never given) by **FR-Bank's own rule** — :func:`frcore.bank.derive_states`, the
function the bank serves — on the history as FR-Bank records it (:func:`to_records`: said at
query time − age, event at query time + h, retractions as ``retract`` transitions). No module of
``theory/`` derives states by rules of its own; a change to the bank's rule reaches every theorem.

A system restricted to a subset S of the basis {c, κ, ξ, h} sees, besides the query intent, the
*restricted view* of each candidate: (σ, Δt) plus the components in S, with ξ derived by the
same rule from the S-visible history only (:func:`restricted_view`): without κ no edge has a
slot, without h no edge has an event time, without c every edge carries FR-Bank's category for
uncategorised content (OTHER, which does not expire), and without ξ there is no state at all.
Any deterministic ranker is a function of that view. If two equiprobable tasks have identical
views but require different top-1 edges, every such ranker errs on at least one: P_e ≥ 1/2. The
full basis is frcore's own score (:func:`frcore.score_candidates` over
:func:`frcore.make_candidates`), which must get every witness task right.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

import frcore as fr
import frcore.bank as bank
from frcore import Category, State

from ._base import ClaimResult, claim
from .diagnose import formal_diagnosis
from .verdict import FORMAL, statements

#: The metadata basis (category, slot key, lifecycle state, event time), in the paper's order.
BASIS: tuple[str, ...] = ("c", "kappa", "xi", "h")
FULL = frozenset(BASIS)
_PAD = 8  # every witness is scored in one shape bucket: one compilation for all
#: The valid time of every query (any fixed time: only differences enter the rules and the score).
QUERY_TIME = datetime(2024, 1, 1)
#: The categories of an edge whose category is not visible: FR-Bank's own default for content
#: that arrives without categories (the "+1" catch-all; it does not expire at an event).
UNKNOWN_CATEGORIES: Mapping[str, float] = {Category.OTHER.name: 1.0}


@dataclass(frozen=True)
class Edge:
    """One fact edge of a history.

    Attributes:
      id: name used in witnesses and reports.
      sim: σ to the query, in [0, 1].
      ages: (absolute hours, inter-session hours, messages) since the edge was said.
      category: primary category name (the one-hot weight unless ``weights`` is given).
      slot: slot key κ (None or "": no slot).
      hours_to_event: event time − query time in hours (None: no event).
      retracted: a later retraction in the history targets this edge.
      confidence: extractor confidence in [0, 1] (< 0.7: a soft supersession).
      numeric: the edge carries a number, amount or date.
      links: (kind, target id) pairs — ``supersedes``, ``contradicts``, ``tentative_for``,
        ``retracts`` — to other edges of the history.
      weights: soft category weights as (name, w) pairs (None: one-hot ``category``).
    """

    id: str
    sim: float
    ages: tuple[float, float, float]
    category: str
    slot: str | None
    hours_to_event: float | None = None
    retracted: bool = False
    confidence: float = 1.0
    numeric: bool = False
    links: tuple[tuple[str, str], ...] = ()
    weights: tuple[tuple[str, float], ...] | None = None

    def category_weights(self) -> dict[str, float]:
        """The soft category weights (one-hot on ``category`` unless ``weights`` is given)."""
        return dict(self.weights) if self.weights is not None else {self.category: 1.0}


@dataclass(frozen=True)
class Task:
    """A history, a query intent and the edge that must rank first (by id)."""

    name: str
    intent: str
    edges: tuple[Edge, ...]
    required_top: str
    note: str = ""

    def __post_init__(self) -> None:
        ids = [e.id for e in self.edges]
        if len(set(ids)) != len(ids):
            raise ValueError(f"Task {self.name!r}: duplicate edge ids {ids}")
        if self.required_top not in ids:
            raise ValueError(f"Task {self.name!r}: required_top {self.required_top!r} is not an edge id {ids}")
        fr.intent_index(self.intent)

    @property
    def required_index(self) -> int:
        return [e.id for e in self.edges].index(self.required_top)


def _visible(components: Iterable[str]) -> frozenset[str]:
    s = frozenset(components)
    bad = sorted(s - FULL)
    if bad:
        raise ValueError(f"components: unknown basis component(s) {bad}; expected a subset of {BASIS}")
    return s


def to_records(edges: Sequence[Edge], components: Iterable[str] = BASIS) -> tuple[list, list[dict]]:
    """The history as FR-Bank records it, restricted to ``components``: one
    :class:`frcore.bank.FactRecord` per edge (said at :data:`QUERY_TIME` − absolute age; event at
    :data:`QUERY_TIME` + h with h visible; slot with κ visible; categories with c visible, else
    :data:`UNKNOWN_CATEGORIES`; links and retractions with ξ visible) and the ``retract``
    transitions of the retracted edges (effective at the query)."""
    vis = _visible(components)
    records, transitions = [], []
    for e in edges:
        links: dict[str, tuple[str, ...]] = {}
        if "xi" in vis:
            for kind, target in e.links:
                links[kind] = links.get(kind, ()) + (target,)
        records.append(
            bank.FactRecord(
                id=e.id,
                text=e.id,
                categories=e.category_weights() if "c" in vis else dict(UNKNOWN_CATEGORIES),
                said_at=QUERY_TIME - timedelta(hours=float(e.ages[0])),
                event_time=None
                if e.hours_to_event is None or "h" not in vis
                else QUERY_TIME + timedelta(hours=float(e.hours_to_event)),
                slot=(e.slot or None) if "kappa" in vis else None,
                confidence=float(e.confidence),
                numeric=bool(e.numeric),
                links=links,
            )
        )
        if e.retracted and "xi" in vis:
            transitions.append({"edge_id": e.id, "kind": "retract", "effective_at": QUERY_TIME})
    return records, transitions


def derive_states(edges: Sequence[Edge], components: Iterable[str] = BASIS) -> tuple[State, ...] | None:
    """Lifecycle states ξ as of the query, derived by FR-Bank's rule
    (:func:`frcore.bank.derive_states`) from the history restricted to ``components``
    (:func:`to_records`). Without ξ there is no state (``None``: a flat store)."""
    vis = _visible(components)
    if "xi" not in vis:
        return None
    records, transitions = to_records(edges, vis)
    states = bank.derive_states(records, QUERY_TIME, transitions)
    if np.any(states < 0):
        raise ValueError(f"edges: an edge is said after the query (ages {[e.ages[0] for e in edges]})")
    return tuple(State(int(s)) for s in states)


def _edge_view(e: Edge, vis: frozenset[str], state: State | None) -> tuple:
    view: tuple = (("sigma", e.sim), ("dt", tuple(e.ages)))
    if "c" in vis:
        view += (("c", e.category),)
    if "kappa" in vis:
        view += (("kappa", e.slot),)
    if "xi" in vis:
        if state is None:
            raise ValueError(f"state: edge {e.id!r} needs its lifecycle state for a view that shows xi")
        view += (("xi", State(state).name.lower()),)
    if "h" in vis:
        view += (("h", e.hours_to_event),)
    return view


def restricted_view(task: Task, components: Iterable[str]) -> tuple:
    """What a system restricted to ``components`` (+ σ, Δt) sees: (intent, per-candidate views).

    ξ, when visible, is derived from the restricted history (:func:`derive_states`), so equal
    restricted histories give equal views. Edge ids are not part of the view.
    """
    vis = _visible(components)
    # The state is derived from the S-visible history only: erase what S cannot see first.
    ids = {e.id: str(i) for i, e in enumerate(task.edges)}
    hidden = [
        Edge(
            id=ids[e.id],
            sim=e.sim,
            ages=e.ages,
            category=e.category if "c" in vis else Category.OTHER.name,
            slot=e.slot if "kappa" in vis else None,
            hours_to_event=e.hours_to_event if "h" in vis else None,
            retracted=e.retracted if "xi" in vis else False,
            confidence=e.confidence,
            numeric=e.numeric,
            links=tuple((k, ids[t]) for k, t in e.links if t in ids) if "xi" in vis else (),
            weights=e.weights if "c" in vis else None,
        )
        for e in task.edges
    ]
    states = derive_states(hidden, vis)
    return (
        task.intent,
        tuple(_edge_view(e, vis, None if states is None else states[i]) for i, e in enumerate(task.edges)),
    )


def sigma_dt_profile(task: Task) -> tuple:
    """The (σ, Δt) profile of a task's candidates (the view of the empty subset, minus intent)."""
    return restricted_view(task, ())[1]


# --------------------------------------------------------------------------- frcore's score


def edges_to_candidates(
    edges: Sequence[Edge], states: Sequence[int] | None, pad_to: int | None = None, *, device: bool = True
) -> fr.Candidates:
    """frcore candidates for a history with the given states (None: all active, a flat store),
    padded to ``pad_to`` rows (default: the witnesses' shared bucket); ``device=False``: the
    validated host (NumPy) arrays."""
    n = len(edges)
    return fr.make_candidates(
        sim=[e.sim for e in edges],
        weights=[e.category_weights() for e in edges],
        ages=[list(e.ages) for e in edges],
        state=np.array([int(s) for s in states] if states is not None else [0] * n, dtype=np.int32),
        hours_to_event=[np.nan if e.hours_to_event is None else e.hours_to_event for e in edges],
        confidence=[e.confidence for e in edges],
        numeric=[e.numeric for e in edges],
        pad_to=pad_to or max(_PAD, fr.bucket_size(n)),
        device=device,
    )


def to_candidates(task: Task, components: Iterable[str] = BASIS) -> fr.Candidates:
    """frcore candidates for a task, states derived with ``components`` (default: full basis)."""
    return edges_to_candidates(task.edges, derive_states(task.edges, components))


def frcore_scores(task: Task, config: fr.ScoreConfig | None = None) -> np.ndarray:
    """frcore's total score s of each candidate (−inf where masked)."""
    terms = fr.score_candidates(
        fr.default_params(), fr.make_query(task.intent), to_candidates(task), config or fr.ScoreConfig()
    )
    return np.asarray(terms.total, dtype=np.float64)[: len(task.edges)]


def frcore_ranking(task: Task, config: fr.ScoreConfig | None = None) -> list[str]:
    """Admitted edge ids in frcore's order (:func:`frcore.top_k`, ties to the lower index)."""
    total = frcore_scores(task, config)
    vals, idx = fr.top_k(np.asarray(total, dtype=np.float32), len(task.edges))
    return [task.edges[int(i)].id for v, i in zip(np.asarray(vals), np.asarray(idx)) if np.isfinite(v)]


def frcore_top(task: Task, config: fr.ScoreConfig | None = None) -> str | None:
    """frcore's top-1 edge id (None if every candidate is masked)."""
    ranking = frcore_ranking(task, config)
    return ranking[0] if ranking else None


# --------------------------------------------------------------------------- restricted rankers

Ranker = Callable[[tuple], int]  # restricted view -> index of the top-1 candidate


def pointwise_ranker(score_edge: Callable[[str, tuple], float]) -> Ranker:
    """A ranker from a per-candidate scorer f(intent, edge view); ties go to the lower index."""

    def rank(view: tuple) -> int:
        intent, edges = view
        scores = np.array([float(score_edge(intent, ev)) for ev in edges])
        scores = np.where(np.isnan(scores), -np.inf, scores)
        return int(np.argsort(-scores, kind="stable")[0])

    return rank


def error_rate(ranker: Ranker, tasks: Sequence[Task], components: Iterable[str]) -> Fraction:
    """Exact error of a restricted ranker on equiprobable tasks (wrong top-1 counts as an error)."""
    vis = _visible(components)
    wrong = sum(ranker(restricted_view(t, vis)) != t.required_index for t in tasks)
    return Fraction(wrong, len(tasks))


def collision(t1: Task, t2: Task, components: Iterable[str]) -> dict:
    """Certificate that restricted systems cannot tell t1 from t2: equal views, different answers."""
    vis = _visible(components)
    v1, v2 = restricted_view(t1, vis), restricted_view(t2, vis)
    return {
        "components": sorted(vis, key=BASIS.index),
        "views_equal": v1 == v2,
        "required_top": [t1.required_index, t2.required_index],
        "rankings_differ": t1.required_index != t2.required_index,
        "collides": v1 == v2 and t1.required_index != t2.required_index,
    }


# --------------------------------------------------------------------------- witnesses

PREF = Category.PREFERENCES_HABITS.name


def thm1_histories(
    sim_a: float = 0.92,
    sim_b: float = 0.60,
    ages_a: tuple[float, float, float] = (500.0, 500.0, 100.0),
    ages_b: tuple[float, float, float] = (10.0, 10.0, 4.0),
) -> tuple[Task, Task]:
    """Theorem 1 histories with identical (σ, Δt) profiles.

    H1: B (newer) supersedes A in the same slot; the current value is B.
    H2: A and B sit in different slots, both active; the more aligned A must come first.
    """
    if not sim_a > sim_b:
        raise ValueError(f"sim_a: {sim_a} must exceed sim_b {sim_b} (A is the more aligned edge)")
    if not ages_a[0] > ages_b[0]:
        raise ValueError(f"ages_a: absolute age {ages_a[0]} must exceed B's {ages_b[0]} (B is newer)")
    a = Edge("A", sim_a, (*ages_a,), PREF, "slot:a")
    h1 = Task(
        "H1 same-slot supersession",
        "current",
        (a, Edge("B", sim_b, (*ages_b,), PREF, "slot:a")),
        "B",
        "B supersedes A",
    )
    h2 = Task(
        "H2 different slots", "current", (a, Edge("B", sim_b, (*ages_b,), PREF, "slot:b")), "A", "A and B coexist"
    )
    return h1, h2


def removal_witness(component: str) -> tuple[Task, Task]:
    """The witness for removing one basis component (A.7.1–A.7.4): two tasks that only that
    component (through the score or through the derived state) tells apart.

    Both tasks of a pair share the query intent, so the argument holds for scorers that see the
    intent too. For ξ this is our construction, not the paper's wording ("current vs
    change-history queries need opposite rankings"): a scorer that sees the intent and Δt could
    flip its ranking by intent on one history, so the pair instead holds the intent fixed and
    changes the hidden lifecycle event — the newer same-slot value B supersedes A (current: B)
    or B was retracted (current: A) — with identical (σ, Δt, c, κ, h).
    """
    fresh = (1.0, 1.0, 2.0)
    if component == "c":  # A.7.1: older FINANCIAL preserved vs newer-looking LOGISTICAL suppressed
        old = (2000.0, 2000.0, 400.0)
        y = Edge("Y", 0.75, fresh, Category.OTHER.name, "slot:y")
        fin = Edge("X", 0.90, old, Category.FINANCIAL_MATERIAL.name, "slot:x")
        log = Edge("X", 0.90, old, Category.LOGISTICAL_CONTEXT.name, "slot:x")
        return (
            Task(
                "c: FINANCIAL preserved",
                "current",
                (fin, y),
                "X",
                "slow-decaying, low-α financial fact outranks a fresh distractor",
            ),
            Task(
                "c: LOGISTICAL suppressed",
                "current",
                (log, y),
                "Y",
                "the same-looking logistical context has gone stale",
            ),
        )
    if component == "kappa":  # A.7.2: same-slot supersession vs different-slot coexistence
        return thm1_histories()
    if component == "xi":  # A.7.3: same slot, same metadata; superseded vs retracted newer value
        a = Edge("A", 0.80, (300.0, 300.0, 60.0), PREF, "slot:a")
        b = Edge("B", 0.80, (20.0, 20.0, 6.0), PREF, "slot:a")
        return (
            Task("xi: B supersedes A", "current", (a, b), "B", "the newer value is current"),
            Task(
                "xi: B retracted",
                "current",
                (a, Edge(b.id, b.sim, b.ages, b.category, b.slot, retracted=True)),
                "A",
                "the newer value was taken back",
            ),
        )
    if component == "h":  # A.7.4: upcoming vs expired obligation, equal ages
        y = Edge("Y", 0.85, fresh, Category.OTHER.name, "slot:y")

        def x(h):
            return Edge("X", 0.80, (100.0, 100.0, 20.0), Category.OBLIGATIONS.name, "slot:x", hours_to_event=h)

        return (
            Task("h: obligation upcoming", "current", (x(24.0), y), "X", "event 24 h ahead"),
            Task("h: obligation expired", "current", (x(-24.0), y), "Y", "event 24 h ago"),
        )
    raise ValueError(f"component: unknown basis component {component!r}; expected one of {BASIS}")


def strict_subsets() -> list[frozenset[str]]:
    """The 15 strict subsets of the basis {c, κ, ξ, h}."""
    return [frozenset(s) for r in range(len(BASIS)) for s in itertools.combinations(BASIS, r)]


def subset_cover() -> list[dict]:
    """For each strict subset S: every missing component's witness collides under S."""
    rows = []
    for s in strict_subsets():
        missing = [m for m in BASIS if m not in s]
        per = {}
        for m in missing:
            t1, t2 = removal_witness(m)
            per[m] = collision(t1, t2, s) | {"tasks": [t1.name, t2.name]}
        rows.append(
            {
                "subset": sorted(s, key=BASIS.index),
                "missing": missing,
                "witness": missing[0],
                "witnesses": per,
                "covered": any(c["collides"] for c in per.values()),
                "all_missing_collide": all(c["collides"] for c in per.values()),
            }
        )
    return rows


def _task_record(t: Task) -> dict:
    return {"task": t.name, "intent": t.intent, "required_top": t.required_top, "frcore_ranking": frcore_ranking(t)}


# --------------------------------------------------------------------------- claims


@claim(
    "thm1",
    "Theorem 1: (σ, Δt) scorers are not lifecycle-identifiable",
    "Histories with identical (σ, Δt) profiles and different supersession structure: every "
    "(σ, Δt) scorer errs on one, P_e ≥ 1/2 under equiprobable histories; the full basis errs on none.",
    kind=FORMAL,
    rule=statements(
        "reproduced if the witness's (σ, Δt) views collide (so every (σ, Δt) scorer errs on one history) "
        "and frcore's full-basis score ranks both histories right",
        ("every (σ, Δt) scorer errs on one history", "the full basis errs on none"),
        core=("every (σ, Δt) scorer errs on one history", "the full basis errs on none"),
    ),
    diagnose=formal_diagnosis,
    method="witness",
    range="one hand-built pair (σ 0.92 / 0.60, ages 500 h / 10 h); the full (σ, age) range in thm_sufficiency_search",
)
def check_thm1(corpus=None) -> ClaimResult:
    """Build H1/H2, certify identical (σ, Δt) views, and score both with frcore."""
    h1, h2 = thm1_histories()
    cert = collision(h1, h2, ())
    # Three concrete (σ, Δt) scorers: similarity only, recency only, and a blend.
    scorers = {
        "similarity": lambda intent, ev: ev[0][1],
        "recency": lambda intent, ev: -ev[1][1][0],
        "blend": lambda intent, ev: 0.8 * ev[0][1] + 0.2 * np.exp(-0.005 * ev[1][1][0]),
    }
    errors = {k: float(error_rate(pointwise_ranker(f), (h1, h2), ())) for k, f in scorers.items()}
    full = [_task_record(h1), _task_record(h2)]
    frcore_errors = sum(frcore_top(t) != t.required_top for t in (h1, h2))
    # check: the sample flat scorers agree with the collision certificate (they must err once)
    passed = (not cert["collides"]) or min(errors.values()) >= 0.5
    statement = {
        "every (σ, Δt) scorer errs on one history": bool(cert["collides"]),
        "the full basis errs on none": frcore_errors == 0,
    }
    detail = {
        "every (σ, Δt) scorer errs on one history": f"views equal {cert['views_equal']}, required tops differ "
        f"{cert['rankings_differ']}",
        "the full basis errs on none": f"frcore errs on {frcore_errors}/2",
    }
    return ClaimResult(
        ours=f"(σ, Δt) views equal: {cert['views_equal']}; sample flat scorers P_e = {errors}; frcore errors "
        f"{frcore_errors}/2",
        passed=bool(passed),
        witness={
            "statement": statement,
            "statement_detail": detail,
            "profile": [list(map(list, sigma_dt_profile(h1))), list(map(list, sigma_dt_profile(h2)))],
            "collision": cert,
            "flat_errors": errors,
            "frcore": full,
            "frcore_errors": frcore_errors,
        },
    )


@claim(
    "thm2",
    "Theorems 2/2′: (c, κ, ξ, h) is sufficient and minimal",
    "Every strict subset of {c, κ, ξ, h}, even with σ and Δt, admits a task where deterministic "
    "scorers incur ≥ 1/2 error, while the full basis achieves zero.",
    kind=FORMAL,
    rule=statements(
        "reproduced if all 15 strict subsets are covered by a colliding witness (minimality) and frcore "
        "ranks every witness task right (sufficiency)",
        ("every strict subset admits a ≥ 1/2-error task", "the full basis achieves zero error"),
        core=("every strict subset admits a ≥ 1/2-error task", "the full basis achieves zero error"),
    ),
    diagnose=formal_diagnosis,
    method="witness",
    range="the 15 strict subsets × 4 hand-built removal witnesses (8 tasks); random histories in "
    "thm_sufficiency_search",
)
def check_thm2(corpus=None) -> ClaimResult:
    """The four removal witnesses, their frcore rankings and the explicit 15-subset cover."""
    witnesses: dict[str, dict[str, Any]] = {}
    for m in BASIS:
        t1, t2 = removal_witness(m)
        witnesses[m] = {
            "tasks": [_task_record(t1), _task_record(t2)],
            "frcore_correct": [frcore_top(t) == t.required_top for t in (t1, t2)],
            "collides_without": collision(t1, t2, FULL - {m}),
            "distinct_with_full_basis": restricted_view(t1, FULL) != restricted_view(t2, FULL),
        }
    cover = subset_cover()
    sufficient = all(all(w["frcore_correct"]) for w in witnesses.values())
    minimal = all(r["covered"] for r in cover) and len(cover) == 15
    separable = all(w["distinct_with_full_basis"] and w["collides_without"]["collides"] for w in witnesses.values())
    n_pairs = sum(len(r["missing"]) for r in cover)
    n_collide = sum(c["collides"] for r in cover for c in r["witnesses"].values())
    n_right = sum(sum(w["frcore_correct"]) for w in witnesses.values())
    statement = {
        "every strict subset admits a ≥ 1/2-error task": bool(minimal),
        "the full basis achieves zero error": bool(sufficient),
    }
    detail = {
        "every strict subset admits a ≥ 1/2-error task": f"{sum(r['covered'] for r in cover)}/15 subsets covered",
        "the full basis achieves zero error": f"frcore right on {n_right}/{2 * len(witnesses)} witness tasks",
    }
    return ClaimResult(
        ours=f"15/15 strict subsets covered: {minimal}; {n_collide}/{n_pairs} (subset, missing component) pairs "
        f"collide; frcore {n_right}/{2 * len(witnesses)} witness tasks right",
        passed=bool(separable and n_collide == n_pairs),
        witness={"statement": statement, "statement_detail": detail, "removal_witnesses": witnesses, "cover": cover},
    )


def thm3p_tasks() -> tuple[Task, Task, Edge, Edge]:
    """Theorem 3′ objects: the A.7.4 pair and an (upcoming U, expired E) pair with equal ages."""
    t_up, t_exp = removal_witness("h")
    ages, sim = (100.0, 100.0, 20.0), 0.80
    u = Edge("U", sim, ages, Category.OBLIGATIONS.name, "slot:u", hours_to_event=24.0)
    e = Edge("E", sim, ages, Category.OBLIGATIONS.name, "slot:e", hours_to_event=-0.5)
    return t_up, t_exp, u, e


def thm3p_swap_pair(ahead: float = 24.0, past: float = 0.5) -> tuple[Task, Task]:
    """Two ``upcoming`` queries ("what is coming up?") over two obligations X1, X2 with equal σ,
    ages, category and slots-by-position; only which one's event lies ahead differs (X1 in the
    first task, X2 in the second). Every view without h is equal *by construction* — same intent,
    same per-position (σ, Δt, c, κ) and, without event times, the same derived states — while the
    required top-1 differs, so every deterministic ranker of such a view errs on exactly one."""
    ages, sim, cat = (100.0, 100.0, 20.0), 0.80, Category.OBLIGATIONS.name

    def pair(h1: float, h2: float) -> tuple[Edge, Edge]:
        return Edge("X1", sim, ages, cat, "slot:1", hours_to_event=h1), Edge(
            "X2", sim, ages, cat, "slot:2", hours_to_event=h2
        )

    return (
        Task("X1 ahead, X2 just past", "upcoming", pair(ahead, -past), "X1"),
        Task("X2 ahead, X1 just past", "upcoming", pair(-past, ahead), "X2"),
    )


def every_ranker_error(tasks: Sequence[Task], components: Iterable[str]) -> Fraction:
    """The smallest error of *any* deterministic top-1 ranker of the restricted views, by exact
    enumeration of every table from the distinct views to a top-1 index."""
    vis = _visible(components)
    views = [restricted_view(t, vis) for t in tasks]
    uniq = list(dict.fromkeys(views))
    best = None
    for tops in itertools.product(*[range(len(v[1])) for v in uniq]):
        table = dict(zip(uniq, tops))
        err = error_rate(table.__getitem__, tasks, vis)
        best = err if best is None or err < best else best
    assert best is not None  # the product has at least one table (the empty product has one)
    return best


@claim(
    "thm3p",
    "Theorem 3′: event-time oblivion",
    "Without event-time anchors, deterministic retrieval cannot distinguish upcoming from expired "
    "obligations and incurs ≥ 1/2 error on a suitable query distribution (any age-only scorer).",
    kind=FORMAL,
    rule=statements(
        "reproduced if two equiprobable upcoming-queries whose obligations differ only in which event lies "
        "ahead have equal views without h (so every deterministic ranker of them errs on ≥ 1/2, exact "
        "enumeration) and frcore ranks every task right",
        ("age-only scorers err on ≥ 1/2", "event time lets frcore distinguish them"),
        core=("age-only scorers err on ≥ 1/2", "event time lets frcore distinguish them"),
    ),
    diagnose=formal_diagnosis,
    method="witness",
    range="hand-built histories: 2 obligations of equal σ 0.80 and ages 100 h, events 24 h ahead / 0.5 h past; every "
    "ranker of the no-h view",
)
def check_thm3p(corpus=None) -> ClaimResult:
    """The swap pair (:func:`thm3p_swap_pair`): the same intent, equal σ and ages, only which
    event lies ahead differs — the views without h (and the age-only views) are equal by
    construction, so every deterministic ranker of them, whether or not it reads the intent,
    errs on exactly one of the two queries (exact enumeration). frcore separates them by the event
    kernel and the mask; it also serves the historical query ("what was due just now?")."""
    t_up, t_exp, u, e = thm3p_tasks()
    swap = thm3p_swap_pair()
    no_h = FULL - {"h"}
    views_equal = {
        "no h": restricted_view(swap[0], no_h) == restricted_view(swap[1], no_h),
        "age only": restricted_view(swap[0], ()) == restricted_view(swap[1], ()),
    }
    best = {"no h": every_ranker_error(swap, no_h), "age only": every_ranker_error(swap, ())}
    # Age-only kernels, including every monotone one we name: equal inputs → equal scores → a tie.
    kernels = {
        "exp(-0.005 t)": lambda ev: np.exp(-0.005 * ev[1][1][0]),
        "1/(1+t)": lambda ev: 1.0 / (1.0 + ev[1][1][0]),
        "σ - 0.001 t": lambda ev: ev[0][1] - 0.001 * ev[1][1][0],
    }
    v0 = restricted_view(swap[0], ())[1]
    kernel_ties = {k: float(f(v0[0])) == float(f(v0[1])) for k, f in kernels.items()}
    tie_break_errors = float(error_rate(pointwise_ranker(lambda intent, ev: ev[0][1]), swap, ()))
    pair = collision(t_up, t_exp, no_h)
    q_hist = Task("historical: what was due just now?", "historical", (u, e), "E")
    tasks = (*swap, t_up, t_exp, q_hist)
    records = [_task_record(t) for t in tasks]
    frcore_ok = [frcore_top(t) == t.required_top for t in tasks]
    expired_masked = all(len(frcore_ranking(t)) == 1 for t in swap)  # the just-past obligation is masked for `upcoming`
    # check: the enumeration agrees with the collision (equal views ⇒ the best ranker errs on exactly 1/2)
    # and the kernels tie
    passed = all(best[k] == Fraction(1, 2) for k in best if views_equal[k]) and all(kernel_ties.values())
    statement = {
        "age-only scorers err on ≥ 1/2": bool(
            all(views_equal.values()) and min(best.values()) >= Fraction(1, 2) and pair["collides"]
        ),
        "event time lets frcore distinguish them": bool(all(frcore_ok) and expired_masked),
    }
    detail = {
        "age-only scorers err on ≥ 1/2": f"views equal {views_equal}; best deterministic ranker P_e = "
        f"{', '.join(f'{k} {v}' for k, v in best.items())}; same-intent pair collides {pair['collides']}",
        "event time lets frcore distinguish them": f"frcore right on {sum(frcore_ok)}/{len(tasks)}, just-past "
        f"obligation masked for upcoming {expired_masked}",
    }
    return ClaimResult(
        ours=f"views without h equal by construction: {views_equal['no h']}; best deterministic ranker of them P_e = "
        f"{best['no h']} (tie-broken age-only {tie_break_errors}); frcore right on {sum(frcore_ok)}/{len(tasks)}",
        passed=bool(passed),
        witness={
            "statement": statement,
            "statement_detail": detail,
            "views_equal": views_equal,
            "best_ranker_error": {k: str(v) for k, v in best.items()},
            "age_only_equal": views_equal["age only"],
            "kernel_ties": kernel_ties,
            "tie_break_error": tie_break_errors,
            "same_intent_pair": pair,
            "frcore": records,
            "frcore_correct": frcore_ok,
        },
    )


# ----- Theorem 3″: retraction oblivion

RETRACTION_QUERIES = ("current", "retraction_aware")


def retraction_store(policy: str) -> tuple[Edge, ...]:
    """The store after "I'm allergic to X" (A) was retracted by a statement R ("forget that").

    Policies: ``delete`` (binary-flat: A removed, R kept as an ordinary fact), ``keep``
    (binary-flat: A stays active, R an ordinary fact), ``masked`` (frcore: A retained and
    RETRACTED, R active, linked to A). A distractor Y is present in every store.
    """
    a = Edge(
        "A", 0.90, (200.0, 200.0, 40.0), Category.HEALTH_WELLBEING.name, "slot:allergy", retracted=(policy == "masked")
    )
    r = Edge("R", 0.60, (50.0, 50.0, 10.0), Category.HEALTH_WELLBEING.name, "slot:retraction")
    y = Edge("Y", 0.50, (5.0, 5.0, 2.0), Category.OTHER.name, "slot:y")
    if policy == "delete":
        return (r, y)
    if policy in ("keep", "masked"):
        return (a, r, y)
    raise ValueError(f"policy: unknown retraction policy {policy!r}; expected delete, keep or masked")


def retraction_outcome(policy: str, intent: str) -> bool:
    """Whether ``policy`` serves the query: ``current`` must not surface A (admitted by the score);
    ``retraction_aware`` must surface the retraction R *and* keep A's content recoverable
    (A still stored). Flat policies are scored with lifecycle off; ``masked`` with frcore's full score."""
    edges = retraction_store(policy)
    config = fr.ScoreConfig() if policy == "masked" else fr.ScoreConfig(lifecycle=False)
    task = Task(f"{policy}/{intent}", intent, edges, "R")
    admitted = frcore_ranking(task, config)
    if intent == "current":
        return "A" not in admitted
    if intent == "retraction_aware":
        return any(e.id == "A" for e in edges) and "R" in admitted
    raise ValueError(f"intent: {intent!r} is not one of {RETRACTION_QUERIES}")


def flat_mixture_error(p_delete: Fraction) -> Fraction:
    """Exact error of the randomised flat policy (delete with probability p) on the equal mixture."""
    err = {
        pol: Fraction(sum(not retraction_outcome(pol, q) for q in RETRACTION_QUERIES), len(RETRACTION_QUERIES))
        for pol in ("delete", "keep")
    }
    return p_delete * err["delete"] + (1 - p_delete) * err["keep"]


@claim(
    "thm3pp",
    "Theorem 3″: retraction oblivion",
    "Binary-flat systems have Bayes error exactly 1/2 on an equal mixture of current-state and "
    "change-aware retraction queries; retained-but-masked retraction state serves both.",
    kind=FORMAL,
    rule=statements(
        "reproduced if the exact error of delete, keep and every mixture of them is 1/2 (SymPy over the "
        "mixing weight) and frcore's retained-but-masked state serves both intents",
        ("binary-flat Bayes error is exactly 1/2", "retained-but-masked state serves both"),
        core=("binary-flat Bayes error is exactly 1/2", "retained-but-masked state serves both"),
    ),
    diagnose=formal_diagnosis,
    method="witness",
    range="one hand-built retraction store under 3 policies; every mixing weight p ∈ [0, 1] (SymPy)",
)
def check_thm3pp(corpus=None) -> ClaimResult:
    """Exact errors of delete / keep and every mixture of them; frcore's masked state serves both
    intents, and ``change_history`` shows the retraction statement but never the retracted edge."""
    table = {pol: {q: retraction_outcome(pol, q) for q in RETRACTION_QUERIES} for pol in ("delete", "keep", "masked")}
    errors = {pol: Fraction(sum(not ok for ok in row.values()), 2) for pol, row in table.items()}
    mixtures = {str(p): str(flat_mixture_error(p)) for p in (Fraction(0), Fraction(1, 4), Fraction(1, 2), Fraction(1))}
    p = sympy.Symbol("p", nonnegative=True)
    e_del, e_keep = (sympy.Rational(errors[k].numerator, errors[k].denominator) for k in ("delete", "keep"))
    bayes = sympy.simplify(p * e_del + (1 - p) * e_keep)  # error of every randomised flat policy
    history = frcore_ranking(Task("masked/change_history", "change_history", retraction_store("masked"), "R"))
    # check: the symbolic error of the randomised policy agrees with the exact mixtures
    passed = all(
        sympy.Rational(Fraction(v).numerator, Fraction(v).denominator)
        == bayes.subs(p, sympy.Rational(Fraction(k).numerator, Fraction(k).denominator))
        for k, v in mixtures.items()
    )
    statement = {
        "binary-flat Bayes error is exactly 1/2": bool(
            errors["delete"] == errors["keep"] == Fraction(1, 2) and bayes == sympy.Rational(1, 2)
        ),
        "retained-but-masked state serves both": bool(errors["masked"] == 0 and "A" not in history and "R" in history),
    }
    detail = {
        "binary-flat Bayes error is exactly 1/2": f"delete {errors['delete']}, keep {errors['keep']}, every mixture "
        f"{bayes}",
        "retained-but-masked state serves both": f"masked error {errors['masked']}; change-history ranking {history}",
    }
    return ClaimResult(
        ours=f"flat error delete = {errors['delete']}, keep = {errors['keep']}, mixtures "
        f"{sorted(set(mixtures.values()))}; retained-but-masked error {errors['masked']}",
        passed=bool(passed),
        witness={
            "statement": statement,
            "statement_detail": detail,
            "outcomes": table,
            "errors": {k: str(v) for k, v in errors.items()},
            "mixture_errors": mixtures,
            "symbolic_flat_error": str(bayes),
            "change_history_ranking": history,
        },
    )


# ----- A.13: anticipation is not a non-increasing function of age


def anticipation_along_age(
    event_age_hours: float = 200.0, ages: Sequence[float] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Activation of one edge as time passes: the edge was said ``event_age_hours`` before its
    event, so at edge age t the event is ``event_age_hours − t`` hours ahead. Returns (ages, a)
    from :func:`frcore.anticipatory_activation` (inside the window) — the kernel the score uses."""
    t = np.linspace(0.0, event_age_hours + 48.0, 249) if ages is None else np.asarray(ages, dtype=np.float64)
    h = event_age_hours - t
    a = np.asarray(fr.anticipatory_activation(fr.default_params(), np.asarray(h, dtype=np.float32)), dtype=np.float64)
    in_window = h <= float(fr.ANTICIPATION.window_hours)
    return t[in_window], a[in_window]


@claim(
    "a13_anticipation",
    "A.13: anticipatory activation is not a non-increasing function of age",
    "No monotone non-increasing function of edge age can represent anticipatory activation: "
    "relevance must increase before an event and decrease after it.",
    kind=FORMAL,
    rule=statements(
        "reproduced if frcore's activation, along the age of one edge, rises somewhere before its event "
        "(impossible for a non-increasing function of age) and falls after it",
        ("activation rises as the event nears", "activation falls after the event"),
        core=("activation rises as the event nears",),
    ),
    diagnose=formal_diagnosis,
    method="witness",
    range="frcore's kernel along one edge's age, 249 grid points over 0…248 h (event at 200 h)",
)
def check_a13(corpus=None) -> ClaimResult:
    """On a grid of ages, find t1 < t2 with a(t1) < a(t2) (rises as the event nears) — impossible
    for any non-increasing g(age) — and also t2 < t3 with a(t2) > a(t3) after the event."""
    t, a = anticipation_along_age()
    rises = np.flatnonzero(np.diff(a) > 0)
    falls = np.flatnonzero(np.diff(a) < 0)
    i = int(rises[0]) if rises.size else None
    j = int(falls[-1]) if falls.size else None
    peak = int(np.argmax(a))
    rise = i is not None and t[i] < t[i + 1] and a[i] < a[i + 1]
    statement = {
        "activation rises as the event nears": bool(rise),
        "activation falls after the event": j is not None and bool(t[j] > t[peak]),
    }
    return ClaimResult(
        ours=f"activation rises on {rises.size} grid steps (e.g. age {t[i]:.0f} h → {t[i + 1]:.0f} h: {a[i]:.3f} → "
        f"{a[i + 1]:.3f}); peak {a[peak]:.2f} at the event"
        if i is not None and rise
        else "no rise found",
        passed=bool(t.size > 1 and np.all(np.isfinite(a))),
        witness={
            "statement": statement,
            "rise": {"ages": [float(t[i]), float(t[i + 1])], "activation": [float(a[i]), float(a[i + 1])]}
            if i is not None
            else None,
            "fall": {"ages": [float(t[j]), float(t[j + 1])], "activation": [float(a[j]), float(a[j + 1])]}
            if j is not None
            else None,
            "peak_age": float(t[peak]),
            "peak_activation": float(a[peak]),
            "rising_steps": int(rises.size),
            "falling_steps": int(falls.size),
        },
    )
