"""What `hyperpod-kit validate` shows of the `batch:` section next to the HyperPod capacity table: per service
environment and unit its capacity and what the quota shares on it hold together (the sum HPK710 checks),
and per queue its scheduling and shares. JSON keys are documented in README ("Teams on AWS Batch")."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from cdk_app.config.batch_model import Batch
from cdk_app.domain.batch_shares import environment_quota_entries, queue_fair_shares, quota_share_reach, teams_on


@dataclass(frozen=True, slots=True)
class BatchCapacityRow:
    service_environment: str
    unit: str
    capacity: int
    # Instances the quota shares on the environment's quota_share queues hold together; None when no
    # quota_share queue uses the environment (FIFO and fair-share queues reserve nothing).
    quota_shares: int | None

    def to_json(self) -> dict[str, object]:
        return {"service_environment": self.service_environment, "unit": self.unit, "capacity": self.capacity,
                "quota_shares": self.quota_shares}


@dataclass(frozen=True, slots=True)
class BatchShare:
    """One team's share of a queue: a share identifier and weight factor (fair_share), or a quota share on one
    unit with the most it reaches by borrowing while the others are idle (quota_share)."""

    team: str
    share_identifier: str | None = None
    weight_factor: float | None = None
    # fair_share: the share identifier's part of the queue while every identifier on it has jobs waiting.
    part: Fraction | None = None
    unit: str | None = None
    quota: int | None = None
    reach: int | None = None
    strategy: str | None = None

    def to_json(self) -> dict[str, object]:
        if self.unit is None:
            return {"team": self.team, "share_identifier": self.share_identifier, "weight_factor": self.weight_factor,
                    "percent": None if self.part is None else round(float(self.part) * 100, 2)}
        return {"team": self.team, "unit": self.unit, "quota": self.quota, "reach": self.reach,
                "strategy": self.strategy}


@dataclass(frozen=True, slots=True)
class BatchQueueRow:
    queue: str
    service_environment: str
    scheduling: str
    priority: int
    shares: tuple[BatchShare, ...] = field(default=())

    def to_json(self) -> dict[str, object]:
        return {"queue": self.queue, "service_environment": self.service_environment, "scheduling": self.scheduling,
                "priority": self.priority, "shares": [s.to_json() for s in self.shares]}


def batch_capacity(batch: Batch) -> list[BatchCapacityRow]:
    rows = []
    for env in batch.service_environments:
        entries = environment_quota_entries(batch, env.name)
        has_quota_queue = any(q.scheduling == "quota_share" and q.service_environment == env.name for q in batch.queues)
        for limit in env.capacity_limits:
            held = sum(entry.count for *_, entry in entries if entry.instance_type == limit.unit)
            rows.append(BatchCapacityRow(env.name, limit.unit, limit.max_capacity, held if has_quota_queue else None))
    return rows


def batch_queues(batch: Batch) -> list[BatchQueueRow]:
    rows = []
    for queue in batch.queues:
        shares: tuple[BatchShare, ...] = ()
        if queue.scheduling == "fair_share":
            parts = queue_fair_shares(batch, queue.name)
            shares = tuple(BatchShare(t.name, t.share_identifier, t.weight_factor, parts[t.share_identifier])
                           for t in teams_on(batch, queue.name) if t.share_identifier is not None)
        elif queue.scheduling == "quota_share":
            strategy = {t.name: t.sharing_strategy for t in batch.teams}
            shares = tuple(BatchShare(r.team, unit=r.unit, quota=r.quota, reach=r.reach, strategy=strategy[r.team])
                           for r in quota_share_reach(batch, queue.name))
        rows.append(BatchQueueRow(queue.name, queue.service_environment, queue.scheduling, queue.priority, shares))
    return rows
