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
"""

from __future__ import annotations

import sys

import numpy as np

import frcore
from frcore import CATEGORY_NAMES, LifecycleParams

from . import polytope as poly

PARAMS_FORMAT = frcore.PARAMS_FORMAT
#: The parameter file is read and written by the core (kept here under their old names).
save_params = frcore.save_params
load_params = frcore.load_params


def calibrate(corpus, margin: float = poly.DEFAULT_MARGIN, pairs: poly.Pairs | None = None,
              base: LifecycleParams | None = None, prove: bool = False) -> tuple[LifecycleParams, dict]:
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


def _run(args) -> int:
    from dataclasses import replace

    from frcore.bench import git_revision

    from .corpus import load_corpus

    base = frcore.params_from_args(args)  # before the corpus: a bad file fails fast
    corpus = load_corpus(args.suite, args.personas, args.embedder, args.seed)
    if base is not None:
        corpus = replace(corpus, params=base)
    params, cert = calibrate(corpus, margin=args.margin)
    provenance = {"command": "fr calibrate", "suite": args.suite, "personas": sorted(set(corpus.personas)),
                  "embedder": args.embedder, "margin_m": args.margin, "git_revision": git_revision(), **frcore.params_record(args)}
    save_params(params, args.out, cert, provenance)
    print(f"calibrated α_c over {cert['rows_used']} requirement rows; margin {cert['margin']:.4g} "
          f"({'feasible' if cert['feasible'] else 'infeasible'}); wrote {args.out}")
    for name, a in cert["alpha"].items():
        print(f"  {name:24s} {a:.4f}")
    return 0 if cert["numpy_check_consistent"] else 1


def register(subparsers) -> None:
    from frcore.bench import add_suite_arguments

    p = subparsers.add_parser("calibrate", help="max-margin category α_c from a corpus (A.15); writes a parameter file (frcore-params-v1)")
    add_suite_arguments(p, embedder_choices=("hash", "minilm"))
    p.add_argument("--margin", type=float, default=poly.DEFAULT_MARGIN, help="blend margin m of each requirement")
    frcore.add_params_arguments(p)
    p.add_argument("--out", required=True, help="output parameter file (frcore-params-v1; read by --params of every scoring command)")
    p.set_defaults(func=_run)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(0)
