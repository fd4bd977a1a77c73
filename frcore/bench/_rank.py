"""Rank one history under a list of systems: the bank loop every benchmark shares.

LifecycleBench (:mod:`frcore.bench._runner`), LoCoMo (:mod:`frcore.bench.locomo`) and
LongMemEval (:mod:`frcore.bench.longmemeval`) each hold a history (a persona's corpus, a
conversation, a question's haystack) and ask questions of it under several systems.
:func:`rank_history` opens one FR-Bank per derivation setting the systems need (docs/derive.md;
the systems on the same setting share one bank), adds the history to it, and asks every question
under each of its systems. What a benchmark makes of the results — ids, metrics, logs — stays in
the benchmark.
"""

from __future__ import annotations

import datetime as _dt
import os
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..bank import Bank, QueryResult, Router


@dataclass(frozen=True)
class Ask:
    """One question as a bank is asked it: its text, when it is asked, and an intent that
    overrides the bank's inference (``None``: inferred)."""

    text: str
    at: _dt.datetime | str | None
    intent: str | None = None


def system_derive(system: Any) -> Any:
    """The derivation setting a system's bank is opened with (``None``: raw turns kept as given)."""
    return getattr(system, "derive", None)


def rank_history(
    history: Sequence[Mapping[str, Any]] | Callable[[Bank], Sequence[Mapping[str, Any]]],
    systems: Sequence[Any],
    questions: Sequence[Ask],
    embedder,
    *,
    query_vecs: np.ndarray | Callable[[Bank], np.ndarray] | None = None,
    k: int | Callable[[Any], int] | None = None,
    params: Mapping[str, Any] | None = None,
    base_params=None,
    router: Router | None = None,
    name: str = "bank",
    owner: str | None = None,
    ann=None,
    workdir: str | None = None,
    on_add: Callable[[Bank, Any, float], None] | None = None,
) -> dict[tuple[int, str], QueryResult]:
    """Every question of ``questions`` under every system → ``{(question index, system name):
    QueryResult}``.

    One bank per distinct derivation setting of ``systems`` (in their order), each a file
    ``<name>.<g>.db`` of a temporary folder (under ``workdir``), opened with ``embedder``,
    ``owner``, ``ann``, the setting and ``router`` (default: one :class:`~frcore.bank.Router`
    over ``embedder``, shared by every bank); it is given ``history`` (the fact dicts, or a
    function of the opened bank that returns them, for a history that depends on the bank's
    owner rule) in one :meth:`~frcore.bank.Bank.add`, then each question (in order) is asked
    under each of the bank's systems (in order).

    ``query_vecs``: the questions' vectors, one row per question, or a function of the first bank
    (after its add) that returns them; ``None``: the bank embeds each question. ``k``: the
    results asked for, an integer or a function of the system (default: the system pipeline's
    ``k``). ``params``: system name → its parameters (default: each system's own on
    ``base_params``). ``on_add(bank, added, seconds)`` is called after each bank's add with what
    the add returned and how long it took.
    """
    if params is None:
        params = {s.name: s.params(base_params) for s in systems}
    if router is None:
        router = Router(embedder)
    results: dict[tuple[int, str], QueryResult] = {}
    vecs: np.ndarray | None = None if callable(query_vecs) else query_vecs
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        for g, derive in enumerate(dict.fromkeys(system_derive(s) for s in systems)):
            bank = Bank.open(
                os.path.join(tmp, f"{name}.{g}.db"),
                embedder=embedder,
                owner=owner,
                ann=ann,
                derive=derive,
                router=router,
            )
            try:
                facts = history(bank) if callable(history) else history
                t_add = time.perf_counter()
                added = bank.add(facts)
                if on_add is not None:
                    on_add(bank, added, time.perf_counter() - t_add)
                if vecs is None and callable(query_vecs):
                    vecs = np.asarray(query_vecs(bank))
                for qi, q in enumerate(questions):
                    for s in systems:
                        if system_derive(s) != derive:
                            continue
                        results[qi, s.name] = bank.query(
                            q.text,
                            at=q.at,
                            k=s.pipeline.k if k is None else (k(s) if callable(k) else k),
                            intent=q.intent,
                            config=s.pipeline,
                            params=params[s.name],
                            query_vec=None if vecs is None else vecs[qi],
                        )
            finally:
                bank.close()
    return results
