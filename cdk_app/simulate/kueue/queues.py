"""The queue manager for BestEffortFIFO ClusterQueues (pkg/cache/queue: cluster_queue.go, manager.go,
inadmissible_workloads.go): one heap order per ClusterQueue (the sticky preemptor first, then higher priority, then older
creation time, then UID), inadmissible workloads parked until their cohort changes, and the equivalence-hash
bulk move of identical workloads (SchedulingEquivalenceHashing, on in v0.19.2).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any

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
    # pending_flavors' answer once asked (by then the assignment that fills `tried` is over)
    pending: bool | None = None

    def pending_flavors(self) -> bool:
        if self.pending is None:
            self.pending = any(idx != -1 for per_pod_set in self.tried for idx in per_pod_set.values())
        return self.pending

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
    # the scheduling equivalence hash (workload.computeSchedulingHash: priority and pod set shapes) as a small
    # int, equal for equal shapes (see make_info)
    shape: int
    last: LastState | None = None
    message: str = ""
    reason: str = ""
    # the last nomination's outcome and what it read (scheduler.Nomination), reused while that holds
    memo: Any = None

    @property
    def key(self) -> str:
        return self.workload.key

    def order(self) -> tuple[int, int, str]:
        # baseCompareFunc after stickiness: priority desc, creation asc, UID asc
        return (-self.workload.priority, self.workload.created, self.uid)


# Each shape tuple numbered once: the queues look a shape up at every push and park, and a nested tuple would be
# hashed anew each time.
_SHAPE_IDS: dict[tuple, int] = {}


def make_info(workload: Workload, uid: str, job_uid: str = "") -> Info:
    totals = [{name: min(MAX_AMOUNT, ps.count * value) for name, value in ps.requests.items()} for ps in workload.pod_sets]
    shape = (workload.priority, tuple(sorted(workload.node_selector.items())),
             tuple((ps.name, ps.count, tuple(sorted(ps.requests.items()))) for ps in workload.pod_sets))
    return Info(workload, uid, job_uid, totals, _SHAPE_IDS.setdefault(shape, len(_SHAPE_IDS)))


Order = tuple[int, int, str]


@dataclass(slots=True)
class _Shape:
    """The workloads of one queue that share an equivalence hash: in the heap (`active`) or parked. Kueue parks
    and unparks them together (handleInadmissibleHash, queueInadmissibleWorkloads), so they move as one dict.
    Its heap is lazy: an entry stays while its workload is parked and counts again when it is unparked;
    `unheaped` holds the parked workloads whose entry is gone (popped), to push when they are unparked."""

    index: int
    heap: list[tuple[Order, str]] = field(default_factory=list)
    heaped: dict[str, Order] = field(default_factory=dict)
    active: dict[str, Info] = field(default_factory=dict)
    parked: dict[str, Info] = field(default_factory=dict)
    unheaped: set[str] = field(default_factory=set)

    def clean(self) -> None:
        """Drops the entries above the best active workload (none when no workload is active: a parked shape
        keeps its entries for its unparking)."""
        heap, heaped, active = self.heap, self.heaped, self.active
        while heap and active:
            order, key = heap[0]
            if heaped.get(key) == order:
                if key in active:
                    return
                del heaped[key]
                if key in self.parked:
                    self.unheaped.add(key)
            heapq.heappop(heap)

    def enter(self, key: str, order: Order) -> None:
        if self.heaped.get(key) != order:
            self.heaped[key] = order
            heapq.heappush(self.heap, (order, key))
        self.unheaped.discard(key)


def _merge(into: dict[str, Info], other: dict[str, Info]) -> dict[str, Info]:
    """The union of two dicts, copying the smaller one (a bulk move stays O(1) for the larger side)."""
    if len(into) < len(other):
        into, other = other, into
    into.update(other)
    return into


@dataclass(slots=True)
class Queue:
    """One ClusterQueue's pending workloads: per shape (equivalence hash) its own heap, and `tops`, a lazy heap
    holding at least the best active workload of every shape that has one - the queue's head is its best valid
    entry."""

    name: str
    shapes: dict[int, _Shape] = field(default_factory=dict)
    by_index: list[_Shape] = field(default_factory=list)
    shape_of: dict[str, _Shape] = field(default_factory=dict)
    tops: list[tuple[Order, str, int]] = field(default_factory=list)
    with_parked: dict[int, _Shape] = field(default_factory=dict)
    active_count: int = 0
    bulk_moved: set[int] = field(default_factory=set)
    # the preemptor workload made sticky by a PendingPreemption requeue (preemptorWorkload, BestEffortFIFO)
    sticky: str | None = None

    @property
    def in_heap(self) -> dict[str, Info]:
        return {key: info for shape in self.by_index for key, info in shape.active.items()}

    @property
    def inadmissible(self) -> dict[str, Info]:
        return {key: info for shape in self.by_index for key, info in shape.parked.items()}

    def has_active(self) -> bool:
        return self.active_count > 0

    def _shape(self, info: Info) -> _Shape:
        shape = self.shapes.get(info.shape)
        if shape is None:
            shape = self.shapes[info.shape] = _Shape(len(self.by_index))
            self.by_index.append(shape)
        self.shape_of[info.key] = shape
        return shape

    def _surface(self, shape: _Shape) -> None:
        shape.clean()
        if shape.heap and shape.active:
            order, key = shape.heap[0]
            heapq.heappush(self.tops, (order, key, shape.index))

    def push(self, info: Info) -> None:
        shape, key = self._shape(info), info.key
        if key not in shape.active:
            shape.active[key] = info
            self.active_count += 1
        order = info.order()
        shape.enter(key, order)
        shape.clean()
        if shape.heap[0][1] == key:  # otherwise the shape's best active workload is already in tops
            heapq.heappush(self.tops, (order, key, shape.index))

    def _take(self, shape: _Shape, key: str) -> Info:
        self.active_count -= 1
        info = shape.active.pop(key)
        self._surface(shape)
        return info

    def pop(self) -> Info | None:
        if not self.active_count:
            return None
        sticky = self.shape_of.get(self.sticky) if self.sticky is not None else None
        if sticky is not None and self.sticky in sticky.active:
            return self._take(sticky, self.sticky)
        tops = self.tops
        while tops:
            order, key, index = heapq.heappop(tops)
            shape = self.by_index[index]
            shape.clean()
            if shape.active and shape.heap[0] == (order, key):
                heapq.heappop(shape.heap)
                del shape.heaped[key]
                return self._take(shape, key)
        raise AssertionError(f"queue {self.name}: {self.active_count} active workloads and no head")

    def delete(self, key: str) -> None:
        shape = self.shape_of.pop(key, None)
        if shape is None:
            return
        if shape.active.pop(key, None) is not None:
            self.active_count -= 1
            self._surface(shape)
        shape.parked.pop(key, None)
        shape.unheaped.discard(key)

    def _park(self, info: Info) -> _Shape:
        shape, key = self._shape(info), info.key
        shape.parked[key] = info
        if shape.heaped.get(key) != info.order():
            shape.unheaped.add(key)
        self.with_parked[shape.index] = shape
        return shape

    def add(self, info: Info) -> None:
        """PushOrUpdate for a new (or re-pending) workload: parked at once when an identical one was found
        inadmissible since the last requeue."""
        if info.shape in self.bulk_moved:
            self._park(info)
        else:
            self.push(info)

    def requeue(self, info: Info, reason: str) -> None:
        """requeueIfNotPresent after a cycle (for a workload just popped): back to the heap when the reason asks
        for an immediate retry or flavors are left to try, otherwise parked (and its identical siblings with it)."""
        if reason in IMMEDIATE or (info.last is not None and info.last.pending_flavors()):
            self.push(info)
            return
        shape = self._park(info)
        if reason in (NO_FIT, PREEMPTION_NO_CANDIDATES):
            # handleInadmissibleHash: every heap workload with the same shape is parked too (their heap
            # entries stay, counting again once they are unparked)
            self.bulk_moved.add(info.shape)
            self.active_count -= len(shape.active)
            shape.parked = _merge(shape.parked, shape.active)
            shape.active = {}

    def requeue_inadmissible(self) -> None:
        """queueInadmissibleWorkloads: all parked workloads back to the heap, the bulk-move record cleared."""
        if self.bulk_moved:
            self.bulk_moved.clear()
        if not self.with_parked:
            return  # nothing parked: the common case for most queues of a cohort when one of them changes
        with_parked, self.with_parked = self.with_parked, {}
        for shape in with_parked.values():
            if not shape.parked:
                continue
            self.active_count += len(shape.parked)
            shape.active = _merge(shape.active, shape.parked)
            shape.parked = {}
            unheaped, shape.unheaped = shape.unheaped, set()
            for key in unheaped:
                order = shape.active[key].order()
                shape.heaped[key] = order
                heapq.heappush(shape.heap, (order, key))
            self._surface(shape)

    def pending_count(self) -> int:
        return sum(len(shape.active) + len(shape.parked) for shape in self.by_index)
