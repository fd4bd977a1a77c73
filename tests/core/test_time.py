"""The one timestamp rule (:func:`frcore.parse_time`) and the readers that use it."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pytest
from hypothesis import given, strategies as st

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


def test_one_public_parse_time():
    """frcore.parse_time is the one public reader; frcore.bank exports no second one (nor a
    second hours-since-epoch): its entry points use frcore._time.parse_time_arg."""
    import frcore.bank as bank

    assert not hasattr(bank, "parse_time") and not hasattr(bank, "to_hours")
    assert "parse_time" in fr.__all__ and "hours_since_epoch" in fr.__all__


def test_an_entry_points_time_argument():
    """parse_time_arg: parse_time's rule, None kept (the caller's default), a plain ValueError
    'NAME: PROBLEM' (what Bank.query, the CLI's --at and the MCP tools say)."""
    from frcore._time import parse_time_arg

    assert parse_time_arg(None, "at") is None
    assert parse_time_arg("2025-03-10T09:30+01:00", "at") == dt.datetime(2025, 3, 10, 8, 30)
    with pytest.raises(ValueError) as e:
        parse_time_arg("someday", "--at")
    assert str(e.value) == "--at: not a date 'YYYY-MM-DD' or ISO datetime: 'someday'"
    assert not isinstance(e.value, fr.TimeParseError)


def test_the_one_clock():
    """now(): naive UTC, to the microsecond (what a write records)."""
    from frcore._time import now

    before = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    got = now()
    after = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    assert got.tzinfo is None and before <= got <= after


@given(st.datetimes(min_value=dt.datetime(1700, 1, 1), max_value=dt.datetime(2250, 12, 31)))
def test_hours_from_microseconds_equal_those_of_the_datetime(t):
    """The bank keeps an instant as int64 microseconds and computes hours from them: the same
    float, bit for bit, as ``timedelta.total_seconds() / 3600`` of the datetime (the score's hours
    before the store kept microseconds), element-wise and alone; and back to the datetime."""
    from frcore._time import EPOCH, hours_from_micros, micros_since_epoch, time_from_micros

    us = micros_since_epoch(t)
    want = (t - EPOCH).total_seconds() / 3600.0
    assert float(hours_from_micros(us)) == want == fr.hours_since_epoch(t)
    got = hours_from_micros(np.array([us, 0, us], dtype=np.int64))
    assert got.dtype == np.float64 and got.tolist() == [want, 0.0, want]
    assert time_from_micros(us) == t


def test_microseconds_since_epoch():
    from frcore._time import EPOCH, micros_since_epoch

    assert micros_since_epoch(EPOCH) == 0
    assert micros_since_epoch(dt.datetime(1970, 1, 1, 0, 0, 0, 1)) == 1
    assert micros_since_epoch(dt.datetime(1969, 12, 31, 23, 59, 59, 999999)) == -1
    assert micros_since_epoch(dt.datetime.max) == 253_402_300_799_999_999  # exact beyond 2**53
    t = fr.parse_time("2025-03-10T09:30:15.250")
    assert micros_since_epoch(t) == 1_741_599_015_250_000
    assert micros_since_epoch(t) / 3.6e9 == fr.hours_since_epoch(t)


def test_a_reads_default_time_is_to_the_second(tmp_path, monkeypatch):
    """The rule of frcore._time.now: a read's default ``at`` (here Bank.query's) is now to the
    whole second; a write's recorded_at keeps the microseconds."""
    import frcore.bank._bank as bank_mod
    import frcore.bank.storage._batch as batch_mod
    from frcore.bank import Bank

    fixed = dt.datetime(2025, 6, 1, 12, 0, 0, 123456)
    monkeypatch.setattr(bank_mod, "now", lambda: fixed)
    monkeypatch.setattr(batch_mod, "now", lambda: fixed)  # a batch's recorded_at
    fact = {
        "id": "f1",
        "text": "the user lives in Lyon",
        "said_at": "2025-01-01",
        "slot": "home_city",
        "categories": {"LOGISTICAL_CONTEXT": 1.0},
    }
    with Bank.open(str(tmp_path / "b.db"), embedder="hash") as bank:
        bank.add([fact])
        assert bank.query("where does the user live?").at == dt.datetime(2025, 6, 1, 12, 0, 0)
        ((record, recorded),) = bank.slot_history("home_city")
        assert record.id == "f1" and recorded == fixed


def test_states_default_time_is_to_the_second(tmp_path, monkeypatch):
    """Bank.states, a read, defaults ``at`` to now to the whole second: a fact said 0.5 s into
    the current second is not yet said then (it would be at the full-microsecond now)."""
    import frcore.bank._bank as bank_mod
    from frcore.bank import Bank

    def fact(fid: str, said: str) -> dict:
        return {"id": fid, "text": f"note {fid}", "said_at": said, "categories": {"OTHER": 1.0}}

    with Bank.open(str(tmp_path / "b.db"), embedder="hash") as bank:
        bank.add([fact("before", "2025-06-01T11:59:59"), fact("within", "2025-06-01T12:00:00.500000")])
        monkeypatch.setattr(bank_mod, "now", lambda: dt.datetime(2025, 6, 1, 12, 0, 0, 700000))
        assert set(bank.states()) == {"before"}
        assert set(bank.states(at="2025-06-01T12:00:00.700000")) == {"before", "within"}


def test_a_query_parses_its_time_once(tmp_path, monkeypatch):
    """Bank.query parses ``at`` where it enters; the store and the lifecycle derivation take
    the parsed datetime and only convert it (no second or third parse)."""
    import frcore._time as time_mod
    import frcore.bank.records._facts as facts_mod
    from frcore.bank import Bank

    seen: list = []

    def counted(value, *args, **kwargs):
        seen.append(value)
        return fr.parse_time(value, *args, **kwargs)

    fact = {"id": "f1", "text": "the user lives in Lyon", "said_at": "2025-01-01", "categories": {"OTHER": 1.0}}
    with Bank.open(str(tmp_path / "b.db"), embedder="hash") as bank:
        bank.add([fact])
        monkeypatch.setattr(time_mod, "parse_time", counted)
        monkeypatch.setattr(facts_mod, "parse_time", counted)
        assert bank.query("where does the user live?", at="2025-06-01").ids == ["f1"]
        assert seen == ["2025-06-01"]
        seen.clear()
        assert bank.states(at="2025-06-02", known_at="2030-01-01") == {"f1": "active"}
        assert seen == ["2025-06-02", "2030-01-01"]
