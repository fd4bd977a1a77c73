"""``fr theory``: run every registered claim, print (claim, paper, ours, pass/fail), write JSON.

Claims that need a corpus get the built-in generated corpus or ``--suite PATH``. A claim that
raises is reported as failed with its error, and the rest still run; the exit code is 1 if any
claim failed.
"""

from __future__ import annotations

import importlib
import json
import math
import traceback

from ._base import CLAIMS, ClaimResult

#: Modules registering claims; missing optional ones (written by others) are skipped.
CLAIM_MODULES = ("theory.formal", "theory.witnesses", "theory.corpus_claims")


def load_claim_modules() -> list[str]:
    """Import every claim module present; returns those imported."""
    loaded = []
    for m in CLAIM_MODULES:
        try:
            importlib.import_module(m)
            loaded.append(m)
        except ModuleNotFoundError as e:
            if e.name != m:
                raise
    return loaded


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if hasattr(x, "tolist"):
        return _jsonable(x.tolist())
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return x


def run_claims(corpus_factory, ids: list[str] | None = None) -> list[dict]:
    """Run claims (all, or ``ids``); ``corpus_factory()`` is called once, only if needed."""
    corpus = None
    corpus_error = None
    out = []
    for cid, c in CLAIMS.items():
        if ids and cid not in ids:
            continue
        rec = {"id": c.id, "title": c.title, "paper": c.paper}
        try:
            if c.needs_corpus:
                if corpus is None and corpus_error is None:
                    try:
                        corpus = corpus_factory()
                    except Exception as e:  # noqa: BLE001 — reported per claim
                        corpus_error = f"corpus: {type(e).__name__}: {e}"
                if corpus_error:
                    raise RuntimeError(corpus_error)
                res = c.check(corpus)
            else:
                res = c.check(None)
            if not isinstance(res, ClaimResult):
                raise TypeError(f"check returned {type(res).__name__}, not ClaimResult")
            rec.update(ours=res.ours, passed=bool(res.passed), witness=_jsonable(dict(res.witness)))
        except Exception as e:  # noqa: BLE001 — a failing claim must not stop the others
            rec.update(ours=f"error: {type(e).__name__}: {e}", passed=False, witness={"traceback": traceback.format_exc()})
        out.append(rec)
    return out


def format_table(records: list[dict]) -> str:
    rows = [("claim", "paper", "ours", "")] + [(r["id"], r["paper"], r["ours"], "PASS" if r["passed"] else "FAIL") for r in records]
    w0 = max(len(r[0]) for r in rows)
    lines = []
    for r in rows:
        lines.append(f"{r[0]:<{w0}}  {r[3]:<4}  paper: {r[1]}" if r[3] else f"{r[0]:<{w0}}  {'':<4}  paper / ours")
        if r[3]:
            lines.append(f"{'':<{w0}}        ours:  {r[2]}")
    return "\n".join(lines)


def _run(args) -> int:
    from .corpus import load_corpus

    load_claim_modules()
    records = run_claims(lambda: load_corpus(args.suite, args.personas, args.embedder))
    print(format_table(records))
    n_fail = sum(not r["passed"] for r in records)
    print(f"\n{len(records) - n_fail}/{len(records)} claims passed")
    if args.json:
        doc = {"claims": [{k: r[k] for k in ("id", "title", "paper", "ours", "passed")} for r in records],
               "witnesses": {r["id"]: r["witness"] for r in records}}
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, default=str)
    return 1 if n_fail else 0


def register(subparsers) -> None:
    p = subparsers.add_parser("theory", help="run every theory claim (paper vs ours)")
    p.add_argument("--suite", help="suite JSON file or folder for the data claims (default: generated suites)")
    p.add_argument("--personas", type=int, default=None, help="number of personas (generated default 8)")
    p.add_argument("--embedder", choices=("hash", "minilm"), default="hash")
    p.add_argument("--json", help="write {claims: [...], witnesses: {...}} here")
    p.set_defaults(func=_run)
