"""The bank's owner in its texts: their name, in any part, read as "the user" before embedding and
BM25 (the stored text is unchanged)."""

from __future__ import annotations

import re


def owner_pattern(owner: str | None):
    """Regex matching the bank owner's full name or any part of it (with a possessive).

    A memory bank belongs to one user; their own name carries no information for retrieval
    inside it but dominates sentence embeddings ("Where does Ana live?" vs "Moved to a studio").
    Texts are embedded and BM25-indexed with the owner's name replaced by "the user" (our
    choice, documented; the stored text is unchanged).
    """
    if not owner or not owner.strip():
        return None
    parts = [owner.strip()] + [p for p in re.split(r"\s+", owner.strip()) if len(p) > 1]
    alts = "|".join(re.escape(p) for p in sorted(set(parts), key=len, reverse=True))
    return re.compile(rf"\b(?:{alts})(?:'s|’s)?\b")


def neutralize(text: str, pattern) -> str:
    """``text`` with every match of ``pattern`` (:func:`owner_pattern`) replaced by "the user" (or "the
    user's" for a possessive); ``pattern`` ``None``: unchanged."""
    if pattern is None:
        return text
    return pattern.sub(lambda m: "the user's" if m.group(0).endswith(("'s", "’s")) else "the user", text)
