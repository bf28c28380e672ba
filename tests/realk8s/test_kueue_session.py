"""kueue-oracle's session mode (tests/k8s/kueue/cmd/kueue-oracle/session.go) through support.kueue_session: the
real Kueue v0.19.2 driven one timeline event at a time, as the simulator drives a scheduler. It must tell the
seed-002 walkthrough as a timeline (borrow, reclaim, re-admission), agree with the one-shot oracle where both
apply, give a reset scenario the answers of a fresh process, survive bad requests, and play a random scenario
with its quotas kept."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from support import kueue_cases
from support.kueue_oracle import run_oracle
from support.kueue_session import OracleScheduler, OracleSessionError, kueue_amount, setup_document
from support.paths import ROOT
from support.simulate_scenarios import MONTH, random_config, replay, scenario_file

from cdk_app.config.loader import load_config
from cdk_app.config.names import team_cluster_queue, team_namespace
from cdk_app.simulate.kueue.api import IN_COHORT_RECLAMATION, Decision, PodSet, Workload

G5 = "ml.g5.12xlarge"
GPU = "nvidia.com/gpu"
# Upstream TestSchedule cases whose input is pending and admitted workloads only (no LimitRange, no gates):
# admissions across flavors, borrowing in a cohort, preemption in the ClusterQueue and in the cohort.
SAME_AS_ONE_SHOT = [
    "schedule__assign-multiple-resources-and-flavors",
    "schedule__admit-in-same-cohort-with-no-borrowing",
    "schedule__preempt-workloads-in-clusterqueue-and-cohort",
    "schedule__multiple-preemptions-without-borrowing",
    "schedule__prefer-reclamation-over-cq-priority-based-preemption",
    "schedule__workload-requiring-reclaimation-prioritized-over-wl-in-another-full-cq",
]
ONE_SHOT_ONLY = ("cycles", "mode")


def job(team: str, name: str, pods: int, gpus: int, created: int) -> Workload:
    return Workload(key=f"{team_namespace(team)}/{name}", cluster_queue=team_cluster_queue(team), priority=0,
                    created=created, pod_sets=(PodSet("main", pods, {GPU: gpus}),))


def seed_002(scheduler: OracleScheduler) -> list[tuple[list[Decision], dict[str, str], dict[str, Any]]]:
    """config/dev.yaml (john 3 g5 = 12 GPUs, smith 1 = 4, borrow limits 50 % and 100 %): john's 8-GPU job at 0,
    smith's 8-GPU job at 10 (borrows 4 of john's idle GPUs), john's 4-GPU job at 20 (reclaims them), john's
    first job finishes at 30 (smith's job fits again). Each schedule call's decisions, pending and usage."""
    steps = []

    def schedule(at: int) -> None:
        steps.append((scheduler.schedule(at), dict(scheduler.pending()), copy.deepcopy(scheduler.usage())))

    scheduler.submit(job("john", "john-8", 2, 4, 0))
    schedule(0)
    scheduler.submit(job("smith", "smith-8", 2, 4, 10))
    schedule(10)
    scheduler.submit(job("john", "john-4", 1, 4, 20))
    schedule(20)
    scheduler.finish(f"{team_namespace('john')}/john-8", 30)
    schedule(30)
    return steps


def dev_setup() -> dict[str, Any]:
    return setup_document(load_config(ROOT / "config" / "dev.yaml").config)


def test_seed_002_as_a_timeline(oracle: Path) -> None:
    john, smith = team_cluster_queue("john"), team_cluster_queue("smith")
    john_8, smith_8, john_4 = (f"{team_namespace(t)}/{n}" for t, n in
                               (("john", "john-8"), ("smith", "smith-8"), ("john", "john-4")))
    with OracleScheduler(dev_setup(), binary=oracle) as kueue:
        (at_0, _, _), (at_10, _, usage_10), (at_20, pending_20, usage_20), (at_30, pending_30, usage_30) = \
            seed_002(kueue)
    assert at_0 == [Decision(at=0, event="admitted", workload=john_8, cluster_queue=john,
                             flavors={"main": {GPU: G5}}, borrowed={})]
    # smith's 8 GPUs are 4 above its nominal 4: borrowed from john's idle ones
    assert at_10 == [Decision(at=10, event="admitted", workload=smith_8, cluster_queue=smith,
                              flavors={"main": {GPU: G5}}, borrowed={G5: {GPU: 4}})]
    assert usage_10 == {john: {G5: {GPU: 8}}, smith: {G5: {GPU: 8}}}
    # john's 4 more are within his nominal 12: Kueue reclaims them, then admits john's job a cycle later
    assert [(d.event, d.workload) for d in at_20] == [("preempted", smith_8), ("admitted", john_4)], at_20
    preempted, admitted = at_20
    assert (preempted.reason, preempted.preemptor, preempted.cluster_queue) == (IN_COHORT_RECLAMATION, john_4, smith)
    assert "reclamation within the cohort" in preempted.message
    assert admitted.borrowed == {}
    assert list(pending_20) == [smith_8], pending_20
    assert "insufficient quota" in pending_20[smith_8]
    assert usage_20 == {john: {G5: {GPU: 12}}}
    # john's first job done: 8 GPUs free, smith's job runs again (borrowing 4 again)
    assert at_30 == [Decision(at=30, event="admitted", workload=smith_8, cluster_queue=smith,
                              flavors={"main": {GPU: G5}}, borrowed={G5: {GPU: 4}})]
    assert pending_30 == {}
    assert usage_30 == {john: {G5: {GPU: 4}}, smith: {G5: {GPU: 8}}}


def _usage_of_one_shot(out: dict[str, Any]) -> dict[str, dict[str, dict[str, int]]]:
    usage: dict[str, dict[str, dict[str, int]]] = {}
    for cq, state in (out.get("clusterQueues") or {}).items():
        for flavor in state.get("flavorsUsage") or []:
            for r in flavor["resources"]:
                amount = kueue_amount(r["name"], r["total"])
                if amount:
                    usage.setdefault(cq, {}).setdefault(flavor["name"], {})[r["name"]] = amount
    return usage


@pytest.mark.parametrize("name", SAME_AS_ONE_SHOT)
def test_a_session_agrees_with_the_one_shot_oracle(oracle: Path, name: str) -> None:
    """The case's workloads in the setup, one schedule call: the decisions, what stays pending (and why) and the
    usage are those of the one-shot mode run until stable with the clock held (cycleInterval 0)."""
    case = dict(kueue_cases.cases())[name]
    one_shot = {k: v for k, v in case["input"].items() if k not in ONE_SHOT_ONLY}
    out = run_oracle(oracle, {"name": name, "input": {**one_shot, "untilStable": True, "cycleInterval": "0s"}})
    with OracleScheduler(one_shot, binary=oracle, strict=False) as kueue:
        answer = kueue.request({"op": "schedule", "at": 0})
    assert answer["stable"] and out["stable"]
    assert answer["cycles"] == len(out["cycles"])
    want = sorted([("admitted", w, "", "") for c in out["cycles"] for w in c.get("admitted") or []]
                  + [("preempted", p["workload"], p["reason"], p["preemptor"])
                     for c in out["cycles"] for p in c.get("preempted") or []])
    got = sorted((d["event"], d["workload"], d.get("reason", ""), d.get("preemptor", ""))
                 for d in answer["decisions"])
    assert got == want
    assert answer["decisions"], "a case that decides nothing compares nothing"
    for d in answer["decisions"]:
        if d["event"] == "admitted":
            assignment = out["assignments"][d["workload"]]
            assert d["flavors"] == {p.get("name", "main"): p["flavors"] for p in assignment["podSetAssignments"]}
    assert answer["pending"] == {w["name"]: w.get("pendingMessage", "") for w in out["workloads"]
                                 if w["state"] == "Pending"}
    assert {cq: {f: {r: kueue_amount(r, q) for r, q in per.items()} for f, per in flavors.items()}
            for cq, flavors in answer["usage"].items()} == _usage_of_one_shot(out)


def test_reset_answers_as_a_fresh_process(oracle: Path) -> None:
    def answers(kueue: OracleScheduler) -> list[Any]:
        return seed_002(kueue)

    with OracleScheduler(dev_setup(), binary=oracle) as fresh:
        want = answers(fresh)
    # another scenario first (other objects, fair sharing off, a preemption), then the reset
    case = dict(kueue_cases.cases())["schedule__preempt-workloads-in-clusterqueue-and-cohort"]
    with OracleScheduler({k: v for k, v in case["input"].items() if k not in ONE_SHOT_ONLY}, binary=oracle,
                         strict=False) as used:
        assert used.request({"op": "schedule", "at": 0})["decisions"]
        used.reset(dev_setup())
        assert answers(used) == want


def test_a_bad_request_gets_an_error_and_the_session_goes_on(oracle: Path) -> None:
    with OracleScheduler(dev_setup(), binary=oracle) as kueue:
        kueue.submit(job("john", "john-8", 2, 4, 0))
        assert "error" in kueue.raw(b"this is not JSON")
        assert "unknown op" in kueue.raw(b'{"op": "frobnicate"}')["error"]
        with pytest.raises(OracleSessionError, match="not admitted"):
            kueue.finish(f"{team_namespace('john')}/john-8", 5)  # pending, not running
        with pytest.raises(OracleSessionError, match="NotFound|not found"):
            kueue.finish(f"{team_namespace('john')}/nobody", 5)
        with pytest.raises(OracleSessionError, match="already exists"):
            kueue.submit(job("john", "john-8", 1, 1, 0))
        bad = kueue.workload_object(job("john", "bad-quantity", 1, 1, 0))
        bad["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "lots"}
        with pytest.raises(OracleSessionError, match="quantities must match"):
            kueue.request({"op": "submit", "workload": bad})
        unknown = kueue.workload_object(job("john", "unknown-class", 1, 1, 0))
        del unknown["spec"]["priority"]
        unknown["spec"]["priorityClassRef"] = {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass",
                                               "name": "urgent"}
        with pytest.raises(OracleSessionError, match="unknown priority class"):
            kueue.request({"op": "submit", "workload": unknown})
        assert "at" in kueue.raw(b'{"op": "schedule"}')["error"]
        assert [d.workload for d in kueue.schedule(10)] == [f"{team_namespace('john')}/john-8"]
        with pytest.raises(OracleSessionError, match="clock is already at 10s"):
            kueue.schedule(9)
        assert kueue.schedule(10) == []
        assert kueue.usage() == {team_cluster_queue("john"): {G5: {GPU: 8}}}


def test_a_dead_oracle_is_an_error_not_a_hang(oracle: Path) -> None:
    kueue = OracleScheduler(dev_setup(), binary=oracle, timeout=10)
    try:
        kueue.submit(job("john", "john-8", 2, 4, 0))
        kueue._proc.kill()  # what a Go panic leaves: no answer, EOF
        with pytest.raises(OracleSessionError, match="ended|exit code"):
            kueue.schedule(0)
    finally:
        kueue.close()


def test_a_random_scenario_keeps_every_quota(oracle: Path) -> None:
    """A seeded environment (12 teams on 24 nodes) and 400 jobs over a month, played to the end through the kit's
    timeline: every job is admitted and finishes, the usage never exceeds what the nodes hold, and only a
    borrowing workload's decision says it borrowed."""
    config = random_config(7, teams=12, nodes=24)
    workload = scenario_file(8, config, 400, MONTH)
    with OracleScheduler(setup_document(config), binary=oracle) as kueue:
        checked = CapacityCheck(kueue, capacity=24 * 4)
        timeline = replay(config, workload, checked)
        assert kueue.pending() == {}
    decisions = timeline.decisions
    finished = sum(e.event == "finished" for r in timeline.jobs for e in r.events)
    admitted = sum(d.event == "admitted" for d in decisions)
    assert finished == len(workload.jobs)
    assert admitted == len(workload.jobs) + sum(d.event == "preempted" for d in decisions)
    assert checked.calls > 0
    assert any(d.borrowed for d in decisions)
    for d in decisions:
        assert all(amount > 0 for per in d.borrowed.values() for amount in per.values()), d


class CapacityCheck:
    """A scheduler wrapper that checks the GPU usage after every schedule call."""

    def __init__(self, scheduler: OracleScheduler, capacity: int) -> None:
        self.scheduler, self.capacity, self.calls = scheduler, capacity, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.scheduler, name)

    def schedule(self, at: int) -> list[Decision]:
        decisions = self.scheduler.schedule(at)
        self.calls += 1
        used = sum(per.get(GPU, 0) for flavors in self.scheduler.usage().values() for per in flavors.values())
        assert used <= self.capacity, (at, copy.deepcopy(self.scheduler.usage()))
        return decisions


@pytest.mark.parametrize(("smith_created", "smith_priority", "want"), [
    (0, 0, [["{john}/john-4", "{smith}/smith-4"]]),  # equal share (none borrows), priority and creation
    (1, 0, []),  # smith's a second younger: john's goes first
    (0, 50, []),  # smith's higher priority goes first
])
def test_fair_sharing_ties_are_heads_the_tournament_cannot_order(
        oracle: Path, smith_created: int, smith_priority: int, want: list[list[str]]) -> None:
    """Fair sharing (config/dev.yaml): the tournament orders the cohort's heads by share, priority and creation;
    equal ones win by the order of a Go set, and the answer names them."""
    with OracleScheduler(dev_setup(), binary=oracle) as kueue:
        kueue.submit(job("john", "john-4", 1, 4, 0))
        smith = job("smith", "smith-4", 1, 4, smith_created)
        kueue.submit(Workload(key=smith.key, cluster_queue=smith.cluster_queue, priority=smith_priority,
                              created=smith.created, pod_sets=smith.pod_sets))
        assert {d.workload for d in kueue.schedule(1)} == {f"{team_namespace('john')}/john-4", smith.key}
        assert kueue.ties == [[k.format(john=team_namespace("john"), smith=team_namespace("smith")) for k in group]
                              for group in want]


def test_the_state_is_that_of_the_last_schedule_call(oracle: Path) -> None:
    """Asked after a finish and a submit (schedule calls leave the state out): the usage before the finish, the
    pending workloads with the one submitted since."""
    john_8 = f"{team_namespace('john')}/john-8"
    with OracleScheduler(dev_setup(), binary=oracle) as kueue:
        kueue.submit(job("john", "john-8", 2, 4, 0))
        answer = kueue.request({"op": "schedule", "at": 0, "state": False})
        assert [d["workload"] for d in answer["decisions"]] == [john_8]
        assert "pending" not in answer and "usage" not in answer
        kueue.finish(john_8, 5)
        kueue.submit(job("smith", "smith-4", 1, 4, 5))
        assert kueue.request({"op": "state"}) == {
            "pending": {f"{team_namespace('smith')}/smith-4": ""},
            "usage": {team_cluster_queue("john"): {G5: {GPU: "8"}}}}
