"""Flavor assignment (pkg/scheduler/flavorassigner/flavorassigner.go): for each pod set, the flavor of each
resource group its requests fall in, scanning the group's flavors in order from where the last scan stopped, with
Kueue's granular modes (fit / reclaim / preempt / no candidates / no fit), flavor fungibility and its messages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from cdk_app.simulate.kueue import objects as o
from cdk_app.simulate.kueue.queues import Info, LastState

# FlavorAssignmentMode, ordered from least to most preferred
NO_FIT, PREEMPT, FIT = 0, 1, 3
MODE_NAMES = {NO_FIT: "NoFit", PREEMPT: "Preempt", FIT: "Fit"}
# granular preemptionMode
G_NO_FIT, G_NO_CANDIDATES, G_PREEMPT, G_RECLAIM, G_FIT = 0, 1, 2, 3, 4
_TO_MODE = {G_NO_FIT: NO_FIT, G_NO_CANDIDATES: PREEMPT, G_PREEMPT: PREEMPT, G_RECLAIM: PREEMPT, G_FIT: FIT}


def fnv1a64(text: str) -> int:
    h = 0xCBF29CE484222325
    for byte in text.encode():
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


_ORDER: dict[str, tuple[int, str]] = {}
_IN_ORDER: dict[tuple[str, ...], tuple[str, ...]] = {}


def resource_order(name: str) -> tuple[int, str]:
    """SliceRequests iterate resources by their FNV-1a hash, then name (pkg/resources/slice_requests.go)."""
    key = _ORDER.get(name)
    if key is None:
        key = _ORDER[name] = (fnv1a64(name), name)
    return key


def in_resource_order(names: tuple[str, ...]) -> tuple[str, ...]:
    """The names sorted by resource_order (kept per set of names: a few pod set shapes make every nomination)."""
    ordered = _IN_ORDER.get(names)
    if ordered is None:
        ordered = _IN_ORDER[names] = tuple(sorted(names, key=resource_order))
    return ordered


def quantity_string(resource: str, value: int) -> str:
    """ResourceFormatter.ResourceQuantityString: Kubernetes' canonical quantity (cpu from millicores, memory in
    binary suffixes when exact)."""
    if resource == "cpu":
        if value % 1000:
            return f"{value}m"
        value //= 1000
    elif resource in ("memory", "ephemeral-storage") and abs(value) >= 1024:
        for power, suffix in ((6, "Ei"), (5, "Pi"), (4, "Ti"), (3, "Gi"), (2, "Mi"), (1, "Ki")):
            if value % (1024 ** power) == 0:
                return f"{value // 1024 ** power}{suffix}"
        return str(value)
    if value == 0:
        return "0"
    for power, suffix in ((6, "E"), (5, "P"), (4, "T"), (3, "G"), (2, "M"), (1, "k")):
        if value % (1000 ** power) == 0:
            return f"{value // 1000 ** power}{suffix}"
    return str(value)


@dataclass(slots=True)
class PodSetAssignment:
    name: str
    count: int
    requests: dict[str, int]
    # resource -> (flavor, mode, borrow, tried flavor idx)
    flavors: dict[str, tuple[str, int, int, int]] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)

    def mode(self) -> int:
        if not self.reasons:
            return FIT
        if not self.flavors:
            return NO_FIT
        return min(f[1] for f in self.flavors.values())


@dataclass(slots=True)
class Assignment:
    pod_sets: list[PodSetAssignment] = field(default_factory=list)
    borrowing: int = 0
    usage: dict[o.FR, int] = field(default_factory=dict)
    last: LastState | None = None

    def mode(self) -> int:
        if not self.pod_sets:
            return NO_FIT
        return min(ps.mode() for ps in self.pod_sets)

    def message(self) -> str:
        parts = [f"couldn't assign flavors to pod set {ps.name}: {', '.join(sorted(ps.reasons))}"
                 for ps in self.pod_sets if ps.reasons]
        return "; ".join(parts)

    def frs_need_preemption(self) -> set[o.FR]:
        return {(f[0], res) for ps in self.pod_sets for res, f in ps.flavors.items() if f[1] == PREEMPT}

    def flavor_map(self) -> dict[str, dict[str, str]]:
        return {ps.name: {res: f[0] for res, f in ps.flavors.items()} for ps in self.pod_sets}


# SimulatePreemption(cq, info, fr, quantity) -> (granular mode, borrow after preemptions)
Oracle = Callable[[o.ClusterQueue, Info, o.FR, int], tuple[int, int]]
# Whether that simulation is sure to find no targets (cq, info, fr, quantity, available(cq, fr) now): a cheap bound
Hopeless = Callable[[o.ClusterQueue, Info, o.FR, int, int], bool]


def _preferred(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """isPreferred with the default (BorrowingOverPreemption) order: (granular mode, borrowing level)."""
    if a[0] == G_NO_FIT:
        return False
    if b[0] == G_NO_FIT:
        return True
    if (a[0] == G_NO_CANDIDATES) != (b[0] == G_NO_CANDIDATES):
        return a[0] != G_NO_CANDIDATES
    if a[0] != b[0]:
        return a[0] > b[0]
    return a[1] < b[1]


def _try_next(mode: tuple[int, int], cq: o.ClusterQueue) -> bool:
    if mode[0] in (G_NO_FIT, G_NO_CANDIDATES):
        return True
    if mode[0] in (G_PREEMPT, G_RECLAIM) and cq.when_can_preempt == o.TRY_NEXT_FLAVOR:
        return True
    return mode[1] != 0 and cq.when_can_borrow == o.TRY_NEXT_FLAVOR


def _flavor_mismatch(flavor: o.Flavor | None, name: str, selector: Mapping[str, str]) -> str | None:
    """checkFlavorForPodSets: taints (a workload here tolerates none), then the node selector restricted to the
    flavor's own label keys."""
    if flavor is None:
        return f"flavor {name} not found"
    if flavor.taints:
        return f"untolerated taint {flavor.taints[0]} in flavor {name}"
    for key, value in selector.items():
        if key in flavor.node_labels and flavor.node_labels[key] != value:
            return f"flavor {name} doesn't match node affinity"
    return None


class FlavorAssigner:
    def __init__(self, info: Info, cq: o.ClusterQueue, flavors: Mapping[str, o.Flavor], fair_sharing: bool,
                 oracle: Oracle, hopeless: Hopeless, cycle: int) -> None:
        self.info, self.cq, self.flavors, self.fair, self.oracle, self.hopeless, self.cycle = \
            info, cq, flavors, fair_sharing, oracle, hopeless, cycle
        # preemption simulations not run yet (pod set index, flavor resource, quantity): see resolve()
        self.deferred: list[tuple[int, o.FR, int]] = []
        # the flavor resources whose one-resource simulation the hopeless bound settled
        self.hopeless_frs: list[o.FR] = []
        # every available() answer the assignment read, in order: with the queue's own admissions, all it read of
        # the cohort unless the preemption bounds read more (Preemption.cohort_reads)
        # (with objects.borrowing_cap's answer, which lets a later check skip recomputing it)
        self.reads: list[tuple[o.FR, int, int | None]] = []

    def resolve(self, result: Assignment) -> None:
        """Runs the deferred preemption simulations against the snapshot assign() saw and puts their borrowing
        levels in place of the provisional ones. A simulation is deferred only where its flavor is the last its
        group can try: its mode is then Preempt whatever it finds, so only the borrowing level waits on it - which
        the scheduler reads only for an entry that preempts or reserves capacity."""
        for index, fr, value in self.deferred:
            flavors = result.pod_sets[index].flavors
            flavor, resource = fr
            current = flavors.get(resource)
            if current is None or current[0] != flavor:
                continue
            gmode, borrow = self.oracle(self.cq, self.info, fr, value)
            flavors[resource] = (flavor, _TO_MODE[gmode], borrow, current[3])
        self.deferred = []
        result.borrowing = max((f[2] for ps in result.pod_sets for f in ps.flavors.values()), default=0)

    def assign(self) -> Assignment:
        """assignFlavors: pod sets in order; the first that gets no flavor ends the assignment."""
        cq, info = self.cq, self.info
        result = Assignment(last=LastState([], cq.generation, self.cycle))
        group_of = cq.group_of
        pods_covered = "pods" in group_of
        for index, (spec, totals) in enumerate(zip(info.workload.pod_sets, info.totals, strict=True)):
            requests = dict(totals)
            if pods_covered:
                requests["pods"] = spec.count
            ps = PodSetAssignment(spec.name, spec.count, requests)
            group: dict[str, tuple[str, int, int, int]] | None = {}
            reasons: list[str] = []
            order = in_resource_order(tuple(requests))
            for resource in order:
                if resource not in group_of and requests[resource] == 0:
                    continue
                if group is not None and resource in group:
                    continue
                found, status = self._find_flavor(index, requests, order, resource, result.usage)
                if found is None:
                    group, reasons = None, status
                    break
                group.update(found)
                reasons.extend(status)
            if group:
                ps.flavors = {res: f for res, f in group.items() if res in requests}
            ps.reasons = reasons
            self._append(result, ps)
            if requests and not ps.flavors:
                return result
        return result

    @staticmethod
    def _append(result: Assignment, ps: PodSetAssignment) -> None:
        result.pod_sets.append(ps)
        tried = {}
        for res, (flavor, _, borrow, tried_idx) in ps.flavors.items():
            result.borrowing = max(result.borrowing, borrow)
            fr = (flavor, res)
            result.usage[fr] = result.usage.get(fr, 0) + ps.requests.get(res, 0)
            tried[res] = tried_idx
        assert result.last is not None
        result.last.tried.append(tried)

    def _find_flavor(self, index: int, requests: dict[str, int], order: tuple[str, ...], resource: str,
                     assumed: dict[o.FR, int]) -> tuple[dict[str, tuple[str, int, int, int]] | None, list[str]]:
        """findFlavorForPodSets: the best flavor of the resource's group for all the group's resources (`order`:
        the requested resources in resource_order)."""
        cq = self.cq
        group = cq.group_of.get(resource)
        if group is None:
            return None, [f"resource {resource} unavailable in ClusterQueue"]
        covered = group.covered
        wanted = [r for r in order if r in covered]
        reasons: list[str] = []
        best: dict[str, tuple[str, int, int]] | None = None
        best_mode = (G_NO_FIT, 1 << 62)
        attempted = -1
        last = self.info.last
        start = last.next_flavor(index, resource) if last is not None else 0
        selector = self.info.workload.node_selector
        # the only flavor left to try: whatever a preemption simulation finds, this flavor is chosen in Preempt mode
        defer = index if start == len(group.flavors) - 1 else None
        for idx in range(start, len(group.flavors)):
            attempted = idx
            name = group.flavors[idx]
            mismatch = _flavor_mismatch(self.flavors.get(name), name, selector)
            if mismatch is not None:
                reasons.append(mismatch)
                continue
            chosen: dict[str, tuple[str, int, int]] = {}
            rep = (G_FIT, 0)
            for res in wanted:
                fr = (name, res)
                gmode, borrow, why = self._fits(fr, assumed.get(fr, 0), requests[res], defer)
                reasons.extend(why)
                if _preferred(rep, (gmode, borrow)):
                    rep = (gmode, borrow)
                if rep[0] == G_NO_FIT:
                    continue
                chosen[res] = (name, _TO_MODE[gmode], borrow)
            if not _try_next(rep, cq):
                best, best_mode = chosen, rep
                break
            if _preferred(rep, best_mode):
                best, best_mode = chosen, rep
        if best is None:
            return None, reasons
        tried = -1 if attempted == len(group.flavors) - 1 else attempted
        out = {res: (f, m, b, tried) for res, (f, m, b) in best.items()}
        return out, ([] if best_mode[0] == G_FIT else reasons)

    def _fits(self, fr: o.FR, assumed: int, request: int, defer: int | None = None) -> tuple[int, int, list[str]]:
        """fitsResourceQuota. `defer`: the pod set's index when a preemption simulation the bound does not settle
        may wait for resolve() (answered meanwhile as Preempt with the borrowing level before preemption)."""
        cq, (flavor, resource) = self.cq, fr
        value = assumed + request
        capacity = o.potential_available(cq, fr)
        if value > capacity:
            return G_NO_FIT, 0, [
                f"insufficient quota for {resource} in flavor {flavor}, previously considered podsets requests "
                f"({quantity_string(resource, assumed)}) + current podset request "
                f"({quantity_string(resource, request)}) > maximum capacity ({quantity_string(resource, capacity)})"]
        borrow, may_reclaim = o.lowest_subtree_height(cq, fr, value)
        avail = o.available(cq, fr)
        self.reads.append((fr, avail, o.borrowing_cap(cq, fr)))
        if value <= avail:
            return G_FIT, borrow, []
        why = [f"insufficient unused quota for {resource} in flavor {flavor}, "
               f"{quantity_string(resource, value - avail)} more needed"]
        can_preempt_borrowing = (cq.borrow_within_cohort != o.NEVER
                                 or (self.fair and cq.reclaim_within_cohort != o.NEVER))
        if o.nominal(cq, fr) >= value or may_reclaim or can_preempt_borrowing:
            if self.hopeless(cq, self.info, fr, value, avail):
                self.hopeless_frs.append(fr)
                return G_NO_CANDIDATES, borrow, why  # simulate's answer when it finds no targets
            if defer is not None:
                self.deferred.append((defer, fr, value))
                return G_PREEMPT, borrow, why
            gmode, borrow_after = self.oracle(cq, self.info, fr, value)
            return gmode, borrow_after, why
        return G_NO_FIT, borrow, why
