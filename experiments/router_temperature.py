"""How soft the router's categories of untyped turns are, per softmax temperature.

SPEC §2: the paper's 18,936-entry bank has 2.0 categories per entry and 66.8% of entries with
primary weight < 0.90. :meth:`frcore.bank.Router.categorize` assigns soft categories to untyped
items (raw conversation turns) by a softmax over routing scores; its temperature is ours to set.
This measures both statistics on LoCoMo's conversation turns (a corpus of raw turns, like the
paper's bank, and not LifecycleBench data) for a grid of temperatures, and reports the one that
minimises the summed squared relative error against the two published statistics — the rule
that set :data:`frcore.bank.pipeline._query.CATEGORIZE_TEMPERATURE`.

    python -m experiments.router_temperature [--data PATH] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from theory.corpus_claims import soft_membership_stats

PAPER = {"mean_categories_above_0_05": 2.0, "share_primary_below_0_90": 0.668}
GRID = (0.05, 0.075, 0.1, 0.125, 0.15, 0.2, 0.25)


def temperature_table(router, texts, vecs, temperatures=GRID) -> list[dict]:
    """Per temperature: the two soft-membership statistics and their squared relative error."""
    from frcore import CATEGORY_NAMES

    rows = []
    for t in temperatures:
        w = np.zeros((len(texts), len(CATEGORY_NAMES)))
        for i, (text, v) in enumerate(zip(texts, vecs)):
            for name, x in router.categorize(text, v, temperature=t).items():
                w[i, CATEGORY_NAMES.index(name)] = x
        s = soft_membership_stats(w)
        s["temperature"] = t
        s["sq_rel_error"] = float(sum((s[k] / v - 1.0) ** 2 for k, v in PAPER.items()))
        rows.append(s)
    return rows


def main(argv=None) -> int:
    from frcore.bank import Router, get_embedder
    from frcore.bench.locomo import load_locomo

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=None, help="LoCoMo file (default ../shared/data/locomo)")
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    data = load_locomo(args.data)
    emb = get_embedder(args.embedder)
    texts = [f"{t.speaker}: {t.text}" for c in data.conversations for t in c.turns]
    rows = temperature_table(Router(emb), texts, np.asarray(emb.embed(texts)))
    best = min(rows, key=lambda r: r["sq_rel_error"])
    for r in rows:
        print(
            f"T={r['temperature']:<6} categories/entry {r['mean_categories_above_0_05']:.2f}  "
            f"primary<0.90 {100 * r['share_primary_below_0_90']:.1f}%  sq. rel. error {r['sq_rel_error']:.3f}"
            + ("  <- best" if r is best else "")
        )
    print(f"paper (SPEC §2): 2.0 categories per entry, 66.8% below 0.90; {len(texts)} LoCoMo turns")
    if args.json:
        Path(args.json).write_text(
            json.dumps({"paper": PAPER, "turns": len(texts), "rows": rows, "best": best["temperature"]}, indent=1)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
