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
        # per ClusterQueue and flavor resource, the admitted workloads using it (WorkloadUsesResources without a
        # scan of every admitted workload)
        self.by_fr: dict[str, dict[o.FR, dict[str, Admitted]]] = {name: {} for name in cluster_queues}
        self.strategies = [_STRATEGIES[s] for s in strategies] or [_STRATEGIES["LessThanOrEqualToFinalShare"],
                                                                   _STRATEGIES["LessThanInitialShare"]]
        # how many times a bound or a search read more than the preemptor's own ClusterQueue and available
        # capacity (other queues' usage, the cohort's borrowers): a nomination that did not may be reused
        # while its queue's admissions and those capacities stay the same (scheduler._nominate)
        self.cohort_reads = 0

    def admitted_changed(self, w: Admitted, present: bool) -> None:
        """Keeps the indexes the bounds read: the ClusterQueue's per-priority usage, and its cohort's sum of it
        over the borrowers of each flavor resource (membership changes are _track's)."""
        cq = self.cqs[w.cluster_queue]
        index, sums = self.by_fr[w.cluster_queue], cq.by_priority
        cohort = cq.parent
        for fr, value in w.usage.items():
            per_priority = sums.setdefault(fr, {})
            if present:
                index.setdefault(fr, {})[w.key] = w
            else:
                index[fr].pop(w.key, None)
                value = -value
            per_priority[w.priority] = per_priority.get(w.priority, 0) + value
            if cohort is not None:
                for borrowed in cq.borrowing_on:
                    totals = cohort.borrowed_by_priority.setdefault(borrowed, {}).setdefault(fr, {})
                    totals[w.priority] = totals.get(w.priority, 0) + value

    @staticmethod
    def _below(per_priority: Mapping[int, int], policy: str, priority: int) -> int:
        if policy == o.ANY:
            return sum(per_priority.values())
        return sum(v for prio, v in per_priority.items() if prio < priority)

    def _usage_below(self, cq_name: str, fr: o.FR, policy: str, priority: int) -> int:
        return self._below(self.cqs[cq_name].by_priority.get(fr, {}), policy, priority)

    @staticmethod
    def _bounded(cq: o.ClusterQueue) -> bool:
        """Whether the ClusterQueue's policies are those the HyperPod mapping writes, which the bound covers."""
        return cq.borrow_within_cohort == o.NEVER and cq.within_cluster_queue in (o.NEVER, o.LOWER_PRIORITY) \
            and cq.reclaim_within_cohort in (o.NEVER, o.LOWER_PRIORITY, o.ANY)

    def surely_hopeless_one(self, cq: o.ClusterQueue, priority: int, fr: o.FR, value: int, available: int) -> bool:
        """Whether simulating a preemptor of `value` of one flavor resource (the flavor assigner's question) is
        sure to find no targets, given available(cq, fr) as it stands: the check targets() makes first, without
        building the preemptor."""
        return self._bounded(cq) and self._surely_hopeless_one(cq, priority, fr, value, self.fair, available)

    @staticmethod
    def hopeless_as(p: Preemptor, fr: o.FR) -> bool:
        """Whether p is surely hopeless because a one-resource preemptor of the same workload, for fr in p.frs
        with at most p.usage[fr], was (surely_hopeless_one, on this snapshot): so when fr's borrowers are all the
        queues the candidates may come from. Then the multi-resource bound's terms for fr are the one-resource
        ones - own and other queues' candidates, room, with a value at least as large - and they only grow with
        the value and with more resources."""
        cq = p.cq
        cohort = cq.parent
        if cohort is None or cq.reclaim_within_cohort == o.NEVER:
            return True  # no other queue's candidates in either bound
        borrowers = cohort.borrowers.get(fr, set())
        for other in p.frs:
            if other != fr:
                extra = cohort.borrowers.get(other, set()) - borrowers
                if extra and extra != {cq.name}:
                    return False
        return True

    def _surely_hopeless(self, p: Preemptor, fair: bool = False) -> bool:
        """Under the policies the HyperPod mapping writes: no classic attempt can fit even if every candidate
        left - the bound of _hopeless, from per-priority usage sums of the candidates' ClusterQueues (a superset of
        the candidates) instead of the candidates themselves, so that a hopeless simulation costs no scan."""
        cq = p.cq
        if not self._bounded(cq):
            return False
        if len(p.usage) == 1 and len(p.frs) == 1:
            fr, value = next(iter(p.usage.items()))
            if fr in p.frs:
                return self._surely_hopeless_one(cq, p.priority, fr, value, fair, o.available(cq, fr))
        cohort, policy, priority, below = cq.parent, cq.reclaim_within_cohort, p.priority, self._below
        summed: dict[o.FR, dict[int, int]] = {}
        borrowers: set[str] = set()
        rest: set[str] = set()
        reclaim = False
        if cohort is not None and policy != o.NEVER:
            # the candidates' queues are the borrowers of the fr of p.frs with the most of them (whose running sums
            # the cohort keeps) and the few others (`rest`), this queue excepted
            frs = p.frs
            largest = next(iter(frs)) if len(frs) == 1 else \
                max(frs, key=lambda fr: len(cohort.borrowers.get(fr, ())))
            borrowers = cohort.borrowers.get(largest, set())
            summed = cohort.borrowed_by_priority.get(largest, {})
            if len(frs) > 1:
                rest = o.borrowing_members(cohort, frs) - borrowers - {cq.name}
            reclaim = bool(rest) or len(borrowers) > (cq.name in borrowers)
        by_priority, quotas, usage = cq.by_priority, cq.quotas, cq.usage
        advantage = all(o.nominal(cq, fr) >= usage.get(fr, 0) + v for fr, v in p.usage.items())
        borrowing_hopeless = strict_hopeless = False
        for fr, value in p.usage.items():
            own = 0 if cq.within_cluster_queue == o.NEVER else below(by_priority.get(fr, {}), o.LOWER_PRIORITY, priority)
            others = 0
            if reclaim:
                others = below(summed.get(fr, {}), policy, priority)
                if cq.name in borrowers:
                    others -= below(by_priority.get(fr, {}), policy, priority)
                for name in rest:
                    others += self._usage_below(name, fr, policy, priority)
            room = o.available(cq, fr) + own
            # allowing borrowing, other queues' candidates are usable only with the hierarchical advantage
            borrowing_hopeless |= value > room + (others if advantage or fair else 0)
            quota = quotas.get(fr)
            strict_hopeless |= value > room + others or (quota.nominal if quota else 0) < usage.get(fr, 0) - own + value
            # fair sharing makes one attempt, borrowing allowed and every candidate usable; the terms only grow
            # with more resources, so the answer is known once both hold
            if borrowing_hopeless and (fair or strict_hopeless):
                return True
        return False

    def _surely_hopeless_one(self, cq: o.ClusterQueue, priority: int, fr: o.FR, value: int, fair: bool,
                             available: int) -> bool:
        """_surely_hopeless for a preemptor of one flavor resource (every simulation the flavor assigner asks
        for): the same terms, computed only as far as the answer needs them."""
        below = self._below
        per_priority = cq.by_priority.get(fr, {})
        own = 0 if cq.within_cluster_queue == o.NEVER else below(per_priority, o.LOWER_PRIORITY, priority)
        room = available + own
        used = cq.usage.get(fr, 0)
        quota = cq.quotas.get(fr)
        nominal = quota.nominal if quota else 0
        advantage = nominal >= used + value
        if not (advantage or fair):
            if value <= room:
                return False  # borrowing_hopeless is false whatever the others' candidates
            if nominal < used - own + value:
                return True  # both terms hold without the others' candidates (the last line's third term)
        others = 0
        cohort, policy = cq.parent, cq.reclaim_within_cohort
        if cohort is not None and policy != o.NEVER:
            self.cohort_reads += 1
            borrowers = cohort.borrowers.get(fr, set())
            mine = cq.name in borrowers
            if len(borrowers) > mine:
                others = below(cohort.borrowed_by_priority.get(fr, {}).get(fr, {}), policy, priority)
                if mine:
                    others -= below(per_priority, policy, priority)
        if not value > room + (others if advantage or fair else 0):
            return False
        return fair or value > room + others or nominal < used - own + value

    def _using(self, cq_name: str, frs: set[o.FR]) -> list[Admitted]:
        """The ClusterQueue's admitted workloads that use any of frs."""
        index = self.by_fr[cq_name]
        if len(frs) == 1:
            return list(index.get(next(iter(frs)), {}).values())
        found: dict[str, Admitted] = {}
        for fr in frs:
            found.update(index.get(fr, {}))
        return list(found.values())

    @staticmethod
    def _hopeless(p: Preemptor, candidates: list[Admitted], allow_borrowing: bool = True) -> bool:
        """No set of these candidates could make room: evicting a workload frees at most its own usage (and only
        the preemptor's own workloads lower its usage against its nominal quota). Kueue would try them all and
        find no fit; skipping the attempt decides the same."""
        cq = p.cq
        for fr, value in p.usage.items():
            room = o.available(cq, fr)
            own = 0
            if value > room or not allow_borrowing:
                for w in candidates:
                    used = w.usage.get(fr, 0)
                    room += used
                    if w.cluster_queue == cq.name:
                        own += used
            if value > room:
                return True
            if not allow_borrowing and o.nominal(cq, fr) < cq.usage.get(fr, 0) - own + value:
                return True
        return False

    # ------------------------------------------------------------ snapshot edits

    def remove(self, target: Admitted) -> None:
        o.remove_usage(self.cqs[target.cluster_queue], target.usage)

    def restore(self, targets: list[Target]) -> None:
        for t in targets:
            o.add_usage(self.cqs[t.workload.cluster_queue], t.workload.usage)

    # ------------------------------------------------------------ entry points

    def targets(self, p: Preemptor) -> list[Target]:
        self.cohort_reads += 1
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
        if self._surely_hopeless(p):
            return []
        cq, frs = p.cq, p.frs
        forbidden = cq.borrow_within_cohort == o.NEVER
        same: list[tuple[Admitted, int]] = []
        if cq.within_cluster_queue != o.NEVER:
            same = [(w, WITHIN_CQ) for w in self._using(cq.name, frs)
                    if self._satisfies(p, w, cq.within_cluster_queue)]
        others: list[tuple[Admitted, int]] = []
        advantage = False
        if cq.parent is not None and cq.reclaim_within_cohort != o.NEVER:
            # collectCandidatesForHierarchicalReclaim, flat: advantage when the request fits the own quota
            advantage = all(o.nominal(cq, fr) >= cq.usage.get(fr, 0) + v for fr, v in p.usage.items())
            members = o.borrowing_members(cq.parent, frs)
            for other in cq.parent.children:
                if other is cq or other.name not in members:
                    continue
                others.extend((w, self._variant(p, w, advantage)) for w in self._using(other.name, frs)
                              if self._satisfies(p, w, cq.reclaim_within_cohort))
        hierarchy, by_priority = (others, []) if advantage else ([], others)
        if not others or (forbidden and not all(o.nominal(cq, fr) > cq.usage.get(fr, 0) for fr in frs)):
            attempts = [True]
        elif forbidden and not hierarchy:
            attempts = [False, True]
        else:
            attempts = [True, False]
        candidates: list[tuple[Admitted, int]] | None = None
        for allow_borrowing in attempts:
            usable = [w for w, variant in others if not (allow_borrowing and variant == RECLAIM_WITHOUT_BORROWING)]
            if self._hopeless(p, usable + [w for w, _ in same], allow_borrowing):
                continue
            if candidates is None:
                key = self._ordering(cq.name)
                for group in (same, hierarchy, by_priority):
                    group.sort(key=lambda c: key(c[0]))
                candidates = hierarchy + by_priority + same
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
            out.extend(w for w in self._using(cq.name, frs) if self._satisfies(p, w, cq.within_cluster_queue))
        if cq.parent is not None and cq.reclaim_within_cohort != o.NEVER:
            members = o.borrowing_members(cq.parent, frs)
            for other in cq.parent.children:
                if other is cq or other.name not in members:
                    continue
                out.extend(w for w in self._using(other.name, frs) if self._satisfies(p, w, cq.reclaim_within_cohort))
        out.sort(key=self._ordering(cq.name))
        return out

    def _fits_fair(self, p: Preemptor) -> bool:
        o.remove_usage(p.cq, p.usage)
        fits = self._fits(p, True)
        o.add_usage(p.cq, p.usage)
        return fits

    def _fair(self, p: Preemptor) -> list[Target]:
        if self._surely_hopeless(p, fair=True):
            return []
        candidates = self._fair_candidates(p)
        if not candidates or self._hopeless(p, candidates):
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
                target_new = fs.drs_without(target_cq, w.usage)
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
        # a queue without candidates is pruned at once and changes no other choice: only these are looked at
        self.contenders = [cq for cq in (p.cq.parent.children if p.cq.parent is not None else [])
                           if cq.name in self.by_cq]

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
            for cq in self.contenders:
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
