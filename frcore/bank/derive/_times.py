"""Time expressions, one table for turns and questions (docs/derive.md, "Event times", "Question times").

:func:`event_time` returns the event time of the first expression *ahead* in a statement: its
day at :data:`EVENT_HOUR`:00 UTC, at most :data:`MAX_AHEAD_DAYS` after the turn.
:func:`question_time` reads a question's own time words against the time it is asked: a window
over when things were said or happened, an order preference, or that it asks for a duration.
Both read the rows of :data:`_ROWS` and resolve them by :func:`_span`: a row's span is the days
it names, and an event time is the first day of a span. Dates are naive UTC. An expression whose
days leave ``datetime.date.min`` .. ``date.max``, or whose count exceeds :data:`MAX_COUNT`,
resolves to nothing (docs/derive.md, "Range"): no input raises.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from ._text import MONTH_ABBREVIATIONS, MONTHS, NUMBER_WORDS, WEEKDAYS

#: The hour (UTC) of an event time resolved from a day.
EVENT_HOUR = 12
#: An expression further ahead than this many days is not taken.
MAX_AHEAD_DAYS = 366
#: The largest count read in "in N days", "N weeks ago", "the last N months": the calendar's
#: length in days (0001-01-01 to 9999-12-31). A larger count, in any unit, names no day of the
#: calendar from any day of it, so it resolves to nothing; the bound keeps the arithmetic off
#: 20-digit numbers. (Turns take events at most MAX_AHEAD_DAYS ahead in any case.)
MAX_COUNT = (_dt.date.max - _dt.date.min).days
#: Words that make a bare date or "on <weekday>" an event ahead (docs/derive.md).
FUTURE_MARKERS = re.compile(
    r"\b(will|going to|gonna|plan to|planning|scheduled|booked|due|upcoming|coming up|appointment|"
    r"deadline|flight|reservation|trip|meeting|have to|need to|rescheduled|postponed|pushed back)\b|'ll\b",
    re.I,
)

_WD = "|".join(WEEKDAYS)
_MONTH_NAMES = {m: i + 1 for i, m in enumerate(MONTHS)} | MONTH_ABBREVIATIONS
_MON = "|".join(sorted(_MONTH_NAMES, key=len, reverse=True))
_NUM = r"\d+|a couple of|a few|an|a|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
_YEAR = r"(?:19|20)\d\d"
_UNIT = r"days?|weeks?|months?|years?"
_SEASON = "summer|spring|winter|fall|autumn"
_PART = r"early|mid|late|the beginning of|the start of|the end of"
#: A date follows (lookahead of "the Sunday before <date>", "two weeks before <date>").
_DATE_AHEAD = rf"(?=\s+(?:the\s+)?(?:{_MON}|\d))"


@dataclass(frozen=True)
class _Row:
    """One time expression: ``kind`` names its resolution in :func:`_span`; ``turn`` rows are read
    in turns too (by :func:`time_expressions`), the others in questions only."""

    kind: str
    pattern: re.Pattern[str]
    turn: bool = False


def _row(kind: str, pattern: str, turn: bool = False) -> _Row:
    return _Row(kind, re.compile(pattern, re.I), turn)


_ROWS: tuple[_Row, ...] = (
    # read in turns and questions (the expressions ahead of docs/derive.md, "Event times")
    _row("tomorrow", r"\btomorrow\b", True),
    _row("today", r"\b(tonight|this evening|later today)\b", True),
    _row("weekday", rf"\b(next|this coming|this)\s+({_WD})\b", True),
    _row("on-weekday", rf"\bon\s+({_WD})\b(?!s)", True),
    _row("next-unit", r"\b(next|this)\s+(week|weekend|month|year)\b", True),
    _row("in-n", rf"\bin\s+({_NUM})\s+(days?|weeks?|months?)\b", True),
    _row("iso", r"\b(\d{4})-(\d{2})-(\d{2})\b", True),
    _row("month-day", rf"\b({_MON})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}}))?", True),
    _row("day-month", rf"\b(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MON})\b\.?(?:,?\s+(\d{{4}}))?", True),
    # read in questions only (docs/derive.md, "Question times")
    _row("yesterday", r"\byesterday\b"),
    _row("same-day", r"\b(today|this morning|this afternoon)\b"),
    _row(
        "last-weekday",
        rf"\b(?:last|this past|the past|previous)\s+({_WD})\b|\bthe\s+({_WD})\s+before\b{_DATE_AHEAD}",
    ),
    _row("next-weekday", rf"\bthe\s+({_WD})\s+after\b{_DATE_AHEAD}"),
    _row(
        "last-unit",
        r"\b(?:last|past|previous|this past)\s+(week|weekend|month|year)\b"
        rf"|\bthe\s+(week|weekend)\s+before\b{_DATE_AHEAD}",
    ),
    _row(
        "within",
        rf"\b(?:in|over|during|within|for)\s+the\s+(?:last|past)\s+(?:({_NUM}|several|few|couple of)\s+)?({_UNIT})\b",
    ),
    _row("ago", rf"\b({_NUM}|several)\s+({_UNIT})\s+(?:ago|back\b|before\b{_DATE_AHEAD})"),
    _row(
        "month",
        rf"\b(?:(last|this)\s+)?(?:({_PART})[\s-]+)?({_MON})\b"
        rf"(?!\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b)(?:,?\s+({_YEAR}))?",
    ),
    _row("year", rf"\b(?:in|during|of|since|by|from|throughout)\s+(?:({_PART})[\s-]+)?({_YEAR})\b"),
    _row(
        "season",
        rf"\b(?:(last|this|next|past)\s+|(?:in|during|over|for)\s+(?:the\s+)?)?({_SEASON})\b"
        rf"(?:\s+(?:of\s+)?({_YEAR}))?",
    ),
)  # fmt: skip
#: Turn rows that count only in a turn sentence with a future marker.
_NEEDS_MARKER = frozenset({"on-weekday", "iso", "month-day", "day-month"})
#: Rows whose span does not depend on the day they are read against once they carry a year.
_DATED = frozenset({"iso", "month-day", "day-month"})


def _count(text: str) -> int | None:
    """The count a number or number word says, or None (also above :data:`MAX_COUNT`)."""
    t = text.lower()
    if t.isdigit():
        digits = t.lstrip("0") or "0"  # its length first: int() refuses strings of over 4300 digits
        return int(digits) if len(digits) <= len(str(MAX_COUNT)) and int(digits) <= MAX_COUNT else None
    if t in ("a", "an"):
        return 1
    if t == "a couple of":
        return 2
    if t == "a few":
        return 3
    v = NUMBER_WORDS.get(t)
    return int(float(v)) if v is not None and float(v).is_integer() else None


#: A vague count's range (docs/derive.md, "Question times"): the counts a speaker may mean.
_VAGUE = {"a couple of": (2, 3), "couple of": (2, 3), "a few": (2, 5), "few": (2, 5), "several": (3, 7)}


_P = ParamSpec("_P")
_T = TypeVar("_T")


def _in_range(resolve: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T | None:
    """``resolve(*args, **kwargs)``, or None when its date arithmetic leaves ``date.min`` ..
    ``date.max`` (``datetime`` raises OverflowError or ValueError "year ... is out of range")."""
    try:
        return resolve(*args, **kwargs)
    except (OverflowError, ValueError):
        return None


def _next_weekday(day: _dt.date, weekday: int) -> _dt.date:
    """The first ``weekday`` (0 = Monday) strictly after ``day``."""
    return day + _dt.timedelta(days=(weekday - day.weekday() - 1) % 7 + 1)


def _last_weekday(day: _dt.date, weekday: int) -> _dt.date:
    """The last ``weekday`` (0 = Monday) strictly before ``day``."""
    return day - _dt.timedelta(days=(day.weekday() - weekday - 1) % 7 + 1)


def _add_months(day: _dt.date, n: int) -> _dt.date:
    m = day.month - 1 + n
    y, m = day.year + m // 12, m % 12 + 1
    return _dt.date(y, m, min(day.day, calendar.monthrange(y, m)[1]))


def _date(y: int, m: int, d: int) -> _dt.date | None:
    try:
        return _dt.date(y, m, d)
    except ValueError:
        return None


def _month_span(y: int, m: int) -> tuple[_dt.date, _dt.date]:
    return _dt.date(y, m, 1), _dt.date(y, m, calendar.monthrange(y, m)[1])


def _part(span: tuple[_dt.date, _dt.date], part: str | None) -> tuple[_dt.date, _dt.date]:
    """Early / mid / late part of a month or a year: the first 40%, the middle 50% or the last 40%
    of its days (overlapping: "mid" and "early" are not sharp)."""
    if not part:
        return span
    a, b = span
    n = (b - a).days + 1
    if part in ("early", "the beginning of", "the start of"):
        return a, a + _dt.timedelta(days=round(n * 0.4) - 1)
    if part == "late" or part == "the end of":
        return b - _dt.timedelta(days=round(n * 0.4) - 1), b
    return a + _dt.timedelta(days=round(n * 0.25)), b - _dt.timedelta(days=round(n * 0.25))


def _season_span(season: str, y: int) -> tuple[_dt.date, _dt.date]:
    """Northern-hemisphere meteorological seasons; winter ``y`` is December ``y - 1`` to February ``y``."""
    if season == "winter":
        return _dt.date(y - 1, 12, 1), _month_span(y, 2)[1]
    first = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9}[season]
    return _dt.date(y, first, 1), _month_span(y, first + 2)[1]


def _ago_span(n: tuple[int, int], unit: str, day: _dt.date) -> tuple[_dt.date, _dt.date]:
    """ "N units ago": from ``day`` - hi·unit - slack to ``day`` - lo·unit + slack (not after ``day``),
    slack = the larger of half a unit and a quarter of the distance (docs/derive.md)."""
    lo, hi = n
    days = {"day": 1, "week": 7, "month": 30, "year": 365}[unit]
    slack = max(days / 2, hi * days / 4, 1)
    start = day - _dt.timedelta(days=round(hi * days + slack))
    end = min(day, day - _dt.timedelta(days=round(lo * days - slack)))
    return start, end


def _span(kind: str, m: re.Match[str], day: _dt.date, ahead: bool) -> tuple[_dt.date, _dt.date] | None:
    """The first and last day an expression names, read on ``day``; ``ahead``: a date without a
    year is the next such day (in a turn, or a question with a future marker), else the last.
    None when it names no day, or a day outside ``date.min`` .. ``date.max`` (docs/derive.md, "Range")."""
    return _in_range(_resolve, kind, m, day, ahead)


def _resolve(kind: str, m: re.Match[str], day: _dt.date, ahead: bool) -> tuple[_dt.date, _dt.date] | None:
    """:func:`_span`, raising OverflowError or ValueError when a day leaves the calendar."""
    g = [x.lower() if isinstance(x, str) else x for x in m.groups()]
    one = None
    if kind == "tomorrow":
        one = day + _dt.timedelta(days=1)
    elif kind in ("today", "same-day"):
        one = day
    elif kind == "yesterday":
        one = day - _dt.timedelta(days=1)
    elif kind == "weekday":
        one = _next_weekday(day, WEEKDAYS.index(g[1]))
    elif kind == "on-weekday":
        one = (_next_weekday if ahead else _last_weekday)(day, WEEKDAYS.index(g[0]))
    elif kind == "last-weekday":
        one = _last_weekday(day, WEEKDAYS.index(g[0] or g[1]))
    elif kind == "next-weekday":
        one = _next_weekday(day, WEEKDAYS.index(g[0]))
    elif kind == "next-unit":
        return _next_unit(g[0], g[1], day, ahead)
    elif kind == "last-unit":
        return _last_unit(g[0] or g[1], day)
    elif kind == "within":
        n = _VAGUE.get(g[0] or "", (0, 0))[1] or _count(g[0] or "1")
        if n is None:
            return None
        unit = g[1].rstrip("s")
        start = _add_months(day, -n * (12 if unit == "year" else 1)) if unit in ("month", "year") else None
        return start or day - _dt.timedelta(days=n * (7 if unit == "week" else 1)), day
    elif kind == "ago":
        c = _count(g[0])
        vague = _VAGUE.get(g[0], (c, c) if c is not None else None)
        return None if vague is None or vague[0] is None else _ago_span(vague, g[1].rstrip("s"), day)
    elif kind == "in-n":
        n = _count(g[0])
        if n is None:
            return None
        unit = g[1].rstrip("s")
        one = (
            day + _dt.timedelta(days=n)
            if unit == "day"
            else day + _dt.timedelta(weeks=n)
            if unit == "week"
            else (_add_months(day, n))
        )
    elif kind == "iso":
        one = _date(int(g[0]), int(g[1]), int(g[2]))
    elif kind in ("month-day", "day-month"):
        month_name, d, y = (g[0], g[1], g[2]) if kind == "month-day" else (g[1], g[0], g[2])
        month = _MONTH_NAMES[month_name.rstrip(".")]
        if y is not None:
            one = _date(int(y), month, int(d))
        else:
            one = _date(day.year, month, int(d))
            if ahead and one is not None and one < day:
                one = _date(day.year + 1, month, int(d))
            elif not ahead and one is not None and one > day:
                one = _date(day.year - 1, month, int(d))
    elif kind == "month":
        month = _MONTH_NAMES[g[2].rstrip(".")]
        y = int(g[3]) if g[3] else day.year - (month > day.month or (g[0] == "last" and month == day.month))
        span = _part(_month_span(y, month), g[1])
        if not ahead and not g[3] and span[0] > day and y > _dt.MINYEAR:
            # a part of this month still to come ("mid-April" asked on April 1): the last one before
            span = _part(_month_span(y - 1, month), g[1])
        return span
    elif kind == "year":
        return _part((_dt.date(int(g[1]), 1, 1), _dt.date(int(g[1]), 12, 31)), g[0])
    elif kind == "season":
        return _season(g[0], g[1], g[2], day)
    return None if one is None else (one, one)


def _next_unit(which: str, unit: str, day: _dt.date, ahead: bool) -> tuple[_dt.date, _dt.date] | None:
    """ "next week / weekend / month / year", and in a question (not ``ahead``) "this week / month /
    year": from its first day to ``day``; "this weekend" read on a weekend: that weekend so far."""
    this = which == "this"
    if unit == "weekend":
        if not ahead and this and day.weekday() >= 5:
            return day - _dt.timedelta(days=day.weekday() - 5), day
        saturday = _next_weekday(day, 5)
        return saturday, saturday + _dt.timedelta(days=1)
    if this:
        if ahead:
            return None
        first = {"week": day - _dt.timedelta(days=day.weekday()), "month": day.replace(day=1)}
        return first.get(unit, _dt.date(day.year, 1, 1)), day
    if unit == "week":
        monday = _next_weekday(day, 0)
        return monday, monday + _dt.timedelta(days=6)
    if unit == "month":
        first_day = _add_months(day.replace(day=1), 1)
        return _month_span(first_day.year, first_day.month)
    return _dt.date(day.year + 1, 1, 1), _dt.date(day.year + 1, 12, 31)


def _last_unit(unit: str, day: _dt.date) -> tuple[_dt.date, _dt.date]:
    """ "Last week": the previous calendar week's Monday to ``day`` (it also means "the last seven
    days"); "last weekend": the last Saturday at least two days before ``day`` and its Sunday;
    "last month" / "last year": the previous calendar month / year."""
    if unit == "week":
        return day - _dt.timedelta(days=day.weekday() + 7), day
    if unit == "weekend":
        saturday = _last_weekday(day - _dt.timedelta(days=1), 5)
        return saturday, saturday + _dt.timedelta(days=1)
    if unit == "month":
        return _month_span(*((day.year, day.month - 1) if day.month > 1 else (day.year - 1, 12)))
    return _dt.date(day.year - 1, 1, 1), _dt.date(day.year - 1, 12, 31)


def _season(which: str | None, season: str, year: str | None, day: _dt.date) -> tuple[_dt.date, _dt.date] | None:
    if year:
        return _season_span(season, int(year))
    # the seasons of the years around ``day`` that lie in the calendar (near year 1 or 9999, not all)
    spans = [s for y in (day.year - 1, day.year, day.year + 1) if (s := _in_range(_season_span, season, y))]
    if which == "next":
        return next((s for s in spans if s[0] > day), None)
    if which in ("last", "past"):
        return next((s for s in reversed(spans) if s[1] < day), None)
    return next((s for s in reversed(spans) if s[0] <= day), None)


def time_expressions(sentence: str, said_at: _dt.datetime) -> list[tuple[int, str, str, _dt.date]]:
    """Every expression of the sentence that resolves ahead of ``said_at``: (position, kind,
    the words, the day), in text order."""
    day = said_at.date()
    marked = FUTURE_MARKERS.search(sentence) is not None
    found = []
    for row in _ROWS:
        if not row.turn:
            continue
        kind = row.kind
        for m in row.pattern.finditer(sentence):
            if kind in _NEEDS_MARKER and not marked:
                continue
            if kind == "month-day" and _is_verb_may(kind, m):
                continue
            span = _span(kind, m, day, ahead=True)
            if span is None:
                continue
            got = span[0]
            ahead = got > day or (kind == "today" and got == day)
            if ahead and (got - day).days <= MAX_AHEAD_DAYS:
                found.append((m.start(), kind, m.group(0), got))
    return sorted(found, key=lambda x: (x[0], x[1]))


def _is_verb_may(kind: str, m: re.Match[str]) -> bool:
    """ "may" in lower case is the verb, not the month."""
    i = {"month-day": 1, "day-month": 2, "month": 3}.get(kind)
    return i is not None and m.group(i).lower() == "may" and not m.group(i)[0].isupper()


def event_time(sentence: str, said_at: _dt.datetime) -> tuple[_dt.datetime, str, str] | None:
    """(event time, kind, words) of the earliest expression ahead in the sentence, or None."""
    found = time_expressions(sentence, said_at)
    if not found:
        return None
    _, kind, text, day = found[0]
    return _dt.datetime(day.year, day.month, day.day, EVENT_HOUR), kind, text


# ----------------------------------------------------------------------------- questions

#: Order words (docs/derive.md, "Question times"): the earliest or the latest of what matches first.
_EARLIEST = re.compile(
    r"\b(?:first(?![\s-]+(?:place|name|aid|hand|half|quarter|week|weekend|day|of)\b)|earliest|initially|originally"
    r"|(?:in|at) the beginning(?!\s+of)|to begin with|oldest)\b",
    re.I,
)
_LATEST = re.compile(
    r"\b(?:most(?:ly)? recent(?:ly)?|latest|newest|currently|current|now|nowadays|these days|still|anymore"
    r"|at the moment|recent(?:ly)?|lately|last time|the last (?!(?:few|couple|several|\d+|"
    + _NUM
    + rf"|{_UNIT}|{_WD}|{_MON}|{_SEASON}|week|weekend)\b)\w+)\b",
    re.I,
)
#: "How long", "how many days/weeks/months/years" (not "how many days a week"): a duration asked.
_DURATION = re.compile(
    r"\bhow\s+long\b|\bhow\s+many\s+(?:days|weeks|months|years|hours)\b(?!\s+(?:a|per|each|every)\b)", re.I
)
#: "before / after / since" an event (not a date): ordered against an event only retrieval can date.
_RELATIVE = re.compile(rf"\b(before|prior to|after|since)\s+(?!(?:the\s+)?(?:{_MON}|\d|{_YEAR}))", re.I)
#: Words asking about what is still ahead: an open window from the time asked.
_AHEAD = re.compile(r"\b(upcoming|coming up|in the future|soon)\b", re.I)
#: Rows relative to the day they are read on (read after the dates; with an anchor, they add its day).
_RELATIVE_ROWS = frozenset(
    {"tomorrow", "today", "same-day", "yesterday", "weekday", "on-weekday", "last-weekday", "next-weekday",
     "next-unit", "last-unit", "within", "ago", "in-n"}
)  # fmt: skip


@dataclass(frozen=True)
class QuestionTime:
    """What a question's own time words say (docs/derive.md, "Question times").

    ``kind``: ``"window"`` (``start`` and ``end`` bound when things were said or happened; either
    may be None: an open side), ``"order"`` (no window; ``order`` says which end to prefer),
    ``"duration"`` (the question asks how long or how many days; no window). ``order``:
    ``"earliest"``, ``"latest"`` or None, also with a window ("the first BBQ in June").
    ``words``: the expressions read, in text order, joined by " | "; ``rules``: their rows.
    """

    words: str
    kind: str
    start: _dt.datetime | None
    end: _dt.datetime | None
    order: str | None
    rules: tuple[str, ...] = ()


def _anchor(text: str) -> _dt.date | None:
    """The last date with a year written in the question ("as mentioned on 3 June, 2023")."""
    last = None
    for row in _ROWS:
        if row.kind in _DATED:
            for m in row.pattern.finditer(text):
                if m.group(1 if row.kind == "iso" else 3) is not None and not _is_verb_may(row.kind, m):
                    got = _span(row.kind, m, _dt.date(2000, 1, 1), ahead=False)
                    if got is not None and (last is None or m.start() > last[0]):
                        last = (m.start(), got[0])
    return None if last is None else last[1]


def _windows(text: str, day: _dt.date, ahead: bool) -> list[tuple[int, str, str, _dt.date, _dt.date]]:
    anchor = _anchor(text)
    found = []
    taken: list[tuple[int, int]] = []
    for row in sorted(_ROWS, key=lambda r: r.kind in _RELATIVE_ROWS):  # dates before relative words
        if row.kind == "in-n" and not ahead:
            continue  # "in two weeks" in a question is a span, not a date (docs/derive.md)
        for m in row.pattern.finditer(text):
            if _is_verb_may(row.kind, m) or any(a <= m.start() < b or m.start() <= a < m.end() for a, b in taken):
                continue
            if row.kind == "month" and re.search(r"\d(?:st|nd|rd|th)?\s+(?:of\s+)?$", text[: m.start()]):
                continue  # the month of "3 March" (row day-month)
            if row.kind == "season" and not (m.group(1) or m.group(3) or m.group(0).split()[0].lower() != m.group(2)):
                continue  # a bare season word is a topic ("the beauty of autumn")
            ref = day if anchor is None else anchor
            span = _span(row.kind, m, ref, ahead and row.kind in _NEEDS_MARKER)
            if span is None:
                continue
            taken.append((m.start(), m.end()))
            found.append((m.start(), row.kind, m.group(0), *span))
    if anchor is not None and any(k in _RELATIVE_ROWS for _, k, *_ in found):
        found.append((len(text), "anchor", "", anchor, anchor))
    return sorted(found, key=lambda x: x[0])


def question_time(text: str, asked_at: _dt.datetime) -> QuestionTime | None:
    """What the question's time words say, read against ``asked_at`` (naive UTC), or None when it
    has none. A window is the hull of every expression's days (00:00 of the first to 23:59:59 of
    the last), its end no later than ``asked_at`` when it starts by then."""
    day = asked_at.date()
    ahead = FUTURE_MARKERS.search(text) is not None
    found = _windows(text, day, ahead)
    words = [w for _, _, w, _, _ in found if w]
    rules = [k for _, k, _, _, _ in found]
    earliest, latest = _EARLIEST.search(text), _LATEST.search(text)
    rel = _RELATIVE.search(text)
    duration = _DURATION.search(text)
    order = None
    if earliest and not latest:
        order, words, rules = "earliest", words + [earliest.group(0)], rules + ["order"]
    elif latest and not earliest:
        order, words, rules = "latest", words + [latest.group(0)], rules + ["order"]
    elif rel and not duration and not earliest and not latest:
        order = "earliest" if rel.group(1).lower() in ("before", "prior to") else "latest"
        words, rules = words + [rel.group(0).strip()], rules + ["relative"]
    if found:
        start = min(a for _, _, _, a, _ in found)
        end = max(b for _, _, _, _, b in found)
        s = _dt.datetime(start.year, start.month, start.day)
        e = _dt.datetime(end.year, end.month, end.day, 23, 59, 59)
        if s <= asked_at:
            e = min(e, asked_at)
        return QuestionTime(" | ".join(words), "window", s, e, order, tuple(rules))
    up = _AHEAD.search(text)
    if up:
        return QuestionTime(" | ".join(words + [up.group(0)]), "window", asked_at, None, order, (*rules, "ahead"))
    if duration:
        return QuestionTime(" | ".join(words + [duration.group(0)]), "duration", None, None, None, (*rules, "duration"))
    if order:
        return QuestionTime(" | ".join(words), "order", None, None, order, tuple(rules))
    return None
