"""Run every figure and table script over one results folder: ``build_all`` and ``fr figures``.

A script whose input is missing or malformed is recorded in ``failures`` and the rest still
run; a script whose only input is optional (``OPTIONAL = True``, e.g. LoCoMo) and absent is
recorded in ``skipped`` instead."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import traceback
from pathlib import Path

from . import paths

#: every script, in build order
SCRIPTS: tuple[str, ...] = (
    "fig_latency",
    "fig_multiplier",
    "fig_alpha",
    "fig_noise",
    "fig_labels",
    "fig_granularity",
    "tab_ablation",
    "tab_theory",
    "tab_holdout",
    "tab_locomo",
)


#: the claims (ledger rows and theory claims, by id) each script's figures and tables support; the
#: report shows each output beside these claims
SUPPORTS: dict[str, tuple[str, ...]] = {
    "fig_latency": ("latency",),
    "fig_multiplier": ("multiplier",),
    "fig_alpha": ("alpha_bonferroni", "uniform_alpha_av8"),
    "fig_noise": ("slot_noise",),
    "fig_labels": ("labels",),
    "fig_granularity": ("granularity",),
    "tab_ablation": ("ablation", "floors", "static_zero_cost"),
    "tab_theory": (),
    "tab_holdout": ("holdout",),
    "tab_locomo": (),
}


def _kind(p: Path) -> str:
    return "figure" if p.suffix.lower() in (".png", ".pdf", ".svg") else "table"


def build_all(
    results_dir: str | Path = paths.DEFAULT_RESULTS, out_dir: str | Path = paths.DEFAULT_OUT, scripts=SCRIPTS
) -> dict:
    """Run each script's ``make(results_dir, out_dir)``.

    Returns:
      ``{"outputs": [{"path", "kind": "figure" | "table", "command", "claims"}], "failures":
      [{"script", "error"}], "skipped": [{"script", "reason"}]}`` (``claims``: the ids the output
      supports, :data:`SUPPORTS`).
    """
    import matplotlib.pyplot as plt

    results_dir, out_dir = Path(results_dir), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    outputs, failures, skipped = [], [], []
    for name in scripts:
        command = f"python -m paper_figures.{name} {results_dir} {out_dir}"
        try:
            mod = importlib.import_module(f"paper_figures.{name}")
            missing = [f for f in getattr(mod, "INPUTS", ()) if not (results_dir / f).is_file()]
            if missing and getattr(mod, "OPTIONAL", False):
                skipped.append({"script": name, "reason": f"optional input absent: {', '.join(missing)}"})
                continue
            for p in mod.make(results_dir, out_dir):
                outputs.append(
                    {"path": str(p), "kind": _kind(Path(p)), "command": command, "claims": list(SUPPORTS.get(name, ()))}
                )
        except Exception as e:  # one failing script must not stop the rest
            failures.append(
                {"script": name, "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc(limit=3)}
            )
        finally:
            plt.close("all")
    return {"outputs": outputs, "failures": failures, "skipped": skipped}


def _cli(args) -> int:
    res = build_all(args.results, args.out)
    for o in res["outputs"]:
        print(f"{o['kind']:6s} {o['path']}")
    for s in res["skipped"]:
        print(f"skipped {s['script']}: {s['reason']}")
    for f in res["failures"]:
        print(f"FAILED {f['script']}: {f['error']}", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1))
    return 1 if res["failures"] else 0


def register(subparsers) -> None:
    """Add ``fr figures --results DIR --out DIR [--json PATH]``."""
    p = subparsers.add_parser(
        "figures", help="regenerate every figure and table from saved results (never runs a sweep)"
    )
    p.add_argument(
        "--results", default=str(paths.DEFAULT_RESULTS), help="folder of result JSON files (default: results/)"
    )
    p.add_argument(
        "--out", default=str(paths.DEFAULT_OUT), help="output folder (default: paper_figures/out/, gitignored)"
    )
    p.add_argument("--json", help="also write the outputs/failures listing here")
    p.set_defaults(func=_cli)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m paper_figures")
    sub = ap.add_subparsers(dest="command")
    register(sub)
    return _cli(ap.parse_args(["figures"] + list(sys.argv[1:] if argv is None else argv)))


if __name__ == "__main__":
    sys.exit(main())
