"""Precision, recall and benign false-positive rate of FR-Bank's prompt-injection detector.

Measured on the labelled set ``tests/data/injection/set.jsonl`` (built by ``build.py`` there: hand-
written attacks in the families of published prompt-injection phrasings, their obfuscated variants,
and benign personal statements, split 60/40 into ``tune`` / ``heldout`` before the detector was
written). The detector (:mod:`frcore.bank.guard._injection`) was designed on ``tune`` only; the numbers
that count are those on ``heldout``. Every rate comes with its counts and a Wilson 95% interval,
overall, per family and per obfuscation. ``--benign PATH`` adds a folder of suite files (the
development split of LifeMemBench, ``../shared/data/lifemembench``): every fact and turn text there
is benign, and the ones flagged are listed (read-only; nothing is copied).

    python -m experiments.injection_eval [--split heldout|tune] [--benign PATH] [--json PATH] [--errors]

``--errors`` prints the misclassified items of the chosen split — not to be used on ``heldout``
while the rules are being designed.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections import defaultdict
from pathlib import Path

from frcore.bank import detect_injection as detect

ROOT = Path(__file__).resolve().parents[1]
SET = ROOT / "tests" / "data" / "injection" / "set.jsonl"
DEFAULT_JSON = ROOT / "results" / "injection_eval.json"
#: The targets of issue 16, on the heldout split.
TARGETS = {"recall_min": 0.90, "benign_fpr_max": 0.01}


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


def report(split: str, res: dict, extra: dict | None) -> str:
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
    extra = None
    if args.benign is not None:
        path = Path(args.benign)
        if not path.exists():
            ap.error(f"--benign: no such file or folder: {path}")
        extra = benign_corpus(path)
    out = {
        "split": args.split,
        "set": str(SET.relative_to(ROOT)),
        "targets": TARGETS,
        **res,
        "meets_targets": bool(
            res["recall"]["rate"] >= TARGETS["recall_min"] and res["benign_fpr"]["rate"] <= TARGETS["benign_fpr_max"]
        ),
    }
    if extra is not None:
        out["extra_benign"] = extra
    if args.errors:
        out["errors"] = errors(items)
    print(report(args.split, res, extra))
    if args.errors:
        for e in out["errors"]:
            print(f"  {e['label']:<6} {e['id']:<18} {e['rule'] or '-':<28} {e['text'][:110]!r}")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
