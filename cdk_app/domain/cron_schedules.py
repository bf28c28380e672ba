"""AWS cron expressions of scheduled AMI updates, read for their meaning: when they start from a given moment on,
and whether two start together or one starts while the other's roll may still run (`first_overlap`, the one
comparison the validator, `plan` and the rolling batches use).

The format is EventBridge's ("Cron expressions reference",
https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-cron-expressions.html): six fields, Minutes Hours
Day-of-month Month Day-of-week Year, in UTC. AWS::SageMaker::Cluster's ScheduleExpression pattern (cfn-lint, the
kit's limits.SCHEDULE_EXPRESSION) admits only a part of it: one minute and one hour (leading zeros allowed), a day
of month 1-31 or ?, a month 1-12, * or */1-*/12, a day of week MON-SUN, 1-7, ?, L, n#k (k 1-5) or nL, and a year
2020-2099 or *. No lists, ranges or month names, so each schedule starts at one time of day on a set of dates.
How each field is read, from the reference:
- Day-of-week "1-7 or SUN-SAT": 1 is Sunday, SUN-SAT in that order.
- "The L wildcard in the Day-of-month or Day-of-week fields specifies the last day of the month or week": L alone
  in day-of-week is the week's last day, 7 (Saturday).
- "The # wildcard in the Day-of-week field specifies a certain instance of the specified day of the week within a
  month": n#k is the month's k-th weekday n; a month without one (a fifth Monday) has no date.
- nL, which the pattern admits but the reference does not spell out, is read as the month's last weekday n, the
  meaning the L of "the last day of the ... week" gives a weekday number.
- "The / (slash) wildcard specifies increments": */n on months is every n-th month from the field's first, January.
- "You can't specify the Day-of-month and Day-of-week fields in the same cron expression. If you specify a value
  or a * in one of the fields, you must use a ? in the other": a schedule with both or neither has no dates here.
- A day of month a month lacks (31 April, 30 February) is no date of that month.

Firing dates are computed per month, not enumerated day by day, over a bounded span that is proven enough: the
Gregorian calendar repeats every 400 years (146097 days, exactly 20871 weeks), and every field above depends only
on the date's month, day, weekday and its month's length, so a schedule without a year fires in any 400 years
from a moment if it ever fires after it, and two such schedules that ever overlap overlap within 400 years of it
(shift any overlap back by 146097 days). A schedule with a year fires only in that year."""

from __future__ import annotations

import calendar
import re
from bisect import bisect_left
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache

from hyperpod_constructs.private.limits import SCHEDULE_EXPRESSION

DAY_NAMES = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")  # 1..7 in AWS cron
ANY, NONE_GIVEN = "*", "?"
CYCLE_YEARS = 400  # the Gregorian calendar's period
_MINUTES_PER_DAY = 1440

_ADMITTED = re.compile(SCHEDULE_EXPRESSION)


@dataclass(frozen=True, slots=True)
class Cron:
    """A schedule's fields, normalized: numbers as ints, names as their numbers, the months as the tuple of them."""
    minute: int
    hour: int
    day_of_month: int | str      # a day, or "?"
    months: tuple[int, ...]      # the months it fires in (1-12), ascending
    day_of_week: int | str       # 1-7 (1 = Sunday), "?", "n#k" or "nL"
    year: int | str              # a year or "*"

    @property
    def both_days(self) -> bool:
        """Day-of-month and day-of-week both given, or both ?: AWS cron takes exactly one of them."""
        return (self.day_of_month == NONE_GIVEN) == (self.day_of_week == NONE_GIVEN)

    @property
    def minute_of_day(self) -> int:
        return self.hour * 60 + self.minute


def _number(text: str) -> int | None:
    return int(text) if text.isdigit() else None


def _day_of_week(text: str) -> int | str | None:
    if text in DAY_NAMES:
        return DAY_NAMES.index(text) + 1
    if text == "L":
        return 7
    if text == NONE_GIVEN:
        return text
    day, sep, rest = text.partition("#")
    if sep and day.isdigit() and rest.isdigit():
        return f"{int(day)}#{int(rest)}"
    if text.endswith("L") and text[:-1].isdigit():
        return f"{int(text[:-1])}L"
    return _number(text)


def _months(text: str) -> tuple[int, ...] | None:
    if text == ANY or text.startswith("*/"):
        return tuple(range(1, 13, 1 if text == ANY else int(text[2:])))
    month = _number(text)
    return None if month is None else (month,)


def parse_cron(expression: str) -> Cron | None:
    """The normalized fields of `expression`; None for text the schema's pattern refuses (a template `plan` reads
    may hold anything) and for an empty field, which the pattern allows but which has no documented meaning."""
    if _ADMITTED.fullmatch(expression) is None:
        return None
    minute, hour, dom, month, dow, year = expression[len("cron("):-1].split(" ")
    fields = (_number(minute), _number(hour), NONE_GIVEN if dom == NONE_GIVEN else _number(dom), _months(month),
              _day_of_week(dow), ANY if year == ANY else _number(year))
    if any(f is None for f in fields):
        return None
    return Cron(*fields)  # type: ignore[arg-type]


def _days_in_month(cron: Cron, year: int, month: int) -> range | tuple[int, ...]:
    """The days of `month` the schedule fires on, computed from the weekday of the 1st and the month's length."""
    first_weekday, length = calendar.monthrange(year, month)  # Monday is 0
    first = (first_weekday + 1) % 7 + 1                        # AWS's weekday number of the 1st (1 = Sunday)
    dow = cron.day_of_week
    if isinstance(cron.day_of_month, int):
        return (cron.day_of_month,) if cron.day_of_month <= length else ()
    if isinstance(dow, int):
        return range(1 + (dow - first) % 7, length + 1, 7)
    weekday, _, nth = dow.partition("#")
    if nth:
        day = 1 + (int(weekday) - first) % 7 + 7 * (int(nth) - 1)
        return (day,) if day <= length else ()
    last = (first - 1 + length - 1) % 7 + 1                    # the weekday of the month's last day
    return (length - (last - int(dow[:-1])) % 7,)


@lru_cache(maxsize=256)
def _firing_minutes(cron: Cron, from_year: int, to_year: int) -> tuple[int, ...]:
    """Every start from `from_year` through `to_year`, as minutes since 1 January of year 1, ascending."""
    if cron.both_days:
        return ()
    years = (cron.year,) if isinstance(cron.year, int) else range(from_year, to_year + 1)
    out = []
    for year in years:
        for month in cron.months:
            base = date(year, month, 1).toordinal()
            out.extend((base + day - 1) * _MINUTES_PER_DAY + cron.minute_of_day
                       for day in _days_in_month(cron, year, month))
    return tuple(out)


def _minute_of(moment: datetime) -> int:
    """`moment` as a minute number, rounded up: a start within the minute that has begun is past."""
    return moment.toordinal() * _MINUTES_PER_DAY + moment.hour * 60 + moment.minute + bool(moment.second or moment.microsecond)


def _moment(minutes: int) -> datetime:
    day, minute = divmod(minutes, _MINUTES_PER_DAY)
    return datetime.fromordinal(day) + timedelta(minutes=minute)


def starts(cron: Cron, now: datetime, reach: timedelta = timedelta(0)) -> tuple[int, ...]:
    """The schedule's starts at or after `now` (UTC, naive), as minute numbers: through one calendar cycle from
    `now` and `reach` beyond it (the module docstring proves the cycle enough); none for a schedule AWS refuses or
    whose dates have all passed."""
    every = _firing_minutes(cron, now.year, now.year + CYCLE_YEARS + 1 + reach.days // 365)
    return every[bisect_left(every, _minute_of(now)):]


def first_start(cron: Cron, now: datetime) -> datetime | None:
    """When the schedule next starts an update, at or after `now`; None when it never will."""
    found = starts(cron, now)
    return _moment(found[0]) if found else None


def last_start_of_year(cron: Cron, year: int) -> datetime | None:
    """The schedule's last start in `year` (to say when a schedule with a year stopped), None without one."""
    found = _firing_minutes(cron, year, year)
    return _moment(found[-1]) if found and _moment(found[-1]).year == year else None


def same_starts(a: Cron, b: Cron, now: datetime) -> bool:
    """Whether the two start at exactly the same moments from `now` on: one schedule in two spellings."""
    return starts(a, now) == starts(b, now)


# Up to a week of day-gaps is looked up gap by gap in sets; a longer window walks the starts instead.
_SET_LOOKUPS = 7


def first_overlap(a: Cron, b: Cron, now: datetime, window: timedelta = timedelta(minutes=1)) -> datetime | None:
    """The first start of `b` at or after a start of `a` and less than `window` later, both at or after `now`: `b`
    starting while a roll `a` started may still run. The default window of one minute asks whether they ever
    start at the same minute (their sets of starts intersect). None when that never happens."""
    window_minutes = -(-int(window.total_seconds()) // 60)
    a_starts, b_starts = starts(a, now), starts(b, now, window)
    if window_minutes <= 0 or not a_starts or not b_starts:
        return None
    # All starts of `a` are at its minute of the day and all of `b` at its own, so b - a is whole days plus the
    # difference of the two: only those gaps inside the window can hold an overlap.
    gaps = range((b.minute_of_day - a.minute_of_day) % _MINUTES_PER_DAY, window_minutes, _MINUTES_PER_DAY)
    if len(gaps) <= _SET_LOOKUPS:
        b_set = frozenset(b_starts)
        hits = [min(common) for gap in gaps if (common := b_set.intersection(start + gap for start in a_starts))]
        return _moment(min(hits)) if hits else None
    # The first start of `a` with a start of `b` inside its window has the earliest such start of `b` (the first
    # start of `b` at or after it): any later start of `a` only finds starts of `b` at or after that one.
    for start in a_starts:
        j = bisect_left(b_starts, start)
        if j < len(b_starts) and b_starts[j] - start < window_minutes:
            return _moment(b_starts[j])
    return None
