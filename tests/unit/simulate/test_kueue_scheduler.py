"""The in-process Kueue scheduler (cdk_app.simulate.kueue) against expectations it did not write: Kueue v0.19.2's
own TestSchedule/TestPreemption/TestFairPreemptions cases (translated in support.kueue_cases) that the HyperPod
mapping can express, run through support.kueue_inprocess without the oracle."""

from __future__ import annotations

import pytest
from support import kueue_cases
from support.kueue_inprocess import run
from support.kueue_oracle import compare

from cdk_app.simulate.kueue.api import PodSet, Workload
from cdk_app.simulate.kueue.objects import OutOfScope
from cdk_app.simulate.kueue.scheduler import KueueScheduler


def _in_scope() -> list[str]:
    names = []
    for name, case in kueue_cases.cases():
        if case.get("skip"):
            continue
        try:
            run(case["input"])
        except OutOfScope:
            continue
        names.append(name)
    return names


CASES = dict(kueue_cases.cases())
IN_SCOPE = _in_scope()


@pytest.mark.parametrize("name", IN_SCOPE)
def test_upstream_case_expectation_is_reproduced(name: str) -> None:
    case = CASES[name]
    assert compare(case, run(case["input"])) == [], case["upstream"]


def test_the_in_scope_cases_cover_every_table() -> None:
    assert len(IN_SCOPE) >= 74
    assert {CASES[n]["upstream"]["test"] for n in IN_SCOPE} == set(kueue_cases.TABLES)


def test_a_wrong_expectation_is_detected() -> None:
    case = CASES["preemption__preempt-lowest-priority"]
    wrong = {**case, "expected": {**case["expected"], "preempted": case["expected"]["preempted"] + 1}}
    assert compare(wrong, run(case["input"])) != []


def _setup() -> dict:
    group = [{"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": "4"}]}]}]
    return {"resourceFlavors": [{"metadata": {"name": "f"}, "spec": {}}],
            "clusterQueues": [{"metadata": {"name": n}, "spec": {"cohortName": "c", "resourceGroups": group,
                                                                 "namespaceSelector": {},
                                                                 "preemption": {"reclaimWithinCohort": "Any"}}}
                              for n in ("a", "b")]}


def test_a_lender_reclaims_its_quota_and_the_borrower_is_requeued() -> None:
    """seed-002's reclaim (AWS's walkthrough, tests/realk8s/test_kueue_mapping.py): b borrows a's idle cpu, a
    takes it back. The expected decisions and messages are kueue-oracle's (the same setup with b1 admitted, run
    until stable), recorded from a real run."""
    s = KueueScheduler(_setup())
    s.submit(Workload("ns/b1", "b", 0, 0, (PodSet("main", 1, {"cpu": 6000}),)))
    [admitted] = s.schedule(1)
    assert admitted.event == "admitted" and admitted.borrowed == {"f": {"cpu": 2000}}
    s.submit(Workload("ns/a1", "a", 0, 2, (PodSet("main", 1, {"cpu": 4000}),)))
    preempted, admitted = s.schedule(3)
    assert (preempted.event, preempted.workload, preempted.reason) == ("preempted", "ns/b1", "InCohortReclamation")
    assert preempted.message.endswith("preemptor path: /c/a; preemptee path: /c/b")
    assert (admitted.event, admitted.workload) == ("admitted", "ns/a1")
    assert s.pending() == {"ns/b1": "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
                                    "flavor f, 2 more needed"}
    assert s.usage() == {"a": {"f": {"cpu": 4000}}, "b": {}}
