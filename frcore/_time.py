"""Timestamps: the one rule for reading a time, and hours since the epoch.

Every time frcore reads — a fact's ``said_at`` / ``event_time``, a suite's dates, a corpus
stamp — goes through :func:`parse_time`: a ``datetime``, a ``date`` (midnight), or a string
``YYYY-MM-DD`` / ISO 8601 (surrounding spaces ignored, a trailing ``Z`` meaning UTC) becomes a
naive datetime in UTC: aware times are converted, naive ones are taken as UTC, so every time
compares with every other. Inside FR-Bank an instant is one form: integer microseconds since
1970-01-01T00:00 UTC (:func:`micros_since_epoch`, exact; int64 columns), which lifecycle
derivation compares and the store keeps; the score's unit, hours since the epoch, is computed
from them where the score needs it (:func:`hours_from_micros`, element-wise, equal bit for bit
to :func:`hours_since_epoch` of the same datetime). :func:`time_from_micros` and
:func:`time_from_hours` give the datetime back.

A time is parsed once, where it enters: the public entry points (:func:`parse_time` itself,
``Bank.query`` / ``Bank.states`` / ``Bank.retract`` and the other ``Bank`` methods, the CLI's
``--at``, the MCP tools' ``at`` — by :func:`parse_time_arg`, fact fields by the fact reader).
Below them, the store and the lifecycle derivation take naive-UTC datetimes and convert them
once, to microseconds; a datetime or ISO text is made again only at the edges (records handed
out, files, SQLite's text columns). :func:`now` is the one clock.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, timedelta, timezone
from typing import Any

import numpy as np

from ._shown import shown

#: 1970-01-01T00:00, naive UTC: hour 0 of :func:`hours_since_epoch`.
EPOCH = datetime(1970, 1, 1)


class TimeParseError(ValueError):
    """A value that is not a time: ``field`` names the field, ``problem`` says what is wrong
    (the message is ``field 'NAME': PROBLEM``)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"field {field!r}: {problem}")
        self.field = field
        self.problem = problem


def parse_time(value: Any, field: str = "time", *, error: Callable[[str], Exception] | None = None) -> datetime:
    """A ``datetime``, ``date`` or ``YYYY-MM-DD`` / ISO-8601 string → naive UTC datetime.

    Raises :class:`TimeParseError` naming ``field``; or, with ``error``, the exception
    ``error(problem)`` returns (a caller's own error type and context, same problem text)::

        parse_time("2025-03-10T09:30+01:00", "said_at")  # datetime(2025, 3, 10, 8, 30)
        parse_time("last tuesday", "said_at")  # TimeParseError: field 'said_at': not a date ...
    """
    problem = None
    if isinstance(value, datetime):
        t = value
    elif isinstance(value, date):
        t = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        text = value.strip()
        try:  # a trailing Z is UTC (datetime.fromisoformat reads it itself from Python 3.11 on)
            t = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
        except ValueError:
            problem = f"not a date 'YYYY-MM-DD' or ISO datetime: {shown(value)}"
    else:
        problem = f"expected a date string or datetime, got {type(value).__name__}"
    if problem is None and t.tzinfo is not None:
        try:
            t = t.astimezone(timezone.utc).replace(tzinfo=None)
        except (OverflowError, ValueError):
            problem = f"out of range once converted to UTC (years 1-9999): {shown(value)}"
    if problem is not None:
        raise error(problem) if error is not None else TimeParseError(field, problem)
    return t


def parse_time_arg(value: Any, name: str = "at") -> datetime | None:
    """A time argument of a public entry point (``Bank.query``'s ``at`` / ``known_at``, the
    CLI's ``--at``, an MCP tool's ``at``): :func:`parse_time`'s rule, ``None`` staying ``None``
    (the caller's default), an error a plain ``ValueError`` ``NAME: PROBLEM``."""
    if value is None:
        return None
    return parse_time(value, name, error=lambda problem: ValueError(f"{name}: {problem}"))


def now() -> datetime:
    """The current time, naive UTC, to the microsecond: frcore's one clock.

    The rule: a time frcore *records* (a write's ``recorded_at``, an erasure's or a release's
    time, a bank's ``created_at``, a retraction's default effective time) keeps the
    microseconds; the default valid time of a *read* or of a turn said now (``Bank.query`` /
    ``Bank.states``, the MCP ``history`` tool's ``at`` and a ``remember`` turn's ``at``) is
    ``now().replace(microsecond=0)``, to the whole second."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def hours_since_epoch(t: datetime) -> float:
    """Hours since 1970-01-01T00:00 UTC of a datetime (naive: taken as UTC; aware: converted):
    ``hours_from_micros(micros_since_epoch(t))``."""
    if t.tzinfo is not None:
        t = t.astimezone(timezone.utc).replace(tzinfo=None)
    return micros_since_epoch(t) / 1e6 / 3600.0  # hours_from_micros's operations, on one Python float


_US = timedelta(microseconds=1)


def micros_since_epoch(t: datetime) -> int:
    """Integer microseconds since 1970-01-01T00:00 of a naive-UTC datetime (exact)."""
    return (t - EPOCH) // _US


def hours_from_micros(us: Any) -> Any:
    """Hours since the epoch of microseconds since it, element-wise: ``(us / 10⁶) / 3600`` in
    float64. The first division is correctly rounded from the exact integer (|us| < 2⁵³, years
    1685 to 2255), as ``timedelta.total_seconds`` is, so the hours equal, bit for bit, those of
    the same instant as a datetime."""
    return (np.asarray(us, dtype=np.int64).astype(np.float64) / 1e6) / 3600.0


def time_from_micros(us: int) -> datetime:
    """The naive UTC datetime ``us`` microseconds after 1970-01-01T00:00 (inverse of
    :func:`micros_since_epoch`, exact)."""
    return EPOCH + timedelta(microseconds=int(us))


def time_from_hours(hours: float) -> datetime:
    """The naive UTC datetime ``hours`` hours after 1970-01-01T00:00 (inverse of
    :func:`hours_since_epoch`, to the microsecond)."""
    return EPOCH + timedelta(hours=float(hours))
