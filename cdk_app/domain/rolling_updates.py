"""Rolling AMI updates of instance groups: how many instances a batch takes out of a group, and whether the
group's instance type still covers the teams' quotas while it is out - the one rule `validate` (HPK520, HPK521)
and `plan` follow.

A batch takes its instances down and reboots them onto the new AMI (AWS's update-cluster-software guide for EKS:
the nodes are NotReady while they update, and HyperPod does not drain or move the pods running on them), so for its duration
the instance type has that many instances fewer. The quota that only this group can serve is what the enabled
teams reserve on the type minus what the type's other groups hold: the type's capacity minus the batch must
still cover the teams' quotas, in every dimension (cdk_app.domain.capacity: instances, accelerators, vCPU,
memory). The shared pool's quota is left out: it is the kit's name for what the teams leave, not a promise.

Groups whose scheduled updates ever start at the same minute roll together then: their batches add up
(`alongside`). Two schedules start together when their dates meet, whatever their text (cron(0 4 ? * SUN *) and
cron(0 4 ? * 1#1 *) on every first Sunday), judged by cdk_app.domain.cron_schedules.first_overlap.
A flexible group may be any of its types when a batch runs, as the capacity counts it in full under each: its
batch is checked as every one of them, and it rolls alongside the groups of each (the worst case). The per-type
view counts a flexible group under each type, so every batch is also checked as HPK532 checks the quotas
(capacity.GroupsCover): the groups left while it and the batches starting with it are out - single-type groups
minus their batches, each flexible group one type at a time - must cover every type's quotas and partitions at
once.
A batch of a partitioned group (nvidia.com/mig.config) takes its nodes' MIG partitions out, not whole GPUs: the
teams' partition quotas must fit the partitions left (capacity.partition_capacity, the validator's HPK533 count).

A percent batch (CAPACITY_PERCENTAGE) is counted rounded up and at least one instance: AWS documents no
rounding, so the kit counts the larger batch SageMaker could take (25 % of 6 instances is 2, 1 % of 6 is 1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from cdk_app.config.model import BatchSize, InstanceGroup, KitConfig
from cdk_app.domain.capacity import (
    Cover,
    GroupsCover,
    Partitions,
    Resources,
    cluster_capacity,
    config_shares,
    group_maximum,
    group_types,
    groups_capacity,
    partition_capacity,
    partition_capacity_of,
    partition_reservations,
    team_groups,
    teams_total,
    whole_reservations,
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


def scheduled_alongside(groups: tuple[InstanceGroup, ...], group: InstanceGroup,
                        now: datetime) -> tuple[tuple[InstanceGroup, int], ...]:
    """The other groups whose schedules ever start with `group`'s from `now` on, of any type, each with the
    instances its update batch takes out when it runs: what is out of the cluster at once (a group of another
    type still takes a flexible group's instances to its own type's quotas, GroupsCover)."""
    schedule = schedule_of(group)
    if schedule is None:
        return ()
    return tuple((other, batch_instances(other.scheduled_update.deployment.maximum_batch_size, group_maximum(other)))
                 for other in groups if other is not group and other.scheduled_update is not None
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
    """One rolling deployment of one instance group, against the teams' quotas on one type it may run as."""
    group: str
    instance_type: str
    count: int             # the group's instances
    batch: int             # instances a batch takes out
    alongside: int         # instances other groups of the type take out at the same time (schedules starting together)
    capacity: Resources    # the instance type's capacity, all groups
    reserved: Resources    # what the enabled teams reserve on the type
    # Counts the headroom (_headroom): only a batch that leaves quotas short needs it, and each count takes covers.
    measure: Callable[[], int] = field(compare=False, repr=False)
    out: Resources = Resources()  # what the batch and those alongside take out of the type
    # Per MIG profile of the type: what the groups' geometries give, the enabled teams reserve, and the batches
    # take out (a partitioned node's batch takes its partitions, not whole GPUs).
    partitions: dict[str, int] = field(default_factory=dict)
    partitions_reserved: dict[str, int] = field(default_factory=dict)
    partitions_out: dict[str, int] = field(default_factory=dict)
    # Every type's quotas at once while the batch and all those starting with it are out (GroupsCover); None
    # without a flexible group (each type on its own is then all at once) or where the groups do not cover them
    # at once even with nothing out (HPK532 reports that).
    cover: Cover | None = None
    together: int = 0      # instances the groups starting with it take out, of any type

    @property
    def headroom(self) -> int:
        """Whole instances of the group that may leave alone with the teams' quotas still covered in every
        dimension and partition (and every type's at once)."""
        return self.measure()

    @property
    def short_jointly(self) -> bool:
        """Each type is covered on its own, but the flexible groups cannot cover every type at once while the
        batch is out (GroupsCover)."""
        return not self.short and not self.short_partitions and self.cover is not None and self.cover.short

    @property
    def during(self) -> Resources:
        """The instance type's capacity while a batch is out."""
        return self.capacity - self.out

    @property
    def short(self) -> list[str]:
        """Dimensions in which the quotas are above the capacity while a batch is out."""
        return self.reserved.exceeding(self.during)

    @property
    def short_partitions(self) -> list[str]:
        """MIG profiles whose quotas are above the partitions left while a batch is out (a profile over its
        capacity already is HPK533's)."""
        return [p for p, held in self.partitions_reserved.items()
                if held <= self.partitions.get(p, 0) < held + self.partitions_out.get(p, 0)]


@dataclass(frozen=True, slots=True)
class Totals:
    """What every batch of one config is checked against, computed once (rolling_totals): the teams' groups, the
    capacity and the enabled teams' reservations per type, the partitions given and reserved per (type, profile);
    and, filled as batches are counted, what a group's batch of n instances takes out."""
    groups: tuple[InstanceGroup, ...]
    capacity: dict[str, Resources]
    reserved: dict[str, Resources]
    partitions: Partitions
    partitions_reserved: Partitions
    whole: dict[str, Resources]  # the enabled teams' quotas other than partitions (capacity.whole_reservations)
    groups_cover: GroupsCover
    # Whether every type's quotas at once is a check of its own: there is a flexible group (without one, each
    # type covered on its own is all at once), and the groups cover them with nothing out (else HPK532 says so).
    covered: bool
    taken: dict[tuple[int, int], tuple[dict[str, Resources], Partitions]] = field(default_factory=dict)

    def cover(self, out: dict[str, int]) -> Cover:
        """GroupsCover.cover of the enabled teams' quotas with `out` (group name: instances) out."""
        return self.groups_cover.cover(self.whole, self.partitions_reserved, out)


def rolling_totals(config: KitConfig) -> Totals:
    enabled = tuple(t for t in config.teams if t.enabled)
    quota = [q for team in enabled for q in team.quota]
    groups, shares, partitions = team_groups(config), config_shares(config), partition_reservations(quota)
    whole, groups_cover = whole_reservations(quota, shares), GroupsCover(groups)
    covered = groups_cover.flexible and not groups_cover.cover(whole, partitions).short
    return Totals(groups, cluster_capacity(config), teams_total(enabled, shares), partition_capacity(config),
                  partitions, whole, groups_cover, covered)


def _taken(totals: Totals, out: tuple[tuple[InstanceGroup, int], ...], itype: str) -> tuple[Resources, dict[str, int]]:
    """What groups' batches (group, instances) take out of `itype`, by the capacity functions the quotas are
    checked against: resources as groups_capacity counts them (whole GPUs only), partitions as
    partition_capacity_of does."""
    resources, partitions = Resources(), {}
    for group, n in out:
        key = (id(group), n)
        if key not in totals.taken:
            batch = (group.model_copy(update={"max_count": n}),)
            totals.taken[key] = groups_capacity(batch), partition_capacity_of(batch)
        by_type, by_profile = totals.taken[key]
        resources += by_type.get(itype, Resources())
        for (t, profile), count in by_profile.items():
            if t == itype:
                partitions[profile] = partitions.get(profile, 0) + count
    return resources, partitions


def _headroom(totals: Totals, group: InstanceGroup, itype: str, reserved: Resources, held: dict[str, int]) -> int:
    """The most whole instances of the group that can leave, alone, with the teams' quotas still covered on `itype`
    in every dimension and partition, and every type's at once (GroupsCover) where they are with nothing out.
    Covering only gets harder as more leave, so a binary search finds it in a few counts."""
    capacity = totals.capacity.get(itype, Resources())
    partitions = {p: n for (t, p), n in totals.partitions.items() if t == itype}

    def fits(n: int) -> bool:
        resources, by_profile = _taken(totals, ((group, n),), itype)
        if reserved.exceeding(capacity - resources):
            return False
        if any(held[p] <= partitions.get(p, 0) < held[p] + by_profile.get(p, 0) for p in held):
            return False
        return not totals.covered or not totals.cover({group.name: n}).short

    low, high = 0, group_maximum(group)  # fits(low) holds: nothing out is covered (or reported elsewhere)
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if fits(middle) else (low, middle - 1)
    return low


def rolling_batch(config: KitConfig, group: InstanceGroup, size: BatchSize, itype: str | None = None,
                  alongside: tuple[tuple[InstanceGroup, int], ...] = (),
                  totals: Totals | None = None) -> RollingBatch | None:
    """A batch of `size` (an update's or a rollback's) on `group` as `itype` (default: its first type), with
    `alongside` groups' batches out at the same time (scheduled_alongside); None for a type the catalogue lacks
    (HPK201 reports it), for the system group (its nodes are no team's capacity) or a type whose quotas are over
    capacity already (HPK501 reports it). `totals`: rolling_totals(config), to count many batches of a config."""
    totals = totals or rolling_totals(config)
    itype = itype or group.instance_type
    if itype not in CATALOGUE or group not in totals.groups:
        return None
    capacity = totals.capacity.get(itype, Resources())
    reserved = totals.reserved.get(itype, Resources())
    if reserved.exceeding(capacity):
        return None
    partitions = {p: n for (t, p), n in totals.partitions.items() if t == itype}
    held = {p: n for (t, p), n in totals.partitions_reserved.items() if t == itype}
    # Sized as the capacity is: an autoscaled group counts its max_count there, so a batch may take that many.
    size_of_group = group_maximum(group)
    taken = batch_instances(size, size_of_group)
    out, partitions_out = _taken(totals, ((group, taken), *alongside), itype)
    cover = totals.cover({group.name: taken, **{g.name: n for g, n in alongside}}) if totals.covered else None
    return RollingBatch(group.name, itype, size_of_group, taken,
                        sum(n for g, n in alongside if itype in group_types(g)), capacity, reserved,
                        lambda: _headroom(totals, group, itype, reserved, held), out, partitions, held, partitions_out,
                        cover, sum(n for _, n in alongside))


def rolling_batches(config: KitConfig, group: InstanceGroup, size: BatchSize, scheduled: datetime | None,
                    totals: Totals | None = None) -> list[RollingBatch]:
    """The batch of `size` on `group` as each type it may run as (a flexible group's batch is checked as every
    one of its types: it may be any when the batch runs), with the groups whose schedules start with its own
    from the moment `scheduled` on when given (an update's batch; a rollback or a patch runs alone: None)."""
    totals = totals or rolling_totals(config)
    batches = []
    alongside = scheduled_alongside(totals.groups, group, scheduled) if scheduled is not None else ()
    for itype in group_types(group):
        batch = rolling_batch(config, group, size, itype, alongside, totals)
        if batch is not None:
            batches.append(batch)
    return batches
