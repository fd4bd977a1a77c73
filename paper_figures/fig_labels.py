"""Category-label perturbation inside confused pairs: Jaccard@10, Kendall τ and displaced edges
per query vs the perturbation rate (mean ± sd over seeds), the paper's points as stars
(10%: Jaccard 0.974 ± 0.002, 0.29 displaced per query; 50%: Jaccard 0.905, τ 0.897).

Reads ``sweep_labels.json`` (``fr sweep --only labels``)."""

from __future__ import annotations

import sys
from pathlib import Path

from . import ledger, paths
from ._common import PAPER_COLOR, cli, field, figure, load, paper, save, source_note
from ._sweepplot import series

INPUTS = (paths.SWEEP_LABELS,)
OPTIONAL = False
METRICS = (
    ("jaccard", "Jaccard@10", "jaccard"),
    ("tau", "Kendall τ", "tau"),
    ("displaced_per_query", "displaced edges / query", "displaced"),
)


def make(results_dir: str | Path, out_dir: str | Path) -> list[Path]:
    """Jaccard, τ and displaced edges vs label-perturbation rate with the paper's points."""
    f = paths.SWEEP_LABELS
    d = load(results_dir, f)
    kinds = list(field(d, "summary", f))
    if not kinds:
        raise ValueError(f"{f}: field summary must be a non-empty object")
    ref = {**ledger.LABELS, **paper(d, {})}
    fig, axes = figure(1, 3, figsize=(10.5, 3.3))
    for ax, (m, label, pkey) in zip(axes, METRICS):
        for kind in kinds:
            r, mu, sd = series(d, f, kind, m)
            ax.errorbar(r, mu, yerr=sd, marker="o", capsize=2, label=f"ours ({kind})")
        pts = [
            (float(rate), v[pkey], v.get(f"{pkey}_sd", 0.0))
            for rate, v in ref.items()
            if isinstance(v, dict) and pkey in v
        ]
        if pts:
            ax.errorbar(
                [p[0] for p in pts],
                [p[1] for p in pts],
                yerr=[p[2] for p in pts],
                fmt="*",
                color=PAPER_COLOR,
                ms=11,
                capsize=2,
                label="paper",
            )
            for x, y, _ in pts:
                ax.annotate(f"{y:g}", (x, y), textcoords="offset points", xytext=(6, -3), fontsize=7, color=PAPER_COLOR)
        ax.set_xlabel("perturbation rate (within confused pairs)")
        ax.set_ylabel(label)
        ax.set_title(label)
        ax.legend(loc="best")
    pairs = d.get("config", {}).get("pairs") or []
    fig.suptitle(
        f"Category-label perturbation in {len(pairs) or '?'} confused pairs (mean ± sd over seeds); {source_note(d)}"
    )
    return [save(fig, out_dir, "fig_labels")]


if __name__ == "__main__":
    sys.exit(cli(make, "python -m paper_figures.fig_labels"))
