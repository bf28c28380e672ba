"""HyperPod's managed Karpenter: which instance groups it scales, and how far each of its NodePools may grow - the one
rule the NodePools the kit writes (cdk_app/kubernetes/autoscaling.py), the validator and the capacity tables follow.

One NodePool per autoscaled instance type: Karpenter's limits bound a NodePool's nodes per resource ("Limits define
a set of bounds for provisioning capacity", karpenter.sh/v1 NodePool CRD), not per instance type, so one pool over
several types would let a borrower's node of one type use up the limit another team's quota on another type needs
(Kueue admits per flavor and never preempts across them). Each pool's limit is what Kueue may admit on its type at
once (reach.admissible: the allocations, and the unallocated capacity - autoscaled max_count included - as far as
the borrowers may take it) beyond what the fixed On-Demand single-type groups of the type give, in whole nodes,
capped by the autoscaled groups' max_count. A fixed Spot group counts as giving nothing (EC2 may take it back:
capacity.on_demand_groups), nor does a fixed flexible group (it may come up as another of its types): the
autoscaled groups make up for both. So a job validate's reach, `job` and `simulate` admit gets its nodes, and no
pool grows past what Kueue can admit. Karpenter may overshoot a limit by the node it launches last.

Two resources carry the limits: memory and each accelerator. vCPU does not: a group with threads_per_core 1 has
half its vCPU as node capacity (instance_types.node_vcpu, the one rule of what a node has), so a vCPU limit in the
quotas' full vCPU would let twice the nodes in.
"""

from __future__ import annotations

import math
from dataclasses import replace

from cdk_app.config.model import InstanceGroup, KitConfig
from cdk_app.domain.capacity import (
    Resources,
    group_maximum,
    group_types,
    groups_capacity,
    instances_needed,
    on_demand_groups,
    per_instances,
)
from cdk_app.domain.instance_types import ACCELERATOR_RESOURCES, CATALOGUE, node_vcpu
from cdk_app.domain.reach import admissible

MEMORY = "memory"


def autoscaled_groups(config: KitConfig) -> tuple[InstanceGroup, ...]:
    """The instance groups Karpenter scales: those with max_count."""
    if config.hyperpod is None:
        return ()
    return tuple(group for group in config.hyperpod.instance_groups if group.max_count is not None)


def autoscaled_types(config: KitConfig) -> tuple[str, ...]:
    """Every instance type an autoscaled group may run, in config order."""
    return tuple(dict.fromkeys(itype for group in autoscaled_groups(config) for itype in group_types(group)))


def node_ceiling(config: KitConfig) -> dict[str, int]:
    """Per known autoscaled instance type, the most nodes of it the autoscaled groups may hold: the max_count of
    every autoscaled group that may run it (a flexible one may come up as any of its types)."""
    ceiling: dict[str, int] = {}
    for group in autoscaled_groups(config):
        for itype in group_types(group):
            if itype in CATALOGUE:
                ceiling[itype] = ceiling.get(itype, 0) + group.max_count
    return ceiling


def node_demand(config: KitConfig) -> dict[str, int]:
    """Per known autoscaled instance type, the whole nodes of it Kueue may admit work for (reach.admissible) beyond
    the fixed On-Demand single-type groups of the type: what the autoscaled groups must be able to give.

    vCPU is counted in the CPUs nodes have (instance_types.node_vcpu): Kueue admits pods' CPU requests up to the
    quotas' vCPU, which is the catalogue's full figure (task governance's mapping), while a node of a group with
    threads_per_core 1 has half of it. So the fixed groups give their real CPUs, an autoscaled node holds the
    fewest any autoscaled group of the type gives, and where threads are halved the CPU the quotas admit may
    need more nodes than their accelerators and memory do (up to max_count, node_pool_limits)."""
    types = node_ceiling(config)
    if not types:  # nothing to scale (a Batch-only environment has no groups to read)
        return {}
    usable = admissible(config)
    fixed = tuple(group for group in on_demand_groups(config)
                  if group.max_count is None and not group.fallback_instance_types)
    given = groups_capacity(fixed)
    scaled = autoscaled_groups(config)
    demand = {}
    for itype in types:
        wanted = usable.get(itype, Resources())
        given_cpus = sum(node_vcpu(itype, g.threads_per_core) * group_maximum(g) for g in fixed if g.instance_type == itype)
        node_cpus = min(node_vcpu(itype, g.threads_per_core) for g in scaled if itype in group_types(g))
        demand[itype] = max(instances_needed(itype, replace(wanted - given.get(itype, Resources()), vcpu=0)),
                            math.ceil(max(wanted.vcpu - given_cpus, 0) / node_cpus))
    return demand


def node_pool_limits(config: KitConfig) -> dict[str, dict[str, str]]:
    """Per known autoscaled instance type (in config order), its NodePool's spec.limits: the demand's nodes capped
    by the ceiling, as Kubernetes quantities of memory (whole MiB) and the type's accelerators. A type no
    allocation can use gets limits of 0, so Karpenter launches no node of it."""
    demand, ceiling = node_demand(config), node_ceiling(config)
    limits: dict[str, dict[str, str]] = {}
    for itype, most in ceiling.items():
        nodes, spec = min(demand[itype], most), CATALOGUE[itype]
        amount = per_instances(spec, nodes)
        # Memory rounded up to whole MiB: never below the nodes' own.
        limits[itype] = {MEMORY: f"{math.ceil(amount.memory_gib * 1024)}Mi"}
        if spec.accelerator_kind is not None:
            limits[itype][ACCELERATOR_RESOURCES[spec.accelerator_kind]] = str(amount.accelerators)
    return limits
