"""Time expressions at the edges of the calendar (docs/derive.md, "Range"): however large or odd an
expression, and whenever it is read (0001-01-01 to 9999-12-31), `event_time` and `question_time`
return a time inside the calendar or nothing; they never raise."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings, strategies as st

from frcore.bank.derive import QuestionTime, question_time
from frcore.bank.derive._text import MONTHS, NUMBER_WORDS, WEEKDAYS
from frcore.bank.derive._times import MAX_AHEAD_DAYS, MAX_COUNT, _count, event_time

MAY_2023 = dt.datetime(2023, 5, 1, 9, 30)  # Monday
LATE_9999 = dt.datetime(9999, 12, 20, 18)
EARLY_1 = dt.datetime(1, 1, 2, 6)

# ----------------------------------------------------------------------------- the grammar

_numbers = st.one_of(
    st.integers(0, 10**30).map(str),
    st.integers(0, 40).map(str),
    st.sampled_from(["00000000000000000000000000000000001", str(MAX_COUNT), str(MAX_COUNT + 1), "3652059"]),
    st.sampled_from(sorted(NUMBER_WORDS)),
    st.sampled_from(["a", "an", "a couple of", "a few", "several", "few", "couple of"]),
)
_units = st.sampled_from(["day", "days", "week", "weeks", "month", "months", "year", "years"])
_weekdays = st.sampled_from(WEEKDAYS).map(str.capitalize)
_months = st.sampled_from([*MONTHS, "jan", "Feb", "sept", "Dec."]).map(str.capitalize)
_years = st.one_of(st.integers(1, 99999), st.sampled_from([1, 2, 1999, 2023, 9998, 9999, 10000])).map(str)
_days = st.integers(0, 40).map(str)
_iso = st.one_of(
    st.sampled_from(["9999-12-31", "0000-01-01", "0001-01-01", "2023-02-30", "2023-13-01", "2023-00-10"]),
    st.builds("{:04d}-{:02d}-{:02d}".format, st.integers(0, 9999), st.integers(0, 13), st.integers(0, 32)),
)
_dates = st.one_of(
    _iso,
    st.builds("{} {}".format, _months, _days),
    st.builds("{} {}, {}".format, _months, _days, _years),
    st.builds("{} {}".format, _days, _months),
    st.builds("the {}th of {} {}".format, _days, _months, _years),
)
_seasons = st.sampled_from(["summer", "spring", "winter", "fall", "autumn"])
_parts = st.sampled_from(["early", "mid", "late", "the beginning of", "the start of", "the end of"])
_expressions = st.one_of(
    st.builds("in {} {}".format, _numbers, _units),
    st.builds("{} {} ago".format, _numbers, _units),
    st.builds("{} {} before {}".format, _numbers, _units, _dates),
    st.builds("{} the last {} {}".format, st.sampled_from(["in", "over", "during", "within", "for"]), _numbers, _units),
    st.builds("in the past {}".format, _units),
    st.builds(
        "{} {}".format,
        st.sampled_from(["next", "last", "this", "this coming", "this past", "previous", "on"]),
        _weekdays,
    ),
    st.builds("the {} {} {}".format, _weekdays, st.sampled_from(["before", "after"]), _dates),
    st.builds(
        "{} {}".format,
        st.sampled_from(["next", "last", "this", "past", "previous"]),
        st.sampled_from(["week", "weekend", "month", "year"]),
    ),
    st.builds("the week before {}".format, _dates),
    _dates,
    st.builds("{} {}".format, st.sampled_from(["last", "this", "next", "past", "in", "during the"]), _seasons),
    st.builds("{} {} {}".format, st.sampled_from(["in", "the", "last"]), _seasons, _years),
    st.builds("{} of {}".format, _seasons, _years),
    st.builds("{} {}".format, _parts, _months),
    st.builds("{} {}, {}".format, _parts, _months, _years),
    st.builds("in {} {}".format, _parts, _years),
    st.builds("last {}".format, _months),
    st.sampled_from(["tomorrow", "tonight", "later today", "yesterday", "today", "this morning"]),
)
_frames = st.sampled_from(
    [
        "{}",
        "I will go {}.",
        "My flight is {} and the meeting {}.",
        "What did I say {}?",
        "When did we last talk, {}?",
        "Which trip was first, {} or {}?",
        "How long ago was it, {}?",
        "We're going to meet {}, or maybe {}, I'll see.",
        "Is anything upcoming {}?",
    ]
)
_extremes = st.sampled_from(
    [
        dt.datetime.min,
        dt.datetime(1, 1, 1, 23, 59, 59),
        EARLY_1,
        dt.datetime(1, 3, 1),
        LATE_9999,
        dt.datetime(9999, 12, 31),
        dt.datetime.max,
        MAY_2023,
    ]
)
_moments = st.one_of(_extremes, st.datetimes(min_value=dt.datetime.min, max_value=dt.datetime.max))


@st.composite
def _sentences(draw: st.DrawFn) -> str:
    frame = draw(_frames)
    return frame.format(*(draw(_expressions) for _ in range(frame.count("{}"))))


def _check_event(sentence: str, said_at: dt.datetime) -> None:
    got = event_time(sentence, said_at)
    if got is None:
        return
    when, kind, words = got
    assert isinstance(when, dt.datetime) and when.hour == 12 and words in sentence, got
    ahead = (when.date() - said_at.date()).days
    assert 0 <= ahead <= MAX_AHEAD_DAYS, got
    assert ahead > 0 or kind == "today", got


def _check_question(text: str, asked_at: dt.datetime) -> None:
    got = question_time(text, asked_at)
    if got is None:
        return
    assert isinstance(got, QuestionTime)
    for side in (got.start, got.end):
        assert side is None or isinstance(side, dt.datetime), got
    if got.start is not None and got.end is not None:
        assert got.start <= got.end, got


# ----------------------------------------------------------------------------- properties


@settings(max_examples=600)
@given(_sentences(), _moments)
def test_event_time_never_raises_and_stays_ahead(sentence, said_at):
    _check_event(sentence, said_at)


@settings(max_examples=600)
@given(_sentences(), _moments)
def test_question_time_never_raises_and_keeps_its_window_ordered(text, asked_at):
    _check_question(text, asked_at)


@settings(max_examples=300)
@given(_expressions, _extremes)
def test_every_expression_alone_at_the_calendar_edges(expression, at):
    for text in (expression, f"I will be there {expression}.", f"What happened {expression}?"):
        _check_event(text, at)
        _check_question(text, at)


# ----------------------------------------------------------------------------- regressions


@pytest.mark.parametrize("at", [MAY_2023, LATE_9999, EARLY_1])
def test_a_twenty_digit_count_resolves_to_nothing(at):
    # red without the range guard and the count bound: OverflowError
    assert event_time("I will go in 99999999999999999999 days", at) is None
    assert question_time("Will I go in 99999999999999999999 days?", at) is None


def test_counts_are_bounded():
    assert _count(str(MAX_COUNT)) == MAX_COUNT == 3652058  # 0001-01-01 to 9999-12-31
    assert _count(str(MAX_COUNT + 1)) is None
    assert _count("9" * 5000) is None and _count("0" * 5000 + "7") == 7  # int() refuses 4300+ digits


def test_a_count_in_bounds_whose_day_leaves_the_calendar_resolves_to_nothing():
    # red without the range guard: 3,000,000 days ≤ MAX_COUNT, but 2023 + 8213 years is past 9999
    assert event_time("I will go in 3000000 days", MAY_2023) is None
    assert question_time("Will I go in 3000000 days?", MAY_2023) is None
    assert question_time("What did I do in the last 3000000 days?", MAY_2023) is None
    assert question_time("What did I do 3000000 days ago?", MAY_2023) is None
    # in range, the same count still reads: 3,000,000 days after 0001-01-02 is 8214-09-23
    got = question_time("Will I go in 3000000 days?", EARLY_1)
    assert got is not None and got.start == dt.datetime(8214, 9, 23)


def test_next_month():
    assert event_time("my trip is next month", MAY_2023) == (dt.datetime(2023, 6, 1, 12), "next-unit", "next month")
    assert event_time("my trip is next month", EARLY_1) == (dt.datetime(1, 2, 1, 12), "next-unit", "next month")
    assert event_time("my trip is next month", LATE_9999) is None  # January 10000
    got = question_time("my trip is next month", MAY_2023)
    assert got is not None and (got.start, got.end) == (dt.datetime(2023, 6, 1), dt.datetime(2023, 6, 30, 23, 59, 59))
    assert question_time("my trip is next month", LATE_9999) is None


@pytest.mark.parametrize("at", [MAY_2023, LATE_9999, EARLY_1])
def test_the_last_day_of_the_calendar(at):
    # "fly" is no future marker, so no event time; as a question, it is that day
    assert event_time("I fly on December 31, 9999", at) is None
    got = question_time("I fly on December 31, 9999", at)
    assert got is not None and got.kind == "window"
    assert (got.start, got.end) == (dt.datetime(9999, 12, 31), dt.datetime(9999, 12, 31, 23, 59, 59))
    # with a marker, it is an event when it is at most MAX_AHEAD_DAYS ahead
    expected = (dt.datetime(9999, 12, 31, 12), "month-day", "December 31, 9999") if at == LATE_9999 else None
    assert event_time("My flight is on December 31, 9999", at) == expected


@pytest.mark.parametrize("at", [MAY_2023, LATE_9999, EARLY_1])
def test_five_thousand_years(at):
    # "in N years" is no event expression (days, weeks, months only), and 5000 years is beyond MAX_AHEAD_DAYS
    assert event_time("in 5000 years I will retire", at) is None
    assert question_time("in 5000 years I will retire", at) is None
    # 5000 months: 416 years 8 months, beyond MAX_AHEAD_DAYS; past year 9999 from LATE_9999
    assert event_time("in 5000 months I will retire", at) is None
    got = question_time("in 5000 months I will retire", at)
    if at == MAY_2023:
        assert got is not None and (got.start, got.end) == (
            dt.datetime(2440, 1, 1),
            dt.datetime(2440, 1, 1, 23, 59, 59),
        )
    elif at == LATE_9999:
        assert got is None


def test_seasons_at_the_ends_of_the_calendar():
    # the seasons of year 0 and year 10000 are not candidates, the others still are
    got = question_time("What did I do last summer?", LATE_9999)
    assert got is not None and (got.start, got.end) == (dt.datetime(9999, 6, 1), dt.datetime(9999, 8, 31, 23, 59, 59))
    assert question_time("Where will I go next summer?", LATE_9999) is None
    assert question_time("What did I do last summer?", EARLY_1) is None
    assert question_time("What did I do this winter?", EARLY_1) is None  # December 0000 to February 0001


def test_a_bank_deriving_hostile_time_words_stores_every_turn(tmp_path):
    """``fr bank add --derive`` on turns with absurd time words: exit 0, every turn stored, no
    event time outside the range (the failure the issue reports was a traceback)."""
    import json

    from frcore.bank import Bank
    from frcore.cli import main

    texts = [
        "I will go in 99999999999999999999 days.",
        "My trip is next month, on December 31, 9999.",
        "I'm going to retire in 5000 years.",
        "My flight is on 0000-01-01.",
    ]
    facts = tmp_path / "t.jsonl"
    facts.write_text(
        "\n".join(
            json.dumps({"id": f"t{i}", "text": t, "said_at": "9999-12-20T10:00:00", "kind": "turn"})
            for i, t in enumerate(texts)
        )
    )
    db = str(tmp_path / "h.db")
    assert main(["bank", "init", db, "--embedder", "hash"]) == 0
    assert main(["bank", "add", db, str(facts), "--derive"]) == 0
    bank = Bank.open(db)
    stored = {e.id: e for e in bank.store.edges(user=bank.user)}
    assert set(stored) == {f"t{i}" for i in range(len(texts))}
    assert all(e.event_time is None or e.event_time.year <= 9999 for e in stored.values())
    bank.close()
