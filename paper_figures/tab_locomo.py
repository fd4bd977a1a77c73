"""LoCoMo evidence retrieval: recall@k per question category for every system, and
all_evidence@10 (optional: only when ``locomo.json`` exists).

Reads ``locomo.json`` (``fr bench locomo --json``)."""

from __future__ import annotations

import sys
from pathlib import Path

from . import paths
from ._common import cli, field, fmt_pct, load, number, write_table

INPUTS = (paths.LOCOMO,)
OPTIONAL = True


def make(results_dir: str | Path, out_dir: str | Path) -> list[Path]:
    """Markdown + CSV tables of LoCoMo recall@k and all_evidence@10 per category."""
    f = paths.LOCOMO
    d = load(results_dir, f)
    systems = field(d, "systems", f)
    if not isinstance(systems, dict) or not systems:
        raise ValueError(f"{f}: field systems must be a non-empty object")
    first = next(iter(systems.values()))
    ks = sorted(field(first, "recall@k", f), key=int)
    cats = sorted(field(first, f"recall@k.{ks[0]}", f), key=str)
    rows = []
    for name, s in systems.items():
        for k in ks:
            rk = field(s, f"recall@k.{k}", f)
            rows.append(
                [name, f"recall@{k}"]
                + [fmt_pct(number(rk.get(c), f"systems.{name}.recall@k.{k}.{c}", f, allow_none=True)) for c in cats]
            )
        ae = s.get("all_evidence@10")
        if isinstance(ae, dict):
            rows.append(
                [name, "all_evidence@10"]
                + [fmt_pct(number(ae.get(c), f"systems.{name}.all_evidence@10.{c}", f, allow_none=True)) for c in cats]
            )
    return write_table(
        out_dir,
        "tab_locomo",
        ["system", "metric"] + [f"cat {c}" for c in cats],
        rows,
        title="LoCoMo evidence retrieval (%) per question category",
        notes=[f"embedder `{d.get('embedder', '?')}`; cat 5 is adversarial."],
    )


if __name__ == "__main__":
    sys.exit(cli(make, "python -m paper_figures.tab_locomo"))
