"""The contract between the simulator's timeline (cdk_app.simulate.engine) and a Kueue scheduler: the kit's
in-process one (cdk_app.simulate.kueue) or the real Kueue v0.19.2 driven through kueue-oracle's session mode
(tests/support/kueue_session.py). The timeline drives either the same way, so their decisions can be compared
one by one.

Amounts are ints in Kueue's own units (pkg/resources: cpu in millicores, every other resource in its base unit,
memory in bytes). Times are whole seconds from the simulation's start (Kueue's clocks: a workload's
creationTimestamp is its submission; the QuotaReserved time is its admission).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

# Kueue's reasons on a preempted workload's Preempted condition (pkg/workload, kueue.x-k8s.io/v1beta2).
IN_CLUSTER_QUEUE = "InClusterQueue"
IN_COHORT_RECLAMATION = "InCohortReclamation"
IN_COHORT_FAIR_SHARING = "InCohortFairSharing"
IN_COHORT_RECLAIM_WHILE_BORROWING = "InCohortReclaimWhileBorrowing"


def cycle_bound(workloads: int) -> int:
    """How many cycles one moment may take before it counts as not settling. A cycle admits at most one head per
    ClusterQueue, so a freed node can take a cycle per waiting workload; ten per workload the scheduler holds
    (pending or admitted) is far beyond any settling moment, and both schedulers use the same bound."""
    return 100 + 10 * workloads


class NotSettled(Exception):
    """Kueue does not settle at one moment: cycle after cycle it admits and preempts again (a preemption loop,
    which Kueue v0.19.2 can enter, e.g. when an evicted workload is re-admitted ahead of its preemptor).
    `decisions` are those of the cycles run."""

    def __init__(self, at: int, cycles: int, decisions: list[Decision]) -> None:
        super().__init__(f"still admitting or preempting at {at} s after {cycles} cycles")
        self.at, self.cycles, self.decisions = at, cycles, decisions


@dataclass(frozen=True, slots=True)
class PodSet:
    name: str
    count: int
    # Per pod, resource name -> amount in Kueue's units.
    requests: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class Workload:
    key: str  # "<namespace>/<name>"
    cluster_queue: str  # the ClusterQueue its LocalQueue points at
    priority: int  # the WorkloadPriorityClass value (0 without one)
    created: int  # seconds; Kueue's queue order uses it after the priority
    pod_sets: tuple[PodSet, ...]
    # Pod node selector, matched against each ResourceFlavor's nodeLabels (a flavor that contradicts it is skipped).
    node_selector: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Decision:
    at: int
    event: Literal["admitted", "preempted"]
    workload: str
    cluster_queue: str
    # admitted: pod set name -> resource -> flavor
    flavors: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # admitted: flavor -> resource -> how much of this workload's usage is above the ClusterQueue's nominal quota
    # once it is admitted (its usage above nominal after minus before); empty when it borrows nothing
    borrowed: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    # preempted: the workload whose admission required it, Kueue's reason (the constants above) and message
    preemptor: str | None = None
    reason: str | None = None
    message: str = ""


class Scheduler(Protocol):
    """One environment's Kueue, built from Kueue objects (the oracle's input document: resourceFlavors,
    cohorts, clusterQueues, localQueues, workloadPriorityClasses and the fairSharing configuration)."""

    def restore(self, workload: Workload, flavors: Mapping[str, Mapping[str, str]], admitted_at: int) -> None:
        """A workload already admitted with these flavors before the simulation starts (a live snapshot)."""

    def submit(self, workload: Workload) -> None:
        """A new pending workload (created at workload.created)."""

    def finish(self, key: str, at: int) -> None:
        """An admitted workload finished: its quota is released."""

    def schedule(self, at: int) -> list[Decision]:
        """Kueue's scheduling cycles at time `at` until one admits and preempts nothing, evictions completed
        (the preempted workload requeued, pending again) between cycles; every decision in order. NotSettled
        when the cycles run out first."""

    def pending(self) -> Mapping[str, str]:
        """Each pending workload's last inadmissibility message (Kueue's QuotaReserved=False message)."""

    def usage(self) -> Mapping[str, Mapping[str, Mapping[str, int]]]:
        """Per ClusterQueue, flavor and resource: what its admitted workloads use."""

    def close(self) -> None:
        """Release what the scheduler holds (a subprocess); a no-op in process."""


def as_json(decision: Decision) -> dict[str, Any]:
    out: dict[str, Any] = {"at": decision.at, "event": decision.event, "workload": decision.workload,
                           "cluster_queue": decision.cluster_queue}
    if decision.event == "admitted":
        out["flavors"] = {p: dict(r) for p, r in decision.flavors.items()}
        out["borrowed"] = {f: dict(r) for f, r in decision.borrowed.items()}
    else:
        out.update(preemptor=decision.preemptor, reason=decision.reason, message=decision.message)
    return out
