"""The scheduling cycle (pkg/scheduler/scheduler.go): pop one head per ClusterQueue, nominate each (flavors and
preemption targets against the cycle's snapshot), order the entries (classic: non-borrowing first, priority,
age; fair sharing: the DRS tournament), then admit, preempt or skip each in turn, requeue the rest. KueueScheduler
implements the Scheduler contract of cdk_app.simulate.kueue.api over the oracle's setup document.

Where Kueue leaves an order to chance (Go map iteration, an unstable sort), this module picks one and says so:
heads and equal entries are taken in (creation, UID) order and equal tournament contestants in ClusterQueue
name order; a workload's UID is its key unless the caller names one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cdk_app.simulate.kueue import fair_sharing as fs
from cdk_app.simulate.kueue import objects as o
from cdk_app.simulate.kueue.api import Decision, NotSettled, Workload, cycle_bound
from cdk_app.simulate.kueue.flavors import NO_FIT, PREEMPT, Assignment, FlavorAssigner
from cdk_app.simulate.kueue.preemption import HUMAN_REASONS, Admitted, Preemption, Preemptor, Target
from cdk_app.simulate.kueue.queues import (
    FAILED_AFTER_NOMINATION,
    PENDING_PREEMPTION,
    PREEMPTION_NO_CANDIDATES,
    Info,
    LastState,
    Queue,
    make_info,
)
from cdk_app.simulate.kueue.queues import (
    NO_FIT as REQUEUE_NO_FIT,
)

NO_LONGER_FITS = "Workload no longer fits after processing another workload"
OVERLAPPING = "Workload has overlapping preemption targets with another workload"
NAMESPACE_MISMATCH = "workload namespace doesn't match ClusterQueue selector"
MAX_CYCLES = 1000


@dataclass(slots=True)
class Entry:
    info: Info
    cq: o.ClusterQueue
    assignment: Assignment
    targets: list[Target]
    mode: int  # the assignment's mode (flavors.NO_FIT, PREEMPT or FIT)
    requeue: str = ""
    status: str = ""  # "", "skipped", "assumed"
    message: str = ""
    reserved: dict[o.FR, int] = field(default_factory=dict)


@dataclass(slots=True)
class Nomination:
    """A nomination's outcome and everything it read of the snapshot beyond the workload, its ClusterQueue's
    policies and quotas (fixed): the flavor scan's starting points, the ClusterQueue's admissions (its usage and
    per-priority sums), each available() answer, and - only where a bound or search read them - the cohort's
    borrowers or its admissions. Nominations read the snapshot as the cycle found it, which the admissions fix;
    the same reads give the same outcome, so while they hold the outcome is reused instead of recomputed."""

    tried: list[dict[str, int]] | None
    admissions: int
    reads: tuple[tuple[o.FR, int, int | None], ...]
    borrowers: int | None  # the cohort's borrowers_version, when read
    cohort: int | None  # the cohort's admissions, when more of it was read
    assignment: Assignment
    targets: list[Target]
    mode: int
    message: str

    def holds(self, cq: o.ClusterQueue, tried: list[dict[str, int]] | None) -> bool:
        if cq.admissions != self.admissions or tried != self.tried:
            return False
        parent = cq.parent
        if parent is not None and ((self.cohort is not None and parent.admissions != self.cohort)
                                   or (self.borrowers is not None and parent.borrowers_version != self.borrowers)):
            return False
        available = o.available
        for fr, value, cap in self.reads:
            if cap is not None and parent is not None and \
                    parent.subtree.get(fr, 0) - parent.usage.get(fr, 0) >= cap:
                continue  # the borrowing limit still bounds it: the same answer
            if available(cq, fr) != value:
                return False
        return True


class KueueScheduler:
    """Kueue v0.19.2's admission and preemption for one environment, in process."""

    def __init__(self, setup: Mapping[str, Any], *, uids: Mapping[str, str] | None = None,
                 job_uids: Mapping[str, str] | None = None) -> None:
        self.flavors = {f.name: f for f in map(o.read_flavor, setup.get("resourceFlavors") or [])}
        read = [o.read_cluster_queue(obj) for obj in setup.get("clusterQueues") or []]
        self.cohorts = o.build_cohorts(read, setup.get("cohorts") or [])
        self.cqs: dict[str, o.ClusterQueue] = {cq.name: cq for cq, _ in read}
        self.local_queues = {f"{lq['metadata'].get('namespace', '')}/{lq['metadata']['name']}":
                             lq["spec"]["clusterQueue"] for lq in setup.get("localQueues") or []}
        self.namespace_matches: dict[tuple[str, str], bool] = {}  # (ClusterQueue, namespace) -> selector matches
        self.namespace_labels = {ns["metadata"]["name"]: dict(ns["metadata"].get("labels") or {})
                                 for ns in setup.get("namespaces") or []}
        fair = setup.get("fairSharing")
        self.fair = fair is not None and fair.get("enable", True) is not False
        strategies = tuple((fair or {}).get("preemptionStrategies") or ())
        self.queues = {name: Queue(name) for name in sorted(self.cqs)}
        self.queue_list = list(self.queues.values())  # in name order, as the cycle pops their heads
        self.admitted: dict[str, dict[str, Admitted]] = {name: {} for name in self.cqs}
        self.where: dict[str, str] = {}  # admitted key -> ClusterQueue
        self.pending_info: dict[str, Info] = {}
        self.workloads: dict[str, Workload] = {}
        self.preemption = Preemption(self.cqs, self.admitted, self.fair, strategies)
        self.uids, self.job_uids = dict(uids or {}), dict(job_uids or {})
        self.cycle = 0
        # evictions issued by the last cycle, completed before the next one
        self.evicting: list[tuple[Admitted, str]] = []
        # Adding the ClusterQueues and Cohorts to Kueue's queue manager asks its requeuer to retry every parked
        # workload (manager.go AddClusterQueue, AddOrUpdateCohort); the requeuer acts after the first cycle
        self.setup_requeue = True

    # ------------------------------------------------------------ the contract

    def restore(self, workload: Workload, flavors: Mapping[str, Mapping[str, str]], admitted_at: int) -> None:
        cq = self._cq(workload)
        self.workloads[workload.key] = workload
        usage: dict[o.FR, int] = {}
        for ps in workload.pod_sets:
            for resource, flavor in (flavors.get(ps.name) or {}).items():
                value = ps.count * ps.requests.get(resource, 0)
                if value:
                    usage[(flavor, resource)] = usage.get((flavor, resource), 0) + value
        self._admit(Admitted(workload.key, cq.name, workload.priority, workload.created, self._uid(workload.key),
                             admitted_at, {p: dict(r) for p, r in flavors.items()}, usage))

    def submit(self, workload: Workload) -> None:
        cq = self._cq(workload)
        self.workloads[workload.key] = workload
        info = make_info(workload, self._uid(workload.key), self.job_uids.get(workload.key, ""))
        self.pending_info[workload.key] = info
        self.queues[cq.name].add(info)

    def finish(self, key: str, at: int) -> None:
        name = self.where.get(key)
        if name is None:
            raise KeyError(f"{key} is not admitted")
        self._release(self.admitted[name][key])
        del self.workloads[key]
        self._requeue_cohort(self.cqs[name])

    def schedule(self, at: int) -> list[Decision]:
        return self.run(at, max_cycles=cycle_bound(len(self.workloads)), settle=True)

    def run(self, at: int, interval: int = 0, max_cycles: int = MAX_CYCLES, settle: bool = False) -> list[Decision]:
        """Cycles until one changes nothing (the oracle's untilStable); `interval` advances the clock between
        cycles (the one-shot oracle steps 1 s; the timeline keeps every cycle at `at`). `settle`: NotSettled
        when every one of the `max_cycles` cycles still decided something."""
        decisions: list[Decision] = []
        for n in range(max_cycles):
            now = at + n * interval
            if self.cycle:
                self.between_cycles()
            if not any(q.active_count for q in self.queue_list):
                break
            made = self.run_cycle(now)
            decisions.extend(made)
            if not made:
                break
        else:
            if settle:
                raise NotSettled(at, max_cycles, decisions)
        return decisions

    def pending(self) -> Mapping[str, str]:
        return {key: info.message for key, info in self.pending_info.items()}

    def usage(self) -> Mapping[str, Mapping[str, Mapping[str, int]]]:
        out: dict[str, dict[str, dict[str, int]]] = {}
        for name, workloads in self.admitted.items():
            per_flavor: dict[str, dict[str, int]] = {}
            for w in workloads.values():
                for (flavor, resource), value in w.usage.items():
                    resources = per_flavor.setdefault(flavor, {})
                    resources[resource] = resources.get(resource, 0) + value
            out[name] = per_flavor
        return out

    def close(self) -> None:
        return None

    # ------------------------------------------------------------ bookkeeping

    def _uid(self, key: str) -> str:
        return self.uids.get(key, key)

    def _cq(self, workload: Workload) -> o.ClusterQueue:
        cq = self.cqs.get(workload.cluster_queue)
        if cq is None:
            raise ValueError(f"{workload.key}: no ClusterQueue {workload.cluster_queue!r}")
        if cq.queueing_strategy != "BestEffortFIFO":
            raise o.OutOfScope(f"ClusterQueue {cq.name}: queueingStrategy {cq.queueing_strategy}")
        return cq

    def _admit(self, w: Admitted) -> None:
        self._admissions(self.cqs[w.cluster_queue])
        o.add_usage(self.cqs[w.cluster_queue], w.usage)
        self.admitted[w.cluster_queue][w.key] = w
        self.where[w.key] = w.cluster_queue
        self.preemption.admitted_changed(w, True)

    @staticmethod
    def _admissions(cq: o.ClusterQueue) -> None:
        cq.admissions += 1
        if cq.parent is not None:
            cq.parent.admissions += 1

    def _release(self, w: Admitted) -> None:
        cq = self.cqs[w.cluster_queue]
        self._admissions(cq)
        o.remove_usage(cq, w.usage)
        del self.admitted[w.cluster_queue][w.key]
        del self.where[w.key]
        self.preemption.admitted_changed(w, False)
        cq.generation += 1

    def _requeue_cohort(self, cq: o.ClusterQueue) -> None:
        """QueueAssociatedInadmissibleWorkloadsAfter: a change in a cohort requeues every parked workload of
        its tree (of the ClusterQueue alone without a cohort)."""
        queues = self.queues
        for member in (cq.parent.children if cq.parent is not None else [cq]):
            queue = queues[member.name]
            if queue.with_parked or queue.bulk_moved:  # otherwise requeue_inadmissible has nothing to do
                queue.requeue_inadmissible()

    def between_cycles(self) -> None:
        """What happens between two cycles: issued evictions complete, the requeuer retries parked workloads."""
        self._complete_evictions()
        if self.setup_requeue:
            self.setup_requeue = False
            for queue in self.queues.values():
                queue.requeue_inadmissible()

    def _complete_evictions(self) -> None:
        """What the job and workload controllers do after a preemption: the quota is released, the workload
        pending again with the eviction message, its cohort's parked workloads requeued."""
        evicting, self.evicting = self.evicting, []
        touched: dict[str, o.ClusterQueue] = {}
        for w, message in evicting:
            self._release(w)
            info = make_info(self.workloads[w.key], w.uid, self.job_uids.get(w.key, ""))
            info.message = message
            self.pending_info[w.key] = info
            self.queues[w.cluster_queue].add(info)
            cq = self.cqs[w.cluster_queue]
            touched[cq.parent.name if cq.parent is not None else cq.name] = cq
        for cq in touched.values():
            self._requeue_cohort(cq)

    # ------------------------------------------------------------ one cycle

    def run_cycle(self, now: int) -> list[Decision]:
        self.cycle += 1
        heads = [(q.name, q.pop()) for q in self.queue_list if q.active_count]
        heads.sort(key=lambda h: (h[1].workload.created, h[1].uid))
        entries = []
        matches = self.namespace_matches
        for name, info in heads:
            cq = self.cqs[name]
            namespace = info.key.split("/", 1)[0]
            match = matches.get((name, namespace))
            if match is None:  # selectors and namespace labels are fixed: each pair is decided once
                match = matches[name, namespace] = o.selector_matches(cq.namespace_selector,
                                                                      self.namespace_labels.get(namespace, {}))
            if match:
                entries.append(self._nominate(cq, info))
            else:
                # nominate: ValidateAdmissibility fails, the workload is parked without a flavor assignment
                info.message = NAMESPACE_MISMATCH
                self.queues[name].requeue(info, "NamespaceMismatch")
        decisions: list[Decision] = []
        snapshot_only: list[tuple[o.ClusterQueue, dict[o.FR, int]]] = []
        preempted: dict[str, Target] = {}
        for entry in self._ordered(entries):
            self._process(entry, now, preempted, snapshot_only, decisions)
        for cq, usage in snapshot_only:
            o.remove_usage(cq, usage)
        for entry in entries:
            if entry.status != "assumed":
                self._requeue(entry)
        return decisions

    def _nominate(self, cq: o.ClusterQueue, info: Info) -> Entry:
        last = info.last
        if last is not None and self.cycle - last.cycle > 1 and cq.generation > last.generation:
            info.last = None  # lastAssignmentOutdated
        # where the flavor scan starts: a scan state with no flavor left to try starts where no state does
        tried = info.last.tried if info.last is not None and info.last.pending_flavors() else None
        memo = info.memo
        if memo is not None and memo.holds(cq, tried):
            last = memo.assignment.last
            assert last is not None
            info.last = LastState(last.tried, cq.generation, self.cycle, last.pending)
            return Entry(info, cq, memo.assignment, list(memo.targets), memo.mode, message=memo.message)
        cohort_reads = self.preemption.cohort_reads
        assigner = FlavorAssigner(info, cq, self.flavors, self.fair, self._oracle, self._hopeless, self.cycle)
        assignment = assigner.assign()
        targets: list[Target] = []
        mode = assignment.mode()
        borrowers = False
        # no bound read past the queue's own terms: every resource it settled, it settled on those alone
        own_terms = self.preemption.cohort_reads == cohort_reads
        if mode == PREEMPT:
            preemptor = self._preemptor(info, cq, assignment.usage, assignment.frs_need_preemption())
            # targets() starts with the hopeless bound; a resource the bound settled alone may settle it already -
            # always when settled on the queue's own terms, which the multi-resource bound computes the same way
            # (with a value at least as large) and which decide it whatever the other queues hold
            settled = [fr for fr in assigner.hopeless_frs if fr in preemptor.frs]
            if not (own_terms and settled):
                borrowers = bool(settled)  # hopeless_as reads the cohort's borrowers
                if not any(Preemption.hopeless_as(preemptor, fr) for fr in settled):
                    targets = self.preemption.targets(preemptor)
            # the borrowing level orders the entries and sizes a reservation; an entry that neither preempts nor
            # reserves (_process) changes nothing wherever it is ordered, so its deferred simulations never run
            if assigner.deferred and (targets or cq.reclaim_within_cohort != o.ANY):
                assigner.resolve(assignment)
        entry = Entry(info, cq, assignment, targets, mode, message=assignment.message())
        parent = cq.parent
        info.memo = Nomination(
            tried, cq.admissions, tuple(assigner.reads),
            parent.borrowers_version if borrowers and parent is not None else None,
            parent.admissions if parent is not None and self.preemption.cohort_reads != cohort_reads else None,
            assignment, list(targets), mode, entry.message)
        info.last = assignment.last
        return entry

    def _preemptor(self, info: Info, cq: o.ClusterQueue, usage: dict[o.FR, int], frs: set[o.FR]) -> Preemptor:
        w = info.workload
        return Preemptor(w.key, cq, w.priority, w.created, usage, frs)

    def _oracle(self, cq: o.ClusterQueue, info: Info, fr: o.FR, value: int) -> tuple[int, int]:
        return self.preemption.simulate(self._preemptor(info, cq, {fr: value}, {fr}), fr, value)

    def _hopeless(self, cq: o.ClusterQueue, info: Info, fr: o.FR, value: int, available: int) -> bool:
        return self.preemption.surely_hopeless_one(cq, info.workload.priority, fr, value, available)

    def _ordered(self, entries: list[Entry]) -> list[Entry]:
        if not self.fair:
            # classicalIterator: not borrowing first, higher priority, older
            return sorted(entries, key=lambda e: (e.assignment.borrowing, -e.info.workload.priority,
                                                  e.info.workload.created, e.info.uid))
        # fairSharingIterator: queues without a cohort first, then each cohort's tournament winner in turn.
        # In a flat cohort an entry's share depends on its own ClusterQueue's usage only, which no other entry
        # of the cycle changes, so the successive tournaments pick the entries in the order of one sort.
        return sorted(entries, key=self._tournament_key)

    def _tournament_key(self, e: Entry) -> tuple:
        """runTournament's order: a queue not borrowing on the flavors it asks for first, then the lowest DRS with
        the entry admitted, higher priority, older; equal contestants in ClusterQueue name order."""
        cq = e.cq
        if cq.parent is None:
            return (0, "", 0, (0, 0.0), 0, 0, cq.name)
        o.add_usage(cq, e.assignment.usage)
        share = fs.drs(cq)
        o.remove_usage(cq, e.assignment.usage)
        drs_key = (1, share.ratio) if share.zero_weight_borrows() else (0, share.share())
        return (1, cq.parent.name, share.borrowing_on(e.assignment.usage), drs_key,
                -e.info.workload.priority, e.info.workload.created, cq.name)

    def _fits(self, cq: o.ClusterQueue, usage: dict[o.FR, int], preempted: dict[str, Target],
              targets: list[Target]) -> bool:
        gone = {t.workload.key: t.workload for t in preempted.values()}
        gone.update((t.workload.key, t.workload) for t in targets)
        for w in gone.values():
            self.preemption.remove(w)
        fits = all(o.available(cq, fr) >= value for fr, value in usage.items())
        for w in gone.values():
            o.add_usage(self.cqs[w.cluster_queue], w.usage)
        return fits

    def _process(self, e: Entry, now: int, preempted: dict[str, Target],
                 snapshot_only: list[tuple[o.ClusterQueue, dict[o.FR, int]]], decisions: list[Decision]) -> None:
        """processEntry."""
        cq, mode, usage = e.cq, e.mode, e.assignment.usage
        if mode == NO_FIT:
            e.requeue = REQUEUE_NO_FIT
            return
        if mode == PREEMPT and not e.targets:
            e.requeue = PREEMPTION_NO_CANDIDATES
            if cq.reclaim_within_cohort != o.ANY:
                # reserveCapacityForUnreclaimablePreempt: hold what it could get so lower entries wait
                reserve = self._to_reserve(e)
                o.add_usage(cq, reserve)
                snapshot_only.append((cq, reserve))
            return
        if any(t.workload.key in preempted for t in e.targets):
            e.status, e.message = "skipped", OVERLAPPING
            return
        if not self._fits(cq, usage, preempted, e.targets):
            e.status, e.message = "skipped", NO_LONGER_FITS
            return
        for t in e.targets:
            preempted[t.workload.key] = t
        o.add_usage(cq, usage)
        if mode == PREEMPT:
            snapshot_only.append((cq, dict(usage)))
            self._issue(e, now, decisions)
            return
        o.remove_usage(cq, usage)
        self._assume(e, now, decisions)

    def _to_reserve(self, e: Entry) -> dict[o.FR, int]:
        cq, out = e.cq, {}
        for fr, value in e.assignment.usage.items():
            quota = cq.quotas.get(fr, o.Quota(0))
            used = cq.usage.get(fr, 0)
            if e.assignment.borrowing > 0:
                out[fr] = value if quota.borrowing_limit is None else \
                    min(value, quota.nominal + quota.borrowing_limit - used)
            else:
                out[fr] = max(0, min(value, quota.nominal - used))
        return out

    def _issue(self, e: Entry, now: int, decisions: list[Decision]) -> None:
        preemptor_path = self._path(e.cq)
        uid = e.info.uid or "UNKNOWN"
        job_uid = e.info.job_uid or "UNKNOWN"
        for t in sorted(e.targets, key=lambda t: t.workload.key):
            w = t.workload
            message = (f"Preempted to accommodate a workload (UID: {uid}, JobUID: {job_uid}) due to "
                       f"{HUMAN_REASONS[t.reason]}; preemptor path: {preemptor_path}; "
                       f"preemptee path: {self._path(self.cqs[w.cluster_queue])}")
            self.evicting.append((w, message))
            decisions.append(Decision(now, "preempted", w.key, w.cluster_queue, preemptor=e.info.key,
                                      reason=t.reason, message=message))
        e.message += f". Pending the preemption of {len(e.targets)} workload(s)"
        e.requeue = PENDING_PREEMPTION
        e.info.last = None
        self.queues[e.cq.name].sticky = e.info.key

    @staticmethod
    def _path(cq: o.ClusterQueue) -> str:
        return f"/{cq.parent.name}/{cq.name}" if cq.parent is not None else f"/{cq.name}"

    def _assume(self, e: Entry, now: int, decisions: list[Decision]) -> None:
        cq, usage, w = e.cq, e.assignment.usage, e.info.workload
        borrowed: dict[str, dict[str, int]] = {}
        for fr, value in usage.items():
            before = max(0, cq.usage.get(fr, 0) - o.nominal(cq, fr))
            after = max(0, cq.usage.get(fr, 0) + value - o.nominal(cq, fr))
            if after > before:
                borrowed.setdefault(fr[0], {})[fr[1]] = after - before
        flavors = e.assignment.flavor_map()
        self._admit(Admitted(w.key, cq.name, w.priority, w.created, e.info.uid, now, flavors,
                             {fr: v for fr, v in usage.items() if v}))
        del self.pending_info[w.key]
        e.status = "assumed"
        decisions.append(Decision(now, "admitted", w.key, cq.name, flavors=flavors, borrowed=borrowed))

    def _requeue(self, e: Entry) -> None:
        """requeueAndUpdate: the entry's message becomes its pending message, then back to its queue."""
        reason = e.requeue or (FAILED_AFTER_NOMINATION if e.status == "skipped" else "")
        e.info.message = e.message
        self.queues[e.cq.name].requeue(e.info, reason)
