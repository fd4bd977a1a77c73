"""Ablation table: every system's pass / staleness / Hit@1,5,10 / MRR, the paired-bootstrap 95%
CI of FR-full − system pass and McNemar p, and the paper's §D.6 pass where a system maps to one
(full 72.9 / no-routing 66.7 / uniform decay 66.5 / baseline 60.7); a per-attack-vector pass
table too. Writes the same tables for ``bench_real.json`` when that file exists.

Reads ``bench.json`` (``fr bench run --json``) and optionally ``bench_real.json``."""

from __future__ import annotations

import sys
from pathlib import Path

from . import ledger, paths
from ._common import MissingInput, cli, field, fmt_p, fmt_pct, load, number, write_table

INPUTS = (paths.BENCH,)
OPTIONAL = False
METRICS = ("pass", "staleness", "hit@1", "hit@5", "hit@10", "mrr")


def tables(d: dict, file: str, out_dir: str | Path, stem: str) -> list[Path]:
    """The overall and per-AV tables of one benchmark result ``d`` as ``stem.md/.csv`` and
    ``stem_per_av.md/.csv``."""
    systems = field(d, "systems", file)
    if not isinstance(systems, dict) or not systems:
        raise ValueError(f"{file}: field systems must be a non-empty object")
    comps = d.get("comparisons_vs_fr_full") or {}
    header = [
        "system",
        "pass %",
        "staleness %",
        "Hit@1 %",
        "Hit@5 %",
        "Hit@10 %",
        "MRR",
        "Δpass FR-full − system (pp) [95% CI]",
        "McNemar p",
        "paper §D.6 pass %",
    ]
    rows = []
    for name, s in systems.items():
        o = field(s, "overall", file) if isinstance(s, dict) else None
        if not isinstance(o, dict):
            raise ValueError(f"{file}: systems.{name}.overall must be an object")
        v = {m: number(o.get(m), f"systems.{name}.overall.{m}", file) for m in METRICS}
        c = comps.get(name) or {}
        cp, mc = c.get("pass") or {}, c.get("mcnemar") or {}
        if cp:
            dif = number(cp.get("diff"), f"comparisons_vs_fr_full.{name}.pass.diff", file)
            lo = number(cp.get("ci_low"), f"comparisons_vs_fr_full.{name}.pass.ci_low", file)
            hi = number(cp.get("ci_high"), f"comparisons_vs_fr_full.{name}.pass.ci_high", file)
            ci = f"{100 * dif:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]"
        else:
            ci = "reference" if name == "fr-full" else "–"
        p = (
            number(mc.get("p_value"), f"comparisons_vs_fr_full.{name}.mcnemar.p_value", file, allow_none=True)
            if mc
            else None
        )
        d6 = ledger.ABLATION_D6.get(name)
        rows.append(
            [
                name,
                fmt_pct(v["pass"]),
                fmt_pct(v["staleness"]),
                fmt_pct(v["hit@1"]),
                fmt_pct(v["hit@5"]),
                fmt_pct(v["hit@10"]),
                f"{v['mrr']:.3f}",
                ci,
                fmt_p(p),
                f"{d6:.1f} ({ledger.ABLATION_D6_NAMES[name]})" if d6 is not None else "–",
            ]
        )
    n = d.get("n_questions", "?")
    src = (
        f"suite `{d.get('suite', '?')}`, embedder `{d.get('embedder', '?')}`, {n} questions, rev "
        f"{str(d.get('git_revision', '?'))[:8]}"
    )
    notes = [
        src,
        "Δpass is FR-full minus the system, paired bootstrap over questions; McNemar exact/χ² on the discordant pairs. "
        "The paper's column is its own LifecycleBench run (LLM judge, its data); systems are mapped by name, the "
        "paper's 'baseline' to flat-cosine.",
    ]
    out = write_table(out_dir, stem, header, rows, title="LifecycleBench: every system vs FR-full", notes=notes)
    avs = sorted({av for s in systems.values() for av in (s.get("per_av") or {})})
    if avs:
        first = next(iter(systems.values())).get("per_av") or {}
        hdr = ["system"] + [f"{av} (n={first.get(av, {}).get('n', '?')})" for av in avs]
        prow = []
        for name, s in systems.items():
            pa = s.get("per_av") or {}
            prow.append(
                [name]
                + [
                    fmt_pct(number(pa[av].get("pass"), f"systems.{name}.per_av.{av}.pass", file)) if av in pa else "–"
                    for av in avs
                ]
            )
        out += write_table(
            out_dir, f"{stem}_per_av", hdr, prow, title="LifecycleBench pass % per attack vector", notes=[src]
        )
    return out


def make(results_dir: str | Path, out_dir: str | Path) -> list[Path]:
    """Ablation tables (markdown + CSV) from bench.json, and from bench_real.json if present."""
    out = tables(load(results_dir, paths.BENCH), paths.BENCH, out_dir, "tab_ablation")
    try:
        real = load(results_dir, paths.BENCH_REAL)
    except MissingInput:
        return out
    return out + tables(real, paths.BENCH_REAL, out_dir, "tab_ablation_real")


if __name__ == "__main__":
    sys.exit(cli(make, "python -m paper_figures.tab_ablation"))
