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

A schedule's dates are computed per month (from the weekday of its 1st and its length), not tried day by day, over
a bounded span that is proven enough: the Gregorian calendar repeats every 400 years (146097 days, exactly 20871
weeks), and every field above depends only on a date's month, day, weekday and month length, so a schedule
without a year that starts at all after a moment starts within 400 years of it, and two such schedules that ever
overlap overlap within 400 years of it (shift any overlap back by 146097 days). A schedule with a year starts only
in that year (2099 at the latest, inside the span). The dates are kept as one bit per day, so comparing two
schedules is a few whole-number operations, however long the span or the window."""

from __future__ import annotations

import calendar
import re
from bisect import bisect_left
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
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


_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _days_in_month(cron: Cron, first: int, length: int) -> range | tuple[int, ...]:
    """The days of a month the schedule fires on, from the month's length and the weekday of its 1st (1 = Sunday)."""
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
def _firing_days(cron: Cron, from_year: int, to_year: int) -> tuple[int, ...]:
    """The dates the schedule starts on from `from_year` through `to_year` (its own year only, when it names
    one), as ordinals, ascending."""
    if cron.both_days:
        return ()
    years = (cron.year,) if isinstance(cron.year, int) else range(from_year, to_year + 1)
    out: list[int] = []
    for year in years:
        first_of_month = date(year, 1, 1).toordinal()
        for month, length in enumerate(_MONTH_DAYS, 1):
            length += month == 2 and calendar.isleap(year)
            if month in cron.months:
                # Ordinal 1 (1 January of year 1) is a Monday, so an ordinal's AWS weekday is ordinal % 7 + 1.
                out.extend(first_of_month - 1 + day for day in _days_in_month(cron, first_of_month % 7 + 1, length))
            first_of_month += length
    return tuple(out)


@lru_cache(maxsize=256)
def _day_mask(cron: Cron, now: datetime, reach_years: int) -> int:
    """The schedule's starts at or after `now` as a bit per day, bit 0 being `now`'s date: through one calendar
    cycle from `now` (the module docstring proves it enough), a year for a window reaching past it and
    `reach_years` more for a longer window. Shifting and intersecting such masks compares calendars at once."""
    base = now.toordinal()
    days = _firing_days(cron, now.year, now.year + CYCLE_YEARS + 2 + reach_years)
    # A start on `now`'s date counts if its minute has not begun.
    passed_today = (cron.hour, cron.minute) < (now.hour, now.minute) or (
        (cron.hour, cron.minute) == (now.hour, now.minute) and (now.second or now.microsecond))
    first = bisect_left(days, base + 1 if passed_today else base)
    bits = bytearray((days[-1] - base) // 8 + 1 if first < len(days) else 0)
    for day in days[first:]:
        bits[(day - base) // 8] |= 1 << ((day - base) % 8)
    return int.from_bytes(bits, "little")


def utc_naive(moment: datetime | None) -> datetime:
    """`moment` in UTC without its zone, as every function here takes it; the clock's now when None."""
    moment = moment or datetime.now(UTC)
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


def _start(now: datetime, day: int, cron: Cron) -> datetime:
    return datetime.fromordinal(now.toordinal() + day).replace(hour=cron.hour, minute=cron.minute)


def _lowest(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


def first_start(cron: Cron, now: datetime) -> datetime | None:
    """When the schedule next starts an update, at or after `now` (UTC, naive); None when it never will: a
    schedule AWS refuses, a date no month has, or dates that have all passed."""
    mask = _day_mask(cron, now, 0)
    return _start(now, _lowest(mask), cron) if mask else None


def last_start_of_year(cron: Cron, year: int) -> datetime | None:
    """The schedule's last start in `year` (to say when a schedule with a year stopped), None without one."""
    days = [day for day in _firing_days(cron, year, year) if date.fromordinal(day).year == year]
    return datetime.fromordinal(days[-1]).replace(hour=cron.hour, minute=cron.minute) if days else None


def same_starts(a: Cron, b: Cron, now: datetime) -> bool:
    """Whether the two start at exactly the same moments from `now` on: one schedule in two spellings."""
    return a.minute_of_day == b.minute_of_day and _day_mask(a, now, 0) == _day_mask(b, now, 0)


def first_overlap(a: Cron, b: Cron, now: datetime, window: timedelta = timedelta(minutes=1)) -> datetime | None:
    """The first start of `b` at or after a start of `a` and less than `window` later, both at or after `now`: `b`
    starting while a roll `a` started may still run. The default window of one minute asks whether they ever
    start at the same minute (their sets of starts intersect). None when that never happens."""
    window_minutes = -(-int(window.total_seconds()) // 60)
    a_days, b_days = _day_mask(a, now, 0), _day_mask(b, now, window.days // 365)
    if window_minutes <= 0 or not a_days or not b_days:
        return None
    # Every start of `a` is at its minute of the day and every start of `b` at its own, so b - a is a whole number
    # of days plus the difference of the two: the numbers of days that keep it inside the window are a range.
    # Spreading each day of `a` over that range and meeting `b`'s days leaves the days of `b` that start inside
    # a window of `a`; the lowest is the first.
    difference = b.minute_of_day - a.minute_of_day
    days = range(0 if difference >= 0 else 1, (window_minutes - 1 - difference) // _MINUTES_PER_DAY + 1)
    common = (_spread(a_days, len(days)) << days.start) & b_days if days else 0
    return _start(now, _lowest(common), b) if common else None


def _spread(mask: int, width: int) -> int:
    """`mask` OR-ed with itself shifted by 1 to `width` - 1 days, in doubling steps (a window of months stays cheap)."""
    out, done, block, size = 0, 0, mask, 1   # `block` is `mask` spread over `size` days
    while width:
        if width & 1:
            out |= block << done
            done += size
        block |= block << size
        size *= 2
        width >>= 1
    return out
