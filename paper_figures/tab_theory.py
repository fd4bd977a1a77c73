"""Theory table: every formal claim (id, title, the paper's statement, what our check found,
pass/fail).

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
    f = paths.THEORY
    d = load(results_dir, f)
    claims = rows_of(d, "claims", f, ("id", "title", "paper", "ours", "passed"))
    rows = []
    for i, c in enumerate(claims):
        if not isinstance(c["passed"], bool):
            raise ValueError(f"{f}: claims[{i}] ({c['id']!r}): field passed must be true/false, got {c['passed']!r}")
        rows.append([c["id"], c["title"], c["paper"], c["ours"], "pass" if c["passed"] else "FAIL"])
    n_pass = sum(1 for c in claims if c["passed"])
    return write_table(out_dir, "tab_theory", ["claim", "title", "paper", "ours", "result"], rows,
                       title=f"Theory as executable checks: {n_pass} of {len(claims)} claims pass")


if __name__ == "__main__":
    sys.exit(cli(make, "python -m paper_figures.tab_theory"))
