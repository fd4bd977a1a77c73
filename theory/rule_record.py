"""When each rule was written: the record of the commit that introduced every claim's current
rule text (``theory/rule_record.json``, written from ``git log`` by ``tools/rule_record.py``
and shipped with the package, so an installed copy without git still knows it).

A record entry is keyed by claim id (theory claims and the ledger's own rows) and holds the
text's SHA-256, the introducing commit and its date, the first commit in which the claim had a
rule, and every earlier text (``earlier``, newest first). A claim with earlier texts had a rule,
and so a verdict, before its current rule was written: its rule was revised after a result.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from .verdict import Rule

RECORD_PATH = Path(__file__).with_name("rule_record.json")


def text_hash(text: str) -> str:
    """SHA-256 (hex) of a rule's text in UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@cache
def load() -> dict[str, dict]:
    """Claim id → record entry (empty when the file is absent)."""
    if not RECORD_PATH.is_file():
        return {}
    return json.loads(RECORD_PATH.read_text(encoding="utf-8"))["claims"]


def written(cid: str, text: str) -> dict:
    """What the record says of a claim's rule: ``{"commit", "date", "revised", "earlier"}`` when
    the record holds this very text; ``{"commit": None, ...}`` with ``unrecorded`` when it does not
    (a rule edited without regenerating the record)."""
    e = load().get(cid)
    if e is None or e["sha256"] != text_hash(text):
        return {
            "commit": None,
            "date": None,
            "revised": False,
            "earlier": [],
            "unrecorded": "no entry in theory/rule_record.json for this rule's text",
        }
    return {
        "commit": e["commit"],
        "date": e["date"],
        "first_rule_commit": e["first_rule_commit"],
        "revised": bool(e["earlier"]),
        "earlier": e["earlier"],
    }


def provenance(cid: str, rule: Rule, earlier: Sequence[Rule], witness: Mapping[str, Any] | None) -> dict:
    """A claim's rule history for its record: ``rule_commit`` and ``rule_date`` (the commit that
    wrote the current text; None when the record lacks it), ``rule_revised`` (an earlier rule
    existed), and ``revisions``: each earlier text (newest first) with its commit and the verdict
    its executable rule (from ``earlier``, matched by text) gives on the same ``witness`` (None
    when the check gave no witness, or no earlier rule has that text)."""
    w = written(cid, rule.text)
    by_text = {r.text: r for r in earlier}
    revs = []
    for e in w["earlier"]:
        old = by_text.get(e["text"])
        rec = {"rule": e["text"], "commit": e["commit"], "date": e["date"], "verdict": None, "reason": None}
        if old is None:
            rec["reason"] = "no executable rule with this text in the revisions table"
        elif witness is None:
            rec["reason"] = "no verdict: the check did not pass"
        else:
            try:
                v = old.decide(witness)
                rec.update(verdict=v.verdict, reason=v.reason)
            except Exception as ex:  # an old rule may need what today's witness lacks
                rec["reason"] = f"the earlier rule cannot read this witness ({type(ex).__name__}: {ex})"
        revs.append(rec)
    out = {"rule_commit": w["commit"], "rule_date": w["date"], "rule_revised": w["revised"], "revisions": revs}
    if "unrecorded" in w:
        out["rule_unrecorded"] = w["unrecorded"]
    return out
