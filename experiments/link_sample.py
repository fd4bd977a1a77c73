"""Draw a sample of derived links for hand labelling (docs/derive.md, "Link precision").

``python -m experiments.link_sample --data ../shared/data/longmemeval/longmemeval_s_dev.json.gz
--per-rule 60 --seed 0 --out FILE`` derives every question's user turns of a LongMemEval file
(each history on its own, as the benchmark's banks; ``--embedder minilm``, the default, gives the
rules their meaning test, ``--embedder none`` reads words only; ``--soft-updates`` turns that
rule on too), draws ``--per-rule`` links of each link rule at random (all of them when there are
fewer), and writes them with the statements that made them and an empty ``label`` for a person
to fill in: ``update`` (the later statement changes the value of the same attribute),
``restatement`` (same attribute, same value) or ``wrong``.
"""

from __future__ import annotations

import argparse
import json
import random

from frcore.bank.derive import DeriveConfig, Turn, TurnIndex, derive
from frcore.bench.longmemeval import load_longmemeval


def _rows(source: str, turns: dict[str, Turn], index: TurnIndex, cfg: DeriveConfig | None) -> list[dict]:
    """One row per update or soft-update link derived over ``turns`` (one history), unlabelled."""
    out = []
    for d in derive(index, list(turns.values()), cfg).values():
        for ev in d.evidence:
            if ev.rule not in ("updates", "soft_updates"):
                continue
            a, b = turns[str(ev.target)], turns[d.id]
            later, earlier = ("claim", "earlier_claim") if ev.rule == "updates" else ("statement", "earlier_statement")
            out.append(
                {
                    "question_id": source,
                    "cosine": ev.detail.get("cosine"),
                    "rule": ev.rule,
                    "later_id": b.id,
                    "earlier_id": a.id,
                    "later_said_at": b.said_at.isoformat(),
                    "earlier_said_at": a.said_at.isoformat(),
                    "later": ev.detail[later],
                    "earlier": ev.detail[earlier],
                    "label": "",
                }
            )
    return out


def links(path: str, embed=None, cfg: DeriveConfig | None = None) -> list[dict]:
    """Every derived update or soft-update link of every history in ``path`` (``embed``: the
    meaning test's embedder, or None; ``cfg``: the rules)."""
    out, seen = [], set()
    vectors: dict = {}
    for q in load_longmemeval(path, "turn", None, None).questions:
        turns = {c.corpus_id: Turn(c.corpus_id, c.text, c.date) for c in q.corpus if c.text.strip()}
        key = tuple(sorted(turns))
        if key not in seen:  # a history shared by two questions is derived once
            seen.add(key)
            out += _rows(q.question_id, turns, TurnIndex(embed=embed, vectors=vectors), cfg)
    return out


def locomo_links(path: str | None, embed=None, cfg: DeriveConfig | None = None) -> list[dict]:
    """Every derived update or soft-update link of LoCoMo's conversations (each speaker's turns
    their own user, as ``fr bench locomo`` stores them)."""
    from frcore.bench.locomo import load_locomo

    out = []
    vectors: dict = {}
    for conv in load_locomo(path).conversations:
        turns = {t.dia_id: Turn(t.dia_id, t.text, t.said_at, t.speaker) for t in conv.turns if t.text.strip()}
        out += _rows(conv.sample_id, turns, TurnIndex(embed=embed, vectors=vectors), cfg)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="../shared/data/longmemeval/longmemeval_s_dev.json.gz")
    p.add_argument("--per-rule", type=int, default=60)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True)
    p.add_argument("--embedder", default="minilm", help="minilm (default) or none (words only)")
    p.add_argument("--locomo", default=None, help="also LoCoMo's conversations: a file, or 'default'")
    p.add_argument("--soft-updates", action="store_true", help="the soft-update rule on too (off by default)")
    a = p.parse_args(argv)
    cfg = DeriveConfig(soft_updates=a.soft_updates)
    embed = None
    if a.embedder != "none":
        from frcore.bench import make_embedder

        embed = make_embedder(a.embedder).embed
    every = links(a.data, embed, cfg)
    if a.locomo:
        every += locomo_links(None if a.locomo == "default" else a.locomo, embed, cfg)
    rng = random.Random(a.seed)
    sample = []
    for rule in ("updates", "soft_updates"):
        pool = [x for x in every if x["rule"] == rule]
        sample += rng.sample(pool, min(a.per_rule, len(pool)))
    counts = {r: sum(x["rule"] == r for x in every) for r in ("updates", "soft_updates")}
    doc = {
        "source": [a.data] + ([a.locomo] if a.locomo else []),
        "embedder": a.embedder,
        "seed": a.seed,
        "links_derived": counts,
        "links": sample,
    }
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
    print(f"{len(sample)} of {sum(counts.values())} links ({counts}) -> {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
