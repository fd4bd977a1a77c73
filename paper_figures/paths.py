"""Every path the figure scripts use, in one place (showyourwork's ``paths.py``).

Scripts read result files from a results folder given by the caller and write into an output
folder given by the caller; the defaults below are used only when none is given.
"""

from __future__ import annotations

from pathlib import Path

#: ``paper_figures/``
HERE = Path(__file__).resolve().parent
#: repository root
ROOT = HERE.parent
#: matplotlib settings for every figure (``backend: agg``)
MATPLOTLIBRC = HERE / "matplotlibrc"
#: default output folder (gitignored, never committed)
DEFAULT_OUT = HERE / "out"
#: default results folder (gitignored), as written by ``fr reproduce`` / ``fr sweep``
DEFAULT_RESULTS = ROOT / "results"

#: result file names inside a results folder
BENCH = "bench.json"
BENCH_REAL = "bench_real.json"
THEORY = "theory.json"
LATENCY = "latency.json"
LOCOMO = "locomo.json"
SWEEP_MULTIPLIER = "sweep_multiplier.json"
SWEEP_ALPHA = "sweep_alpha.json"
SWEEP_NOISE = "sweep_noise.json"
SWEEP_LABELS = "sweep_labels.json"
SWEEP_GRANULARITY = "sweep_granularity.json"
SWEEP_HOLDOUT = "sweep_holdout.json"
