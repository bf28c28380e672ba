"""AWS cron read for its meaning. The facts are AWS's (EventBridge's cron expressions reference: fields Minutes
Hours Day-of-month Month Day-of-week Year, 1 = Sunday, SUN-SAT names, L the week's last day, n#k the month's k-th
weekday n, ? in one of the two day fields; the field shapes are cfn-lint's ScheduleExpression pattern) and the
calendar's (Python's datetime, not the module under test). The property tests compare the module's answers with
a reading of each expression written here, day by day over 410 years from a fixed moment."""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta

import pytest

from cdk_app.domain.cron_schedules import (
    Cron,
    first_overlap,
    first_start,
    last_start_of_year,
    parse_cron,
    same_starts,
    utc_naive,
)
from hyperpod_constructs.private.limits import SCHEDULE_EXPRESSION

NOW = datetime(2026, 11, 27, 21, 30)
MINUTE = timedelta(minutes=1)


def cron(text: str) -> Cron:
    parsed = parse_cron(text)
    assert parsed is not None, text
    return parsed


# --- the reading written here, day by day ---------------------------------------------------------------------
NAMES = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]
SPAN_END = date(NOW.year + 410, 12, 31)


def _calendar() -> list[tuple[date, int, bool]]:
    """Every day from NOW's to SPAN_END with its AWS weekday (1 = Sunday) and whether a week later is another month."""
    days, day = [], NOW.date()
    while day <= SPAN_END:
        days.append((day, (day.weekday() + 1) % 7 + 1, (day + timedelta(days=7)).month != day.month))
        day += timedelta(days=1)
    return days


CALENDAR = _calendar()


def brute_starts(text: str) -> list[datetime]:
    minute, hour, dom, month, dow, year = text[len("cron("):-1].split(" ")
    if (dom == "?") == (dow == "?"):
        return []  # AWS: a value or * in one day field and ? in the other
    months = set(range(1, 13, int(month[2:]))) if month.startswith("*/") else (
        set(range(1, 13)) if month == "*" else {int(month)})

    def matches(day: date, weekday: int, last_of_kind: bool) -> bool:
        if day.month not in months or (year != "*" and day.year != int(year)):
            return False
        if dom != "?":
            return day.day == int(dom)
        if dow == "L":
            return weekday == 7
        if dow in NAMES:
            return weekday == NAMES.index(dow) + 1
        if "#" in dow:
            wanted, nth = dow.split("#")
            return weekday == int(wanted) and (day.day - 1) // 7 + 1 == int(nth)
        if dow.endswith("L"):
            return weekday == int(dow[:-1]) and last_of_kind
        return weekday == int(dow)

    at = timedelta(hours=int(hour), minutes=int(minute))
    found = [datetime(d.year, d.month, d.day) + at for d, w, last in CALENDAR if matches(d, w, last)]
    return [f for f in found if f >= NOW]


def brute_overlap(a: list[datetime], b: list[datetime], window: timedelta) -> datetime | None:
    """The first of `b` with a start of `a` at or before it and less than `window` earlier (the latest such)."""
    i = 0
    for y in b:
        while i < len(a) and a[i] <= y:
            i += 1
        if i and y - a[i - 1] < window:
            return y
    return None


def random_expression(rng: random.Random) -> str:
    minute = rng.choice(["0", "00", "5", "30", "59"])
    hour = rng.choice(["4", "04", "23", "0"])
    month = rng.choice(["*", "*", "*/1", "*/2", "*/3", "*/12", "1", "01", "2", "02", "12"])
    year = rng.choice(["*", "*", "*", "2026", "2027", "2041", "2044", "2025"])
    days = rng.choice([
        (str(rng.choice([1, 1, 7, 29, 30, 31])).zfill(rng.choice([1, 2])), "?"),
        ("?", rng.choice(NAMES + ["1", "2", "7", "L"])),
        ("?", f"{rng.randint(1, 7)}#{rng.randint(1, 5)}"),
        ("?", f"{rng.randint(1, 7)}L"),
        ("1", "MON"), ("?", "?"),
    ])
    return f"cron({minute} {hour} {days[0]} {month} {days[1]} {year})"


RNG = random.Random(31)
EXPRESSIONS = [random_expression(RNG) for _ in range(48)]
BRUTE = {text: brute_starts(text) for text in EXPRESSIONS}


def test_the_random_expressions_are_ones_the_schema_admits():
    import re
    assert all(re.fullmatch(SCHEDULE_EXPRESSION, text) for text in EXPRESSIONS)


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_the_first_start_is_the_first_date_the_expression_names(text):
    expected = BRUTE[text][0] if BRUTE[text] else None
    assert first_start(cron(text), NOW) == expected


WINDOWS = [MINUTE, timedelta(minutes=5), timedelta(hours=2), timedelta(days=1, minutes=1), timedelta(days=9),
           timedelta(days=40)]
PAIRS = [(RNG.choice(EXPRESSIONS), RNG.choice(EXPRESSIONS), RNG.choice(WINDOWS)) for _ in range(150)]


@pytest.mark.parametrize(("a", "b", "window"), PAIRS)
def test_an_overlap_is_the_first_one_day_by_day(a, b, window):
    assert first_overlap(cron(a), cron(b), NOW, window) == brute_overlap(BRUTE[a], BRUTE[b], window)


def test_the_random_pairs_hold_overlaps_and_their_absence():
    # The property is only worth something when both answers occur, the same-minute one included.
    answers = [first_overlap(cron(a), cron(b), NOW, w) is not None for a, b, w in PAIRS]
    assert any(answers) and not all(answers)
    assert any(first_overlap(cron(a), cron(b), NOW) is not None for a, b, _ in PAIRS if a != b)


# --- the red team's cases -------------------------------------------------------------------------------------
@pytest.mark.parametrize(("a", "b", "first", "weekday"), [
    # Every Sunday holds the first Sunday: 6 December 2026 is the first after NOW.
    ("cron(0 4 ? * SUN *)", "cron(0 4 ? * 1#1 *)", datetime(2026, 12, 6, 4, 0), "Sunday"),
    # Every twelfth month from January is January.
    ("cron(0 4 1 */12 ? *)", "cron(0 4 1 1 ? *)", datetime(2027, 1, 1, 4, 0), "Friday"),
    # A schedule bounded to a year far from today is still compared.
    ("cron(0 4 ? * SUN 2041)", "cron(0 4 ? * 1 *)", datetime(2041, 1, 6, 4, 0), "Sunday"),
    # The fifth Monday of February is 29 February of a leap year whose 1 February is a Monday: 2044.
    ("cron(0 4 ? 2 2#5 *)", "cron(0 4 29 2 ? *)", datetime(2044, 2, 29, 4, 0), "Monday"),
])
def test_schedules_whose_dates_meet_start_together(a, b, first, weekday):
    assert first_overlap(cron(a), cron(b), NOW) == first_overlap(cron(b), cron(a), NOW) == first
    assert first.strftime("%A") == weekday


def test_a_start_at_the_very_minute_of_another_is_within_its_roll():
    # first_start_within skipped starts at the same minute as the roll's own start.
    sunday = cron("cron(0 4 ? * SUN *)")
    assert first_overlap(sunday, sunday, NOW, timedelta(minutes=40)) == datetime(2026, 11, 29, 4, 0)
    assert first_overlap(sunday, cron("cron(39 4 ? * SUN *)"), NOW, timedelta(minutes=40)) == datetime(2026, 11, 29, 4, 39)
    assert first_overlap(sunday, cron("cron(40 4 ? * SUN *)"), NOW, timedelta(minutes=40)) is None


@pytest.mark.parametrize("days", [2, 8])  # a window of a few days, and one of more than a week
def test_a_start_exactly_a_window_later_is_outside_it(days):
    first, later = cron("cron(0 4 1 1 ? *)"), cron(f"cron(0 4 {1 + days} 1 ? *)")
    assert first_overlap(first, later, NOW, timedelta(days=days)) is None
    assert first_overlap(first, later, NOW, timedelta(days=days, minutes=1)) == datetime(2027, 1, 1 + days, 4, 0)


@pytest.mark.parametrize("window_days", [9, 17, 40])
def test_a_long_window_reaches_exactly_its_days(window_days):
    # A roll started 1 January at 04:00 and a start k days later at 04:00, for k around each window's end.
    first = cron("cron(0 4 1 1 ? *)")
    for k in [0, 1, 3, 4, 5, 7, 8, 9, 10, 15, 16, 17, 18, 31, 32, 39, 40, 41]:
        later = date(2027, 1, 1) + timedelta(days=k)
        hit = first_overlap(first, cron(f"cron(0 4 {later.day} {later.month} ? *)"), NOW, timedelta(days=window_days))
        assert hit == (datetime(later.year, later.month, later.day, 4, 0) if k < window_days else None), k


def test_a_roll_that_crosses_midnight_meets_the_next_days_start():
    assert first_overlap(cron("cron(30 23 ? * SAT *)"), cron("cron(0 0 ? * SUN *)"), NOW, timedelta(hours=1)) == \
        datetime(2026, 11, 29, 0, 0)
    # And the next year's first start, each schedule bounded to its own year.
    assert first_overlap(cron("cron(30 23 31 12 ? 2026)"), cron("cron(0 0 1 1 ? 2027)"), NOW, timedelta(hours=1)) == \
        datetime(2027, 1, 1, 0, 0)
    assert first_overlap(cron("cron(30 23 31 12 ? 2026)"), cron("cron(0 0 1 1 ? 2027)"), NOW, timedelta(minutes=30)) is None


def test_the_same_schedule_in_other_words_has_the_same_starts():
    for text in ["cron(00 4 ? * SUN *)", "cron(0 04 ? * SUN *)", "cron(0 4 ? * 1 *)", "cron(0 4 ? */1 SUN *)"]:
        assert same_starts(cron(text), cron("cron(0 4 ? * SUN *)"), NOW)
    assert not same_starts(cron("cron(0 4 ? * 1#1 *)"), cron("cron(0 4 ? * SUN *)"), NOW)


# --- starts relative to now ---------------------------------------------------------------------------------
def test_a_rare_date_fires_though_far_away():
    # The fifth Monday of February: only 29 February of a leap year whose 1 February is a Monday.
    assert first_start(cron("cron(0 4 ? 2 2#5 *)"), NOW) == datetime(2044, 2, 29, 4, 0)
    assert date(2044, 2, 29).strftime("%A") == "Monday"


@pytest.mark.parametrize(("text", "now", "first"), [
    ("cron(0 4 1 3 ? 2026)", datetime(2026, 11, 27), None),                          # March 2026 has passed
    ("cron(0 4 1 12 ? 2026)", datetime(2026, 11, 27), datetime(2026, 12, 1, 4, 0)),
    ("cron(0 4 27 11 ? 2026)", datetime(2026, 11, 27, 4, 0), datetime(2026, 11, 27, 4, 0)),  # this very minute
    ("cron(0 4 27 11 ? 2026)", datetime(2026, 11, 27, 4, 0, 1), None),                       # just begun: past
    ("cron(0 4 31 2 ? *)", datetime(2026, 11, 27), None),
    ("cron(0 4 1 * MON *)", datetime(2026, 11, 27), None),                           # both day fields: none
])
def test_the_first_start_is_counted_from_now(text, now, first):
    assert first_start(cron(text), now) == first


def test_the_last_start_of_a_year_says_when_a_bounded_schedule_stopped():
    assert last_start_of_year(cron("cron(0 4 ? * 6L 2026)"), 2026) == datetime(2026, 12, 25, 4, 0)
    assert last_start_of_year(cron("cron(0 4 ? * 6L 2026)"), 2027) is None


# --- the fields, read as the reference says -------------------------------------------------------------------
@pytest.mark.parametrize("text", ["cron(0 4 ? * SUN *)", "cron(00 4 ? * SUN *)", "cron(0 04 ? * SUN *)",
                                  "cron(0 4 ? * 1 *)", "cron(0 4 ? */1 SUN *)"])
def test_equivalent_spellings_normalize_alike(text):
    assert cron(text) == Cron(0, 4, "?", tuple(range(1, 13)), 1, "*")


def test_the_week_and_the_month_fields():
    assert first_start(cron("cron(0 4 ? * 1 *)"), NOW).strftime("%A") == "Sunday"
    assert first_start(cron("cron(0 4 ? * L *)"), NOW).strftime("%A") == "Saturday"   # L: the week's last day
    assert first_start(cron("cron(30 2 ? * 2#1 *)"), NOW) == datetime(2026, 12, 7, 2, 30)  # first Monday of December
    assert first_start(cron("cron(0 0 ? * 6L *)"), NOW) == datetime(2026, 12, 25, 0, 0)   # last Friday of December
    assert cron("cron(0 4 1 */3 ? *)").months == (1, 4, 7, 10)


@pytest.mark.parametrize("text", ["cron(0 4 ? JAN SUN *)", "cron(60 4 ? * SUN *)", "cron(0 24 ? * SUN *)",
                                  "cron(0 4 ? * 8 *)", "cron(0 4 ? * 1#6 *)", "cron(0 4 0 * ? *)", "cron(0 4 ? * SUN 2100)",
                                  "cron( 4 ? * SUN *)", "cron(0 4 ? * SUN,MON *)", "cron(0 4 ? * MON-FRI *)",
                                  "cron(0 4 ? */13 SUN *)", "rate(1 day)"])
def test_what_the_schema_refuses_or_leaves_empty_is_not_read(text):
    assert parse_cron(text) is None


def test_a_moment_with_a_zone_is_read_in_utc():
    from datetime import timezone
    berlin = datetime(2026, 11, 28, 4, 30, tzinfo=timezone(timedelta(hours=1)))   # 03:30 UTC
    assert utc_naive(berlin) == datetime(2026, 11, 28, 3, 30)
    # 04:00 UTC on Saturday 28 November is still to come at 04:30 in UTC+1.
    assert first_start(cron("cron(0 4 ? * SAT *)"), utc_naive(berlin)) == datetime(2026, 11, 28, 4, 0)
    assert utc_naive(None).tzinfo is None
