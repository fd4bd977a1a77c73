"""Theory table: every claim (id, title, the paper's statement, what our check found, the check
— pass / fail / error — and the verdict against the paper, with its reason), never merged.

Reads ``theory.json`` (``fr theory --json``)."""

from __future__ import annotations

import sys
from pathlib import Path

from . import paths
from ._common import cli, load, rows_of, write_table

INPUTS = (paths.THEORY,)
OPTIONAL = False


def make(results_dir: str | Path, out_dir: str | Path) -> list[Path]:
    """Markdown + CSV table of the theory claims."""
    from theory.verdict import CHECKS, VERDICTS

    f = paths.THEORY
    d = load(results_dir, f)
    claims = rows_of(d, "claims", f, ("id", "title", "paper", "ours", "check", "verdict", "reason"))
    rows = []
    for i, c in enumerate(claims):
        if c["check"] not in CHECKS:
            raise ValueError(f"{f}: claims[{i}] ({c['id']!r}): field check must be one of {CHECKS}, got {c['check']!r}")
        if c["verdict"] not in VERDICTS:
            raise ValueError(
                f"{f}: claims[{i}] ({c['id']!r}): field verdict must be one of {VERDICTS}, got {c['verdict']!r}"
            )
        rows.append([c["id"], c["title"], c["paper"], c["ours"], c["check"], c["verdict"], c["reason"]])
    n_pass = sum(1 for c in claims if c["check"] == "pass")
    n_rep = sum(1 for c in claims if c["verdict"] == "reproduced")
    return write_table(
        out_dir,
        "tab_theory",
        ["claim", "title", "paper", "ours", "check", "verdict", "reason"],
        rows,
        title=f"Theory as executable checks: {n_pass} of {len(claims)} checks pass; {n_rep} of {len(claims)} claims "
        "reproduced",
    )


if __name__ == "__main__":
    sys.exit(cli(make, "python -m paper_figures.tab_theory"))
