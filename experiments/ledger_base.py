"""What a ledger row is and what it reads: a ``fr reproduce`` results folder (:class:`Results`),
the row itself (:class:`Row`), and the score-regime measure both ledgers' diagnoses use
(:func:`bench_regime`) and the minimal detectable effect of a paired comparison
(:func:`mde_paired`). ``experiments.ledger`` holds the rows of the paper's figures and the
verdict table, ``experiments.ledger_paper`` the rows of its empirical claims; both build on
this module."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from theory.verdict import Rule, check_kind


class MissingResult(KeyError):
    """A results file (or a key in it) a ledger row needs is absent."""


class Results:
    """The JSON files of one results folder, loaded on first use."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self._cache: dict[str, Any] = {}

    def get(self, name: str) -> dict:
        if name not in self._cache:
            p = self.folder / name
            if not p.is_file():
                raise MissingResult(f"{name} is missing from {self.folder}")
            self._cache[name] = json.loads(p.read_text())
        return self._cache[name]

    def optional(self, name: str) -> dict | None:
        try:
            return self.get(name)
        except (MissingResult, json.JSONDecodeError):
            return None

    def claim(self, cid: str) -> dict:
        for c in self.get("theory.json").get("claims", []):
            if c["id"] == cid:
                return c
        raise MissingResult(f"theory.json has no claim {cid!r}")

    def system(self, name: str, file: str = "bench.json") -> dict:
        s = self.get(file).get("systems", {})
        if name not in s:
            raise MissingResult(f"{file} has no system {name!r}")
        return s[name]

    def passes(self, system: str, file: str = "bench.json") -> dict[tuple[str, str], bool]:
        """(persona, question id) → passed, for one system."""
        out = {}
        for q in self.get(file).get("questions", []):
            if q["system"] == system:
                out[(q["persona"], q["id"])] = bool(q["passed"])
        if not out:
            raise MissingResult(f"{file} has no per-question records of {system!r}")
        return out


@dataclass(frozen=True)
class Row:
    """One ledger row: ``kind`` (:data:`~theory.verdict.KINDS`: formal or empirical, required);
    ``measure(results)`` → a JSON-able witness (raises :class:`MissingResult` when inputs are
    absent); ``ours(witness)`` → our figure in words; ``rule`` decides the verdict;
    ``diagnose(results, witness)`` runs when the verdict is not *reproduced*. A row with
    ``claim`` set restates that theory claim instead (and has the claim's kind)."""

    id: str
    paper: str
    where: str
    kind: str
    rule: Rule | None = None
    measure: Callable[[Results], dict] | None = None
    ours: Callable[[dict], str] | None = None
    diagnose: Callable[[Results, dict], dict] | None = None
    claim: str | None = None
    #: the ``fr reproduce`` part whose results the row reads, when it may be skipped (its data absent)
    part: str | None = None

    def __post_init__(self) -> None:
        check_kind(f"ledger row {self.id!r}", self.kind)


def bench_regime(
    results: Results, system: str = "fr-full", file: str = "bench.json", avs: tuple[str, ...] | None = None
) -> dict:
    """State of the score over a system's top-10 items (needs the records' score terms): share of
    items with activation < 0.01, σ = (1 − γ)·linked cosine + γ·BM25 quantiles, and the share of
    items on which the semantic floor (σ ≥ 0.95) and numeric rescue (σ ≥ 0.85) can fire: the
    thresholds of the default parameters (``floor_sim_threshold``, ``numeric_sim_threshold``), as
    decimals (as a parameter file writes them)."""
    import frcore
    from frcore.bank import PipelineConfig, hybrid_sigma

    defaults = frcore.params_to_dict(frcore.default_params())["params"]

    g = PipelineConfig().hybrid_weight
    act, sig = [], []
    for q in results.get(file)["questions"]:
        if q["system"] != system or not q.get("terms") or (avs and q["attack_vector"][:3] not in avs):
            continue
        for t in q["terms"]:
            act.append(t["activation"])
            sig.append(hybrid_sigma(t["sim_linked"], t["sim_bm25"], g))
    if not sig:
        return {"items": 0, "note": "no score terms in the records (run without --no-terms / --quick)"}
    a, s = np.asarray(act), np.asarray(sig)
    return {
        "system": system,
        "items": int(s.size),
        "share_activation_below_0_01": float((a < 0.01).mean()),
        "sigma_p50": float(np.quantile(s, 0.5)),
        "sigma_p99": float(np.quantile(s, 0.99)),
        "sigma_max": float(s.max()),
        "share_floor_can_fire": float((s >= defaults["floor_sim_threshold"]).mean()),
        "share_rescue_threshold": float((s >= defaults["numeric_sim_threshold"]).mean()),
    }


def mde_paired(n: int, discordant: int, alpha: float = 0.05, power: float = 0.80) -> float:
    """Minimal detectable effect of a paired binary comparison (McNemar's design):
    (z_{1−α/2} + z_{power}) · √(ψ / n), ψ = discordant / n the share of questions the two sides
    disagree on (at least one: with none observed, one is assumed). Var(d̄) ≈ ψ / n near δ = 0."""
    if n <= 0:
        return float("nan")
    psi = max(int(discordant), 1) / n
    return float((stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)) * math.sqrt(psi / n))


def paired(
    r: Results, a: str, b: str, *, field: str = "passed", file: str = "bench.json", avs: tuple[str, ...] | None = None
) -> dict:
    """a − b on one per-question field (``passed`` by default) over their shared questions
    (optionally of ``avs``): paired bootstrap CI, exact McNemar and the minimal detectable effect
    (:func:`mde_paired`). Every paired comparison of both ledgers is this one."""
    from frcore.bench import mcnemar, paired_bootstrap

    recs: dict[str, dict] = {a: {}, b: {}}
    av: dict[tuple, str] = {}
    for q in r.get(file).get("questions", []):
        if q["system"] in recs:
            recs[q["system"]][(q["persona"], q["id"])] = bool(q[field])
            av[(q["persona"], q["id"])] = q["attack_vector"][:3]
    keys = sorted(k for k in recs[a] if k in recs[b] and (avs is None or av[k] in avs))
    if not keys:
        raise MissingResult(f"{file}: no shared questions of {a} and {b}" + (f" in {avs}" if avs else ""))
    x = np.array([recs[a][k] for k in keys])
    y = np.array([recs[b][k] for k in keys])
    bs = paired_bootstrap(x, y, n_boot=10000)
    mc = mcnemar(x, y)
    return {
        "n": len(keys),
        "a": float(x.mean()),
        "b": float(y.mean()),
        "diff": bs["diff"],
        "ci": [bs["ci_low"], bs["ci_high"]],
        "mcnemar_p": mc["p_value"],
        "discordant": mc["n_discordant"],
        "mde": mde_paired(len(keys), mc["n_discordant"]),
    }
