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

``--sizes 1000,10000,100000`` measures instead derivation alone on one batch of each size, one
user: the distinct histories of ``--data`` and ``--more`` (each history's user turns once), laid
one after another in time and repeated with a later date when more turns are needed; µs per
turn for each size, best of R rounds (the bound of docs/derive.md: the cost per turn does not
grow with the batch).

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


def one_batch(paths: list[str], size: int) -> list:
    """``size`` user turns of one user, in time order: the distinct histories of ``paths`` laid
    one after another (each history shifted after the previous), repeated when needed."""
    import dataclasses
    import datetime as dt

    histories, seen = [], set()
    for path in paths:
        for q in load_longmemeval(path, "turn", None, None).questions:
            key = tuple(c.corpus_id for c in q.corpus)
            if key not in seen:
                seen.add(key)
                histories.append([c for c in q.corpus if c.text.strip()])
    out: list = []
    shift = dt.timedelta(0)
    while len(out) < size:
        for h in histories:
            start = min(c.date for c in h)
            for c in h:
                out.append(
                    bank_fact(
                        dataclasses.replace(c, date=c.date - start + dt.datetime(2020, 1, 1) + shift),
                        len(out),
                        {"OTHER": 1.0},
                    )
                )
            shift += max(c.date for c in h) - start + dt.timedelta(days=1)
            if len(out) >= size:
                break
    return parse_batch(out[:size]).records


def sizes(a) -> dict:
    """µs per turn of the rules alone (:func:`frcore.bank.derive.derive` on the batch's user
    turns, the prompt-injection guard's verdicts taken first, as the store takes them), one batch
    of each size (best of ``a.repeats``)."""
    from frcore.bank.derive import derive, is_user_turn, turn_of

    paths = [a.data, *a.more]
    got = {}
    for size in (int(x) for x in a.sizes.split(",")):
        turns = [turn_of(r) for r in one_batch(paths, size) if is_user_turn(r)]
        best = float("inf")
        links = 0
        for _ in range(a.repeats):
            t = time.perf_counter()
            d = derive(TurnIndex(soft=False), turns, DeriveConfig())
            best = min(best, time.perf_counter() - t)
            links = sum(len(v) for x in d.values() for v in x.links.values())
        got[str(size)] = {
            "us_per_turn": round(1e6 * best / size, 1),
            "links_per_1000_turns": round(1000 * links / size, 1),
        }
        print(size, got[str(size)], flush=True)
    return {"data": paths, "repeats": a.repeats, "batch": got}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(DEFAULT_DATA))
    p.add_argument("--questions", type=int, default=10)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=None)
    p.add_argument(
        "--on-disk", action="store_true", help="banks in files with their index, as the benchmarks open them"
    )
    p.add_argument("--sizes", default=None, help="batch sizes (comma-separated): derivation alone on one batch each")
    p.add_argument("--more", action="append", default=[], help="another LongMemEval file for --sizes (repeatable)")
    a = p.parse_args(argv)
    if a.sizes:
        text = json.dumps(sizes(a), indent=1)
        print(text)
        if a.out:
            with open(a.out, "w") as fh:
                fh.write(text + "\n")
        return
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
            derive_records(recs, TurnIndex(soft=False), DeriveConfig())
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
