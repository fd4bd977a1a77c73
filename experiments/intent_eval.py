"""Accuracy of query-intent inference (:func:`frcore.bank.infer_intent`) on labelled queries.

Three measurements, each kept apart:

- the hand-written intent set ``tests/data/intents/queries.tsv`` (columns ``split``, ``intent``,
  ``query``, ``notes``), per split: ``tune`` (the split the rules of
  :data:`frcore.bank.pipeline._query.INTENT_RULES` are written against) and ``heldout`` (never used to
  write them). The split is stratified by intent and deterministic: within each intent, the
  queries ordered by the SHA-256 of ``"<intent>\\t<query>"``, the first 60% are ``tune``
  (:func:`expected_split`);
- the gold ``intent`` of every question of a suite (the development split,
  ``../shared/data/lifemembench``), a separate check; the persona's name is replaced by "the
  user" first, as the benchmark's banks (owned by the persona) read their questions;
- the gold ``intent`` of the built-in generator's questions (``synthetic``), another one.

Each reports accuracy with a 95% Wilson interval, per-intent precision / recall / F1, the
confusion matrix (gold → inferred), how often each rule fired and the misread queries.
``--compare PATH`` evaluates a second copy of ``_query.py`` (for instance an earlier revision's,
from ``git show REV:frcore/bank/pipeline/_query.py``) on the same data, reported under ``baseline``.

    python -m experiments.intent_eval [--splits tune,heldout] [--suite PATH] [--no-suite]
        [--no-synthetic] [--compare PATH] [--errors] [--json PATH]
    python -m experiments.intent_eval --write-docs   # the rules table of docs/intents.md
"""

from __future__ import annotations

import argparse
import collections
import csv
import hashlib
import importlib.util
import json
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

ROOT = Path(__file__).resolve().parents[1]
QUERIES = ROOT / "tests" / "data" / "intents" / "queries.tsv"
DEV_SUITE = ROOT.parent / "shared" / "data" / "lifemembench"
COLUMNS = ("split", "intent", "query", "notes")
_HEADER = "\t".join(COLUMNS)
SPLITS = ("tune", "heldout")
TUNE_SHARE = 0.6
Z95 = 1.959963984540054


class Decision(Protocol):
    """What an intent inference returns: the intent and the rule that decided it."""

    @property
    def intent(self) -> str: ...

    @property
    def rule(self) -> str: ...


class IntentSetError(ValueError):
    """A malformed row of the intent set; the message names the file, the line and the field."""


def load_queries(path: str | Path = QUERIES) -> list[dict[str, str]]:
    """Rows of the intent set (``split``, ``intent``, ``query``, ``notes``), validated."""
    from frcore import INTENT_NAMES

    path = Path(path)
    rows: list[dict[str, str]] = []
    seen: dict[str, int] = {}
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header is None or tuple(header) != COLUMNS:
            raise IntentSetError(f"{path}:1: header: expected {_HEADER!r}, got {header!r}")
        for line, cells in enumerate(reader, start=2):
            if len(cells) != len(COLUMNS):
                raise IntentSetError(f"{path}:{line}: expected {len(COLUMNS)} tab-separated fields, got {len(cells)}")
            row = dict(zip(COLUMNS, cells))
            if row["split"] not in SPLITS:
                raise IntentSetError(f"{path}:{line}: split: {row['split']!r} is not one of {', '.join(SPLITS)}")
            if row["intent"] not in INTENT_NAMES:
                raise IntentSetError(
                    f"{path}:{line}: intent: {row['intent']!r} is not one of {', '.join(INTENT_NAMES)}"
                )
            if not row["query"].strip():
                raise IntentSetError(f"{path}:{line}: query: empty")
            key = row["query"].strip().lower()
            if key in seen:
                raise IntentSetError(f"{path}:{line}: query: {row['query']!r} repeats line {seen[key]}")
            seen[key] = line
            rows.append(row)
    return rows


def split_key(intent: str, query: str) -> str:
    return hashlib.sha256(f"{intent}\t{query}".encode()).hexdigest()


def expected_split(rows: Sequence[dict[str, str]], tune_share: float = TUNE_SHARE) -> list[str]:
    """The split each row must have: per intent, the first ``round(tune_share · n)`` queries in
    SHA-256 order are ``tune``, the rest ``heldout``."""
    by_intent: dict[str, list[int]] = collections.defaultdict(list)
    for i, r in enumerate(rows):
        by_intent[r["intent"]].append(i)
    out = ["heldout"] * len(rows)
    for idx in by_intent.values():
        order = sorted(idx, key=lambda i: split_key(rows[i]["intent"], rows[i]["query"]))
        for i in order[: round(tune_share * len(order))]:
            out[i] = "tune"
    return out


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion k/n (``(0, 1)`` when n = 0)."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def evaluate(
    items: Iterable[tuple[str, str]], infer: Callable[[str], Decision], intents: Sequence[str] | None = None
) -> dict:
    """Accuracy, Wilson CI, per-intent precision/recall/F1, confusion, rule counts and errors of
    ``infer`` (text → object with ``intent`` and ``rule``) on (gold intent, text) pairs."""
    from frcore import INTENT_NAMES

    intents = tuple(intents or INTENT_NAMES)
    confusion = {g: {p: 0 for p in intents} for g in intents}
    rules: collections.Counter[str] = collections.Counter()
    errors = []
    n = ok = 0
    for gold, text in items:
        d = infer(text)
        n += 1
        ok += d.intent == gold
        confusion[gold][d.intent] += 1
        rules[d.rule] += 1
        if d.intent != gold:
            errors.append({"query": text, "gold": gold, "inferred": d.intent, "rule": d.rule})
    per_intent = {}
    for c in intents:
        tp = confusion[c][c]
        gold_n = sum(confusion[c].values())
        pred_n = sum(confusion[g][c] for g in intents)
        prec = tp / pred_n if pred_n else None
        rec = tp / gold_n if gold_n else None
        f1 = 2 * prec * rec / (prec + rec) if prec and rec else (0.0 if gold_n and pred_n else None)
        per_intent[c] = {"n_gold": gold_n, "n_inferred": pred_n, "precision": prec, "recall": rec, "f1": f1}
    lo, hi = wilson(ok, n)
    return {
        "n": n,
        "correct": ok,
        "accuracy": ok / n if n else None,
        "accuracy_ci95_wilson": [lo, hi],
        "per_intent": per_intent,
        "confusion": confusion,
        "rules_fired": dict(sorted(rules.items())),
        "errors": errors,
    }


def suite_items(suite: str) -> list[tuple[str, str]]:
    """(gold intent, question text) for every question of a suite path or ``synthetic``, the
    persona's name replaced by "the user" as a bank owned by the persona reads it (the
    benchmark's banks are)."""
    from frcore.bank import neutralize, owner_pattern
    from frcore.bench import load_suites_arg

    suites, _ = load_suites_arg(suite, None)
    return [(q.intent, neutralize(q.text, owner_pattern(s.name))) for s in suites for q in s.questions]


def load_rules_module(path: str | Path):
    """A second copy of ``frcore/bank/pipeline/_query.py`` loaded as its own module (its relative
    imports resolve inside ``frcore.bank.pipeline``)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"compare: no such file {path}")
    spec = importlib.util.spec_from_file_location("frcore.bank.pipeline._query_compared", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"compare: cannot load {path} as a Python module")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    if not callable(getattr(mod, "infer_intent", None)):
        raise ValueError(f"compare: {path} defines no infer_intent")
    return mod


DOCS = ROOT / "docs" / "intents.md"
DOCS_BEGIN = "<!-- intent-rules:begin (generated by python -m experiments.intent_eval --write-docs) -->"
DOCS_END = "<!-- intent-rules:end -->"


def _wrap_pattern(pattern: str, width: int = 110) -> list[str]:
    """A pattern cut before ``|`` into lines of at most ``width`` characters (for reading only)."""
    lines, cur = [], ""
    for i, part in enumerate(pattern.split("|")):
        piece = part if i == 0 else "|" + part
        if cur and len(cur) + len(piece) > width:
            lines.append(cur)
            cur = piece
        else:
            cur += piece
    return [*lines, cur]


def rules_table(rows: Sequence[dict[str, str]] | None = None) -> str:
    """The Markdown of :data:`INTENT_RULES` in order: intent, rule name, a labelled query of the
    intent set it decides (the first in file order), then every pattern."""
    from frcore.bank import INTENT_RULES, infer_intent

    rows = load_queries() if rows is None else rows
    example: dict[str, str] = {}
    for r in rows:
        d = infer_intent(r["query"])
        if d.intent == r["intent"]:
            example.setdefault(d.rule, r["query"])
    out = ["| # | intent | rule | a query it decides |", "|---|---|---|---|"]
    for i, (intent, name, _) in enumerate(INTENT_RULES, start=1):
        q = example.get(name, "—").replace("|", "\\|")
        out.append(f"| {i} | `{intent}` | `{name}` | {q} |")
    out.append(f"| — | `current` | `default` | {example.get('default', '—')} |")
    out += ["", "Patterns (case-insensitive; cut before `|` for reading):", "", "```text"]
    for _intent, name, pat in INTENT_RULES:
        wrapped = _wrap_pattern(pat.pattern)
        out.append(f"{name}:")
        out += [f"    {line}" for line in wrapped]
    out.append("```")
    return "\n".join(out)


def docs_block(text: str) -> str:
    """The generated part of ``docs/intents.md`` (between the markers)."""
    try:
        a = text.index(DOCS_BEGIN) + len(DOCS_BEGIN)
        b = text.index(DOCS_END, a)
    except ValueError:
        raise ValueError(f"{DOCS}: markers {DOCS_BEGIN!r} … {DOCS_END!r} not found") from None
    return text[a:b].strip("\n")


def write_docs(path: str | Path = DOCS) -> None:
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    a = text.index(DOCS_BEGIN) + len(DOCS_BEGIN)
    b = text.index(DOCS_END, a)
    path.write_text(text[:a] + "\n" + rules_table() + "\n" + text[b:], encoding="utf-8")


def measure(infer, rows, splits: Sequence[str], suite: str | None, synthetic: bool) -> dict:
    out: dict = {"intent_set": {}}
    for sp in splits:
        out["intent_set"][sp] = evaluate(((r["intent"], r["query"]) for r in rows if r["split"] == sp), infer)
    if suite:
        out["suite"] = {"path": str(suite), **evaluate(suite_items(suite), infer)}
    if synthetic:
        out["synthetic"] = evaluate(suite_items("synthetic"), infer)
    return out


def _line(label: str, r: dict) -> str:
    lo, hi = r["accuracy_ci95_wilson"]
    return f"{label:<28} {r['correct']:>4}/{r['n']:<4} accuracy {r['accuracy']:.3f}  (95% Wilson {lo:.3f}–{hi:.3f})"


def main(argv: Sequence[str] | None = None) -> int:
    from frcore.bank import infer_intent

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", default=str(QUERIES), help="the intent set (TSV)")
    ap.add_argument("--splits", default="tune,heldout", help="comma-separated splits of the intent set to measure")
    ap.add_argument(
        "--suite", default=str(DEV_SUITE), help="suite whose gold intents are checked (default: development split)"
    )
    ap.add_argument("--no-suite", action="store_true", help="skip the suite check")
    ap.add_argument("--no-synthetic", action="store_true", help="skip the generated suite's gold intents")
    ap.add_argument(
        "--compare", default=None, help="another _query.py to evaluate on the same data (reported as baseline)"
    )
    ap.add_argument("--errors", action="store_true", help="print the misread queries")
    ap.add_argument("--json", default=None, help="write every figure to this file")
    ap.add_argument("--write-docs", action="store_true", help="regenerate the rules table of docs/intents.md and exit")
    args = ap.parse_args(argv)
    if args.write_docs:
        write_docs()
        return 0

    splits = [s.strip() for s in args.splits.split(",") if s.strip()]
    for s in splits:
        if s not in SPLITS:
            ap.error(f"--splits: unknown split {s!r}; expected {', '.join(SPLITS)}")
    rows = load_queries(args.queries)
    want = expected_split(rows)
    bad = [r["query"] for r, w in zip(rows, want) if r["split"] != w]
    if bad:
        raise IntentSetError(
            f"{args.queries}: split: {len(bad)} rows differ from the deterministic split, e.g. {bad[0]!r}"
        )
    suite = None if args.no_suite else args.suite
    result: dict[str, Any] = {
        "queries": str(args.queries),
        "n_queries": {s: sum(r["split"] == s for r in rows) for s in SPLITS},
        "rules": measure(infer_intent, rows, splits, suite, not args.no_synthetic),
    }
    if args.compare:
        result["baseline"] = {
            "path": args.compare,
            **measure(load_rules_module(args.compare).infer_intent, rows, splits, suite, not args.no_synthetic),
        }
    for which in ("baseline", "rules"):
        if which not in result:
            continue
        r = result[which]
        print(f"[{which}]")
        for sp, e in r["intent_set"].items():
            print(_line(f"intent set: {sp}", e))
        if "suite" in r:
            print(_line("suite gold intents", r["suite"]))
        if "synthetic" in r:
            print(_line("synthetic gold intents", r["synthetic"]))
        if args.errors:
            for part, e in [*r["intent_set"].items(), ("suite", r.get("suite")), ("synthetic", r.get("synthetic"))]:
                for err in (e or {}).get("errors", []):
                    print(f"  {part}: {err['gold']:>16} → {err['inferred']:<16} [{err['rule']}] {err['query']}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
