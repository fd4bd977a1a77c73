"""Which benchmark texts FR-Bank's prompt-injection detector flags, and its time per text.

Runs :func:`frcore.bank.guard.detect` over every distinct text of the benchmarks' conversations
(read-only, from ``../shared/data``): LongMemEval's haystack sessions (every message, user and
assistant, of ``longmemeval/*.json.gz``), LoCoMo's turns (``locomo/locomo10.json``) and
LifeMemBench's facts and turns (``lifemembench/*.json``). It writes the flagged texts (each with
its corpus and rule) and the counts to a JSON file, so that two runs — the detector before and
after a change — can be compared: ``--compare A.json B.json`` lists every text whose status
differs (none is the requirement: benign conversation must not be newly quarantined, nor a
flagged one let through unnoticed).

Time per text: the LongMemEval texts, the detector's caches emptied before each pass, best of
``--repeats`` passes, in microseconds of wall time.

    python -m experiments.injection_records --out /tmp/records_after.json [--guard PATH]
    python -m experiments.injection_records --compare /tmp/records_before.json /tmp/records_after.json
    python -m experiments.injection_records --time-against /tmp/guard_before/frcore/bank/guard [--every 10]

``--time-against PATH`` times the two detectors side by side in one process instead (every
``--every``-th LongMemEval text, passes alternated, caches emptied, best of ``--repeats``).
``--guard PATH`` loads the detector from another copy of the ``guard`` folder (e.g. one taken
from ``git show``/``git archive`` of an earlier commit) instead of ``frcore.bank.guard``.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import importlib
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


def longmemeval_texts(data: Path) -> list[str]:
    out: list[str] = []
    for f in sorted((data / "longmemeval").glob("*.json.gz")):
        for item in json.loads(gzip.decompress(f.read_bytes())):
            for session in item["haystack_sessions"]:
                out.extend(m["content"] for m in session)
    return out


def locomo_texts(data: Path) -> list[str]:
    out: list[str] = []
    for conv in json.loads((data / "locomo" / "locomo10.json").read_text(encoding="utf-8")):
        for key, session in conv["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                out.extend(turn["text"] for turn in session)
    return out


def lifemembench_texts(data: Path) -> list[str]:
    out: list[str] = []
    for f in sorted((data / "lifemembench").glob("*.json")):
        suite = json.loads(f.read_text(encoding="utf-8"))
        for kind in ("facts", "turns"):
            out.extend(item["text"] for item in suite.get(kind, []))
    return out


def corpora(data: Path) -> dict[str, list[str]]:
    """Each corpus's distinct texts, in first-seen order."""
    return {
        name: list(dict.fromkeys(t for t in read(data) if isinstance(t, str) and t))
        for name, read in (
            ("longmemeval", longmemeval_texts),
            ("locomo", locomo_texts),
            ("lifemembench", lifemembench_texts),
        )
    }


def load_guard(path: str | None):
    """``frcore.bank.guard``, or the package in folder ``path`` (imported as a top-level package)."""
    if path is None:
        return importlib.import_module("frcore.bank.guard")
    folder = Path(path).resolve()
    sys.path.insert(0, str(folder.parent))
    return importlib.import_module(folder.name)


def run(guard, data: Path, repeats: int) -> dict:
    texts = corpora(data)
    flagged = []
    counts = {}
    for name, items in texts.items():
        n = 0
        for t in items:
            d = guard.detect(t)
            if d is not None:
                n += 1
                flagged.append(
                    {"corpus": name, "sha1": hashlib.sha1(t.encode()).hexdigest(), "rule": d.label, "text": t[:300]}
                )
        counts[name] = {"texts": len(items), "flagged": n}
    lme = texts["longmemeval"]
    best = float("inf")
    for _ in range(repeats):
        guard.clear_caches()
        t0 = time.perf_counter()
        for t in lme:
            guard.detect(t)
        best = min(best, time.perf_counter() - t0)
    return {"counts": counts, "microseconds_per_text_longmemeval": 1e6 * best / len(lme), "flagged": flagged}


def time_side_by_side(before, after, data: Path, repeats: int, every: int) -> dict:
    texts = corpora(data)["longmemeval"][::every]
    best = {"before": float("inf"), "after": float("inf")}
    for _ in range(repeats):
        for name, guard in (("before", before), ("after", after)):
            guard.clear_caches()
            t0 = time.perf_counter()
            for t in texts:
                guard.detect(t)
            best[name] = min(best[name], time.perf_counter() - t0)
    return {"texts": len(texts), **{f"microseconds_per_text_{k}": 1e6 * v / len(texts) for k, v in best.items()}}


def compare(a: dict, b: dict) -> int:
    sa = {(x["corpus"], x["sha1"]): x for x in a["flagged"]}
    sb = {(x["corpus"], x["sha1"]): x for x in b["flagged"]}
    print("before:", a["counts"], f"{a['microseconds_per_text_longmemeval']:.1f} µs/text")
    print("after: ", b["counts"], f"{b['microseconds_per_text_longmemeval']:.1f} µs/text")
    for key in sorted(sa.keys() - sb.keys()):
        print("no longer flagged:", sa[key]["corpus"], sa[key]["rule"], repr(sa[key]["text"][:160]))
    for key in sorted(sb.keys() - sa.keys()):
        print("newly flagged:", sb[key]["corpus"], sb[key]["rule"], repr(sb[key]["text"][:160]))
    changed = len(sa.keys() ^ sb.keys())
    print("texts whose status changed:", changed)
    return 1 if changed else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path)
    p.add_argument("--guard", help="folder of another copy of the guard package")
    p.add_argument("--data", type=Path, default=DATA)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    p.add_argument("--time-against", metavar="PATH", help="time this guard folder against the current detector")
    p.add_argument("--every", type=int, default=10)
    args = p.parse_args(argv)
    if args.time_against:
        res = time_side_by_side(load_guard(args.time_against), load_guard(None), args.data, args.repeats, args.every)
        print(json.dumps(res, indent=1))
        return 0
    if args.compare:
        a, b = (json.loads(f.read_text(encoding="utf-8")) for f in args.compare)
        return compare(a, b)
    result = run(load_guard(args.guard), args.data, args.repeats)
    print(json.dumps({k: v for k, v in result.items() if k != "flagged"}, indent=1))
    for x in result["flagged"]:
        print(x["corpus"], x["rule"], repr(x["text"][:120]))
    if args.out:
        args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
