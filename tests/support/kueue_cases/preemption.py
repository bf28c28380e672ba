"""Hand translation of pkg/scheduler/preemption/preemption_test.go TestPreemption
(sigs.k8s.io/kueue v0.19.2) into kueue-oracle "preempt" mode cases.

Each upstream case gives: the ClusterQueues, the admitted workloads, an
incoming workload, the target ClusterQueue and the flavor assignment the
preemptor is asked about; it expects a number of issued preemptions and the
Preempted condition (reason + message) on each victim.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .common import adm, case_doc, cohort, cq, fq, podset, preempt, psa, res, rf, rg, simple_reserve, victim, wl

FILE = "pkg/scheduler/preemption/preemption_test.go"
TEST = "TestPreemption"

FLAVORS = [rf("default"), rf("alpha"), rf("beta")]

LP, ANY, NEVER, LONEP = "LowerPriority", "Any", "Never", "LowerOrNewerEqualPriority"

DEFAULT_CQS = [
    cq("standalone",
       rg(fq("default", res("cpu", "6"))),
       rg(fq("alpha", res("memory", "3Gi")), fq("beta", res("memory", "3Gi"))),
       preemption=preempt(within=LP)),
    cq("c1", rg(fq("default", res("cpu", "6", "6"), res("memory", "3Gi", "3Gi"))),
       cohort="cohort", preemption=preempt(within=LP, reclaim=LP)),
    cq("c2", rg(fq("default", res("cpu", "6", "6"), res("memory", "3Gi", "3Gi"))),
       cohort="cohort", preemption=preempt(within=NEVER, reclaim=ANY)),
    cq("d1", rg(fq("default", res("cpu", "6"), res("memory", "3Gi"))),
       cohort="cohort-no-limits", preemption=preempt(within=LP, reclaim=LP)),
    cq("d2", rg(fq("default", res("cpu", "6"), res("memory", "3Gi"))),
       cohort="cohort-no-limits", preemption=preempt(within=NEVER, reclaim=ANY)),
    cq("l1", rg(fq("default", res("cpu", "6", "12"), res("memory", "3Gi", "6Gi"))),
       cohort="legion", preemption=preempt(within=LP, reclaim=LP)),
    cq("preventStarvation", rg(fq("default", res("cpu", "6"))),
       preemption=preempt(within=LONEP)),
    cq("a_standard", rg(fq("default", res("cpu", "1", "12"))), cohort="with_shared_cq",
       preemption=preempt(within=NEVER, reclaim=LP, borrow_policy=LP, max_prio=0)),
    cq("b_standard", rg(fq("default", res("cpu", "1", "12"))), cohort="with_shared_cq",
       preemption=preempt(within=LP, reclaim=ANY, borrow_policy=LP, max_prio=0)),
    cq("a_best_effort", rg(fq("default", res("cpu", "1", "12"))), cohort="with_shared_cq",
       preemption=preempt(within=NEVER, reclaim=LP, borrow_policy=LP, max_prio=0)),
    cq("b_best_effort", rg(fq("default", res("cpu", "0", "13"))), cohort="with_shared_cq",
       preemption=preempt(within=NEVER, reclaim=LP, borrow_policy=LP, max_prio=0)),
    cq("shared", rg(fq("default", res("cpu", "10"))), cohort="with_shared_cq"),
    cq("lend1", rg(fq("default", res("cpu", "6", "", "4"))), cohort="cohort-lend",
       preemption=preempt(within=LP, reclaim=LP)),
    cq("lend2", rg(fq("default", res("cpu", "6", "", "2"))), cohort="cohort-lend",
       preemption=preempt(within=LP, reclaim=LP)),
    cq("a", rg(fq("default", res("cpu", "2"), res("memory", "2"))), cohort="cohort-three",
       preemption=preempt(within=LP, reclaim=ANY)),
    cq("b", rg(fq("default", res("cpu", "2"), res("memory", "2"))), cohort="cohort-three"),
    cq("c", rg(fq("default", res("cpu", "2"), res("memory", "2"))), cohort="cohort-three"),
]

IN_LABELS = {"kueue.x-k8s.io/job-uid": "job-in"}


def incoming(requests=None, prio=None, podsets=None, base=True, creation=None):
    """baseIncomingWl = MakeWorkload("in", "").UID("wl-in").Label(JobUIDLabel, "job-in")."""
    if base:
        return wl("in", "", requests, prio=prio, podsets=podsets, uid="wl-in", labels=IN_LABELS,
                  creation=creation)
    return wl("in", "", requests, prio=prio, podsets=podsets, creation=creation)


def adm1(cluster_queue, **assign):
    """MakeAdmission(cq).PodSets(MakePodSetAssignment("main").Assignment(r, flavor, q)...)."""
    return adm(cluster_queue, psa("main", {r: v for r, v in assign.items()}))


def A(name, cluster_queue, requests, prio=None, assign=None, reserve_at=0, creation=None):
    """An admitted workload: requests on podset main, admitted in cluster_queue with
    assignment {resource: (flavor, qty)} (defaults to every request in "default")."""
    if assign is None:
        assign = {r: ("default", q) for r, q in requests.items()}
    return wl(name, "", requests, prio=prio, reserve=adm1(cluster_queue, **assign),
              reserve_at=reserve_at, creation=creation)


def one(**flavors):
    """singlePodSetAssignment({resource: (flavor, mode)})"""
    return {"podSets": [{"name": "main", "count": 1,
                         "flavors": {r: {"name": f, "mode": m} for r, (f, m) in flavors.items()}}]}


def msg(why, preemptor, preemptee):
    return (f"Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to {why}; "
            f"preemptor path: {preemptor}; preemptee path: {preemptee}")


PRIO = "prioritization in the ClusterQueue"
RECL = "reclamation within the cohort"
RECLB = "reclamation within the cohort while borrowing"


def case(name, line, admitted, inc, target_cq, assignment, want_preempted, victims,
         cqs=None, cohorts=None, note=None):
    inp = {
        "mode": "preempt",
        "now": "2025-01-01T00:00:00Z",
        "resourceFlavors": FLAVORS,
        "clusterQueues": cqs if cqs is not None else DEFAULT_CQS,
        "workloads": admitted,
        "preemption": {"incoming": inc, "clusterQueue": target_cq, "assignment": assignment},
    }
    if cohorts:
        inp["cohorts"] = cohorts
    exp = {"preempted": want_preempted, "targets": victims}
    return case_doc("preemption", name, {"file": FILE, "test": TEST, "case": name, "line": line},
                    inp, exp, note)


CPU, MEM = "cpu", "memory"
P, F = "Preempt", "Fit"


def cases() -> Iterator[tuple[str, dict[str, Any]]]:
    """Every translated case of the table, in upstream order."""
    yield case("preempt lowest priority", 293,
               [A("low", "standalone", {CPU: "2"}, prio=-1, assign={CPU: ("default", "2000m")}),
                A("mid", "standalone", {CPU: "2"}, assign={CPU: ("default", "2000m")}),
                A("high", "standalone", {CPU: "2"}, prio=1, assign={CPU: ("default", "2000m")})],
               incoming({CPU: "2"}, prio=1), "standalone", one(cpu=("default", P)), 1,
               [victim("low", "InClusterQueue", msg(PRIO, "/standalone", "/standalone"))])

    yield case("preempt multiple", 397,
               [A("low", "standalone", {CPU: "2"}, prio=-1, assign={CPU: ("default", "2000m")}),
                A("mid", "standalone", {CPU: "2"}, assign={CPU: ("default", "2000m")}),
                A("high", "standalone", {CPU: "2"}, prio=1, assign={CPU: ("default", "2000m")})],
               incoming({CPU: "3"}, prio=1), "standalone", one(cpu=("default", P)), 2,
               [victim("low", "InClusterQueue", msg(PRIO, "/standalone", "/standalone")),
                victim("mid", "InClusterQueue", msg(PRIO, "/standalone", "/standalone"))])

    yield case("no preemption for low priority", 516,
               [A("low", "standalone", {CPU: "3"}, prio=-1, assign={CPU: ("default", "3000m")}),
                A("mid", "standalone", {CPU: "3"}, assign={CPU: ("default", "3000m")})],
               incoming({CPU: "1"}, prio=-1, base=False), "standalone", one(cpu=("default", P)), 0, [])

    yield case("not enough low priority workloads", 580,
               [A("low", "standalone", {CPU: "3"}, prio=-1, assign={CPU: ("default", "3000m")}),
                A("mid", "standalone", {CPU: "3"}, assign={CPU: ("default", "3000m")})],
               incoming({CPU: "4"}, base=False), "standalone", one(cpu=("default", P)), 0, [])

    yield case("some free quota, preempt low priority", 643,
               [A("low", "standalone", {CPU: "1"}, prio=-1, assign={CPU: ("default", "1000m")}),
                A("mid", "standalone", {CPU: "1"}, assign={CPU: ("default", "1000m")}),
                A("high", "standalone", {CPU: "3"}, prio=1, assign={CPU: ("default", "3000m")})],
               incoming({CPU: "2"}, prio=1), "standalone", one(cpu=("default", P)), 1,
               [victim("low", "InClusterQueue", msg(PRIO, "/standalone", "/standalone"))])

    yield case("minimal set excludes low priority", 747,
               [A("low", "standalone", {CPU: "1"}, prio=-1, assign={CPU: ("default", "1000m")}),
                A("mid", "standalone", {CPU: "2"}, assign={CPU: ("default", "2000m")}),
                A("high", "standalone", {CPU: "3"}, prio=1, assign={CPU: ("default", "3000m")})],
               incoming({CPU: "2"}, prio=1), "standalone", one(cpu=("default", P)), 1,
               [victim("mid", "InClusterQueue", msg(PRIO, "/standalone", "/standalone"))])

    yield case("only preempt workloads using the chosen flavor", 851,
               [A("low", "standalone", {MEM: "2Gi"}, prio=-1, assign={MEM: ("alpha", "2Gi")}),
                A("mid", "standalone", {MEM: "1Gi"}, assign={MEM: ("beta", "1Gi")}),
                A("high", "standalone", {MEM: "1Gi"}, prio=1, assign={MEM: ("beta", "1Gi")})],
               incoming({CPU: "1", MEM: "2Gi"}, prio=1), "standalone",
               one(cpu=("default", F), memory=("beta", P)), 1,
               [victim("mid", "InClusterQueue", msg(PRIO, "/standalone", "/standalone"))])

    yield case("reclaim quota from borrower", 960,
               [A("c1-low", "c1", {CPU: "3"}, prio=-1, assign={CPU: ("default", "3000m")}),
                A("c2-mid", "c2", {CPU: "3"}, assign={CPU: ("default", "3000m")}),
                A("c2-high", "c2", {CPU: "6"}, prio=1, assign={CPU: ("default", "6000m")})],
               incoming({CPU: "3"}, prio=1), "c1", one(cpu=("default", P)), 1,
               [victim("c2-mid", "InCohortReclamation", msg(RECL, "/cohort/c1", "/cohort/c2"))])

    yield case("reclaim quota if workload requests 0 resources for a resource at nominal quota", 1064,
               [simple_reserve(wl("c1-low", "", {CPU: "3", MEM: "3Gi"}, prio=-1), "c1", "default"),
                simple_reserve(wl("c2-mid", "", {CPU: "3"}), "c2", "default"),
                simple_reserve(wl("c2-high", "", {CPU: "6"}, prio=1), "c2", "default")],
               incoming({CPU: "3", MEM: "0"}, prio=1), "c1",
               one(cpu=("default", P), memory=("default", F)), 1,
               [victim("c2-mid", "InCohortReclamation", msg(RECL, "/cohort/c1", "/cohort/c2"))])

    yield case("no workloads borrowing", 1133,
               [A("c1-high", "c1", {CPU: "4"}, prio=1, assign={CPU: ("default", "4000m")}),
                A("c2-low-1", "c2", {CPU: "4"}, prio=-1, assign={CPU: ("default", "4000m")})],
               incoming({CPU: "4"}, prio=1), "c1", one(cpu=("default", P)), 0, [])

    yield case("not enough workloads borrowing", 1199,
               [A("c1-high", "c1", {CPU: "4"}, prio=1, assign={CPU: ("default", "4000m")}),
                A("c2-low-1", "c2", {CPU: "4"}, prio=-1, assign={CPU: ("default", "4000m")}),
                A("c2-low-2", "c2", {CPU: "4"}, prio=-1, assign={CPU: ("default", "4000m")})],
               incoming({CPU: "4"}, prio=1), "c1", one(cpu=("default", P)), 0, [])

    yield case("preempting locally and borrowing other resources in cohort, without cohort candidates", 1289,
               [A("c1-low", "c1", {CPU: "4"}, prio=-1, assign={CPU: ("default", "4000m")}),
                A("c2-low-1", "c2", {CPU: "4"}, prio=-1, assign={CPU: ("default", "4000m")}),
                A("c2-high-2", "c2", {CPU: "4"}, prio=1, assign={CPU: ("default", "4000m")})],
               incoming({CPU: "4", MEM: "5Gi"}, prio=1), "c1",
               one(cpu=("default", P), memory=("default", P)), 1,
               [victim("c1-low", "InClusterQueue", msg(PRIO, "/cohort/c1", "/cohort/c1"))])

    yield case("preempting locally and borrowing same resource in cohort", 1400,
               [A("c1-med", "c1", {CPU: "4"}, prio=0, assign={CPU: ("default", "4000m")}),
                A("c1-low", "c1", {CPU: "4"}, prio=-1, assign={CPU: ("default", "4000m")}),
                A("c2-low-1", "c2", {CPU: "4"}, prio=-1, assign={CPU: ("default", "4000m")})],
               incoming({CPU: "4"}, prio=1), "c1", one(cpu=("default", P)), 1,
               [victim("c1-low", "InClusterQueue", msg(PRIO, "/cohort/c1", "/cohort/c1"))])

    yield case("preempting locally and borrowing same resource in cohort; no borrowing limit in the cohort", 1506,
               [A("d1-med", "d1", {CPU: "4"}, prio=0),
                A("d1-low", "d1", {CPU: "4"}, prio=-1),
                A("d2-low-1", "d2", {CPU: "4"}, prio=-1)],
               incoming({CPU: "4"}, prio=1), "d1", one(cpu=("default", P)), 1,
               [victim("d1-low", "InClusterQueue", msg(PRIO, "/cohort-no-limits/d1", "/cohort-no-limits/d1"))])

    yield case("preempting locally and borrowing other resources in cohort, with cohort candidates", 1612,
               [A("c1-med", "c1", {CPU: "4"}, prio=0, assign={CPU: ("default", "4000m")}),
                A("c2-low-1", "c2", {CPU: "5"}, prio=-1, assign={CPU: ("default", "5000m")}),
                A("c2-low-2", "c2", {CPU: "1"}, prio=-1, assign={CPU: ("default", "1000m")}),
                A("c2-low-3", "c2", {CPU: "1"}, prio=-1, assign={CPU: ("default", "1000m")})],
               incoming({CPU: "2", MEM: "5Gi"}, prio=1), "c1",
               one(cpu=("default", P), memory=("default", P)), 1,
               [victim("c1-med", "InClusterQueue", msg(PRIO, "/cohort/c1", "/cohort/c1"))])

    yield case("preempting locally and not borrowing same resource in 1-queue cohort", 1747,
               [A("l1-med", "l1", {CPU: "4"}, prio=0, assign={CPU: ("default", "4000m")}),
                A("l1-low", "l1", {CPU: "2"}, prio=-1, assign={CPU: ("default", "2000m")})],
               incoming({CPU: "4"}, prio=1), "l1", one(cpu=("default", P)), 1,
               [victim("l1-med", "InClusterQueue", msg(PRIO, "/legion/l1", "/legion/l1"))])

    yield case("do not reclaim borrowed quota from same priority for withinCohort=ReclaimFromLowerPriority", 1829,
               [A("c1", "c1", {CPU: "2"}, assign={CPU: ("default", "2000m")}),
                A("c2-1", "c2", {CPU: "4"}, assign={CPU: ("default", "4000m")}),
                A("c2-2", "c2", {CPU: "4"}, assign={CPU: ("default", "4000m")})],
               incoming({CPU: "4"}), "c1", one(cpu=("default", P)), 0, [])

    yield case("reclaim borrowed quota from same priority for withinCohort=ReclaimFromAny", 1912,
               [A("c1-1", "c1", {CPU: "4"}, assign={CPU: ("default", "4000m")}),
                A("c1-2", "c1", {CPU: "4"}, prio=1, assign={CPU: ("default", "4000m")}),
                A("c2", "c2", {CPU: "2"}, assign={CPU: ("default", "2000m")})],
               incoming({CPU: "4"}), "c2", one(cpu=("default", P)), 1,
               [victim("c1-1", "InCohortReclamation", msg(RECL, "/cohort/c2", "/cohort/c1"))])

    yield case("preempt from all ClusterQueues in cohort", 2013,
               [A("c1-low", "c1", {CPU: "3"}, prio=-1, assign={CPU: ("default", "3000m")}),
                A("c1-mid", "c1", {CPU: "2"}, assign={CPU: ("default", "2000m")}),
                A("c2-low", "c2", {CPU: "3"}, prio=-1, assign={CPU: ("default", "3000m")}),
                A("c2-mid", "c2", {CPU: "4"}, assign={CPU: ("default", "4000m")})],
               incoming({CPU: "4"}), "c1", one(cpu=("default", P)), 2,
               [victim("c1-low", "InClusterQueue", msg(PRIO, "/cohort/c1", "/cohort/c1")),
                victim("c2-low", "InCohortReclamation", msg(RECL, "/cohort/c1", "/cohort/c2"))])

    yield case("can't preempt workloads in ClusterQueue for withinClusterQueue=Never", 2153,
               [A("c2-low", "c2", {CPU: "3"}, prio=-1, assign={CPU: ("default", "3000m")})],
               incoming({CPU: "4"}, prio=1), "c2", one(cpu=("default", P)), 0, [])

    yield case("each podset preempts a different flavor", 2195,
               [A("low-alpha", "standalone", {MEM: "2Gi"}, prio=-1, assign={MEM: ("alpha", "2Gi")}),
                A("low-beta", "standalone", {MEM: "2Gi"}, prio=-1, assign={MEM: ("beta", "2Gi")})],
               incoming(podsets=[podset("launcher", 1, {MEM: "2Gi"}), podset("workers", 2, {MEM: "1Gi"})]),
               "standalone",
               {"podSets": [{"name": "launcher", "count": 1, "flavors": {MEM: {"name": "alpha", "mode": P}}},
                            {"name": "workers", "count": 2, "flavors": {MEM: {"name": "beta", "mode": P}}}]},
               2,
               [victim("low-alpha", "InClusterQueue", msg(PRIO, "/standalone", "/standalone")),
                victim("low-beta", "InClusterQueue", msg(PRIO, "/standalone", "/standalone"))])

    yield case("preempt newer workloads with the same priority", 2314,
               [A("wl1", "preventStarvation", {CPU: "2"}, prio=2),
                A("wl2", "preventStarvation", {CPU: "2"}, prio=1, creation=0, reserve_at=1),
                A("wl3", "preventStarvation", {CPU: "2"}, prio=1, creation=0)],
               incoming(prio=1, creation=-15, podsets=[podset("launcher", 1, {CPU: "2"})]),
               "preventStarvation",
               {"podSets": [{"name": "launcher", "flavors": {CPU: {"name": "default", "mode": P}}}]},
               1,
               [victim("wl2", "InClusterQueue", msg(PRIO, "/preventStarvation", "/preventStarvation"))],
               note="upstream leaves Count unset (0) in this assignment; the harness defaults 0 to 1")

    yield case("use BorrowWithinCohort; allow preempting a lower-priority workload from another ClusterQueue while borrowing", 2435,
               [A("a_best_effort_low", "a_best_effort", {CPU: "10"}, prio=-1),
                A("b_best_effort_low", "b_best_effort", {CPU: "1"}, prio=-1)],
               incoming({CPU: "10"}), "a_standard", one(cpu=("default", P)), 1,
               [victim("a_best_effort_low", "InCohortReclaimWhileBorrowing",
                       msg(RECLB, "/with_shared_cq/a_standard", "/with_shared_cq/a_best_effort"))])

    yield case("use BorrowWithinCohort; don't allow preempting a lower-priority workload with priority above MaxPriorityThreshold, if borrowing is required even after the preemption", 2516,
               [A("b_standard", "b_standard", {CPU: "10"}, prio=1, assign={CPU: ("default", "10000m")})],
               incoming({CPU: "10"}, prio=2), "a_standard", one(cpu=("default", P)), 0, [])

    yield case("use BorrowWithinCohort; allow preempting a lower-priority workload with priority above MaxPriorityThreshold, if borrowing is not required after the preemption", 2558,
               [A("b_standard", "b_standard", {CPU: "13"}, prio=1, assign={CPU: ("default", "13000m")})],
               incoming({CPU: "1"}, prio=2), "a_standard", one(cpu=("default", P)), 1,
               [victim("b_standard", "InCohortReclamation",
                       msg(RECL, "/with_shared_cq/a_standard", "/with_shared_cq/b_standard"))])

    yield case("use BorrowWithinCohort; don't allow for preemption of lower-priority workload from the same ClusterQueue", 2619,
               [A("a_standard", "a_standard", {CPU: "13"}, prio=1, assign={CPU: ("default", "13000m")})],
               incoming({CPU: "1"}, prio=2), "a_standard", one(cpu=("default", P)), 0, [])

    yield case("use BorrowWithinCohort; only preempt from CQ if no workloads below threshold and already above nominal", 2661,
               [A("a_standard_1", "a_standard", {CPU: "10"}, prio=1),
                A("a_standard_2", "a_standard", {CPU: "1"}, prio=1),
                A("b_standard_1", "b_standard", {CPU: "1"}, prio=1),
                A("b_standard_2", "b_standard", {CPU: "1"}, prio=2)],
               incoming({CPU: "1"}, prio=3), "b_standard", one(cpu=("default", P)), 1,
               [victim("b_standard_1", "InClusterQueue",
                       msg(PRIO, "/with_shared_cq/b_standard", "/with_shared_cq/b_standard"))])

    yield case("use BorrowWithinCohort; preempt from CQ and from other CQs with workloads below threshold", 2791,
               [A("b_standard_high", "b_standard", {CPU: "10"}, prio=2),
                A("b_standard_mid", "b_standard", {CPU: "1"}, prio=1),
                A("a_best_effort_low", "a_best_effort", {CPU: "1"}, prio=-1),
                A("a_best_effort_lower", "a_best_effort", {CPU: "1"}, prio=-2)],
               incoming({CPU: "2"}, prio=2), "b_standard", one(cpu=("default", P)), 2,
               [victim("a_best_effort_lower", "InCohortReclaimWhileBorrowing",
                       msg(RECLB, "/with_shared_cq/b_standard", "/with_shared_cq/a_best_effort")),
                victim("b_standard_mid", "InClusterQueue",
                       msg(PRIO, "/with_shared_cq/b_standard", "/with_shared_cq/b_standard"))])

    yield case("reclaim quota from lender", 2936,
               [A("lend1-low", "lend1", {CPU: "3"}, prio=-1, assign={CPU: ("default", "3000m")}),
                A("lend2-mid", "lend2", {CPU: "3"}, assign={CPU: ("default", "3000m")}),
                A("lend2-high", "lend2", {CPU: "4"}, prio=1, assign={CPU: ("default", "4000m")})],
               incoming({CPU: "3"}, prio=1), "lend1", one(cpu=("default", P)), 1,
               [victim("lend2-mid", "InCohortReclamation", msg(RECL, "/cohort-lend/lend1", "/cohort-lend/lend2"))])

    yield case("preempt from all ClusterQueues in cohort-lend", 3040,
               [A("lend1-low", "lend1", {CPU: "3"}, prio=-1, assign={CPU: ("default", "3000m")}),
                A("lend1-mid", "lend1", {CPU: "2"}, assign={CPU: ("default", "2000m")}),
                A("lend2-low", "lend2", {CPU: "3"}, prio=-1, assign={CPU: ("default", "3000m")}),
                A("lend2-mid", "lend2", {CPU: "4"}, assign={CPU: ("default", "4000m")})],
               incoming({CPU: "4"}), "lend1", one(cpu=("default", P)), 2,
               [victim("lend1-low", "InClusterQueue", msg(PRIO, "/cohort-lend/lend1", "/cohort-lend/lend1")),
                victim("lend2-low", "InCohortReclamation", msg(RECL, "/cohort-lend/lend1", "/cohort-lend/lend2"))])

    yield case("cannot preempt from other ClusterQueues if exceeds requestable quota including lending limit", 3180,
               [A("lend2-low", "lend2", {CPU: "10"}, prio=-1)],
               incoming({CPU: "9"}), "lend1", one(cpu=("default", P)), 0, [])

    three = [("a1", "a", -2), ("a2", "a", -2), ("a3", "a", -1),
             ("b1", "b", 0), ("b2", "b", 0), ("b3", "b", 0)]
    a_prio = msg(PRIO, "/cohort-three/a", "/cohort-three/a")
    yield case("preemptions from cq when target queue is exhausted for the single requested resource", 3221,
               [A(n, q, {CPU: "1"}, prio=p) for n, q, p in three],
               incoming({CPU: "2"}, prio=0), "a", one(cpu=("default", P)), 2,
               [victim("a1", "InClusterQueue", a_prio), victim("a2", "InClusterQueue", a_prio)])

    yield case("preemptions from cq when target queue is exhausted for two requested resources", 3414,
               [A(n, q, {CPU: "1", MEM: "1"}, prio=p) for n, q, p in three],
               incoming({CPU: "2", MEM: "2"}, prio=0), "a",
               one(cpu=("default", P), memory=("default", P)), 2,
               [victim("a1", "InClusterQueue", a_prio), victim("a2", "InClusterQueue", a_prio)])

    yield case("preemptions from cq when target queue is exhausted for one requested resource, but not the other", 3636,
               [A(n, q, {CPU: "1"}, prio=p) for n, q, p in three],
               incoming({CPU: "2", MEM: "2"}, prio=0), "a",
               one(cpu=("default", P), memory=("default", P)), 2,
               [victim("a1", "InClusterQueue", a_prio), victim("a2", "InClusterQueue", a_prio)])

    yield case("allow preemption from other cluster queues if target cq is not exhausted for the requested resource", 3834,
               [A("a1", "a", {CPU: "1"}, prio=-1),
                A("b1", "b", {CPU: "1"}, prio=0), A("b2", "b", {CPU: "1"}, prio=0),
                A("b3", "b", {CPU: "1"}, prio=0), A("b4", "b", {CPU: "1"}, prio=0),
                A("b5", "b", {CPU: "1"}, prio=-1)],
               incoming({CPU: "2"}), "a", one(cpu=("default", P)), 2,
               [victim("a1", "InClusterQueue", a_prio),
                victim("b5", "InCohortReclamation", msg(RECL, "/cohort-three/a", "/cohort-three/b"))])

    yield case("long range preemption", 4026,
               [A("to-be-preempted", "cq-right", {CPU: "5"})],
               incoming({CPU: "8"}), "cq-left", one(cpu=("default", P)), 1,
               [victim("to-be-preempted", "InCohortReclamation",
                       msg(RECL, "/root/cohort-left/cq-left", "/root/cohort-right/cq-right"))],
               cqs=[cq("cq-left", rg(fq("default", res("cpu", "10"))), cohort="cohort-left",
                       preemption=preempt(reclaim=ANY)),
                    cq("cq-right", rg(fq("default", res("cpu", "0"))), cohort="cohort-right")],
               cohorts=[cohort("cohort-left", "root"), cohort("cohort-right", "root")])
