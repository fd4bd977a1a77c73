"""Latency scaling: median lifecycle-layer latency vs k (log-log), one line per implementation,
the paper's 47 μs at k=20 and its 1.96 μs/candidate slope as references (§D.9). Each line is
named by the file's ``labels`` (``fr latency``'s :data:`experiments.latency.LABELS`: the float64
twin as "float64 reference (test oracle)"); the rows the file lists under ``peers`` (vectorised
NumPy, numba) are drawn dashed with square markers; the kernel-to-dispatch-floor ratio at k = 20
(``kernel_to_floor_k20``) is in the title when the file has it.

Reads ``latency.json`` (``fr latency --json``)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from . import ledger, paths
from ._common import PAPER_COLOR, cli, figure, load, number, paper, rows_of, save

INPUTS = (paths.LATENCY,)
OPTIONAL = False


def make(results_dir: str | Path, out_dir: str | Path) -> list[Path]:
    """Median latency (μs) vs k per implementation, log-log, with the paper's reference."""
    f = paths.LATENCY
    d = load(results_dir, f)
    rows = rows_of(d, "results", f, ("impl", "k", "median_us"))
    by_impl: dict[str, list[tuple[float, float]]] = {}
    for i, r in enumerate(rows):
        k = number(r["k"], f"results.{i}.k", f)
        t = number(r["median_us"], f"results.{i}.median_us", f)
        if k <= 0 or t <= 0:
            raise ValueError(
                f"{f}: results[{i}]: k and median_us must be positive for a log-log plot (k={k}, median_us={t})"
            )
        by_impl.setdefault(str(r["impl"]), []).append((k, t))
    ref = {**ledger.LATENCY, **paper(d, {})}
    slopes = d.get("slope_ns") or {}
    labels = d.get("labels") or {}
    peers = set(d.get("peers") or ())
    fig, ax = figure(figsize=(5.2, 3.6))
    for impl, pts in by_impl.items():
        pts.sort()
        k, t = np.array(pts).T
        s = slopes.get(impl)
        lab = str(labels.get(impl, impl)) + (f" (slope {float(s):.0f} ns/cand.)" if isinstance(s, (int, float)) else "")
        ax.plot(k, t, "s--" if impl in peers else "o-", label=lab)
    other = d.get("other_dispatch") or {}
    pts = sorted((float(r["k"]), float(r["median_us"])) for r in other.get("results", []) if r.get("impl") == "jax")
    if pts:
        ax.plot(*np.array(pts).T, ":", color="gray", label=f"jax, {other.get('cpu_dispatch', 'other')} CPU dispatch")
    kmin = min(k for pts in by_impl.values() for k, _ in pts)
    kmax = max(k for pts in by_impl.values() for k, _ in pts)
    kk = np.geomspace(min(kmin, 20), max(kmax, 20), 100)
    pm, ps = float(ref["median_us_k20"]), float(ref["slope_ns"]) / 1000.0
    line = pm + ps * (kk - 20)
    ok = line > 0
    ax.plot(kk[ok], line[ok], "--", color=PAPER_COLOR, lw=1, label=f"paper: {pm:g} μs + {ps:g} μs·(k−20)")
    ax.plot([20], [pm], "*", color=PAPER_COLOR, ms=11, label=f"paper: {pm:g} μs median at k=20")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("k (scored candidate edges)")
    ax.set_ylabel("median latency (μs)")
    b = d.get("batched")
    extra = ""
    if isinstance(b, dict) and isinstance(b.get("scores_per_s"), (int, float)):
        extra = f"\nbatched: {b['scores_per_s']:.3g} scores/s (B={b.get('B')}, k={b.get('k')})"
    if isinstance(d.get("compile_s"), (int, float)):
        extra += f"; compile {d['compile_s']:.2f} s (excluded)"
    if isinstance(d.get("kernel_to_floor_k20"), (int, float)):
        extra += f"\nkernel / dispatch floor at k=20: {d['kernel_to_floor_k20']:.2f}x"
    ax.set_title("Lifecycle-layer latency vs k" + extra)
    ax.legend(loc="upper left")
    return [save(fig, out_dir, "fig_latency")]


if __name__ == "__main__":
    sys.exit(cli(make, "python -m paper_figures.fig_latency"))
