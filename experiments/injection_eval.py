"""Precision, recall and benign false-positive rate of FR-Bank's prompt-injection detector.

Measured on the labelled set ``tests/data/injection/set.jsonl`` (built by ``build.py`` there: hand-
written attacks in the families of published prompt-injection phrasings, their obfuscated variants,
and benign personal statements, split 60/40 into ``tune`` / ``heldout`` before the detector was
written). The detector (:mod:`frcore.bank.guard._injection`) was designed on ``tune`` only; the numbers
that count are those on ``heldout``. Every rate comes with its counts and a Wilson 95% interval,
overall, per family and per obfuscation. ``--benign PATH`` adds a folder of suite files (the
development split of LifeMemBench, ``../shared/data/lifemembench``): every fact and turn text there
is benign, and the ones flagged are listed (read-only; nothing is copied). The detector's cost per
fact is timed on the first 5,000 facts ``fr bank bench`` ingests and, with ``--benign``, on every
fact and turn there: each checked as the store checks a fact (its text, id, slot and speaker:
:func:`frcore.bank.records.injection_finding`), with empty caches, best of 3.

The split's unobfuscated texts are also measured re-encoded (:data:`ENCODINGS`): as a slot or an id
would write them (``snake_case``, ``kebab-case``, ``camelCase``) and hidden in ROT13 (with no
mention of it), percent-encoding, HTML character references and base64: recall on the attacks and
false positives on the benign texts, per encoding.

    python -m experiments.injection_eval [--split heldout|tune] [--benign PATH] [--json PATH] [--errors]

``--errors`` prints the misclassified items of the chosen split — not to be used on ``heldout``
while the rules are being designed.
"""

from __future__ import annotations

import argparse
import base64
import codecs
import json
import math
import re
import time
import urllib.parse
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from frcore.bank import detect_injection as detect
from frcore.bank.guard import clear_caches
from frcore.bank.records import FactRecord, injection_finding, parse_fact

ROOT = Path(__file__).resolve().parents[1]
SET = ROOT / "tests" / "data" / "injection" / "set.jsonl"
DEFAULT_JSON = ROOT / "results" / "injection_eval.json"
#: The targets of issue 16, on the heldout split.
TARGETS = {"recall_min": 0.90, "benign_fpr_max": 0.01}


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text)


def _camel(text: str) -> str:
    words = _words(text)
    return "".join(w.lower() if k == 0 else w[:1].upper() + w[1:].lower() for k, w in enumerate(words))


#: How a text is re-encoded for the encoded measurement: as a slot or an id would write it, and
#: hidden in an encoding with no word about it.
ENCODINGS: dict[str, Callable[[str], str]] = {
    "snake_case": lambda t: "_".join(w.lower() for w in _words(t)),
    "kebab-case": lambda t: "-".join(w.lower() for w in _words(t)),
    "camelCase": _camel,
    "rot13": lambda t: codecs.encode(t, "rot13"),
    "percent": lambda t: urllib.parse.quote(t),
    "html": lambda t: "".join(f"&#{ord(c)};" for c in t),
    "base64": lambda t: base64.b64encode(t.encode()).decode(),
}


def encoded(items: list[dict]) -> dict:
    """Recall on the attacks and false positives on the benign texts among ``items``' unobfuscated
    texts, each re-encoded by every :data:`ENCODINGS` entry (an attack's plain verdict beside it)."""
    plain = [i for i in items if i["obfuscation"] == "none"]
    attacks = [i["text"] for i in plain if i["label"] == "attack"]
    benign = [i["text"] for i in plain if i["label"] == "benign"]
    out = {"plain_recall": rate(sum(detect(t) is not None for t in attacks), len(attacks))}
    for name, encode in ENCODINGS.items():
        out[name] = {
            "recall": rate(sum(detect(encode(t)) is not None for t in attacks), len(attacks)),
            "benign_fpr": rate(sum(detect(encode(t)) is not None for t in benign), len(benign)),
        }
    return out


def fact_records(path: Path) -> list[FactRecord]:
    """Every fact and turn of the suite files under ``path`` as a fact record (text, id, slot and
    speaker as given; the other fields a placeholder: the detector reads only those four)."""
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    out = []
    for f in files:
        suite = json.loads(f.read_text(encoding="utf-8"))
        for kind in ("facts", "turns"):
            for item in suite.get(kind, []):
                out.append(
                    FactRecord(
                        id=item["id"],
                        text=item["text"],
                        categories={"OTHER": 1.0},
                        said_at=datetime(2025, 1, 1),
                        slot=item.get("slot"),
                        speaker=item.get("speaker"),
                    )
                )
    return out


def synthetic_records(n: int = 5000) -> list[FactRecord]:
    """The first ``n`` facts ``fr bank bench`` ingests (:func:`frcore.bank.storage.synthetic_facts`,
    seed 0), parsed."""
    from frcore.bank.storage import synthetic_facts

    return [parse_fact(f) for f in synthetic_facts(n, seed=0)]


def cost_per_fact(facts: list[FactRecord], repeats: int = 3) -> dict:
    """The detector's time per fact as the store checks a fact (:func:`frcore.bank.records.injection_finding`:
    its text, id, slot and speaker), with the detector's caches emptied before each pass; the best of
    ``repeats`` passes, in microseconds; and how many facts had a field flagged."""
    flagged = sum(injection_finding(rec) is not None for rec in facts)
    best = math.inf
    for _ in range(repeats):
        clear_caches()
        t0 = time.perf_counter()
        for rec in facts:
            injection_finding(rec)
        best = min(best, time.perf_counter() - t0)
    return {"facts": len(facts), "flagged": flagged, "microseconds_per_fact": 1e6 * best / len(facts)}


def wilson(k: int, n: int, z: float = 1.959964) -> list[float] | None:
    """Wilson score interval for k successes in n trials (None when n = 0)."""
    if n == 0:
        return None
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [max(0.0, centre - half), min(1.0, centre + half)]


def rate(k: int, n: int) -> dict:
    return {"k": k, "n": n, "rate": (k / n) if n else None, "wilson95": wilson(k, n)}


def load_set(path: Path = SET) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def evaluate(items: list[dict]) -> dict:
    """Confusion counts and rates over labelled items (``label`` attack / benign), overall, per
    ``family`` and per ``obfuscation``; plus which detector family fired on the attacks caught."""
    t0 = time.perf_counter()
    verdicts = [detect(i["text"]) for i in items]
    seconds = time.perf_counter() - t0
    attacks = [(i, d) for i, d in zip(items, verdicts) if i["label"] == "attack"]
    benign = [(i, d) for i, d in zip(items, verdicts) if i["label"] == "benign"]
    tp = sum(d is not None for _, d in attacks)
    fp = sum(d is not None for _, d in benign)

    def grouped(pairs, key):
        groups: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for i, d in pairs:
            groups[i[key]][0] += d is not None
            groups[i[key]][1] += 1
        return {g: rate(k, n) for g, (k, n) in sorted(groups.items())}

    fired: dict[str, int] = defaultdict(int)
    for _, d in attacks:
        if d is not None:
            fired[d.family] += 1
    return {
        "n": len(items),
        "attacks": len(attacks),
        "benign": len(benign),
        "tp": tp,
        "fn": len(attacks) - tp,
        "fp": fp,
        "tn": len(benign) - fp,
        "precision": rate(tp, tp + fp),
        "recall": rate(tp, len(attacks)),
        "benign_fpr": rate(fp, len(benign)),
        "recall_by_family": grouped(attacks, "family"),
        "recall_by_obfuscation": grouped(attacks, "obfuscation"),
        "benign_fpr_by_family": grouped(benign, "family"),
        "benign_fpr_by_obfuscation": grouped(benign, "obfuscation"),
        "detector_family_on_attacks_caught": dict(sorted(fired.items())),
        "microseconds_per_text": 1e6 * seconds / max(1, len(items)),
    }


def errors(items: list[dict]) -> list[dict]:
    """The misclassified items, with the rule that fired (for a false positive)."""
    out = []
    for i in items:
        d = detect(i["text"])
        if (d is not None) != (i["label"] == "attack"):
            out.append(
                {
                    "id": i["id"],
                    "label": i["label"],
                    "family": i["family"],
                    "obfuscation": i["obfuscation"],
                    "rule": None if d is None else d.label,
                    "match": None if d is None else d.match,
                    "text": i["text"],
                }
            )
    return out


def benign_corpus(path: Path) -> dict:
    """False positives on every fact and turn text of the suite files under ``path``."""
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    counts = {"facts": [0, 0], "turns": [0, 0]}
    flagged = []
    for f in files:
        suite = json.loads(f.read_text(encoding="utf-8"))
        for kind in ("facts", "turns"):
            for item in suite.get(kind, []):
                d = detect(item["text"])
                counts[kind][1] += 1
                if d is not None:
                    counts[kind][0] += 1
                    flagged.append(
                        {"id": item["id"], "kind": kind, "rule": d.label, "match": d.match, "text": item["text"]}
                    )
    k = counts["facts"][0] + counts["turns"][0]
    n = counts["facts"][1] + counts["turns"][1]
    return {
        "path": str(path),
        "files": len(files),
        "fpr": rate(k, n),
        "fpr_facts": rate(*counts["facts"]),
        "fpr_turns": rate(*counts["turns"]),
        "flagged": flagged,
    }


def _pct(r: dict) -> str:
    if r["n"] == 0:
        return "n/a"
    lo, hi = r["wilson95"]
    digits = 2 if hi < 0.01 else 1
    return f"{100 * r['rate']:.{digits}f}% ({r['k']}/{r['n']}; 95% CI {100 * lo:.{digits}f}–{100 * hi:.{digits}f}%)"


def report(
    split: str, res: dict, extra: dict | None, enc: dict | None = None, cost: dict[str, dict] | None = None
) -> str:
    lines = [
        f"prompt-injection detector on the {split} split of {SET.relative_to(ROOT)} "
        f"({res['attacks']} attacks, {res['benign']} benign)",
        f"  precision   {_pct(res['precision'])}",
        f"  recall      {_pct(res['recall'])}   target ≥ {100 * TARGETS['recall_min']:.0f}%",
        f"  benign FPR  {_pct(res['benign_fpr'])}   target ≤ {100 * TARGETS['benign_fpr_max']:.0f}%",
        f"  {res['microseconds_per_text']:.0f} µs per text",
    ]
    for title, key in (
        ("recall by attack family", "recall_by_family"),
        ("recall by obfuscation", "recall_by_obfuscation"),
        ("benign FPR by kind", "benign_fpr_by_family"),
        ("benign FPR by obfuscation", "benign_fpr_by_obfuscation"),
    ):
        lines.append(f"  {title}:")
        lines += [f"    {g:<14} {_pct(r)}" for g, r in res[key].items()]
    if extra is not None:
        lines.append(
            f"extra benign corpus {extra['path']} ({extra['files']} files): FPR {_pct(extra['fpr'])}; "
            f"facts {_pct(extra['fpr_facts'])}; turns {_pct(extra['fpr_turns'])}"
        )
        lines += [f"    flagged {f['id']} [{f['rule']}] {f['text'][:100]!r}" for f in extra["flagged"]]
    if enc is not None:
        lines.append(f"  re-encoded unobfuscated texts (plain recall {_pct(enc['plain_recall'])}):")
        lines += [
            f"    {name:<11} recall {_pct(r['recall'])}; benign FPR {_pct(r['benign_fpr'])}"
            for name, r in enc.items()
            if name != "plain_recall"
        ]
    for name, c in (cost or {}).items():
        lines.append(
            f"cost per fact, {name}: {c['microseconds_per_fact']:.0f} µs ({c['facts']} facts, "
            f"{c['flagged']} flagged; empty caches, best of 3)"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=("heldout", "tune"), default="heldout")
    ap.add_argument("--benign", default=None, help="a suite file or folder whose fact and turn texts are all benign")
    ap.add_argument(
        "--json",
        default=str(DEFAULT_JSON),
        help=f"where to write the results (default {DEFAULT_JSON.relative_to(ROOT)})",
    )
    ap.add_argument("--errors", action="store_true", help="print the misclassified items of the split")
    args = ap.parse_args(argv)
    items = [i for i in load_set() if i["split"] == args.split]
    res = evaluate(items)
    enc = encoded(items)
    extra = None
    cost = {"fr bank bench's synthetic facts": cost_per_fact(synthetic_records())}
    if args.benign is not None:
        path = Path(args.benign)
        if not path.exists():
            ap.error(f"--benign: no such file or folder: {path}")
        extra = benign_corpus(path)
        cost[f"facts and turns of {path.name}"] = cost_per_fact(fact_records(path))
    out = {
        "split": args.split,
        "set": str(SET.relative_to(ROOT)),
        "targets": TARGETS,
        **res,
        "meets_targets": bool(
            res["recall"]["rate"] >= TARGETS["recall_min"] and res["benign_fpr"]["rate"] <= TARGETS["benign_fpr_max"]
        ),
    }
    out["encoded"] = enc
    out["cost"] = cost
    if extra is not None:
        out["extra_benign"] = extra
    if args.errors:
        out["errors"] = errors(items)
    print(report(args.split, res, extra, enc, cost))
    if args.errors:
        for e in out["errors"]:
            print(f"  {e['label']:<6} {e['id']:<18} {e['rule'] or '-':<28} {e['text'][:110]!r}")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
