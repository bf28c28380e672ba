"""Preemption (pkg/scheduler/preemption): which admitted workloads a pending one may evict - classic (priority
and reclaim within a flat cohort, preemption.go classicalPreemptions with classical/ candidates) or fair sharing
(fairPreemptions with the strategies LessThanOrEqualToFinalShare and LessThanInitialShare) - and the simulation
the flavor assigner asks for (preemption_oracle.go).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from cdk_app.simulate.kueue import fair_sharing as fs
from cdk_app.simulate.kueue import objects as o
from cdk_app.simulate.kueue.api import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_FAIR_SHARING,
    IN_COHORT_RECLAIM_WHILE_BORROWING,
    IN_COHORT_RECLAMATION,
)
from cdk_app.simulate.kueue.flavors import G_NO_CANDIDATES, G_PREEMPT, G_RECLAIM

HUMAN_REASONS = {IN_CLUSTER_QUEUE: "prioritization in the ClusterQueue",
                 IN_COHORT_RECLAMATION: "reclamation within the cohort",
                 IN_COHORT_FAIR_SHARING: "Fair Sharing within the cohort",
                 IN_COHORT_RECLAIM_WHILE_BORROWING: "reclamation within the cohort while borrowing"}

# classical preemptionVariant
WITHIN_CQ, HIERARCHICAL_RECLAIM, RECLAIM_WITHOUT_BORROWING, RECLAIM_WHILE_BORROWING = 1, 2, 3, 4
_VARIANT_REASON = {WITHIN_CQ: IN_CLUSTER_QUEUE, HIERARCHICAL_RECLAIM: IN_COHORT_RECLAMATION,
                   RECLAIM_WITHOUT_BORROWING: IN_COHORT_RECLAMATION,
                   RECLAIM_WHILE_BORROWING: IN_COHORT_RECLAIM_WHILE_BORROWING}


@dataclass(slots=True)
class Admitted:
    """A workload holding quota: its ClusterQueue, what it uses per flavor and resource, and when it was
    admitted (the QuotaReserved time the candidate ordering reads)."""

    key: str
    cluster_queue: str
    priority: int
    created: int
    uid: str
    admitted_at: int
    flavors: dict[str, dict[str, str]]
    usage: dict[o.FR, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Target:
    workload: Admitted
    reason: str


@dataclass(slots=True)
class Preemptor:
    """The incoming workload as preemption sees it."""

    key: str
    cq: o.ClusterQueue
    priority: int
    created: int
    usage: dict[o.FR, int]  # what it would use (the whole assignment, or one flavor resource when simulating)
    frs: set[o.FR]  # the flavor resources that need preemption


class Preemption:
    def __init__(self, cluster_queues: Mapping[str, o.ClusterQueue], admitted: Mapping[str, dict[str, Admitted]],
                 fair_sharing: bool, strategies: tuple[str, ...]) -> None:
        self.cqs, self.admitted, self.fair = cluster_queues, admitted, fair_sharing
        self.strategies = [_STRATEGIES[s] for s in strategies] or [_STRATEGIES["LessThanOrEqualToFinalShare"],
                                                                   _STRATEGIES["LessThanInitialShare"]]

    # ------------------------------------------------------------ snapshot edits

    def remove(self, target: Admitted) -> None:
        o.remove_usage(self.cqs[target.cluster_queue], target.usage)

    def restore(self, targets: list[Target]) -> None:
        for t in targets:
            o.add_usage(self.cqs[t.workload.cluster_queue], t.workload.usage)

    # ------------------------------------------------------------ entry points

    def targets(self, p: Preemptor) -> list[Target]:
        return self._fair(p) if self.fair else self._classical(p)

    def simulate(self, p: Preemptor, fr: o.FR, value: int) -> tuple[int, int]:
        """PreemptionOracle.SimulatePreemption: the granular mode for one flavor resource and the borrowing
        level once its targets are gone."""
        cq = p.cq
        targets = self.targets(p)
        if not targets:
            return G_NO_CANDIDATES, o.lowest_subtree_height(cq, fr, value)[0]
        for t in targets:
            self.remove(t.workload)
        borrow = o.lowest_subtree_height(cq, fr, value)[0]
        self.restore(targets)
        mode = G_PREEMPT if any(t.workload.cluster_queue == cq.name for t in targets) else G_RECLAIM
        return mode, borrow

    # ------------------------------------------------------------ shared rules

    def _ordering(self, cq_name: str) -> Callable[[Admitted], tuple]:
        # CandidatesOrdering: other ClusterQueues first, lower priority, more recently admitted, then UID
        return lambda w: (w.cluster_queue == cq_name, w.priority, -w.admitted_at, w.uid)

    @staticmethod
    def _satisfies(p: Preemptor, w: Admitted, policy: str) -> bool:
        if policy == o.LOWER_PRIORITY:
            return p.priority > w.priority
        if policy == o.LOWER_OR_NEWER_EQUAL:
            return p.priority > w.priority or (p.priority == w.priority and p.created < w.created)
        return policy == o.ANY

    @staticmethod
    def _uses(w: Admitted, frs: set[o.FR]) -> bool:
        return any(fr in frs for fr in w.usage)

    def _fits(self, p: Preemptor, allow_borrowing: bool) -> bool:
        cq = p.cq
        for fr, value in p.usage.items():
            if not allow_borrowing and o.borrowing_with(cq, fr, value):
                return False
            if value > o.available(cq, fr):
                return False
        return True

    def _fill_back(self, p: Preemptor, targets: list[Target], allow_borrowing: bool) -> list[Target]:
        """fillBackWorkloads: in reverse, give back every target the preemptor does not need (swapping the last
        target into its place, as Kueue does)."""
        for i in range(len(targets) - 2, -1, -1):
            w = targets[i].workload
            o.add_usage(self.cqs[w.cluster_queue], w.usage)
            if self._fits(p, allow_borrowing):
                targets[i] = targets[-1]
                targets.pop()
            else:
                self.remove(w)
        return targets

    # ------------------------------------------------------------ classic

    def _classical(self, p: Preemptor) -> list[Target]:
        cq, frs = p.cq, p.frs
        forbidden = cq.borrow_within_cohort == o.NEVER
        same: list[tuple[Admitted, int]] = []
        if cq.within_cluster_queue != o.NEVER:
            for w in self.admitted[cq.name].values():
                if self._uses(w, frs) and self._satisfies(p, w, cq.within_cluster_queue):
                    same.append((w, WITHIN_CQ))
        hierarchy: list[tuple[Admitted, int]] = []
        by_priority: list[tuple[Admitted, int]] = []
        if cq.parent is not None and cq.reclaim_within_cohort != o.NEVER:
            # collectCandidatesForHierarchicalReclaim, flat: advantage when the request fits the own quota
            advantage = all(o.nominal(cq, fr) >= cq.usage.get(fr, 0) + v for fr, v in p.usage.items())
            bucket = hierarchy if advantage else by_priority
            for other in cq.parent.children:
                if other is cq or o.within_nominal(other, frs):
                    continue
                for w in self.admitted[other.name].values():
                    if not self._uses(w, frs) or not self._satisfies(p, w, cq.reclaim_within_cohort):
                        continue
                    bucket.append((w, self._variant(p, w, advantage)))
        key = self._ordering(cq.name)
        for group in (same, hierarchy, by_priority):
            group.sort(key=lambda c: key(c[0]))
        candidates = hierarchy + by_priority + same
        if not hierarchy and not by_priority or (forbidden and not all(
                o.nominal(cq, fr) > cq.usage.get(fr, 0) for fr in frs)):
            attempts = [True]
        elif forbidden and not hierarchy:
            attempts = [False, True]
        else:
            attempts = [True, False]
        for allow_borrowing in attempts:
            targets: list[Target] = []
            for w, variant in candidates:
                if not self._valid(p, w, variant, allow_borrowing):
                    continue
                self.remove(w)
                targets.append(Target(w, _VARIANT_REASON[variant]))
                if self._fits(p, allow_borrowing):
                    targets = self._fill_back(p, targets, allow_borrowing)
                    self.restore(targets)
                    return targets
            self.restore(targets)
        return []

    def _variant(self, p: Preemptor, w: Admitted, advantage: bool) -> int:
        cq = p.cq
        if advantage:
            return HIERARCHICAL_RECLAIM
        if cq.borrow_within_cohort == o.NEVER:
            return RECLAIM_WITHOUT_BORROWING
        threshold = cq.borrow_threshold
        if w.priority >= p.priority or (threshold is not None and w.priority > threshold):
            return RECLAIM_WITHOUT_BORROWING
        return RECLAIM_WHILE_BORROWING

    def _valid(self, p: Preemptor, w: Admitted, variant: int, allow_borrowing: bool) -> bool:
        if w.cluster_queue == p.cq.name:
            return True
        if allow_borrowing and variant == RECLAIM_WITHOUT_BORROWING:
            return False
        return not o.within_nominal(self.cqs[w.cluster_queue], p.frs)

    # ------------------------------------------------------------ fair sharing

    def _fair_candidates(self, p: Preemptor) -> list[Admitted]:
        cq, frs = p.cq, p.frs
        out: list[Admitted] = []
        if cq.within_cluster_queue != o.NEVER:
            out.extend(w for w in self.admitted[cq.name].values()
                       if self._satisfies(p, w, cq.within_cluster_queue) and self._uses(w, frs))
        if cq.parent is not None and cq.reclaim_within_cohort != o.NEVER:
            for other in cq.parent.children:
                if other is cq or not any(o.is_borrowing(other, fr) for fr in frs):
                    continue
                out.extend(w for w in self.admitted[other.name].values()
                           if self._satisfies(p, w, cq.reclaim_within_cohort) and self._uses(w, frs))
        out.sort(key=self._ordering(cq.name))
        return out

    def _fits_fair(self, p: Preemptor) -> bool:
        o.remove_usage(p.cq, p.usage)
        fits = self._fits(p, True)
        o.add_usage(p.cq, p.usage)
        return fits

    def _fair(self, p: Preemptor) -> list[Target]:
        candidates = self._fair_candidates(p)
        if not candidates:
            return []
        o.add_usage(p.cq, p.usage)  # shares include the incoming workload
        fits, targets, retry = self._first_strategy(p, candidates, self.strategies[0])
        if not fits and len(self.strategies) > 1:
            fits, targets = self._second_strategy(p, retry, targets)
        o.remove_usage(p.cq, p.usage)
        if not fits:
            self.restore(targets)
            return []
        targets = self._fill_back(p, targets, True)
        self.restore(targets)
        return targets

    def _first_strategy(self, p: Preemptor, candidates: list[Admitted], strategy: Callable[..., bool]
                        ) -> tuple[bool, list[Target], list[Admitted]]:
        ordering = _TargetOrdering(p, candidates, self._ordering(p.cq.name))
        within_nominal = not any(o.is_borrowing(p.cq, fr) for fr in p.frs)  # FairSharingPreemptWithinNominal
        targets: list[Target] = []
        retry: list[Admitted] = []
        for target_cq in ordering:
            if target_cq is p.cq or within_nominal:
                w = ordering.pop(target_cq)
                self.remove(w)
                targets.append(Target(w, IN_CLUSTER_QUEUE if target_cq is p.cq else IN_COHORT_RECLAMATION))
                if self._fits_fair(p):
                    return True, targets, []
                continue
            preemptor_share, target_old = fs.drs(p.cq), fs.drs(target_cq)
            if preemptor_share.share() == float("inf") and target_old.share() != float("inf"):
                while ordering.has(target_cq):
                    retry.append(ordering.pop(target_cq))
                continue
            while ordering.has(target_cq):
                w = ordering.pop(target_cq)
                o.remove_usage(target_cq, w.usage)
                target_new = fs.drs(target_cq)
                o.add_usage(target_cq, w.usage)
                if strategy(preemptor_share, target_old, target_new):
                    self.remove(w)
                    targets.append(Target(w, IN_COHORT_FAIR_SHARING))
                    if self._fits_fair(p):
                        return True, targets, []
                    break
                retry.append(w)
        return False, targets, retry

    def _second_strategy(self, p: Preemptor, retry: list[Admitted], targets: list[Target]
                         ) -> tuple[bool, list[Target]]:
        ordering = _TargetOrdering(p, retry, self._ordering(p.cq.name))
        for target_cq in ordering:
            passed = fs.compare(fs.drs(p.cq), fs.drs(target_cq)) < 0
            w = ordering.pop(target_cq)
            if passed:
                self.remove(w)
                targets.append(Target(w, IN_COHORT_FAIR_SHARING))
                if self._fits_fair(p):
                    return True, targets
            ordering.drop(target_cq)
        return False, targets


_STRATEGIES: dict[str, Callable[[fs.DRS, fs.DRS, fs.DRS], bool]] = {
    "LessThanOrEqualToFinalShare": lambda new, _old, target_new: fs.compare(new, target_new) <= 0,
    "LessThanInitialShare": lambda new, target_old, _new: fs.compare(new, target_old) < 0,
}


class _TargetOrdering:
    """fairsharing.TargetClusterQueueOrdering for a flat cohort: repeatedly the ClusterQueue with the highest
    share among those still borrowing and holding candidates (the preemptor's own queue while it has any)."""

    def __init__(self, p: Preemptor, candidates: list[Admitted], key: Callable[[Admitted], tuple]) -> None:
        self.p, self.key = p, key
        self.by_cq: dict[str, list[Admitted]] = {}
        for w in candidates:
            self.by_cq.setdefault(w.cluster_queue, []).append(w)
        self.pruned: set[str] = set()
        self.done = False

    def has(self, cq: o.ClusterQueue) -> bool:
        return bool(self.by_cq.get(cq.name))

    def pop(self, cq: o.ClusterQueue) -> Admitted:
        return self.by_cq[cq.name].pop(0)

    def drop(self, cq: o.ClusterQueue) -> None:
        self.pruned.add(cq.name)

    def __iter__(self):
        p = self.p
        if p.cq.parent is None:
            while p.cq.name not in self.pruned and self.has(p.cq):
                yield p.cq
            return
        while True:
            best, best_drs = None, fs.NEGATIVE
            for cq in p.cq.parent.children:
                if cq.name in self.pruned:
                    continue
                share = fs.drs(cq)
                if (not share.borrowing and cq is not p.cq) or not self.has(cq):
                    self.pruned.add(cq.name)
                    continue
                c = fs.compare(share, best_drs)
                if c == 1 or (c == 0 and best is not None
                              and self.key(self.by_cq[cq.name][0]) < self.key(self.by_cq[best.name][0])):
                    best, best_drs = cq, share
            if best is None:
                return
            yield best
