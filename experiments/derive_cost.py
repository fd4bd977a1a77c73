"""Cost per turn of deriving lifecycle metadata from raw turns (docs/derive.md), at ingest.

``python -m experiments.derive_cost [--data FILE] [--questions N] [--repeats R] [--out FILE]``:
the user messages of the first N LongMemEval questions, each question's history one batch as
``fr bench longmemeval`` adds it. Two figures, each the best of R rounds:

- ``derive_us_per_turn``: :func:`frcore.bank.derive_records` alone, on a fresh index per batch
  (every batch's turns checked by the prompt-injection guard first, as the store does on every
  fact, so the guard's work is not counted to derivation);
- ``add_us_per_turn`` with and without derivation: ``Bank.add`` of each batch into a new
  ``:memory:`` bank (``--on-disk``: a bank file with its index, as the benchmarks open them) with
  the hashing embedder, the two interleaved in each round; their difference
  is what derivation adds to an add.

Prints one JSON object (and writes it to ``--out``, if given).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

from frcore.bank import Bank, DeriveConfig, derive_records, get_embedder
from frcore.bank.derive import TurnIndex
from frcore.bank.records import injection_finding
from frcore.bank.storage import parse_batch
from frcore.bench.longmemeval import DEFAULT_DATA, bank_fact, load_longmemeval


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(DEFAULT_DATA))
    p.add_argument("--questions", type=int, default=10)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=None)
    p.add_argument(
        "--on-disk", action="store_true", help="banks in files with their index, as the benchmarks open them"
    )
    a = p.parse_args(argv)
    data = load_longmemeval(a.data, "turn", None, a.questions)
    facts = [
        [bank_fact(c, i, {"OTHER": 1.0}) for i, c in enumerate(q.corpus) if c.text.strip()] for q in data.questions
    ]
    records = [parse_batch(f).records for f in facts]
    n = sum(map(len, records))
    for recs in records:  # the store's guard runs on every fact of an add: not derivation's work
        for r in recs:
            injection_finding(r)
    derive_s = add_s = plain_s = float("inf")
    emb = get_embedder("hash")
    for _ in range(a.repeats):
        t = time.perf_counter()
        for recs in records:
            derive_records(recs, TurnIndex(), DeriveConfig())
        derive_s = min(derive_s, time.perf_counter() - t)
        for derive, best in ((None, "plain"), (True, "derived")):
            t = time.perf_counter()
            with tempfile.TemporaryDirectory() as tmp:
                for j, f in enumerate(facts):
                    path = os.path.join(tmp, f"q{j}.db") if a.on_disk else ":memory:"
                    bank = Bank.open(path, embedder=emb, derive=derive)
                    bank.add(f)
                    bank.close()
            dt = time.perf_counter() - t
            if best == "plain":
                plain_s = min(plain_s, dt)
            else:
                add_s = min(add_s, dt)
    out = {
        "data": a.data,
        "questions": len(data.questions),
        "turns": n,
        "repeats": a.repeats,
        "banks": "on disk" if a.on_disk else ":memory:",
        "derive_us_per_turn": round(1e6 * derive_s / n, 1),
        "add_us_per_turn": {"without": round(1e6 * plain_s / n, 1), "with_derivation": round(1e6 * add_s / n, 1)},
        "add_extra_us_per_turn": round(1e6 * (add_s - plain_s) / n, 1),
    }
    text = json.dumps(out, indent=1)
    print(text)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
