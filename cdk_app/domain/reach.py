"""How far each team can go: its quota, plus what it may borrow - the one rule of reach that `validate`
(the reach table, HPK411, HPK503), `job` (its refusals) and the Kueue mapping follow.

This is the ceiling the compute allocations allow, not a scheduler: whether a team reaches it depends on
what the others use at the time. The cluster policy's SchedulerConfig.IdleResourceSharing (botocore's
sagemaker model: "Configuration for sharing idle compute resources across entities in the cluster. When
enabled, unallocated resources are automatically calculated and made available for entities to borrow")
decides whether any idle compute is shared:
- Disabled: no team borrows; every team's ceiling is its quota (`idle_resource_sharing: Disabled` is "whether
  idle capacity may be lent and borrowed at all", the kit's reading of that sentence).
- Enabled, per instance type: DontLend and Lend teams never borrow (ResourceSharingConfig.Strategy); a
  LendAndBorrow team may borrow up to borrow_limit percent of its quota, and no more than the allocations
  that lend (Lend and LendAndBorrow teams, the shared pool) and the unallocated capacity hold together.
A team borrows only on instance types it has a quota for: the limit is a percent of that quota (the Kueue
mapping's borrowingLimit, task-governance mapping H1), so a team without a quota borrows nothing.
An absolute borrow limit of the team on an instance type (ResourceSharingConfig.AbsoluteBorrowLimits, botocore:
"the maximum amount of specific resource types ... that an entity can borrow, regardless of the percentage-based
BorrowLimit") takes the percent's place on that type: the kit reads "regardless of" as "instead of" (UNVERIFIED
whether SageMaker also applies the percent); the lenders still cap it.
Disabled allocations are left out, both as borrowers and as lenders: task governance makes no queue for them,
so their quota counts as unallocated.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from cdk_app.config.model import DEFAULT_BORROW_LIMIT, KitConfig, Team
from cdk_app.domain.capacity import (
    DIMENSIONS,
    Partitions,
    Resources,
    cluster_capacity,
    config_shares,
    flexible_leftover,
    groups_capacity,
    partition_capacity,
    partition_capacity_of,
    partition_reservations,
    reservations,
    shared_pool_quota,
    team_groups,
    whole_reservations,
)
from cdk_app.domain.instance_types import CATALOGUE

LENDING = ("Lend", "LendAndBorrow")

# What stops a team borrowing more (TeamReach.capped_by).
BORROW_LIMIT, LENDERS, SHARING_DISABLED = "borrow limit", "lenders", "idle_resource_sharing Disabled"
ABSOLUTE_LIMIT = "absolute borrow limit"


@dataclass(frozen=True, slots=True)
class TeamReach:
    team: str
    instance_type: str
    strategy: str
    borrow_limit: int | None  # percent; None where the team does not borrow
    quota: Resources
    reach: Resources
    # BORROW_LIMIT, ABSOLUTE_LIMIT, LENDERS or SHARING_DISABLED: what stops the team borrowing more; None for
    # a Lend or DontLend team, which never borrows.
    capped_by: str | None
    # The team's absolute borrow limit on the type, where it gives one (it then replaces the percent).
    absolute_limit: Resources | None = None

    def to_json(self) -> dict[str, object]:
        return {"team": self.team, "instance_type": self.instance_type, "strategy": self.strategy,
                "borrow_limit": self.borrow_limit, "quota": self.quota.to_json(), "reach": self.reach.to_json(),
                "capped_by": self.capped_by,
                "absolute_limit": None if self.absolute_limit is None else self.absolute_limit.to_json()}


def sharing_enabled(config: KitConfig) -> bool:
    return config.cluster_policy.idle_resource_sharing == "Enabled"


def allocated(config: KitConfig) -> dict[str, Resources]:
    """Per known instance type, what the enabled compute allocations (teams and the shared pool) hold."""
    held = [reservations(t.quota, config_shares(config)) for t in config.teams if t.enabled]
    if config.shared_pool is not None:
        held.append(reservations(shared_pool_quota(config)))
    return _summed(held)


def _summed(holdings: list[dict[str, Resources]]) -> dict[str, Resources]:
    total: dict[str, Resources] = {}
    for holding in holdings:
        for itype, amount in holding.items():
            total[itype] = total.get(itype, Resources()) + amount
    return total


def _held_apart(config: KitConfig) -> tuple[dict[str, Resources], Partitions]:
    """What the enabled allocations hold, whole instances (capacity.whole_reservations; the shared pool holds
    no partitions) apart from partitions: the flexible groups' leftover is counted from these
    (capacity.flexible_leftover)."""
    quota = [entry for team in config.teams if team.enabled for entry in team.quota]
    whole = [whole_reservations(quota, config_shares(config))]
    if config.shared_pool is not None:
        whole.append(reservations(shared_pool_quota(config)))
    return _summed(whole), partition_reservations(quota)


def unallocated(config: KitConfig) -> dict[str, Resources]:
    """Per instance type of the cluster, the capacity no enabled allocation holds (none below zero, per
    dimension): what IdleResourceSharing Enabled makes available to borrow. A flexible group's instances count
    once (capacity.flexible_leftover), not under each of its types."""
    # The system group's nodes are no team's to borrow: their taint keeps team pods off (capacity.team_groups).
    held, groups = allocated(config), team_groups(config)
    single = groups_capacity(g for g in groups if not g.fallback_instance_types)
    left, _ = flexible_leftover(groups, *_held_apart(config))
    free = {}
    for itype in cluster_capacity(config):
        # What the single-type groups leave, plus the flexible groups' instances nothing holds, each counted once.
        gap = single.get(itype, Resources()) - held.get(itype, Resources())
        free[itype] = Resources(*(max(getattr(gap, d), 0) for d in DIMENSIONS)) + left.get(itype, Resources())
    return free


def borrowers(config: KitConfig, itype: str) -> list[str]:
    """The teams that may borrow on `itype`: who can use its unallocated capacity."""
    return [row.team for row in team_reach(config) if row.instance_type == itype
            and row.capped_by in (BORROW_LIMIT, ABSOLUTE_LIMIT, LENDERS) and not row.quota.is_zero()
            and not (row.absolute_limit is not None and row.absolute_limit.is_zero())]


def absolute_limits(config: KitConfig, team: Team) -> dict[str, Resources]:
    """Per known instance type, the team's absolute borrow limit, filled as SageMaker fills a quota entry (the
    schema's AbsoluteBorrowLimits items are ComputeQuotaResourceConfig, "Reused under ... AbsoluteBorrowLimits")."""
    # A limit of partitions no group gives (HPK435) lets the team borrow none of the type's instances.
    nothing = {(e.instance_type, e.accelerator_partition.type): 0
               for e in team.absolute_borrow_limits if e.accelerator_partition is not None}
    return reservations(team.absolute_borrow_limits, {**nothing, **config_shares(config)})


def team_reach(config: KitConfig) -> list[TeamReach]:
    """One row per enabled team and instance type of its quota, in config order; none in an environment
    without a HyperPod cluster (a Batch-only one)."""
    if config.hyperpod is None:
        return []
    held = [(t, reservations(t.quota, config_shares(config))) for t in config.teams if t.enabled]
    sharing = sharing_enabled(config)
    lent: dict[str, Resources] = {}
    if sharing:
        # What all lending allocations and the unallocated capacity hold per instance type; a team never
        # borrows from itself, so its own share comes off again below (one pass, not one per team).
        lenders = [reserved for t, reserved in held if t.sharing_strategy in LENDING]
        if config.shared_pool is not None:
            lenders.append(reservations(shared_pool_quota(config)))
        lenders.append(unallocated(config))
        for holding in lenders:
            for itype, amount in holding.items():
                lent[itype] = lent.get(itype, Resources()) + amount
    rows = []
    for team, reserved in held:
        for itype, quota in reserved.items():
            if team.sharing_strategy != "LendAndBorrow":
                rows.append(TeamReach(team.name, itype, team.sharing_strategy, None, quota, quota, None))
                continue
            limit = team.borrow_limit or DEFAULT_BORROW_LIMIT
            absolute = absolute_limits(config, team).get(itype)
            if not sharing:
                rows.append(TeamReach(team.name, itype, team.sharing_strategy, limit, quota, quota, SHARING_DISABLED,
                                      absolute))
                continue
            allowed = quota.scaled(Fraction(limit, 100)) if absolute is None else absolute
            others = lent.get(itype, Resources()) - quota
            borrowed = allowed.smaller(Resources(*(max(getattr(others, d), 0) for d in DIMENSIONS)))
            if allowed.accelerators and CATALOGUE[itype].accelerators:
                # A limit in whole GPUs is worth the instances of the GPUs it borrows (as quota_resources
                # measures an entry), not the instance share others lend in partitions, vCPU or memory.
                worth = Fraction(borrowed.accelerators, CATALOGUE[itype].accelerators)
                borrowed = borrowed.smaller(Resources(worth, borrowed.accelerators, borrowed.vcpu, borrowed.memory_gib))
            capped_by = LENDERS if borrowed != allowed else BORROW_LIMIT if absolute is None else ABSOLUTE_LIMIT
            rows.append(TeamReach(team.name, itype, team.sharing_strategy, limit, quota, quota + borrowed, capped_by,
                                  absolute))
    return rows


def admissible(config: KitConfig) -> dict[str, Resources]:
    """Per instance type, the most Kueue may admit on it at once: what the enabled allocations hold, plus as much
    of the unallocated capacity (the cohort's own quota, kueue_mapping.idle_cohort, which this module lends) as
    the queues that borrow may take together - each team's reach beyond its quota (team_reach) and a
    LendAndBorrow shared pool's borrowingLimit (kueue_mapping: the default percent of its quota). Borrowing from a
    lending team moves use within what the allocations hold, so only the unallocated part adds. The one answer to
    "how much of the capacity can jobs use": the autoscaled groups' NodePools are sized to it
    (cdk_app.domain.autoscaling), so a job that validate's reach, `job` and `simulate` admit gets its nodes."""
    held = allocated(config)
    if not sharing_enabled(config):
        return held
    room: dict[str, Resources] = {}
    for row in team_reach(config):
        room[row.instance_type] = room.get(row.instance_type, Resources()) + (row.reach - row.quota)
    pool = config.shared_pool
    if pool is not None and pool.sharing_strategy == "LendAndBorrow":
        for itype, quota in reservations(shared_pool_quota(config)).items():
            room[itype] = room.get(itype, Resources()) + quota.scaled(Fraction(DEFAULT_BORROW_LIMIT, 100))
    free = unallocated(config)
    return {itype: held.get(itype, Resources()) + free.get(itype, Resources()).smaller(room.get(itype, Resources()))
            for itype in dict.fromkeys([*held, *free])}


# --- GPU partitions (MIG) -------------------------------------------------------------------------------------
# The same rule on partitions, per (instance type, MIG profile): a LendAndBorrow team borrows up to borrow_limit
# percent of its partitions of a profile (rounded down: a partition does not split) or its absolute limit of
# the profile, and no more than the lending teams' partitions and the unallocated ones hold.


@dataclass(frozen=True, slots=True)
class PartitionReach:
    team: str
    instance_type: str
    profile: str
    quota: int
    reach: int
    capped_by: str | None  # as TeamReach.capped_by

    def to_json(self) -> dict[str, object]:
        return {"team": self.team, "instance_type": self.instance_type, "profile": self.profile,
                "quota": self.quota, "reach": self.reach, "capped_by": self.capped_by}


def unallocated_partitions(config: KitConfig) -> Partitions:
    """Per (instance type, profile) the instance groups give, the partitions no enabled team holds (none below
    zero): what the single-type groups leave, plus the partitions of the flexible groups' nodes nothing holds,
    each node once, as its group's first type (capacity.flexible_leftover, as unallocated counts instances). The
    shared pool holds none: its quota is the whole-instance gap (capacity.shared_pool_quota)."""
    whole, held = _held_apart(config)
    groups = team_groups(config)
    single = partition_capacity_of(g for g in groups if not g.fallback_instance_types)
    _, left = flexible_leftover(groups, whole, held)
    return {key: max(single.get(key, 0) - held.get(key, 0), 0) + left.get(key, 0)
            for key in partition_capacity(config)}


def partition_reach(config: KitConfig) -> list[PartitionReach]:
    """One row per enabled team and (instance type, profile) of its partition quota, in config order."""
    if config.hyperpod is None:
        return []
    held = [(t, partition_reservations(t.quota)) for t in config.teams if t.enabled]
    sharing = sharing_enabled(config)
    lent: Partitions = dict(unallocated_partitions(config)) if sharing else {}
    for team, reserved in held if sharing else ():
        if team.sharing_strategy in LENDING:
            for key, count in reserved.items():
                lent[key] = lent.get(key, 0) + count
    rows = []
    for team, reserved in held:
        absolute = partition_reservations(team.absolute_borrow_limits)
        for (itype, profile), quota in reserved.items():
            if team.sharing_strategy != "LendAndBorrow":
                rows.append(PartitionReach(team.name, itype, profile, quota, quota, None))
                continue
            if not sharing:
                rows.append(PartitionReach(team.name, itype, profile, quota, quota, SHARING_DISABLED))
                continue
            key = (itype, profile)
            allowed = absolute[key] if key in absolute else quota * (team.borrow_limit or DEFAULT_BORROW_LIMIT) // 100
            borrowed = min(allowed, max(lent.get(key, 0) - quota, 0))
            capped_by = LENDERS if borrowed != allowed else ABSOLUTE_LIMIT if key in absolute else BORROW_LIMIT
            rows.append(PartitionReach(team.name, itype, profile, quota, quota + borrowed, capped_by))
    return rows
