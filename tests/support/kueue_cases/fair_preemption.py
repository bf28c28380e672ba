"""Hand translation of a part of pkg/scheduler/preemption/preemption_fair_test.go
TestFairPreemptions (sigs.k8s.io/kueue v0.19.2) into kueue-oracle "preempt"
mode cases with fair sharing enabled (Configuration.fairSharing present, no
preemptionStrategies: Kueue's defaults).

Upstream compares the set "<namespace/name>:<reason>" of GetTargets; the
harness reports the Preempted condition Kueue writes on each target.
Upstream sets UID = name on every admitted workload; so do these cases.
Only the table's first 15 cases (upstream lines 108-313) are translated.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .common import case_doc, cq, fq, preempt, res, rf, rg, simple_reserve, victim, wl

FILE = "pkg/scheduler/preemption/preemption_fair_test.go"
TEST = "TestFairPreemptions"
LP, ANY = "LowerPriority", "Any"

BWC = preempt(within=LP, reclaim=ANY, borrow_policy=LP, max_prio=-3)
BASE_CQS = [
    cq("a", rg(fq("default", res("cpu", "3"))), cohort="all", preemption=BWC),
    cq("b", rg(fq("default", res("cpu", "3"))), cohort="all", preemption=BWC),
    cq("c", rg(fq("default", res("cpu", "3"))), cohort="all", preemption=BWC),
    cq("preemptible", rg(fq("default", res("cpu", "0"))), cohort="all"),
]


def A(name, q, cpu="1", prio=None):
    w = simple_reserve(wl(name, "", {"cpu": cpu}, prio=prio), q, "default")
    w["metadata"]["uid"] = name
    return w


def units(*names):
    """unitWl.Clone().Name(n).SimpleReserveQuota(<first letter>, "default", now)"""
    return [A(n, n[0]) for n in names]


def inc(name, cpu="1", reserve_in=None):
    w = wl(name, "", {"cpu": cpu})
    if reserve_in:
        w = simple_reserve(w, reserve_in, "default")
    return w


def case(name, line, admitted, incoming, target_cq, want):
    inp = {
        "mode": "preempt",
        "now": "2025-01-01T00:00:00Z",
        "fairSharing": {},
        "resourceFlavors": [rf("default")],
        "clusterQueues": BASE_CQS,
        "workloads": admitted,
        "preemption": {"incoming": incoming, "clusterQueue": target_cq,
                       "assignment": {"podSets": [{"name": "main", "count": 1,
                                                   "flavors": {"cpu": {"name": "default", "mode": "Preempt"}}}]}},
    }
    exp = {"preempted": len(want), "targets": [victim(n, r) for n, r in want]}
    return case_doc("fairpreemption", name, {"file": FILE, "test": TEST, "case": name, "line": line}, inp, exp)


REC, FS, INCQ = "InCohortReclamation", "InCohortFairSharing", "InClusterQueue"


def cases() -> Iterator[tuple[str, dict[str, Any]]]:
    """Every translated case of the table, in upstream order."""
    most = units("a1", "a2", "a3", "b1", "b2", "b3", "b4", "b5", "c1")
    yield case("reclaim nominal from user using the most", 108, most, inc("c_incoming"), "c", [("b1", REC)])
    yield case("can reclaim from queue using less, if taking the latest workload from user using the most isn't enough", 125,
               [A("a1", "a", "3"), A("a2", "a", "1"), A("b1", "b", "2"), A("b2", "b", "3")],
               inc("c_incoming", "3", reserve_in="a"), "c", [("a1", REC)])
    yield case("reclaim borrowable quota from user using the most", 137, most, inc("a_incoming"), "a", [("b1", FS)])
    yield case("preempt one from each CQ borrowing", 154,
               [A("a1", "a", "0.5"), A("a2", "a", "0.5"), A("a3", "a", "3"),
                A("b1", "b", "0.5"), A("b2", "b", "0.5"), A("b3", "b", "3")],
               inc("c_incoming", "2"), "c", [("a1", REC), ("b1", REC)])
    yield case("can't preempt when everyone under nominal", 171,
               units("a1", "a2", "a3", "b1", "b2", "b3", "c1", "c2", "c3"), inc("c_incoming"), "c", [])
    yield case("can't preempt when it would switch the imbalance", 187,
               units("a1", "a2", "a3", "b1", "b2", "b3", "b4", "b5"), inc("a_incoming", "2"), "a", [])
    yield case("can preempt lower priority workloads from same CQ", 202,
               [A("a1_low", "a", prio=-1), A("a2_low", "a", prio=-1)] + units("a3", "a4", "b1", "b2", "b3", "b4", "b5"),
               inc("a_incoming", "2"), "a", [("a1_low", INCQ), ("a2_low", INCQ)])
    yield case("can preempt a combination of same CQ and highest user", 222,
               [A("a_low", "a", prio=-1)] + units("a2", "a3", "b1", "b2", "b3", "b4", "b5", "b6"),
               inc("a_incoming", "2"), "a", [("a_low", INCQ), ("b1", FS)])
    yield case("preempt huge workload if there is no other option, as long as the target CQ gets a lower share", 242,
               [A("b1", "b", "9")], inc("a_incoming", "2"), "a", [("b1", REC)])
    yield case("can't preempt huge workload if the incoming is also huge", 251,
               [A("a1", "a", "2"), A("b1", "b", "7")], inc("a_incoming", "5"), "a", [])
    yield case("can't preempt 2 smaller workloads if the incoming is huge", 260,
               [A("b1", "b", "2"), A("b2", "b", "2"), A("b3", "b", "3")], inc("a_incoming", "6"), "a", [])
    yield case("preempt from target and others even if over nominal", 270,
               [A("a1_low", "a", "2", prio=-1), A("a2_low", "a", "1", prio=-1), A("b1", "b", "3"), A("b2", "b", "3")],
               inc("a_incoming", "4"), "a", [("a1_low", INCQ), ("b1", FS)])
    yield case("prefer to preempt workloads that don't make the target CQ have the biggest share", 285,
               [A("b1", "b", "2"), A("b2", "b", "1"), A("b3", "b", "2"), A("c1", "c", "1")],
               inc("a_incoming", "3.5"), "a", [("b2", FS)])
    yield case("preempt from different cluster queues if the end result has a smaller max share", 298,
               [A("b1", "b", "2"), A("b2", "b", "2.5"), A("c1", "c", "2"), A("c2", "c", "2.5")],
               inc("a_incoming", "3.5"), "a", [("b1", FS), ("c1", FS)])
    yield case("scenario above does not flap", 313,
               [A("a1", "a", "3.5"), A("b2", "b", "2.5"), A("c2", "c", "2.5")], inc("b_incoming", "2"), "b", [])
