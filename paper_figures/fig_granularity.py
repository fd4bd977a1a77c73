"""Granularity sweep: LifecycleBench pass with the ontology collapsed to k = 1 … 11 clusters
(theory's optimal partitions), the cognitive 3-partition as a separate marker, and the paper's
finding that gains saturate near 7 clusters as a vertical line.

Reads ``sweep_granularity.json`` (``fr sweep --only granularity``)."""

from __future__ import annotations

import sys
from pathlib import Path

from . import ledger, paths
from ._common import PAPER_COLOR, cli, figure, load, number, paper, rows_of, save, source_note

INPUTS = (paths.SWEEP_GRANULARITY,)
OPTIONAL = False


def make(results_dir: str | Path, out_dir: str | Path) -> list[Path]:
    """Pass vs number of clusters k, cognitive-3 marked, paper's saturation point."""
    f = paths.SWEEP_GRANULARITY
    d = load(results_dir, f)
    rows = rows_of(d, "rows", f, ("k", "pass"))
    pts = sorted((number(r["k"], f"rows.{i}.k", f), number(r["pass"], f"rows.{i}.pass", f)) for i, r in enumerate(rows))
    ref = {**ledger.GRANULARITY, **paper(d, {})}
    fig, ax = figure(figsize=(5.2, 3.4))
    ax.plot([p[0] for p in pts], [100 * p[1] for p in pts], "o-", label="optimal k-partition")
    cog = d.get("cognitive_3")
    if isinstance(cog, dict) and "pass" in cog:
        ax.plot(
            [3],
            [100 * number(cog["pass"], "cognitive_3.pass", f)],
            "D",
            color="tab:purple",
            ms=8,
            label="cognitive 3-partition",
        )
    if "saturates_near" in ref:
        ax.axvline(
            ref["saturates_near"],
            color=PAPER_COLOR,
            ls="--",
            lw=1,
            label=f"paper: gains saturate near k={ref['saturates_near']}",
        )
    ax.set_xticks(range(1, int(max(p[0] for p in pts)) + 1))
    ax.set_xlabel("k (policy clusters)")
    ax.set_ylabel("pass (%)")
    ax.set_title(f"Ontology granularity; {d.get('n_questions', '?')} questions\n{source_note(d)}")
    ax.legend(loc="lower right")
    return [save(fig, out_dir, "fig_granularity")]


if __name__ == "__main__":
    sys.exit(cli(make, "python -m paper_figures.fig_granularity"))
