"""A user's value as an error message shows it: the one rule (no imports beyond the standard library).

Every message that echoes a value it was given (a fact's id, a bad time, an unknown category, a
parameter value, a command-line argument) shows it through :func:`shown`: its ``repr`` when
short, else its first :data:`SHOWN_CHARS` characters with an ellipsis and its length, so an
error line stays one short line whatever was sent (a 2 MB value is not echoed whole)::

    >>> shown("a" * 2_000_000)
    "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…' (2,000,000 characters)"
    >>> shown("Paris")
    "'Paris'"
"""

from __future__ import annotations

import reprlib
from typing import Any

#: the most characters of a value an error message shows (then ``…`` and the value's length)
SHOWN_CHARS = 80

_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxdict, _REPR.maxlist, _REPR.maxtuple, _REPR.maxset = 2, 4, 6, 6, 6
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = SHOWN_CHARS


def _escaped(c: str, quote: str) -> str:
    if c == quote or c == "\\":
        return "\\" + c
    return repr(c)[1:-1] if not c.isprintable() else c


def clipped(text: str, limit: int) -> str:
    """``text`` itself when at most ``limit`` characters, else its first ``limit`` characters, an
    ellipsis and its length — ``aaaa… (2,000,000 characters)`` (a message, not quoted as a value)."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def shown(value: Any, limit: int = SHOWN_CHARS) -> str:
    """``value`` for an error message: ``repr(value)`` when that is at most about ``limit``
    characters; a longer string as its first characters (escaped as ``repr`` escapes them, at
    most ``limit`` characters shown), an ellipsis and its length — ``'aaaa…' (2,000,000
    characters)``; bytes alike (``b'…' (N bytes)``); an integer of more than 64 bits by its
    number of digits; any other value as a bounded ``repr`` (:mod:`reprlib`), with its length
    when it has one. Never more than about ``2 * limit + 40`` characters, and never slow (a
    huge value is not converted whole)."""
    if isinstance(value, str):
        if len(value) <= limit:
            text = repr(value)
            if len(text) <= 2 * limit + 2:
                return text
        quote = "'" if "'" not in value[:limit] or '"' in value[:limit] else '"'
        body, n = "", 0
        for c in value:
            piece = _escaped(c, quote)
            if len(body) + len(piece) > limit:
                break
            body += piece
            n += 1
        if n == len(value):
            return f"{quote}{body}{quote}"
        return f"{quote}{body}…{quote} ({len(value):,} characters)"
    if isinstance(value, (bytes, bytearray)):
        if len(value) <= limit:
            return repr(value)
        return f"{repr(bytes(value[:limit]))[:-1]}…{repr(bytes(value[:limit]))[-1]} ({len(value):,} bytes)"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        digits = f"{len(str(abs(value))):,}" if value.bit_length() < 10_000 else "over 3,000"
        return f"an integer of {digits} digits"
    try:
        text = _REPR.repr(value)
    except Exception:  # a value whose repr fails: its type
        return f"a {type(value).__name__}"
    if len(text) > 2 * limit:
        text = text[:limit] + "…"
    try:
        size = len(value) if isinstance(value, (list, tuple, dict, set, frozenset)) else None
    except Exception:
        size = None
    if size is not None and size > _REPR.maxlist:
        text += f" ({size:,} items)"
    return text
