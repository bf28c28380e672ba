"""Fair sharing (pkg/cache/scheduler/fair_sharing.go, pkg/scheduler/fair_sharing_iterator.go): a ClusterQueue's
dominant resource share (DRS, per resource name summed across flavors, divided by its weight; weight 0 is an
infinite share once it borrows), its comparison, and the tournament that orders a cycle's entries.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from cdk_app.simulate.kueue import objects as o


@dataclass(frozen=True, slots=True)
class DRS:
    weight: float
    ratio: float
    dominant: str = ""
    borrowing: bool = False
    borrowed: tuple[o.FR, ...] = ()

    def share(self) -> float:
        """PreciseWeightedShare."""
        if self.ratio == 0:
            return 0.0
        if self.weight == 0:
            return math.inf
        return self.ratio / self.weight

    def zero_weight_borrows(self) -> bool:
        return self.weight == 0 and self.ratio != 0

    def borrowing_on(self, requested: Mapping[o.FR, int]) -> bool:
        return any(requested.get(fr, 0) > 0 for fr in self.borrowed)


NEGATIVE = DRS(1.0, -1.0)


def compare(a: DRS, b: DRS) -> int:
    """CompareDRS: a zero-weight borrower is above everyone else; otherwise the weighted shares."""
    az, bz = a.zero_weight_borrows(), b.zero_weight_borrows()
    if az and bz:
        x, y = a.ratio, b.ratio
    elif az:
        return 1
    elif bz:
        return -1
    else:
        x, y = a.share(), b.share()
    return (x > y) - (x < y)


def drs(cq: o.ClusterQueue) -> DRS:
    """dominantResourceShare of a ClusterQueue: what it uses above its quota, over what the cohort could lend,
    per resource name; the largest ratio (ties: the alphabetically first resource)."""
    cached = cq.share_cache
    if cached is not None and cached[0] == cq.version:
        return cached[1]
    share = _drs(cq)
    cq.share_cache = (cq.version, share)
    return share


def drs_without(cq: o.ClusterQueue, usage: Mapping[o.FR, int]) -> DRS:
    """The share the ClusterQueue would have with `usage` (an admitted workload's) gone: what removing the
    workload and asking drs() answers, without touching the snapshot."""
    return _drs(cq, usage)


def _drs(cq: o.ClusterQueue, without: Mapping[o.FR, int] | None = None) -> DRS:
    parent = cq.parent
    if parent is None:
        return DRS(cq.fair_weight, 0.0)
    borrowing: dict[str, int] = {}
    borrowed = []
    usage = cq.usage
    for fr, quota in cq.subtree.items():
        over = usage.get(fr, 0) - quota
        if without is not None:
            over -= without.get(fr, 0)
        if over > 0:
            borrowing[fr[1]] = borrowing.get(fr[1], 0) + over
            borrowed.append(fr)
    if not borrowing:
        return DRS(cq.fair_weight, 0.0)
    ratio, dominant = 0.0, ""
    for name, value in borrowing.items():
        lendable = parent.lendable.get(name, 0)
        if lendable > 0:
            r = float(value) * 1000.0 / float(lendable)
            if r > ratio or (r == ratio and name < dominant):
                ratio, dominant = r, name
    return DRS(cq.fair_weight, ratio, dominant, True, tuple(borrowed))
