"""Global-α sweep: LifecycleBench pass vs one global blend weight α (coarse and fine grids),
FR-full's category-specific α as a horizontal line, the paired-bootstrap 95% CI of each point
(FR-full's pass + CI of the difference), Bonferroni-significant points marked (paper: every
fine-grained p fails Bonferroni at p < 0.0056); a third panel gives per-AV pass at uniform
α = 0.3 beside FR-full (paper: AV8 drops to 12.5%).

Reads ``sweep_alpha.json`` (``fr sweep --only alpha``)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from . import ledger, paths
from ._common import PAPER_COLOR, cli, field, figure, load, number, paper, rows_of, save, source_note

INPUTS = (paths.SWEEP_ALPHA,)
OPTIONAL = False


def make(results_dir: str | Path, out_dir: str | Path) -> list[Path]:
    """Pass vs global α (coarse, fine) with FR-full's line, CIs and Bonferroni marks; per-AV at α=0.3."""
    f = paths.SWEEP_ALPHA
    d = load(results_dir, f)
    ref = {**ledger.ALPHA, **paper(d, {})}
    full = number(field(d, "fr_full_pass", f), "fr_full_pass", f)
    fig, axes = figure(1, 3, figsize=(11, 3.4), gridspec_kw={"width_ratios": [1.2, 1, 1.1]})
    for ax, grid in zip(axes[:2], ("coarse", "fine")):
        rows = rows_of(d, f"{grid}.rows", f, ("alpha", "pass", "mcnemar_p"))
        a = np.array([number(r["alpha"], f"{grid}.rows.{i}.alpha", f) for i, r in enumerate(rows)])
        p = np.array([number(r["pass"], f"{grid}.rows.{i}.pass", f) for i, r in enumerate(rows)])
        bonf = number(field(d, f"{grid}.bonferroni_threshold", f), f"{grid}.bonferroni_threshold", f)
        sig = np.array([number(r["mcnemar_p"], f"{grid}.rows.{i}.mcnemar_p", f) < bonf for i, r in enumerate(rows)])
        ci = [c for c in (r.get("ci") for r in rows) if isinstance(c, list) and len(c) == 2]
        if len(ci) == len(rows):
            lo = full + np.array([c[0] for c in ci])
            hi = full + np.array([c[1] for c in ci])
            ax.fill_between(a, lo, hi, color="tab:blue", alpha=0.15, lw=0, label="95% paired-bootstrap CI")
        ax.plot(a, p, "o-", color="tab:blue", label="global α")
        if sig.any():
            ax.plot(
                a[sig], p[sig], "o", mfc="none", mec="k", ms=10, mew=1.3, label=f"McNemar p < {bonf:.3g} (Bonferroni)"
            )
        ax.axhline(full, color="tab:green", lw=1.2, label=f"FR-full (per-category α) {100 * full:.1f}%")
        ax.set_xlabel("global α")
        ax.set_ylabel("pass")
        note = f"{int(sig.sum())} of {len(rows)} significant after Bonferroni (p < {bonf:.3g})"
        if grid == "fine" and ref.get("fine_all_fail_bonferroni"):
            note += f"\npaper: all fail Bonferroni (p < {ref.get('bonferroni_threshold', 0.0056)})"
        ax.set_title(f"{grid} grid: {note}")
        ax.legend(loc="lower left")
    ax = axes[2]
    u = d.get("uniform_alpha_0.3_per_av") or {}
    fa = d.get("fr_full_per_av") or {}
    avs = sorted(set(u) | set(fa))
    if avs:
        x = np.arange(len(avs))
        ax.bar(x - 0.2, [fa.get(k, np.nan) for k in avs], 0.4, color="tab:green", label="FR-full")
        ax.bar(x + 0.2, [u.get(k, np.nan) for k in avs], 0.4, color="tab:orange", label="uniform α = 0.3")
        if "AV8" in avs and "uniform_alpha_0.3_AV8" in ref:
            i = avs.index("AV8")
            ax.plot(
                [i + 0.2],
                [ref["uniform_alpha_0.3_AV8"]],
                "*",
                color=PAPER_COLOR,
                ms=12,
                label=f"paper: AV8 at α=0.3 {100 * ref['uniform_alpha_0.3_AV8']:.1f}%",
            )
        ax.set_xticks(x)
        ax.set_xticklabels(avs, rotation=0)
        ax.set_ylabel("pass")
        ax.set_ylim(0, 1.05)
        ax.set_title("per attack vector at uniform α = 0.3")
        ax.legend(loc="upper right")
    else:
        ax.axis("off")
    fig.suptitle(f"Global-α sweep vs FR-full; {d.get('n_questions', '?')} questions; {source_note(d)}")
    return [save(fig, out_dir, "fig_alpha")]


if __name__ == "__main__":
    sys.exit(cli(make, "python -m paper_figures.fig_alpha"))
