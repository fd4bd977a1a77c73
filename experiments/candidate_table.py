"""The candidate table every sweep re-scores: each question's scored candidate set, kept once.

Every question of a suite is run once through FR-Bank's pipeline with the default FR-full
configuration (:func:`build_table`); its scored candidate set (≤ 20 edges after distillation, padded
to a bucket of 32) is kept in a :class:`SweepTable`. A setting of the score parameters is then
evaluated by re-scoring those fixed sets, every setting in one batched kernel call
(:func:`scores`), and compared with a reference ranking (:func:`rankings`, :func:`passes`,
:func:`compare_to`). Shared by the appendix sweeps (:mod:`experiments.sweeps`) and ``fr sweep
grid`` (:mod:`experiments.grid`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import jax.numpy as jnp
import numpy as np
from scipy import stats

import frcore
from frcore import ScoreConfig, hours_since_epoch, score_sweep, top_k
from frcore.bank import Bank, Router
from frcore.bench import SYSTEMS, bank_records, connect, map_tasks, question_outcome

#: The ranking depth compared (Jaccard@K, the top-K kept per question).
K = 10


# ----------------------------------------------------------------------------- the table


@dataclass
class SweepTable:
    """Scored candidate sets of every question, stacked for batched re-scoring."""

    questions: list[dict]  # persona, id, attack_vector, support, wrong, at
    cand_ids: np.ndarray  # (Q, B) object, "" for padding
    cands: frcore.Candidates  # stacked (Q, B)
    queries: frcore.Query  # stacked (Q,)
    edges: dict[str, list]  # persona → FactRecords of the bank
    source: str = ""

    @property
    def n(self) -> int:
        return len(self.questions)


def persona_candidates(suites, embedder, i: int) -> tuple[list[dict], list, list, list, list]:
    """FR-full on every question of ``suites[i]``, once: (questions, candidate ids, candidate
    sets, kernel queries, the bank's FactRecords) — one persona of :func:`build_table`."""
    import os
    import tempfile

    suite = suites[i]
    full = SYSTEMS["fr-full"]
    bucket = frcore.bucket_size(full.pipeline.n_distill or 32)
    router = Router(embedder)
    qs, ids, cands, queries = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        bank = Bank.open(os.path.join(tmp, "b.db"), embedder=embedder, owner=suite.name, router=router)
        bank.add(bank_records(suite, router, embedder, bank.normalize))
        edges = list(bank.store.edges())
        qv = np.asarray(embedder.embed([bank.normalize(q.text) for q in suite.questions]))
        for j, q in enumerate(suite.questions):
            res = bank.query(q.text, at=q.asked_at, config=full.pipeline, query_vec=qv[j])
            c = res.candidates
            if c is None or c.sim.shape[0] != bucket:
                raise RuntimeError(f"question {q.id}: unexpected candidate bucket")
            qs.append(
                {
                    "persona": suite.persona,
                    "id": q.id,
                    "attack_vector": q.attack_vector,
                    "support": list(q.support),
                    "wrong": list(q.wrong),
                    "at_h": hours_since_epoch(q.asked_at),
                }
            )
            row = np.full(bucket, "", dtype=object)
            row[: len(res.candidate_ids)] = res.candidate_ids
            ids.append(row)
            cands.append(c)
            queries.append(res.kernel_query)
        bank.close()
    return qs, ids, cands, queries, edges


def build_table(
    suites, embedder, source: str = "", progress: bool = True, scheduler: str | None = None, client=None
) -> SweepTable:
    """Run FR-full on every question once and keep its scored candidate set; one task per
    persona (:func:`persona_candidates`), on a Dask cluster with ``scheduler`` / ``client``."""
    parts = map_tasks(
        persona_candidates,
        [(i,) for i in range(len(suites))],
        (list(suites), embedder),
        scheduler=scheduler,
        client=client,
        desc="building candidate sets",
        unit="persona",
        progress=progress,
    )
    qs = [q for p in parts for q in p[0]]
    ids = [r for p in parts for r in p[1]]
    cands = [c for p in parts for c in p[2]]
    queries = [k for p in parts for k in p[3]]
    edges = {suite.persona: p[4] for suite, p in zip(suites, parts)}
    return SweepTable(qs, np.stack(ids), frcore.stack_candidates(cands), frcore.stack_queries(queries), edges, source)


# ----------------------------------------------------------------------------- evaluation


def scores(table: SweepTable, params_stack, config: ScoreConfig = ScoreConfig(), cands=None) -> np.ndarray:
    """(P, Q, B) totals for stacked params: one batched call."""
    return np.asarray(
        score_sweep(params_stack, table.queries, cands if cands is not None else table.cands, config).total
    )


#: Parameter sets per Dask task when :func:`score_sets` runs on a cluster.
CLUSTER_CHUNK = 64


def _scores_task(table: SweepTable, config: ScoreConfig, sets: list) -> np.ndarray:
    return scores(table, frcore.stack_params(sets), config)


def score_sets(
    table: SweepTable,
    sets: Sequence[frcore.LifecycleParams],
    config: ScoreConfig = ScoreConfig(),
    *,
    scheduler: str | None = None,
    client=None,
    chunk: int | None = None,
) -> np.ndarray:
    """(P, Q, B) totals of ``sets``: one batched call in-process; on a Dask cluster, one call per
    ``chunk`` sets (default :data:`CLUSTER_CHUNK`), a task each (the table scattered once),
    concatenated in order."""
    client = connect(scheduler, client)
    size = len(sets) if client is None else (chunk or CLUSTER_CHUNK)
    chunks = [(list(sets[i : i + size]),) for i in range(0, len(sets), size)]
    parts = map_tasks(
        _scores_task, chunks, (table, config), client=client, desc="scoring", unit="chunk", progress=False
    )
    return np.concatenate(parts, axis=0)


def rankings(total: np.ndarray, table: SweepTable) -> np.ndarray:
    """(…, Q, B) totals → per (…, Q) the ranked ids of the top-10 (finite scores only)."""
    vals, idx = top_k(jnp.asarray(total), K)
    vals, idx = np.asarray(vals), np.asarray(idx)
    q_axis = np.arange(total.shape[-2])
    ids = table.cand_ids[q_axis[:, None], idx]  # broadcast over leading axes
    out = np.empty(total.shape[:-1], dtype=object)
    for pos in np.ndindex(total.shape[:-1]):
        ok = np.isfinite(vals[pos])
        out[pos] = [str(x) for x in ids[pos][ok]]
    return out


def passes(ranked: np.ndarray, table: SweepTable) -> np.ndarray:
    """(…, Q) booleans: the paper's pass rule per question."""
    out = np.zeros(ranked.shape, dtype=bool)
    for pos in np.ndindex(ranked.shape):
        q = table.questions[pos[-1]]
        out[pos] = question_outcome(q["attack_vector"], ranked[pos], q["support"], q["wrong"]).passed
    return out


def jaccard(a: Sequence[str], b: Sequence[str]) -> float:
    sa, sb = set(a), set(b)
    return 1.0 if not sa and not sb else len(sa & sb) / len(sa | sb)


def kendall(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall τ-b between two score vectors over the candidates finite in both."""
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 2:
        return 1.0
    t = stats.kendalltau(x[ok], y[ok]).statistic
    return 1.0 if not np.isfinite(t) else float(t)


def kendall_batched(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """:func:`kendall` over the last axis of ``x`` and ``y`` (broadcast), every vector at once:
    over the pairs i < j of candidates finite in both, τ-b = Σ sgn(xᵢ − xⱼ)·sgn(yᵢ − yⱼ) /
    √(pairs untied in x) / √(pairs untied in y), clipped to [−1, 1] — SciPy's integer counts
    and divisions, so the value is SciPy's to the bit; 1 where it is undefined (fewer than two
    such candidates, or every pair tied in x or in y)."""
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
    ok = np.isfinite(x) & np.isfinite(y)
    n = x.shape[-1]
    pair = ok[..., :, None] & ok[..., None, :] & np.triu(np.ones((n, n), dtype=bool), k=1)
    sx = (x[..., :, None] > x[..., None, :]).astype(np.int8) - (x[..., :, None] < x[..., None, :])
    sy = (y[..., :, None] > y[..., None, :]).astype(np.int8) - (y[..., :, None] < y[..., None, :])
    sx, sy = np.where(pair, sx, 0), np.where(pair, sy, 0)
    con_minus_dis = (sx.astype(np.int64) * sy).sum(axis=(-2, -1))
    untied_x = np.abs(sx).sum(axis=(-2, -1), dtype=np.int64)
    untied_y = np.abs(sy).sum(axis=(-2, -1), dtype=np.int64)
    defined = (untied_x > 0) & (untied_y > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = con_minus_dis / np.sqrt(untied_x) / np.sqrt(untied_y)
    return np.where(defined, np.clip(tau, -1.0, 1.0), 1.0)


def compare_to(reference_total: np.ndarray, total: np.ndarray, table: SweepTable) -> dict:
    """Jaccard@10, Kendall τ and displaced edges per query between a reference and others.

    ``reference_total`` is (Q, B); ``total`` is (P, Q, B). Returns (P, Q) arrays.
    """
    ref = rankings(reference_total, table)
    rk = rankings(total, table)
    P, Q = total.shape[:2]
    jac = np.zeros((P, Q))
    tau = kendall_batched(reference_total[None], total)
    disp = np.zeros((P, Q))
    for p in range(P):
        for q in range(Q):
            jac[p, q] = jaccard(ref[q], rk[p, q])
            disp[p, q] = len(set(ref[q]) - set(rk[p, q]))
    return {"jaccard": jac, "tau": tau, "displaced": disp, "ranked": rk, "reference_ranked": ref}
