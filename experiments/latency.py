"""``fr latency``: median single-query latency of the lifecycle layer vs k, side by side.

Four implementations of the same formula, measured in one run: ``jax`` (jitted
``score_candidates`` + ``top_k``, inputs already on device), ``jax_from_numpy`` (inputs given
as NumPy arrays, transfer included), ``numpy`` (the reference twin) and ``python`` (a plain
Python loop, :func:`frcore.reference.score_python`). Candidates are padded to
:func:`frcore.bucket_size` so a sweep over k compiles once per bucket; compile time is reported
apart. Per-candidate slope by least squares; batched throughput for B = 1000 queries x k = 20.
Targets live here and in the JSON, never in timed tests.
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import frcore
from frcore import reference as ref

PAPER = {"median_us_k20": 47.0, "slope_ns": 1960.0}
FULL_KS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 100_000)
QUICK_KS = (1, 5, 10, 20, 50, 100, 200, 1000)
CAP = {"numpy": 1000, "python": 1000}


def _inputs(k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    w = rng.dirichlet(np.ones(frcore.N_CATEGORIES) * 0.3, size=k)
    ev = np.where(rng.random(k) < 0.2, rng.uniform(-300, 300, k), np.nan)
    c = frcore.make_candidates(
        sim=rng.random(k), weights=w, ages=rng.uniform(0, 5000, (k, 3)), state=rng.integers(0, 5, k),
        hours_to_event=ev, confidence=rng.random(k), numeric=rng.random(k) < 0.1, pad_to=frcore.bucket_size(k),
    )
    q = frcore.make_query("current", rng.random(frcore.N_CATEGORIES))
    return q, c


def _fused(params, q, c):
    t = frcore.score_candidates(params, q, c)
    return frcore.top_k(t.total, 10)


def _median_us(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times) * 1e6)


def run_latency(quick: bool = False, ks=None, log=print) -> dict:
    ks = tuple(ks or (QUICK_KS if quick else FULL_KS))
    params = frcore.default_params()
    np_params = frcore.params_to_numpy(params)
    results = []
    compilations = 0
    compile_s = 0.0
    seen_buckets = set()
    for k in ks:
        q, c = _inputs(k)
        b = frcore.bucket_size(k)
        if b not in seen_buckets:
            t0 = time.perf_counter()
            jax.block_until_ready(_fused(params, q, c))
            compile_s += time.perf_counter() - t0
            compilations += 1
            seen_buckets.add(b)
        reps = 200 if k <= 1000 else 30
        results.append({"impl": "jax", "k": k, "median_us": _median_us(lambda: jax.block_until_ready(_fused(params, q, c)), reps)})
        c_np = frcore.Candidates(*(np.asarray(x) for x in c))
        q_np = frcore.Query(*(np.asarray(x) for x in q))
        results.append({"impl": "jax_from_numpy", "k": k, "median_us": _median_us(lambda: jax.block_until_ready(_fused(params, q_np, c_np)), reps)})
        if k <= CAP["numpy"]:
            results.append({"impl": "numpy", "k": k, "median_us": _median_us(lambda: ref.top_k(ref.score_candidates(np_params, q_np, c_np).total, 10), 5 if k > 100 else 20)})
        if k <= CAP["python"]:
            pp, pq, rows = ref.python_inputs(params, q, c)
            rows = rows[:k]
            results.append({"impl": "python", "k": k, "median_us": _median_us(lambda: ref.score_python(pp, pq, rows, frcore.ScoreConfig()), 50 if k <= 100 else 10)})
        log(f"k={k}: " + ", ".join(f"{r['impl']} {r['median_us']:.1f} μs" for r in results if r["k"] == k))
    slope = {}
    for impl in ("jax", "jax_from_numpy", "numpy", "python"):
        pts = [(r["k"], r["median_us"]) for r in results if r["impl"] == impl]
        if len(pts) >= 2:
            x, y = np.array(pts, dtype=float).T
            slope[impl] = float(np.polyfit(x, y, 1)[0] * 1e3)  # μs per candidate → ns
    # batched: B = 1000 queries x k = 20
    B, kb = 1000, 20
    qs, cs = zip(*(_inputs(kb, seed=i) for i in range(B)))
    Q, Cs = frcore.stack_queries(qs), frcore.stack_candidates(cs)
    batched = lambda: jax.block_until_ready(frcore.score_queries(params, Q, Cs).total)  # noqa: E731
    batched()
    t = _median_us(batched, 20) * 1e-6
    return {
        "results": results,
        "slope_ns": slope,
        "batched": {"B": B, "k": kb, "scores_per_s": float(B * kb / t)},
        "compile_s": compile_s,
        "compilations": compilations,
        "paper": PAPER,
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "jax": jax.__version__, "backend": jax.default_backend()},
    }


def _figure(res: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for impl in ("jax", "jax_from_numpy", "numpy", "python"):
        pts = sorted((r["k"], r["median_us"]) for r in res["results"] if r["impl"] == impl)
        if pts:
            ax.plot(*zip(*pts), marker="o", label=impl)
    ax.scatter([20], [PAPER["median_us_k20"]], marker="*", s=150, color="k", label="paper: 47 μs at k=20", zorder=5)
    ax.set(xscale="log", yscale="log", xlabel="k (scored candidates)", ylabel="median latency (μs)", title="Lifecycle layer latency")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _cli(args) -> int:
    res = run_latency(quick=args.quick)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(res, indent=1))
    if args.fig:
        _figure(res, args.fig)
    k20 = {r["impl"]: r["median_us"] for r in res["results"] if r["k"] == 20}
    print(f"k=20 median: " + ", ".join(f"{i} {v:.1f} μs" for i, v in k20.items()) + f" (paper 47 μs)")
    print("slope ns/candidate: " + ", ".join(f"{i} {v:.2f}" for i, v in res["slope_ns"].items()) + " (paper 1960)")
    print(f"batched B=1000 x k=20: {res['batched']['scores_per_s']:.3g} scores/s; compile {res['compile_s']:.2f} s over {res['compilations']} buckets")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("latency", help="median single-query latency vs k (jax, numpy twin, plain Python)")
    p.add_argument("--quick", action="store_true", help="reduced grid, under a minute")
    p.add_argument("--json", help="write results here")
    p.add_argument("--fig", help="write the latency figure (PNG) here")
    p.set_defaults(func=_cli)
