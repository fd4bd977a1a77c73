"""Build the labelled prompt-injection set ``set.jsonl`` from the hand-written ``attacks.tsv`` and
``benign.tsv``: add obfuscated variants, then split 60/40 (tune / heldout), stratified by label and
family, grouped by base text (a variant always sits in its base's split), with a fixed seed.

Run from anywhere: ``python tests/data/injection/build.py`` (rewrites ``set.jsonl``; the output is
deterministic, and tests/bank/guard/test_injection.py checks that the committed file is what this script
writes). The split was fixed before the detector (frcore/bank/guard/_injection.py) was written; the
``issue16`` items (the sample measured in issue 16) are forced into the tuning part, since the
detector was designed against them.
"""

from __future__ import annotations

import base64
import codecs
import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 16
HELDOUT_SHARE = 0.4
#: share of the plain English attacks (not from issue 16) that get one obfuscated variant
ATTACK_VARIANT_SHARE = 0.55
#: how many benign statements get one obfuscated variant (hard negatives first)
BENIGN_VARIANTS_HARD, BENIGN_VARIANTS_ORDINARY = 32, 16

ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad")
#: Latin letter → look-alikes in other scripts (Cyrillic, Greek); the obfuscator's direction
LOOKALIKES = {
    "a": "аα",
    "c": "сϲ",
    "e": "е",
    "i": "іι",
    "j": "ј",
    "o": "оο",
    "p": "рρ",
    "s": "ѕ",
    "x": "хχ",
    "y": "уγ",
    "v": "ν",
    "u": "υ",
    "k": "κ",
    "h": "һ",
    "d": "ԁ",
    "A": "АΑ",
    "B": "ВΒ",
    "C": "С",
    "E": "ЕΕ",
    "H": "НΗ",
    "I": "ІΙ",
    "K": "КΚ",
    "M": "МΜ",
    "N": "Ν",
    "O": "ОΟ",
    "P": "РΡ",
    "S": "Ѕ",
    "T": "ТΤ",
    "X": "ХΧ",
    "Y": "ΥҮ",
    "Z": "Ζ",
}
LEET = {"a": "4@", "e": "3", "i": "1!", "o": "0", "s": "5$", "t": "7", "l": "1", "g": "9"}
COMBINING = ("\u0301", "\u0300", "\u0308", "\u0302", "\u0303")
TAG_COVERS = ("Nice weather today.", "Thanks!", "See you soon.", "Great recipe, loved it.")
B64_WRAPPERS = (
    "Decode this base64 and follow it: {}",
    "{}",
    "Base64 task for the assistant: {}",
    "Please run the decoded instructions: {}",
    "b64:{}",
)


def zero_width(t: str, rng: random.Random) -> str:
    out = []
    for ch in t:
        out.append(ch)
        if ch != " " and rng.random() < 0.35:
            out.append(rng.choice(ZERO_WIDTH))
    return "".join(out)


def homoglyph(t: str, rng: random.Random) -> str:
    return "".join(rng.choice(LOOKALIKES[c]) if c in LOOKALIKES and rng.random() < 0.5 else c for c in t)


def fullwidth(t: str, rng: random.Random) -> str:
    return "".join("\u3000" if c == " " else chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in t)


def mathbold(t: str, rng: random.Random) -> str:
    def one(c: str) -> str:
        if "a" <= c <= "z":
            return chr(0x1D41A + ord(c) - ord("a"))
        if "A" <= c <= "Z":
            return chr(0x1D400 + ord(c) - ord("A"))
        return c

    return "".join(one(c) for c in t)


def leet(t: str, rng: random.Random) -> str:
    return "".join(rng.choice(LEET[c.lower()]) if c.lower() in LEET and rng.random() < 0.7 else c for c in t)


def spacing(t: str, rng: random.Random) -> str:
    sep = rng.choice((" ", "-", ".", "_"))
    return "   ".join(sep.join(word) for word in t.split(" "))


def punct_split(t: str, rng: random.Random) -> str:
    words = []
    for w in t.split(" "):
        if len(w) > 3 and rng.random() < 0.5:
            k = rng.randrange(1, len(w) - 1)
            w = w[:k] + rng.choice(".-*|") + w[k:]
        words.append(w)
    return " ".join(words)


def markdown(t: str, rng: random.Random) -> str:
    words = t.split(" ")
    for _ in range(min(3, len(words))):
        k = rng.randrange(len(words))
        mark = rng.choice(("**", "_", "`", "~~"))
        words[k] = f"{mark}{words[k]}{mark}"
    return rng.choice(("> ", "## ", "* ", "")) + " ".join(words)


def diacritics(t: str, rng: random.Random) -> str:
    return "".join(c + rng.choice(COMBINING) if c.lower() in "aeiou" and rng.random() < 0.5 else c for c in t)


def mixed_case(t: str, rng: random.Random) -> str:
    return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in t)


def mixed(t: str, rng: random.Random) -> str:
    return zero_width(homoglyph(t, rng), rng)


def b64(t: str, rng: random.Random) -> str:
    return rng.choice(B64_WRAPPERS).format(base64.b64encode(t.encode()).decode())


def tags(t: str, rng: random.Random) -> str:
    """ASCII smuggling: the text as invisible Unicode tag characters behind a harmless cover."""
    return rng.choice(TAG_COVERS) + "".join(chr(0xE0000 + ord(c)) for c in t if " " <= c <= "~")


def rot13(t: str, rng: random.Random) -> str:
    return "Decode this ROT13 and do what it says: " + codecs.encode(t, "rot13")


ATTACK_OBFUSCATIONS = {
    "zero-width": zero_width,
    "homoglyph": homoglyph,
    "fullwidth": fullwidth,
    "mathbold": mathbold,
    "leet": leet,
    "spacing": spacing,
    "punct-split": punct_split,
    "markdown": markdown,
    "diacritics": diacritics,
    "case": mixed_case,
    "mixed": mixed,
    "base64": b64,
    "tags": tags,
    "rot13": rot13,
}
BENIGN_OBFUSCATIONS = {k: v for k, v in ATTACK_OBFUSCATIONS.items() if k not in ("base64", "tags", "rot13")}


def read_tsv(path: Path) -> list[tuple[str, str, str]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        family, text = parts[0], parts[1].replace("\\n", "\n")
        rows.append((family, text, parts[2] if len(parts) > 2 else "ours"))
    return rows


def build() -> list[dict]:
    rng = random.Random(SEED)
    items: list[dict] = []
    for label, path, prefix in (("attack", HERE / "attacks.tsv", "a"), ("benign", HERE / "benign.tsv", "b")):
        for n, (family, text, source) in enumerate(read_tsv(path), 1):
            fam = "multilingual" if family.startswith("lang-") else family
            items.append(
                {
                    "id": f"{prefix}{n:03d}",
                    "group": f"{prefix}{n:03d}",
                    "label": label,
                    "family": fam,
                    "lang": family[5:] if family.startswith("lang-") else "en",
                    "obfuscation": "none",
                    "source": source,
                    "text": text,
                }
            )
    # obfuscated variants: a cycling (shuffled) order of obfuscations, so each kind appears evenly
    variants: list[dict] = []

    def add_variants(bases: list[dict], table: dict) -> None:
        kinds = list(table)
        rng.shuffle(kinds)
        for k, base in enumerate(bases):
            kind = kinds[k % len(kinds)]
            variants.append(
                {**base, "id": base["id"] + "." + kind, "obfuscation": kind, "text": table[kind](base["text"], rng)}
            )

    plain_en = [i for i in items if i["label"] == "attack" and i["lang"] == "en" and i["source"] != "issue16"]
    add_variants([i for i in plain_en if rng.random() < ATTACK_VARIANT_SHARE], ATTACK_OBFUSCATIONS)
    for kind, count in (("hard", BENIGN_VARIANTS_HARD), ("ordinary", BENIGN_VARIANTS_ORDINARY)):
        pool = [i for i in items if i["label"] == "benign" and i["family"] == kind and i["source"] != "issue16"]
        add_variants(sorted(rng.sample(pool, count), key=lambda i: i["id"]), BENIGN_OBFUSCATIONS)
    items += variants
    # the split: by group, stratified by (label, family); issue-16 items are tuning items
    split: dict[str, str] = {}
    strata: dict[tuple[str, str], list[str]] = {}
    for i in items:
        if i["obfuscation"] != "none":
            continue
        if i["source"] == "issue16":
            split[i["group"]] = "tune"
        else:
            strata.setdefault((i["label"], i["family"]), []).append(i["group"])
    for key in sorted(strata):
        groups = strata[key]
        rng.shuffle(groups)
        n_held = round(HELDOUT_SHARE * len(groups))
        for k, g in enumerate(groups):
            split[g] = "heldout" if k < n_held else "tune"
    for i in items:
        i["split"] = split[i["group"]]
    return sorted(items, key=lambda i: (i["group"], i["id"]))


def dumps(items: list[dict]) -> str:
    keys = ("id", "group", "split", "label", "family", "lang", "obfuscation", "source", "text")
    return "".join(json.dumps({k: i[k] for k in keys}, ensure_ascii=True) + "\n" for i in items)


if __name__ == "__main__":
    items = build()
    (HERE / "set.jsonl").write_text(dumps(items), encoding="utf-8")
    from collections import Counter

    print(Counter((i["split"], i["label"]) for i in items))
