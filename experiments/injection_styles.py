"""Recall and false positives of FR-Bank's prompt-injection detector on the style sets.

``tests/data/injection/styles_{dev,heldout}_{attacks,benign}.tsv``: attacks in styles the labelled
set ``set.jsonl`` does not hold — instructions in the third person to whoever reads, summarises or
processes the memory, letters separated by emoji, symbols or punctuation, text reversed (plainly or
behind a bidirectional override), hex and base32 encodings, and a few others — and benign texts that
look risky (security tutorials, palindromes, colour codes, commit hashes, base32-looking ids,
quoted instructions, emoji chatter). ``dev`` is the set the readings were developed on;
``heldout`` was written before them and never tuned on. Each rate comes with its counts and a
Wilson 95% interval, overall and per style.

    python -m experiments.injection_styles [--set dev|heldout] [--guard PATH] [--errors]

``--guard PATH`` measures another copy of the ``guard`` package (see
``experiments/injection_records.py``); ``--errors`` lists the misclassified texts (on ``dev``).
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

from experiments.injection_eval import rate
from experiments.injection_records import load_guard

SET_DIR = Path(__file__).resolve().parents[1] / "tests" / "data" / "injection"


def read_tsv(path: Path) -> list[tuple[str, str]]:
    """(style, text) of each line of a style file (``#`` lines are comments; ``\\n`` is a newline)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            style, text = line.split("\t")[:2]
            out.append((style, text.replace("\\n", "\n")))
    return out


def load(name: str) -> list[tuple[str, str, str]]:
    """(label, style, text) of the style set ``name`` (``dev`` or ``heldout``)."""
    return [
        (label, style, text)
        for label in ("attack", "benign")
        for style, text in read_tsv(
            SET_DIR / f"styles_{name}_{label}s.tsv" if label == "attack" else SET_DIR / f"styles_{name}_benign.tsv"
        )
    ]


def measure(items: list[tuple[str, str, str]], detect) -> dict:
    by: defaultdict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    errors = []
    for label, style, text in items:
        flagged = detect(text) is not None
        cell = by[(label, style)]
        cell[0] += flagged
        cell[1] += 1
        if flagged != (label == "attack"):
            errors.append((label, style, text))
    att = [by[k] for k in by if k[0] == "attack"]
    ben = [by[k] for k in by if k[0] == "benign"]
    return {
        "recall": rate(sum(c[0] for c in att), sum(c[1] for c in att)),
        "benign_fpr": rate(sum(c[0] for c in ben), sum(c[1] for c in ben)),
        "per_style": {f"{label}/{style}": f"{k}/{n}" for (label, style), (k, n) in sorted(by.items())},
        "errors": errors,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--set", default="dev", choices=("dev", "heldout"))
    p.add_argument("--guard")
    p.add_argument("--errors", action="store_true")
    args = p.parse_args(argv)
    guard = load_guard(args.guard)
    res = measure(load(args.set), guard.detect)
    r, f = res["recall"], res["benign_fpr"]

    def fmt(x: dict) -> str:
        lo, hi = x["wilson95"]
        return f"{x['k']}/{x['n']} = {100 * x['rate']:.1f}% (95% CI {100 * lo:.1f}–{100 * hi:.1f})"

    print(f"{args.set}: recall {fmt(r)}, false positives {fmt(f)}")
    for key, v in res["per_style"].items():
        print(f"  {key}: {v}")
    if args.errors:
        for label, style, text in res["errors"]:
            print(f"MISS {label}/{style}: {text!r}" if label == "attack" else f"FP {label}/{style}: {text!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
