"""Decay-multiplier sweep: Jaccard@10 (and Kendall τ) against the default ranking vs the
per-category decay multiplier, one panel per category, the Jaccard ≥ 0.95 feasibility line and
the feasible range shaded; plus a table of feasible ranges beside the paper's (10 of 11
categories tolerate the whole 0.25x–4x range; RELATIONAL_BONDS 0.33x–4x).

Reads ``sweep_multiplier.json`` (``fr sweep --only multiplier``)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import matplotlib.lines as mlines
import matplotlib.patches as mpatches
from matplotlib.ticker import FixedFormatter, FixedLocator, NullFormatter

from . import ledger, paths
from ._common import PAPER_COLOR, cli, field, figure, load, number, paper, save, source_note, write_table

INPUTS = (paths.SWEEP_MULTIPLIER,)
OPTIONAL = False


def _range(fe) -> str:
    if not fe or fe[0] is None:
        return "none"
    return f"{fe[0]:g}x–{fe[1]:g}x"


def make(results_dir: str | Path, out_dir: str | Path) -> list[Path]:
    """Jaccard@10 vs multiplier per category (small multiples) and the feasible-range table."""
    f = paths.SWEEP_MULTIPLIER
    d = load(results_dir, f)
    per = field(d, "per_category", f)
    if not isinstance(per, dict) or not per:
        raise ValueError(f"{f}: field per_category must be a non-empty object")
    thr = number(d.get("config", {}).get("feasible_jaccard", 0.95), "config.feasible_jaccard", f)
    ref = {**ledger.MULTIPLIER, **paper(d, {})}
    cats = list(per)
    ncol = 4
    nrow = math.ceil(len(cats) / ncol)
    fig, axes = figure(nrow, ncol, figsize=(9.5, 2.0 * nrow + 0.4), sharex=True, sharey=True, squeeze=False)
    rows = []
    for n, cat in enumerate(cats):
        c = per[cat]
        m = field(c, "multipliers", f)
        j = field(c, "jaccard", f)
        t = field(c, "tau", f)
        if not (len(m) == len(j) == len(t)) or not m:
            raise ValueError(
                f"{f}: per_category.{cat}: multipliers, jaccard and tau must have the same non-zero length ({len(m)}, "
                f"{len(j)}, {len(t)})"
            )
        for i, (a, b, g) in enumerate(zip(m, j, t)):
            number(a, f"per_category.{cat}.multipliers.{i}", f)
            number(b, f"per_category.{cat}.jaccard.{i}", f)
            number(g, f"per_category.{cat}.tau.{i}", f)
        fe = c.get("feasible")
        ax = axes[n // ncol][n % ncol]
        if fe and fe[0] is not None:
            ax.axvspan(fe[0], fe[1], color="tab:green", alpha=0.12, lw=0)
        ax.plot(m, j, "o-", color="tab:blue", label="Jaccard@10")
        ax.plot(m, t, "s:", color="tab:gray", ms=3, label="Kendall τ")
        ax.axhline(thr, color="k", lw=0.8, ls="--")
        if cat in ref and isinstance(ref[cat], list):
            ax.axvline(ref[cat][0], color=PAPER_COLOR, lw=1, ls="-.", label=f"paper lower bound {ref[cat][0]:g}x")
        ax.set_xscale("log")
        ax.set_title(cat, fontsize=7.5)
        ax.xaxis.set_major_locator(FixedLocator([0.25, 0.5, 1, 2, 4]))
        ax.xaxis.set_major_formatter(FixedFormatter(["¼", "½", "1", "2", "4"]))
        ax.xaxis.set_minor_formatter(NullFormatter())
        paper_rng = (
            _range(ref[cat])
            if isinstance(ref.get(cat), list)
            else _range(ref.get("whole_range", [0.25, 4.0])) + " (whole range)"
        )
        rows.append([cat, _range(fe), "yes" if c.get("whole_range") else "no", f"{min(j):.3f}", paper_rng])
    for n in range(len(cats), nrow * ncol):
        ax = axes[n // ncol][n % ncol]
        ax.axis("off")
    handles = [
        mlines.Line2D([], [], color="tab:blue", marker="o", label="Jaccard@10"),
        mlines.Line2D([], [], color="tab:gray", marker="s", ms=3, ls=":", label="Kendall τ"),
        mlines.Line2D([], [], color="k", lw=0.8, ls="--", label=f"Jaccard = {thr:g} (feasibility)"),
        mpatches.Patch(color="tab:green", alpha=0.12, label="ours: feasible range"),
        mlines.Line2D([], [], color=PAPER_COLOR, lw=1, ls="-.", label="paper: lower bound of feasible range"),
    ]
    if len(cats) < nrow * ncol:
        axes[-1][-1].legend(handles=handles, loc="center")
    else:
        fig.legend(handles=handles, loc="lower center", ncol=5)
    n_whole = d.get("n_whole_range", sum(1 for c in per.values() if c.get("whole_range")))
    fig.suptitle(
        f"Decay-multiplier sweep: {n_whole} of {len(cats)} categories feasible over the whole range "
        f"(paper: {ref.get('n_whole_range', '?')} of 11); {source_note(d)}",
        fontsize=8.5,
    )
    for ax in axes[-1]:
        ax.set_xlabel("decay multiplier")
    for row in axes:
        row[0].set_ylabel("agreement")
    out = [save(fig, out_dir, "fig_multiplier")]
    out += write_table(
        out_dir,
        "tab_multiplier",
        ["category", f"ours: feasible (J ≥ {thr:g})", "ours: whole range", "ours: min Jaccard@10", "paper: feasible"],
        rows,
        title=f"Feasible decay-multiplier ranges (Jaccard@10 ≥ {thr:g}); {n_whole} of {len(cats)} whole range vs paper "
        f"{ref.get('n_whole_range', '?')} of 11",
        notes=[source_note(d)],
    )
    return out


if __name__ == "__main__":
    sys.exit(cli(make, "python -m paper_figures.fig_multiplier"))
