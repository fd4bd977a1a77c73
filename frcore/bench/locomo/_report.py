"""LoCoMo's report: the markdown tables of a run's result."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._data import CATEGORIES, CATEGORY_LABELS
from ._metrics import KS


def _pct(v: Any) -> str:
    return "—" if v is None else f"{100.0 * float(v):.1f}"


def markdown_locomo(result: Mapping[str, Any]) -> str:
    """Markdown tables: recall@k per category and system, all_evidence@10, pooled 1–4, and the
    paired comparisons against the reference (recall@10, categories 1–4)."""
    systems = result.get("systems")
    if not isinstance(systems, Mapping) or not systems:
        raise ValueError("result: field 'systems': expected a non-empty mapping NAME → results")
    cats = list(CATEGORIES)
    n_row = next(iter(systems.values())).get("n", {})
    head = [f"cat {c} {CATEGORY_LABELS[c]} (n={n_row.get(c, '?')})" for c in cats]
    lines = [
        f"LoCoMo evidence retrieval, embedder `{result.get('embedder', '?')}`: recall@k and all_evidence@10 in % (cat "
        "5 adversarial is reported apart; 1–4 pooled).",
        "",
    ]
    lines.append("| system | k | " + " | ".join(head) + " | pooled 1–4 |")
    lines.append("|---|---:|" + "---:|" * (len(cats) + 1))
    for name, s in systems.items():
        for k in KS:
            row = s["recall@k"][str(k)]
            pooled = s.get("pooled_1_4", {}).get(f"recall@{k}")
            lines.append(
                f"| {name} | recall@{k} | " + " | ".join(_pct(row.get(c)) for c in cats) + f" | {_pct(pooled)} |"
            )
        row = s["all_evidence@10"]
        lines.append(
            f"| {name} | all@10 | "
            + " | ".join(_pct(row.get(c)) for c in cats)
            + f" | {_pct(s.get('pooled_1_4', {}).get('all_evidence@10'))} |"
        )
    comps = result.get("comparisons") or {}
    if comps:
        ref = result.get("reference", "fr-full")
        lines += [
            "",
            f"Paired bootstrap, {ref} − system on categories 1–4 (points, 95% CI):",
            "",
            "| system | Δ recall@10 | CI | Δ all_evidence@10 | CI |",
            "|---|---:|---:|---:|---:|",
        ]
        for name, c in comps.items():
            r, a = c["recall@10"], c["all_evidence@10"]
            lines.append(
                f"| {name} | {100 * r['diff']:+.1f} | [{100 * r['ci_low']:+.1f}, {100 * r['ci_high']:+.1f}] | "
                f"{100 * a['diff']:+.1f} | [{100 * a['ci_low']:+.1f}, {100 * a['ci_high']:+.1f}] |"
            )
    sk = result.get("skipped_evidence") or {}
    if sk:
        lines += [
            "",
            f"Skipped evidence ids: {sk.get('count', 0)}; questions without evidence (excluded): "
            f"{result.get('n_no_evidence', 0)}.",
        ]
    return "\n".join(lines) + "\n"
