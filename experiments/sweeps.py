"""Sweeps as batched computations over the benchmark's scored candidate sets (issue 6).

Every question of a suite is run once through FR-Bank's pipeline with the default FR-full
configuration; its scored candidate set (≤ 20 edges after distillation, padded to a bucket of 32)
is kept (:mod:`experiments.candidate_table`). A sweep over parameters is then **one**
``frcore.score_sweep`` call over stacked parameter sets (P, Q, 32), never a Python loop over
settings. Metadata-noise sweeps perturb the
bank's metadata (slots, categories, retractions, event times), re-derive lifecycle states with
the bank's own rules and re-score the same candidate rows; the candidate set itself is held
fixed (our simplification: the stages before scoring are not re-run), which isolates the
scoring layer's sensitivity.

Each sweep is a named frozen config; each writes a results file recording config, seed, data
source and git revision. ``--scheduler ADDRESS`` runs every sweep on a Dask cluster
(:func:`frcore.bench.map_tasks`): the candidate table is built a persona per task, the
multiplier, α and granularity parameter sets are scored in chunks of 64 a task each, the noise
and label settings a task each, the holdout calibration as one task; results equal the
in-process run's.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax.numpy as jnp
import numpy as np

import frcore
from frcore import (
    CATEGORY_NAMES,
    N_CATEGORIES,
    ScoreConfig,
    State,
    default_params,
    hours_since_epoch,
    optimal_table_partitions,
    stack_params,
    time_from_hours,
)
from frcore.bank import derive_states
from frcore.bench import (
    cognitive_partition,
    collapse_params,
    connect,
    git_revision,
    load_suites_arg,
    make_embedder,
    map_tasks,
    mcnemar,
    paired_bootstrap,
    suite_to_dict,
)

from .candidate_table import SweepTable, build_table, compare_to, passes, rankings, score_sets, scores
from .ledger import PAPER

MULTIPLIERS = (0.25, 0.33, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)
#: Category pairs a classifier confuses (our choice of pairs, following the paper's B.1.2 idea).
CONFUSED_PAIRS = (
    ("OBLIGATIONS", "LOGISTICAL_CONTEXT"),
    ("PREFERENCES_HABITS", "HOBBIES_RECREATION"),
    ("IDENTITY_SELF_CONCEPT", "RELATIONAL_BONDS"),
    ("PROJECTS_ENDEAVORS", "INTELLECTUAL_INTERESTS"),
    ("HEALTH_WELLBEING", "PREFERENCES_HABITS"),
)


# ----------------------------------------------------------------------------- configs


@dataclass(frozen=True)
class MultiplierSweep:
    name: str = "multiplier"
    multipliers: tuple[float, ...] = MULTIPLIERS
    feasible_jaccard: float = 0.95


@dataclass(frozen=True)
class AlphaSweep:
    name: str = "alpha"
    coarse: tuple[float, ...] = tuple(round(x, 2) for x in np.linspace(0.0, 1.0, 11))
    fine: tuple[float, ...] = tuple(round(x, 3) for x in np.linspace(0.0, 0.4, 9))
    alpha_level: float = 0.05


@dataclass(frozen=True)
class NoiseSweep:
    name: str = "metadata_noise"
    kinds: tuple[str, ...] = ("slot_key", "category", "retraction", "event_time")
    rates: tuple[float, ...] = (0.05, 0.1, 0.2, 0.3)
    seeds: tuple[int, ...] = (0, 1, 2)


@dataclass(frozen=True)
class LabelPerturbation:
    name: str = "label_perturbation"
    rates: tuple[float, ...] = (0.1, 0.25, 0.5)
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    pairs: tuple[tuple[str, str], ...] = CONFUSED_PAIRS


@dataclass(frozen=True)
class Granularity:
    name: str = "granularity"
    ks: tuple[int, ...] = tuple(range(1, N_CATEGORIES + 1))


def _meta(config, seed: int | None, table: SweepTable) -> dict:
    return {
        "config": dataclasses.asdict(config),
        "seed": seed,
        "data_source": table.source,
        "git_revision": git_revision(),
        "n_questions": table.n,
    }


def run_multiplier(
    table: SweepTable, cfg: MultiplierSweep = MultiplierSweep(), base=None, scheduler: str | None = None, client=None
) -> dict:
    """Per-category decay multiplier sweep: Jaccard@10 and Kendall τ against the default
    ranking; the feasible region per category is where mean Jaccard ≥ 0.95 (paper: 10 of 11
    categories tolerate 0.25x–4x; RELATIONAL_BONDS 0.33x–4x). ``base``: the parameter set the
    multipliers scale (default parameters when None)."""
    base = default_params() if base is None else base
    sets = []
    for c in range(N_CATEGORIES):
        for m in cfg.multipliers:
            mult = np.ones(N_CATEGORIES)
            mult[c] = m
            sets.append(frcore.scale_rates(base, mult))
    total = score_sets(table, sets, scheduler=scheduler, client=client)
    ref = scores(table, stack_params([base]))[0]
    cmp_ = compare_to(ref, total, table)
    per: dict[str, dict[str, Any]] = {}
    M = len(cfg.multipliers)
    for c, name in enumerate(CATEGORY_NAMES):
        jac = cmp_["jaccard"][c * M : (c + 1) * M].mean(axis=1)
        tau = cmp_["tau"][c * M : (c + 1) * M].mean(axis=1)
        ok = [m for m, j in zip(cfg.multipliers, jac) if j >= cfg.feasible_jaccard]
        per[name] = {
            "multipliers": list(cfg.multipliers),
            "jaccard": [round(float(x), 5) for x in jac],
            "tau": [round(float(x), 5) for x in tau],
            "feasible": [min(ok), max(ok)] if ok else None,
            "whole_range": bool(len(ok) == M),
        }
    n_whole = sum(v["whole_range"] for v in per.values())
    return {
        **_meta(cfg, None, table),
        "per_category": per,
        "n_whole_range": n_whole,
        "paper": {k: PAPER["multiplier"][k] for k in ("n_whole_range", "RELATIONAL_BONDS")},
    }


def run_alpha(
    table: SweepTable, cfg: AlphaSweep = AlphaSweep(), base=None, scheduler: str | None = None, client=None
) -> dict:
    """Global α sweeps (coarse and fine) against FR-full's category-specific α: pass rates,
    paired bootstrap CIs and McNemar tests, Bonferroni-corrected over the fine grid
    (paper: all fine-grained p-values fail Bonferroni at p < 0.0056)."""
    base = default_params() if base is None else base
    ref_pass = passes(rankings(scores(table, stack_params([base]))[0], table), table)
    out = {**_meta(cfg, None, table), "fr_full_pass": float(ref_pass.mean())}
    for grid_name, grid in (("coarse", cfg.coarse), ("fine", cfg.fine)):
        sets = [frcore.replace_params(base, global_alpha=a) for a in grid]
        total = score_sets(table, sets, ScoreConfig(global_alpha=True), scheduler=scheduler, client=client)
        p = passes(rankings(total, table), table)
        rows = []
        bonf = cfg.alpha_level / len(grid)
        for a, row in zip(grid, p):
            mc = mcnemar(row, ref_pass)
            bs = paired_bootstrap(row, ref_pass, n_boot=2000)
            rows.append(
                {
                    "alpha": a,
                    "pass": float(row.mean()),
                    "diff_vs_fr_full": bs["diff"],
                    "ci": [bs["ci_low"], bs["ci_high"]],
                    "mcnemar_p": mc["p_value"],
                    "significant_bonferroni": bool(mc["p_value"] < bonf),
                }
            )
        out[grid_name] = {"rows": rows, "bonferroni_threshold": bonf}
    # Per-AV effect of a uniform α = 0.3 (paper K: AV8 drops to 12.5%).
    t03 = scores(table, stack_params([frcore.replace_params(base, global_alpha=0.3)]), ScoreConfig(global_alpha=True))[
        0
    ]
    p03 = passes(rankings(t03, table), table)
    out["uniform_alpha_0.3_per_av"] = _per_av(p03, table)
    out["fr_full_per_av"] = _per_av(ref_pass, table)
    out["paper"] = PAPER["alpha"]
    return out


def _per_av(p: np.ndarray, table: SweepTable) -> dict:
    out: dict[str, list] = {}
    for q, ok in zip(table.questions, p):
        out.setdefault(q["attack_vector"][:3], []).append(bool(ok))
    return {k: round(float(np.mean(v)), 4) for k, v in sorted(out.items())}


# ----------------------------------------------------------------------------- noise


def perturb_edges(
    edges: list, kind: str, rate: float, rng: np.random.Generator, pairs=CONFUSED_PAIRS
) -> tuple[list, set]:
    """Return perturbed FactRecords and, for ``retraction``, the ids whose retraction flips."""
    out = []
    flips: set = set()
    facts = [e for e in edges if e.kind == "fact"]
    slots = sorted({e.slot for e in facts if e.slot}) or ["_"]
    for e in edges:
        if e.kind != "fact" or rng.random() >= rate:
            out.append(e)
            continue
        if kind == "slot_key":
            new = (
                str(rng.choice(slots + [f"_noise_{rng.integers(1_000_000)}"]))
                if e.slot
                else (str(rng.choice(slots)) if rng.random() < 0.5 else None)
            )
            out.append(dataclasses.replace(e, slot=new))
        elif kind == "category":
            c = CATEGORY_NAMES[int(rng.integers(N_CATEGORIES))]
            out.append(dataclasses.replace(e, categories={c: 1.0}))
        elif kind == "event_time":
            if e.event_time is None:
                out.append(e)
            else:
                shift = dt.timedelta(days=float(rng.uniform(1, 30)) * (1 if rng.random() < 0.5 else -1))
                out.append(dataclasses.replace(e, event_time=e.event_time + shift))
        elif kind == "label_pair":
            prim = max(e.categories, key=e.categories.get)
            partner = next((b if a == prim else a for a, b in pairs if prim in (a, b)), None)
            if partner is None:
                out.append(e)
            else:
                cats = dict(e.categories)
                cats[partner] = cats.get(partner, 0.0) + cats.pop(prim)
                out.append(dataclasses.replace(e, categories=cats))
        elif kind == "retraction":
            flips.add(e.id)
            out.append(e)
        else:
            raise ValueError(f"kind: unknown noise kind {kind!r}")
    return out, flips


def perturbed_candidates(table: SweepTable, kind: str, rate: float, seed: int) -> frcore.Candidates:
    """Candidate arrays of every question with perturbed metadata (states re-derived)."""
    # A stable seed (never Python's salted str hash: workers in other processes must agree).
    rng = np.random.default_rng([seed, int(round(rate * 1000)), zlib.crc32(kind.encode())])
    w = np.asarray(table.cands.weights).copy()
    st = np.asarray(table.cands.state).copy()
    he = np.asarray(table.cands.hours_to_event).copy()
    has = np.asarray(table.cands.has_event).copy()
    cache: dict[tuple, dict] = {}
    new_edges = {}
    for persona, edges in table.edges.items():
        new_edges[persona] = perturb_edges(edges, kind, rate, rng)
    for qi, q in enumerate(table.questions):
        e, flips = new_edges[q["persona"]]
        key = (q["persona"], q["at_h"])
        if key not in cache:
            at = time_from_hours(q["at_h"])
            states = derive_states(e, at)
            cache[key] = {r.id: (r, int(s)) for r, s in zip(e, states)}
        lookup = cache[key]
        for j, cid in enumerate(table.cand_ids[qi]):
            if not cid or cid not in lookup:
                continue
            rec, s = lookup[cid]
            if kind == "retraction" and cid in flips:
                s = int(State.ACTIVE) if s == State.RETRACTED else int(State.RETRACTED)
            st[qi, j] = max(s, 0)
            if kind in ("category", "label_pair"):
                row = np.zeros(N_CATEGORIES)
                for name, v in rec.categories.items():
                    row[CATEGORY_NAMES.index(name)] = v
                w[qi, j] = row / row.sum()
            if kind == "event_time" and rec.event_time is not None:
                he[qi, j] = hours_since_epoch(rec.event_time) - q["at_h"]
                has[qi, j] = True
    c = table.cands
    return c._replace(
        weights=jnp.asarray(w, c.weights.dtype),
        state=jnp.asarray(st, jnp.int32),
        hours_to_event=jnp.asarray(he, c.hours_to_event.dtype),
        has_event=jnp.asarray(has),
    )


def _noise_task(table: SweepTable, kind: str, rate: float, seed: int, params=None) -> dict:
    base = stack_params([default_params() if params is None else params])
    ref = scores(table, base)[0]
    noisy = scores(table, base, cands=perturbed_candidates(table, kind, rate, seed))
    cmp_ = compare_to(ref, noisy, table)
    p = passes(cmp_["ranked"], table)[0]
    return {
        "kind": kind,
        "rate": rate,
        "seed": seed,
        "jaccard": float(cmp_["jaccard"].mean()),
        "tau": float(cmp_["tau"].mean()),
        "displaced_per_query": float(cmp_["displaced"].mean()),
        "pass": float(p.mean()),
    }


def _noise_grid(
    table: SweepTable, settings: Sequence[tuple[str, float, int]], scheduler: str | None, client, base=None
) -> list[dict]:
    """Run :func:`_noise_task` over (kind, rate, seed) settings, a task each; on a cluster the
    table is scattered to every worker once instead of being pickled into each task."""
    return map_tasks(
        _noise_task,
        [(*t, base) for t in settings],
        (table,),
        scheduler=scheduler,
        client=client,
        desc="noise settings",
        unit="setting",
        progress=False,
    )


def run_noise(
    table: SweepTable, cfg: NoiseSweep = NoiseSweep(), scheduler: str | None = None, client=None, base=None
) -> dict:
    """Metadata-noise sweeps over the full basis (paper: slot-key corruption keeps τ ≈ 0.997
    while Jaccard falls to 0.76)."""
    rows = _noise_grid(
        table, [(k, r, s) for k in cfg.kinds for r in cfg.rates for s in cfg.seeds], scheduler, client, base
    )
    return {**_meta(cfg, None, table), "rows": rows, "summary": _summarize(rows), "paper": PAPER["noise"]}


def run_label_perturbation(
    table: SweepTable,
    cfg: LabelPerturbation = LabelPerturbation(),
    scheduler: str | None = None,
    client=None,
    base=None,
) -> dict:
    """Category-label perturbation inside confused pairs (paper: 10% → Jaccard 0.974 ± 0.002,
    0.29 displaced edges per query; 50% → Jaccard 0.905, τ 0.897)."""
    rows = _noise_grid(table, [("label_pair", r, s) for r in cfg.rates for s in cfg.seeds], scheduler, client, base)
    return {**_meta(cfg, None, table), "rows": rows, "summary": _summarize(rows), "paper": PAPER["labels"]}


def _summarize(rows: list[dict]) -> dict:
    out: dict = {}
    for r in rows:
        out.setdefault(r["kind"], {}).setdefault(str(r["rate"]), []).append(r)
    return {
        k: {
            rate: {
                m: [round(float(np.mean([x[m] for x in rs])), 5), round(float(np.std([x[m] for x in rs])), 5)]
                for m in ("jaccard", "tau", "displaced_per_query", "pass")
            }
            for rate, rs in v.items()
        }
        for k, v in out.items()
    }


# ----------------------------------------------------------------------------- granularity


def run_granularity(
    table: SweepTable, cfg: Granularity = Granularity(), base=None, scheduler: str | None = None, client=None
) -> dict:
    """Ontologies collapsed to k clusters (optimal partitions) and the cognitive 3-partition:
    pass rate per k in one batched call (paper: gains saturate near 7)."""
    parts = optimal_table_partitions()
    base = default_params() if base is None else base
    sets = [collapse_params(base, parts[k]) for k in cfg.ks] + [collapse_params(base, cognitive_partition())]
    p = passes(rankings(score_sets(table, sets, scheduler=scheduler, client=client), table), table)
    rows = [{"k": k, "pass": float(p[i].mean()), "groups": parts[k]} for i, k in enumerate(cfg.ks)]
    return {
        **_meta(cfg, None, table),
        "rows": rows,
        "cognitive_3": {"pass": float(p[-1].mean()), "groups": cognitive_partition()},
        "paper": PAPER["granularity"],
    }


# ----------------------------------------------------------------------------- holdout


def _calibrate_task(train: list[dict], embedder, base):
    from theory.calibrate import calibrate
    from theory.corpus import build_corpus

    return calibrate(build_corpus(train, embedder), base=base)


def run_holdout(
    suites, embedder, table: SweepTable, seed: int = 0, base=None, scheduler: str | None = None, client=None
) -> dict:
    """Persona holdout: calibrate category α on one half (theory A.15, max-margin), evaluate
    on the other half against the default parameters (paper: 77.0% vs 76.8%). With ``base``,
    calibration starts from it and it is the reference instead of the defaults. On a cluster the
    calibration (the corpus of the training half and its convex program) is one task."""
    personas = sorted({q["persona"] for q in table.questions})
    rng = np.random.default_rng(seed)
    rng.shuffle(personas)
    half = set(personas[: len(personas) // 2])
    train = [suite_to_dict(s) for s in suites if s.persona in half]
    ref = default_params() if base is None else base
    ((params, cert),) = map_tasks(
        _calibrate_task, [(train, embedder, base)], scheduler=scheduler, client=client, progress=False
    )
    test_idx = [i for i, q in enumerate(table.questions) if q["persona"] not in half]
    train_idx = [i for i, q in enumerate(table.questions) if q["persona"] in half]
    p = passes(rankings(scores(table, stack_params([ref, params])), table), table)
    return {
        "config": {"name": "holdout", "seed": seed, "train_personas": sorted(half)},
        "git_revision": git_revision(),
        "data_source": table.source,
        "default_pass_test": float(p[0, test_idx].mean()),
        "calibrated_pass_test": float(p[1, test_idx].mean()),
        "default_pass_train": float(p[0, train_idx].mean()),
        "calibrated_pass_train": float(p[1, train_idx].mean()),
        "calibration_margin": cert.get("margin") if isinstance(cert, dict) else None,
        "calibrated_alpha": [round(float(a), 4) for a in np.asarray(params.alpha)],
        "paper": PAPER["holdout"],
    }


def write(result: dict, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1, default=str))
    return path


def run_all(
    suites,
    embedder,
    label: str,
    out: Path,
    only: Sequence[str],
    quick: bool,
    scheduler: str | None = None,
    log=print,
    base=None,
    params_inputs: dict | None = None,
) -> dict[str, Path]:
    """Run the named appendix sweeps on one candidate table; ``base``: the parameter set every
    sweep starts from (default parameters when None), recorded in each result with
    ``params_inputs``."""
    unknown = [n for n in only if n not in SWEEPS]
    if unknown:
        raise ValueError(f"--only: unknown sweep(s) {unknown}; known: {', '.join(SWEEPS)}")
    client = connect(scheduler)
    table = build_table(suites, embedder, source=label, client=client)
    written = {}
    noise_cfg = NoiseSweep(rates=(0.1, 0.3), seeds=(0,)) if quick else NoiseSweep()
    label_cfg = LabelPerturbation(seeds=(0, 1)) if quick else LabelPerturbation()
    jobs = {
        "multiplier": lambda: run_multiplier(table, base=base, client=client),
        "alpha": lambda: run_alpha(table, base=base, client=client),
        "noise": lambda: run_noise(table, noise_cfg, client=client, base=base),
        "labels": lambda: run_label_perturbation(table, label_cfg, client=client, base=base),
        "granularity": lambda: run_granularity(table, base=base, client=client),
        "holdout": lambda: run_holdout(suites, embedder, table, base=base, client=client),
    }
    for name in only:
        t = time.perf_counter()
        res = jobs[name]()
        if base is not None:
            res["params"] = {**(params_inputs or {}), "changes_from_default": frcore.param_changes(base)}
        written[name] = write(res, out / f"sweep_{name}.json")
        log(f"sweep {name}: {time.perf_counter() - t:.1f} s → {written[name]}")
    return written


#: The appendix sweeps ``fr sweep --only`` runs (in this order by default).
SWEEPS = ("multiplier", "alpha", "noise", "labels", "granularity", "holdout")


def _cli(args) -> int:
    base = frcore.params_from_args(args)  # before anything runs: a bad file or override fails fast
    only = [x.strip() for x in args.only.split(",") if x.strip()]
    suites, label = load_suites_arg(args.suite, args.personas, args.seed)
    run_all(
        suites,
        make_embedder(args.embedder),
        label,
        Path(args.out),
        only,
        args.quick,
        args.scheduler,
        base=base,
        params_inputs=frcore.params_record(args),
    )
    return 0


def _suite_arguments(p) -> None:
    from frcore.bench import add_scheduler_argument, add_suite_arguments

    add_suite_arguments(p)
    add_scheduler_argument(p)


def register(subparsers) -> None:
    from .grid import register_grid

    p = subparsers.add_parser(
        "sweep",
        help="parameter sweeps: the appendix's (--only …) or any grid (`fr sweep grid --param NAME=V1,V2`)",
        description="Without an action: the appendix sweeps (--only picks them; results as sweep_NAME.json in --out). "
        "`fr sweep grid --param NAME=V1,V2,…` evaluates any grid of parameters (see `fr sweep grid --help`). "
        "Every sweep re-scores each question's fixed FR-full candidate set, one batched kernel call over stacked "
        "parameter sets.",
    )
    _suite_arguments(p)
    p.add_argument(
        "--only", default=",".join(SWEEPS), help=f"comma-separated sweeps to run (default: all of {','.join(SWEEPS)})"
    )
    p.add_argument("--quick", action="store_true", help="reduced noise and label grids")
    frcore.add_params_arguments(
        p,
        param_help="override one parameter of the base every sweep starts from (repeatable; same names as `fr bench "
        "run --param`)",
    )
    p.add_argument("--out", default="results", help="output folder (default: results)")
    p.set_defaults(func=_cli)
    sub = p.add_subparsers(dest="command_sweep", metavar="ACTION")
    register_grid(sub, _suite_arguments)
