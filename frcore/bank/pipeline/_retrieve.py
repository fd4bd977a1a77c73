"""FR-Bank's eight-stage retrieval pipeline (SPEC §4, the paper's appendix Z): :func:`retrieve`.

1. cosine candidates, 2. BM25 candidates, 3. category-forced candidates (up to 20 edges from the
query's top routed category), 4. dedup, 5. staleness-aware distillation to the top 20,
6. lifecycle filters, 7. blended log-score (frcore), 8. top-10.

The pipeline is a pure function of a snapshot's arrays, the query's embedding and BM25 scores,
its routing and intent, and a :class:`PipelineConfig`. Every baseline and ablation of the
benchmark is a configuration of this one function (``ranker`` picks the final ordering; the
stages can be switched off), never a copy.

Our choices where the paper is silent (documented, not the paper's):

- σ fed to the score is the hybrid (1 − γ)·cos + γ·bm25/max(bm25)
  (:func:`~frcore.bank.pipeline.hybrid_sigma`) with γ = ``hybrid_weight`` = 0.3, the value set
  before any measurement; cosine is clipped to [0, 1]. It is a trade-off, not an
  optimum: on LifecycleBench's development split γ = 0 scores higher, on LoCoMo γ = 0 drops
  FR-full 3.6 pp below flat cosine (README, "Design choices", for the numbers and commands). We keep
  the one configuration that holds up on both rather than tune per benchmark.
- Distillation (an LLM call in the paper) is deterministic here: candidates whose lifecycle state
  the intent does not admit go last, then by hybrid σ; the first ``n_distill`` are kept.
- Lifecycle-linked similarity: an edge inherits ``propagation`` x the cosine of an edge it
  supersedes, contradicts, retracts or is tentative for, or of an earlier edge in its slot, when
  that is higher than its own (:class:`~frcore.bank.pipeline._stages.Similarities`).
- Ages on the three clocks: absolute, inter-session and conversational
  (:func:`~frcore.bank.pipeline._prepare.clock_ages`).

Rules beyond the paper (off by default; the system ``fr-plus`` turns them on, docs/fr-plus.md):
``turn_age`` ages unextracted turns as the bank's oldest typed fact and ``turn_share`` gives them
the smallest similarity share 1 − α a typed fact can have, ``floor_reference`` reads
the semantic floor's threshold relative to the query's best σ, ``stable_activation_floor`` keeps
the activation of a typed fact in a category that does not expire at an event at or above F_c.
They change what the kernel is given (ages, σ of turns, the floor threshold), never the score's
formula.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ... import _types as T
from ..._params import LifecycleParams
from ..._scoring import ScoreTerms
from ..search import PartialCosine
from ._config import PipelineConfig, Retrieval, Retrieved
from ._prepare import Prepared
from ._recall import (
    HALF,
    NEWEST_FIRST_WINDOW,
    QuestionReading,
    episode_coverage,
    sigma_ranked,
    time_order,
    time_window,
    turn_context,
)
from ._select import _top
from ._stages import (
    Similarities,
    blended_log_score,
    bm25_candidates,
    cosine_candidates,
    dedup,
    distill,
    forced_candidates,
    lifecycle_filters,
    top_k,
)


def retrieve(
    prep: Prepared,
    *,
    cosine: np.ndarray | PartialCosine,
    bm25: np.ndarray,
    routing: np.ndarray,
    intent: str | int,
    params: LifecycleParams,
    config: PipelineConfig,
    question: QuestionReading | None = None,
) -> Retrieval:
    """Run the eight stages over one bank snapshot for one query.

    ``prep`` carries the snapshot's per-edge arrays as of one valid time (:class:`Prepared`,
    built once per snapshot and shared by its queries); ``cosine`` and ``bm25`` are the query's
    similarities to every row (``cosine`` may be a :class:`PartialCosine`: known on some rows,
    computed for others as needed). ``question``: what the question's own words ask
    (:func:`~frcore.bank.pipeline.read_question`), read by the stages ``time_window`` and
    ``coverage`` switch on. Returns up to ``config.k`` results.
    """
    intent_i = T.intent_index(intent)
    state, alive, alive_idx = prep.variant(config.untyped_expiry, config.overwrite)
    sims = Similarities(prep, cosine, bm25, alive, alive_idx, config)
    if config.ranker in ("cosine", "bm25"):
        return flat_ranking(sims, alive_idx, config)
    n_forced = config.n_forced if config.score.routing else 0  # the forced stage follows the routing
    candidates = (
        ("cosine", cosine_candidates(sims, alive, alive_idx, config.n_cosine)),  # 1
        ("bm25", bm25_candidates(sims, alive, alive_idx, config.n_bm25)),  # 2
        ("forced", forced_candidates(prep, sims, routing, alive, alive_idx, n_forced)),  # 3
    )
    found = [(stage, rows) for stage, rows in candidates if rows is not None]
    if not found:
        return Retrieval((), 0, 0)
    cand, sig = dedup(found, sims)  # 4
    cand, sig, lifted = _question_stages(prep, sims, cand, sig, alive, alive_idx, config, question, found)  # 4a, 4b
    n_cand = cand.size
    superseders: dict[int, set[int]] = {}
    kept = None  # the raw turns the raw-turn rules admit as active
    if config.turn_supersession == "order" or config.turn_expiry == "keep":
        state, superseders, kept = prep.turn_evidence(
            config.untyped_expiry, config.overwrite, config.turn_supersession == "order", config.turn_expiry == "keep"
        )
        if not T.COMPATIBLE[intent_i, T.State.ACTIVE]:
            kept = None
    cand, sig = distill(prep, cand, sig, intent_i, config, kept)  # 5
    cmat, qvec, sig = lifecycle_filters(prep, cand, sig, state, intent_i, routing, params, config)  # 6
    if config.untyped_score == "sigma":  # 7: every candidate scored, untyped ones by σ
        top = blended_log_score(cmat, qvec, sig, params, replace(config, k=cmat.shape[1]))
        top = sigma_ranked(top, sig, prep.evidence_turn[cand], ScoreTerms._fields)
    else:
        top = blended_log_score(cmat, qvec, sig, params, config)  # 7
    results = top_k(top, cand, sims, found)  # 8
    if lifted:
        results = tuple(r._replace(terms=r.terms | lifted[r.row]) if r.row in lifted else r for r in results)
    if config.coverage and question is not None and question.coverage:  # 8a
        order, moved = episode_coverage([r.row for r in results], prep.episode, config.k)
        by_row = {r.row: r for r in results}
        results = tuple(
            by_row[x]._replace(stages=(*by_row[x].stages, "coverage")) if x in moved else by_row[x] for x in order
        )
    results = results[: config.k]
    if config.time_order and question is not None and question.order:  # 8b
        results = time_order(results, prep.times, question.order)
    if superseders:
        results = above_superseded(results, superseders)
    return Retrieval(results, n_cand, cand.size, cand, cmat, qvec)


def _question_stages(
    prep: Prepared,
    sims: Similarities,
    cand: np.ndarray,
    sig: np.ndarray,
    alive: np.ndarray,
    alive_idx: np.ndarray | None,
    config: PipelineConfig,
    question: QuestionReading | None,
    found: list[tuple[str, np.ndarray]],
) -> tuple[np.ndarray, np.ndarray, dict[int, dict[str, float]]]:
    """Stages 4a (``turn_context``) and 4b (``time_window``) over the deduplicated candidates:
    (rows, σ, row → the terms each stage adds to its result: ``sigma_context``, the σ taken from
    a neighbour; ``sigma_window``, the factor of the time window). Rows a stage adds are named
    in ``found`` (``context``, ``time-window``)."""
    lifted: dict[int, dict[str, float]] = {}

    def sigma_of(rows: np.ndarray) -> np.ndarray:
        sims.complete(rows)
        return sims.sigma(rows)

    if config.turn_context:
        before = cand
        cand, sig, source = turn_context(prep.neighbours, cand, sig, sigma_of, alive)
        took = np.flatnonzero(source >= 0)
        for i in took.tolist():
            lifted[int(cand[i])] = {"sigma_context": float(sig[i])}
        added = np.setdiff1d(cand, before, assume_unique=True)
        if added.size:
            found.append(("context", added))
    window = question.window if (config.time_window and question is not None) else None
    if window is not None:
        before = cand
        said = np.asarray(prep.said_at_h, dtype=np.float64)
        cand, sig, inside = time_window(
            (prep.times, said), window, cand, sig, sigma_of, alive, alive_idx, config.n_forced or config.n_cosine
        )
        added = np.setdiff1d(cand, before, assume_unique=True)
        if added.size:
            found.append(("time-window", added))
        if inside is not None and not inside.all():  # σ outside was halved: say so on every candidate
            for i, row in enumerate(cand.tolist()):
                lifted.setdefault(row, {})["sigma_window"] = 1.0 if inside[i] else HALF
    return cand, sig, lifted


def above_superseded(
    results: tuple[Retrieved, ...], superseders: dict[int, set[int]], window: int = NEWEST_FIRST_WINDOW
) -> tuple[Retrieved, ...]:
    """Newest first, inside the first ``window`` results: each result that supersedes or contests
    results ranked above it (``superseders``: row → the rows superseding or contesting it) moved
    directly above the best-ranked of them (its stages gain ``above-superseded``). The first
    ``window`` results keep their set and the rest their order: the lifecycle orders what
    retrieval put in front of the reader, never what reaches it."""
    targets: dict[int, set[int]] = {}
    for row, by in superseders.items():
        for a in by:
            targets.setdefault(a, set()).add(row)
    out = list(results[:window])
    for _ in range(len(out) ** 2):  # each move takes a result up past a result it supersedes: bounded
        moved = False
        for i, r in enumerate(out):
            below = targets.get(r.row)
            pos = [j for j, x in enumerate(out[:i]) if x.row in below] if below else []
            if pos:
                stages = r.stages if "above-superseded" in r.stages else (*r.stages, "above-superseded")
                out.insert(pos[0], out.pop(i)._replace(stages=stages))
                moved = True
                break
        if not moved:
            break
    return (*out, *results[window:])


def flat_ranking(sims: Similarities, alive_idx: np.ndarray | None, config: PipelineConfig) -> Retrieval:
    """The flat baselines (``ranker`` ``cosine`` or ``bm25``): the ``config.k`` alive rows of
    highest clipped cosine, or of highest positive BM25, ties by row; no lifecycle stage."""
    s = sims.cos_raw if config.ranker == "cosine" else sims.bm
    idx = np.arange(sims.n) if alive_idx is None else alive_idx
    if config.ranker == "bm25":
        idx = idx[sims.bm[idx] > 0]
    order = _top(s[idx], idx, config.k) if idx.size else idx
    if sims.partial is not None and config.ranker == "cosine" and order.size:
        rows = np.sort(order)
        sims.complete(rows)
        order = _top(s[rows], rows, config.k)
    return Retrieval(
        tuple(Retrieved(int(i), float(s[i]), {config.ranker: float(s[i])}, (config.ranker,)) for i in order),
        int(idx.size),
        int(idx.size),
    )
