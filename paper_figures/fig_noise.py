"""Metadata-noise sweep over the full basis (slot key, category label, retraction state, event
time): Jaccard@10 and Kendall τ against the clean ranking vs the noise rate, one line per kind
(mean ± sd over seeds); the paper's slot-key point (τ ≈ 0.997 while Jaccard falls to 0.76) as
reference lines.

Reads ``sweep_noise.json`` (``fr sweep --only noise``)."""

from __future__ import annotations

import sys
from pathlib import Path

from . import ledger, paths
from ._common import PAPER_COLOR, cli, field, figure, load, paper, save, source_note
from ._sweepplot import series

INPUTS = (paths.SWEEP_NOISE,)
OPTIONAL = False
METRICS = (("jaccard", "Jaccard@10"), ("tau", "Kendall τ"), ("displaced_per_query", "displaced edges / query"))


def make(results_dir: str | Path, out_dir: str | Path) -> list[Path]:
    """Jaccard, τ and displaced edges vs noise rate per kind, with the paper's slot-key point."""
    f = paths.SWEEP_NOISE
    d = load(results_dir, f)
    kinds = list(field(d, "summary", f))
    if not kinds:
        raise ValueError(f"{f}: field summary must be a non-empty object")
    ref = {**ledger.NOISE, **paper(d, {})}
    fig, axes = figure(1, 3, figsize=(10.5, 3.3))
    for ax, (m, label) in zip(axes, METRICS):
        for kind in kinds:
            r, mu, sd = series(d, f, kind, m)
            ax.errorbar(r, mu, yerr=sd, marker="o", capsize=2, label=kind)
            if kind == "slot_key" and m in ref.get("slot_key", {}):
                ax.axhline(
                    ref["slot_key"][m],
                    color=PAPER_COLOR,
                    ls="--",
                    lw=1,
                    label=f"paper slot-key: {label} {ref['slot_key'][m]:g}",
                )
        ax.set_xlabel("noise rate")
        ax.set_ylabel(label)
        ax.set_title(label)
        ax.legend(loc="best")
    fig.suptitle(f"Metadata-noise sweep (mean ± sd over seeds); {source_note(d)}")
    return [save(fig, out_dir, "fig_noise")]


if __name__ == "__main__":
    sys.exit(cli(make, "python -m paper_figures.fig_noise"))
