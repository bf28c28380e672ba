"""What a simulation shows: per job its events, per team its usage against quota over time, borrowed and lent
accelerator-hours, waits and preemptions, and the cluster's utilisation - as JSON and as a table.

Definitions (docs/explanation/simulate.md repeats them):
- usage: what a team's admitted jobs request, per flavor (instance type); accelerators are summed over the
  accelerator resources (nvidia.com/gpu, aws.amazon.com/neuron).
- borrowed: a team's usage above its nominal quota, per flavor.
- lent: while others borrow on a flavor, what they borrow is attributed to the lending teams (and the
  unallocated pool) in proportion to the idle quota each had there at that moment.
- wait: from submission to the first admission, for jobs submitted during the simulation and admitted.
- utilisation: accelerator-hours used over the cluster's accelerator-hours in [0, end]: its whole accelerators,
  each instance group once (a flexible group as the type with most), MIG partitions named apart.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from fractions import Fraction
from typing import Any

from cdk_app.domain.instance_types import ACCELERATOR_RESOURCES
from cdk_app.simulate.engine import JobEvent, Timeline
from cdk_app.simulate.governance import TERMS, in_terms
from cdk_app.support.text_table import aligned, printable

ACCELERATORS = frozenset(ACCELERATOR_RESOURCES.values())
HOUR = 3600


def _accelerators(amounts: dict[str, int]) -> int:
    return sum(amount for res, amount in amounts.items() if res in ACCELERATORS)


def _number(value: Fraction | int | float) -> int | float:
    if isinstance(value, int):
        return value
    value = Fraction(value)
    return int(value) if value.denominator == 1 else round(float(value), 3)


def _terms(amounts: dict[str, int]) -> dict[str, int | float]:
    """Kueue amounts in the config's terms, accelerators summed."""
    out: dict[str, int | float] = {}
    for res, amount in sorted(amounts.items()):
        term = TERMS.get(res, res)
        out[term] = _number(out.get(term, 0) + in_terms(res, amount))
    return out


def event_json(event: JobEvent) -> dict[str, Any]:
    out: dict[str, Any] = {"at": event.at, "seq": event.seq, "event": event.event}
    if event.flavor is not None:
        out["flavor"] = event.flavor
    if event.event == "admitted":
        out["borrowed"] = _terms(event.borrowed)
        if event.lenders:
            out["from"] = list(event.lenders)
    if event.by is not None:
        out["by"] = event.by
        out["by_team"] = event.by_team
    if event.reason is not None:
        out["reason"] = event.reason
    if event.message:
        out["message"] = event.message
    return out


def _percentile(values: list[int], fraction: float) -> int | None:
    """Nearest-rank percentile; None without values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * fraction // 1))
    return ordered[int(rank) - 1]


class _Series:
    """Per team, accelerators in use as a step function over [start, end], integrated as it changes: each change
    touches only its own team and flavor (a month of 10,000 jobs and 100 teams is tens of thousands of changes).

    Lent capacity: while borrowers hold B accelerators above their quotas on a flavor whose lenders have W idle
    (their idle quota plus the unallocated pool), a lender with I idle is credited B x I / W per second. The
    flavor keeps the running integral of B / W, so a lender's credit is its idle amount times that integral's
    growth since its own idle amount last changed."""

    def __init__(self, timeline: Timeline) -> None:
        self.timeline = timeline
        # team -> list of (at, accelerators, vcpu in millicores) after each change
        self.points: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
        self.used = defaultdict(int)  # team -> accelerator-seconds
        self.borrowed = defaultdict(int)  # team -> accelerator-seconds above nominal
        self.lent: dict[str, float] = defaultdict(float)  # team -> accelerator-seconds lent
        self.cluster_used = 0
        self._integrate()

    def _integrate(self) -> None:
        tl = self.timeline
        start, end = tl.start, tl.end
        nominal = {(team, flavor): _accelerators(amounts) for team, q in tl.quotas.items()
                   for flavor, amounts in q.nominal.items()}
        lends = {team for team, q in tl.quotas.items() if q.lends}
        used: dict[tuple[str, str], int] = defaultdict(int)  # (team, flavor) -> accelerators
        since: dict[tuple[str, str], int] = {}  # (team, flavor) -> when its use last changed
        borrowed_on: dict[str, int] = defaultdict(int)  # flavor -> accelerators above the borrowers' quotas
        idle_on = {f: _accelerators(amounts) for f, amounts in tl.pool.items()}  # flavor -> lenders' idle + pool
        for (team, flavor), amount in nominal.items():
            if team in lends:
                idle_on[flavor] = idle_on.get(flavor, 0) + amount
        ratio: dict[str, float] = defaultdict(float)  # flavor -> integral of borrowed/idle up to ratio_at
        ratio_at: dict[str, int] = {}
        ratio_seen: dict[tuple[str, str], float] = {}  # (team, flavor) -> the flavor's integral when last settled
        totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])

        def clip(at: int) -> int:
            return min(max(at, start), end)

        def advance(flavor: str, at: int) -> None:
            last = ratio_at.get(flavor, start)
            if at > last and borrowed_on[flavor] and idle_on.get(flavor):
                ratio[flavor] += borrowed_on[flavor] * (at - last) / idle_on[flavor]
            ratio_at[flavor] = max(at, last)

        def settle(key: tuple[str, str], at: int) -> None:
            """Integrate one team's use of one flavor up to `at`."""
            team, flavor = key
            span = at - since.get(key, start)
            amount = used[key]
            if span > 0 and amount:
                self.used[team] += amount * span
                self.cluster_used += amount * span
                self.borrowed[team] += max(amount - nominal.get(key, 0), 0) * span
            if team in lends:
                idle = max(nominal.get(key, 0) - amount, 0)
                self.lent[team] += idle * (ratio[flavor] - ratio_seen.get(key, 0.0))
            ratio_seen[key] = ratio[flavor]
            since[key] = max(at, since.get(key, start))

        for at, team, flavor, delta in tl.usage_changes:
            moment = clip(at)
            key = (team, flavor)
            advance(flavor, moment)
            settle(key, moment)
            before = used[key]
            after = before + _accelerators(delta)
            used[key] = after
            quota = nominal.get(key, 0)
            borrowed_on[flavor] += max(after - quota, 0) - max(before - quota, 0)
            if team in lends:
                idle_on[flavor] = idle_on.get(flavor, 0) + max(quota - after, 0) - max(quota - before, 0)
            totals[team][0] += after - before
            totals[team][1] += delta.get("cpu", 0)
            self.points[team].append((at, *totals[team]))
        # Every lender is credited to the end, also one whose own use never changed.
        for key in set(used) | {key for key in nominal if key[0] in lends}:
            advance(key[1], end)
            settle(key, end)


def summarize(timeline: Timeline, choices: dict[str, Any], accelerators: int,
              partitions: dict[str, int] | None = None) -> dict[str, Any]:
    """The JSON document of `simulate --format json`. `accelerators`: the whole accelerators the cluster's groups
    give, each group once (capacity.most_accelerators, not the flavors' sum: a flexible group is a flavor of each
    of its types); `partitions`: its MIG partitions per "<profile> on <instance type>", which the utilisation (in
    whole accelerators) does not count."""
    series = _Series(timeline)
    jobs, waits = [], defaultdict(list)
    preempted, caused, unschedulable = defaultdict(int), defaultdict(int), defaultdict(int)
    for record in timeline.jobs:
        job = record.job
        jobs.append({"name": job.name, "team": job.team, "priority": job.priority_class,
                     "events": [event_json(e) for e in record.events]})
        admitted = next((e.at for e in record.events if e.event == "admitted"), None)
        if job.running_since is None and admitted is not None:
            waits[job.team].append(admitted - job.submit_at)
        for event in record.events:
            if event.event == "preempted":
                preempted[job.team] += 1
                caused[event.by_team or "?"] += 1
            elif event.event == "unschedulable":
                unschedulable[job.team] += 1
    hours = Fraction(1, HOUR)
    teams = []
    for team, quota in timeline.quotas.items():
        team_waits = waits.get(team, [])
        teams.append({
            "team": team,
            "quota": {flavor: _terms(amounts) for flavor, amounts in quota.nominal.items()
                      if any(amounts.values())},
            "accelerator_hours": {"used": _number(series.used[team] * hours),
                                  "borrowed": _number(series.borrowed[team] * hours),
                                  "lent": _number(round(series.lent[team] / HOUR, 3))},
            "waits": {"jobs": len(team_waits), "median_s": _median(team_waits),
                      "p95_s": _percentile(team_waits, 0.95)},
            "preemptions": {"suffered": preempted[team], "caused": caused[team]},
            "unschedulable": unschedulable[team],
            "usage": [{"at": at, "accelerators": acc, "vcpu": _number(Fraction(cpu, 1000))}
                      for at, acc, cpu in series.points.get(team, [])],
        })
    capacity = accelerators
    span = timeline.end - timeline.start
    names = {r.job.workload.key: f"{r.job.name} ({r.job.team})" for r in timeline.jobs}
    loop = None if timeline.loop is None else {"at": timeline.loop[0],
                                               "jobs": [names.get(key, key) for key in timeline.loop[1]]}
    return {
        "choices": choices,
        "window": {"start": timeline.start, "end": timeline.end},
        "loop": loop,
        "jobs": jobs,
        "teams": teams,
        "utilization": {
            "accelerators": capacity,
            "partitions": dict(partitions or {}),
            "accelerator_hours_used": _number(series.cluster_used * hours),
            "accelerator_hours_available": _number(capacity * span * hours),
            "ratio": _number(Fraction(series.cluster_used, capacity * span)) if capacity and span else None,
        },
    }


def _median(values: list[int]) -> int | float | None:
    return _number(Fraction(statistics.median(values))) if values else None


def _tenths(value: int | float) -> str:
    """An amount of hours for the table, to a tenth (the JSON keeps it exact): 45.333 -> 45.3, 30 -> 30."""
    return f"{value:.1f}".removesuffix(".0")


def _seconds(value: int | float | None) -> str:
    if value is None:
        return "-"
    value = float(value)
    if value < 120:
        return f"{value:g}s"
    if value < 2 * HOUR:
        return f"{value / 60:.1f}m"
    return f"{value / HOUR:.1f}h"


def _event_text(event: dict[str, Any]) -> str:
    kind = event["event"]
    if kind == "admitted":
        text = f"admitted on {event['flavor']}"
        borrowed = event.get("borrowed") or {}
        if borrowed:
            amounts = ", ".join(f"{amount} {term}" for term, amount in borrowed.items())
            text += f", borrowing {amounts}" + (f" from {', '.join(event['from'])}" if event.get("from") else "")
        return text
    if kind == "preempted":
        return f"preempted by {event.get('by')} ({event.get('reason')})"
    if kind == "unschedulable":
        return f"never admitted: {event.get('reason')}"
    return kind


def render(summary: dict[str, Any]) -> str:
    lines = ["jobs"]
    rows = [("at", "job", "team", "event")]
    events = sorted(((e["at"], e.get("seq", 0), job["name"], job["team"], e) for job in summary["jobs"]
                     for e in job["events"]), key=lambda row: (row[0], row[1]))
    rows += [(_seconds(at) if at >= 0 else f"-{_seconds(-at)}", name, team, _event_text(e))
             for at, _, name, team, e in events]
    lines.extend(aligned([tuple(printable(str(c)) for c in row) for row in rows], indent="  "))
    # each column's unit in its header: a quota of 12 accelerators beside 20 accelerator-hours used read as one unit
    lines.append("teams (waits from submission to first admission)")
    header = ("team", "quota (accelerators)", "used (acc-hours)", "borrowed (acc-hours)", "lent (acc-hours)",
              "wait median", "wait p95", "preempted", "preempting", "never admitted")
    rows = [header]
    for team in summary["teams"]:
        quota = sum(amounts.get("accelerators", 0) for amounts in team["quota"].values())
        hours = team["accelerator_hours"]
        rows.append((team["team"], str(quota), str(hours["used"]), str(hours["borrowed"]), str(hours["lent"]),
                     _seconds(team["waits"]["median_s"]), _seconds(team["waits"]["p95_s"]),
                     str(team["preemptions"]["suffered"]), str(team["preemptions"]["caused"]),
                     str(team["unschedulable"])))
    lines.extend(aligned(rows, indent="  "))
    util = summary["utilization"]
    ratio = "-" if util["ratio"] is None else f"{100 * util['ratio']:.1f} %"
    parts = ", ".join(f"{n} {where}" for where, n in util.get("partitions", {}).items())
    if util["accelerators"] or not parts:
        line = (f"cluster: {_tenths(util['accelerator_hours_used'])} accelerator-hours used of the "
                f"{_tenths(util['accelerator_hours_available'])} its {util['accelerators']} accelerators offer in "
                f"{_seconds(summary['window']['end'])} ({ratio})")
        lines.append(line + (f"; its MIG partitions ({parts}) are not counted here" if parts else ""))
    else:
        lines.append(f"cluster: its GPUs are all MIG partitions ({parts}) over {_seconds(summary['window']['end'])}; "
                     "the utilisation counts whole accelerators, so it has none to report")
    if summary.get("loop"):
        loop = summary["loop"]
        lines.append(f"stopped at {_seconds(loop['at'])}: Kueue admits and preempts {', '.join(loop['jobs'])} "
                     "again and again without settling (a preemption loop); nothing after it is simulated")
    choices = ", ".join(f"{k}={v}" for k, v in summary["choices"].items())
    lines.append(f"ran with: {choices}")
    return "\n".join(lines)


def render_batch(batch: dict[str, Any]) -> str:
    """The AWS Batch part: each job's events, then each share's use against its quota."""
    lines = ["AWS Batch jobs"]
    rows = [("at", "job", "queue", "share", "event")]
    for e in batch["events"]:
        what = e["event"]
        if what == "admitted":
            what = f"admitted on {e['instances']} instance(s)" + (
                f", borrowing {e['borrowed']} from " + ", ".join(f"{x['share']} {x['instances']}" for x in e["lenders"])
                if e["borrowed"] else "")
        elif what == "preempted":
            what = f"preempted by {e.get('by')} ({e.get('reason')})"
        elif what == "unschedulable":
            what = f"never runs: {e.get('reason')}"
        rows.append((_seconds(e["at"]), e["job"], e["queue"], e["share"] or "-", what))
    lines.extend(aligned(rows, indent="  "))
    lines.append("AWS Batch shares (instance-hours; quota/limit: - = not a quota share)")
    rows = [("queue", "share", "unit", "quota", "limit", "peak", "used", "borrowed", "lent", "wait median",
             "wait p95")]
    for s in batch["shares"]:
        rows.append((s["queue"], s["share"] or "-", s["unit"], "-" if s["quota"] is None else s["quota"],
                     "-" if s["limit"] is None else s["limit"], s["peak"], s["instance_hours"],
                     s["borrowed_instance_hours"], s["lent_instance_hours"], _seconds(s["median_wait"]),
                     _seconds(s["p95_wait"])))
    lines.extend(aligned(rows, indent="  "))
    options = ", ".join(f"{k}={v}" for k, v in batch["options"].items())
    lines.append(f"ran with: {options}")
    return "\n".join(lines)
