"""Run LifecycleBench: one FR-Bank per persona, every system on identical data.

The corpus of a persona is its facts plus the user turns of its filler sessions (SPEC §5).
Facts enter the bank with the metadata an oracle extractor gives (categories, slot, times,
confidence, links); turns enter with categories from the router and no slot. The ``role``
field never reaches the bank: lifecycle states are derived by the bank as of ``asked_at``.
In raw-turn mode (``raw_turns``) the corpus is the user turns of every session and no fact
(:func:`frcore.bench._suite.raw_turn_corpus`), and only the questions whose support names a
turn are scored (:func:`frcore.bench._suite.raw_turn_questions`).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._params import LifecycleParams
from .._params_io import param_changes
from ..bank import Router
from ._cluster import map_tasks
from ._metrics import aggregate, mcnemar, paired_bootstrap, question_outcome
from ._rank import Ask, rank_history
from ._suite import Suite, corpus, raw_turn_corpus, raw_turn_questions
from ._systems import System, resolve_systems


def _iso(t: _dt.datetime | None) -> str | None:
    return None if t is None else t.isoformat()


def bank_records(
    suite: Suite, router: Router, embedder, normalize=lambda t: t, *, raw_turns: bool = False
) -> list[dict]:
    """The persona's corpus as bank fact dicts (no ``role``; turns categorised by the router);
    with ``raw_turns``, raw-turn mode's corpus (every user turn, no fact)."""
    items = raw_turn_corpus(suite) if raw_turns else corpus(suite)
    turn_texts = [normalize(it.text) for it in items if it.kind == "turn"]
    vecs = iter(np.asarray(embedder.embed(turn_texts)) if turn_texts else [])
    out = []
    for it in items:
        if it.kind == "fact":
            rec = {
                "id": it.id,
                "text": it.text,
                "categories": dict(it.categories),
                "said_at": _iso(it.said_at),
                "event_time": _iso(it.event_time),
                "slot": it.slot,
                "confidence": it.confidence if it.confidence is not None else 1.0,
                "links": {k: list(v) for k, v in it.links.items()},
                "session": it.session,
                "kind": "fact",
            }
            if it.numeric is not None:
                rec["numeric"] = bool(it.numeric)
        else:
            rec = {
                "id": it.id,
                "text": it.text,
                "categories": router.categorize(normalize(it.text), next(vecs)),
                "said_at": _iso(it.said_at),
                "session": it.session,
                "kind": "turn",
                "speaker": "user",
            }
        out.append(rec)
    return out


def run_persona(
    suite: Suite,
    systems: Sequence[System],
    embedder,
    *,
    gold_intent: bool = False,
    base_params: LifecycleParams | None = None,
    keep_terms: bool = True,
    workdir: str | None = None,
    owner_aware: bool = True,
    keep_outcome: bool = False,
    ann=None,
    raw_turns: bool = False,
) -> list[dict]:
    """Every question of one persona under every system → per-question records (with
    ``keep_outcome`` also the :class:`Outcome` object under ``"_outcome"``, for aggregation).
    ``ann``: rank through an approximate index with these settings (:class:`frcore.bank.search._ann.AnnConfig`).
    ``raw_turns``: the bank holds every user turn and no fact; only the questions whose support
    names a turn are asked, scored on their turn ids."""
    questions = raw_turn_questions(suite)[0] if raw_turns else list(suite.questions)
    if not questions:
        return []
    router = Router(embedder)
    # The bank knows whose memory it is (the persona's name), as any deployed bank would.
    results = rank_history(
        lambda bank: bank_records(suite, router, embedder, bank.normalize, raw_turns=raw_turns),
        systems,
        [Ask(q.text, q.asked_at, q.intent if gold_intent else None) for q in questions],
        embedder,
        query_vecs=lambda bank: embedder.embed([bank.normalize(q.text) for q in questions]),
        base_params=base_params,
        router=router,
        name=suite.persona,
        owner=suite.name if owner_aware else None,
        ann=ann,
        workdir=workdir,
    )
    out = []
    for qi, q in enumerate(questions):
        for s in systems:
            res = results[qi, s.name]
            ranked = res.ids
            o = question_outcome(q.attack_vector, ranked, q.support, q.wrong)
            rec = {
                "system": s.name,
                "persona": suite.persona,
                "id": q.id,
                "attack_vector": q.attack_vector,
                "intent": res.intent,
                "gold_intent": q.intent,
                "passed": bool(o.passed),
                "stale": bool(o.stale),
                "ranked": ranked,
                "outcome": o.to_dict(),
            }
            if keep_outcome:
                rec["_outcome"] = o
            if keep_terms:
                rec["terms"] = [
                    {k: round(v, 5) for k, v in r["terms"].items()} | {"state": r["state"], "stages": r["stages"]}
                    for r in res.results
                ]
            out.append(rec)
    return out


def _persona_task(suites: Sequence[Suite], systems: Sequence[System], embedder, options: dict, i: int) -> list[dict]:
    """:func:`run_persona` on ``suites[i]`` with the outcomes kept (a task of :func:`run_benchmark`)."""
    return run_persona(suites[i], systems, embedder, keep_outcome=True, **options)


def git_revision() -> str | None:
    try:
        here = Path(__file__).resolve().parent
        return (
            subprocess.run(
                ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5
            ).stdout.strip()
            or None
        )
    except Exception:
        return None


def summarize(records: list[dict], system_names: Sequence[str], reference: str = "fr-full") -> dict:
    """Overall and per-AV tables per system, plus paired comparisons against ``reference``."""
    by_sys: dict[str, list[dict]] = {n: [] for n in system_names}
    for r in records:
        by_sys.setdefault(r["system"], []).append(r)
    systems = {}
    for name in system_names:
        outs = [r["_outcome"] for r in by_sys[name]]
        systems[name] = aggregate(outs)
    comparisons = {}
    if reference in by_sys:
        key = lambda r: (r["persona"], r["id"])  # noqa: E731
        ref = {key(r): r for r in by_sys[reference]}
        for name in system_names:
            if name == reference:
                continue
            pairs = [(ref[key(r)], r) for r in by_sys[name] if key(r) in ref]
            if not pairs:
                continue
            a = np.array([p[0]["passed"] for p in pairs], dtype=bool)
            b = np.array([p[1]["passed"] for p in pairs], dtype=bool)
            comparisons[name] = {"pass": paired_bootstrap(a, b), "mcnemar": mcnemar(a, b)}
    return {"systems": systems, "comparisons_vs_" + reference.replace("-", "_"): comparisons}


def run_benchmark(
    suites: Sequence[Suite],
    systems: str | Sequence[str | System] | None,
    embedder,
    *,
    gold_intent: bool = False,
    base_params: LifecycleParams | None = None,
    keep_terms: bool = True,
    progress: bool = True,
    suite_label: str = "",
    pipeline_overrides: dict | None = None,
    ann=None,
    raw_turns: bool = False,
    scheduler: str | None = None,
    client=None,
) -> dict:
    """Run every system on every persona; returns the ``fr bench run`` result dict (``ann``:
    through an approximate index, :func:`run_persona`). With ``scheduler`` / ``client`` the
    personas run on a Dask cluster (:func:`frcore.bench._cluster.map_tasks`: the suites scattered
    once, a persona index per task), with the same records in the same order. ``raw_turns``: raw-turn mode
    (:func:`run_persona`); the result adds ``raw_turns``, ``n_scorable`` (the questions scored),
    ``n_suite_questions`` and, per persona, the questions not scored with the reason
    (``not_scorable``)."""
    from ._systems import with_overrides

    syss = with_overrides(resolve_systems(systems), pipeline_overrides)
    names = [s.name for s in syss]
    raw: dict[str, Any] = {}
    if raw_turns:
        not_scorable = {suite.persona: raw_turn_questions(suite)[1] for suite in suites}
        n_suite = sum(len(suite.questions) for suite in suites)
        n_scorable = n_suite - sum(len(v) for v in not_scorable.values())
        if n_scorable == 0:
            raise ValueError(f"raw-turn mode: no question of the {n_suite} has a turn in its support; nothing to score")
        raw = {
            "raw_turns": True,
            "n_scorable": n_scorable,
            "n_suite_questions": n_suite,
            "not_scorable": not_scorable,
        }
    t0 = time.perf_counter()
    options = {"gold_intent": gold_intent, "base_params": base_params, "keep_terms": keep_terms, "ann": ann}
    per_persona = map_tasks(
        _persona_task,
        [(i,) for i in range(len(suites))],
        (list(suites), syss, embedder, {**options, "raw_turns": raw_turns}),
        scheduler=scheduler,
        client=client,
        desc="personas",
        unit="persona",
        progress=progress,
    )
    records: list[dict] = [r for recs in per_persona for r in recs]
    summary = summarize(records, names)
    for r in records:
        r.pop("_outcome", None)
    return {
        "suite": suite_label,
        "n_personas": len(suites),
        "n_questions": len({(r["persona"], r["id"]) for r in records}),
        "embedder": getattr(embedder, "name", str(embedder)),
        "gold_intent": gold_intent,
        "pipeline_overrides": pipeline_overrides or {},
        **({"ann": dataclasses.asdict(ann)} if ann is not None else {}),
        **raw,
        "param_overrides": param_changes(base_params) if base_params is not None else {},
        "git_revision": git_revision(),
        "seconds": round(time.perf_counter() - t0, 2),
        **summary,
        "questions": records,
    }
