"""Hand translation of pkg/scheduler/scheduler_test.go TestSchedule
(sigs.k8s.io/kueue v0.19.2) into kueue-oracle "schedule" mode cases: all 65
cases of the table, one of them ("error during admission") kept on record
but marked skip (it needs an injected API error the oracle cannot make).

Each case runs ONE scheduling cycle (as the upstream test does) and checks
wantAssignments (cache), wantLeft / wantInadmissibleLeft (queue manager),
the Preempted condition of victims and, where the upstream case states it,
the QuotaReserved=False message of workloads left pending.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .common import (
    adm,
    case_doc,
    cohort,
    cq,
    fq,
    ns,
    podset,
    preempt,
    psa,
    res,
    rf,
    rg,
    sel_in,
    simple_reserve,
    victim,
    wl,
)

FILE = "pkg/scheduler/scheduler_test.go"
TEST = "TestSchedule"
CPU, MEM, GPU = "cpu", "memory", "example.com/gpu"
LP, ANY, NEVER = "LowerPriority", "Any", "Never"

NAMESPACES = [
    ns("default"),
    ns("eng-alpha", dep="eng"),
    ns("eng-beta", dep="eng"),
    ns("eng-gamma", dep="eng"),
    ns("sales", dep="sales"),
    ns("lend", dep="lend"),
]

TAINT = {"key": "key", "value": "val", "effect": "NoSchedule"}
TAINT2 = {"key": "key", "value": "val2", "effect": "NoSchedule"}
FLAVORS = [rf("default"), rf("on-demand"), rf("spot"), rf("model-a"),
           rf("spot-tainted", taints=[TAINT]), rf("spot-tainted-2", taints=[TAINT2])]

ENG = sel_in("dep", "eng")
BASE_CQS = [
    cq("sales", rg(fq("default", res(CPU, "50", "0"))), selector=sel_in("dep", "sales"),
       strategy="StrictFIFO"),
    cq("eng-alpha", rg(fq("on-demand", res(CPU, "50", "50")), fq("spot", res(CPU, "100", "0"))),
       cohort="eng", selector=ENG, strategy="StrictFIFO"),
    cq("eng-beta", rg(fq("on-demand", res(CPU, "50", "10")), fq("spot", res(CPU, "0", "100"))),
       rg(fq("model-a", res(GPU, "20", "0"))),
       cohort="eng", selector=ENG, strategy="StrictFIFO",
       preemption=preempt(within=LP, reclaim=ANY)),
    cq("flavor-nonexistent-cq", rg(fq("nonexistent-flavor", res(CPU, "50"))), strategy="StrictFIFO"),
    cq("lend-a", rg(fq("default", res(CPU, "3", "", "2"))), cohort="lend", selector=sel_in("dep", "lend")),
    cq("lend-b", rg(fq("default", res(CPU, "2", "", "2"))), cohort="lend", selector=sel_in("dep", "lend")),
]

BASE_LQS = [
    {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
     "metadata": {"name": n, "namespace": s}, "spec": {"clusterQueue": c}}
    for n, s, c in [("main", "sales", "sales"), ("blocked", "sales", "eng-alpha"),
                    ("main", "eng-alpha", "eng-alpha"), ("main", "eng-beta", "eng-beta"),
                    ("flavor-nonexistent-queue", "sales", "flavor-nonexistent-cq"),
                    ("cq-nonexistent-queue", "sales", "nonexistent-cq"),
                    ("lend-a-queue", "lend", "lend-a"), ("lend-b-queue", "lend", "lend-b")]
]


def LQ(name, namespace, cluster_queue):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"clusterQueue": cluster_queue}}


def one_ps(name="main", count=1, **assign):
    """admission with one podset: assign = {resource: (flavor, qty)}"""
    return psa(name, {r.replace("_", "."): v for r, v in assign.items()}, count)


def case(name, line, workloads, *, expect_assign=None, left=None, inadmissible=None, victims=None,
         pending=None, gates=None, extra_cqs=(), extra_lqs=(), cohorts=None, objects=None,
         fair_sharing=None, note=None, skip=None, extra_flavors=()):
    inp = {
        "mode": "schedule",
        "now": "2025-01-01T00:00:00Z",
        "namespaces": NAMESPACES,
        "resourceFlavors": FLAVORS + list(extra_flavors),
        "clusterQueues": BASE_CQS + list(extra_cqs),
        "localQueues": BASE_LQS + list(extra_lqs),
        "workloads": workloads,
        "cycles": 1,
    }
    if gates:
        inp["featureGates"] = gates
    if cohorts:
        inp["cohorts"] = cohorts
    if objects:
        inp["objects"] = objects
    if fair_sharing is not None:
        inp["fairSharing"] = fair_sharing
    exp = {
        "assignments": expect_assign or {},
        "left": left or {},
        "inadmissibleLeft": inadmissible or {},
        "targets": victims or [],
    }
    if pending:
        exp["workloads"] = {k: {"pendingMessage": v} for k, v in pending.items()}
    return case_doc("schedule", name, {"file": FILE, "test": TEST, "case": name, "line": line},
                    inp, exp, note, skip)


PA = {"PartialAdmission": True}
NOFIT_NS = "workload namespace doesn't match ClusterQueue selector"


def W(name, namespace, requests=None, **kw):
    return wl(name, namespace, requests, **kw)


# The messages Kueue writes: the Preempted condition of a victim, and the QuotaReserved=False message of a
# workload left pending.
PRIO = "prioritization in the ClusterQueue"
RECL = "reclamation within the cohort"
JOB = "kueue.x-k8s.io/job-uid"


def msg(uid, job, why, preemptor, preemptee):
    return (f"Preempted to accommodate a workload (UID: {uid}, JobUID: {job}) due to {why}; "
            f"preemptor path: {preemptor}; preemptee path: {preemptee}")


def pmsg(why, a, b):
    return msg("wl-preemptor", "job-preemptor", why, a, b)


def NF(ps, *parts):
    return f"couldn't assign flavors to pod set {ps}: {', '.join(parts)}"


def short(r, f, n):
    return f"insufficient unused quota for {r} in flavor {f}, {n} more needed"


def cases() -> Iterator[tuple[str, dict[str, Any]]]:
    """Every translated case of the table, in upstream order."""
    yield from _first_cases()
    yield from _preemption_cases()
    yield from _later_cases()


def _first_cases():
    """Upstream lines 468-1805: flavor assignment, cohorts, borrowing and lending limits."""
    other_alpha = cq("other-alpha",
                     rg(fq("on-demand", res(CPU, "50", "50")), fq("spot", res(CPU, "100", "0"))),
                     preemption=preempt(within=LP),
                     fungibility={"whenCanPreempt": "MayStopSearch"})
    yield case("use second flavor when the first has no preemption candidates; WhenCanPreempt: MayStopSearch", 468,
               [W("admitted", "eng-alpha", {CPU: "50"}, queue="other",
                  reserve=adm("other-alpha", one_ps(cpu=("on-demand", "50"))), admitted=True),
                W("new", "eng-alpha", {CPU: "20"}, queue="other")],
               gates=PA, extra_cqs=[other_alpha], extra_lqs=[LQ("other", "eng-alpha", "other-alpha")],
               expect_assign={
                   "eng-alpha/admitted": adm("other-alpha", one_ps(cpu=("on-demand", "50"))),
                   "eng-alpha/new": adm("other-alpha", one_ps(cpu=("spot", "20"))),
               },
               note="upstream sets FlavorFungibility{WhenCanPreempt: MayStopSearch} leaving WhenCanBorrow "
                    "empty; the harness applies the CRD default (MayStopSearch) to it")

    yield case("workload fits in single clusterQueue, with check state ready", 557,
               [dict(W("foo", "sales", queue="main", podsets=[podset("one", 10, {CPU: "1"})]),
                     status={"admissionChecks": [{"name": "check", "state": "Ready", "message": "",
                                                  "lastTransitionTime": "2025-01-01T00:00:00Z"}]})],
               gates=PA,
               expect_assign={"sales/foo": adm("sales", one_ps("one", 10, cpu=("default", "10000m")))})

    yield case("skip workload with missing or deleted ClusterQueue (NoFit)", 626,
               [W("missing-cq-workload", "sales", queue="non-existent-queue",
                  podsets=[podset("set", 1, {CPU: "1"})])],
               gates=PA)

    yield case("flavors with mixed misconfiguration and insufficient quota", 651,
               [W("existing-on-demand-job", "sales", {CPU: "10"}, queue="custom-q",
                  reserve=adm("custom-cq", one_ps(cpu=("on-demand", "10"))), admitted=True),
                W("new-job", "sales", {CPU: "10"}, queue="custom-q")],
               extra_cqs=[cq("custom-cq", rg(fq("spot-tainted", res(CPU, "20", "20")),
                                             fq("on-demand", res(CPU, "15", "15"))), strategy="StrictFIFO")],
               extra_lqs=[LQ("custom-q", "sales", "custom-cq")],
               expect_assign={"sales/existing-on-demand-job": adm("custom-cq", one_ps(cpu=("on-demand", "10000m")))},
               left={"custom-cq": ["sales/new-job"]},
               pending={"sales/new-job": "couldn't assign flavors to pod set main: insufficient unused quota for cpu "
                                         "in flavor on-demand, 5 more needed, untolerated taint {key val NoSchedule <nil>} "
                                         "in flavor spot-tainted"})

    yield case("flavors with mixed taint mismatch and exceeding limits", 732,
               [W("new-job2", "sales", {CPU: "10"}, queue="custom-q2")],
               extra_cqs=[cq("custom-cq2", rg(fq("spot-tainted", res(CPU, "20", "20")),
                                              fq("on-demand", res(CPU, "5", "5"))), strategy="StrictFIFO")],
               extra_lqs=[LQ("custom-q2", "sales", "custom-cq2")],
               left={"custom-cq2": ["sales/new-job2"]},
               pending={"sales/new-job2": "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor "
                                          "on-demand, previously considered podsets requests (0) + current podset request "
                                          "(10) > maximum capacity (5), untolerated taint {key val NoSchedule <nil>} in "
                                          "flavor spot-tainted"})

    yield case("flavors are structurally incompatible", 782,
               [W("new-job3", "sales", {CPU: "1"}, queue="custom-q3")],
               extra_cqs=[cq("custom-cq3", rg(fq("spot-tainted", res(CPU, "20", "20")),
                                              fq("spot-tainted-2", res(CPU, "5", "5"))), strategy="StrictFIFO")],
               extra_lqs=[LQ("custom-q3", "sales", "custom-cq3")],
               left={"custom-cq3": ["sales/new-job3"]},
               pending={"sales/new-job3": "couldn't assign flavors to pod set main: untolerated taint {key val "
                                          "NoSchedule <nil>} in flavor spot-tainted, untolerated taint {key val2 "
                                          "NoSchedule <nil>} in flavor spot-tainted-2"})

    yield case("workload fits in single clusterQueue, with check state pending", 832,
               [dict(W("foo", "sales", queue="main", podsets=[podset("one", 10, {CPU: "1"})]),
                     status={"admissionChecks": [{"name": "check", "state": "Pending", "message": "",
                                                  "lastTransitionTime": "2025-01-01T00:00:00Z"}]})],
               gates=PA,
               expect_assign={"sales/foo": adm("sales", one_ps("one", 10, cpu=("default", "10000m")))})

    yield case("error during admission", 895,
               [W("foo", "sales", queue="main", podsets=[podset("one", 10, {CPU: "1"})])],
               gates=PA, left={"sales": ["sales/foo"]},
               skip="needs an injected API error on the status patch (admissionError); "
                    "the harness has no fault injection")

    yield case("single clusterQueue full", 918,
               [W("new", "sales", queue="main", podsets=[podset("one", 11, {CPU: "1"})]),
                W("assigned", "sales", podsets=[podset("one", 40, {CPU: "1"})],
                  reserve=adm("sales", one_ps("one", 40, cpu=("default", "40000m"))))],
               gates=PA,
               expect_assign={"sales/assigned": adm("sales", one_ps("one", 40, cpu=("default", "40000m")))},
               left={"sales": ["sales/new"]},
               pending={"sales/new": "couldn't assign flavors to pod set one: insufficient unused quota for cpu in "
                                     "flavor default, 1 more needed"})

    yield case("failed to match clusterQueue selector", 997,
               [W("new", "sales", queue="blocked", podsets=[podset("one", 1, {CPU: "1"})])],
               gates=PA, inadmissible={"eng-alpha": ["sales/new"]},
               pending={"sales/new": NOFIT_NS})

    yield case("admit in different cohorts", 1039,
               [W("new", "sales", queue="main", podsets=[podset("one", 1, {CPU: "1"})]),
                W("new", "eng-alpha", queue="main", podsets=[podset("one", 51, {CPU: "1"})])],
               gates=PA,
               expect_assign={"sales/new": adm("sales", one_ps("one", 1, cpu=("default", "1000m"))),
                              "eng-alpha/new": adm("eng-alpha", one_ps("one", 51, cpu=("on-demand", "51000m")))})

    yield case("admit in same cohort with no borrowing", 1133,
               [W("new", "eng-alpha", queue="main", podsets=[podset("one", 40, {CPU: "1"})]),
                W("new", "eng-beta", queue="main", podsets=[podset("one", 40, {CPU: "1"})])],
               gates=PA,
               expect_assign={"eng-alpha/new": adm("eng-alpha", one_ps("one", 40, cpu=("on-demand", "40000m"))),
                              "eng-beta/new": adm("eng-beta", one_ps("one", 40, cpu=("on-demand", "40000m")))})

    yield case("assign multiple resources and flavors", 1228,
               [W("new", "eng-beta", queue="main",
                  podsets=[podset("one", 10, {CPU: "6", GPU: "1"}), podset("two", 40, {CPU: "1"})])],
               gates=PA,
               expect_assign={"eng-beta/new": adm("eng-beta",
                                                  psa("one", {CPU: ("on-demand", "60000m"), GPU: ("model-a", "10")}, 10),
                                                  psa("two", {CPU: ("spot", "40000m")}, 40))})

    yield case("cannot borrow if cohort was assigned and would result in overadmission", 1304,
               [W("new", "eng-alpha", queue="main", podsets=[podset("one", 45, {CPU: "1"})]),
                W("new", "eng-beta", queue="main", podsets=[podset("one", 56, {CPU: "1"})])],
               expect_assign={"eng-alpha/new": adm("eng-alpha", one_ps("one", 45, cpu=("on-demand", "45000m")))},
               left={"eng-beta": ["eng-beta/new"]},
               pending={"eng-beta/new": "Workload no longer fits after processing another workload"})

    yield case("can borrow if cohort was assigned and will not result in overadmission", 1392,
               [W("new", "eng-alpha", queue="main", podsets=[podset("one", 45, {CPU: "1"})]),
                W("new", "eng-beta", queue="main", podsets=[podset("one", 55, {CPU: "1"})])],
               expect_assign={"eng-alpha/new": adm("eng-alpha", one_ps("one", 45, cpu=("on-demand", "45000m"))),
                              "eng-beta/new": adm("eng-beta", one_ps("one", 55, cpu=("on-demand", "55000m")))})

    yield case("can borrow if needs reclaim from cohort in different flavor", 1486,
               [W("can-reclaim", "eng-alpha", {CPU: "100"}, queue="main"),
                W("needs-to-borrow", "eng-beta", {CPU: "1"}, queue="main"),
                W("user-on-demand", "eng-beta", {CPU: "50"},
                  reserve=adm("eng-beta", one_ps(cpu=("on-demand", "50000m")))),
                W("user-spot", "eng-beta", {CPU: "1"}, reserve=adm("eng-beta", one_ps(cpu=("spot", "1000m"))))],
               expect_assign={"eng-beta/user-spot": adm("eng-beta", one_ps(cpu=("spot", "1000m"))),
                              "eng-beta/user-on-demand": adm("eng-beta", one_ps(cpu=("on-demand", "50000m"))),
                              "eng-beta/needs-to-borrow": adm("eng-beta", one_ps(cpu=("on-demand", "1000m")))},
               left={"eng-alpha": ["eng-alpha/can-reclaim"]},
               pending={"eng-alpha/can-reclaim": "couldn't assign flavors to pod set main: insufficient unused quota "
                                                 "for cpu in flavor on-demand, 50 more needed, insufficient unused quota "
                                                 "for cpu in flavor spot, 1 more needed"})

    yield case("workload exceeds lending limit when borrow in cohort", 1602,
               [W("a", "lend", {CPU: "2"}, reserve=adm("lend-b", one_ps(cpu=("default", "2000m")))),
                W("b", "lend", {CPU: "3"}, queue="lend-b-queue")],
               expect_assign={"lend/a": adm("lend-b", one_ps(cpu=("default", "2000m")))},
               inadmissible={"lend-b": ["lend/b"]},
               pending={"lend/b": "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
                                  "flavor default, 1 more needed"})

    lender = lambda lending: cq("cq-lender", rg(fq("on-demand", res(CPU, "10", "", lending))),
                                cohort="child", selector=ENG)
    borrower = cq("cq-borrower", rg(fq("on-demand", res(CPU, "5", "10"))), cohort="child", selector=ENG)
    hier_lqs = [LQ("lq-lender", "eng-alpha", "cq-lender"), LQ("lq-borrower", "eng-alpha", "cq-borrower")]
    hier_cohorts = [cohort("root"), cohort("child", "root")]
    existing = W("wl-existing", "eng-alpha", podsets=[podset("main", 1, {CPU: "5"})],
                 reserve=adm("cq-borrower", one_ps(cpu=("on-demand", "5"))))
    yield case("hierarchical cohort respects lending limit when borrowing", 1680,
               [existing, W("wl-pending", "eng-alpha", queue="lq-borrower", podsets=[podset("main", 1, {CPU: "4"})])],
               cohorts=hier_cohorts, extra_cqs=[lender("3"), borrower], extra_lqs=hier_lqs,
               expect_assign={"eng-alpha/wl-existing": adm("cq-borrower", one_ps(cpu=("on-demand", "5")))},
               inadmissible={"cq-borrower": ["eng-alpha/wl-pending"]},
               pending={"eng-alpha/wl-pending": "couldn't assign flavors to pod set main: insufficient unused quota "
                                                "for cpu in flavor on-demand, 1 more needed"})

    yield case("hierarchical cohort allows borrowing up to lending limit", 1805,
               [existing, W("wl-borrowing", "eng-alpha", queue="lq-borrower", podsets=[podset("main", 1, {CPU: "5"})])],
               cohorts=hier_cohorts, extra_cqs=[lender("5"), borrower], extra_lqs=hier_lqs,
               expect_assign={"eng-alpha/wl-existing": adm("cq-borrower", one_ps(cpu=("on-demand", "5"))),
                              "eng-alpha/wl-borrowing": adm("cq-borrower", one_ps(cpu=("on-demand", "5")))})


def _preemption_cases():
    """Upstream lines 1917-4737: preemption, partial admission, borrowing in one cycle, validation."""
    preemptor_meta = dict(uid="wl-preemptor", labels={JOB: "job-preemptor"})

    yield case("preempt workloads in ClusterQueue and cohort", 1917,
               [W("preemptor", "eng-beta", {CPU: "20"}, queue="main", **preemptor_meta),
                W("use-all-spot", "eng-alpha", {CPU: "100"}, reserve=adm("eng-alpha", one_ps(cpu=("spot", "100000m")))),
                W("low-1", "eng-beta", {CPU: "30"}, prio=-1, reserve=adm("eng-beta", one_ps(cpu=("on-demand", "30000m")))),
                W("low-2", "eng-beta", {CPU: "10"}, prio=-2, reserve=adm("eng-beta", one_ps(cpu=("on-demand", "10000m")))),
                W("borrower", "eng-alpha", {CPU: "60"}, reserve=adm("eng-alpha", one_ps(cpu=("on-demand", "60000m"))))],
               left={"eng-beta": ["eng-beta/preemptor"]},
               expect_assign={"eng-alpha/use-all-spot": adm("eng-alpha", one_ps(cpu=("spot", "100"))),
                              "eng-beta/low-1": adm("eng-beta", one_ps(cpu=("on-demand", "30"))),
                              "eng-beta/low-2": adm("eng-beta", one_ps(cpu=("on-demand", "10"))),
                              "eng-alpha/borrower": adm("eng-alpha", one_ps(cpu=("on-demand", "60")))},
               victims=[victim("borrower", "InCohortReclamation", pmsg(RECL, "/eng/eng-beta", "/eng/eng-alpha"), "eng-alpha"),
                        victim("low-2", "InClusterQueue", pmsg(PRIO, "/eng/eng-beta", "/eng/eng-beta"), "eng-beta")],
               pending={"eng-beta/preemptor": NF("main", short("cpu", "on-demand", 20), short("cpu", "spot", 20))
                        + ". Pending the preemption of 2 workload(s)"})

    yield case("multiple CQs need preemption", 2080,
               [W("preemptor", "eng-beta", {CPU: "1"}, prio=-1, queue="other", **preemptor_meta),
                W("pending", "eng-alpha", {CPU: "1"}, prio=1, queue="other"),
                W("use-all", "eng-alpha", {CPU: "100"}, reserve=adm("other-alpha", one_ps(cpu=("on-demand", "100"))))],
               extra_cqs=[cq("other-alpha", rg(fq("on-demand", res(CPU, "50", "50"))), cohort="other"),
                          cq("other-beta", rg(fq("on-demand", res(CPU, "50", "10"))), cohort="other",
                             preemption=preempt(within=LP, reclaim=ANY))],
               extra_lqs=[LQ("other", "eng-alpha", "other-alpha"), LQ("other", "eng-beta", "other-beta")],
               left={"other-beta": ["eng-beta/preemptor"]},
               inadmissible={"other-alpha": ["eng-alpha/pending"]},
               expect_assign={"eng-alpha/use-all": adm("other-alpha", one_ps(cpu=("on-demand", "100")))},
               victims=[victim("use-all", "InCohortReclamation", pmsg(RECL, "/other/other-beta", "/other/other-alpha"), "eng-alpha")],
               pending={"eng-alpha/pending": NF("main", short("cpu", "on-demand", 1)),
                        "eng-beta/preemptor": NF("main", short("cpu", "on-demand", 1)) + ". Pending the preemption of 1 workload(s)"})

    yield case("cannot borrow resource not listed in clusterQueue", 2220,
               [W("new", "eng-alpha", {GPU: "1"}, queue="main")],
               left={"eng-alpha": ["eng-alpha/new"]},
               pending={"eng-alpha/new": NF("main", "resource example.com/gpu unavailable in ClusterQueue")})

    yield case("not enough resources to borrow, fallback to next flavor; WhenCanPreempt: TryNextFlavor", 2257,
               [W("new", "eng-alpha", queue="main", podsets=[podset("one", 60, {CPU: "1"})]),
                W("existing", "eng-beta", podsets=[podset("one", 45, {CPU: "1"})],
                  reserve=adm("eng-beta", one_ps("one", 45, cpu=("on-demand", "45000m"))))],
               expect_assign={"eng-alpha/new": adm("eng-alpha", one_ps("one", 60, cpu=("spot", "60000m"))),
                              "eng-beta/existing": adm("eng-beta", one_ps("one", 45, cpu=("on-demand", "45000m")))})

    yield case("workload should not fit in nonexistent clusterQueue", 2331,
               [W("foo", "sales", {CPU: "1"}, queue="cq-nonexistent-queue")])

    yield case("workload should not fit in clusterQueue with nonexistent flavor", 2345,
               [W("foo", "sales", {CPU: "1"}, queue="flavor-nonexistent-queue")],
               left={"flavor-nonexistent-cq": ["sales/foo"]})

    eng_gamma = cq("eng-gamma", rg(fq("on-demand", res(CPU, "50", "10")), fq("spot", res(CPU, "0", "100"))),
                   cohort="eng", preemption=preempt(within=LP, reclaim=ANY))
    yield case("no overadmission while borrowing", 2362,
               [W("new", "eng-beta", queue="main", creation=-2, podsets=[podset("one", 50, {CPU: "1"})]),
                W("new-alpha", "eng-alpha", queue="main", creation=-1, podsets=[podset("one", 1, {CPU: "1"})]),
                W("new-gamma", "eng-gamma", queue="main", creation=0, podsets=[podset("one", 50, {CPU: "1"})]),
                W("existing", "eng-gamma",
                  podsets=[podset("borrow-on-demand", 51, {CPU: "1"}), podset("use-all-spot", 100, {CPU: "1"})],
                  reserve=adm("eng-gamma", psa("borrow-on-demand", {CPU: ("on-demand", "51")}, 51),
                              psa("use-all-spot", {CPU: ("spot", "100")}, 100)))],
               extra_cqs=[eng_gamma], extra_lqs=[LQ("main", "eng-gamma", "eng-gamma")],
               expect_assign={
                   "eng-gamma/existing": adm("eng-gamma", psa("borrow-on-demand", {CPU: ("on-demand", "51")}, 51),
                                             psa("use-all-spot", {CPU: ("spot", "100")}, 100)),
                   "eng-beta/new": adm("eng-beta", one_ps("one", 50, cpu=("on-demand", "50"))),
                   "eng-alpha/new-alpha": adm("eng-alpha", one_ps("one", 1, cpu=("on-demand", "1"))),
               },
               inadmissible={"eng-gamma": ["eng-gamma/new-gamma"]},
               pending={"eng-gamma/new-gamma": NF("one", short("cpu", "on-demand", 41), short("cpu", "spot", 50))})

    yield case("partial admission single variable pod set", 2559,
               [W("new", "sales", queue="main", podsets=[podset("one", 50, {CPU: "2"}, min_count=20)])],
               expect_assign={"sales/new": adm("sales", one_ps("one", 25, cpu=("default", "50000m")))})

    new_meta = dict(uid="wl-new", labels={JOB: "job-new"})
    old = W("old", "eng-beta", prio=-4, podsets=[podset("one", 10, {GPU: "1"})],
            reserve=adm("eng-beta", psa("one", {GPU: ("model-a", "10")}, 10)))
    for nm, line, cnt in [("partial admission single variable pod set, preempt first", 2614, 20),
                          ("partial admission single variable pod set, preempt with partial admission", 2703, 30)]:
        yield case(nm, line,
                   [W("new", "eng-beta", queue="main", prio=4, podsets=[podset("one", cnt, {GPU: "1"}, min_count=10)],
                      **new_meta), old],
                   expect_assign={"eng-beta/old": adm("eng-beta", psa("one", {GPU: ("model-a", "10")}, 10))},
                   left={"eng-beta": ["eng-beta/new"]},
                   victims=[victim("old", "InClusterQueue",
                                   msg("wl-new", "job-new", PRIO, "/eng/eng-beta", "/eng/eng-beta"), "eng-beta")],
                   pending={"eng-beta/new": NF("one", short(GPU, "model-a", 10)) + ". Pending the preemption of 1 workload(s)"})

    three = [podset("one", 20, {CPU: "1"}), podset("two", 30, {CPU: "1"}, min_count=10),
             podset("three", 15, {CPU: "1"}, min_count=5)]
    yield case("partial admission multiple variable pod sets", 2792,
               [W("new", "sales", queue="main", podsets=three)],
               expect_assign={"sales/new": adm("sales", psa("one", {CPU: ("default", "20000m")}, 20),
                                               psa("two", {CPU: ("default", "20000m")}, 20),
                                               psa("three", {CPU: ("default", "10000m")}, 10))})

    yield case("partial admission disabled, multiple variable pod sets", 2881,
               [W("new", "sales", queue="main", podsets=three)],
               gates={"PartialAdmission": False},
               left={"sales": ["sales/new"]},
               pending={"sales/new": NF("three", "insufficient quota for cpu in flavor default, previously considered "
                                        "podsets requests (50) + current podset request (15) > maximum capacity (50)")},
               note="upstream feeds minCount to the scheduler with the gate off; the harness does the same "
                    "(it does not run the Workload webhook that would drop minCount)")

    def co_cqs():
        g = rg(fq("default", res("r1", "10", "10"), res("r2", "10", "10")))
        p = preempt(within=LP, reclaim=ANY)
        return [cq(n, g, cohort="co", preemption=p) for n in ("cq1", "cq2", "cq3")]
    co_lqs = [LQ("lq1", "sales", "cq1"), LQ("lq2", "sales", "cq2"), LQ("lq3", "sales", "cq3")]

    yield case("two workloads can borrow different resources from the same flavor in the same cycle", 2957,
               [W("wl1", "sales", queue="lq1", prio=-1, podsets=[podset("main", 1, {"r1": "16"})]),
                W("wl2", "sales", queue="lq2", prio=-2, podsets=[podset("main", 1, {"r2": "16"})])],
               extra_cqs=co_cqs(), extra_lqs=co_lqs,
               expect_assign={"sales/wl1": adm("cq1", one_ps(r1=("default", "16"))),
                              "sales/wl2": adm("cq2", one_ps(r2=("default", "16")))})

    yield case("two workloads can borrow the same resources from the same flavor in the same cycle if fits in the cohort quota", 3053,
               [W("wl1", "sales", queue="lq1", prio=-1, podsets=[podset("main", 1, {"r1": "16"})]),
                W("wl2", "sales", queue="lq2", prio=-2, podsets=[podset("main", 1, {"r1": "14"})])],
               extra_cqs=co_cqs(), extra_lqs=co_lqs,
               expect_assign={"sales/wl1": adm("cq1", one_ps(r1=("default", "16"))),
                              "sales/wl2": adm("cq2", one_ps(r1=("default", "14")))})

    yield case("only one workload can borrow one resources from the same flavor in the same cycle if cohort quota cannot fit", 3149,
               [W("wl1", "sales", queue="lq1", prio=-1, podsets=[podset("main", 1, {"r1": "16"})]),
                W("wl2", "sales", queue="lq2", prio=-2, podsets=[podset("main", 1, {"r1": "16"})])],
               extra_cqs=co_cqs(), extra_lqs=co_lqs,
               expect_assign={"sales/wl1": adm("cq1", one_ps(r1=("default", "16")))},
               left={"cq2": ["sales/wl2"]},
               pending={"sales/wl2": "Workload no longer fits after processing another workload"})

    bwc = preempt(reclaim=LP, borrow_policy=LP)
    yield case("preemption while borrowing, workload waiting for preemption should not block a borrowing workload in another CQ", 3239,
               [W("a", "eng-alpha", queue="lq_a", creation=1, podsets=[podset("main", 1, {CPU: "3"})]),
                W("b", "eng-beta", queue="lq_b", creation=2, podsets=[podset("main", 1, {CPU: "1"})]),
                W("admitted_a", "eng-alpha", queue="lq_a", podsets=[podset("main", 1, {CPU: "2"})],
                  reserve=adm("cq_a", one_ps(cpu=("default", "2"))))],
               extra_cqs=[cq("cq_shared", rg(fq("default", res(CPU, "4", "0"))), cohort="preemption-while-borrowing"),
                          cq("cq_a", rg(fq("default", res(CPU, "0", "3"))), cohort="preemption-while-borrowing",
                             preemption=bwc),
                          cq("cq_b", rg(fq("default", res(CPU, "0"))), cohort="preemption-while-borrowing",
                             preemption=bwc)],
               extra_lqs=[LQ("lq_a", "eng-alpha", "cq_a"), LQ("lq_b", "eng-beta", "cq_b")],
               expect_assign={"eng-alpha/admitted_a": adm("cq_a", one_ps(cpu=("default", "2"))),
                              "eng-beta/b": adm("cq_b", one_ps(cpu=("default", "1")))},
               inadmissible={"cq_a": ["eng-alpha/a"]},
               pending={"eng-alpha/a": NF("main", short("cpu", "default", 2))})

    inc_meta = dict(uid="wl-incoming", labels={JOB: "job-incoming"})
    other3 = [cq("other-alpha", rg(fq("on-demand", res(CPU, "2"))), cohort="other",
                 preemption=preempt(within=LP, reclaim=ANY)),
              cq("other-beta", rg(fq("on-demand", res(CPU, "2"))), cohort="other"),
              cq("other-gamma", rg(fq("on-demand", res(CPU, "2"))), cohort="other")]
    other_lqs = [LQ("other", "eng-alpha", "other-alpha"), LQ("other", "eng-beta", "other-beta"),
                 LQ("other", "eng-gamma", "other-gamma")]

    def adm_od(q, n="1"):
        return adm(q, one_ps(cpu=("on-demand", n)))

    ab = [("a1", "eng-alpha", "other-alpha", -2), ("a2", "eng-alpha", "other-alpha", -2),
          ("a3", "eng-alpha", "other-alpha", -1), ("b1", "eng-beta", "other-beta", 0),
          ("b2", "eng-beta", "other-beta", 0), ("b3", "eng-beta", "other-beta", 0)]
    imsg = msg("wl-incoming", "job-incoming", PRIO, "/other/other-alpha", "/other/other-alpha")
    yield case("minimal preemptions when target queue is exhausted", 3405,
               [W(n, s, {CPU: "1"}, prio=p, queue="other", reserve=adm_od(q)) for n, s, q, p in ab]
               + [W("incoming", "eng-alpha", {CPU: "2"}, prio=0, queue="other", **inc_meta)],
               extra_cqs=other3, extra_lqs=other_lqs,
               left={"other-alpha": ["eng-alpha/incoming"]},
               expect_assign={s + "/" + n: adm_od(q) for n, s, q, p in ab},
               victims=[victim("a1", "InClusterQueue", imsg, "eng-alpha"), victim("a2", "InClusterQueue", imsg, "eng-alpha")],
               pending={"eng-alpha/incoming": NF("main", short("cpu", "on-demand", 2)) + ". Pending the preemption of 2 workload(s)"})

    yield case("A workload is only eligible to do preemptions if it fits fully within nominal quota", 3662,
               [W("a1", "eng-alpha", {CPU: "1"}, prio=-1, queue="other", reserve=adm_od("other-alpha")),
                W("b1", "eng-beta", {CPU: "1"}, prio=-1, queue="other", reserve=adm_od("other-beta")),
                W("incoming", "eng-alpha", {CPU: "3"}, prio=1, queue="other")],
               extra_cqs=other3[:2], extra_lqs=other_lqs[:2],
               inadmissible={"other-alpha": ["eng-alpha/incoming"]},
               expect_assign={"eng-alpha/a1": adm_od("other-alpha"), "eng-beta/b1": adm_od("other-beta")},
               pending={"eng-alpha/incoming": NF("main", short("cpu", "on-demand", 1))})

    def def_adm(q, n="2"):
        return adm(q, one_ps(cpu=("default", n)))

    oa = lambda n: cq("other-alpha", rg(fq("default", res(CPU, n))), cohort="other", preemption=preempt(within=LP))
    ob = lambda n: cq("other-beta", rg(fq("default", res(CPU, n))), cohort="other", preemption=preempt(within=LP))
    yield case("multiple preemptions without borrowing", 3777,
               [W("a1", "eng-alpha", {CPU: "2"}, prio=0, queue="other", reserve=def_adm("other-alpha")),
                W("b1", "eng-beta", {CPU: "2"}, prio=0, queue="other", reserve=def_adm("other-beta")),
                W("preemptor", "eng-alpha", {CPU: "2"}, prio=100, queue="other", **preemptor_meta),
                W("preemptor", "eng-beta", {CPU: "2"}, prio=100, queue="other", **preemptor_meta)],
               extra_cqs=[oa("2"), ob("2")], extra_lqs=other_lqs[:2],
               left={"other-alpha": ["eng-alpha/preemptor"], "other-beta": ["eng-beta/preemptor"]},
               expect_assign={"eng-alpha/a1": def_adm("other-alpha"), "eng-beta/b1": def_adm("other-beta")},
               victims=[victim("a1", "InClusterQueue", pmsg(PRIO, "/other/other-alpha", "/other/other-alpha"), "eng-alpha"),
                        victim("b1", "InClusterQueue", pmsg(PRIO, "/other/other-beta", "/other/other-beta"), "eng-beta")],
               pending={"eng-alpha/preemptor": NF("main", short("cpu", "default", 2)) + ". Pending the preemption of 1 workload(s)",
                        "eng-beta/preemptor": NF("main", short("cpu", "default", 2)) + ". Pending the preemption of 1 workload(s)"},
               note="both preemptors share the UID wl-preemptor, as upstream")

    yield case("multiple preemptions preemption possible after earlier workload fits", 3970,
               [W("b1", "eng-beta", {CPU: "2"}, prio=0, queue="other", reserve=def_adm("other-beta")),
                W("fit", "eng-alpha", {CPU: "1"}, prio=100, queue="other"),
                W("preemptor", "eng-beta", {CPU: "2"}, prio=99, queue="other", **preemptor_meta)],
               extra_cqs=[oa("1"), ob("2")], extra_lqs=other_lqs[:2],
               left={"other-beta": ["eng-beta/preemptor"]},
               expect_assign={"eng-alpha/fit": def_adm("other-alpha", "1"), "eng-beta/b1": def_adm("other-beta")},
               victims=[victim("b1", "InClusterQueue", pmsg(PRIO, "/other/other-beta", "/other/other-beta"), "eng-beta")],
               pending={"eng-beta/preemptor": NF("main", short("cpu", "default", 1)) + ". Pending the preemption of 1 workload(s)"})

    bw = preempt(within=LP, borrow_policy=LP)
    yield case("multiple preemptions skip preemption when shared limited resource", 4127,
               [W("a1", "eng-alpha", {CPU: "2"}, prio=0, queue="other", reserve=def_adm("other-alpha")),
                W("b1", "eng-beta", {CPU: "2"}, prio=0, queue="other", reserve=def_adm("other-beta")),
                W("preemptor", "eng-alpha", {CPU: "3"}, prio=100, queue="other", **preemptor_meta),
                W("pretending-preemptor", "eng-beta", {CPU: "3"}, prio=99, queue="other")],
               extra_cqs=[cq("other-alpha", rg(fq("default", res(CPU, "2"))), cohort="other", preemption=bw),
                          cq("other-beta", rg(fq("default", res(CPU, "2"))), cohort="other", preemption=bw),
                          cq("resource-bank", rg(fq("default", res(CPU, "1"))), cohort="other")],
               extra_lqs=other_lqs[:2],
               left={"other-alpha": ["eng-alpha/preemptor"], "other-beta": ["eng-beta/pretending-preemptor"]},
               expect_assign={"eng-alpha/a1": def_adm("other-alpha"), "eng-beta/b1": def_adm("other-beta")},
               victims=[victim("a1", "InClusterQueue", pmsg(PRIO, "/other/other-alpha", "/other/other-alpha"), "eng-alpha")],
               pending={"eng-alpha/preemptor": NF("main", short("cpu", "default", 2)) + ". Pending the preemption of 1 workload(s)",
                        "eng-beta/pretending-preemptor": "Workload no longer fits after processing another workload"})

    yield case("not enough resources", 4319,
               [W("new", "sales", queue="main", podsets=[podset("one", 1, {CPU: "100"})])],
               left={"sales": ["sales/new"]},
               pending={"sales/new": NF("one", "insufficient quota for cpu in flavor default, previously considered "
                                        "podsets requests (0) + current podset request (100) > maximum capacity (50)")})

    yield case("container does not satisfy limitRange constraints", 4360,
               [W("new", "sales", queue="main", podsets=[podset("one", 1, {CPU: "500m"})])],
               objects=[{"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "alpha", "namespace": "sales"},
                         "spec": {"limits": [{"type": "Container", "max": {CPU: "300m"}}]}}],
               left={"sales": ["sales/new"]},
               pending={"sales/new": "resources didn't satisfy LimitRange constraints: spec.podSets[0].template.spec."
                                     "containers[0]: Invalid value: [\"cpu\"]: requests must not be above the limitRange max"})

    yield case("container resource requests exceed limits", 4419,
               [W("new", "sales", queue="main", podsets=[podset("one", 1, {CPU: "200m"}, limits={CPU: "100m"})])],
               left={"sales": ["sales/new"]},
               pending={"sales/new": "resources validation failed: spec.podSets[0].template.spec.containers[0]: Invalid "
                                     "value: [\"cpu\"]: requests must not exceed its limits"})

    gpu_cqs = lambda beta_preempt: [
        cq("other-alpha", rg(fq("on-demand", res("gpu", "10")), fq("spot", res("gpu", "10"))), cohort="other",
           preemption=preempt(within=LP, reclaim=LP)),
        cq("other-beta", rg(fq("on-demand", res("gpu", "0")), fq("spot", res("gpu", "0"))), cohort="other",
           preemption=preempt(within=LP, reclaim=LP) if beta_preempt else None)]

    def sr(name, ns, prio, n, q, flavor):
        return simple_reserve(W(name, ns, {"gpu": n}, prio=prio, queue="other"), q, flavor)

    def gadm(q, flavor, n):
        return adm(q, one_ps(gpu=(flavor, n)))

    yield case("prefer reclamation over cq priority based preemption", 4473,
               [sr("a1", "eng-alpha", 50, "5", "other-alpha", "on-demand"),
                sr("b1", "eng-beta", 50, "5", "other-beta", "spot"),
                W("preemptor", "eng-alpha", {"gpu": "6"}, prio=100, queue="other", **preemptor_meta)],
               extra_cqs=gpu_cqs(True), extra_lqs=other_lqs[:2],
               left={"other-alpha": ["eng-alpha/preemptor"]},
               expect_assign={"eng-alpha/a1": gadm("other-alpha", "on-demand", "5"),
                              "eng-beta/b1": gadm("other-beta", "spot", "5")},
               victims=[victim("b1", "InCohortReclamation", pmsg(RECL, "/other/other-alpha", "/other/other-beta"), "eng-beta")],
               pending={"eng-alpha/preemptor": NF("main", short("gpu", "on-demand", 1), short("gpu", "spot", 1))
                        + ". Pending the preemption of 1 workload(s)"})

    yield case("prefer first preemption flavor when second flavor requires both reclaim and cq priority preemption", 4599,
               [sr("a1", "eng-alpha", 50, "5", "other-alpha", "on-demand"),
                sr("a2", "eng-alpha", 50, "5", "other-alpha", "spot"),
                sr("b1", "eng-beta", 50, "5", "other-beta", "spot"),
                W("preemptor", "eng-alpha", {"gpu": "6"}, prio=100, queue="other", **preemptor_meta)],
               extra_cqs=gpu_cqs(False), extra_lqs=other_lqs[:2],
               left={"other-alpha": ["eng-alpha/preemptor"]},
               expect_assign={"eng-alpha/a1": gadm("other-alpha", "on-demand", "5"),
                              "eng-alpha/a2": gadm("other-alpha", "spot", "5"),
                              "eng-beta/b1": gadm("other-beta", "spot", "5")},
               victims=[victim("a1", "InClusterQueue", pmsg(PRIO, "/other/other-alpha", "/other/other-alpha"), "eng-alpha")],
               pending={"eng-alpha/preemptor": NF("main", short("gpu", "on-demand", 1), short("gpu", "spot", 6))
                        + ". Pending the preemption of 1 workload(s)"})

    yield case("prefer first preemption flavor when second flavor also requires cq preemption", 4737,
               [sr("a1", "eng-alpha", 50, "6", "other-alpha", "on-demand"),
                sr("a2", "eng-alpha", 50, "5", "other-alpha", "spot"),
                sr("b1", "eng-beta", 9001, "5", "other-beta", "spot"),
                W("preemptor", "eng-alpha", {"gpu": "5"}, prio=100, queue="other", **preemptor_meta)],
               extra_cqs=gpu_cqs(False), extra_lqs=other_lqs[:2],
               left={"other-alpha": ["eng-alpha/preemptor"]},
               expect_assign={"eng-alpha/a1": gadm("other-alpha", "on-demand", "6"),
                              "eng-alpha/a2": gadm("other-alpha", "spot", "5"),
                              "eng-beta/b1": gadm("other-beta", "spot", "5")},
               victims=[victim("a1", "InClusterQueue", pmsg(PRIO, "/other/other-alpha", "/other/other-alpha"), "eng-alpha")],
               pending={"eng-alpha/preemptor": NF("main", short("gpu", "on-demand", 1), short("gpu", "spot", 5))
                        + ". Pending the preemption of 1 workload(s)"})


def _later_cases():
    """Upstream lines 4878-6714: reclaim, hierarchical cohorts, fungibility preferences, preemption gates,
    overflow."""
    preemptor_meta = dict(uid="wl-preemptor", labels={JOB: "job-preemptor"})

    def gadm(q, flavor, n):
        return adm(q, one_ps(gpu=(flavor, n)))

    def sr(name, ns, n, q, flavor, prio=None, queue="lq", **kw):
        return simple_reserve(W(name, ns, {"gpu": n}, prio=prio, queue=queue, **kw), q, flavor)

    yield case("workload requiring reclaimation prioritized over wl in another full cq", 4878,
               [sr("Admitted-Workload-1", "eng-alpha", "5", "CQ1", "on-demand"),
                W("WL1", "eng-alpha", {"gpu": "10"}, creation=0, queue="lq"),
                W("WL2", "eng-beta", {"gpu": "10"}, creation=1, queue="lq", uid="wl-WL2", labels={JOB: "job-WL2"}),
                sr("Admitted-Workload-2", "eng-gamma", "5", "CQ3", "on-demand", prio=0),
                sr("Admitted-Workload-3", "eng-gamma", "5", "CQ3", "on-demand", prio=1)],
               extra_cqs=[cq("CQ1", rg(fq("on-demand", res("gpu", "10"))), cohort="other"),
                          cq("CQ2", rg(fq("on-demand", res("gpu", "10"))), cohort="other", preemption=preempt(reclaim=ANY)),
                          cq("CQ3", rg(fq("on-demand", res("gpu", "0"))), cohort="other")],
               extra_lqs=[LQ("lq", "eng-alpha", "CQ1"), LQ("lq", "eng-beta", "CQ2"), LQ("lq", "eng-gamma", "CQ3")],
               left={"CQ2": ["eng-beta/WL2"]},
               inadmissible={"CQ1": ["eng-alpha/WL1"]},
               expect_assign={"eng-alpha/Admitted-Workload-1": gadm("CQ1", "on-demand", "5"),
                              "eng-gamma/Admitted-Workload-2": gadm("CQ3", "on-demand", "5"),
                              "eng-gamma/Admitted-Workload-3": gadm("CQ3", "on-demand", "5")},
               victims=[victim("Admitted-Workload-2", "InCohortReclamation",
                               msg("wl-WL2", "job-WL2", RECL, "/other/CQ2", "/other/CQ3"), "eng-gamma")],
               pending={"eng-alpha/WL1": NF("main", short("gpu", "on-demand", 5)),
                        "eng-beta/WL2": NF("main", short("gpu", "on-demand", 5)) + ". Pending the preemption of 1 workload(s)"})

    def ab_cqs(reclaim):
        return [cq("ClusterQueueA", rg(fq("on-demand", res("gpu", "2"))), cohort="root",
                   preemption=preempt(reclaim=reclaim)),
                cq("ClusterQueueB", rg(fq("on-demand", res("gpu", "0"))), cohort="root")]
    ab_lqs = [LQ("lq", "eng-alpha", "ClusterQueueA"), LQ("lq", "eng-beta", "ClusterQueueB")]

    def ab_wls():
        return [sr("a1-admitted", "eng-alpha", "1", "ClusterQueueA", "on-demand"),
                W("a2-pending", "eng-alpha", {"gpu": "2"}, queue="lq"),
                W("b1-pending", "eng-beta", {"gpu": "1"}, creation=0, queue="lq")]
    a2msg = NF("main", short("gpu", "on-demand", 1))

    yield case("capacity not blocked when lending clusterqueue can reclaim (ReclaimWithinCohort=Any)", 5082,
               ab_wls(), extra_cqs=ab_cqs(ANY), extra_lqs=ab_lqs,
               inadmissible={"ClusterQueueA": ["eng-alpha/a2-pending"]},
               expect_assign={"eng-alpha/a1-admitted": gadm("ClusterQueueA", "on-demand", "1"),
                              "eng-beta/b1-pending": gadm("ClusterQueueB", "on-demand", "1")},
               pending={"eng-alpha/a2-pending": a2msg})

    for nm, line, rp in [("capacity blocked when lending clusterqueue not guaranteed to reclaim (ReclaimWithinCohort=LowerPriority)", 5200, LP),
                         ("capacity blocked when lending clusterqueue not guaranteed to reclaim (ReclaimWithinCohort=Never)", 5311, NEVER)]:
        yield case(nm, line, ab_wls(), extra_cqs=ab_cqs(rp), extra_lqs=ab_lqs,
                   left={"ClusterQueueB": ["eng-beta/b1-pending"]},
                   inadmissible={"ClusterQueueA": ["eng-alpha/a2-pending"]},
                   expect_assign={"eng-alpha/a1-admitted": gadm("ClusterQueueA", "on-demand", "1")},
                   pending={"eng-alpha/a2-pending": a2msg,
                            "eng-beta/b1-pending": "Workload no longer fits after processing another workload"})

    yield case("in a hierarchical cohort, workload borrowing less is scheduled first", 5429,
               [W("guaranteed", "eng-alpha", queue="lq-guaranteed", prio=0, podsets=[podset("one", 1, {CPU: "4"})]),
                W("best-effort", "eng-alpha", queue="lq-best-effort", prio=3, podsets=[podset("one", 1, {CPU: "4"})])],
               cohorts=[cohort("root"), cohort("guaranteed", "root", rg(fq("default", res(CPU, "4"))))],
               extra_cqs=[cq("guaranteed", rg(fq("default", res(CPU, "0"))), cohort="guaranteed"),
                          cq("best-effort", rg(fq("default", res(CPU, "0"))), cohort="root")],
               extra_lqs=[LQ("lq-guaranteed", "eng-alpha", "guaranteed"), LQ("lq-best-effort", "eng-alpha", "best-effort")],
               left={"best-effort": ["eng-alpha/best-effort"]},
               expect_assign={"eng-alpha/guaranteed": adm("guaranteed", one_ps("one", 1, cpu=("default", "4")))},
               pending={"eng-alpha/best-effort": "Workload no longer fits after processing another workload"})

    admitted = simple_reserve(W("admitted", "eng-alpha", {CPU: "1"}, prio=0, queue="lq2"), "cq2", "on-demand", at=-1)
    admitted["status"]["conditions"].append({"type": "Admitted", "status": "True", "reason": "ByTest",
                                             "message": "Admitted by ClusterQueue cq2",
                                             "lastTransitionTime": "2025-01-01T00:00:00Z"})
    yield case("don't assign flavor if there are no candidates for preemption", 5547,
               [admitted, W("new", "eng-alpha", {CPU: "1"}, prio=100, queue="lq1")],
               extra_cqs=[cq("cq1", rg(fq("on-demand", res(CPU, "0", "1")), fq("spot", res(CPU, "0", "1"))),
                             cohort="cohort", preemption=preempt(within=LP, reclaim=ANY, borrow_policy=LP),
                             fungibility={"whenCanPreempt": "MayStopSearch", "whenCanBorrow": "MayStopSearch"}),
                          cq("cq2", rg(fq("on-demand", res(CPU, "1")), fq("spot", res(CPU, "1"))), cohort="cohort")],
               extra_lqs=[LQ("lq1", "eng-alpha", "cq1"), LQ("lq2", "eng-alpha", "cq2")],
               expect_assign={"eng-alpha/new": adm("cq1", one_ps(cpu=("spot", "1"))),
                              "eng-alpha/admitted": adm("cq2", one_ps(cpu=("on-demand", "1")))})

    foo1 = W("foo-1", "sales", queue="main", podsets=[podset("one", 10, {CPU: "1"})])
    foo1["metadata"]["generation"] = 1
    foo1["status"] = {
        "admission": adm("sales", one_ps("one", 10, cpu=("default", "10000m"))),
        "conditions": [
            {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
             "message": "Quota reserved in ClusterQueue sales", "observedGeneration": 1,
             "lastTransitionTime": "2025-01-01T00:00:00Z"},
            {"type": "Admitted", "status": "True", "reason": "Admitted",
             "message": "The workload is admitted", "observedGeneration": 1,
             "lastTransitionTime": "2025-01-01T00:00:00Z"}]}
    foo2 = W("foo-2", "sales", queue="main", podsets=[podset("one", 15, {CPU: "1"})],
             annotations={"kueue.x-k8s.io/workload-slice-replacement-for": "sales/foo-1"})
    foo2["metadata"]["generation"] = 1
    yield case("workload-slice fits in single clusterQueue", 5651, [foo1, foo2],
               gates={"ElasticJobsViaWorkloadSlices": True},
               expect_assign={"sales/foo-1": adm("sales", one_ps("one", 10, cpu=("default", "10"))),
                              "sales/foo-2": adm("sales", one_ps("one", 15, cpu=("default", "15")))})

    pc = W("pending-check", "eng-beta", {CPU: "80"}, queue="main")
    pc["status"] = {"admissionChecks": [{"name": "check", "state": "Pending", "message": "",
                                         "lastTransitionTime": "2025-01-01T00:00:00Z"}]}
    yield case("pending admission check with nofit and fit flavors", 5779, [pc],
               expect_assign={"eng-beta/pending-check": adm("eng-beta", one_ps(cpu=("spot", "80")))})

    yield case("admit to second flavor when first needs preemption; WhenCanPreempt: TryNextFlavor", 5839,
               [W("blocker", "eng-alpha", {CPU: "1"}, prio=50, queue="preempt-attempts-lq",
                  reserve=adm("preempt-attempts-cq", one_ps(cpu=("on-demand", "1"))), admitted=True),
                W("test-wl", "eng-alpha", {CPU: "1"}, prio=100, queue="preempt-attempts-lq")],
               extra_cqs=[cq("preempt-attempts-cq", rg(fq("on-demand", res(CPU, "1")), fq("spot", res(CPU, "1"))),
                             preemption=preempt(within=LP), fungibility={"whenCanPreempt": "TryNextFlavor"})],
               extra_lqs=[LQ("preempt-attempts-lq", "eng-alpha", "preempt-attempts-cq")],
               expect_assign={"eng-alpha/test-wl": adm("preempt-attempts-cq", one_ps(cpu=("spot", "1"))),
                              "eng-alpha/blocker": adm("preempt-attempts-cq", one_ps(cpu=("on-demand", "1")))},
               note="upstream leaves WhenCanBorrow empty; the harness applies the CRD default MayStopSearch")

    yield case("admit workload with zero-quantity request for resource not in ClusterQueue", 5937,
               [W("zero-resource-wl", "sales", {CPU: "1", GPU: "0"}, queue="main")],
               expect_assign={"sales/zero-resource-wl": adm("sales", one_ps(cpu=("default", "1000m")))})

    yield case("preempt when workload requests zero of a resource not defined in ClusterQueue", 5988,
               [W("preemptor", "sales", {CPU: "2", GPU: "0"}, queue="preempt-zero-gpu-lq", **preemptor_meta),
                W("low-priority", "sales", {CPU: "4"}, prio=-1, queue="preempt-zero-gpu-lq",
                  reserve=adm("preempt-zero-gpu-cq", one_ps(cpu=("default", "4000m"))))],
               extra_cqs=[cq("preempt-zero-gpu-cq", rg(fq("default", res(CPU, "4"))), preemption=preempt(within=LP))],
               extra_lqs=[LQ("preempt-zero-gpu-lq", "sales", "preempt-zero-gpu-cq")],
               left={"preempt-zero-gpu-cq": ["sales/preemptor"]},
               expect_assign={"sales/low-priority": adm("preempt-zero-gpu-cq", one_ps(cpu=("default", "4000m")))},
               victims=[victim("low-priority", "InClusterQueue",
                               pmsg(PRIO, "/preempt-zero-gpu-cq", "/preempt-zero-gpu-cq"), "sales")],
               pending={"sales/preemptor": NF("main", short("cpu", "default", 2)) + ". Pending the preemption of 1 workload(s)"})

    def ff(pref):
        return {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor", "preference": pref}

    yield case("PreemptionOverBorrowing preference: preempt in first flavor instead of borrowing in second", 6097,
               [W("low-pob", "default", {CPU: "5"}, prio=-1, queue="pob-queue",
                  reserve=adm("pob-cq", one_ps(cpu=("on-demand", "5000m"))), admitted=True),
                W("high-pob", "default", {CPU: "5"}, prio=0, queue="pob-queue",
                  uid="wl-high-pob", labels={JOB: "job-high-pob"})],
               extra_cqs=[cq("pob-cq", rg(fq("on-demand", res(CPU, "5", "0")), fq("spot", res(CPU, "0", "5"))),
                             cohort="pob-cohort", preemption=preempt(within=LP), fungibility=ff("PreemptionOverBorrowing")),
                          cq("pob-lender", rg(fq("on-demand", res(CPU, "0")), fq("spot", res(CPU, "5"))), cohort="pob-cohort")],
               extra_lqs=[LQ("pob-queue", "default", "pob-cq")],
               left={"pob-cq": ["default/high-pob"]},
               expect_assign={"default/low-pob": adm("pob-cq", one_ps(cpu=("on-demand", "5000m")))},
               victims=[victim("low-pob", "InClusterQueue",
                               msg("wl-high-pob", "job-high-pob", PRIO, "/pob-cohort/pob-cq", "/pob-cohort/pob-cq"), "default")],
               pending={"default/high-pob": NF("main", short("cpu", "on-demand", 5)) + ". Pending the preemption of 1 workload(s)"})

    yield case("PreemptionOverBorrowing preference: select fitting second flavor over first flavor with no preemption candidates", 6231,
               [W("admitted-nopc", "default", {CPU: "5"}, prio=0, queue="nopc-queue",
                  reserve=adm("nopc-cq", one_ps(cpu=("on-demand", "5000m"))), admitted=True),
                W("pending-nopc", "default", {CPU: "5"}, prio=0, queue="nopc-queue")],
               cohorts=[cohort("nopc-root", None, rg(fq("on-demand", res(CPU, "0")), fq("spot", res(CPU, "5")))),
                        cohort("nopc-mid", "nopc-root")],
               extra_cqs=[cq("nopc-cq", rg(fq("on-demand", res(CPU, "5", "0")), fq("spot", res(CPU, "0"))),
                             cohort="nopc-mid", preemption=preempt(within=LP), fungibility=ff("PreemptionOverBorrowing")),
                          cq("nopc-sibling", rg(fq("on-demand", res(CPU, "5")), fq("spot", res(CPU, "0"))), cohort="nopc-mid")],
               extra_lqs=[LQ("nopc-queue", "default", "nopc-cq")],
               expect_assign={"default/admitted-nopc": adm("nopc-cq", one_ps(cpu=("on-demand", "5000m"))),
                              "default/pending-nopc": adm("nopc-cq", one_ps(cpu=("spot", "5000m")))})

    yield case("BorrowingOverPreemption preference: borrow in second flavor instead of preempting in first", 6345,
               [W("low-bop", "default", {CPU: "5"}, prio=-1, queue="bop-queue",
                  reserve=adm("bop-cq", one_ps(cpu=("on-demand", "5000m"))), admitted=True),
                W("high-bop", "default", {CPU: "5"}, prio=0, queue="bop-queue")],
               extra_cqs=[cq("bop-cq", rg(fq("on-demand", res(CPU, "5", "0")), fq("spot", res(CPU, "0", "5"))),
                             cohort="bop-cohort", preemption=preempt(within=LP), fungibility=ff("BorrowingOverPreemption")),
                          cq("bop-lender", rg(fq("on-demand", res(CPU, "0")), fq("spot", res(CPU, "5"))), cohort="bop-cohort")],
               extra_lqs=[LQ("bop-queue", "default", "bop-cq")],
               expect_assign={"default/low-bop": adm("bop-cq", one_ps(cpu=("on-demand", "5000m"))),
                              "default/high-bop": adm("bop-cq", one_ps(cpu=("spot", "5000m")))})

    def gated(extra=()):
        p = W("preemptor", "eng-beta", {GPU: "20"}, queue="main", **preemptor_meta)
        p["spec"]["preemptionGates"] = [{"name": "gate"}]
        return [p] + list(extra)
    MKOP = {"MultiKueueOrchestratedPreemption": True}

    def gpu20(q="eng-beta"):
        return adm(q, psa("main", {GPU: ("model-a", "20")}))

    yield case("block preemptions and signal `BlockedOnPreemptionGates` when a preemption gate is present", 6449,
               gated([W("low-priority", "eng-beta", {GPU: "20"}, prio=-1, uid="low-priority", reserve=gpu20())]),
               gates=MKOP, left={"eng-beta": ["eng-beta/preemptor"]},
               expect_assign={"eng-beta/low-priority": gpu20()},
               pending={"eng-beta/preemptor": "Workload requires preemption, but it's gated"})

    yield case("do not signal `BlockedOnPreemptionGates` when a preemption gate is present, but the workload fits without preemption", 6530,
               gated(), gates=MKOP, expect_assign={"eng-beta/preemptor": gpu20()})

    yield case("do not signal `BlockedOnPreemptionGates` when a preemption gate is present, but the workload had nothing to preempt", 6580,
               gated([W("high-priority", "eng-beta", {GPU: "20"}, prio=1, uid="high-priority", reserve=gpu20())]),
               gates=MKOP, left={"eng-beta": ["eng-beta/preemptor"]},
               expect_assign={"eng-beta/high-priority": gpu20()},
               pending={"eng-beta/preemptor": NF("main", short(GPU, "model-a", 20))})

    yield case("prevent integer overflow when sum of requests over podsets exceeds MaxInt64", 6654,
               [W("vuln-wl", "default", queue="overflow-queue",
                  podsets=[podset("ps1", 1, {CPU: "1000000m"}), podset("ps2", 1, {CPU: "9223372036854775000m"})])],
               extra_cqs=[cq("overflow-cq", rg(fq("default", res(CPU, "10000"))))],
               extra_lqs=[LQ("overflow-queue", "default", "overflow-cq")],
               inadmissible={"overflow-cq": ["default/vuln-wl"]},
               pending={"default/vuln-wl": NF("ps2", "insufficient quota for cpu in flavor default, previously considered "
                                              "podsets requests (1k) + current podset request (9223372036854775) > "
                                              "maximum capacity (10k)")})

    yield case("prevent integer overflow in ResourceValue conversion to MilliValue", 6714,
               [W("vuln-wl", "default", queue="overflow-queue", podsets=[podset("ps1", 1, {CPU: "9223372036854776"})])],
               extra_cqs=[cq("overflow-cq", rg(fq("default", res(CPU, "10"))))],
               extra_lqs=[LQ("overflow-queue", "default", "overflow-cq")],
               inadmissible={"overflow-cq": ["default/vuln-wl"]},
               pending={"default/vuln-wl": NF("ps1", "insufficient quota for cpu in flavor default, previously considered "
                                              "podsets requests (0) + current podset request (9223372036854775807m) > "
                                              "maximum capacity (10)")})
