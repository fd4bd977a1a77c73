"""Persona holdout: calibrate α on one half of the personas, evaluate on the other; pass with
default and calibrated parameters on both halves beside the paper's held-out 77.0% vs 76.8%.

Reads ``sweep_holdout.json`` (``fr sweep --only holdout``)."""

from __future__ import annotations

import sys
from pathlib import Path

from . import ledger, paths
from ._common import cli, field, fmt_pct, load, number, paper, source_note, write_table

INPUTS = (paths.SWEEP_HOLDOUT,)
OPTIONAL = False


def make(results_dir: str | Path, out_dir: str | Path) -> list[Path]:
    """Markdown + CSV table of the persona-holdout calibration."""
    f = paths.SWEEP_HOLDOUT
    d = load(results_dir, f)
    ref = {**ledger.HOLDOUT, **paper(d, {})}
    v = {
        k: number(field(d, k, f), k, f)
        for k in ("default_pass_train", "calibrated_pass_train", "default_pass_test", "calibrated_pass_test")
    }
    rows = [
        ["default α", fmt_pct(v["default_pass_train"]), fmt_pct(v["default_pass_test"]), fmt_pct(ref.get("default"))],
        [
            "calibrated α (on train half)",
            fmt_pct(v["calibrated_pass_train"]),
            fmt_pct(v["calibrated_pass_test"]),
            fmt_pct(ref.get("calibrated")),
        ],
    ]
    train = d.get("config", {}).get("train_personas") or []
    notes = [
        f"train personas: {', '.join(map(str, train)) or '?'}; calibration margin {d.get('calibration_margin', '?')}",
        source_note(d),
    ]
    return write_table(
        out_dir,
        "tab_holdout",
        ["parameters", "pass % (train half)", "pass % (held-out half)", "paper: held-out pass %"],
        rows,
        title="Persona holdout: calibrate on one half, evaluate on the other",
        notes=notes,
    )


if __name__ == "__main__":
    sys.exit(cli(make, "python -m paper_figures.tab_holdout"))
