"""``fr calibrate``: category-specific α_c from a corpus's requirements, as a convex program (A.15).

Every preservation / suppression requirement of the corpus (:func:`theory.polytope.requirement_pairs`)
is the linear row ε + α_{c(s)}(a_s − σ_s) − α_{c(x)}(a_x − σ_x) ≥ m over α ∈ [0, 1]^11. Rows that
no α in the box can meet on their own (the lifecycle masks, not the blend, must settle those) are
set aside and counted; on the rest we solve the max-margin program

.. math:: \\max_{\\alpha\\in[0,1]^{11},\\,t} t \\quad\\text{s.t.}\\quad \\hat G_i\\alpha + t \\le \\hat h_i

(rows normalised to unit norm: t is the distance to the nearest requirement hyperplane;
t ≥ 0 ⇔ all kept requirements hold; t < 0 is the least-violating point). **Rates λ_c are held
fixed**: a = exp(−λ·age) enters the blend multiplied by α, and no log-linear reparametrisation
makes b_s − b_x jointly linear (or concave) in (α, log λ), so including λ would lose convexity.
The result is written as a parameter file (``frcore-params-v1``, read and written by
:func:`frcore.load_params` / :func:`frcore.save_params`; docs/formats.md), with its certificate:
the constraint slacks recomputed with NumPy. ``--params FILE`` / ``--param NAME=VALUE`` give the
base parameter set (its rates, clocks and floors are the ones held fixed; the activations of the
requirement rows are computed under it).

``fr calibrate --folds K`` (:func:`calibrate_folds`) reports the calibration's own generalisation:
the suite's personas are split into K folds (:func:`persona_folds`, seeded by ``--fold-seed``);
for each fold, α_c is calibrated as above on the other K − 1 folds, and the held-out fold's
questions are run through FR-Bank (``fr bench run``'s path) under FR-full with the calibrated
parameters and with the base parameters. Each held-out question is scored exactly once, so the
pooled out-of-fold records cover the whole suite; their pass rates, staleness, the paired
bootstrap CI of the difference and McNemar's exact p (overall and per attack vector) are those
of ``fr compare`` (:func:`frcore.bench.compare.compare_records`).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

import frcore
from frcore import CATEGORY_NAMES, LifecycleParams

from . import polytope as poly

PARAMS_FORMAT = frcore.PARAMS_FORMAT
#: The parameter file is read and written by the core (kept here under their old names).
save_params = frcore.save_params
load_params = frcore.load_params


def calibrate(
    corpus,
    margin: float = poly.DEFAULT_MARGIN,
    pairs: poly.Pairs | None = None,
    base: LifecycleParams | None = None,
    prove: bool = False,
) -> tuple[LifecycleParams, dict]:
    """Max-margin category α_c for ``corpus``; returns (params, certificate dict). With
    ``prove`` and an infeasible program (t < 0), the certificate also carries a Farkas proof of
    infeasibility re-checked in float64 and exact arithmetic
    (:func:`theory.polytope.prove_infeasible`)."""
    if base is None:
        base = getattr(corpus, "scoring_params", frcore.default_params)()
    elif getattr(corpus, "params", None) is None and pairs is None:
        from dataclasses import replace

        corpus = replace(corpus, params=base)  # the requirement rows' activations under ``base``
    P = poly.requirement_pairs(corpus) if pairs is None else pairs
    G, h = poly.category_alpha_rows(P, margin)
    sat = poly.row_satisfiable(G, h)
    nz = np.linalg.norm(G, axis=1) > 0
    rows = np.flatnonzero(sat & nz)
    if rows.size == 0:
        raise ValueError("corpus: no satisfiable requirement rows to calibrate against")
    alpha, t = poly.max_margin_point(G[rows], h[rows])
    ok, smin = poly.check_point(G[rows], h[rows], alpha)
    slack = h[rows] - G[rows] @ alpha
    cert = {
        "margin_m": margin,
        "pairs": len(P),
        "rows_used": int(rows.size),
        "rows_unsatisfiable_alone": int((~sat).sum()),
        "rows_constant": int((sat & ~nz).sum()),
        "margin": float(t),
        "numpy_min_slack": float(smin),
        "numpy_check_consistent": bool(abs(smin - t) <= 1e-6 and np.all((alpha >= 0) & (alpha <= 1))),
        "feasible": bool(ok and t >= 0),
        "rows_violated": int((slack < -1e-9).sum()),
        "alpha": dict(zip(CATEGORY_NAMES, map(float, alpha))),
        "rates_held_fixed": True,
    }
    if prove and not cert["feasible"]:
        proof = poly.prove_infeasible(G[rows], h[rows])
        proof["rows"] = [int(rows[k]) if isinstance(k, int) else k for k in proof["rows"]]
        cert["infeasibility_certificate"] = proof
        cert["infeasibility_certificate_verified"] = bool(proof["float64"] and proof["exact"])
    params = frcore.replace_params(base, alpha=np.asarray(alpha, dtype=np.float64))
    return params, cert


# --------------------------------------------------------------------------- cross-validation by persona


def check_folds(k, n_personas: int | None = None) -> int:
    """``k`` as a number of folds: an integer ≥ 2 and, given ``n_personas``, at most that many
    (every fold holds a persona out); ``ValueError`` naming ``--folds`` otherwise."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise ValueError(f"--folds: K must be an integer, got {k!r}")
    if k < 2:
        raise ValueError(f"--folds: K must be ≥ 2 (calibrate on K − 1 folds, score the held-out one), got {k}")
    if n_personas is not None and k > n_personas:
        raise ValueError(f"--folds: K = {k} exceeds the number of personas ({n_personas}); every fold needs one")
    return int(k)


def persona_folds(personas: Sequence[str], k: int, seed: int = 0) -> list[tuple[str, ...]]:
    """Split persona ids into ``k`` folds: the ids in sorted order, shuffled by a NumPy generator
    seeded with ``seed``, dealt round-robin (fold sizes differ by at most one; the result does
    not depend on the order of ``personas``). Each fold's ids are returned sorted.

    ``ValueError`` naming ``--folds`` for K < 2 or K above the number of personas
    (:func:`check_folds`), and naming the persona for a repeated id."""
    ids = sorted(personas)
    for a, b in zip(ids, ids[1:]):
        if a == b:
            raise ValueError(f"personas: persona id {a!r} appears twice")
    k = check_folds(k, len(ids))
    order = np.random.default_rng(seed).permutation(len(ids))
    return [tuple(sorted(ids[i] for i in order[f::k])) for f in range(k)]


def _fr_full_with(label: str, params: LifecycleParams | None):
    """FR-full scoring with ``params`` (``None``: the default parameters), named ``label`` — a
    side as ``fr compare`` runs it."""
    from frcore.bench.compare import resolve_side, side_system

    system, _, _ = resolve_side("default")
    return side_system(label, system, params)


def _fold_task(suites: Sequence, embedder, options: dict, f: int, held: tuple[str, ...]):
    """One fold of :func:`calibrate_folds`: calibrate on the personas not in ``held``, run FR-full
    on the held-out ones with the reference (side a) and calibrated (side b) parameters; returns
    (params, certificate, the ``run_benchmark`` result, the calibration's question count)."""
    from frcore import bench

    from . import corpus as corpus_mod

    held_set = set(held)
    train = [s for s in suites if s.persona not in held_set]
    test = [s for s in suites if s.persona in held_set]
    corpus = corpus_mod.build_corpus(train, embedder)
    params, cert = calibrate(corpus, margin=options["margin"], base=options["reference"])
    res = bench.run_benchmark(
        test,
        [_fr_full_with("a", options["base"]), _fr_full_with("b", params)],
        embedder,
        gold_intent=options["gold_intent"],
        keep_terms=False,
        progress=False,
        suite_label=f"{options['label']} [fold {f}]",
    )
    return params, cert, res, corpus.n_questions


def calibrate_folds(
    suites: Sequence,
    embedder,
    k: int,
    *,
    fold_seed: int = 0,
    margin: float = poly.DEFAULT_MARGIN,
    base: LifecycleParams | None = None,
    gold_intent: bool = False,
    n_boot: int = 10000,
    boot_seed: int = 0,
    label: str = "",
    progress: bool = True,
    scheduler: str | None = None,
    client=None,
) -> dict[str, Any]:
    """K-fold cross-validation of the calibration over the personas of ``suites``.

    For each fold: :func:`calibrate` on the corpus of the other K − 1 folds' personas (under
    ``base``, the default parameters if ``None``), then the fold's own questions through
    :func:`frcore.bench.run_benchmark` under FR-full twice — side **a** with ``base`` (the
    reference; the default parameters unless given), side **b** with the calibrated parameters.
    Returns per fold and pooled over all out-of-fold questions the statistics of
    :func:`frcore.bench.compare.compare_records` (``pass_a``, ``pass_b``, ``diff`` = b − a with its
    paired bootstrap ``diff_ci``, exact ``mcnemar_p``, ``discordant``, ``staleness_a`` /
    ``staleness_b``, ``per_av``, ``discordant_questions``); each fold also carries its persona
    split, its certificate and its parameter file (``parameter_file``, a ``frcore-params-v1``
    document). With ``scheduler`` / ``client`` the folds run on a Dask cluster, a fold per task
    (:func:`frcore.bench.map_tasks`; the suites scattered once), with the same result."""
    from frcore import bench
    from frcore.bench.compare import compare_records

    by_persona = {s.persona: s for s in suites}
    if len(by_persona) != len(suites):
        raise ValueError("suites: a persona id appears in more than one suite")
    folds = persona_folds(list(by_persona), k, fold_seed)
    reference = frcore.default_params() if base is None else base
    t0 = time.perf_counter()
    out_folds: list[dict[str, Any]] = []
    pooled: list[dict] = []
    if progress:
        for f, held in enumerate(folds, 1):
            print(
                f"fold {f}/{len(folds)}: calibrating on {len(suites) - len(held)} personas, holding out "
                f"{', '.join(held)}",
                file=sys.stderr,
                flush=True,
            )
    options = {"margin": margin, "base": base, "reference": reference, "gold_intent": gold_intent, "label": label}
    done = bench.map_tasks(
        _fold_task,
        [(f, held) for f, held in enumerate(folds, 1)],
        (list(suites), embedder, options),
        scheduler=scheduler,
        client=client,
        desc="folds",
        unit="fold",
        progress=progress,
    )
    for (f, held), (params, cert, res, n_calibration) in zip(enumerate(folds, 1), done):
        held_set = set(held)
        train = [s for s in suites if s.persona not in held_set]
        records = res["questions"]
        pooled.extend(records)
        stats = compare_records(records, n_boot=n_boot, seed=boot_seed)
        provenance = {
            "command": "fr calibrate --folds",
            "suite": label,
            "fold": f,
            "folds": len(folds),
            "fold_seed": fold_seed,
            "personas": sorted(s.persona for s in train),
            "embedder": getattr(embedder, "name", str(embedder)),
            "margin_m": margin,
        }
        out_folds.append(
            {
                "fold": f,
                "held_out": list(held),
                "calibrated_on": sorted(s.persona for s in train),
                "n_questions": res["n_questions"],
                "n_calibration_questions": n_calibration,
                "margin": cert["margin"],
                "rows_used": cert["rows_used"],
                "feasible": cert["feasible"],
                **stats,
                "changes_from_reference": frcore.param_changes(params, reference),
                "parameter_file": frcore.params_to_dict(params, cert, provenance),
            }
        )
        if progress:
            print(
                f"fold {f}/{len(folds)}: {res['n_questions']} held-out questions, pass default "
                f"{100 * stats['pass_a']:.1f}% → calibrated {100 * stats['pass_b']:.1f}%",
                file=sys.stderr,
                flush=True,
            )
    total = compare_records(pooled, n_boot=n_boot, seed=boot_seed)
    return {
        "a": "default" if base is None else "base parameters",
        "b": "calibrated on the other folds",
        "folds": out_folds,
        "pooled": {"n": len(pooled) // 2, **total},
        "k": len(folds),
        "fold_seed": fold_seed,
        "margin_m": margin,
        "suite": label,
        "personas": sorted(by_persona),
        "n_personas": len(by_persona),
        "n_questions": len(pooled) // 2,
        "embedder": getattr(embedder, "name", str(embedder)),
        "gold_intent": gold_intent,
        "reference_changes_from_default": frcore.param_changes(reference),
        "test": {
            "diff": "pass_b − pass_a (calibrated − reference)",
            "bootstrap": {"n_boot": n_boot, "seed": boot_seed, "level": 0.95},
            "mcnemar": "exact two-sided binomial",
            "pooled": "every question once, scored by the fold that held its persona out",
        },
        "seconds": round(time.perf_counter() - t0, 2),
    }


def format_folds(r: dict) -> str:
    """The table ``fr calibrate --folds`` prints: one row per fold, the pooled row, and the pooled
    out-of-fold comparison per attack vector."""

    def pct(x):
        return f"{100 * x:.1f}"

    def row(cells, s):
        lo, hi = s["diff_ci"]
        return (
            f"| {cells} | {s['n']} | {pct(s['pass_a'])} | {pct(s['pass_b'])} | {100 * s['diff']:+.1f} | "
            f"[{100 * lo:+.1f}, {100 * hi:+.1f}] | {s['mcnemar_p']:.3g} | "
            f"{s['discordant']['a_only']} | {s['discordant']['b_only']} |"
        )

    lines = [
        f"{r['k']}-fold calibration by persona (fold seed {r['fold_seed']}): {r['n_personas']} personas, "
        f"{r['n_questions']} questions, suite {r['suite']}; a = {r['a']}, b = calibrated",
        "",
        "| fold | held out | margin | n | pass a % | pass b % | b − a (pp) | 95% CI (pp) | McNemar p (exact) "
        "| a only | b only |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for fo in r["folds"]:
        lines.append(row(f"{fo['fold']} | {', '.join(fo['held_out'])} | {fo['margin']:.3g}", fo))
    lines.append(row(f"**pooled** | all {r['n_personas']} | ", r["pooled"]))
    p = r["pooled"]
    lines += [
        "",
        "pooled out-of-fold, per attack vector:",
        "",
        "| AV | n | pass a % | pass b % | b − a (pp) | 95% CI (pp) | McNemar p (exact) | a only | b only |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [row(av, s) for av, s in p["per_av"].items()]
    stale = ", ".join(f"fold {fo['fold']} {pct(fo['staleness_a'])} → {pct(fo['staleness_b'])}" for fo in r["folds"])
    lines.append(f"\nstaleness % (a → b): pooled {pct(p['staleness_a'])} → {pct(p['staleness_b'])}; {stale}")
    return "\n".join(lines)


def fold_params_path(json_path: str | Path, fold: int) -> Path:
    """Where ``--folds --json PATH`` writes fold ``fold``'s parameter file: beside PATH,
    ``<stem>.fold<N>.params.json``."""
    p = Path(json_path)
    return p.with_name(f"{p.stem}.fold{fold}.params.json")


def _run_folds(args, base: LifecycleParams | None) -> int:
    from frcore.bench import git_revision, make_embedder

    from .corpus import load_suites

    check_folds(args.folds)  # before the suite is read
    fold_seed = 0 if args.fold_seed is None else args.fold_seed
    n_boot = 10000 if args.n_boot is None else args.n_boot
    boot_seed = 0 if args.boot_seed is None else args.boot_seed
    if n_boot < 1:
        raise ValueError(f"--n-boot: must be ≥ 1, got {n_boot}")
    suites, label = load_suites(args.suite, args.personas, args.seed)
    check_folds(args.folds, len({s.persona for s in suites}))  # before anything runs
    emb = make_embedder(args.embedder)
    r = calibrate_folds(
        suites,
        emb,
        args.folds,
        fold_seed=fold_seed,
        margin=args.margin,
        base=base,
        gold_intent=args.gold_intent,
        n_boot=n_boot,
        boot_seed=boot_seed,
        label=label,
        scheduler=args.scheduler,
    )
    r["git_revision"] = git_revision()
    r.update(frcore.params_record(args))
    if args.json:
        for fo in r["folds"]:
            doc = fo["parameter_file"]
            doc["provenance"]["git_revision"] = r["git_revision"]
            path = fold_params_path(args.json, fo["fold"])
            save_params(frcore.params_from_dict(doc, f"fold {fo['fold']}"), path, doc["certificate"], doc["provenance"])
            fo["parameter_file_path"] = str(path)
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(r, indent=1, default=str), encoding="utf-8")
    print(format_folds(r))
    ok = all(fo["parameter_file"]["certificate"]["numpy_check_consistent"] for fo in r["folds"])
    if args.out:  # the calibration on every persona: the parameter set whose generalisation the folds estimate
        print()
        ok = _save_calibration(args, _corpus_for(suites, emb, base), {"folds_result": args.json}) and ok
    wrote = [x for x in (args.json, args.out) if x]
    print(
        f"\n{r['seconds']} s"
        + (f"; wrote {', '.join(wrote)}" if wrote else "")
        + (" and the per-fold parameter files beside the JSON" if args.json else ""),
        file=sys.stderr,
    )
    return 0 if ok else 1


def _corpus_for(suites: Sequence, embedder, base: LifecycleParams | None = None):
    """The calibration corpus of ``suites`` scored under ``base`` (the default parameters if ``None``)."""
    from dataclasses import replace

    from .corpus import build_corpus

    corpus = build_corpus(suites, embedder)
    return corpus if base is None else replace(corpus, params=base)


def _save_calibration(args, corpus, extra: dict | None = None) -> bool:
    """Calibrate on ``corpus``, write ``--out`` and print the α; whether the NumPy check agrees."""
    from frcore.bench import git_revision

    params, cert = calibrate(corpus, margin=args.margin)
    provenance = {
        "command": "fr calibrate",
        "suite": args.suite,
        "personas": sorted(set(corpus.personas)),
        "embedder": args.embedder,
        "margin_m": args.margin,
        "git_revision": git_revision(),
        **(extra or {}),
        **frcore.params_record(args),
    }
    save_params(params, args.out, cert, provenance)
    print(
        f"calibrated α_c over {cert['rows_used']} requirement rows; margin {cert['margin']:.4g} "
        f"({'feasible' if cert['feasible'] else 'infeasible'}); wrote {args.out}"
    )
    for name, a in cert["alpha"].items():
        print(f"  {name:24s} {a:.4f}")
    return bool(cert["numpy_check_consistent"])


def _run(args) -> int:
    from dataclasses import replace

    from .corpus import load_corpus

    base = frcore.params_from_args(args)  # before the corpus: a bad file fails fast
    if args.folds is not None:
        return _run_folds(args, base)
    for flag in ("json", "fold_seed", "n_boot", "boot_seed", "gold_intent", "scheduler"):
        if getattr(args, flag) not in (None, False):
            raise ValueError(f"--{flag.replace('_', '-')}: only with --folds K (cross-validation by persona)")
    if not args.out:
        raise ValueError("--out: required (the parameter file to write) unless --folds is given")
    corpus = load_corpus(args.suite, args.personas, args.embedder, args.seed)
    if base is not None:
        corpus = replace(corpus, params=base)
    return 0 if _save_calibration(args, corpus) else 1


def register(subparsers) -> None:
    from frcore.bench import add_scheduler_argument, add_suite_arguments

    p = subparsers.add_parser(
        "calibrate",
        help="max-margin category α_c from a corpus (A.15); writes a parameter file (frcore-params-v1); "
        "--folds K: its out-of-fold pass rates against the default",
        description=(
            "Calibrate category α_c on the suite's requirement rows (A.15) and write a parameter file. With --folds K, "
            "split the personas into K folds, calibrate on K − 1, score the held-out fold with the calibrated and "
            "the default parameters (FR-full through FR-Bank), and report per fold and pooled the pass rates, the "
            "paired bootstrap CI of the difference and exact McNemar p, per attack vector."
        ),
    )
    add_suite_arguments(p, embedder_choices=("hash", "minilm"))
    p.add_argument("--margin", type=float, default=poly.DEFAULT_MARGIN, help="blend margin m of each requirement")
    frcore.add_params_arguments(p)
    p.add_argument(
        "--out",
        help="output parameter file (frcore-params-v1; read by --params of every scoring command); "
        "required without --folds; with --folds, the calibration on every persona",
    )
    g = p.add_argument_group("cross-validation by persona (--folds)")
    g.add_argument(
        "--folds",
        type=int,
        default=None,
        metavar="K",
        help="calibrate on K − 1 folds of personas, score the held-out fold; 2 ≤ K ≤ number of personas",
    )
    g.add_argument(
        "--fold-seed", type=int, default=None, help="seed of the persona shuffle that forms the folds (default 0)"
    )
    g.add_argument(
        "--json", help="write the result here, and each fold's parameter file beside it (<stem>.foldN.params.json)"
    )
    g.add_argument(
        "--gold-intent", action="store_true", help="score with the suite's intent labels instead of inferring intent"
    )
    g.add_argument("--n-boot", type=int, default=None, help="bootstrap resamples (default 10000)")
    g.add_argument("--boot-seed", type=int, default=None, help="bootstrap seed (default 0)")
    add_scheduler_argument(g)
    p.set_defaults(func=_run)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(0)
