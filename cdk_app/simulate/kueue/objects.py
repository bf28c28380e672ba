"""Kueue objects (v1beta2, as the oracle's setup document holds them) read into typed ClusterQueues, Cohorts and
ResourceFlavors, and the quota arithmetic of Kueue's resource nodes (pkg/cache/scheduler/resource_node.go) over
them: subtree quota, usage bubbled to the cohort past the lending limit, available and potentially available
capacity. Only flat cohorts (a ClusterQueue's cohort is a root): the HyperPod mapping makes one cohort and no
hierarchy; a Cohort with a parent is refused.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from cdk_app.kubernetes.quantity import parse_quantity

FR = tuple[str, str]  # (flavor, resource)

NEVER, LOWER_PRIORITY, LOWER_OR_NEWER_EQUAL, ANY = "Never", "LowerPriority", "LowerOrNewerEqualPriority", "Any"
MAX_AMOUNT = 2 ** 63 - 1
TRY_NEXT_FLAVOR, MAY_STOP_SEARCH = "TryNextFlavor", "MayStopSearch"


class OutOfScope(ValueError):
    """A Kueue feature the HyperPod mapping cannot express and this scheduler does not model."""


def amount(resource: str, quantity: Any) -> int:
    """A quantity in Kueue's units (pkg/resources: cpu in millicores, everything else in base units, rounded up
    as resource.Quantity.MilliValue/Value do)."""
    value = Fraction(quantity) if isinstance(quantity, int | float) else parse_quantity(str(quantity).strip())
    if value is None:
        raise ValueError(f"bad quantity {quantity!r} for {resource}")
    # Kueue's int64 amounts saturate instead of overflowing (pkg/resources/amount.go)
    return min(MAX_AMOUNT, math.ceil(value * 1000) if resource == "cpu" else math.ceil(value))


@dataclass(frozen=True, slots=True)
class Quota:
    nominal: int
    borrowing_limit: int | None = None
    lending_limit: int | None = None


@dataclass(slots=True)
class ResourceGroup:
    covered: frozenset[str]
    flavors: list[str]


@dataclass(frozen=True, slots=True)
class Flavor:
    name: str
    node_labels: Mapping[str, str]
    # NoSchedule/NoExecute taints as "key=value:Effect" (a workload here carries no tolerations)
    taints: tuple[str, ...] = ()


@dataclass(slots=True)
class Node:
    """A resource node (ClusterQueue or Cohort): quotas, subtree quota and usage (resource_node.go)."""

    name: str
    quotas: dict[FR, Quota] = field(default_factory=dict)
    subtree: dict[FR, int] = field(default_factory=dict)
    usage: dict[FR, int] = field(default_factory=dict)
    parent: Node | None = None
    # bumped when a workload of the node (of a Cohort: of any member) is admitted or released - the committed
    # changes: a cycle's nominations read the snapshot before the cycle edits it, so the same count there means
    # the same usage, the same per-priority sums, the same borrowers (the scheduler's nomination reuse)
    admissions: int = 0

    def local_quota(self, fr: FR) -> int:
        # resourceNode.localQuota: what the lending limit keeps out of the parent's reach
        quota = self.quotas.get(fr)
        if quota is None or quota.lending_limit is None:
            return 0
        return max(0, self.subtree.get(fr, 0) - quota.lending_limit)


@dataclass(slots=True)
class ClusterQueue(Node):
    resource_groups: list[ResourceGroup] = field(default_factory=list)
    within_cluster_queue: str = NEVER
    reclaim_within_cohort: str = NEVER
    borrow_within_cohort: str = NEVER
    borrow_threshold: int | None = None
    when_can_borrow: str = MAY_STOP_SEARCH
    when_can_preempt: str = TRY_NEXT_FLAVOR
    fair_weight: float = 1.0
    # StrictFIFO is read but not modelled: a workload queued to such a ClusterQueue is refused
    queueing_strategy: str = "BestEffortFIFO"
    # None (no selector at all) matches no namespace, as metav1.LabelSelectorAsSelector(nil) does
    namespace_selector: Mapping[str, Any] | None = field(default_factory=dict)
    # ClusterQueue.AllocatableResourceGeneration: bumped when an admitted workload leaves (clusterqueue.go)
    generation: int = 1
    # bumped on every usage change: a share computed at one version holds until the next (fair_sharing.drs)
    version: int = 0
    share_cache: tuple[int, Any] | None = None
    # per flavor resource, the admitted usage per priority (kept by preemption.Preemption.admitted_changed)
    by_priority: dict[FR, dict[int, int]] = field(default_factory=dict)
    # the flavor resources it uses above its nominal quota of them (its memberships of Cohort.borrowers)
    borrowing_on: set[FR] = field(default_factory=set)
    # resource name -> the first resource group covering it (rg_of without a scan per nomination)
    group_of: dict[str, ResourceGroup] = field(init=False, default_factory=dict)
    # potential_available's answers (quotas are fixed once the cohorts are built)
    potential: dict[FR, int] = field(init=False, default_factory=dict)
    # available's answers while the cohort's version is avail_at (a nomination asks the same several times)
    avail_memo: dict[FR, int] = field(init=False, default_factory=dict)
    avail_at: int = field(init=False, default=-1)
    # available's fixed terms per flavor resource (_available_terms)
    avail_terms: dict[FR, tuple[int, int | None]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        for group in reversed(self.resource_groups):
            for resource in group.covered:
                self.group_of[resource] = group

    def rg_of(self, resource: str) -> ResourceGroup | None:
        return self.group_of.get(resource)


@dataclass(slots=True)
class Cohort(Node):
    children: list[ClusterQueue] = field(default_factory=list)
    # calculateLendable per resource name: the root's subtree quota summed across flavors (fair_sharing.go)
    lendable: dict[str, int] = field(default_factory=dict)
    # per flavor resource, the children using more than their nominal quota of it (kept by add/remove_usage, so
    # preemption finds the borrowing ClusterQueues without scanning the cohort)
    borrowers: dict[FR, set[str]] = field(default_factory=dict)
    # per flavor resource f, the ClusterQueue.by_priority of every flavor resource summed over f's borrowers: the
    # preemption bound reads it without a pass over the borrowing ClusterQueues (kept by _track and
    # preemption.Preemption.admitted_changed)
    borrowed_by_priority: dict[FR, dict[FR, dict[int, int]]] = field(default_factory=dict)
    # bumped on every usage change of the cohort or a member (what keeps ClusterQueue.avail_memo valid)
    version: int = 0
    # bumped whenever a member joins or leaves the borrowers of a flavor resource
    borrowers_version: int = 0


# ---------------------------------------------------------------- quota arithmetic (resource_node.go)


def local_available(node: Node, fr: FR) -> int:
    return max(0, node.local_quota(fr) - node.usage.get(fr, 0))


def available(cq: ClusterQueue, fr: FR) -> int:
    """ClusterQueueSnapshot.Available: unused capacity including what the cohort lends, never below 0."""
    # local_quota and local_available inlined: this runs for every flavor resource of every nomination
    used = cq.usage.get(fr, 0)
    parent = cq.parent
    if parent is None:
        return max(0, cq.subtree.get(fr, 0) - used)
    memo = cq.avail_memo
    if cq.avail_at != parent.version:
        cq.avail_at = parent.version
        memo.clear()
    else:
        known = memo.get(fr)
        if known is not None:
            return known
    terms = cq.avail_terms.get(fr)
    if terms is None:
        terms = cq.avail_terms[fr] = _available_terms(cq, fr)
    lq, ceiling = terms
    parent_available = parent.subtree.get(fr, 0) - parent.usage.get(fr, 0)
    if ceiling is not None:
        # the borrowing limit: stored quota plus the limit, less what the queue already uses in the parent
        parent_available = min(ceiling - max(0, used - lq), parent_available)
    value = max(0, max(0, lq - used) + parent_available)
    memo[fr] = value
    return value


def borrowing_cap(cq: ClusterQueue, fr: FR) -> int | None:
    """When the borrowing limit is what bounds available(cq, fr) now: the cohort's unused capacity of fr (parent
    subtree less parent usage) at or above which it still does, and available() answers the same while the
    queue's own usage stays as it is. None when the limit does not bound it (or there is none)."""
    parent = cq.parent
    if parent is None:
        return None
    terms = cq.avail_terms.get(fr)
    if terms is None:
        terms = cq.avail_terms[fr] = _available_terms(cq, fr)
    lq, ceiling = terms
    if ceiling is None:
        return None
    cap = ceiling - max(0, cq.usage.get(fr, 0) - lq)
    return cap if parent.subtree.get(fr, 0) - parent.usage.get(fr, 0) >= cap else None


def _available_terms(cq: ClusterQueue, fr: FR) -> tuple[int, int | None]:
    """available()'s fixed terms: the local quota, and the stored quota plus the borrowing limit (None without a
    limit). No quota for fr: nothing local, no limit."""
    quota = cq.quotas.get(fr)
    if quota is None:
        return 0, None
    lq = 0 if quota.lending_limit is None else max(0, cq.subtree.get(fr, 0) - quota.lending_limit)
    if quota.borrowing_limit is None:
        return lq, None
    return lq, cq.subtree.get(fr, 0) - lq + quota.borrowing_limit


def potential_available(cq: ClusterQueue, fr: FR) -> int:
    """potentialAvailable: the most the ClusterQueue could ever use of fr (borrowing limit respected). Quotas do
    not change while the scheduler runs, so each answer is kept."""
    known = cq.potential.get(fr)
    if known is None:
        known = cq.potential[fr] = _potential_available(cq, fr)
    return known


def _potential_available(cq: ClusterQueue, fr: FR) -> int:
    parent = cq.parent
    if parent is None:
        return cq.subtree.get(fr, 0)
    avail = cq.local_quota(fr) + parent.subtree.get(fr, 0)
    quota = cq.quotas.get(fr)
    if quota is not None and quota.borrowing_limit is not None:
        avail = min(cq.subtree.get(fr, 0) + quota.borrowing_limit, avail)
    return avail


def add_usage(cq: ClusterQueue, usage: Mapping[FR, int]) -> None:
    """addUsage: what exceeds the locally kept quota is stored in the cohort."""
    parent = cq.parent
    cq.version += 1
    if parent is not None:
        parent.version += 1
    for fr, value in usage.items():
        free_locally = local_available(cq, fr)
        used = cq.usage[fr] = cq.usage.get(fr, 0) + value
        if parent is not None:
            if value > free_locally:
                parent.usage[fr] = parent.usage.get(fr, 0) + value - free_locally
            _track(parent, cq, fr, used)


def remove_usage(cq: ClusterQueue, usage: Mapping[FR, int]) -> None:
    parent = cq.parent
    cq.version += 1
    if parent is not None:
        parent.version += 1
    for fr, value in usage.items():
        stored = cq.usage.get(fr, 0) - cq.local_quota(fr)
        used = cq.usage[fr] = cq.usage.get(fr, 0) - value
        if parent is not None:
            if stored > 0:
                parent.usage[fr] = parent.usage.get(fr, 0) - min(value, stored)
            _track(parent, cq, fr, used)


def _track(cohort: Cohort, cq: ClusterQueue, fr: FR, used: int) -> None:
    quota = cq.quotas.get(fr)
    members = cohort.borrowers.setdefault(fr, set())
    borrowing = used > (quota.nominal if quota else 0)
    if borrowing == (cq.name in members):
        return
    cohort.borrowers_version += 1
    if borrowing:
        members.add(cq.name)
        cq.borrowing_on.add(fr)
    else:
        members.discard(cq.name)
        cq.borrowing_on.discard(fr)
    sign = 1 if borrowing else -1
    sums = cohort.borrowed_by_priority.setdefault(fr, {})
    for used_fr, per_priority in cq.by_priority.items():
        totals = sums.setdefault(used_fr, {})
        for priority, value in per_priority.items():
            totals[priority] = totals.get(priority, 0) + sign * value


def borrowing_members(cohort: Cohort, frs: set[FR] | Sequence[FR]) -> set[str]:
    """The cohort's ClusterQueues above nominal quota on any of frs."""
    out: set[str] = set()
    for fr in frs:
        out |= cohort.borrowers.get(fr, set())
    return out


def borrowing_with(node: Node, fr: FR, value: int) -> bool:
    return node.subtree.get(fr, 0) < node.usage.get(fr, 0) + value


def nominal(cq: ClusterQueue, fr: FR) -> int:
    quota = cq.quotas.get(fr)
    return quota.nominal if quota else 0


def is_borrowing(cq: ClusterQueue, fr: FR) -> bool:
    """ClusterQueueSnapshot.Borrowing: usage above nominal quota."""
    return nominal(cq, fr) < cq.usage.get(fr, 0)


def within_nominal(node: Node, frs: Sequence[FR] | set[FR]) -> bool:
    """IsWithinNominalInResources."""
    return all(node.subtree.get(fr, 0) >= node.usage.get(fr, 0) for fr in frs)


def lowest_subtree_height(cq: ClusterQueue, fr: FR, value: int) -> tuple[int, bool]:
    """classical.FindHeightOfLowestSubtreeThatFits for a flat cohort: 0 when the ClusterQueue's own quota holds
    the value, otherwise 1 (the cohort, the whole tree); the flag says whether a smaller subtree than the whole
    tree fits."""
    if not borrowing_with(cq, fr, value) or cq.parent is None:
        return 0, cq.parent is not None
    return (1 if cq.parent.children else 0), False


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """A metav1.LabelSelector against a namespace's labels (the ClusterQueue's namespaceSelector)."""
    if selector is None:
        return False
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        present = key in labels
        if (op == "In" and (not present or labels[key] not in values)) \
                or (op == "NotIn" and present and labels[key] in values) \
                or (op == "Exists" and not present) or (op == "DoesNotExist" and present):
            return False
    return True


# ---------------------------------------------------------------- reading the objects


def _quotas(groups: Sequence[Mapping[str, Any]], where: str) -> tuple[list[ResourceGroup], dict[FR, Quota]]:
    out_groups, quotas = [], {}
    for group in groups or []:
        covered = frozenset(group.get("coveredResources") or [])
        flavors = []
        for flavor in group.get("flavors") or []:
            flavors.append(flavor["name"])
            for entry in flavor.get("resources") or []:
                name = entry["name"]
                borrow, lend = entry.get("borrowingLimit"), entry.get("lendingLimit")
                quotas[(flavor["name"], name)] = Quota(
                    amount(name, entry.get("nominalQuota", 0)),
                    None if borrow is None else amount(name, borrow),
                    None if lend is None else amount(name, lend))
        out_groups.append(ResourceGroup(covered, flavors))
    return out_groups, quotas


def _weight(spec: Mapping[str, Any]) -> float:
    weight = (spec.get("fairSharing") or {}).get("weight")
    if weight is None:
        return 1.0
    value = parse_quantity(str(weight))
    if value is None:
        raise ValueError(f"bad fair sharing weight {weight!r}")
    return float(value)


def read_flavor(obj: Mapping[str, Any]) -> Flavor:
    spec = obj.get("spec") or {}
    taints = tuple(f"{t['key']}={t.get('value', '')}:{t['effect']}" if t.get("value") else f"{t['key']}:{t['effect']}"
                   for t in spec.get("nodeTaints") or [] if t.get("effect") in ("NoSchedule", "NoExecute"))
    if spec.get("topologyName"):
        raise OutOfScope(f"ResourceFlavor {obj['metadata']['name']}: topology-aware scheduling")
    return Flavor(obj["metadata"]["name"], dict(spec.get("nodeLabels") or {}), taints)


def read_cluster_queue(obj: Mapping[str, Any]) -> tuple[ClusterQueue, str | None]:
    name, spec = obj["metadata"]["name"], obj.get("spec") or {}
    for unsupported in ("admissionChecks", "admissionChecksStrategy", "admissionScope", "concurrentAdmissionPolicy"):
        if spec.get(unsupported):
            raise OutOfScope(f"ClusterQueue {name}: {unsupported}")
    if spec.get("stopPolicy", "None") != "None":
        raise OutOfScope(f"ClusterQueue {name}: stopPolicy")
    groups, quotas = _quotas(spec.get("resourceGroups") or [], name)
    preemption = spec.get("preemption") or {}
    borrow = preemption.get("borrowWithinCohort") or {}
    fungibility = spec.get("flavorFungibility") or {}
    if fungibility.get("preference"):
        raise OutOfScope(f"ClusterQueue {name}: flavorFungibility.preference")
    cq = ClusterQueue(name=name, quotas=quotas, subtree={fr: q.nominal for fr, q in quotas.items()},
                      resource_groups=groups,
                      within_cluster_queue=preemption.get("withinClusterQueue", NEVER),
                      reclaim_within_cohort=preemption.get("reclaimWithinCohort", NEVER),
                      borrow_within_cohort=borrow.get("policy", NEVER),
                      borrow_threshold=borrow.get("maxPriorityThreshold"),
                      when_can_borrow=fungibility.get("whenCanBorrow", MAY_STOP_SEARCH),
                      when_can_preempt=fungibility.get("whenCanPreempt", TRY_NEXT_FLAVOR),
                      fair_weight=_weight(spec),
                      queueing_strategy=spec.get("queueingStrategy", "BestEffortFIFO"),
                      namespace_selector=spec.get("namespaceSelector"))
    return cq, spec.get("cohortName") or spec.get("cohort")


def build_cohorts(cluster_queues: list[tuple[ClusterQueue, str | None]],
                  cohort_objects: Sequence[Mapping[str, Any]]) -> dict[str, Cohort]:
    """Every root cohort named by a ClusterQueue or a Cohort object, its subtree quota accumulated from its own
    quota and its children's lendable quota (updateCohortResourceNode / accumulateFromChild)."""
    cohorts: dict[str, Cohort] = {}
    for obj in cohort_objects:
        name, spec = obj["metadata"]["name"], obj.get("spec") or {}
        if spec.get("parentName") or spec.get("parent"):
            raise OutOfScope(f"Cohort {name}: hierarchical cohorts")
        _, quotas = _quotas(spec.get("resourceGroups") or [], name)
        cohorts[name] = Cohort(name=name, quotas=quotas)
    for cq, cohort_name in cluster_queues:
        if cohort_name:
            cohort = cohorts.setdefault(cohort_name, Cohort(name=cohort_name))
            cohort.children.append(cq)
            cq.parent = cohort
    for cohort in cohorts.values():
        cohort.children.sort(key=lambda c: c.name)
        subtree = {fr: q.nominal for fr, q in cohort.quotas.items()}
        for child in cohort.children:
            for fr, quota in child.subtree.items():
                subtree[fr] = subtree.get(fr, 0) + quota - child.local_quota(fr)
        cohort.subtree = subtree
        lendable: dict[str, int] = {}
        for (_, resource), quota in subtree.items():
            lendable[resource] = lendable.get(resource, 0) + quota
        cohort.lendable = lendable
    return cohorts
