"""Capacity arithmetic: what the cluster has and what the teams reserve, per instance type.

Amounts are exact: whole amounts are ints and the others Fractions, so that 3 x 1/3 of an instance sums to
exactly 1, `vcpu: 1.1` plus `vcpu: 14.9` is 16 (the YAML text, not the nearest binary fraction), and a quota
equal to the capacity never reads as 0.0000001 over it. A result that comes out whole is an int again, so
that summing thousands of teams' whole quotas is integer arithmetic, not Fraction arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache

from cdk_app.config.model import InstanceGroup, KitConfig, QuotaEntry, Team
from cdk_app.config.scalars import exact
from cdk_app.domain.instance_types import CATALOGUE, InstanceSpec, node_vcpu
from cdk_app.domain.mig_profiles import group_geometry, group_partitions, most_per_gpu, per_gpu, profiles_of
from cdk_app.domain.system_nodes import system_group

DIMENSIONS = ("count", "accelerators", "vcpu", "memory_gib")
_UNITS = {"count": "instances", "accelerators": "accelerators", "vcpu": "vCPU", "memory_gib": "GiB memory"}

Amount = int | Fraction
# (instance type, MIG profile) -> the share of an instance one partition stands for (partition_shares)
Shares = dict[tuple[str, str], Fraction]


def _exact(value: Amount) -> Amount:
    """An exact amount, whole ones as ints."""
    if value.__class__ is int:
        return value
    return int(value) if value.denominator == 1 else value


def _times(value: Amount, factor: Amount) -> Amount:
    """value x factor; a whole value times a fraction (a borrow limit's percent) without building Fractions
    when the product is whole."""
    if value.__class__ is int and factor.__class__ is Fraction:
        product, denominator = value * factor.numerator, factor.denominator
        return product // denominator if product % denominator == 0 else Fraction(product, denominator)
    return _exact(value * factor)


@dataclass(frozen=True, slots=True)
class Resources:
    count: Amount = 0
    accelerators: Amount = 0
    vcpu: Amount = 0
    memory_gib: Amount = 0

    def __add__(self, other: Resources) -> Resources:
        return Resources(_exact(self.count + other.count), _exact(self.accelerators + other.accelerators),
                         _exact(self.vcpu + other.vcpu), _exact(self.memory_gib + other.memory_gib))

    def __sub__(self, other: Resources) -> Resources:
        return Resources(_exact(self.count - other.count), _exact(self.accelerators - other.accelerators),
                         _exact(self.vcpu - other.vcpu), _exact(self.memory_gib - other.memory_gib))

    def smaller(self, other: Resources) -> Resources:
        """Per dimension, the smaller of the two."""
        return Resources(_exact(min(self.count, other.count)), _exact(min(self.accelerators, other.accelerators)),
                         _exact(min(self.vcpu, other.vcpu)), _exact(min(self.memory_gib, other.memory_gib)))

    def scaled(self, factor: Amount) -> Resources:
        return Resources(_times(self.count, factor), _times(self.accelerators, factor),
                         _times(self.vcpu, factor), _times(self.memory_gib, factor))

    def exceeding(self, limit: Resources) -> list[str]:
        """Dimensions in which self is above limit."""
        return [d for d in DIMENSIONS if getattr(self, d) > getattr(limit, d)]

    def is_zero(self) -> bool:
        return self.count == 0 and self.accelerators == 0 and self.vcpu == 0 and self.memory_gib == 0

    def to_json(self) -> dict[str, float]:
        return {d: plain_number(getattr(self, d)) for d in DIMENSIONS}


def plain_number(value: Amount) -> float | int:
    """An amount for JSON: 9 rather than 9.0 or 9/1; otherwise the nearest double, which prints a decimal amount
    as written (16.0002 stays 16.0002, never 16.0 beside a capacity of 16) and a third to full precision."""
    return int(value) if value.denominator == 1 else float(value)


def unit_for(value: float | Amount, unit: str) -> str:
    """`unit` as it reads after `value`: "1 instance", "1 accelerator" (vCPU and GiB memory read the same)."""
    return unit[:-1] if value == 1 and unit.endswith("s") else unit


def exact_text(value: Amount) -> str:
    """An amount exactly as it is, for messages: 16.0002 stays 16.0002 (never "16.0" beside a capacity of 16),
    a whole amount has no decimals, and an amount no decimal writes exactly (a third of an instance) reads as
    its fraction with a rounded decimal after it: "4/3 (about 1.333)"."""
    value = Fraction(value)
    numerator, denominator = value.numerator, value.denominator
    if denominator == 1:
        return str(numerator)
    twos = fives = 0
    rest = denominator
    while rest % 2 == 0:
        rest, twos = rest // 2, twos + 1
    while rest % 5 == 0:
        rest, fives = rest // 5, fives + 1
    if rest != 1:
        return f"{numerator}/{denominator} (about {round(float(value), 3)})"
    places = max(twos, fives)
    digits = str(abs(numerator) * 10**places // denominator).rjust(places + 1, "0")
    sign = "-" if numerator < 0 else ""
    return f"{sign}{digits[:-places]}.{digits[-places:]}".rstrip("0")


def describe(value: Amount, dimension: str) -> str:
    return f"{exact_text(value)} {unit_for(value, _UNITS[dimension])}"


@cache
def _memory_gib(spec: InstanceSpec) -> Amount:
    return _exact(exact(spec.memory_gib))


def per_instances(spec: InstanceSpec, instances: Amount) -> Resources:
    instances = _exact(instances)
    return Resources(
        instances,
        _exact(instances * spec.accelerators),
        _exact(instances * spec.vcpu),
        _exact(instances * _memory_gib(spec)),
    )


def quota_resources(entry: QuotaEntry, spec: InstanceSpec, shares: Shares | None = None) -> Resources:
    """A quota entry on the instance scale, as SageMaker fills it (CreateComputeQuota's ComputeQuotaResourceConfig):
    vCPU and memory left out are filled in the instance's ratio to the accelerators, else to each other; but
    accelerators are never filled - an entry without them gets none ("Accelerators are set to 0"). On a type
    with accelerators the instance's worth (count) is measured in them, so such an entry takes none of it.
    A count stands for whole instances: other amounts next to it must agree (the validator's HPK408), so the
    count alone is summed; accelerators on a type without any (HPK407) add nothing. `shares`: what one
    partition stands for in the cluster's geometries (partition_shares)."""
    if entry.count is not None:
        return per_instances(spec, entry.count)
    # accelerators: 0 reserves none, like leaving them out: vCPU or memory then set the ratio (filling memory
    # in a ratio of 0 accelerators would reserve none of what SageMaker fills from the vCPU).
    in_accelerators = bool(entry.accelerators) and spec.accelerators
    if in_accelerators:
        share = Fraction(entry.accelerators, spec.accelerators)
    elif entry.vcpu is not None:
        share = exact(entry.vcpu) / spec.vcpu
    elif entry.memory_gib is not None:
        share = exact(entry.memory_gib) / _memory_gib(spec)
    else:
        share = partition_share(entry, shares)
    filled = per_instances(spec, share)
    # Partitions alone (or nothing) measure the instance's worth in the partitions' share, as accelerators do.
    by_partitions = entry.vcpu is None and entry.memory_gib is None
    return Resources(
        filled.count if in_accelerators or by_partitions or not spec.accelerators else 0,
        filled.accelerators if in_accelerators else 0,
        _exact(exact(entry.vcpu)) if entry.vcpu is not None else filled.vcpu,
        _exact(exact(entry.memory_gib)) if entry.memory_gib is not None else filled.memory_gib,
    )


def capacity_of(groups: Iterable[tuple[str, int]]) -> dict[str, Resources]:
    """Per known instance type, the resources of (instance type, count) pairs summed."""
    capacity: dict[str, Resources] = {}
    for instance_type, count in groups:
        spec = CATALOGUE.get(instance_type)
        if spec is not None:
            capacity[instance_type] = capacity.get(instance_type, Resources()) + per_instances(spec, count)
    return capacity


def group_types(group: InstanceGroup) -> tuple[str, ...]:
    """The instance types a group may run, in HyperPod's order of preference (a flexible group's
    InstanceRequirements.InstanceTypes: "HyperPod attempts to provision instances using the first instance type
    in the list and falls back to subsequent types if capacity is unavailable", botocore's sagemaker model)."""
    return (group.instance_type, *group.fallback_instance_types)


def group_maximum(group: InstanceGroup) -> int:
    """The most instances a group holds: an autoscaled group's max_count (Karpenter scales it from 0), else count."""
    return group.max_count if group.max_count is not None else group.count


def is_guaranteed(group: InstanceGroup) -> bool:
    """Whether the group's instances are capacity the teams can count on: a fixed count of one instance type, not
    on Spot. Karpenter launches an autoscaled group's nodes only when EC2 has them (and scales it to 0); a flexible
    group may come up as any of its types; Spot instances may be taken back at any time. MinInstanceCount adds
    nothing: it "only affects the initial transition to InService and does not guarantee maintaining this
    minimum afterward" (botocore's sagemaker model, ClusterInstanceGroupSpecification)."""
    return group.max_count is None and not group.fallback_instance_types and group.capacity_type != "Spot"


def instances_needed(itype: str, amount: Resources) -> int:
    """Whole instances of `itype` that hold `amount` in every dimension (0 for none): instances come whole, and a
    quota of vCPU alone on a GPU type still takes a node, with its GPUs."""
    spec = CATALOGUE[itype]
    shares = [Fraction(amount.count), Fraction(amount.vcpu) / spec.vcpu,
              Fraction(amount.memory_gib) / Fraction(_memory_gib(spec))]
    if spec.accelerators:
        shares.append(Fraction(amount.accelerators) / spec.accelerators)
    return max(0, math.ceil(max(shares)))


def groups_capacity(groups: Iterable[InstanceGroup]) -> dict[str, Resources]:
    """Per known instance type, the most the groups may give: each group's maximum, under every type it may run
    (a flexible group counts in full under each of its types, as it could come up as any of them), and of the
    accelerators only whole GPUs: a partitioned group's GPUs are its partitions' (without_partitioned_gpus).
    Every capacity view (the cluster's, the guaranteed, the single-type and On-Demand parts, the shared pool's
    gap) is this of some of the groups, so none counts a partitioned GPU as a whole one."""
    groups = tuple(groups)
    return without_partitioned_gpus(
        groups, capacity_of((itype, group_maximum(group)) for group in groups for itype in group_types(group)))


def as_type(group: InstanceGroup, itype: str, instances: int | None = None) -> InstanceGroup:
    """The group come up as one of its types (a flexible group is one type at a time), with `instances` of it
    (default: its maximum): what groups_capacity and partition_capacity_of count for that one case."""
    size = group_maximum(group) if instances is None else instances
    return group.model_copy(update={"instance_type": itype, "fallback_instance_types": (), "max_count": size})


def capacity_as(group: InstanceGroup, itype: str, instances: int | None = None) -> Resources:
    """What the group gives as `itype` (as_type), whole GPUs only, in the one capacity function."""
    return groups_capacity((as_type(group, itype, instances),)).get(itype, Resources())


def most_accelerators(groups: Iterable[InstanceGroup]) -> int:
    """The whole accelerators the groups may give at most together, each group counted once, as the one of its
    types that has most (a flexible group is one type at a time; a partitioned GPU is no whole one)."""
    return sum(max(_exact(capacity_as(group, itype).accelerators) for itype in group_types(group)) for group in groups)


def team_groups(config: KitConfig) -> tuple[InstanceGroup, ...]:
    """The instance groups whose nodes the teams' and the shared pool's pods may run on: all but the
    administrators' system group (hyperpod.system_instance_group), whose taint no team pod may tolerate, so its
    nodes are capacity no quota can use. None for a Batch-only environment (no hyperpod section)."""
    if config.hyperpod is None:
        return ()
    system = system_group(config)
    return tuple(g for g in config.hyperpod.instance_groups if g is not system)


def cluster_capacity(config: KitConfig) -> dict[str, Resources]:
    """Per known instance type, the most the teams' instance groups (`team_groups`) may give (`groups_capacity`):
    the capacity the quotas are checked against (HPK501), autoscaled groups at max_count, Spot and flexible
    groups included."""
    return groups_capacity(team_groups(config))


@dataclass(frozen=True, slots=True)
class Cover:
    """Whether instance groups cover every quota at once (GroupsCover): what the quotas need beyond the
    single-type groups, in whole instances, and how many of those the flexible groups give at once."""
    # Per demand - a type's whole instances ("ml.p5.48xlarge"), or the nodes a type's partitions in one geometry
    # come from ("ml.p5.48xlarge partitions (all-1g.10gb)") - the instances needed beyond the single-type groups.
    need: dict[str, int]
    given: int  # of those, the most the flexible groups give at once
    groups: tuple[str, ...]  # the flexible groups that may serve some of the need
    used: dict[str, int] = field(default_factory=dict)  # per flexible group, its instances that go to the need

    @property
    def short(self) -> bool:
        return self.given < sum(self.need.values())

    def needs_text(self) -> str:
        """ "ml.p5.48xlarge: 1, ml.p4d.24xlarge: 2", for messages."""
        return ", ".join(f"{demand}: {instances}" for demand, instances in self.need.items())


def whole_reservations(quota: Iterable[QuotaEntry], shares: Shares | None = None) -> dict[str, Resources]:
    """reservations of the entries that are no MIG partitions: what whole instances (their whole GPUs, vCPU and
    memory) must hold. A partition quota's nodes are counted apart (GroupsCover)."""
    return reservations((entry for entry in quota if entry.accelerator_partition is None), shares)


class GroupsCover:
    """Whether instance groups cover quotas at once, with some of their instances out (`cover`). The groups'
    own figures are counted once here, so that many covers of one config (a rolling batch's counts) cost only
    what the instances out change."""

    def __init__(self, groups: tuple[InstanceGroup, ...]) -> None:
        single = tuple(g for g in groups if not g.fallback_instance_types)
        self._most, self._most_partitions = groups_capacity(groups), partition_capacity_of(groups)
        self._single, self._single_partitions = groups_capacity(single), partition_capacity_of(single)
        self._single_groups = {g.name: g for g in single}
        # Each flexible group with, per type it may run as, the partitions one node holds as that type.
        self._flexible = tuple((g, {itype: partitions_as(g, itype, 1) for itype in group_types(g)})
                               for g in groups if g.fallback_instance_types)
        self._taken: dict[tuple[str, int], tuple[dict[str, Resources], Partitions]] = {}

    @property
    def flexible(self) -> bool:
        """Whether any group is flexible: without one, every type is covered at once when each is on its own."""
        return bool(self._flexible)

    def _left(self, out: dict[str, int]) -> tuple[dict[str, Resources], Partitions]:
        """What the single-type groups hold with `out` taken out of them."""
        capacity, partitions = dict(self._single), dict(self._single_partitions)
        for name, n in out.items():
            group = self._single_groups.get(name)
            if group is None or n <= 0:
                continue
            if (name, n) not in self._taken:
                batch = (group.model_copy(update={"max_count": min(n, group_maximum(group))}),)
                self._taken[name, n] = groups_capacity(batch), partition_capacity_of(batch)
            resources, by_profile = self._taken[name, n]
            for itype, amount in resources.items():
                capacity[itype] = capacity[itype] - amount
            for key, count in by_profile.items():
                partitions[key] -= count
        return capacity, partitions

    def cover(self, whole: dict[str, Resources], partitions: Partitions, out: dict[str, int] | None = None) -> Cover:
        """Whether the groups, with `out` (group name: instances, a rolling batch) taken out of them, cover the
        quotas `whole` (whole_reservations) and `partitions` (partition_reservations) at once: the single-type
        groups give what they hold, and each flexible group is one type at a time. What a type's quotas need
        beyond its single-type groups is whole instances; the partitions of a profile beyond them are nodes of
        the flexible groups partitioned into it as the type (ceil(partitions / those one node holds); a node holds
        a geometry's profiles together, so a geometry's profiles need the most any of them does). A node
        partitioned as the type gives no whole GPU. The flexible groups serve these needs by a maximum flow
        (_most_given). A need counts against every geometry that gives its profile (the kit does not split one
        quota between two geometries). Quotas beyond what even every group at its maximum could give are left
        out: over capacity (HPK501, HPK533), not this."""
        out = out or {}
        capacity, single_partitions = self._left(out)
        need: dict[str, int] = {}
        serves: dict[str, list[str]] = {g.name: [] for g, _ in self._flexible}
        for itype, total in whole.items():
            if itype not in self._most or total.exceeding(self._most[itype]):
                continue
            gap = total - capacity.get(itype, Resources())
            gap = Resources(*(max(getattr(gap, d), 0) for d in DIMENSIONS))
            instances = instances_needed(itype, gap)
            if instances:
                need[itype] = instances
                for g, per_node in self._flexible:
                    if itype in per_node and not (gap.accelerators and per_node[itype]):
                        serves[g.name].append(itype)
        for g, per_type in self._flexible:
            for itype, per_node in per_type.items():
                demand = f"{itype} partitions ({group_geometry(g)})"
                for profile, one_node in per_node.items():
                    held = partitions.get((itype, profile), 0)
                    short = held - single_partitions.get((itype, profile), 0)
                    if short > 0 and held <= self._most_partitions.get((itype, profile), 0):
                        need[demand] = max(need.get(demand, 0), -(-short // one_node))
                if demand in need:
                    serves[g.name].append(demand)
        used = _most_given(need, {g.name: (max(group_maximum(g) - out.get(g.name, 0), 0), tuple(serves[g.name]))
                                  for g, _ in self._flexible})
        return Cover(need, sum(used.values()), tuple(name for name, demands in serves.items() if demands), used)


def flexible_reliance(config: KitConfig) -> Cover:
    """Whether the teams' instance groups cover all the teams' quotas at once (GroupsCover, nothing out): a
    flexible group counts in full under each of its types, so each type alone may fit (HPK501) while together
    they need more instances than the groups have (HPK532)."""
    quota = [entry for team in config.teams for entry in team.quota]
    return GroupsCover(team_groups(config)).cover(whole_reservations(quota, config_shares(config)),
                                                  partition_reservations(quota))


def flexible_leftover(groups: tuple[InstanceGroup, ...], whole: dict[str, Resources],
                      partitions: Partitions) -> tuple[dict[str, Resources], Partitions]:
    """Per instance type, the capacity of the flexible groups that what is held leaves (`whole`: whole_reservations,
    `partitions`: partition_reservations), and per (type, profile) their partitions: the holdings beyond the
    single-type groups take whole instances of the flexible groups (GroupsCover, as HPK532 counts them), and each
    group's instances left over count once, under its first type (the one HyperPod provisions first), never
    under all its types at once - a group that can come up as either of two types is not both: Kueue takes
    quotas per flavor, so the kit lends a flexible group's idle instances as its first type only."""
    used = GroupsCover(groups).cover(whole, partitions).used
    left: dict[str, Resources] = {}
    left_partitions: Partitions = {}
    for group in groups:
        rest = group_maximum(group) - used.get(group.name, 0)
        if group.fallback_instance_types and rest > 0 and group.instance_type in CATALOGUE:
            left[group.instance_type] = left.get(group.instance_type, Resources()) + capacity_as(
                group, group.instance_type, rest)
            for profile, count in partitions_as(group, group.instance_type, rest).items():
                key = (group.instance_type, profile)
                left_partitions[key] = left_partitions.get(key, 0) + count
    return left, left_partitions


def _most_given(need: dict[str, int], groups: dict[str, tuple[int, tuple[str, ...]]]) -> dict[str, int]:
    """Per group, its instances in the most of `need` (instances per demand: a type, or a type's partitions)
    the groups (name: (instances, the demands it may serve)) can give at once: a maximum
    flow from the demands (capacity: the instances needed) through the groups that may serve them to a sink
    (capacity: each group's size), by Edmonds-Karp. Each augmenting path carries as much as it can, so the work
    grows with the number of types and groups, never with the instance counts (a group of 100,000 instances
    costs what a group of 1 does)."""
    source, sink = ("source",), ("sink",)
    residual: dict[tuple, dict[tuple, int]] = {source: {}, sink: {}}

    def edge(a: tuple, b: tuple, amount: int) -> None:
        residual.setdefault(a, {})[b] = residual.setdefault(a, {}).get(b, 0) + amount
        residual.setdefault(b, {}).setdefault(a, 0)

    total_need = sum(need.values())
    for itype, instances in need.items():
        edge(source, ("type", itype), instances)
    for name, (size, types) in groups.items():
        edge(("group", name), sink, size)
        for itype in types:
            if itype in need:
                edge(("type", itype), ("group", name), total_need)
    while True:
        parent: dict[tuple, tuple] = {source: source}
        frontier = [source]
        while frontier and sink not in parent:
            following = []
            for node in frontier:
                for nxt, room in residual[node].items():
                    if room > 0 and nxt not in parent:
                        parent[nxt] = node
                        following.append(nxt)
            frontier = following
        if sink not in parent:
            return {name: residual[sink].get(("group", name), 0) for name in groups}
        path, node = [], sink
        while node != source:
            path.append((parent[node], node))
            node = parent[node]
        pushed = min(residual[a][b] for a, b in path)
        for a, b in path:
            residual[a][b] -= pushed
            residual[b][a] += pushed


def node_cpus(config: KitConfig) -> dict[str, tuple[int, int]]:
    """Per known instance type of the teams' groups, (the vCPUs the fewest-CPU node of the type has, the vCPUs
    all its nodes have together) with each group's threads_per_core (instance_types.node_vcpu): what pods can be
    given, where a quota's vCPU (and Kueue's cpu nominalQuota) is the catalogue's full vCPU whatever the threads
    per core (task governance's mapping, observed: "Count x the full instance spec ... not node allocatable").
    A flexible group counts under each of its types, as groups_capacity counts it; a group that may hold no
    node (count 0, no max_count) gives none."""
    cpus: dict[str, tuple[int, int]] = {}
    for group in team_groups(config):
        for itype in group_types(group) if group_maximum(group) else ():
            if itype in CATALOGUE:
                one = node_vcpu(itype, group.threads_per_core)
                least, total = cpus.get(itype, (one, 0))
                cpus[itype] = (min(least, one), total + one * group_maximum(group))
    return cpus


def guaranteed_capacity(config: KitConfig) -> dict[str, Resources]:
    """Per known instance type, the capacity the teams can count on (`is_guaranteed`): at most cluster_capacity."""
    return groups_capacity(group for group in team_groups(config) if is_guaranteed(group))


def on_demand_groups(config: KitConfig) -> tuple[InstanceGroup, ...]:
    """The teams' groups whose instances EC2 does not take back: all but Spot ones. A fixed On-Demand group keeps
    its nodes; an autoscaled On-Demand group is what HyperPod's Karpenter launches, up to max_count, in place of
    Spot nodes EC2 took back - the NodePools count no Spot group as given (cdk_app.domain.autoscaling), so it can.
    The one function of "not counting on Spot" that validate's HPK531, the NodePools and plan's Spot hazard share
    (`spot_backing`)."""
    return tuple(group for group in team_groups(config) if group.capacity_type != "Spot")


def spot_backing(config: KitConfig) -> dict[str, bool]:
    """Per instance type of the cluster: whether the teams' quotas on it fit the On-Demand capacity
    (`on_demand_groups`, autoscaled groups at max_count) (True), or count on Spot instances (False: HPK531, and
    plan refuses turning a group of the type Spot)."""
    on_demand = groups_capacity(on_demand_groups(config))
    totals = teams_total(config.teams, config_shares(config))
    return {itype: not totals.get(itype, Resources()).exceeding(on_demand.get(itype, Resources()))
            for itype in cluster_capacity(config)}


def quota_backing(config: KitConfig) -> dict[str, bool]:
    """Per instance type of the cluster whose capacity is partly best-effort: whether all the teams' quotas on it
    fit the guaranteed capacity (True) or count on best-effort capacity (False). Empty for a cluster of fixed
    On-Demand single-type groups only, where every quota that fits is guaranteed."""
    guaranteed, capacity = guaranteed_capacity(config), cluster_capacity(config)
    if all(guaranteed.get(itype) == amount for itype, amount in capacity.items()):
        return {}
    totals = teams_total(config.teams, config_shares(config))
    return {itype: not totals.get(itype, Resources()).exceeding(guaranteed.get(itype, Resources()))
            for itype in capacity}


def reservations(quota: Iterable[QuotaEntry], shares: Shares | None = None) -> dict[str, Resources]:
    """Per known instance type, what quota entries reserve (duplicate entries add up); partitions at `shares`
    (partition_shares of the cluster's groups)."""
    reserved: dict[str, Resources] = {}
    for entry in quota:
        spec = CATALOGUE.get(entry.instance_type)
        if spec is not None:
            reserved[entry.instance_type] = reserved.get(entry.instance_type, Resources()) + quota_resources(entry, spec, shares)
    return reserved


def team_reservations(team: Team, shares: Shares | None = None) -> dict[str, Resources]:
    """Per known instance type, what one team reserves."""
    return reservations(team.quota, shares)


def teams_total(teams: tuple[Team, ...], shares: Shares | None = None) -> dict[str, Resources]:
    """Per known instance type, what all the given teams reserve together."""
    totals: dict[str, Resources] = {}
    for team in teams:
        for itype, res in team_reservations(team, shares).items():
            totals[itype] = totals.get(itype, Resources()) + res
    return totals


def shared_pool_gap(capacity: dict[str, Resources], reserved: dict[str, Resources]) -> dict[str, Resources]:
    """What a shared pool would hold per cluster instance type: capacity minus the teams' sum."""
    return {itype: cap - reserved.get(itype, Resources()) for itype, cap in capacity.items()}


def _floor_thousandths(value: Amount) -> int | float:
    """value rounded down to 1/1000, as an int when whole: the float's shortest repr is then the decimal
    itself (at most 11 significant digits below MAX_QUOTA_AMOUNT), so exact() reads back no more than value."""
    thousandths = value.numerator * 1000 // value.denominator
    return thousandths // 1000 if thousandths % 1000 == 0 else thousandths / 1000


def pool_entry(itype: str, gap: Resources) -> QuotaEntry:
    """The shared pool's entry for one instance type. Whole instances, or accelerators (vCPU and memory filled
    in the instance's ratio), when that is exactly the gap in every dimension; else every amount written out,
    rounded down (accelerators to whole ones, vCPU and memory to 1/1000), so that what SageMaker gives the
    pool never exceeds what the teams leave in any dimension. Accelerators are written even beside vCPU and
    memory: for an entry of only vCPU and memory SageMaker sets them to 0 (CreateComputeQuota's model)."""
    spec = CATALOGUE[itype]
    # Amounts computed here from a validated config are not validated again (model_construct): `validate`
    # would otherwise build QuotaEntry's own validator for these alone.
    candidates = []
    if gap.count.denominator == 1:
        candidates.append(QuotaEntry.model_construct(instance_type=itype, count=int(gap.count)))
    if spec.accelerators and gap.accelerators.denominator == 1:
        candidates.append(QuotaEntry.model_construct(instance_type=itype, accelerators=int(gap.accelerators)))
    written = QuotaEntry.model_construct(
        instance_type=itype, accelerators=int(gap.accelerators) if spec.accelerators else None,
        vcpu=_floor_thousandths(gap.vcpu), memory_gib=_floor_thousandths(gap.memory_gib))
    # `written` fits: its instance share (accelerators, or vCPU on a type without them, over the instance's)
    # is at most the count gap, as every team entry's share is its accelerators (or vCPU) over the instance's.
    return next((entry for entry in candidates if quota_resources(entry, spec) == gap), written)


def shared_pool_quota(config: KitConfig) -> list[QuotaEntry]:
    """The shared pool's quota entries: per cluster instance type with capacity left, the entry of
    `pool_entry` (what it gets fits what the teams leave in every dimension); none on a type whose GPUs are
    all partitioned (no whole one left). Flexible groups are left out: one
    counts in full under each of its types, so a pool holding what the teams leave of each would hold more than
    the group has; idle sharing still lends their instances as unallocated capacity."""
    entries: list[QuotaEntry] = []
    single_type = groups_capacity(g for g in team_groups(config) if not g.fallback_instance_types)
    for itype, gap in shared_pool_gap(single_type, teams_total(config.teams, config_shares(config))).items():
        # Nothing left, or the teams already over capacity in some dimension (the validator's HPK504).
        if gap.count <= 0 or any(getattr(gap, d) < 0 for d in DIMENSIONS):
            continue
        # Instances left but no whole accelerator on a type that has them (MIG partitions them all): an entry of
        # vCPU and memory alone gets no accelerator from SageMaker, so the pool could run no GPU pod, and its vCPU
        # and memory would read as reserved while the type's partitions and instances stay free.
        # What the teams leave there is lent as unallocated capacity instead (reach.unallocated).
        if CATALOGUE[itype].accelerators and gap.accelerators < 1:
            continue
        entries.append(pool_entry(itype, gap))
    return entries


# --- GPU partitions (MIG) -------------------------------------------------------------------------------------
# Partitions are counted apart from Resources: a slice is no share of an instance's accelerators, vCPU or
# memory the validator could sum with whole-GPU quotas (SageMaker fills an entry's vCPU and memory from its
# partition count in a ratio AWS does not state: API_AcceleratorPartitionConfig, "ratio-based values").

Partitions = dict[tuple[str, str], int]  # (instance type, MIG profile) -> partitions


def partition_share(entry: QuotaEntry, shares: Shares | None = None) -> Fraction | int:
    """The share of an instance an entry of partitions alone stands for, in which SageMaker fills its vCPU and
    memory: its partitions times what one partition stands for (API_AcceleratorPartitionConfig: "If you don't
    specify a value for vCPU and MemoryInGiB, SageMaker AI automatically allocates ratio-based values ... based
    on the accelerator partition count", read as the accelerators' ratio is: "16 out of 32 total accelerators
    ... uses the ratio of 0.5"; UNVERIFIED which total AWS divides by). One partition stands for its share in
    the geometry the cluster's groups configure (`shares`, partition_shares); where no group gives the profile,
    1 / (as many as fit one GPU). 0 without partitions or for a profile the type's GPU does not offer (HPK430)."""
    partition = entry.accelerator_partition
    spec = CATALOGUE.get(entry.instance_type)
    profile = profiles_of(entry.instance_type).get(partition.type) if partition is not None else None
    if profile is None or spec is None:
        return 0
    one = (shares or {}).get((entry.instance_type, profile.name))
    if one is None:
        one = Fraction(1, most_per_gpu(profile) * spec.accelerators)
    return _exact(partition.count * one)


def partition_shares(groups: Iterable[InstanceGroup]) -> Shares:
    """Per (instance type, MIG profile) the groups give, the share of an instance one partition stands for: in
    a group's geometry, the profile's compute slices over those of all the partitions one GPU holds (in
    mixed-1-3g.40gb-1-2g.20gb-2-1g.10gb a 3g is 3/7 of the GPU, a 1g 1/7; in all-3g.40gb a 3g is 1/2), averaged
    over the groups by the partitions each gives. Reserving every partition the groups give is then exactly
    their instances, whatever the geometry."""
    worth: dict[tuple[str, str], Fraction] = {}
    given: dict[tuple[str, str], int] = {}
    for group, itype in _group_type_pairs(groups):
        spec, name = CATALOGUE.get(itype), group_geometry(group)
        layout = per_gpu(itype, name) if spec is not None and name is not None else {}
        offered = profiles_of(itype)
        slices = sum(offered[p].compute * n for p, n in layout.items())
        for profile, per in layout.items():
            key, parts = (itype, profile), per * spec.accelerators * group_maximum(group)
            given[key] = given.get(key, 0) + parts
            worth[key] = worth.get(key, 0) + Fraction(parts * offered[profile].compute, slices * spec.accelerators)
    return {key: worth[key] / count for key, count in given.items() if count}


def config_shares(config: KitConfig) -> Shares:
    """partition_shares of the teams' instance groups (the system group's partitions are no team's)."""
    return partition_shares(team_groups(config))


def partition_capacity(config: KitConfig) -> Partitions:
    """Per (instance type, MIG profile), the partitions the teams' instance groups give (`team_groups`: a tainted
    system group's partitions are capacity no team pod can use)."""
    return partition_capacity_of(team_groups(config))


def partition_capacity_of(groups: Iterable[InstanceGroup]) -> Partitions:
    """Per (instance type, MIG profile), the partitions of the groups: each group's nodes take the geometry its
    nvidia.com/mig.config label names on every GPU (cdk_app.domain.mig_profiles), whichever of its types they
    come up as - a flexible group counts in full under each, as groups_capacity counts it."""
    capacity: Partitions = {}
    for group, itype in _group_type_pairs(groups):
        for profile, amount in partitions_as(group, itype, group_maximum(group)).items():
            key = (itype, profile)
            capacity[key] = capacity.get(key, 0) + amount
    return capacity


def _group_type_pairs(groups: Iterable[InstanceGroup]) -> Iterable[tuple[InstanceGroup, str]]:
    """(group, type) for each type each group may run as."""
    return ((group, itype) for group in groups for itype in group_types(group))


def partitions_as(group: InstanceGroup, itype: str, instances: int) -> dict[str, int]:
    """Per MIG profile, the partitions `instances` nodes of the group hold as `itype`: the label is the group's,
    so its nodes are partitioned whichever of its types they come up as (none on a type the label names no
    geometry of: HPK224 reports it, and such nodes offer whole GPUs)."""
    spec = CATALOGUE.get(itype)
    return group_partitions(group, spec.accelerators, instances, itype) if spec is not None else {}


def partition_reservations(quota: Iterable[QuotaEntry]) -> Partitions:
    """Per (instance type, MIG profile), the partitions quota entries reserve (duplicate entries add up)."""
    reserved: Partitions = {}
    for entry in quota:
        if entry.accelerator_partition is not None:
            key = (entry.instance_type, entry.accelerator_partition.type)
            reserved[key] = reserved.get(key, 0) + entry.accelerator_partition.count
    return reserved


def partitioned_gpus(groups: Iterable[InstanceGroup]) -> dict[str, int]:
    """Per instance type, the GPUs MIG partitions: every GPU of a group whose label names a geometry of them
    (all-disabled partitions none), under each type the group may run as (a flexible group in full under each,
    as groups_capacity counts it)."""
    gpus: dict[str, int] = {}
    for group, itype in _group_type_pairs(groups):
        if partitions_as(group, itype, 1):
            gpus[itype] = gpus.get(itype, 0) + group_maximum(group) * CATALOGUE[itype].accelerators
    return gpus


def without_partitioned_gpus(groups: Iterable[InstanceGroup], capacity: dict[str, Resources]) -> dict[str, Resources]:
    """The capacity with partitioned GPUs taken out of the accelerators: under the device plugin's mixed MIG
    strategy a MIG-enabled GPU is advertised as its partitions (nvidia.com/mig-<profile>), never as
    nvidia.com/gpu, so no whole-GPU quota or job can use it. Its instances, vCPU and memory stay."""
    taken = partitioned_gpus(groups)
    return {itype: res - Resources(accelerators=taken[itype]) if itype in taken else res
            for itype, res in capacity.items()}


def node_partitions(config: KitConfig, instance_type: str) -> dict[str, int]:
    """Per MIG profile, the most partitions one node of the type holds (its group's geometry on every GPU): what
    one pod, which runs on one node, can get."""
    spec = CATALOGUE.get(instance_type)
    most: dict[str, int] = {}
    for group in team_groups(config) if spec else ():
        if instance_type in group_types(group):
            for profile, count in partitions_as(group, instance_type, 1).items():
                most[profile] = max(most.get(profile, 0), count)
    return most
