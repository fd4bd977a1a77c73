"""``fr latency``: median single-query latency of the lifecycle layer vs k, side by side.

Six implementations of the same score + top-10, measured in one run on the same inputs:

- ``jax``: score + top-10 as **one** compiled executable of :func:`frcore.score_top_k_rows`
  (the packed single-query path: parameters, query and candidates as three arrays, the top-10
  values and their indices as one (2, 10) array; the formula is :func:`frcore.score`), inputs
  already on the device, called through ``jax.jit``'s C++ dispatch path rather than the
  ahead-of-time ``Compiled`` object; the timed statement is the call and the output array's
  own ``block_until_ready()``, with no helper frame between them (docs/performance.md gives
  what each of these choices costs);
- ``jax_from_numpy``: the same executable from the validated NumPy field arrays, packed and
  transferred on every call;
- ``numpy_vectorised`` (peer): the score written in vectorised float32 NumPy over the whole
  candidate set at once + an O(k) top-k (:func:`experiments.latency_peers.numpy_score_top_k`),
  from the validated NumPy field arrays of the k candidates (no padding);
- ``numba`` (peer): one ``@numba.njit`` loop over the packed candidates with an insertion
  top-k (:func:`experiments.latency_peers.numba_kernel`), from the same three packed arrays
  as the kernel (host NumPy, the k candidates, no padding); its compile is timed apart
  (``numba_compile_s``);
- ``float64_reference``: the float64 reference twin (:mod:`frcore.reference`, the test oracle:
  scalar loops over candidates, written for clarity, not speed) + its top-k;
- ``python``: the pure-Python loop :func:`frcore.reference.score_python` + ``heapq.nlargest``.

The peers are tested equal to the kernel (tests/experiments/test_latency_peers.py). :data:`LABELS` gives
each row's name in the figure.

Beside them, the **dispatch floor**: a trivial executable (one elementwise op) over the same
three inputs — what any single jitted call costs on this machine before it computes anything;
``kernel_to_floor_k20`` is the ``jax`` row over the floor at k = 20 (null when k = 20 is not in
the grid).

The CPU dispatch mode is recorded (``machine.cpu_dispatch``): ``fr`` runs JAX computations
inline on the calling thread (:func:`frcore.prefer_sync_cpu_dispatch`); ``FR_ASYNC_DISPATCH=1``
keeps JAX's default hand-off to a worker thread. The mode is fixed per process, so the jitted
rows (``jax``, ``jax_from_numpy``, the floor) are measured again in a child process in the other
mode, in the same run (``other_dispatch``: ``{"cpu_dispatch", "results", "dispatch_floor"}``).

Candidates are padded to :func:`frcore.bucket_size` (k), so a sweep over k compiles once per
bucket; compilations are counted, and their time summed, with JAX's own compile events, and
compile time is reported apart. Per-candidate slope is a least-squares fit of median latency on k (ns per candidate);
batched throughput is B = 1000 queries x k = 20 through one :func:`frcore.score_queries` call.
The paper's numbers (§D.9: 47 μs median at k = 20, 1.96 μs per candidate) are written beside
ours; targets are never asserted in tests.
"""

from __future__ import annotations

import contextlib
import gc
import heapq
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import jax
import jax.monitoring
import numpy as np

import frcore
from frcore import ASYNC_ENV, reference as ref

from . import latency_peers as peers
from .ledger import PAPER as _LEDGER_PAPER

PAPER = {k: _LEDGER_PAPER["latency"][k] for k in ("median_us_k20", "slope_ns")}
IMPLS = ("jax", "jax_from_numpy", "numpy_vectorised", "numba", "float64_reference", "python")
#: each implementation's name in the figure (written into the JSON as ``labels``)
LABELS = {
    "jax": "jax (frcore kernel)",
    "jax_from_numpy": "jax, inputs from NumPy",
    "numpy_vectorised": "NumPy, vectorised float32 (peer)",
    "numba": "numba loop (peer)",
    "float64_reference": "float64 reference (test oracle)",
    "python": "pure Python",
}
#: the rows a latency-minded user would write instead of frcore's kernel (``peers`` in the JSON)
PEERS = ("numpy_vectorised", "numba")
FULL_KS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000)
QUICK_KS = (1, 5, 10, 20, 50, 100, 200, 500, 1000)
#: largest k timed for the slow implementations (their cost is linear; beyond this it is time only)
CAP = {"full": {"float64_reference": 1000, "python": 1000}, "quick": {"float64_reference": 200, "python": 500}}
TOP = 10  # the paper's final top-10
_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


@contextlib.contextmanager
def _count_compiles():
    """Count XLA backend compilations (JAX monitoring events) while the block runs."""
    n = {"compiles": 0, "seconds": 0.0}

    def listener(event: str, duration_secs: float, **kw: str | int) -> None:
        if event == _COMPILE_EVENT:
            n["compiles"] += 1
            n["seconds"] += float(duration_secs)

    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        yield n
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)


def _raw_inputs(k: int, seed: int = 0) -> tuple[dict, np.ndarray]:
    """A synthetic candidate set of k edges (soft weights, every state, 20% with events)."""
    rng = np.random.default_rng(seed)
    raw = dict(
        sim=rng.random(k),
        weights=rng.dirichlet(np.ones(frcore.N_CATEGORIES) * 0.3, size=k),
        ages=rng.uniform(0, 5000, (k, 3)),
        state=rng.integers(0, len(frcore.State), k),
        hours_to_event=np.where(rng.random(k) < 0.2, rng.uniform(-300, 300, k), np.nan),
        confidence=rng.random(k),
        numeric=rng.random(k) < 0.1,
    )
    return raw, rng.random(frcore.N_CATEGORIES)


def _fused(pvec, qvec, cmat):
    """score + top-10 in one dispatch, one (2, 10) output: values, then indices
    (:func:`frcore.score_top_k_rows` without terms; frcore's kernels)."""
    return frcore.score_top_k_rows(pvec, qvec, cmat, TOP, with_terms=False)


def _floor(pvec, qvec, cmat):
    """The dispatch floor: one trivial elementwise op over the same three inputs."""
    return cmat[0] + qvec[0] + pvec[0]


def _timeit(fn, *, min_reps: int = 5, max_reps: int = 2000, budget_s: float = 0.25) -> float:
    """Median wall time of ``fn()`` in μs over up to ``max_reps`` calls within ``budget_s``,
    after a few untimed warm-up calls (caches, the first call after a compile), with the
    garbage collector paused while timing (as :mod:`timeit` does)."""
    for _ in range(min(5, max_reps)):
        fn()
    times: list[float] = []
    gc_was_enabled = gc.isenabled()
    gc.disable()  # as the standard library's timeit does: no collection pauses inside a timing
    try:
        start = time.perf_counter()
        while len(times) < max_reps and (len(times) < min_reps or time.perf_counter() - start < budget_s):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    finally:
        if gc_was_enabled:
            gc.enable()
    return float(np.median(times) * 1e6)


def _query_inputs(k: int):
    """(validated query, candidates padded to k's bucket — NumPy; their packed forms on device)."""
    raw, routing = _raw_inputs(k)
    q_np = frcore.make_query("current", routing, device=False)
    c_np = frcore.make_candidates(**raw, pad_to=frcore.bucket_size(k), device=False)
    qv, cm = jax.block_until_ready(jax.device_put((frcore.pack_query(q_np), frcore.pack_candidates(c_np))))
    return q_np, c_np, qv, cm


def _jitted_rows(k, fused, floor, pv, qv, cm, q_np, c_np, budget: float) -> tuple[dict, float]:
    """({"jax": μs, "jax_from_numpy": μs}, dispatch floor μs) at one k (compiled already)."""
    reps = 200 if k >= 10_000 else 2000
    # each executable returns one array: the timed statement is the call and that array's own
    # block_until_ready(), with no helper frame between (as timeit inlines its statement)
    row = {"jax": _timeit(lambda: fused(pv, qv, cm).block_until_ready(), budget_s=budget, max_reps=reps)}
    # from NumPy: the validated field arrays are packed and transferred on every call
    row["jax_from_numpy"] = _timeit(
        lambda: fused(pv, frcore.pack_query(q_np), frcore.pack_candidates(c_np)).block_until_ready(),
        budget_s=budget,
        max_reps=reps,
    )
    return row, _timeit(lambda: floor(pv, qv, cm).block_until_ready(), budget_s=budget, max_reps=reps)


def measure_jitted(ks: list[int], quick: bool = False) -> dict:
    """The jitted rows alone (``jax``, ``jax_from_numpy``, dispatch floor) over ``ks``, in this
    process's CPU dispatch mode: what :func:`run_latency` runs in a child process to put the
    other mode beside its own."""
    budget = 0.1 if quick else 0.3
    pv = jax.device_put(frcore.pack_params(frcore.default_params()))
    fused, floor = jax.jit(_fused), jax.jit(_floor)
    results, floors = [], []
    for k in ks:
        q_np, c_np, qv, cm = _query_inputs(k)
        fused(pv, qv, cm).block_until_ready()
        floor(pv, qv, cm).block_until_ready()
        row, floor_us = _jitted_rows(k, fused, floor, pv, qv, cm, q_np, c_np, budget)
        results += [{"impl": impl, "k": k, "median_us": v} for impl, v in row.items()]
        floors.append({"k": k, "median_us": floor_us})
    return {"cpu_dispatch": frcore.cpu_dispatch_mode(), "results": results, "dispatch_floor": floors}


def _other_dispatch(ks: list[int], quick: bool) -> dict:
    """:func:`measure_jitted` in a child process run in the other CPU dispatch mode."""
    env = dict(os.environ)
    if frcore.cpu_dispatch_mode() == "sync":
        env[ASYNC_ENV] = "1"
    else:
        env.pop(ASYNC_ENV, None)
    code = (
        "import json, frcore; frcore.prefer_sync_cpu_dispatch(); from experiments.latency import measure_jitted; "
        f"print(json.dumps(measure_jitted({list(ks)!r}, quick={bool(quick)})))"
    )
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=root, timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(f"fr latency: the other-dispatch child failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _slope_ns(points: list[tuple[int, float]]) -> float | None:
    """Least-squares slope of median μs on k, in ns per candidate."""
    if len(points) < 2:
        return None
    k, t = np.asarray(points, dtype=np.float64).T
    return float(np.polyfit(k, t, 1)[0] * 1e3)


def run_latency(quick: bool = False, ks: list[int] | None = None, log=print, other_dispatch: bool = True) -> dict:
    """Measure every implementation over ``ks`` (default: the full or quick grid); see module doc.
    ``other_dispatch``: also measure the jitted rows in a child process in the other CPU
    dispatch mode (``other_dispatch`` key of the result)."""
    ks = sorted({int(k) for k in (ks or (QUICK_KS if quick else FULL_KS))})
    if not ks or ks[0] < 1:
        raise ValueError(f"ks: candidate counts must be ≥ 1, got {ks}")
    cap = CAP["quick" if quick else "full"]
    budget = 0.1 if quick else 0.3
    params = frcore.default_params()
    np_params = frcore.params_to_numpy(params)
    config = frcore.ScoreConfig()
    pv = jax.device_put(frcore.pack_params(params))
    fused, floor = jax.jit(_fused), jax.jit(_floor)  # called through jit's C++ dispatch path
    # the peers: float32 NumPy parameters; the numba loop compiled once here, timed apart
    peer_params, pv_host = peers.numpy_params(params), frcore.pack_params(params)
    numba_kernel = peers.numba_kernel()
    q0, c0 = _query_inputs(1)[:2]
    t0 = time.perf_counter()
    numba_kernel(pv_host, frcore.pack_query(q0), frcore.pack_candidates(c0), TOP)
    numba_compile_s = time.perf_counter() - t0
    buckets: set[int] = set()
    dispatch_floor: list[dict] = []
    compile_s = 0.0
    results: list[dict] = []
    sweep_compiles = 0
    with _count_compiles() as counted:
        for k in ks:
            b = frcore.bucket_size(k)
            q_np, c_np, qv, cm = _query_inputs(k)
            before = counted["compiles"]  # input validation (eager, outside) is not counted
            if b not in buckets:  # first query of a bucket compiles (timed by JAX's own events)
                buckets.add(b)
                seconds = counted["seconds"]
                jax.block_until_ready(fused(pv, qv, cm))
                compile_s += counted["seconds"] - seconds
                n_floor = counted["compiles"]
                jax.block_until_ready(floor(pv, qv, cm))
                before += counted["compiles"] - n_floor  # the floor's own compile is not the kernel's
            row, floor_us = _jitted_rows(k, fused, floor, pv, qv, cm, q_np, c_np, budget)
            dispatch_floor.append({"k": k, "median_us": floor_us})
            sweep_compiles += counted["compiles"] - before
            c_k = frcore.Candidates(*(x[:k] for x in c_np))  # the k candidates, unpadded
            row["numpy_vectorised"] = _timeit(
                lambda: peers.numpy_score_top_k(peer_params, q_np, c_k, TOP),  # noqa: B023 (timed in this iteration)
                budget_s=budget,
                max_reps=2000,
            )
            qv_host, cm_host = frcore.pack_query(q_np), frcore.pack_candidates(c_k)
            row["numba"] = _timeit(
                lambda: numba_kernel(pv_host, qv_host, cm_host, TOP),  # noqa: B023 (timed in this iteration)
                budget_s=budget,
                max_reps=2000,
            )
            if k <= cap["float64_reference"]:
                row["float64_reference"] = _timeit(
                    # timed within this iteration, so the loop variables are the current ones
                    lambda: ref.top_k(ref.score_candidates(np_params, q_np, c_k, config).total, TOP),  # noqa: B023
                    budget_s=budget,
                    min_reps=3,
                    max_reps=200,
                )
            if k <= cap["python"]:
                pp, pq, rows = ref.python_inputs(np_params, q_np, c_np)
                rows = rows[:k]
                row["python"] = _timeit(
                    lambda: heapq.nlargest(
                        TOP,
                        enumerate(ref.score_python(pp, pq, rows, config)),  # noqa: B023 (timed in this iteration)
                        key=lambda t: t[1],
                    ),
                    budget_s=budget,
                    min_reps=3,
                    max_reps=2000,
                )
            for impl in IMPLS:
                if impl in row:
                    results.append({"impl": impl, "k": k, "median_us": row[impl]})
            log(f"k={k:>6}: " + ", ".join(f"{i} {v:,.1f} μs" for i, v in row.items()))

    slope = {}
    for impl in IMPLS:
        s = _slope_ns([(r["k"], r["median_us"]) for r in results if r["impl"] == impl])
        if s is not None:
            slope[impl] = s

    # batched throughput: B = 1000 queries x k = 20 in one call (validated once as B·k rows)
    B, kb = 1000, 20
    raw, _ = _raw_inputs(B * kb, seed=1)
    flat = frcore.make_candidates(**raw)
    Cs = frcore.Candidates(*(x.reshape((B, kb) + x.shape[1:]) for x in flat))
    rng = np.random.default_rng(2)
    Q = frcore.Query(
        intent=jax.numpy.asarray(np.arange(B) % len(frcore.Intent), dtype=jax.numpy.int32),
        routing=frcore.make_query("current", rng.random(frcore.N_CATEGORIES)).routing[None, :].repeat(B, axis=0),
    )
    t0 = time.perf_counter()
    batched = jax.jit(lambda p, q, c: frcore.score_queries(p, q, c).total).lower(params, Q, Cs).compile()
    compile_s += time.perf_counter() - t0
    t_batch = _timeit(lambda: batched(params, Q, Cs).block_until_ready(), budget_s=budget * 2, max_reps=200) * 1e-6

    other = None
    if other_dispatch:
        log("the jitted rows again in a child process, in the other CPU dispatch mode …")
        other = _other_dispatch(ks, quick)
    floor20 = [d["median_us"] for d in dispatch_floor if d["k"] == 20]
    jax20 = [r["median_us"] for r in results if r["impl"] == "jax" and r["k"] == 20]
    return {
        "results": results,
        "kernel_to_floor_k20": float(jax20[0] / floor20[0]) if jax20 and floor20 else None,
        "numba_compile_s": float(numba_compile_s),
        "labels": dict(LABELS),
        "peers": list(PEERS),
        "other_dispatch": other,
        "slope_ns": slope,
        "batched": {"B": B, "k": kb, "scores_per_s": float(B * kb / t_batch)},
        "compile_s": float(compile_s),
        "compilations": int(sweep_compiles),
        "dispatch_floor": dispatch_floor,
        "paper": dict(PAPER),
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(),
            "loadavg": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
            "python": platform.python_version(),
            "jax": jax.__version__,
            "backend": jax.default_backend(),
            "cpu_dispatch": frcore.cpu_dispatch_mode(),
            "devices": [str(d) for d in jax.devices()],
            "buckets": sorted(buckets),
            "quick": bool(quick),
        },
    }


def write_figure(res: dict, path: str | Path) -> Path:
    """Median latency vs k, log-log, every implementation, the paper's 47 μs point marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for impl in IMPLS:
        pts = sorted((r["k"], r["median_us"]) for r in res["results"] if r["impl"] == impl)
        if pts:
            s = res["slope_ns"].get(impl)
            lab = LABELS[impl] + (f" ({s:,.0f} ns/cand.)" if s is not None else "")
            peer = impl in PEERS  # the peers dashed, square markers
            ax.plot(*zip(*pts), marker="s" if peer else "o", linestyle="--" if peer else "-", label=lab)
    other = res.get("other_dispatch")
    if other:
        pts = sorted((r["k"], r["median_us"]) for r in other["results"] if r["impl"] == "jax")
        ax.plot(*zip(*pts), linestyle="--", color="gray", label=f"jax, {other['cpu_dispatch']} CPU dispatch")
    ax.scatter([20], [PAPER["median_us_k20"]], marker="*", s=160, color="k", zorder=5, label="paper: 47 μs at k=20")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="k (scored candidate edges)",
        ylabel="median latency (μs)",
        title="Lifecycle-layer latency vs k"
        + (
            f"\nkernel / dispatch floor at k=20: {res['kernel_to_floor_k20']:.2f}x"
            if res.get("kernel_to_floor_k20")
            else ""
        ),
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def run_cli(args) -> int:
    """``fr latency [--quick] [--ks 1,20,1000] [--json PATH] [--fig PATH]``."""
    ks = None
    if args.ks:
        try:
            ks = [int(x) for x in args.ks.split(",") if x.strip()]
        except ValueError:
            raise ValueError(f"--ks: expected comma-separated integers, got {args.ks!r}") from None
    res = run_latency(quick=args.quick, ks=ks)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(res, indent=1))
    if args.fig:
        write_figure(res, args.fig)
    at20 = {r["impl"]: r["median_us"] for r in res["results"] if r["k"] == 20}
    if at20:
        print(
            "k=20 median: "
            + ", ".join(f"{i} {v:,.1f} μs" for i, v in at20.items())
            + f" (paper {PAPER['median_us_k20']} μs)"
        )
    print(
        "slope ns/candidate: "
        + ", ".join(f"{i} {v:,.1f}" for i, v in res["slope_ns"].items())
        + f" (paper {PAPER['slope_ns']})"
    )
    floor20 = [d["median_us"] for d in res["dispatch_floor"] if d["k"] == 20]
    if floor20:
        print(
            f"dispatch floor at k=20 (trivial executable, same inputs): {floor20[0]:,.1f} μs"
            + (f"; kernel / floor {res['kernel_to_floor_k20']:.2f}x" if res["kernel_to_floor_k20"] else "")
        )
    other = res.get("other_dispatch")
    if other:
        o20 = {r["impl"]: r["median_us"] for r in other["results"] if r["k"] == 20}
        f20 = [d["median_us"] for d in other["dispatch_floor"] if d["k"] == 20]
        if o20:
            print(
                f"{other['cpu_dispatch']} CPU dispatch (child process), k=20: "
                + ", ".join(f"{i} {v:,.1f} μs" for i, v in o20.items())
                + (f", dispatch floor {f20[0]:,.1f} μs" if f20 else "")
            )
    b = res["batched"]
    print(
        f"batched B={b['B']} x k={b['k']}: {b['scores_per_s']:.3g} scores/s; "
        f"compile {res['compile_s']:.2f} s (apart); {res['compilations']} compilations in the k sweep "
        f"over {len(res['machine']['buckets'])} buckets; CPU dispatch {res['machine']['cpu_dispatch']}"
    )
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "latency", help="median single-query latency vs k (jax; NumPy and numba peers; float64 oracle; plain Python)"
    )
    p.add_argument("--quick", action="store_true", help="reduced grid, under a minute")
    p.add_argument("--ks", help="comma-separated candidate counts (overrides the grid)")
    p.add_argument("--json", help="write results here")
    p.add_argument("--fig", help="write the latency figure (PNG) here")
    p.set_defaults(func=run_cli)
