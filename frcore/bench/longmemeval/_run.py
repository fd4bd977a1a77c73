"""Running LongMemEval: one bank per question, every corpus item a raw turn, every system's full
ranking of the corpus (:func:`frcore.bench._rank.rank_history`), written as the benchmark's logs."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...bank import result_limit
from .._cluster import map_tasks
from .._rank import Ask, rank_history, system_derive
from ._data import CorpusItem, LongMemEvalData, Question
from ._metrics import BASELINE, KS, LIFECYCLE_PAIR, STALE_K, derivation_measures, summarize
from ._report import log_entry, markdown_longmemeval

#: The benchmark's BM25 baseline, run outside FR-Bank.
PEER_SYSTEMS: tuple[str, ...] = ("lme-bm25",)
#: Systems run by default, side by side.
DEFAULT_SYSTEMS: tuple[str, ...] = (
    "lme-bm25",
    "bm25",
    "flat-cosine",
    "fr-full",
    "fr-plus",
    "fr-lifecycle-off",
    "uniform-decay",
)


def lme_bm25_ranking(corpus: Sequence[str], query: str) -> list[int]:
    """The benchmark's BM25 baseline: corpus indices, best first (``rank_bm25.BM25Okapi`` over
    texts split on single spaces; ``numpy.argsort(scores)[::-1]``)."""
    from rank_bm25 import BM25Okapi

    bm25 = BM25Okapi([doc.split(" ") for doc in corpus])
    scores = bm25.get_scores(query.split(" "))
    return [int(i) for i in np.argsort(scores)[::-1]]


def complete_ranking(head: Sequence[int], cosine: np.ndarray, eligible: np.ndarray) -> list[int]:
    """``head`` (a system's answer, corpus indices), then every other eligible index by
    decreasing ``cosine`` (ties in corpus order)."""
    placed = set(head)
    order = np.argsort(-np.asarray(cosine, dtype=np.float64), kind="stable")
    return list(head) + [int(i) for i in order if eligible[i] and int(i) not in placed]


def bank_fact(item: CorpusItem, index: int, categories: Mapping[str, float]) -> dict[str, Any]:
    return {
        "id": f"m{index}",
        "text": item.text,
        "categories": dict(categories),
        "said_at": item.date.isoformat(),
        "session": item.session + 1,
        "kind": "turn",
        "speaker": "user",
    }


def _derived_links(bank) -> dict[str, list[list[str]]]:
    """The derived links of a question's bank: kind → [[source id, target id], …] (bank ids)."""
    out: dict[str, list[list[str]]] = {}
    for e in bank.store.edges(user=bank.user):
        for kind, targets in e.links.items():
            out.setdefault(kind, []).extend([e.id, t] for t in targets)
    return out


def run_question(
    q: Question,
    systems: Sequence[Any],
    embedder,
    router,
    *,
    peers: Sequence[str] = (),
    params: Mapping[str, Any] | None = None,
    workdir: str | None = None,
) -> tuple[dict[str, list[int]], dict[str, Any]]:
    """Every system's full ranking of one question (corpus indices, best first) and the
    question's bank facts (``{"quarantined": n}``); ``params``: system name → its parameters
    (default: each system's own on the default parameters)."""
    texts = [c.text for c in q.corpus]
    rankings: dict[str, list[int]] = {}
    for name in peers:
        if name != "lme-bm25":
            raise ValueError(f"systems: unknown peer {name!r}")
        rankings[name] = lme_bm25_ranking(texts, q.question)
    info: dict[str, Any] = {"quarantined": 0}
    if not systems:
        return rankings, info
    # an empty message is in the benchmark's corpus (lme-bm25 ranks it) but cannot be stored
    stored = [i for i, t in enumerate(texts) if t.strip()]
    vecs = np.asarray(embedder.embed([texts[i] for i in stored]), dtype=np.float32)
    qv = np.asarray(embedder.embed([q.question])[0], dtype=np.float32)
    facts = [bank_fact(q.corpus[i], i, router.categorize(texts[i], vecs[j])) for j, i in enumerate(stored)]
    cosine = np.full(len(texts), -np.inf)
    cosine[stored] = vecs @ qv
    n = len(facts)
    eligible: dict[Any, np.ndarray] = {}  # derivation setting → the corpus items its bank can return

    def added(bank, result, seconds: float) -> None:
        derive = bank.derive
        info.setdefault("add_seconds", {})["none" if derive is None else derive.name()] = seconds
        held = {str(x["id"] if isinstance(x, Mapping) else x) for x in getattr(result, "quarantined", ())}
        info["quarantined"] = len(held)
        ok = eligible[derive] = np.zeros(len(texts), dtype=bool)
        for i in stored:
            ok[i] = f"m{i}" not in held
        if derive is not None:
            info.setdefault("derived_links", {})[derive.name()] = _derived_links(bank)

    def limit(system) -> int:
        # every result the system can give; a lifecycle ranker's limit is fixed, so its kernel
        # compiles once for every question (a k of the corpus size would not)
        cap = result_limit(system.pipeline)
        return n if cap is None else min(n, cap)

    results = rank_history(
        facts,
        systems,
        [Ask(q.question, q.asked_at)],
        embedder,
        query_vecs=qv[None, :],
        k=limit,
        params=params,
        router=router,
        name="q",
        workdir=workdir,
        on_add=added,
    )
    for s in systems:
        head = [int(i[1:]) for i in results[0, s.name].ids]
        rankings[s.name] = complete_ranking(head, cosine, eligible[system_derive(s)])
    return rankings, info


def resolve(names: str | Sequence[str] | None) -> tuple[list[str], list[str], list[Any]]:
    """(every name in order, peer names, FR-Bank systems) from a comma-separated list (``all``
    or ``None``: the default set, :data:`DEFAULT_SYSTEMS`)."""
    from .._systems import resolve_systems

    if names is None or names == "all":
        names = list(DEFAULT_SYSTEMS)
    elif isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    names = list(dict.fromkeys(names))
    if not names:
        raise ValueError("--systems: no system named")
    peers = [n for n in names if n in PEER_SYSTEMS]
    return names, peers, resolve_systems([n for n in names if n not in PEER_SYSTEMS])


def run_longmemeval(
    data: LongMemEvalData,
    systems: str | Sequence[str] | None,
    embedder,
    out: str | os.PathLike,
    *,
    base_params=None,
    n_boot: int = 10000,
    progress: bool = True,
    pipeline_overrides: dict | None = None,
    scheduler: str | None = None,
    client=None,
) -> dict[str, Any]:
    """Every system on every question: writes ``OUT/<system>.jsonl`` (the benchmark's log),
    ``OUT/summary.json`` and ``OUT/summary.md``; returns the summary. With ``scheduler`` /
    ``client`` the questions run on a Dask cluster (:func:`frcore.bench._cluster.map_tasks`: one
    question, its haystack with it, per task; the texts are embedded here first, into the vector
    cache the workers read)."""
    from tqdm import tqdm

    from ...bank import Router
    from .._runner import git_revision
    from .._systems import with_overrides

    names, peers, syss = resolve(systems)
    syss = with_overrides(syss, pipeline_overrides)
    outdir = Path(out)
    outdir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    timings: dict[str, float] = {"embedding": 0.0}
    router = None
    if syss:
        texts = list(
            dict.fromkeys([c.text for q in data.questions for c in q.corpus] + [q.question for q in data.questions])
        )
        t = time.perf_counter()
        chunk = 512
        bar = tqdm(total=len(texts), desc="embedding (distinct texts)", unit="text", disable=not progress)
        for start in range(0, len(texts), chunk):
            embedder.embed(texts[start : start + chunk])
            bar.update(min(chunk, len(texts) - start))
        bar.close()
        timings["embedding"] = round(time.perf_counter() - t, 2)
        router = Router(embedder)
    params = {s.name: s.params(base_params) for s in syss}
    logs: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    quarantined: dict[str, int] = {}
    infos: dict[str, dict[str, Any]] = {}
    t = time.perf_counter()
    answers = map_tasks(
        _question_task,
        [(q,) for q in data.questions],
        (syss, embedder, router, peers, params),
        scheduler=scheduler,
        client=client,
        desc="questions",
        unit="question",
        progress=progress,
    )
    for q, (rankings, info) in zip(data.questions, answers):
        for n in names:
            logs[n].append(log_entry(q, rankings[n], data.granularity))
        quarantined[q.question_id] = info["quarantined"]
        infos[q.question_id] = info
    timings["questions"] = round(time.perf_counter() - t, 2)
    for n in names:
        with open(outdir / f"{n}.jsonl", "w", encoding="utf-8") as f:
            for e in logs[n]:
                f.write(json.dumps(e, ensure_ascii=False) + "\n")
    summary: dict[str, Any] = {
        "benchmark": "longmemeval",
        "data": data.source,
        "counts": data.counts(),
        "embedder": getattr(embedder, "name", str(embedder)),
        "config": {
            "granularity": data.granularity,
            "ks": list(KS),
            "systems": names,
            "baseline": BASELINE,
            "lifecycle_pair": list(LIFECYCLE_PAIR),
            "n_boot": n_boot,
            "stale_k": STALE_K,
            "asked_at": "max(question_date, last session date)",
        },
        "git_revision": git_revision(),
        **summarize(data, logs, quarantined=quarantined, n_boot=n_boot),
        "derivation": derivation_measures(data, infos),
        "logs": {n: f"{n}.jsonl" for n in names},
    }
    timings["total"] = round(time.perf_counter() - t0, 2)
    summary["seconds"] = timings
    (outdir / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    (outdir / "summary.md").write_text(markdown_longmemeval(summary))
    return summary


def _question_task(systems, embedder, router, peers, params, q: Question):
    """:func:`run_question` on one question (a task of :func:`run_longmemeval`)."""
    return run_question(q, systems, embedder, router, peers=peers, params=params)
