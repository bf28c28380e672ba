"""Why a job waits or was preempted, in its team's terms: one sentence per reason, built from a traced
simulation (the cluster as it was at that moment: who used what, the team's quota and borrow limit, what
others had idle and who had borrowed it) with Kueue's own pending message quoted last."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from cdk_app.config.model import DEFAULT_BORROW_LIMIT, KitConfig
from cdk_app.domain.mig_profiles import RESOURCE_PREFIX
from cdk_app.domain.reach import sharing_enabled
from cdk_app.simulate.engine import JobRecord, Timeline, total_requests
from cdk_app.simulate.governance import TERMS, in_terms
from cdk_app.simulate.report import ACCELERATORS

MIG_RESOURCE = RESOURCE_PREFIX + "mig-"

REASONS = {
    "InClusterQueue": "a higher-priority job of its own team needed the team's quota",
    "InCohortReclamation": "the team it borrowed from took its quota back",
    "InCohortFairSharing": "fair sharing: a team with a smaller share of what it is owed needed the capacity",
    "InCohortReclaimWhileBorrowing": "a team reclaiming its quota while itself borrowing needed the capacity",
}


@dataclass(frozen=True, slots=True)
class Running:
    name: str
    team: str
    flavor: str
    amounts: dict[str, int]


def _main_resource(amounts: dict[str, int]) -> str:
    """The resource a sentence counts in: accelerators (or MIG partitions) when the job asks for any, else vCPU,
    else memory."""
    for res in amounts:
        if res in ACCELERATORS or res.startswith(MIG_RESOURCE):
            return res
    return "cpu" if "cpu" in amounts else next(iter(amounts))


def _words(resource: str, amount: int) -> str:
    value = in_terms(resource, amount)
    unit = {"accelerators": "accelerators", "vcpu": "vCPU", "memory_gib": "GiB", "efa": "EFA interfaces"}
    return f"{value} {unit[TERMS.get(resource, resource)]}" if resource in TERMS else f"{value} {resource}"


def running_at(timeline: Timeline, at: int, exclude: str | None = None) -> list[Running]:
    """The jobs admitted and not yet preempted or finished just before `at`'s decisions are applied."""
    out = []
    for record in timeline.jobs:
        flavor = None
        for event in record.events:
            if event.at >= at:
                break
            if event.event == "admitted":
                flavor = event.flavor
            elif event.event in ("preempted", "finished"):
                flavor = None
        if flavor is not None and record.job.workload.key != exclude:
            out.append(Running(record.job.name, record.job.team, flavor, total_requests(record.job)))
    return out


def _team_usage(running: list[Running]) -> dict[tuple[str, str], dict[str, int]]:
    usage: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for job in running:
        for res, amount in job.amounts.items():
            usage[job.team, job.flavor][res] += amount
    return usage


def waiting_sentences(config: KitConfig, timeline: Timeline, record: JobRecord, at: int) -> list[str]:
    """Why the job cannot be admitted at `at`, per flavor it could run on."""
    job = record.job
    need = total_requests(job)
    res = _main_resource(need)
    quota = timeline.quotas[job.team]
    running = running_at(timeline, at + 1, exclude=job.workload.key)
    usage = _team_usage(running)
    team = next((t for t in config.teams if t.name == job.team), None)
    flavors = [job.instance_type] if job.instance_type else sorted(quota.nominal)
    shape = f"{job.pods} pod{'s' if job.pods > 1 else ''}"
    sentences = []
    for flavor in flavors:
        nominal = quota.nominal.get(flavor, {}).get(res, 0)
        used = usage.get((job.team, flavor), {}).get(res, 0)
        mine = [r.name for r in running if r.team == job.team and r.flavor == flavor]
        text = (f"needs {_words(res, need[res])} of {flavor} ({shape}); team {job.team} has {_words(res, nominal)} "
                f"of quota there, {_words(res, used)} in use" + (f" by {', '.join(mine)}" if mine else ""))
        sentences.append(text + ".")
        short = need[res] - max(nominal - used, 0)
        if short <= 0:
            sentences.append(f"Its quota on {flavor} has room; it waits for its turn in the queue "
                             "(higher-priority or earlier jobs first) or for another resource it asks for.")
            continue
        limit = quota.borrowing_limit.get(flavor, {}).get(res)
        if not sharing_enabled(config):
            sentences.append("It cannot borrow: the cluster policy's idle_resource_sharing is Disabled.")
            continue
        if limit == 0:
            strategy = team.sharing_strategy if team else "Lend"
            sentences.append(f"It cannot borrow: team {job.team} is {strategy}, which does not borrow.")
            continue
        percent = (team.borrow_limit or DEFAULT_BORROW_LIMIT) if team else DEFAULT_BORROW_LIMIT
        borrowed_now = max(used - nominal, 0)
        room = None if limit is None else max(limit - borrowed_now, 0)
        # The limit is Kueue's borrowingLimit; what the others lend caps it further (the team's reach, as
        # `validate` and `team` show it), so the sentence says both.
        sentences.append(f"It would borrow {_words(res, short)}; its borrowing limit allows "
                         + (f"{_words(res, room)} more (borrow_limit {percent} %), as far as the others lend."
                            if room is not None else "what the others lend."))
        idle, borrowers = _cohort_idle(timeline, usage, flavor, res, job.team)
        lenders = ", ".join(f"{name} {in_terms(res, amount)}" for name, amount in idle.items() if amount > 0)
        sentences.append(f"Idle quota of {flavor} that it could borrow now: {_words(res, sum(idle.values()))}"
                         + (f" ({lenders})." if lenders else "."))
        for team_name, amount in sorted(borrowers.items()):
            jobs = ", ".join(r.name for r in running if r.flavor == flavor and r.team == team_name)
            sentences.append(f"Team {team_name} already borrows {_words(res, amount)} of {flavor} beyond its own "
                             f"quota (its jobs running there: {jobs}).")
    return sentences


def _cohort_idle(timeline: Timeline, usage: dict[tuple[str, str], dict[str, int]], flavor: str, res: str,
                 me: str) -> tuple[dict[str, int], dict[str, int]]:
    """Per lending team (and the unallocated pool) its idle quota of the flavor, and per borrowing team what it
    uses beyond its own quota there."""
    idle: dict[str, int] = {}
    borrowers: dict[str, int] = {}
    for team, quota in timeline.quotas.items():
        nominal = quota.nominal.get(flavor, {}).get(res, 0)
        used = usage.get((team, flavor), {}).get(res, 0)
        if used > nominal and team != me:
            borrowers[team] = used - nominal
        if team != me and quota.lends and nominal > used:
            idle[team] = nominal - used
    pool = timeline.pool.get(flavor, {}).get(res, 0)
    if pool:
        idle["unallocated"] = pool
    return idle, borrowers


def explain_job(config: KitConfig, timeline: Timeline, record: JobRecord) -> list[str]:
    """The job's story: each wait with its reasons, each preemption with its cause, in order."""
    job = record.job
    lines = []
    waiting_since: int | None = None
    pending = list(record.pending)
    for event in record.events:
        if event.event == "submitted":
            waiting_since = event.at
            if not any(e.event == "admitted" and e.at == event.at for e in record.events):
                lines.append(f"{event.at} s: submitted; it waits.")
                lines.extend("  " + s for s in waiting_sentences(config, timeline, record, event.at))
                lines.extend(_kueue_says(pending, event.at))
        elif event.event == "admitted":
            waited = "" if waiting_since is None else f" after waiting {event.at - waiting_since} s"
            borrowed = ", ".join(_words(res, amount) for res, amount in event.borrowed.items())
            lines.append(f"{event.at} s: admitted on {event.flavor}{waited}" + (
                f", borrowing {borrowed}" + (f" from {', '.join(event.lenders)}" if event.lenders else "")
                + ": borrowed capacity can be taken back, so the job can be preempted" if borrowed else "") + ".")
            waiting_since = None
        elif event.event == "preempted":
            why = REASONS.get(event.reason or "", event.reason or "")
            lines.append(f"{event.at} s: preempted by {event.by} of team {event.by_team} ({event.reason}: {why}); "
                         "it goes back to the queue and starts over when admitted again.")
            waiting_since = event.at
            lines.extend("  " + s for s in waiting_sentences(config, timeline, record, event.at))
            lines.extend(_kueue_says(pending, event.at))
        elif event.event == "finished":
            lines.append(f"{event.at} s: finished.")
        elif event.event == "unschedulable":
            lines.append(f"{event.at} s: never admitted - nothing more happens that would make room. "
                         f"Kueue: {event.reason}")
    if not lines:
        lines.append(f"job {job.name} of team {job.team} has no events")
    return lines


# Kueue's reasons that say only that a flavor is not this job's (flavorassigner.go's checkFlavorForPodSets):
# never why it waits on the flavors it can use.
_NOT_THIS_JOBS = re.compile(r"^(flavor \S+ doesn't match node affinity|untolerated taint .* in flavor \S+|"
                            r"flavor \S+ not found|skipping flavor .*)$")


def _kueue_says(pending: list[tuple[int, str]], at: int) -> list[str]:
    """Kueue's pending message, its deciding reasons first: the message lists every flavor tried, and a flavor
    the job cannot use (node affinity, a taint) is not why it waits."""
    said = [message for when, message in pending if when == at]
    if not said:
        return []
    message = said[-1]
    # One "couldn't assign flavors to pod set <name>: <reasons>" per pod set, joined with "; "; Kueue joins the
    # reasons with ", ", and a quota reason holds one itself ("in flavor X, 4 more needed").
    reasons = [reason for part in message.split("; ") if ": " in part
               for reason in re.split(r", (?=flavor |untolerated |insufficient |skipping |resource |could not )",
                                      part.partition(": ")[2])]
    deciding = list(dict.fromkeys(r for r in reasons if not _NOT_THIS_JOBS.match(r)))
    if not reasons or len(deciding) == len(reasons):
        return [f"  Kueue: {message}"]
    if deciding:
        return [f"  Kueue: {'; '.join(deciding)} (its whole message: {message})"]
    return [f"  Kueue: {message} - only flavors this job cannot use were tried in that pass (Kueue goes on from "
            "the flavor it last tried): the reasons it waits are those above, not this"]
