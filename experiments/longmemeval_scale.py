"""Cost per message of ``fr bench longmemeval`` as a question's history grows.

``python -m experiments.longmemeval_scale [--data FILE] [--sizes 1,4,10]``: for each size m, three
questions are made by joining the histories of m consecutive questions of the file (each keeps its
sessions and dates); every system of the benchmark ranks the first (to compile its shapes), then
the other two are timed. Prints messages per question, seconds per question and milliseconds per
message; with MiniLM vectors already cached, the embedding is not part of it.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from frcore.bank import Router
from frcore.bench import make_embedder
from frcore.bench.longmemeval import DEFAULT_DATA, Question, load_longmemeval, resolve, run_question


def joined(questions: list[Question]) -> Question:
    """One question whose history is the histories of ``questions``, one after another."""
    corpus, base = [], 0
    for q in questions:
        corpus += [dataclasses.replace(c, session=c.session + base) for c in q.corpus]
        base += len(q.session_ids)
    return dataclasses.replace(
        questions[0],
        corpus=tuple(corpus),
        session_ids=sum((q.session_ids for q in questions), ()),
        session_dates=sum((q.session_dates for q in questions), ()),
        date_texts=sum((q.date_texts for q in questions), ()),
    )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(DEFAULT_DATA))
    p.add_argument("--sizes", default="1,4,10", help="histories joined per question")
    p.add_argument("--embedder", default="minilm")
    args = p.parse_args(argv)
    data = load_longmemeval(args.data)
    emb = make_embedder(args.embedder)
    _, peers, systems = resolve("all")
    router = Router(emb)
    params = {s.name: s.params() for s in systems}
    for m in (int(x) for x in args.sizes.split(",")):
        qs = [joined(list(data.questions[i * m : (i + 1) * m])) for i in range(3)]
        run_question(qs[0], systems, emb, router, peers=peers, params=params)
        t = time.perf_counter()
        for q in qs[1:]:
            run_question(q, systems, emb, router, peers=peers, params=params)
        per_q = (time.perf_counter() - t) / 2
        n = sum(len(q.corpus) for q in qs[1:]) / 2
        print(f"{m} histories: {n:.0f} messages, {per_q:.2f} s per question, {1000 * per_q / n:.2f} ms per message")


if __name__ == "__main__":
    main()
