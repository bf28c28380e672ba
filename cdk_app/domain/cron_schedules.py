"""AWS cron expressions of scheduled AMI updates, read for their meaning: when they fire, whether two are the same
schedule, and whether one fires at all.

The format is AWS's cron (EventBridge's "Cron expressions reference",
https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-scheduled-rule-pattern.html#eb-cron-expressions):
cron(Minutes Hours Day-of-month Month Day-of-week Year), in UTC; Day-of-week 1-7 or SUN-SAT with 1 = Sunday;
"L" alone in Day-of-week is the last day of the week (7, Saturday), "nL" the month's last weekday n, "n#k" its k-th
weekday n; "You can't specify the Day-of-month and Day-of-week fields in the same cron expression. If you specify
a value or a * in one of the fields, you must use a ? in the other." AWS::SageMaker::Cluster's ScheduleExpression
pattern (cfn-lint) narrows it further: one minute, one hour, one day of month or ?, a month, * or */n, and a
year 20xx or *. Numbers may have a leading zero (04 is 4).

A schedule's meaning here is its normalized fields (Cron): equal Crons fire at the same times, whatever their
text. Firing times are enumerated over a fixed span of years (HORIZON, which holds every weekday and leap-year
case) and the schedule's own year when it names one."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import cache

DAY_NAMES = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")  # 1..7 in AWS cron
ANY, NONE_GIVEN = "*", "?"
# 2028 is a leap year; eight years hold every weekday of every date and both kinds of February.
HORIZON = range(2028, 2036)

_EXPRESSION = re.compile(r"cron\((\S+) (\S+) (\S+) (\S+) (\S+) (\S+)\)")


@dataclass(frozen=True, slots=True)
class Cron:
    """A schedule's fields, normalized: numbers as ints, names as their numbers, */1 as *."""
    minute: int
    hour: int
    day_of_month: int | str      # a day, or "?"
    month: int | str             # a month, "*" or "*/n"
    day_of_week: int | str       # 1-7 (1 = Sunday), "?", "n#k" or "nL"
    year: int | str              # a year or "*"

    @property
    def both_days(self) -> bool:
        """Day-of-month and day-of-week both given, or both ?: AWS cron takes exactly one of them."""
        return (self.day_of_month == NONE_GIVEN) == (self.day_of_week == NONE_GIVEN)


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


def _month(text: str) -> int | str | None:
    if text in (ANY, "*/1"):
        return ANY
    if text.startswith("*/") and text[2:].isdigit():
        return f"*/{int(text[2:])}"
    return _number(text)


def parse_cron(expression: str) -> Cron | None:
    """The normalized fields of `expression`; None for text outside the format above (the config's pattern
    refuses most; an empty field, which the schema's pattern allows, has no documented meaning)."""
    matched = _EXPRESSION.fullmatch(expression)
    if matched is None:
        return None
    minute, hour, dom, month, dow, year = matched.groups()
    fields = (_number(minute), _number(hour), NONE_GIVEN if dom == NONE_GIVEN else _number(dom), _month(month),
              _day_of_week(dow), ANY if year == ANY else _number(year))
    if any(f is None for f in fields):
        return None
    return Cron(*fields)  # type: ignore[arg-type]


def _fires_on(cron: Cron, day: date) -> bool:
    if cron.year != ANY and day.year != cron.year:
        return False
    if isinstance(cron.month, int) and day.month != cron.month:
        return False
    if isinstance(cron.month, str) and cron.month.startswith("*/") and (day.month - 1) % int(cron.month[2:]):
        return False
    if isinstance(cron.day_of_month, int) and day.day != cron.day_of_month:
        return False
    weekday = day.isoweekday() % 7 + 1  # Sunday is 1
    dow = cron.day_of_week
    if isinstance(dow, int):
        return weekday == dow
    if isinstance(dow, str) and "#" in dow:
        wanted, nth = (int(x) for x in dow.split("#"))
        return weekday == wanted and (day.day - 1) // 7 + 1 == nth
    if isinstance(dow, str) and dow.endswith("L"):
        return weekday == int(dow[:-1]) and day.day + 7 > calendar.monthrange(day.year, day.month)[1]
    return True


@cache
def firings(cron: Cron) -> tuple[datetime, ...]:
    """When the schedule starts, in order, over HORIZON and its own year; none for one that takes both day
    fields or neither (AWS refuses those)."""
    if cron.both_days:
        return ()
    years = sorted({*HORIZON, *([cron.year] if isinstance(cron.year, int) else [])})
    out = []
    for year in years:
        day = date(year, 1, 1)
        while day.year == year:
            if _fires_on(cron, day):
                out.append(datetime(day.year, day.month, day.day, cron.hour, cron.minute))
            day += timedelta(days=1)
    return tuple(out)


def first_start_within(starts: tuple[datetime, ...], others: tuple[datetime, ...], window: timedelta) -> datetime | None:
    """The first of `others` after a start of `starts` and less than `window` later, if any: a start of
    another schedule while a roll that began at `starts` may still run. Both lists are in order."""
    j = 0
    for start in starts:
        while j < len(others) and others[j] <= start:
            j += 1
        if j < len(others) and others[j] - start < window:
            return others[j]
    return None
