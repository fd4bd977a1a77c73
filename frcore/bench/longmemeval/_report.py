"""LongMemEval's report: one line of the benchmark's retrieval log per question, and the
markdown tables of a run's summary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._data import Question
from ._metrics import STALE_K, question_metrics


def log_entry(q: Question, ranking: Sequence[int], granularity: str) -> dict[str, Any]:
    """One line of the benchmark's retrieval log for ``q`` ranked by ``ranking``."""
    ranked_ids = [q.corpus[i].corpus_id for i in ranking]
    return {
        "question_id": q.question_id,
        "question_type": q.question_type,
        "question": q.question,
        "answer": q.answer,
        "question_date": q.question_date_text,
        "answer_session_ids": list(q.answer_session_ids),
        "retrieval_results": {
            "query": q.question,
            "ranked_items": [
                {"corpus_id": q.corpus[i].corpus_id, "timestamp": q.date_texts[q.corpus[i].session]} for i in ranking
            ],
            "metrics": question_metrics(ranked_ids, q.gold, len(q.corpus), granularity),
        },
    }


def _pct(v: Any) -> str:
    return "—" if v is None else f"{100.0 * float(v):.1f}"


def markdown_longmemeval(summary: Mapping[str, Any]) -> str:
    """Markdown tables: pooled and per-type metrics of every system, the lifecycle measures of
    knowledge-update questions, and the paired comparisons."""
    systems = summary.get("systems")
    if not isinstance(systems, Mapping) or not systems:
        raise ValueError("summary: field 'systems': expected a non-empty mapping NAME → results")
    gran = summary.get("config", {}).get("granularity", "turn")
    lv = "turn" if gran == "turn" else "session"
    types = summary.get("question_types", [])
    first = next(iter(systems.values()))
    lines = [
        f"LongMemEval retrieval ({summary.get('data', '?')}, embedder `{summary.get('embedder', '?')}`): "
        "means in %, abstention questions excluded.",
        "",
        f"Pooled ({first['pooled']['n']} questions):",
        "",
        "| system | "
        + " | ".join(f"{lv} {m}" for m in ("R_any@5", "R_all@5", "R_all@10", "NDCG@10", "R_all@50"))
        + (" | session R_any@5 | session R_all@5 | session R_all@10 | session NDCG@10 |" if lv == "turn" else " |"),
        "|---|" + "---:|" * (9 if lv == "turn" else 5),
    ]
    for name, s in systems.items():
        p = s["pooled"]
        t = p.get(lv, {})
        ss = p["session"]
        lines.append(
            f"| {name} | "
            + " | ".join(
                _pct(t.get(m))
                for m in ("recall_any@5", "recall_all@5", "recall_all@10", "ndcg_any@10", "recall_all@50")
            )
            + (
                " | "
                + " | ".join(_pct(ss.get(m)) for m in ("recall_any@5", "recall_all@5", "recall_all@10", "ndcg_any@10"))
                if lv == "turn"
                else ""
            )
            + " |"
        )
    head = [f"{t} (n={first['per_type'][t]['n']})" for t in types]
    lines += ["", f"{lv.capitalize()}-level recall_all@10 per question type:", ""]
    lines.append("| system | " + " | ".join(head) + " |")
    lines.append("|---|" + "---:|" * len(types))
    for name, s in systems.items():
        lines.append(
            f"| {name} | " + " | ".join(_pct(s["per_type"][t].get(lv, {}).get("recall_all@10")) for t in types) + " |"
        )
    ku = first.get("knowledge_update", {})
    if ku.get("n"):
        lines += [
            "",
            f"Knowledge-update questions with evidence on two or more dates (n={ku['n']}): newest evidence ranked "
            f"above every older one, and only older evidence in the top {STALE_K}:",
            "",
            f"| system | newest above older | stale-only@{STALE_K} |",
            "|---|---:|---:|",
        ]
        for name, s in systems.items():
            k = s["knowledge_update"]
            lines.append(f"| {name} | {_pct(k['newest_above_older_rate'])} | {_pct(k[f'stale_only@{STALE_K}_rate'])} |")
    comps = [c for c in summary.get("comparisons", []) if c["group"] == "pooled" and c["metric"] == "recall_all@10"]
    if comps:
        lines += [
            "",
            f"Paired bootstrap on the {summary.get('evaluable', '?')} questions with gold (abstention excluded), "
            f"{comps[0]['level']} recall_all@10, a − b in points (95% CI):",
            "",
            "| a | b | a | b | Δ | CI |",
            "|---|---|---:|---:|---:|---:|",
        ]
        for c in comps:
            lines.append(
                f"| {c['a']} | {c['b']} | {_pct(c['mean_a'])} | {_pct(c['mean_b'])} | {100 * c['diff']:+.1f} | "
                f"[{100 * c['ci_low']:+.1f}, {100 * c['ci_high']:+.1f}] |"
            )
    wg = summary.get("without_gold") or []
    if wg:
        lines += [
            "",
            f"{len(wg)} non-abstention questions have no gold in the corpus (their evidence is in assistant messages "
            "or absent): recall_any and NDCG 0, recall_all 1 (all of nothing), for every system, as the benchmark "
            "computes them.",
        ]
    return "\n".join(lines) + "\n"
