"""AWS cron read for its meaning. The facts are AWS's (EventBridge's cron expressions reference: fields Minutes
Hours Day-of-month Month Day-of-week Year, 1 = Sunday, SUN-SAT names, ? in one of the two day fields) and the
calendar's (Python's datetime, not the module under test): 2 January 2028 is a Sunday."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from cdk_app.domain.cron_schedules import Cron, firings, first_start_within, parse_cron


@pytest.mark.parametrize("text", ["cron(0 4 ? * SUN *)", "cron(00 4 ? * SUN *)", "cron(0 04 ? * SUN *)",
                                  "cron(0 4 ? * 1 *)", "cron(0 4 ? */1 SUN *)"])
def test_equivalent_expressions_are_one_schedule(text):
    assert parse_cron(text) == parse_cron("cron(0 4 ? * SUN *)") == Cron(0, 4, "?", "*", 1, "*")


def test_different_times_or_days_are_different_schedules():
    assert parse_cron("cron(0 4 ? * MON *)") != parse_cron("cron(0 4 ? * SUN *)")
    assert parse_cron("cron(5 4 ? * SUN *)") != parse_cron("cron(0 4 ? * SUN *)")


def test_sunday_is_day_1():
    assert datetime(2028, 1, 2).strftime("%A") == "Sunday"
    assert firings(parse_cron("cron(0 4 ? * 1 *)"))[0] == datetime(2028, 1, 2, 4, 0)
    # L alone is the week's last day, Saturday (7).
    assert firings(parse_cron("cron(0 4 ? * L *)"))[0].strftime("%A") == "Saturday"


@pytest.mark.parametrize(("text", "first"), [
    ("cron(30 2 ? * 2#1 *)", datetime(2028, 1, 3, 2, 30)),     # the first Monday of January 2028
    ("cron(0 0 ? * 6L *)", datetime(2028, 1, 28, 0, 0)),       # the last Friday of January 2028
    ("cron(0 4 29 2 ? *)", datetime(2028, 2, 29, 4, 0)),       # leap years only
    ("cron(0 4 1 */3 ? *)", datetime(2028, 1, 1, 4, 0)),
])
def test_firings(text, first):
    assert firings(parse_cron(text))[0] == first


def test_every_third_month_fires_in_january_april_july_october():
    assert {f.month for f in firings(parse_cron("cron(0 4 1 */3 ? *)"))} == {1, 4, 7, 10}


@pytest.mark.parametrize("text", ["cron(0 4 31 2 ? *)", "cron(0 4 30 2 ? *)", "cron(0 4 31 4 ? *)",
                                  "cron(0 4 29 2 ? 2027)"])
def test_a_date_that_does_not_exist_never_fires(text):
    assert firings(parse_cron(text)) == ()


def test_both_day_fields_or_neither_is_no_schedule():
    assert parse_cron("cron(0 4 1 * MON *)").both_days and parse_cron("cron(0 4 ? * ? *)").both_days
    assert firings(parse_cron("cron(0 4 1 * MON *)")) == ()


def test_a_start_within_a_roll_is_found():
    sunday = firings(parse_cron("cron(0 4 ? * SUN *)"))
    later = firings(parse_cron("cron(5 4 ? * SUN *)"))
    assert first_start_within(sunday, later, timedelta(minutes=10)) == datetime(2028, 1, 2, 4, 5)
    assert first_start_within(sunday, later, timedelta(minutes=5)) is None
