"""HyperPod's managed Karpenter: which instance groups it scales, and how far its NodePool may grow - the one rule
the NodePool the kit writes (cdk_app/kubernetes/autoscaling.py), the validator and the capacity tables follow.

The NodePool's limits are what the enabled allocations (teams and the shared pool, cdk_app/domain/reach.py's
`allocated`) hold on the autoscaled groups' types beyond what the fixed groups already give, and never more than
the autoscaled groups' max_count allow. So autoscaling never holds a team below its quota for want of a limit
(every allocation can run at once), nor grows past what the quotas can use: Kueue admits no more than the
allocations on a type hold together, borrowing included. Karpenter compares its limits with the capacity of the
nodes it launched ("Limits define a set of bounds for provisioning capacity", karpenter.sh/v1 NodePool CRD) and
may overshoot them by the node it launches last.

Two resources carry the limits: memory and each accelerator. vCPU does not: a group with threads_per_core 1 has
half its vCPU as node capacity (instance_types.node_vcpu, the one rule of what a node has), so a vCPU limit in the
quotas' full vCPU would let twice the nodes in.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import product

from cdk_app.config.model import InstanceGroup, KitConfig
from cdk_app.domain.capacity import (
    Resources,
    as_type,
    capacity_of,
    group_maximum,
    group_types,
    groups_capacity,
    instances_needed,
    per_instances,
    team_groups,
)
from cdk_app.domain.instance_types import ACCELERATOR_RESOURCES, CATALOGUE
from cdk_app.domain.reach import allocated

MEMORY = "memory"
# The most cases of which type each fixed flexible group came up as that quota_demand weighs (4 groups of 5
# types; 100 groups of 2 types would be 2**100).
MAX_PLACEMENTS = 1024


def autoscaled_groups(config: KitConfig) -> tuple[InstanceGroup, ...]:
    """The instance groups Karpenter scales: those with max_count."""
    if config.hyperpod is None:
        return ()
    return tuple(group for group in config.hyperpod.instance_groups if group.max_count is not None)


def autoscaled_types(config: KitConfig) -> tuple[str, ...]:
    """Every instance type an autoscaled group may run, in config order."""
    return tuple(dict.fromkeys(itype for group in autoscaled_groups(config) for itype in group_types(group)))


def _by_resource(amounts: dict[str, Resources]) -> dict[str, Fraction]:
    """Per Kubernetes resource (memory in GiB, each accelerator resource), the amounts of known types summed."""
    total: dict[str, Fraction] = {}
    for itype, amount in amounts.items():
        spec = CATALOGUE[itype]
        total[MEMORY] = total.get(MEMORY, Fraction(0)) + Fraction(amount.memory_gib)
        if spec.accelerator_kind is not None:
            name = ACCELERATOR_RESOURCES[spec.accelerator_kind]
            total[name] = total.get(name, Fraction(0)) + Fraction(amount.accelerators)
    return total


def quota_demand(config: KitConfig) -> dict[str, Fraction]:
    """Per Kubernetes resource, the whole instances' worth the allocations hold on the autoscaled types beyond
    the fixed groups' capacity of each type: what the autoscaled groups must be able to give. A fixed flexible
    group is one of its types at a time (HyperPod picks the type EC2 has): it counts once, as the type that
    leaves the autoscaled groups the most to give, per resource - so the limit holds the quotas whichever type
    it came up as. Past MAX_PLACEMENTS cases the flexible groups count as giving none (a limit never lower)."""
    types = set(autoscaled_types(config)) & set(CATALOGUE)
    fixed = [group for group in team_groups(config) if group.max_count is None]
    single = tuple(group for group in fixed if not group.fallback_instance_types)
    # Only the type matters where it is an autoscaled one; any other type leaves the autoscaled ones all to give.
    flexible = [(group, tuple(dict.fromkeys(t if t in types else None for t in group_types(group))))
                for group in fixed if group.fallback_instance_types and group_maximum(group)]
    flexible = [(group, options) for group, options in flexible if options != (None,)]
    cases = math.prod(len(options) for _, options in flexible)
    placements = product(*(options for _, options in flexible)) if cases <= MAX_PLACEMENTS else [()]
    held = allocated(config)
    demand: dict[str, Fraction] = {}
    for placement in placements:
        placed = [as_type(group, itype) for (group, _), itype in zip(flexible, placement, strict=False) if itype]
        given = groups_capacity((*single, *placed))
        beyond = {itype: per_instances(CATALOGUE[itype], instances_needed(
            itype, held.get(itype, Resources()) - given.get(itype, Resources()))) for itype in types}
        for name, amount in _by_resource(beyond).items():
            demand[name] = max(demand.get(name, Fraction(0)), amount)
    return demand


def group_ceiling(config: KitConfig) -> dict[str, Fraction]:
    """Per Kubernetes resource, the most the autoscaled groups may hold: each group's max_count of the largest
    of its types in that resource."""
    ceiling: dict[str, Fraction] = {}
    for group in autoscaled_groups(config):
        per_type = [_by_resource(capacity_of([(itype, group.max_count)])) for itype in group_types(group)]
        for name in {name for amounts in per_type for name in amounts}:
            ceiling[name] = ceiling.get(name, Fraction(0)) + max(amounts.get(name, Fraction(0)) for amounts in per_type)
    return ceiling


def node_pool_limits(config: KitConfig) -> dict[str, str]:
    """The NodePool's spec.limits: per resource, the quotas' demand capped by the groups' ceiling, as Kubernetes
    quantities (memory rounded up to whole MiB, accelerators up to whole devices: never below the demand). A
    resource the quotas do not need gets a limit of 0, so Karpenter launches no node that carries it."""
    demand, ceiling = quota_demand(config), group_ceiling(config)
    limits: dict[str, str] = {}
    for name in sorted(ceiling):
        amount = min(demand.get(name, Fraction(0)), ceiling[name])
        limits[name] = f"{math.ceil(amount * 1024)}Mi" if name == MEMORY else str(math.ceil(amount))
    return limits
