"""What an environment's AWS Batch queues will do with a list of SageMaker Training jobs: a deterministic
discrete-event simulation of its FIFO, fair-share and quota-share queues (`hyperpod-kit simulate`'s Batch part).

`parse_batch_jobs(batch, items, where)` reads the plain dicts of a workload file into `BatchJob`s (raising
`WorkloadError` for what Batch or the kit's roles would refuse) and lists the jobs that can never run as
"never runs" reasons; `simulate_batch(config_or_batch, jobs, options)` returns a `BatchResult`: per job its
events (submitted, admitted, preempted, finished, unschedulable) and per share its usage against its quota,
borrowed and lent instance-hours and waits. Capacities, borrow limits, weights and refusals are
cdk_app.domain.batch_shares' (the validator's and `batch-job`'s); nothing here re-derives them.

Documented by AWS (and how it is simulated):
- Quota shares hold instances of instance types ("capacity limits ... instance limits for supported SageMaker
  Training job instances types", https://docs.aws.amazon.com/batch/latest/userguide/quota-shares.html).
  RESERVE keeps idle capacity, LEND lends it, LEND_AND_BORROW lends and borrows up to borrowLimit percent of
  its capacity limit (-1 unlimited; botocore QuotaShareResourceSharingConfiguration) -> batch_shares.lends,
  batch_shares.borrow_allowance.
- "Quota management uses cross-share preemption to restore borrowed capacity back to a quota share when jobs
  arrive" and in-share preemption "allows higher priority RUNNABLE jobs to trigger preemptions of lower priority
  jobs within the same quota share" (https://docs.aws.amazon.com/batch/latest/userguide/preemption.html); seed
  004: priority-based preemption "only triggered when the ShareIdentifier reached its allotted capacity limit".
- "The default is for preempted jobs to be re-queued as RUNNABLE without limit" (same page).
- "Quota management is the only AWS Batch scheduling algorithm to incorporate preemption": fair-share and FIFO
  queues never preempt.
- idleResourceAssignmentStrategy: "how idle resources are assigned to quota shares that are borrowing capacity.
  Currently, only FIFO is supported" (botocore QuotaSharePolicy): borrowing jobs get idle capacity in
  submission order.
- Fair share: weightFactor "A lower value has a higher priority for compute resources ... a weight factor of
  0.125 (1/8) get 8 times the compute resources of ... a weight factor of 1" (botocore ShareAttributes) ->
  batch_shares.fair_share_fractions; computeReservation keeps (r/100)^ActiveFairShares of the capacity for share
  identifiers not in use (botocore FairsharePolicy) -> batch_shares.fair_share_usable; a share identifier is
  active while it has jobs SUBMITTED to RUNNING
  (https://docs.aws.amazon.com/batch/latest/userguide/fair-share-scheduling.html).
- Within a share (quota or fair), "Jobs with a higher scheduling priority are scheduled before jobs with a
  lower scheduling priority" (botocore UpdateServiceJob schedulingPriority); schedulingPriority "only affects
  jobs in job queues with a quota-share or fair-share scheduling policy", so a FIFO queue runs jobs in order.
- Queues on one service environment: "Job queues with a higher priority ... are evaluated first" (botocore
  CreateJobQueue priority).
- A RUNNABLE job that cannot run blocks the front of its queue until jobStateTimeLimitActions terminates it,
  "allowing the next job to advance to the head of the job queue"
  (https://docs.aws.amazon.com/batch/latest/userguide/sm_job_stuck_in_runnable.html); the kit writes that
  action from runnable_timeout_seconds. Disabled queues and quota shares accept no new jobs, a disabled service
  environment places none (batch_shares.queue_refusal, share_refusal, environment_refusal).

The kit's reading, where AWS is silent (the named ones are `BatchOptions` fields, default first):
- reclaim_victims ("lowest_priority" | "newest"): which borrowing job cross-share preemption stops. AWS: it
  "considers the number and type of instances a job is borrowing, relative priorities of the jobs and the
  duration of the jobs, and applies a custom heuristic". Default: only jobs of shares above their quota, the
  lowest priority first, then the most recently started (least work lost), one at a time until the lender's job
  fits.
- preempted_runtime ("restart" | "resume"): a preempted SageMaker training job starts again from the beginning
  (a new attempt) by default; "resume" runs only what was left, for jobs that checkpoint.
- backfill (False | True): the job at the head of a FIFO queue or of a share waits for its room and holds back
  the jobs behind it (Batch's "blocking the front of the queue"); True lets later jobs of that queue or share
  start around it. Shares of one queue never hold one another back.
- Borrowing comes before in-share preemption: a job of a full share borrows idle capacity if it can, and
  preempts its share's lower-priority jobs only when it cannot; it preempts none unless that makes it fit.
- Only the idle quota of LEND/LEND_AND_BORROW shares is lent; a service environment's capacity that no quota
  share holds is not (as batch_shares.quota_share_reach reads it). Which lender a borrowed instance comes from is
  reported by filling lenders in config order (borrowing is pooled: any lender's job reclaims from any borrower).
- Fair share picks the next job from the active share identifier with the least weighted usage (weightFactor x
  instances running now), ties to the lower weight, then the earlier head; shareDecaySeconds (past usage) is not
  simulated, so the shares' parts are those of current usage.
- A job's wait is from submission to its first admission; a preempted job keeps its place (priority, then
  submission) in its share. runnable_timeout_seconds counts from the moment a job becomes the head of its FIFO
  queue or share.
"""

from __future__ import annotations

import bisect
import dataclasses
import difflib
import heapq
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from cdk_app.config.batch_model import NUM_INSTANCES, Batch, BatchTeam, JobQueue
from cdk_app.config.model import KitConfig
from cdk_app.domain.batch_shares import (
    DEFAULT_WEIGHT_FACTOR,
    borrow_allowance,
    environment_named,
    environment_refusal,
    fair_share_fractions,
    fair_share_usable,
    lends,
    queue_refusal,
    quota_share_name,
    quota_share_reach,
    share_refusal,
    teams_on,
    training_instance_types,
)
from cdk_app.simulate.errors import WorkloadError
from cdk_app.simulate.workloads import MAX_SECONDS

JOB_KEYS = ("name", "queue", "share", "priority", "instances", "instance_type", "submit_at", "runtime")
REQUIRED_KEYS = ("name", "queue", "instances", "submit_at", "runtime")
MAX_SCHEDULING_PRIORITY = 9999  # botocore SubmitServiceJob schedulingPriority: 0-9999
# botocore SubmitServiceJob jobName: up to 128 letters (upper and lower case), numbers, hyphens and underscores.
BATCH_JOB_NAME = re.compile(r"[A-Za-z0-9_-]{1,128}")
# A SageMaker training job's InstanceCount is far below this; the bound keeps a typo from meaning 10**20 instances.
MAX_INSTANCES = 10_000
# A moment's scheduling passes beyond this many per job are admissions and preemptions undoing each other.
MAX_PASSES_PER_JOB = 20


class BatchNotSettled(Exception):
    """At one moment the queues keep admitting and preempting the same jobs (a loop of the kit's reading)."""

    def __init__(self, at: int, jobs: list[str]) -> None:
        super().__init__(f"the Batch queues do not settle at {at} s: {', '.join(jobs)} are admitted and preempted "
                         "again and again")
        self.at, self.jobs = at, jobs
EventKind = Literal["submitted", "admitted", "preempted", "finished", "unschedulable"]


@dataclass(frozen=True, slots=True)
class BatchJob:
    name: str
    queue: str
    share: str | None  # quota share name (quota_share queue) or share identifier (fair_share); None on FIFO
    priority: int  # schedulingPriority; 0 where the queue ignores it (FIFO)
    instances: int  # SageMaker instances the training job runs on (its InstanceCount)
    instance_type: str | None  # a capacity unit of the queue's environment; None on a NUM_INSTANCES environment
    submit_at: int  # seconds from the simulation's start
    runtime: int  # seconds it runs once admitted


@dataclass(frozen=True, slots=True)
class NeverRuns:
    index: int
    job: str
    reason: str


@dataclass(frozen=True, slots=True)
class ParsedBatchJobs:
    jobs: tuple[BatchJob, ...]
    # Jobs the environment can never give what they ask (a finding: `simulate` exits 1); they are still simulated.
    never_runs: tuple[NeverRuns, ...]


@dataclass(frozen=True, slots=True)
class BatchOptions:
    reclaim_victims: Literal["lowest_priority", "newest"] = "lowest_priority"
    preempted_runtime: Literal["restart", "resume"] = "restart"
    backfill: bool = False


@dataclass(frozen=True, slots=True)
class BatchEvent:
    at: int
    kind: EventKind
    job: str
    queue: str
    share: str | None
    instances: int = 0
    borrowed: int = 0  # admitted: instances above the share's quota this admission adds
    lenders: tuple[tuple[str, int], ...] = ()  # admitted: (lending share, instances) of what it borrows
    by: str | None = None  # preempted: the job it made room for
    reason: str = ""

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"at": self.at, "event": self.kind, "job": self.job, "queue": self.queue,
                                  "share": self.share}
        if self.kind == "admitted":
            out.update(instances=self.instances, borrowed=self.borrowed,
                       lenders=[{"share": s, "instances": n} for s, n in self.lenders])
        if self.by is not None:
            out["by"] = self.by
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True, slots=True)
class ShareStats:
    """One share of a queue on one unit: a quota share, a share identifier, or a FIFO queue (share None)."""

    queue: str
    share: str | None
    unit: str
    quota: int | None  # quota shares: the capacity limit
    limit: int | None  # quota shares: quota plus borrow allowance (None: unlimited borrowing or not a quota share)
    fraction: Fraction | None  # fair share: its part of the capacity while every configured identifier is active
    usage: tuple[tuple[int, int], ...]  # (time, instances) at each change
    peak: int
    instance_hours: float
    borrowed_instance_hours: float
    lent_instance_hours: float
    waits: tuple[int, ...]
    median_wait: float | None
    p95_wait: float | None

    def to_json(self) -> dict[str, object]:
        return {"queue": self.queue, "share": self.share, "unit": self.unit, "quota": self.quota,
                "limit": self.limit, "fraction": None if self.fraction is None else float(self.fraction),
                "usage": [list(step) for step in self.usage], "peak": self.peak,
                "instance_hours": round(self.instance_hours, 6),
                "borrowed_instance_hours": round(self.borrowed_instance_hours, 6),
                "lent_instance_hours": round(self.lent_instance_hours, 6), "median_wait": self.median_wait,
                "p95_wait": self.p95_wait, "jobs_admitted": len(self.waits)}


@dataclass(frozen=True, slots=True)
class BatchResult:
    events: tuple[BatchEvent, ...]
    shares: tuple[ShareStats, ...]
    end: int  # time of the last event
    # service environment -> unit -> (capacity, peak instances in use)
    environments: Mapping[str, Mapping[str, tuple[int, int]]] = field(default_factory=dict)
    options: BatchOptions = BatchOptions()
    # The queues did not settle at this moment (jobs admitted and preempted again and again): the run stopped there.
    loop: tuple[int, tuple[str, ...]] | None = None

    def unschedulable(self) -> tuple[BatchEvent, ...]:
        return tuple(e for e in self.events if e.kind == "unschedulable")

    def to_json(self) -> dict[str, object]:
        return {"end": self.end, "loop": None if self.loop is None else {"at": self.loop[0], "jobs": list(self.loop[1])},
                "options": {"reclaim_victims": self.options.reclaim_victims,
                                             "preempted_runtime": self.options.preempted_runtime,
                                             "backfill": self.options.backfill},
                "environments": {env: {unit: {"capacity": c, "peak": p} for unit, (c, p) in units.items()}
                                 for env, units in self.environments.items()},
                "shares": [s.to_json() for s in self.shares], "events": [e.to_json() for e in self.events]}


# ---------------------------------------------------------------------------------------------------- reading


def parse_batch_jobs(batch: Batch | None, items: object, where: tuple[str | int, ...] = ("batch_jobs",)
                     ) -> ParsedBatchJobs:
    """The workload file's Batch jobs (a list of mappings) checked against the environment's `batch:` section."""
    if batch is None:
        raise WorkloadError(where, "the environment has no batch: section, so it has no Batch queues to submit to")
    if not isinstance(items, list):
        raise WorkloadError(where, f"expected a list of jobs, got {_kind(items)}")
    jobs: list[BatchJob] = []
    never: list[NeverRuns] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        job = _parse_job(batch, item, where + (i,))
        if job.name in seen:
            raise WorkloadError(where + (i, "name"), f"job name '{job.name}' is used twice (first at index "
                                f"{seen[job.name]}); give each job its own name")
        seen[job.name] = i
        reason = never_runs_reason(batch, job)
        if reason is not None:
            never.append(NeverRuns(i, job.name, reason))
        jobs.append(job)
    return ParsedBatchJobs(tuple(jobs), tuple(never))


def _kind(value: object) -> str:
    return {bool: "true/false", int: "a whole number", float: "a number", str: "text", list: "a list",
            dict: "a mapping", type(None): "nothing"}.get(type(value), type(value).__name__)


def _whole(item: dict, key: str, path: tuple[str | int, ...], low: int, high: int | None = None) -> int:
    value = item[key]
    # bool is an int in Python, and 1.0 is not a whole number in a YAML file: both are refused by name.
    if type(value) is not int:
        raise WorkloadError(path + (key,), f"expected a whole number, got {_kind(value)} {value!r}")
    if value < low or (high is not None and value > high):
        allowed = f"{low}-{high}" if high is not None else f"at least {low}"
        raise WorkloadError(path + (key,), f"{value} is not allowed ({allowed})")
    return value


def _text(item: dict, key: str, path: tuple[str | int, ...]) -> str:
    value = item[key]
    if not isinstance(value, str) or not value:
        raise WorkloadError(path + (key,), f"expected non-empty text, got {_kind(value)} {value!r}")
    return value


def _parse_job(batch: Batch, item: object, path: tuple[str | int, ...]) -> BatchJob:
    if not isinstance(item, dict):
        raise WorkloadError(path, f"expected a mapping with keys {', '.join(REQUIRED_KEYS)}, got {_kind(item)}")
    for key in item:
        if key not in JOB_KEYS:
            near = difflib.get_close_matches(str(key), JOB_KEYS, n=1)
            raise WorkloadError(path + (str(key),), f"unknown key {key!r}" + (f" (did you mean {near[0]}?)" if near
                                else "") + f"; allowed: {', '.join(JOB_KEYS)}")
    missing = [k for k in REQUIRED_KEYS if k not in item]
    if missing:
        raise WorkloadError(path, f"missing {', '.join(missing)} (a job needs {', '.join(REQUIRED_KEYS)})")
    name = _text(item, "name", path)
    if not BATCH_JOB_NAME.fullmatch(name):
        raise WorkloadError(path + ("name",), f"{name!r} is not a Batch job name (up to 128 letters, digits, "
                            "hyphens and underscores)")
    queue_name = _text(item, "queue", path)
    i = next((i for i, q in enumerate(batch.queues) if q.name == queue_name), None)
    if i is None:
        raise WorkloadError(path + ("queue",), f"job queue '{queue_name}' is not in the environment; use one of: "
                            f"{', '.join(q.name for q in batch.queues)}")
    queue = batch.queues[i]
    refusal = queue_refusal(batch, queue_name)
    if refusal:
        raise WorkloadError(path + ("queue",), refusal)
    share, team = _parse_share(batch, queue, item, path)
    priority = 0
    if "priority" in item:
        if queue.scheduling == "fifo":
            raise WorkloadError(path + ("priority",), f"queue '{queue.name}' is FIFO: Batch's schedulingPriority "
                                "only affects quota-share and fair-share queues; remove priority")
        ceiling = team.max_priority if team is not None and team.max_priority is not None else MAX_SCHEDULING_PRIORITY
        priority = _whole(item, "priority", path, 0, ceiling)
    instances = _whole(item, "instances", path, 1, MAX_INSTANCES)
    instance_type = _parse_instance_type(batch, queue, item, path)
    return BatchJob(name=name, queue=queue_name, share=share, priority=priority, instances=instances,
                    instance_type=instance_type, submit_at=_whole(item, "submit_at", path, 0, MAX_SECONDS),
                    runtime=_whole(item, "runtime", path, 1, MAX_SECONDS))


def _parse_share(batch: Batch, queue: JobQueue, item: dict, path: tuple[str | int, ...]
                 ) -> tuple[str | None, BatchTeam | None]:
    """The share a job addresses, as SubmitServiceJob takes it: a quota share name on a quota_share queue, a share
    identifier on a fair_share queue ("If the job queue has a fair-share scheduling policy, then this parameter must
    be specified"), none on a FIFO queue. Only the shares the kit gives its teams are allowed (their roles may
    submit with no other)."""
    if queue.scheduling == "fifo":
        if "share" in item:
            raise WorkloadError(path + ("share",), f"queue '{queue.name}' is FIFO: it has no shares; remove share")
        return None, None
    teams = teams_on(batch, queue.name)
    by_share = ({quota_share_name(t): t for t in teams} if queue.scheduling == "quota_share"
                else {t.share_identifier: t for t in teams if t.share_identifier is not None})
    what = "quota share" if queue.scheduling == "quota_share" else "share identifier"
    if "share" not in item:
        raise WorkloadError(path, f"missing share: queue '{queue.name}' is {queue.scheduling}, so a job names its "
                            f"{what}: one of {', '.join(by_share) or '(none configured)'}")
    share = _text(item, "share", path)
    team = by_share.get(share)
    if team is None:
        raise WorkloadError(path + ("share",), f"'{share}' is not a {what} of queue '{queue.name}'; use one of: "
                            f"{', '.join(by_share) or '(none configured)'}")
    refusal = share_refusal(batch, team, queue.name)
    if refusal:
        raise WorkloadError(path + ("share",), refusal)
    return share, team


def _parse_instance_type(batch: Batch, queue: JobQueue, item: dict, path: tuple[str | int, ...]) -> str | None:
    env = environment_named(batch, queue.service_environment)
    units = [limit.unit for limit in env.capacity_limits] if env is not None else []
    if "instance_type" not in item:
        typed = [u for u in units if u != NUM_INSTANCES]
        if len(typed) > 1:
            raise WorkloadError(path, f"missing instance_type: service environment '{queue.service_environment}' "
                                f"counts {', '.join(typed)} apart; name one")
        return typed[0] if typed else None
    value = _text(item, "instance_type", path)
    if value not in training_instance_types():
        near = difflib.get_close_matches(value, sorted(training_instance_types()), n=1, cutoff=0.8)
        raise WorkloadError(path + ("instance_type",), f"{value!r} is not a SageMaker Training instance type"
                            + (f" (did you mean {near[0]}?)" if near else ""))
    return value


def job_unit(batch: Batch, job: BatchJob) -> str:
    """The capacity unit a job counts against: NUM_INSTANCES on such an environment, else its instance type."""
    queue = next(q for q in batch.queues if q.name == job.queue)
    env = environment_named(batch, queue.service_environment)
    if env is not None and any(limit.unit == NUM_INSTANCES for limit in env.capacity_limits):
        return NUM_INSTANCES
    return job.instance_type or ""


def never_runs_reason(batch: Batch, job: BatchJob) -> str | None:
    """Why the environment can never give `job` what it asks, even with every other job gone, or None."""
    queue = next(q for q in batch.queues if q.name == job.queue)
    refusal = environment_refusal(batch, queue.name)
    if refusal:
        return refusal
    env = environment_named(batch, queue.service_environment)
    if env is None:
        return f"queue '{queue.name}' has no service environment '{queue.service_environment}'"
    unit = job_unit(batch, job)
    capacity = {limit.unit: limit.max_capacity for limit in env.capacity_limits}
    if unit not in capacity:
        return (f"service environment '{env.name}' has no {unit} capacity (its units: {', '.join(capacity)}), "
                f"so a job on {unit} never runs there")
    if job.instances > capacity[unit]:
        return (f"needs {job.instances} instances of {unit}; service environment '{env.name}' has at most "
                f"{capacity[unit]}")
    if queue.scheduling == "quota_share":
        reach = {r.unit: r for r in quota_share_reach(batch, queue.name) if r.team == job.share}
        if unit not in reach:
            return (f"quota share '{job.share}' holds no {unit} (no capacity limit for it), so it can neither run nor "
                    "borrow it")
        row = reach[unit]
        if job.instances > row.reach:
            return (f"needs {job.instances} instances of {unit}; quota share '{job.share}' holds {row.quota} and may "
                    f"borrow at most {row.reach - row.quota} more while every other share is idle ({row.reach})")
    if queue.scheduling == "fair_share" and queue.compute_reservation:
        active = max(1, sum(1 for t in teams_on(batch, queue.name) if t.share_identifier is not None))
        usable = fair_share_usable(capacity[unit], queue.compute_reservation, active)
        if job.instances > usable:
            return (f"needs {job.instances} instances of {unit}; with compute_reservation "
                    f"{queue.compute_reservation} queue '{queue.name}' uses at most {usable} of {capacity[unit]} even "
                    f"with all its {active} share identifiers active")
    return None


# ---------------------------------------------------------------------------------------------------- simulating


class _Run:
    """A job's state in the simulation."""

    __slots__ = ("admitted_once", "generation", "index", "job", "key", "remaining", "started", "unit")

    def __init__(self, index: int, job: BatchJob, unit: str) -> None:
        self.index = index
        self.job = job
        self.unit = unit
        self.remaining = job.runtime
        self.started: int | None = None  # None while waiting
        self.generation = 0  # bumped on preemption, so its stale finish event is skipped
        self.admitted_once: int | None = None
        # Order in its lane: FIFO by submission; shares by priority, then submission.
        self.key = (-job.priority, job.submit_at, index)


class _Lane:
    """A FIFO queue or one share of a queue: its waiting jobs in order, and since when its head has waited."""

    __slots__ = ("head", "head_since", "waiting")

    def __init__(self) -> None:
        self.waiting: list[tuple[tuple[int, int, int], _Run]] = []
        self.head: _Run | None = None
        self.head_since = 0

    def push(self, run: _Run) -> None:
        bisect.insort(self.waiting, (run.key, run), key=lambda entry: entry[0])

    def remove(self, run: _Run) -> None:
        self.waiting.pop(bisect.bisect_left(self.waiting, run.key, key=lambda entry: entry[0]))

    def candidates(self, backfill: bool) -> list[_Run]:
        return [r for _, r in self.waiting] if backfill else [self.waiting[0][1]] if self.waiting else []


class _Share:
    """Accounting of one lane of a queue: usage per unit, and for a quota share its quota and what it may borrow."""

    def __init__(self, name: str | None, team: BatchTeam | None = None, weight: float = DEFAULT_WEIGHT_FACTOR) -> None:
        self.name = name
        self.team = team
        self.lane = _Lane()
        self.weight = Fraction(str(weight))
        self.quota = {q.instance_type: q.count for q in team.quota} if team is not None else {}
        self.lends = team is not None and lends(team)
        self.in_share = team is not None and team.preempt_team_tasks == "LowerPriority"
        self.usage: dict[str, int] = {}
        self.running: dict[int, _Run] = {}
        # unit -> [instance-seconds, borrowed instance-seconds, lent instance-seconds]
        self.seconds: dict[str, list[int]] = {}
        self.steps: dict[str, list[tuple[int, int]]] = {}

    def allowance(self, unit: str) -> int | None:
        return borrow_allowance(self.team, self.quota.get(unit, 0)) if self.team is not None else None

    def over(self, unit: str, usage: int | None = None) -> int:
        return max(0, (self.usage.get(unit, 0) if usage is None else usage) - self.quota.get(unit, 0))


class _Queue:
    def __init__(self, queue: JobQueue, batch: Batch, order: int) -> None:
        self.queue = queue
        self.order = order
        self.kind = queue.scheduling
        teams = [t for t in teams_on(batch, queue.name)]
        if self.kind == "quota_share":
            self.shares = {quota_share_name(t): _Share(quota_share_name(t), t) for t in teams}
        elif self.kind == "fair_share":
            self.shares = {t.share_identifier: _Share(t.share_identifier, weight=t.weight_factor or
                                                      DEFAULT_WEIGHT_FACTOR)
                           for t in teams if t.share_identifier is not None}
        else:
            self.shares = {None: _Share(None)}

    def used(self, unit: str) -> int:
        return sum(s.usage.get(unit, 0) for s in self.shares.values())


class _Simulation:
    def __init__(self, batch: Batch, jobs: Sequence[BatchJob], options: BatchOptions) -> None:
        self.batch = batch
        self.options = options
        self.events: list[BatchEvent] = []
        self.queues = {q.name: _Queue(q, batch, i) for i, q in enumerate(batch.queues)}
        # service environment -> unit -> capacity (0 on a disabled one: Batch places nothing there)
        self.capacity = {e.name: {limit.unit: (limit.max_capacity if e.enabled else 0) for limit in e.capacity_limits}
                         for e in batch.service_environments}
        self.env_used: dict[str, dict[str, int]] = {e: {} for e in self.capacity}
        self.env_peak: dict[str, dict[str, int]] = {e: {} for e in self.capacity}
        self.env_queues = {e: sorted((q for q in self.queues.values() if q.queue.service_environment == e),
                                     key=lambda q: (-q.queue.priority, q.order)) for e in self.capacity}
        self.runs = [_Run(i, job, job_unit(batch, job)) for i, job in enumerate(jobs)]
        self.finishing: list[tuple[int, int, int]] = []  # (time, job index, generation)
        self.now = 0
        self.last_account: dict[str, int] = {e: 0 for e in self.capacity}
        self.fraction = self._fractions()

    def _fractions(self) -> dict[tuple[str, str], Fraction]:
        parts = {}
        for q in self.queues.values():
            if q.kind == "fair_share":
                for share, part in fair_share_fractions({s: float(v.weight) for s, v in q.shares.items()}).items():
                    parts[(q.queue.name, share)] = part
        return parts

    # -- the timeline

    def run(self) -> None:
        order = sorted(self.runs, key=lambda r: (r.job.submit_at, r.index))
        nxt = 0
        while True:
            times = [t for t in (order[nxt].job.submit_at if nxt < len(order) else None,
                                 self.finishing[0][0] if self.finishing else None, self._next_timeout())
                     if t is not None]
            if not times:
                break
            self.now = min(times)
            # Completions free capacity before the jobs submitted at the same second are considered.
            while self.finishing and self.finishing[0][0] == self.now:
                _, index, generation = heapq.heappop(self.finishing)
                run = self.runs[index]
                if run.generation == generation and run.started is not None:
                    self._stop(run, "finished")
            while nxt < len(order) and order[nxt].job.submit_at == self.now:
                run = order[nxt]
                nxt += 1
                self._event("submitted", run)
                self._share(run).lane.push(run)
            self._expire_heads()
            self._schedule()
        for run in self.runs:
            if run.started is None and self._is_waiting(run):
                self._event("unschedulable", run, reason=self._stuck_reason(run))

    def _queue(self, run: _Run) -> _Queue:
        return self.queues[run.job.queue]

    def _share(self, run: _Run) -> _Share:
        return self._queue(run).shares[run.job.share]

    def _is_waiting(self, run: _Run) -> bool:
        lane = self._share(run).lane
        i = bisect.bisect_left(lane.waiting, run.key, key=lambda entry: entry[0])
        return i < len(lane.waiting) and lane.waiting[i][1] is run

    def _event(self, kind: EventKind, run: _Run, **extra: object) -> None:
        self.events.append(BatchEvent(self.now, kind, run.job.name, run.job.queue, run.job.share, **extra))

    # -- heads that wait too long (runnable_timeout_seconds)

    def _lanes(self):
        for q in self.queues.values():
            if q.queue.runnable_timeout_seconds is not None:
                for share in q.shares.values():
                    yield q.queue.runnable_timeout_seconds, share.lane

    def _next_timeout(self) -> int | None:
        due = [lane.head_since + timeout for timeout, lane in self._lanes() if lane.head is not None]
        return min(due) if due else None

    def _expire_heads(self) -> None:
        for timeout, lane in self._lanes():
            if lane.head is not None and lane.waiting[0][1] is lane.head and lane.head_since + timeout <= self.now:
                run = lane.head
                lane.remove(run)
                self._event("unschedulable", run, reason=f"terminated after {timeout} s RUNNABLE at the head of "
                            f"{self._where(run)} (runnable_timeout_seconds of queue '{run.job.queue}')")
        self._mark_heads()

    def _mark_heads(self) -> None:
        """A lane's head timer runs from the moment that job became its head (a new head starts it again)."""
        for _, lane in self._lanes():
            head = lane.waiting[0][1] if lane.waiting else None
            if head is not lane.head:
                lane.head, lane.head_since = head, self.now

    # -- scheduling passes

    def _schedule(self) -> None:
        progress = True
        passes = 0
        while progress:
            passes += 1
            if passes > MAX_PASSES_PER_JOB * (len(self.runs) + 1):
                # Admissions and preemptions that undo each other at one moment: report it, never spin.
                raise BatchNotSettled(self.now, sorted({e.job for e in self.events[-50:] if e.at == self.now}))
            progress = False
            for env, queues in self.env_queues.items():
                for q in queues:
                    step = {"fifo": self._fifo, "fair_share": self._fair, "quota_share": self._quota}[q.kind]
                    if step(env, q):
                        progress = True
                        break  # a higher-priority queue of the environment goes first again
        self._mark_heads()

    def _free(self, env: str, unit: str) -> int:
        return self.capacity[env].get(unit, 0) - self.env_used[env].get(unit, 0)

    def _fifo(self, env: str, q: _Queue) -> bool:
        for run in q.shares[None].lane.candidates(self.options.backfill):
            if run.job.instances <= self._free(env, run.unit):
                self._start(env, q, run)
                return True
        return False

    def _fair(self, env: str, q: _Queue) -> bool:
        active = [s for s in q.shares.values() if s.lane.waiting or s.running]
        lanes = sorted((s for s in active if s.lane.waiting),
                       key=lambda s: (s.weight * sum(s.usage.values()), s.weight, s.lane.waiting[0][0]))
        for share in lanes:
            for run in share.lane.candidates(self.options.backfill):
                usable = fair_share_usable(self.capacity[env].get(run.unit, 0), q.queue.compute_reservation,
                                           len(active))
                if (run.job.instances <= self._free(env, run.unit)
                        and q.used(run.unit) + run.job.instances <= usable):
                    self._start(env, q, run)
                    return True
            if not self.options.backfill:
                return False  # the share whose turn it is waits for room; the others wait behind it
        return False

    # -- quota shares

    def _quota(self, env: str, q: _Queue) -> bool:
        # Jobs within their share's quota first (they may reclaim), then borrowing ones in submission order
        # (idleResourceAssignmentStrategy FIFO).
        heads = [run for share in q.shares.values() for run in share.lane.candidates(self.options.backfill)]
        heads.sort(key=lambda r: (self._share(r).over(r.unit, self._share(r).usage.get(r.unit, 0) + r.job.instances)
                                  > 0, r.job.submit_at, r.index))
        for run in heads:
            if self._admit_quota(env, q, run):
                return True
        return False

    def _fits(self, env: str, q: _Queue, unit: str, change: Mapping[str, int]) -> bool:
        """Whether the shares of `q` may use `unit` with usage changed by `change` (share -> instances)."""
        borrowed = lendable = total = 0
        for name, share in q.shares.items():
            use = share.usage.get(unit, 0) + change.get(name, 0)
            quota = share.quota.get(unit, 0)
            over = max(0, use - quota)
            allowance = share.allowance(unit)
            if use > 0 and unit not in share.quota or (allowance is not None and over > allowance):
                return False
            borrowed += over
            lendable += max(0, quota - use) if share.lends else 0
            total += use
        others = self.env_used[env].get(unit, 0) - q.used(unit)
        return borrowed <= lendable and total + others <= self.capacity[env].get(unit, 0)

    def _admit_quota(self, env: str, q: _Queue, run: _Run) -> bool:
        share, unit, n = self._share(run), run.unit, run.job.instances
        if self._fits(env, q, unit, {share.name: n}):
            self._start(env, q, run)
            return True
        plan = self._reclaim(env, q, run, [])
        if plan is None and share.in_share:
            plan = self._in_share(env, q, run)
        if plan is None:
            return False
        for victim, reason in plan:
            self._preempt(victim, run, reason)
        self._start(env, q, run)
        return True

    def _reclaim(self, env: str, q: _Queue, run: _Run, already: list[tuple[_Run, str]]
                 ) -> list[tuple[_Run, str]] | None:
        """Cross-share preemption for a job that fits its share's own quota (after `already` are stopped): borrowing
        jobs of other shares, one by one, until it fits; None when it does not fit its quota or cannot be made to."""
        share, unit, n = self._share(run), run.unit, run.job.instances
        change = {share.name: n - sum(v.job.instances for v, _ in already)}
        if share.usage.get(unit, 0) + change[share.name] > share.quota.get(unit, 0):
            return None
        plan = list(already)
        stopped: set[int] = {v.index for v, _ in plan}
        while not self._fits(env, q, unit, change):
            victim = self._reclaim_victim(q, unit, change, stopped, share)
            if victim is None:
                return None
            plan.append((victim, f"reclaimed: quota share '{victim.job.share}' runs above its quota of {unit} on "
                         f"borrowed capacity, and quota share '{share.name}' needs its own back"))
            change[victim.job.share] = change.get(victim.job.share, 0) - victim.job.instances
            stopped.add(victim.index)
        return plan

    def _reclaim_victim(self, q: _Queue, unit: str, change: Mapping[str, int], stopped: set[int], claimant: _Share
                        ) -> _Run | None:
        order: Callable[[_Run], tuple[int, ...]] = (
            (lambda r: (r.job.priority, -(r.started or 0), -r.index)) if self.options.reclaim_victims == "lowest_priority"
            else (lambda r: (-(r.started or 0), r.job.priority, -r.index)))
        candidates = [r for s in q.shares.values() if s is not claimant
                      and s.over(unit, s.usage.get(unit, 0) + change.get(s.name, 0)) > 0
                      for r in s.running.values() if r.unit == unit and r.index not in stopped]
        return min(candidates, key=order) if candidates else None

    def _in_share(self, env: str, q: _Queue, run: _Run) -> list[tuple[_Run, str]] | None:
        """In-share preemption: the share's lower-priority jobs, lowest priority (then newest) first, fewest that make
        the job fit (borrowing, or its own quota with borrowed capacity reclaimed); None if all of them would not."""
        share, unit = self._share(run), run.unit
        lower = sorted((r for r in share.running.values() if r.unit == unit and r.job.priority < run.job.priority),
                       key=lambda r: (r.job.priority, -(r.started or 0), -r.index))
        plan: list[tuple[_Run, str]] = []
        for victim in lower:
            plan.append((victim, f"in-share preemption: quota share '{share.name}' is full and job "
                         f"'{run.job.name}' has priority {run.job.priority} > {victim.job.priority}"))
            freed = sum(v.job.instances for v, _ in plan)
            if self._fits(env, q, unit, {share.name: run.job.instances - freed}):
                return plan
            reclaimed = self._reclaim(env, q, run, plan)
            if reclaimed is not None:
                return reclaimed
        return None

    # -- starting and stopping

    def _account(self, env: str) -> None:
        """Integrate every share's usage, borrowing and lending of `env` since the last change."""
        dt = self.now - self.last_account[env]
        self.last_account[env] = self.now
        if dt == 0:
            return
        for q in self.env_queues[env]:
            lent = self._lent(q) if q.kind == "quota_share" else {}
            for share in q.shares.values():
                for unit in set(share.usage) | set(share.quota):
                    seconds = share.seconds.setdefault(unit, [0, 0, 0])
                    seconds[0] += share.usage.get(unit, 0) * dt
                    seconds[1] += share.over(unit) * dt if q.kind == "quota_share" else 0
                    seconds[2] += lent.get((share.name, unit), 0) * dt

    def _lent(self, q: _Queue) -> dict[tuple[str | None, str], int]:
        """What each lender lends now, per unit: the borrowed total filled into the lenders' idle quota in config
        order (borrowing is pooled; this is how the kit attributes it)."""
        out: dict[tuple[str | None, str], int] = {}
        units = {u for s in q.shares.values() for u in s.quota}
        for unit in units:
            left = sum(s.over(unit) for s in q.shares.values())
            for s in q.shares.values():
                if left and s.lends:
                    take = min(left, max(0, s.quota.get(unit, 0) - s.usage.get(unit, 0)))
                    out[(s.name, unit)] = take
                    left -= take
        return out

    def _lenders(self, q: _Queue, run: _Run, borrowed: int) -> tuple[tuple[str, int], ...]:
        """The lenders of `borrowed` instances a job is about to borrow: after what others already borrow."""
        if not borrowed:
            return ()
        unit = run.unit
        before = self._lent(q)
        idle = [(s.name, max(0, s.quota.get(unit, 0) - s.usage.get(unit, 0)) - before.get((s.name, unit), 0))
                for s in q.shares.values() if s.lends and s is not self._share(run)]
        out = []
        for name, free in idle:
            take = min(borrowed, free)
            if take > 0:
                out.append((name, take))
                borrowed -= take
        return tuple(out)

    def _change(self, env: str, q: _Queue, run: _Run, delta: int) -> None:
        self._account(env)
        share = self._share(run)
        share.usage[run.unit] = share.usage.get(run.unit, 0) + delta
        share.steps.setdefault(run.unit, []).append((self.now, share.usage[run.unit]))
        used = self.env_used[env][run.unit] = self.env_used[env].get(run.unit, 0) + delta
        self.env_peak[env][run.unit] = max(self.env_peak[env].get(run.unit, 0), used)

    def _start(self, env: str, q: _Queue, run: _Run) -> None:
        share = self._share(run)
        share.lane.remove(run)
        before = share.over(run.unit)
        borrowed = share.over(run.unit, share.usage.get(run.unit, 0) + run.job.instances) - before
        lenders = self._lenders(q, run, borrowed) if q.kind == "quota_share" else ()
        self._change(env, q, run, run.job.instances)
        run.started = self.now
        share.running[run.index] = run
        if run.admitted_once is None:
            run.admitted_once = self.now
        heapq.heappush(self.finishing, (self.now + run.remaining, run.index, run.generation))
        self._event("admitted", run, instances=run.job.instances, borrowed=borrowed if q.kind == "quota_share" else 0,
                    lenders=lenders)

    def _stop(self, run: _Run, kind: EventKind, **extra: object) -> None:
        q = self._queue(run)
        self._change(q.queue.service_environment, q, run, -run.job.instances)
        del self._share(run).running[run.index]
        if kind == "preempted" and self.options.preempted_runtime == "resume":
            run.remaining -= self.now - (run.started or 0)
        run.started = None
        run.generation += 1
        self._event(kind, run, **extra)

    def _preempt(self, victim: _Run, by: _Run, reason: str) -> None:
        self._stop(victim, "preempted", by=by.job.name, reason=reason)
        # Batch re-queues a preempted job as RUNNABLE (no preemptionRetriesBeforeTermination: without limit).
        self._share(victim).lane.push(victim)

    # -- what is left at the end

    def _where(self, run: _Run) -> str:
        return (f"queue '{run.job.queue}'" if run.job.share is None
                else f"share '{run.job.share}' of queue '{run.job.queue}'")

    def _stuck_reason(self, run: _Run) -> str:
        never = never_runs_reason(self.batch, run.job)
        if never:
            return never
        lane = self._share(run).lane
        head = lane.waiting[0][1]
        if head is not run:
            return (f"waits RUNNABLE behind job '{head.job.name}' at the head of {self._where(run)}, which never runs: "
                    f"{self._stuck_reason(head)}")
        q = self._queue(run)
        blocker = next((s.lane.waiting[0][1] for s in q.shares.values()
                        if s.lane.waiting and s.lane.waiting[0][1] is not run
                        and never_runs_reason(self.batch, s.lane.waiting[0][1].job)), None)
        if blocker is not None and q.kind == "fair_share":
            return (f"queue '{q.queue.name}' waits for job '{blocker.job.name}' of share "
                    f"'{blocker.job.share}', which never runs")
        return f"still RUNNABLE when nothing else changes in {self._where(run)}"

    # -- the result

    def result(self) -> BatchResult:
        for env in self.capacity:
            self._account(env)
        shares = []
        for q in self.queues.values():
            for share in q.shares.values():
                for unit in sorted(set(share.quota) | set(share.steps) | ({self._unit_of(q)} - {""})):
                    shares.append(self._stats(q, share, unit))
        environments = {env: {unit: (self.capacity[env][unit], self.env_peak[env].get(unit, 0)) for unit in units}
                        for env, units in self.capacity.items()}
        return BatchResult(tuple(self.events), tuple(shares), self.now, environments, self.options)

    def _unit_of(self, q: _Queue) -> str:
        """A queue's unit when its environment counts NUM_INSTANCES (so an idle FIFO queue still gets its row)."""
        units = self.capacity.get(q.queue.service_environment, {})
        return NUM_INSTANCES if NUM_INSTANCES in units else ""

    def _stats(self, q: _Queue, share: _Share, unit: str) -> ShareStats:
        quota = share.quota.get(unit) if q.kind == "quota_share" else None
        allowance = share.allowance(unit) if quota is not None else None
        seconds = share.seconds.get(unit, [0, 0, 0])
        steps = share.steps.get(unit, [])
        waits = sorted(r.admitted_once - r.job.submit_at for r in self.runs
                       if r.admitted_once is not None and r.unit == unit and r.job.queue == q.queue.name
                       and r.job.share == share.name)
        return ShareStats(
            queue=q.queue.name, share=share.name, unit=unit, quota=quota,
            limit=None if quota is None or allowance is None else quota + allowance,
            fraction=self.fraction.get((q.queue.name, share.name)) if share.name is not None else None,
            usage=tuple(_collapse(steps)), peak=max((n for _, n in steps), default=0),
            instance_hours=seconds[0] / 3600, borrowed_instance_hours=seconds[1] / 3600,
            lent_instance_hours=seconds[2] / 3600, waits=tuple(waits), median_wait=_percentile(waits, 50),
            p95_wait=_percentile(waits, 95))


def _collapse(steps: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """One step per time: the usage once everything at that second is done."""
    out: list[tuple[int, int]] = []
    for t, n in steps:
        if out and out[-1][0] == t:
            out[-1] = (t, n)
        else:
            out.append((t, n))
    return out


def _percentile(values: Sequence[int], percent: int) -> float | None:
    """Nearest-rank percentile of sorted values (the median of an even count is the mean of the middle two)."""
    if not values:
        return None
    if percent == 50:
        mid = len(values) // 2
        return float(values[mid]) if len(values) % 2 else (values[mid - 1] + values[mid]) / 2
    return float(values[max(0, math.ceil(percent / 100 * len(values)) - 1)])


def simulate_batch(config: KitConfig | Batch, jobs: Sequence[BatchJob], options: BatchOptions = BatchOptions()
                   ) -> BatchResult:
    """Run `jobs` (from parse_batch_jobs) through the environment's Batch queues; deterministic for equal input."""
    batch = config.batch if isinstance(config, KitConfig) else config
    if batch is None:
        raise ValueError("the environment has no batch: section")
    simulation = _Simulation(batch, jobs, options)
    try:
        simulation.run()
    except BatchNotSettled as err:  # stop there, as the Kueue timeline does on a preemption loop
        return dataclasses.replace(simulation.result(), loop=(err.at, tuple(err.jobs)))
    return simulation.result()
