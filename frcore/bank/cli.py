"""``fr bank init|add|retract|erase|query|explain|export``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def read_facts(path: str | Path) -> list[dict]:
    """Facts from a JSON list, a JSONL file, or a suite file (its ``facts``).

    A suite's other keys (``role`` in particular) are passed through untouched; the bank ignores
    every key it does not know.
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"facts file {p} does not exist")
    text = p.read_text(encoding="utf-8")
    if p.suffix == ".jsonl":
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise ValueError(f"{p}: line {n}: invalid JSON ({e.msg})") from None
        return out
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{p}: invalid JSON ({e.msg} at line {e.lineno})") from None
    if isinstance(obj, dict) and "facts" in obj:
        return list(obj["facts"])
    if isinstance(obj, list):
        return obj
    raise ValueError(f"{p}: expected a JSON list of facts, JSONL, or a suite file with 'facts'")


def _open(args):
    from ._bank import Bank

    if not Path(args.path).exists() and args.command_bank != "init":
        raise FileNotFoundError(f"bank {args.path} does not exist (create it with `fr bank init {args.path}`)")
    return Bank.open(args.path, embedder=args.embedder)


def _print_result(res, full: bool) -> None:
    print(f"query: {res.query!r}  at {res.at.isoformat()}  intent: {res.intent} ({res.intent_rule})")
    if res.categories:
        print("routing: " + ", ".join(f"{k}={v:.2f}" for k, v in sorted(res.categories.items(), key=lambda kv: -kv[1])))
    print(f"candidates: {res.n_candidates} after dedup, {res.n_distilled} after distillation")
    for rank, r in enumerate(res.results, 1):
        print(f"{rank:>2}. {r['score']:+.4f}  [{r['state']}] {r['id']}: {r['text']}")
        if full:
            for line in explanation_lines(r["explanation"]):
                print("      " + line)
            print(f"      stages={','.join(r['stages'])}")


def explanation_lines(e: dict) -> list[str]:
    """One result's :func:`frcore.bank._bank.explanation` as text: σ and its sources, activation
    and blend, then the additive terms of the score (``name=value``, 6 decimals) and their total;
    the printed terms add up to the printed total (to the printed precision)."""
    summands = " + ".join(f"{n}={v:+.6f}" for n, v in e["summands"].items())
    if "sigma" not in e:  # a flat ranker: the similarity is the score
        return [f"{summands} = total={e['total']:+.6f}"]
    s = e["sigma"]
    g = s["hybrid_weight"]
    linked = f"linked={s['linked']:.4f}" + (f" (from {s['linked_from']})" if s["linked_from"] else "")
    sigma = f"sigma = {1 - g:.2f}*{linked} + {g:.2f}*bm25={s['bm25']:.4f} = {s['hybrid']:.4f}"
    if s["scale"] != "raw":
        sigma += f", scaled ({s['scale']})"
    if s["kernel"] is not None:
        sigma += f"; kernel sigma={s['kernel']:.4f}"
    return [
        f"cosine={s['cosine']:.4f}  {sigma}",
        f"activation={e['activation']:.4g} (rate={e['rate']:.4g}/h, age={e['age']:.4g} h)  blend={e['blend']:.4f}",
        f"{summands} = total={e['total']:+.6f}",
    ]


def run(args) -> int:
    from ._bank import Bank

    cmd = args.command_bank
    if cmd == "bench":
        from ._benchmark import run as bench

        res = bench(tuple(int(x) for x in args.sizes.split(",")), embedding=not args.no_embedding)
        if args.json:
            Path(args.json).write_text(json.dumps(res, indent=1))
        return 0
    if cmd == "init":
        Bank.open(args.path, embedder=args.embedder).close()
        print(f"initialised {args.path}")
        return 0
    bank = _open(args)
    try:
        if cmd == "add":
            ids = bank.add(read_facts(args.file))
            out = {"added": len(ids), "ids": ids}
            print(json.dumps(out) if args.json else f"added {len(ids)} facts")
        elif cmd == "retract":
            bank.retract(args.id, at=args.at, reason=args.reason)
            print(json.dumps({"retracted": args.id}) if args.json else f"retracted {args.id}")
        elif cmd == "erase":
            audit = bank.erase(args.id, reason=args.reason)
            print(json.dumps(audit, default=str) if args.json else f"erased {args.id}")
        elif cmd in ("query", "explain"):
            # whatever lists score terms (explain, and query --json) carries their explanation
            retrieve = bank.explain if (cmd == "explain" or args.json) else bank.query
            res = retrieve(args.text, at=args.at, k=args.k, intent=args.intent, known_at=args.known_at,
                           categories=args.categories.split(",") if args.categories else None)
            if args.json:
                print(json.dumps(res.to_dict(), default=str))
            else:
                _print_result(res, full=(cmd == "explain"))
        elif cmd == "export":
            data = bank.export()
            text = json.dumps(data, default=str, indent=1)
            if args.out:
                Path(args.out).write_text(text)
                print(f"exported to {args.out}")
            else:
                print(text)
    finally:
        bank.close()
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("bank", help="FR-Bank: a persistent lifecycle-aware memory store")
    sub = p.add_subparsers(dest="command_bank", metavar="ACTION", required=True)

    def common(sp, with_json=True):
        sp.add_argument("path", help="bank file (SQLite)")
        sp.add_argument("--embedder", default="hash", help="hash (default, fast) or minilm")
        if with_json:
            sp.add_argument("--json", action="store_true", help="machine-readable output")

    common(sub.add_parser("init", help="create an empty bank"), with_json=False)
    sp = sub.add_parser("add", help="add facts from JSON, JSONL or a suite file")
    common(sp)
    sp.add_argument("file")
    for name in ("retract", "erase"):
        sp = sub.add_parser(name, help=f"{name} a fact by id")
        common(sp)
        sp.add_argument("id")
        sp.add_argument("--reason")
        if name == "retract":
            sp.add_argument("--at", help="effective time (default now)")
    for name in ("query", "explain"):
        sp = sub.add_parser(name, help="retrieve" if name == "query" else "retrieve with every score term")
        common(sp)
        sp.add_argument("text")
        sp.add_argument("--at", help="query (valid) time, YYYY-MM-DD or ISO (default now)")
        sp.add_argument("--known-at", dest="known_at", help="transaction-time cut: what the bank knew then")
        sp.add_argument("--k", type=int, default=10)
        sp.add_argument("--intent", help="override: current, historical, change_history, upcoming, retraction_aware, broad")
        sp.add_argument("--categories", help="override routing: comma-separated category names")
    sp = sub.add_parser("bench", help="benchmark ingest, query latency and memory at several bank sizes (JSON)")
    sp.add_argument("--sizes", default="1000,20000,100000")
    sp.add_argument("--no-embedding", action="store_true", help="skip the MiniLM query-embedding timing")
    sp.add_argument("--json")
    sp = sub.add_parser("export", help="export every edge, transition and audit record as JSON")
    common(sp, with_json=False)
    sp.add_argument("--out")
    p.set_defaults(func=run)
