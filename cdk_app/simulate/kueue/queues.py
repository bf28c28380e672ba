"""The queue manager for BestEffortFIFO ClusterQueues (pkg/cache/queue: cluster_queue.go, manager.go,
inadmissible_workloads.go): one heap per ClusterQueue (the sticky preemptor first, then higher priority, then older
creation time, then UID), inadmissible workloads parked until their cohort changes, and the equivalence-hash
bulk move of identical workloads (SchedulingEquivalenceHashing, on in v0.19.2).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from cdk_app.simulate.kueue.api import Workload
from cdk_app.simulate.kueue.objects import MAX_AMOUNT

# requeue reasons (cluster_queue.go RequeueReason)
FAILED_AFTER_NOMINATION = "FailedAfterNomination"
PENDING_PREEMPTION = "PendingPreemption"
NO_FIT = "NoFit"
PREEMPTION_NO_CANDIDATES = "PreemptionNoCandidates"
IMMEDIATE = frozenset({FAILED_AFTER_NOMINATION, PENDING_PREEMPTION})


@dataclass(slots=True)
class LastState:
    """workload.AssignmentClusterQueueState: where the flavor scan stopped, per pod set and resource."""

    tried: list[dict[str, int]]
    generation: int
    cycle: int

    def pending_flavors(self) -> bool:
        return any(idx != -1 for per_pod_set in self.tried for idx in per_pod_set.values())

    def next_flavor(self, pod_set: int, resource: str) -> int:
        if pod_set >= len(self.tried):
            return 0
        idx = self.tried[pod_set].get(resource)
        return 0 if idx is None else idx + 1


@dataclass(slots=True)
class Info:
    """A pending workload as the queues hold it (workload.Info)."""

    workload: Workload
    uid: str
    job_uid: str
    # per pod set: its resource -> total request (count x per pod)
    totals: list[dict[str, int]]
    # the scheduling equivalence hash (workload.computeSchedulingHash): priority and pod set shapes
    shape: tuple
    last: LastState | None = None
    message: str = ""
    reason: str = ""

    @property
    def key(self) -> str:
        return self.workload.key

    def order(self) -> tuple[int, int, str]:
        # baseCompareFunc after stickiness: priority desc, creation asc, UID asc
        return (-self.workload.priority, self.workload.created, self.uid)


def make_info(workload: Workload, uid: str, job_uid: str = "") -> Info:
    totals = [{name: min(MAX_AMOUNT, ps.count * value) for name, value in ps.requests.items()} for ps in workload.pod_sets]
    shape = (workload.priority, tuple(sorted(workload.node_selector.items())),
             tuple((ps.name, ps.count, tuple(sorted(ps.requests.items()))) for ps in workload.pod_sets))
    return Info(workload, uid, job_uid, totals, shape)


@dataclass(slots=True)
class Queue:
    """One ClusterQueue's pending workloads.

    The heap is lazy: a workload parked or popped as sticky keeps its heap entry, so unparking it again (every
    change in its cohort) costs no push; `heaped` records which (order, key) entries the heap holds, an entry
    counting only while its key is in `in_heap`. A workload's order never changes, so one entry per key serves."""

    name: str
    heap: list[tuple[tuple[int, int, str], str]] = field(default_factory=list)
    heaped: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    in_heap: dict[str, Info] = field(default_factory=dict)
    inadmissible: dict[str, Info] = field(default_factory=dict)
    bulk_moved: set[tuple] = field(default_factory=set)
    # the preemptor workload made sticky by a PendingPreemption requeue (preemptorWorkload, BestEffortFIFO)
    sticky: str | None = None

    def push(self, info: Info) -> None:
        key = info.key
        self.in_heap[key] = info
        order = info.order()
        if self.heaped.get(key) != order:
            self.heaped[key] = order
            heapq.heappush(self.heap, (order, key))

    def pop(self) -> Info | None:
        in_heap = self.in_heap
        if self.sticky is not None and self.sticky in in_heap:
            return in_heap.pop(self.sticky)
        heap, heaped = self.heap, self.heaped
        # without the emptiness check a queue of parked workloads would drain its heap every cycle
        while in_heap:
            order, key = heapq.heappop(heap)
            if heaped.get(key) != order:
                continue  # an entry superseded by a push with another order
            del heaped[key]
            info = in_heap.pop(key, None)
            if info is not None:
                return info
        return None

    def delete(self, key: str) -> None:
        self.in_heap.pop(key, None)
        self.inadmissible.pop(key, None)

    def add(self, info: Info) -> None:
        """PushOrUpdate for a new (or re-pending) workload: parked at once when an identical one was found
        inadmissible since the last requeue."""
        if info.shape in self.bulk_moved:
            self.inadmissible[info.key] = info
        else:
            self.push(info)

    def requeue(self, info: Info, reason: str) -> None:
        """requeueIfNotPresent after a cycle: back to the heap when the reason asks for an immediate retry or
        flavors are left to try, otherwise parked (and its identical siblings with it)."""
        if reason in IMMEDIATE or (info.last is not None and info.last.pending_flavors()):
            self.push(info)
            return
        self.inadmissible[info.key] = info
        if reason in (NO_FIT, PREEMPTION_NO_CANDIDATES):
            # handleInadmissibleHash: every heap workload with the same shape is parked too
            shape = info.shape
            self.bulk_moved.add(shape)
            in_heap, inadmissible = self.in_heap, self.inadmissible
            for key in [k for k, other in in_heap.items() if other.shape == shape]:
                inadmissible[key] = in_heap.pop(key)

    def requeue_inadmissible(self) -> None:
        """queueInadmissibleWorkloads: all parked workloads back to the heap, the bulk-move record cleared."""
        self.bulk_moved.clear()
        parked, self.inadmissible = self.inadmissible, {}
        if not parked:
            return
        in_heap, heaped = self.in_heap, self.heaped
        in_heap.update(parked)
        missing = [info for key, info in parked.items() if heaped.get(key) != info.order()]
        if len(missing) * 4 > len(self.heap):
            # many entries to push: one heapify of the live entries is cheaper and drops the dead ones
            self.heaped = {key: info.order() for key, info in in_heap.items()}
            self.heap = [(order, key) for key, order in self.heaped.items()]
            heapq.heapify(self.heap)
            return
        for info in missing:
            order = info.order()
            heaped[info.key] = order
            heapq.heappush(self.heap, (order, info.key))

    def pending_count(self) -> int:
        return len(self.in_heap) + len(self.inadmissible)
