"""``fr compare``: two parameter sets (or systems) on the same suite, with paired tests.

Each side is a *spec*: ``default`` (FR-full, default parameters), a system name
(``fr-global-alpha``), a parameter file (``p.json``, scored by FR-full) or ``SYSTEM:FILE`` (that
system on that file's parameters), plus ``--a-param`` / ``--b-param`` overrides on top. Both
sides run through the full FR-Bank pipeline (``fr bench run``'s path: one bank per persona, the
same questions), so nothing is approximated. Reported, overall and per attack vector: the pass
rates, the difference **b − a** with its paired bootstrap 95% CI (questions resampled with
replacement, pairs kept together; 10,000 resamples, seed 0), McNemar's **exact** two-sided
binomial p on the discordant questions, and the discordant questions themselves.

Output contract (``--json``): ``{"a": str, "b": str, "pass_a", "pass_b", "diff", "diff_ci": [lo,
hi], "mcnemar_p", "discordant": {"a_only", "b_only"}, "staleness_a", "staleness_b", "per_av":
{AV: {same keys, "n"}}, "discordant_questions": {"a_only": [...], "b_only": [...]}, …}``.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._params import LifecycleParams
from .._params_io import ParamsError, apply_param_overrides, param_changes, read_params_file
from ._inputs import add_suite_arguments, load_suites_arg, make_embedder
from ._metrics import mcnemar, paired_bootstrap
from ._systems import SYSTEMS, System, resolve_systems

#: Exact McNemar at any number of discordant pairs (``mcnemar``'s χ² switch never fires).
EXACT = sys.maxsize


def resolve_side(
    spec: str, overrides: Sequence[str] = (), flag: str = "--a"
) -> tuple[System, LifecycleParams | None, dict]:
    """A side's spec → (system, its parameters (None: defaults), a description)."""
    spec = str(spec).strip()
    if not spec:
        raise ParamsError(flag, "empty spec; expected default, a system name, a parameter file or SYSTEM:FILE")
    system_name, path = "fr-full", None
    if spec != "default":
        head, sep, tail = spec.partition(":")
        if sep and _is_system(head):
            system_name, path = head, tail
        elif _is_system(spec):
            system_name = spec
        else:
            path = spec
    if path is not None and not Path(path).is_file():
        raise ParamsError(
            flag, f"{spec!r} is neither a system ({', '.join(SYSTEMS)}, fr-collapsed-K) nor an existing parameter file"
        )
    system = resolve_systems([system_name])[0]
    params = read_params_file(path).params if path else None
    if overrides:
        params = apply_param_overrides(params, list(overrides), f"{flag}-param")
    desc = {
        "spec": spec,
        "system": system_name,
        "params_file": path,
        "param_args": list(overrides),
        "changes_from_default": param_changes(params) if params is not None else {},
    }
    return system, params, desc


def _is_system(name: str) -> bool:
    try:
        resolve_systems([name])
        return True
    except ValueError:
        return False


def side_system(label: str, system: System, params: LifecycleParams | None) -> System:
    """The side as a system named ``label`` that scores with ``params`` (the system's own
    transform, e.g. a collapse, applied on top)."""

    def params_fn(_base: LifecycleParams) -> LifecycleParams:
        return system.params(params)

    return System(label, system.pipeline, system.description, params_fn)


def _stats(a: np.ndarray, b: np.ndarray, n_boot: int, seed: int) -> dict[str, Any]:
    bs = paired_bootstrap(b, a, n_boot=n_boot, seed=seed)
    mc = mcnemar(a, b, exact_below=EXACT)
    return {
        "n": int(a.size),
        "pass_a": float(a.mean()),
        "pass_b": float(b.mean()),
        "diff": bs["diff"],
        "diff_ci": [bs["ci_low"], bs["ci_high"]],
        "mcnemar_p": mc["p_value"],
        "discordant": {"a_only": mc["b10"], "b_only": mc["b01"]},
    }


def compare_records(records: Sequence[dict], n_boot: int = 10000, seed: int = 0) -> dict[str, Any]:
    """The paired statistics of ``fr bench``-style records of systems ``a`` and ``b``."""
    by: dict[str, dict[tuple[Any, Any], dict]] = {"a": {}, "b": {}}
    for r in records:
        by[r["system"]][(r["persona"], r["id"])] = r
    keys = [k for k in by["a"] if k in by["b"]]
    if not keys or len(keys) != len(by["a"]) or len(keys) != len(by["b"]):
        raise ValueError("records: the two sides were not run on the same questions")
    a = np.array([by["a"][k]["passed"] for k in keys], dtype=bool)
    b = np.array([by["b"][k]["passed"] for k in keys], dtype=bool)
    av = np.array([by["a"][k]["attack_vector"][:3] for k in keys])
    out = _stats(a, b, n_boot, seed)
    out["staleness_a"] = float(np.mean([by["a"][k]["stale"] for k in keys]))
    out["staleness_b"] = float(np.mean([by["b"][k]["stale"] for k in keys]))
    out["per_av"] = {}
    for key in sorted(set(av.tolist()), key=lambda x: int(x[2:])):
        m = av == key
        out["per_av"][key] = _stats(a[m], b[m], n_boot, seed)
    out["discordant_questions"] = {
        "a_only": [
            {"persona": k[0], "id": k[1], "attack_vector": av[i]} for i, k in enumerate(keys) if a[i] and not b[i]
        ],
        "b_only": [
            {"persona": k[0], "id": k[1], "attack_vector": av[i]} for i, k in enumerate(keys) if b[i] and not a[i]
        ],
    }
    return out


def run_compare(
    suites,
    embedder,
    a: str,
    b: str,
    *,
    a_params: Sequence[str] = (),
    b_params: Sequence[str] = (),
    gold_intent: bool = False,
    label: str = "",
    n_boot: int = 10000,
    seed: int = 0,
    progress: bool = True,
) -> dict[str, Any]:
    """Run both sides on ``suites`` through FR-Bank and compare them (the ``--json`` result)."""
    from ._runner import git_revision, run_benchmark

    sys_a, p_a, d_a = resolve_side(a, a_params, "--a")
    sys_b, p_b, d_b = resolve_side(b, b_params, "--b")
    t0 = time.perf_counter()
    res = run_benchmark(
        suites,
        [side_system("a", sys_a, p_a), side_system("b", sys_b, p_b)],
        embedder,
        gold_intent=gold_intent,
        keep_terms=False,
        progress=progress,
        suite_label=label,
    )
    stats = compare_records(res["questions"], n_boot=n_boot, seed=seed)
    return {
        "a": a,
        "b": b,
        **stats,
        "sides": {"a": d_a, "b": d_b},
        "suite": label,
        "n_personas": res["n_personas"],
        "personas": sorted({s.persona for s in suites}),
        "n_questions": res["n_questions"],
        "embedder": res["embedder"],
        "gold_intent": gold_intent,
        "test": {
            "diff": "pass_b − pass_a",
            "bootstrap": {"n_boot": n_boot, "seed": seed, "level": 0.95},
            "mcnemar": "exact two-sided binomial",
        },
        "git_revision": git_revision(),
        "seconds": round(time.perf_counter() - t0, 2),
    }


def format_compare(r: dict) -> str:
    def pct(x):
        return f"{100 * x:.1f}"

    lines = [
        f"a = {r['a']}   b = {r['b']}   ({r['n_questions']} questions, {r['n_personas']} personas, suite {r['suite']})",
        "",
        "| | n | pass a % | pass b % | b − a (pp) | 95% CI (pp) | McNemar p (exact) | a only | b only |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    rows = [("all", r)] + list(r["per_av"].items())
    for name, s in rows:
        lines.append(
            f"| {name} | {s['n'] if 'n' in s else r['n_questions']} | {pct(s['pass_a'])} | {pct(s['pass_b'])} | "
            f"{100 * s['diff']:+.1f} | "
            f"[{100 * s['diff_ci'][0]:+.1f}, {100 * s['diff_ci'][1]:+.1f}] | {s['mcnemar_p']:.3g} | "
            f"{s['discordant']['a_only']} | {s['discordant']['b_only']} |"
        )
    lines.append(f"\nstaleness: a {pct(r['staleness_a'])}%, b {pct(r['staleness_b'])}%")
    for side in ("a_only", "b_only"):
        qs = r["discordant_questions"][side]
        if qs:
            lines.append(f"passed by {side[0]} only ({len(qs)}): " + ", ".join(f"{q['persona']}/{q['id']}" for q in qs))
    return "\n".join(lines)


def _cli(args) -> int:
    resolve_side(args.a, args.a_param, "--a")  # fail fast, before the suite is read
    resolve_side(args.b, args.b_param, "--b")
    suites, label = load_suites_arg(args.suite, args.personas, args.seed)
    r = run_compare(
        suites,
        make_embedder(args.embedder),
        args.a,
        args.b,
        a_params=args.a_param,
        b_params=args.b_param,
        gold_intent=args.gold_intent,
        label=label,
        n_boot=args.n_boot,
        seed=args.boot_seed,
    )
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(r, indent=1, default=str))
    print(format_compare(r))
    print(f"\n{r['seconds']} s" + (f"; wrote {args.json}" if args.json else ""), file=sys.stderr)
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "compare",
        help="two parameter sets or systems on the same suite: paired bootstrap CI of the pass difference, exact "
        "McNemar, per attack vector",
        description="Run two sides through FR-Bank on the same questions and test the pass difference b − a. A side is "
        "`default`, a system "
        "name, a parameter file (frcore-params-v1, scored by fr-full) or SYSTEM:FILE.",
    )
    add_suite_arguments(p)
    p.add_argument("--a", required=True, metavar="SPEC", help="side a: default | SYSTEM | FILE | SYSTEM:FILE")
    p.add_argument("--b", required=True, metavar="SPEC", help="side b: default | SYSTEM | FILE | SYSTEM:FILE")
    p.add_argument(
        "--a-param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override on side a (repeatable; names as `fr bench run --param`)",
    )
    p.add_argument(
        "--b-param", action="append", default=[], metavar="NAME=VALUE", help="override on side b (repeatable)"
    )
    p.add_argument(
        "--gold-intent", action="store_true", help="use the suite's intent labels instead of inferring intent"
    )
    p.add_argument("--n-boot", type=int, default=10000, help="bootstrap resamples (default 10000)")
    p.add_argument("--boot-seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--json", help="write the result here")
    p.set_defaults(func=_cli)
