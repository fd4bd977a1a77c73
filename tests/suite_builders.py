"""Builders of LifecycleBench suite items for hand-made test suites (docs/formats.md, a suite's
``facts[]``): every key the suite format requires, with neutral defaults."""

from __future__ import annotations

from collections.abc import Mapping


def suite_fact(fid: str, text: str, categories: str | Mapping[str, float], session: int, said_at: str, **kw) -> dict:
    """A suite fact: one category (a name) or soft weights, a stable role, no slot, event time or
    link; ``kw`` overrides any key."""
    f = {
        "id": fid,
        "text": text,
        "categories": {categories: 1.0} if isinstance(categories, str) else dict(categories),
        "slot": None,
        "session": session,
        "said_at": said_at,
        "event_time": None,
        "confidence": 1.0,
        "numeric": False,
        "role": "stable",
        "links": {},
        "source": "test",
    }
    f.update(kw)
    return f
