"""The timeline: jobs are submitted, admitted, preempted and finish in simulated time, a Kueue scheduler
(cdk_app.simulate.kueue.api.Scheduler: the in-process one, or the real Kueue in the tests) deciding at each
moment something happens. Deterministic: events at one moment are taken in a fixed order (completions, then
submissions in the file's order), then the scheduler runs its cycles until nothing more changes.

A preempted job goes back to its queue and, when admitted again, starts its runtime over (nothing is
checkpointed in the model). The simulation ends when nothing runs and nothing more is submitted; a job still
pending then can never be admitted as the environment stands, and is reported unschedulable with Kueue's
message - it is not waited on.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass, field

from cdk_app.simulate.governance import QueueQuota
from cdk_app.simulate.kueue.api import Decision, NotSettled, Scheduler
from cdk_app.simulate.workloads import Job

FINISH, SUBMIT = 0, 1  # completions free quota before the moment's submissions are queued


class SimulationStuck(Exception):
    """The scheduler decided about a workload the timeline never submitted: a bug, reported as such."""


@dataclass(slots=True)
class JobEvent:
    at: int
    event: str  # submitted | admitted | preempted | finished | unschedulable
    flavor: str | None = None
    # admitted: how much of the job runs on borrowed quota, Kueue resource -> amount (Kueue's units)
    borrowed: dict[str, int] = field(default_factory=dict)
    # admitted while borrowing: the teams (and "unallocated") whose idle quota of the flavor was there to borrow
    lenders: tuple[str, ...] = ()
    by: str | None = None  # preempted: the job whose admission evicted it
    by_team: str | None = None
    reason: str | None = None  # preempted: Kueue's reason; unschedulable: Kueue's pending message
    message: str = ""
    seq: int = 0  # the order of all jobs' events as they happened (a preemption before its preemptor's admission)


@dataclass(slots=True)
class JobRecord:
    job: Job
    events: list[JobEvent] = field(default_factory=list)
    # With tracing (explain): (at, Kueue's pending message) whenever the message changes while it waits.
    pending: list[tuple[int, str]] = field(default_factory=list)


@dataclass(slots=True)
class Timeline:
    """Everything the reports need: per job its events, the usage changes in order, and the end."""

    jobs: list[JobRecord]
    quotas: dict[str, QueueQuota]  # per team
    pool: dict[str, dict[str, int]]  # the idle pool per flavor and resource
    capacity: dict[str, dict[str, int]]  # the cluster per flavor and resource (Kueue units)
    # (at, team, flavor, resource -> change) in order
    usage_changes: list[tuple[int, str, str, dict[str, int]]]
    start: int
    end: int
    decisions: list[Decision]
    # Kueue did not settle at this moment (a preemption loop): (at, the jobs it kept admitting and preempting).
    # The simulation stops there: what came after would depend on how long the loop lasts in a real cluster.
    loop: tuple[int, tuple[str, ...]] | None = None


def total_requests(job: Job) -> dict[str, int]:
    return {res: amount * pod_set.count for pod_set in job.workload.pod_sets for res, amount in pod_set.requests.items()}


def _flavor_of(decision: Decision) -> str | None:
    for resources in decision.flavors.values():
        for flavor in resources.values():
            return flavor
    return None


class _Run:
    def __init__(self, jobs: Iterable[Job], scheduler: Scheduler, quotas: dict[str, QueueQuota],
                 pool: dict[str, dict[str, int]], trace: bool) -> None:
        self.scheduler = scheduler
        self.trace = trace
        self.quotas = quotas
        self.pool = pool
        self.records = {job.workload.key: JobRecord(job) for job in jobs}
        self.team_of_queue = {q.cluster_queue: q.team for q in quotas.values()}
        self.heap: list[tuple[int, int, int, str, int]] = []
        self.seq = 0
        self.logged = 0
        self.generation: dict[str, int] = {}
        self.running: dict[str, tuple[str, int]] = {}  # key -> (flavor, admitted at)
        self.usage: dict[tuple[str, str], dict[str, int]] = {}  # (team, flavor) -> resource -> amount
        self.changes: list[tuple[int, str, str, dict[str, int]]] = []
        self.decisions: list[Decision] = []
        self.loop: tuple[int, tuple[str, ...]] | None = None

    def log(self, record: JobRecord, event: JobEvent) -> None:
        self.logged += 1
        event.seq = self.logged
        record.events.append(event)

    def push(self, at: int, kind: int, key: str) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (at, kind, self.seq, key, self.generation.get(key, 0)))

    def use(self, at: int, key: str, flavor: str, sign: int) -> None:
        record = self.records[key]
        delta = {res: sign * amount for res, amount in total_requests(record.job).items()}
        slot = self.usage.setdefault((record.job.team, flavor), {})
        for res, amount in delta.items():
            slot[res] = slot.get(res, 0) + amount
        self.changes.append((at, record.job.team, flavor, delta))

    def lenders(self, flavor: str, borrower: str, borrowed: dict[str, int]) -> tuple[str, ...]:
        """Who had idle quota of the flavor, in a resource the job borrows, when it was borrowed."""
        names = []
        for team, quota in self.quotas.items():
            if team == borrower or not quota.lends:
                continue
            used = self.usage.get((team, flavor), {})
            if any(used.get(res, 0) < quota.nominal.get(flavor, {}).get(res, 0) for res in borrowed):
                names.append(team)
        if any(self.pool.get(flavor, {}).get(res, 0) > 0 for res in borrowed):
            names.append("unallocated")
        return tuple(names)

    def apply(self, decision: Decision) -> None:
        record = self.records.get(decision.workload)
        if record is None:
            raise SimulationStuck(f"the scheduler decided about {decision.workload}, which was never submitted")
        key, at = decision.workload, decision.at
        if decision.event == "admitted":
            flavor = _flavor_of(decision)
            borrowed = {res: amount for per in decision.borrowed.values() for res, amount in per.items() if amount}
            self.log(record, JobEvent(at, "admitted", flavor=flavor, borrowed=borrowed,
                                          lenders=self.lenders(flavor, record.job.team, borrowed) if borrowed else ()))
            self.running[key] = (flavor, at)
            self.use(at, key, flavor, +1)
            self.push(at + record.job.runtime, FINISH, key)
        else:
            flavor, _ = self.running.pop(key)
            self.generation[key] = self.generation.get(key, 0) + 1  # its pending completion no longer happens
            self.use(at, key, flavor, -1)
            preemptor = self.records.get(decision.preemptor or "")
            self.log(record, JobEvent(at, "preempted", flavor=flavor,
                                          by=preemptor.job.name if preemptor else decision.preemptor,
                                          by_team=preemptor.job.team if preemptor else None,
                                          reason=decision.reason, message=decision.message))

    def note_pending(self, at: int) -> None:
        for key, message in self.scheduler.pending().items():
            record = self.records.get(key)
            if record is not None and (not record.pending or record.pending[-1][1] != message):
                record.pending.append((at, message))

    def restore(self, job: Job) -> None:
        key, since = job.workload.key, job.running_since
        flavor = job.instance_type
        self.scheduler.restore(job.workload, {ps.name: {res: flavor for res in ps.requests}
                                              for ps in job.workload.pod_sets}, since)
        record = self.records[key]
        quota = self.quotas.get(job.team)
        nominal = quota.nominal.get(flavor, {}) if quota else {}
        before = dict(self.usage.get((job.team, flavor), {}))
        self.running[key] = (flavor, since)
        self.use(since, key, flavor, +1)
        after = self.usage[job.team, flavor]
        # As the scheduler reports it for an admission: the job's usage above the team's nominal quota.
        borrowed = {res: max(after[res] - nominal.get(res, 0), 0) - max(before.get(res, 0) - nominal.get(res, 0), 0)
                    for res in after}
        borrowed = {res: amount for res, amount in borrowed.items() if amount}
        self.log(record, JobEvent(since, "submitted"))
        self.log(record, JobEvent(since, "admitted", flavor=flavor, borrowed=borrowed,
                                  lenders=self.lenders(flavor, job.team, borrowed) if borrowed else ()))
        self.push(since + job.runtime, FINISH, key)

    def run(self) -> int:
        end = 0
        while self.heap:
            at = self.heap[0][0]
            while self.heap and self.heap[0][0] == at:
                _, kind, _, key, generation = heapq.heappop(self.heap)
                if kind == FINISH:
                    if generation != self.generation.get(key, 0):
                        continue  # preempted since: this completion was cancelled
                    flavor, _ = self.running.pop(key)
                    self.scheduler.finish(key, at)
                    self.use(at, key, flavor, -1)
                    self.log(self.records[key], JobEvent(at, "finished", flavor=flavor))
                else:
                    self.scheduler.submit(self.records[key].job.workload)
                    self.log(self.records[key], JobEvent(at, "submitted"))
            try:
                decisions = self.scheduler.schedule(at)
            except NotSettled as err:
                involved = {d.workload for d in err.decisions} | {d.preemptor for d in err.decisions if d.preemptor}
                self.loop = (at, tuple(sorted(involved)))
                return at
            for decision in decisions:
                self.apply(decision)
            self.decisions.extend(decisions)
            if self.trace:
                self.note_pending(at)
            end = at
        for key, message in self.scheduler.pending().items():
            record = self.records.get(key)
            if record is not None:
                self.log(record, JobEvent(end, "unschedulable", reason=message))
        return end


def simulate(jobs: Iterable[Job], scheduler: Scheduler, quotas: dict[str, QueueQuota],
             pool: dict[str, dict[str, int]], capacity: dict[str, dict[str, int]], trace: bool = False) -> Timeline:
    """Replay the jobs on the scheduler until nothing more happens. The scheduler is the caller's to close.
    `trace` keeps each waiting job's pending messages as they change (what `explain` quotes)."""
    jobs = list(jobs)
    run = _Run(jobs, scheduler, quotas, pool, trace)
    for job in jobs:
        if job.running_since is not None:
            run.restore(job)
    for job in jobs:
        if job.running_since is None:
            run.push(job.submit_at, SUBMIT, job.workload.key)
    end = run.run()
    # The window reported on is [0, end]: a restored job's time before the start is history, not simulation.
    return Timeline(list(run.records.values()), quotas, pool, capacity, run.changes, 0, max(end, 0), run.decisions,
                    run.loop)
