"""Rolling AMI updates of instance groups: how many instances a batch takes out of a group, and whether the
group's instance type still covers the teams' quotas while it is out - the one rule `validate` (HPK520, HPK521)
and `plan` follow.

A batch takes its instances down and reboots them onto the new AMI (AWS's update-cluster-software guide for EKS:
the nodes are NotReady while they update, and HyperPod does not drain or move the pods running on them), so for its duration
the instance type has that many instances fewer. The quota that only this group can serve is what the enabled
teams reserve on the type minus what the type's other groups hold: the type's capacity minus the batch must
still cover the teams' quotas, in every dimension (cdk_app.domain.capacity: instances, accelerators, vCPU,
memory). The shared pool's quota is left out: it is the kit's name for what the teams leave, not a promise.

Groups of one type whose scheduled updates ever start at the same minute roll together then: their batches add
up (`alongside`). Two schedules start together when their dates meet, whatever their text (cron(0 4 ? * SUN *)
and cron(0 4 ? * 1#1 *) on every first Sunday), judged by cdk_app.domain.cron_schedules.first_overlap.

A percent batch (CAPACITY_PERCENTAGE) is counted rounded up and at least one instance: AWS documents no
rounding, so the kit counts the larger batch SageMaker could take (25 % of 6 instances is 2, 1 % of 6 is 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from cdk_app.config.model import BatchSize, InstanceGroup, KitConfig
from cdk_app.domain.capacity import (
    DIMENSIONS,
    Resources,
    cluster_capacity,
    config_shares,
    group_maximum,
    per_instances,
    team_groups,
    teams_total,
)
from cdk_app.domain.cron_schedules import Cron, first_overlap, parse_cron
from cdk_app.domain.instance_types import CATALOGUE


def batch_instances(size: BatchSize, count: int) -> int:
    """Instances one batch of `size` takes out of a group of `count`: never more than the group, a percent
    rounded up (at least one instance of a group that has any)."""
    if count <= 0:
        return 0
    if size.type == "INSTANCE_COUNT":
        return min(size.value, count)
    return min(max(-(-count * size.value // 100), 1), count)


def schedule_of(group: InstanceGroup) -> Cron | str | None:
    """The group's update schedule by its meaning (cdk_app.domain.cron_schedules: cron(0 04 ? * 1 *) is
    cron(0 4 ? * SUN *)); the text itself when it cannot be read; None without a scheduled update."""
    if group.scheduled_update is None:
        return None
    expression = group.scheduled_update.schedule_expression
    return parse_cron(expression) or expression


def first_start_together(a: Cron | str, b: Cron | str, now: datetime) -> datetime | str | None:
    """When two update schedules first start at the same minute from `now` (UTC) on; for a schedule the kit
    cannot read, its text when the other is the same text (they start whenever it does); None when never."""
    if isinstance(a, Cron) and isinstance(b, Cron):
        return first_overlap(a, b, now)
    return a if a == b else None


def scheduled_alongside(groups: tuple[InstanceGroup, ...], group: InstanceGroup, now: datetime) -> int:
    """Instances the other groups of `group`'s type take out when its scheduled update runs: the update batches
    of those whose schedules ever start with its own from `now` on."""
    schedule = schedule_of(group)
    if schedule is None:
        return 0
    return sum(batch_instances(other.scheduled_update.deployment.maximum_batch_size, group_maximum(other))
               for other in groups if other is not group and other.instance_type == group.instance_type
               and other.scheduled_update is not None
               and first_start_together(schedule_of(other), schedule, now) is not None)


def batch_text(size: BatchSize, count: int) -> str:
    """How the batch was counted, for messages: "2 instances (25 % of 6, rounded up)"."""
    taken = batch_instances(size, count)
    noun = "instance" if taken == 1 else "instances"
    if size.type == "INSTANCE_COUNT":
        capped = f" (the whole group: it has {count})" if size.value > count else ""
        return f"{taken} {noun}{capped}"
    return f"{taken} {noun} ({size.value} % of {count}, rounded up)"


@dataclass(frozen=True, slots=True)
class RollingBatch:
    """One rolling deployment of one instance group, against the teams' quotas on its instance type."""
    group: str
    instance_type: str
    count: int             # the group's instances
    batch: int             # instances a batch takes out
    alongside: int         # instances other groups of the type take out at the same time (schedules starting together)
    capacity: Resources    # the instance type's capacity, all groups
    reserved: Resources    # what the enabled teams reserve on the type
    headroom: int          # whole instances of the type the teams leave unreserved in every dimension

    @property
    def during(self) -> Resources:
        """The instance type's capacity while a batch is out."""
        return self.capacity - per_instances(CATALOGUE[self.instance_type], self.batch + self.alongside)

    @property
    def short(self) -> list[str]:
        """Dimensions in which the quotas are above the capacity while a batch is out."""
        return self.reserved.exceeding(self.during)


def _headroom(capacity: Resources, reserved: Resources, itype: str) -> int:
    """Whole instances that can leave the type with the teams' quotas still covered in every dimension."""
    spec = CATALOGUE[itype]
    unit = per_instances(spec, 1)
    spare = capacity - reserved
    fits = [int(getattr(spare, d) // getattr(unit, d)) for d in DIMENSIONS if getattr(unit, d)]
    return max(min(fits), 0) if fits else 0


def rolling_batch(config: KitConfig, group: InstanceGroup, size: BatchSize,
                  alongside: int = 0) -> RollingBatch | None:
    """A batch of `size` (an update's or a rollback's) on `group`, with `alongside` instances of its type out at
    the same time in other groups; None for a type the catalogue lacks (HPK201 reports it), for the system
    group (its nodes are no team's capacity) or a type whose quotas are over capacity already (HPK501 reports it)."""
    if group.instance_type not in CATALOGUE or group not in team_groups(config):
        return None
    capacity = cluster_capacity(config)[group.instance_type]
    reserved = teams_total(tuple(t for t in config.teams if t.enabled), config_shares(config)).get(group.instance_type, Resources())
    if reserved.exceeding(capacity):
        return None
    # Sized as the capacity is: an autoscaled group counts its max_count there, so a batch may take that many.
    size_of_group = group_maximum(group)
    return RollingBatch(group.name, group.instance_type, size_of_group,
                        batch_instances(size, size_of_group), alongside, capacity, reserved,
                        _headroom(capacity, reserved, group.instance_type))
