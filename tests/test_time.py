"""The one timestamp rule (:func:`frcore.parse_time`) and the readers that use it."""

from __future__ import annotations

import datetime as dt
import json

import pytest

import frcore as fr
from frcore.bench import parse_suite

STAMPS = {
    "2025-03-10": dt.datetime(2025, 3, 10),
    " 2025-03-10 ": dt.datetime(2025, 3, 10),
    "2025-03-10T09:30": dt.datetime(2025, 3, 10, 9, 30),
    "2025-03-10T09:30:15.250": dt.datetime(2025, 3, 10, 9, 30, 15, 250000),
    "2025-03-10T09:30Z": dt.datetime(2025, 3, 10, 9, 30),
    "2025-03-10T09:30+01:00": dt.datetime(2025, 3, 10, 8, 30),
    "2025-03-10T23:30-02:00": dt.datetime(2025, 3, 11, 1, 30),
}


@pytest.mark.parametrize("text", list(STAMPS))
def test_strings(text):
    got = fr.parse_time(text, "said_at")
    assert got == STAMPS[text] and got.tzinfo is None


def test_dates_and_datetimes():
    assert fr.parse_time(dt.date(2025, 3, 10)) == dt.datetime(2025, 3, 10)
    aware = dt.datetime(2025, 3, 10, 9, 30, tzinfo=dt.timezone(dt.timedelta(hours=5)))
    assert fr.parse_time(aware) == dt.datetime(2025, 3, 10, 4, 30)
    naive = dt.datetime(2025, 3, 10, 9, 30)
    assert fr.parse_time(naive) is naive


@pytest.mark.parametrize(
    "value, problem",
    [
        ("last tuesday", "not a date 'YYYY-MM-DD' or ISO datetime: 'last tuesday'"),
        ("", "not a date 'YYYY-MM-DD' or ISO datetime: ''"),
        (20250310, "expected a date string or datetime, got int"),
        (None, "expected a date string or datetime, got NoneType"),
        ("0001-01-01T00:00+01:00", "out of range once converted to UTC (years 1-9999): '0001-01-01T00:00+01:00'"),
    ],
)
def test_errors_name_the_field(value, problem):
    with pytest.raises(fr.TimeParseError) as e:
        fr.parse_time(value, "event_time")
    assert str(e.value) == f"field 'event_time': {problem}"
    assert (e.value.field, e.value.problem) == ("event_time", problem)
    assert isinstance(e.value, ValueError)


def test_a_callers_own_error():
    class Mine(Exception):
        pass

    with pytest.raises(Mine, match=r"^ctx: not a date"):
        fr.parse_time("nope", "at", error=lambda problem: Mine(f"ctx: {problem}"))


def test_hours_since_epoch():
    assert fr.hours_since_epoch(dt.datetime(1970, 1, 2)) == 24.0
    t = fr.parse_time("2025-03-10T09:30:15.250")
    assert fr.time_from_hours(fr.hours_since_epoch(t)) == t
    aware = dt.datetime(1970, 1, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    assert fr.hours_since_epoch(aware) == 0.0
    # the same float as an aware datetime's timestamp() (what theory/corpus computed before)
    for text, parsed in STAMPS.items():
        want = parsed.replace(tzinfo=dt.timezone.utc).timestamp() / 3600.0
        assert fr.hours_since_epoch(fr.parse_time(text)) == want


def test_the_readers_agree():
    """The suite reader and the theory corpus read every stamp by the same rule."""
    from theory.corpus import _hours

    for text, want in STAMPS.items():
        assert _hours(text, "said_at", "f1") == fr.hours_since_epoch(want)
    with pytest.raises(ValueError, match=r"^f1: field 'said_at': not a date 'YYYY-MM-DD' or ISO datetime: 'x'$"):
        _hours("x", "said_at", "f1")


def test_suite_errors_name_the_field():
    from frcore.bench import generate_suite

    suite = json.loads(json.dumps(generate_suite(0, seed=0)))
    parse_suite(suite, source="s.json")
    suite["asked_at"] = "someday"
    problem = "not a date 'YYYY-MM-DD' or ISO datetime: 'someday'"
    with pytest.raises(ValueError, match=rf"^s.json: suite '[a-z0-9]+': field 'asked_at': {problem}"):
        parse_suite(suite, source="s.json")
