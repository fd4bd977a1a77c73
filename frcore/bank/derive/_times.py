"""Time expressions ahead of a turn, resolved against its ``said_at`` (docs/derive.md, "Event times").

:func:`event_time` returns the event time of the first expression *ahead* in a statement: its
day at :data:`EVENT_HOUR`:00 UTC, at most :data:`MAX_AHEAD_DAYS` after the turn. Dates are naive UTC.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re

from ._text import MONTH_ABBREVIATIONS, MONTHS, NUMBER_WORDS, WEEKDAYS

#: The hour (UTC) of an event time resolved from a day.
EVENT_HOUR = 12
#: An expression further ahead than this many days is not taken.
MAX_AHEAD_DAYS = 366
#: Words that make a bare date or "on <weekday>" an event ahead (docs/derive.md).
FUTURE_MARKERS = re.compile(
    r"\b(will|going to|gonna|plan to|planning|scheduled|booked|due|upcoming|coming up|appointment|"
    r"deadline|flight|reservation|trip|meeting|have to|need to)\b|'ll\b",
    re.I,
)

_WD = "|".join(WEEKDAYS)
_MONTH_NAMES = {m: i + 1 for i, m in enumerate(MONTHS)} | MONTH_ABBREVIATIONS
_MON = "|".join(sorted(_MONTH_NAMES, key=len, reverse=True))
_NUM = r"\d+|a couple of|a few|an|a|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("tomorrow", re.compile(r"\btomorrow\b", re.I)),
    ("today", re.compile(r"\b(tonight|this evening|later today)\b", re.I)),
    ("weekday", re.compile(rf"\b(next|this coming|this)\s+({_WD})\b", re.I)),
    ("on-weekday", re.compile(rf"\bon\s+({_WD})\b(?!s)", re.I)),
    ("next-unit", re.compile(r"\b(next|this)\s+(week|weekend|month|year)\b", re.I)),
    ("in-n", re.compile(rf"\bin\s+({_NUM})\s+(days?|weeks?|months?)\b", re.I)),
    ("iso", re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")),
    ("month-day", re.compile(rf"\b({_MON})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}}))?", re.I)),
    (
        "day-month",
        re.compile(rf"\b(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MON})\b\.?(?:,?\s+(\d{{4}}))?", re.I),
    ),
)
#: Kinds that count only in a sentence with a future marker.
_NEEDS_MARKER = frozenset({"on-weekday", "iso", "month-day", "day-month"})


def _count(text: str) -> int | None:
    t = text.lower()
    if t.isdigit():
        return int(t)
    if t in ("a", "an"):
        return 1
    if t == "a couple of":
        return 2
    if t == "a few":
        return 3
    v = NUMBER_WORDS.get(t)
    return int(float(v)) if v is not None and float(v).is_integer() else None


def _next_weekday(day: _dt.date, weekday: int) -> _dt.date:
    """The first ``weekday`` (0 = Monday) strictly after ``day``."""
    return day + _dt.timedelta(days=(weekday - day.weekday() - 1) % 7 + 1)


def _add_months(day: _dt.date, n: int) -> _dt.date:
    m = day.month - 1 + n
    y, m = day.year + m // 12, m % 12 + 1
    return _dt.date(y, m, min(day.day, calendar.monthrange(y, m)[1]))


def _date(y: int, m: int, d: int) -> _dt.date | None:
    try:
        return _dt.date(y, m, d)
    except ValueError:
        return None


def _resolve(kind: str, m: re.Match[str], day: _dt.date) -> _dt.date | None:
    g = [x.lower() if isinstance(x, str) else x for x in m.groups()]
    if kind == "tomorrow":
        return day + _dt.timedelta(days=1)
    if kind == "today":
        return day
    if kind == "weekday":
        return _next_weekday(day, WEEKDAYS.index(g[1]))
    if kind == "on-weekday":
        return _next_weekday(day, WEEKDAYS.index(g[0]))
    if kind == "next-unit":
        unit = g[1]
        if unit == "week":
            return _next_weekday(day, 0) if g[0] == "next" else None
        if unit == "weekend":
            return _next_weekday(day, 5)
        if unit == "month":
            return _add_months(day.replace(day=1), 1) if g[0] == "next" else None
        return _dt.date(day.year + 1, 1, 1) if g[0] == "next" else None
    if kind == "in-n":
        n = _count(g[0])
        if n is None:
            return None
        unit = g[1].rstrip("s")
        return (
            day + _dt.timedelta(days=n)
            if unit == "day"
            else day + _dt.timedelta(weeks=n)
            if unit == "week"
            else (_add_months(day, n))
        )
    if kind == "iso":
        return _date(int(g[0]), int(g[1]), int(g[2]))
    month_name, d, y = (g[0], g[1], g[2]) if kind == "month-day" else (g[1], g[0], g[2])
    month = _MONTH_NAMES[month_name.rstrip(".")]
    if y is not None:
        return _date(int(y), month, int(d))
    got = _date(day.year, month, int(d))
    if got is not None and got < day:
        got = _date(day.year + 1, month, int(d))
    return got


def time_expressions(sentence: str, said_at: _dt.datetime) -> list[tuple[int, str, str, _dt.date]]:
    """Every expression of the sentence that resolves ahead of ``said_at``: (position, kind,
    the words, the day), in text order."""
    day = said_at.date()
    marked = FUTURE_MARKERS.search(sentence) is not None
    found = []
    for kind, pat in _PATTERNS:
        for m in pat.finditer(sentence):
            if kind in _NEEDS_MARKER and not marked:
                continue
            if kind == "month-day" and m.group(1).lower() == "may" and not m.group(1)[0].isupper():
                continue
            got = _resolve(kind, m, day)
            if got is None:
                continue
            ahead = got > day or (kind == "today" and got == day)
            if ahead and (got - day).days <= MAX_AHEAD_DAYS:
                found.append((m.start(), kind, m.group(0), got))
    return sorted(found, key=lambda x: (x[0], x[1]))


def event_time(sentence: str, said_at: _dt.datetime) -> tuple[_dt.datetime, str, str] | None:
    """(event time, kind, words) of the earliest expression ahead in the sentence, or None."""
    found = time_expressions(sentence, said_at)
    if not found:
        return None
    _, kind, text, day = found[0]
    return _dt.datetime(day.year, day.month, day.day, EVENT_HOUR), kind, text
