"""What task governance makes in Kueue (v0.19.2, kueue.x-k8s.io/v1beta2) from an environment's config: one
ResourceFlavor per instance type of the cluster, one ClusterQueue and LocalQueue per team (and the shared pool)
in one cohort, one WorkloadPriorityClass per priority class of the cluster policy.

The documented part of the translation is fixed here (names, nominal quota as SageMaker fills it, the team's
preemption setting). Where AWS documents no translation, `Choices` names the reading this module makes, with the
one AWS's own samples point to as the default; callers (the real-Kueue harness, k8s-up, a simulator) say which
they ran with. Kueue's controller configuration (fair sharing on or off) is not an object: `kueue_configuration`
gives it. Pure Python: no aws_cdk, no Kubernetes client.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from cdk_app.config.model import DEFAULT_BORROW_LIMIT, KitConfig
from cdk_app.config.names import local_queue, team_cluster_queue, team_namespace
from cdk_app.domain.capacity import (
    Partitions,
    Resources,
    cluster_capacity,
    config_shares,
    partition_capacity,
    partition_reservations,
    reservations,
    shared_pool_quota,
)
from cdk_app.domain.instance_types import ACCELERATOR_RESOURCES, CATALOGUE, EFA_MAXIMUM, EFA_RESOURCE
from cdk_app.domain.mig_profiles import RESOURCE_PREFIX, profiles_of
from cdk_app.domain.reach import absolute_limits, sharing_enabled, unallocated, unallocated_partitions

API_VERSION = "kueue.x-k8s.io/v1beta2"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
CPU, MEMORY = "cpu", "memory"


@dataclass(frozen=True)
class Choices:
    """The readings of what AWS leaves undocumented (shared reference: task-governance mapping, section 5)."""

    # BorrowLimit as a percentage of the team's own nominal quota, per flavor and resource (H1); "idle" (H2,
    # a share of the cluster's idle compute) would need a controller rewriting limits, so it is not offered.
    borrow_limit: Literal["percent-of-nominal"] = "percent-of-nominal"
    # DontLend: the API says only that such a team lends nothing; whether it may still borrow is unknown.
    dont_lend_may_borrow: bool = False
    # Reclaim within the cohort: AWS's walkthrough shows an equal-priority job of the lender evicting a
    # borrower, which only Any allows.
    reclaim_within_cohort: Literal["Never", "LowerPriority", "Any"] = "Any"
    # The cohort's name is not documented; one cohort holds every team (teams can borrow from each other).
    cohort: str = "hyperpod-teams"
    # A flavor selects nodes of its instance type by the well-known label.
    flavor_node_labels: bool = True

    def describe(self) -> dict[str, Any]:
        return {"borrow_limit": self.borrow_limit, "dont_lend_may_borrow": self.dont_lend_may_borrow,
                "reclaim_within_cohort": self.reclaim_within_cohort, "cohort": self.cohort,
                "flavor_node_labels": self.flavor_node_labels}


def quantity(value: Fraction | int | float, unit: str = "") -> str:
    """A Kubernetes quantity for an exact amount: whole numbers as they are, fractions in milli-units (cpu)
    or Mi (memory in GiB), rounded down so a quota is never larger than the config's."""
    value = Fraction(value)
    if value.denominator == 1:
        return f"{value.numerator}{unit}"
    if unit == "Gi":
        return f"{int(value * 1024)}Mi"
    return f"{int(value * 1000)}m"


def flavor_resources(itype: str, amounts: Resources, partitions: Partitions | None = None,
                     mig: tuple[str, ...] = ()) -> dict[str, str]:
    """Amounts of one instance type as the flavor's Kueue quantities (every covered resource); `mig`: the
    MIG profiles the queues cover, with `partitions` holding the (instance type, profile) amounts."""
    spec = CATALOGUE[itype]
    resources = {CPU: quantity(amounts.vcpu), MEMORY: quantity(amounts.memory_gib, "Gi")}
    for kind, name in ACCELERATOR_RESOURCES.items():
        resources[name] = quantity(amounts.accelerators if spec.accelerator_kind == kind else 0)
    # EFA interfaces in the same share of the instance as the vCPU (AWS's sample shows the flavor covering
    # vpc.amazonaws.com/efa): a job asking for EFA on a queue that does not cover it is never admitted. The
    # count per instance is the one AWS documents (EFA_MAXIMUM); a type without one gets none (UNVERIFIED).
    share = amounts.vcpu / spec.vcpu if spec.vcpu else 0
    resources[EFA_RESOURCE] = quantity(share * EFA_MAXIMUM.get(itype, 0))
    for profile in mig:
        resources[RESOURCE_PREFIX + profile] = quantity((partitions or {}).get((itype, profile), 0))
    return resources


def covered_resources(mig: tuple[str, ...] = ()) -> list[str]:
    return [CPU, MEMORY, *ACCELERATOR_RESOURCES.values(), EFA_RESOURCE, *(RESOURCE_PREFIX + p for p in mig)]


def mig_profiles_covered(config: KitConfig) -> tuple[str, ...]:
    """The MIG profiles the queues cover: those the instance groups' geometries give and those the teams'
    quotas name on a type whose GPU offers them. Each becomes the extended resource nvidia.com/<profile> the
    NVIDIA device plugin advertises under migStrategy mixed (e.g. nvidia.com/mig-1g.10gb). UNVERIFIED: AWS
    documents the quota's AcceleratorPartition, not the ClusterQueue task governance makes from it; the kit
    reads it as a nominal quota of that resource on the instance type's flavor, like the accelerators'."""
    named = set(partition_capacity(config))
    for team in config.teams:
        named.update(key for key in partition_reservations(team.quota) if key[1] in profiles_of(key[0]))
    return tuple(sorted({profile for _, profile in named}))


def resource_flavors(config: KitConfig, choices: Choices = Choices()) -> list[dict[str, Any]]:
    flavors = []
    for itype in sorted(cluster_capacity(config)):
        spec: dict[str, Any] = {"nodeLabels": {INSTANCE_TYPE_LABEL: itype}} if choices.flavor_node_labels else {}
        flavors.append({"apiVersion": API_VERSION, "kind": "ResourceFlavor", "metadata": {"name": itype},
                        "spec": spec})
    return flavors


def _borrowing(strategy: str, percent: int, amounts: Resources, itype: str, choices: Choices,
               sharing: bool = True, limits: QueueLimits | None = None) -> dict[str, str]:
    """borrowingLimit per resource: BorrowLimit per cent of the nominal quota, or the team's absolute borrow
    limit on the type where it gives one (cdk_app.domain.reach), none for a team that may not borrow and for
    every team while the cluster policy's IdleResourceSharing is Disabled."""
    limits = limits or QueueLimits()
    if not sharing or strategy == "Lend" or (strategy == "DontLend" and not choices.dont_lend_may_borrow):
        return {name: "0" for name in covered_resources(limits.mig)}
    absolute = limits.absolute.get(itype)
    # Partitions: the percent of the team's own, rounded down; an absolute limit of a profile replaces it.
    partitions = {key: count * percent // 100 for key, count in limits.partitions.items()}
    partitions.update(limits.absolute_partitions)
    allowed = amounts.scaled(Fraction(percent, 100)) if absolute is None else absolute
    return flavor_resources(itype, allowed, partitions, limits.mig)


@dataclass(frozen=True)
class QueueLimits:
    """A queue's MIG side and absolute borrow limits: the profiles covered, the team's partitions per
    (instance type, profile), and its absolute borrow limits (whole-instance amounts and partitions)."""

    mig: tuple[str, ...] = ()
    partitions: Partitions = field(default_factory=dict)
    absolute: dict[str, Resources] = field(default_factory=dict)
    absolute_partitions: Partitions = field(default_factory=dict)


def cluster_queue(name: str, quota: dict[str, Resources], flavors: list[str], *, strategy: str, borrow_limit: int,
                  preempt_team_tasks: str, fair_share_weight: int | None, choices: Choices,
                  sharing: bool = True, limits: QueueLimits | None = None) -> dict[str, Any]:
    limits = limits or QueueLimits()
    entries = []
    for itype in flavors:
        amounts = quota.get(itype, Resources())
        nominal = flavor_resources(itype, amounts, limits.partitions, limits.mig)
        borrowing = _borrowing(strategy, borrow_limit, amounts, itype, choices, sharing, limits)
        resources = []
        for resource in covered_resources(limits.mig):
            entry: dict[str, Any] = {"name": resource, "nominalQuota": nominal[resource],
                                     "borrowingLimit": borrowing[resource]}
            if strategy == "DontLend":
                entry["lendingLimit"] = "0"
            resources.append(entry)
        entries.append({"name": itype, "resources": resources})
    spec: dict[str, Any] = {
        "cohortName": choices.cohort,
        "namespaceSelector": {},
        "resourceGroups": [{"coveredResources": covered_resources(limits.mig), "flavors": entries}],
        "preemption": {"withinClusterQueue": preempt_team_tasks,
                       "reclaimWithinCohort": choices.reclaim_within_cohort},
    }
    if fair_share_weight is not None:
        spec["fairSharing"] = {"weight": str(fair_share_weight)}
    return {"apiVersion": API_VERSION, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def _queues(team_name: str, quota: dict[str, Resources], flavors: list[str], fair: bool, choices: Choices, *,
            strategy: str, borrow_limit: int, preempt: str, weight: int, sharing: bool,
            limits: QueueLimits) -> list[dict[str, Any]]:
    queue = cluster_queue(team_cluster_queue(team_name), quota, flavors, strategy=strategy, borrow_limit=borrow_limit,
                          preempt_team_tasks=preempt, fair_share_weight=weight if fair else None, choices=choices,
                          sharing=sharing, limits=limits)
    local = {"apiVersion": API_VERSION, "kind": "LocalQueue",
             "metadata": {"name": local_queue(team_name), "namespace": team_namespace(team_name)},
             "spec": {"clusterQueue": team_cluster_queue(team_name)}}
    return [queue, local]


def idle_cohort(pool: dict[str, Resources], flavors: list[str], choices: Choices, mig: tuple[str, ...] = (),
                partitions: Partitions | None = None) -> dict[str, Any]:
    """IdleResourceSharing Enabled: "unallocated resources are automatically calculated and made available for
    entities to borrow" (API_SchedulerConfig). Read here as the cohort's own nominal quota (a Cohort object holding
    what no ClusterQueue does), which its ClusterQueues borrow within their borrowingLimit and which nobody
    reclaims (UNVERIFIED: the mapping reference calls it "possibly a cohort-level quota")."""
    entries = [{"name": itype, "resources": [{"name": name, "nominalQuota": amount}
                                             for name, amount in flavor_resources(itype, pool.get(itype, Resources()),
                                                                                  partitions, mig).items()]}
               for itype in flavors]
    return {"apiVersion": API_VERSION, "kind": "Cohort", "metadata": {"name": choices.cohort},
            "spec": {"resourceGroups": [{"coveredResources": covered_resources(mig), "flavors": entries}]}}


def priority_classes(config: KitConfig) -> list[dict[str, Any]]:
    """<name>-priority with the class's weight as its value (UNVERIFIED; Kueue only compares values, so any
    order-preserving mapping decides the same)."""
    return [{"apiVersion": API_VERSION, "kind": "WorkloadPriorityClass", "metadata": {"name": f"{pc.name}-priority"},
             "value": pc.weight} for pc in config.cluster_policy.priority_classes]


def governance_objects(config: KitConfig, choices: Choices = Choices()) -> list[dict[str, Any]]:
    """Every Kueue object task governance makes for the config's enabled teams (a disabled compute
    allocation is left out: nothing is admitted for it), flavors first; none without a HyperPod cluster."""
    if config.hyperpod is None:
        return []
    objects = [*resource_flavors(config, choices), *priority_classes(config)]
    flavors, fair = sorted(cluster_capacity(config)), config.cluster_policy.fair_share == "Enabled"
    sharing = sharing_enabled(config)
    pool = unallocated(config)
    mig = mig_profiles_covered(config)
    idle_partitions = unallocated_partitions(config)
    if sharing and (any(not amounts.is_zero() for amounts in pool.values()) or any(idle_partitions.values())):
        objects.append(idle_cohort(pool, flavors, choices, mig, idle_partitions))
    for team in config.teams:
        if team.enabled:
            limit = team.borrow_limit if team.borrow_limit is not None else DEFAULT_BORROW_LIMIT
            limits = QueueLimits(mig, partition_reservations(team.quota), absolute_limits(config, team),
                                 partition_reservations(team.absolute_borrow_limits))
            objects.extend(_queues(team.name, reservations(team.quota, config_shares(config)), flavors, fair, choices,
                                   strategy=team.sharing_strategy, borrow_limit=limit,
                                   preempt=team.preempt_team_tasks, weight=team.fair_share_weight,
                                   sharing=sharing, limits=limits))
    shared = config.shared_pool
    if shared is not None:
        objects.extend(_queues(shared.name, reservations(shared_pool_quota(config)), flavors, fair, choices,
                               strategy=shared.sharing_strategy, borrow_limit=DEFAULT_BORROW_LIMIT,
                               preempt="LowerPriority", weight=shared.fair_share_weight, sharing=sharing,
                               limits=QueueLimits(mig)))
    return objects


def governed_teams(config: KitConfig) -> list[str]:
    """Every team with a compute allocation, and the shared pool: the teams task governance makes a
    namespace and queues for (and the guardrails bind)."""
    return [team.name for team in config.teams] + ([config.shared_pool.name] if config.shared_pool else [])


def team_namespaces(config: KitConfig) -> list[str]:
    return [team_namespace(name) for name in governed_teams(config)]


def kueue_configuration(config: KitConfig) -> dict[str, Any]:
    """The part of Kueue's controller configuration the cluster policy sets: fair sharing, with Kueue's
    default preemption strategies when on."""
    if config.cluster_policy.fair_share != "Enabled":
        return {"fairSharing": {"enable": False}}
    return {"fairSharing": {"enable": True,
                            "preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]}}

