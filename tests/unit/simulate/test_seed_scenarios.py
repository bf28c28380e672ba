"""The administrators' worked examples (shared/reference/seed-scenarios.md, from the seed articles) replayed by the
simulator, with their numbers: who runs, who borrows how much from whom, who is preempted by whom and why."""

from __future__ import annotations

import pytest
from support.paths import ROOT
from support.sim_configs import environment, workload_file

from cdk_app.config.loader import load_config
from cdk_app.domain.kueue_mapping import Choices
from cdk_app.simulate.run import simulate_environment
from cdk_app.simulate.workloads import load_workloads

G5_1 = "ml.g5.2xlarge"  # 1 GPU per instance: quotas read as GPUs


def _run(config, path, choices=None):
    summary, findings, _ = simulate_environment(config, load_workloads(str(path), config), choices or Choices())
    return summary, findings


def _events(summary, job):
    return [e for j in summary["jobs"] if j["name"] == job for e in j["events"]]


def _first(summary, job, kind):
    return next(e for e in _events(summary, job) if e["event"] == kind)


def test_seed_002_smith_borrows_johns_idle_gpus_and_john_takes_them_back():
    config = load_config(ROOT / "config" / "dev.yaml").config
    summary, findings = _run(config, ROOT / "config" / "workloads" / "dev-seed-002.yaml")
    assert findings == []
    admitted = _first(summary, "smith-train", "admitted")
    # smith's 8-GPU job: its own 4 and john's idle 4 (john runs 8 of his 12: 50 % of the cluster -> 100 %)
    assert admitted["at"] == 600 and admitted["borrowed"]["accelerators"] == 4 and "john" in admitted["from"]
    preempted = _first(summary, "smith-train", "preempted")
    assert (preempted["at"], preempted["by"], preempted["reason"]) == (1200, "john-eval", "InCohortReclamation")
    # john-eval finishes at 1200 + 3600: john's idle 4 are there to borrow again and smith's job starts over
    readmitted = [e for e in _events(summary, "smith-train") if e["event"] == "admitted"]
    assert [e["at"] for e in readmitted] == [600, 4800]
    assert _first(summary, "smith-train", "finished")["at"] == 4800 + 3600
    smith = next(t for t in summary["teams"] if t["team"] == "smith")
    at_600 = [p for p in smith["usage"] if p["at"] == 600][-1]
    john = next(t for t in summary["teams"] if t["team"] == "john")
    john_at_600 = [p for p in john["usage"] if p["at"] <= 600][-1]
    assert at_600["accelerators"] + john_at_600["accelerators"] == 16  # the whole cluster's GPUs
    # smith borrowed john's 4 idle GPUs from 600 to 1200 s and from 4800 to 8400 s: 4 x 4200 s = 4.667 GPU-hours,
    # all lent by john (the only lender with idle GPUs; nothing of ml.g5.12xlarge is unallocated)
    assert smith["accelerator_hours"]["borrowed"] == john["accelerator_hours"]["lent"] == 4.667


def _team(name, strategy, count):
    limit = {"borrow_limit": 100} if strategy == "LendAndBorrow" else {}  # HPK403: only a borrower has one
    return {"name": name, "sharing_strategy": strategy, **limit, "quota": [{"instance_type": G5_1, "count": count}]}


def _lend_borrow(tmp_path, strategy_a="LendAndBorrow", strategy_b="LendAndBorrow"):
    return environment(tmp_path, {G5_1: 11}, [_team("team-a", strategy_a, 6), _team("team-b", strategy_b, 5)],
                       policy={"fair_share": "Disabled"})


SEED_001_JOBS = [
    {"name": "a-run", "team": "team-a", "pods": 2, "per_pod": {"instance_type": G5_1, "accelerators": 1},
     "submit_at": 0, "runtime": 7200},
    {"name": "b-run", "team": "team-b", "pods": 4, "per_pod": {"instance_type": G5_1, "accelerators": 1},
     "submit_at": 0, "runtime": 3600},
    {"name": "b-new", "team": "team-b", "pods": 4, "per_pod": {"instance_type": G5_1, "accelerators": 1},
     "submit_at": 60, "runtime": 600},
]


def test_seed_001_team_b_borrows_three_of_team_a_s_idle_quota(tmp_path):
    summary, _ = _run(_lend_borrow(tmp_path), workload_file(tmp_path, SEED_001_JOBS))
    admitted = _first(summary, "b-new", "admitted")
    assert admitted["at"] == 60 and admitted["borrowed"]["accelerators"] == 3 and admitted["from"] == ["team-a"]


@pytest.mark.parametrize(("strategy_a", "strategy_b"), [("DontLend", "LendAndBorrow"), ("LendAndBorrow", "DontLend")])
def test_seed_001_dont_lend_keeps_the_job_within_its_own_reservation(tmp_path, strategy_a, strategy_b):
    summary, _ = _run(_lend_borrow(tmp_path, strategy_a, strategy_b), workload_file(tmp_path, SEED_001_JOBS))
    # team-a lends nothing, or team-b (DontLend, the documented default reading) borrows nothing: b-new waits
    # for team-b's own quota, freed when b-run finishes
    admitted = _first(summary, "b-new", "admitted")
    assert admitted["at"] == 3600 and admitted["borrowed"] == {}


def test_seed_001_startup_a_higher_priority_task_preempts_its_own_teams_lower_one(tmp_path):
    teams = [{"name": name, "fair_share_weight": 50, "preempt_team_tasks": "LowerPriority",
              "quota": [{"instance_type": G5_1, "count": 5}]} for name in ("ml", "data", "apps")]
    config = environment(tmp_path, {G5_1: 15}, teams, policy={
        "priority_classes": [{"name": "experiment", "weight": 10}, {"name": "production", "weight": 90}]})
    jobs = [{"name": "explore", "team": "ml", "priority": "experiment", "pods": 5,
             "per_pod": {"instance_type": G5_1, "accelerators": 1}, "submit_at": 0, "runtime": 3600},
            {"name": "ship", "team": "ml", "priority": "production", "pods": 5,
             "per_pod": {"instance_type": G5_1, "accelerators": 1}, "submit_at": 30, "runtime": 600},
            {"name": "etl", "team": "data", "pods": 5, "per_pod": {"instance_type": G5_1, "accelerators": 1},
             "submit_at": 10, "runtime": 3600},
            {"name": "serve", "team": "apps", "pods": 5, "per_pod": {"instance_type": G5_1, "accelerators": 1},
             "submit_at": 20, "runtime": 3600}]
    summary, _ = _run(config, workload_file(tmp_path, jobs))
    preempted = _first(summary, "explore", "preempted")
    assert (preempted["at"], preempted["by"], preempted["reason"]) == (30, "ship", "InClusterQueue")
    assert _first(summary, "ship", "admitted")["at"] == 30
    # the other teams use their own 5 each: nobody borrows, nobody else is touched
    assert [e["event"] for e in _events(summary, "etl")] == ["submitted", "admitted", "finished"]


def test_seed_001_enterprise_reserved_teams_keep_their_gpus_for_constant_work(tmp_path):
    # five teams share 80 GPUs (10 x ml.p4d.24xlarge); two reserve theirs (DontLend), three lend and borrow
    quota = {"research": 3, "prod-serving": 2, "nlp": 2, "vision": 2, "speech": 1}
    reserved = ("research", "prod-serving")
    teams = [{"name": name, "sharing_strategy": "DontLend" if name in reserved else "LendAndBorrow",
              **({} if name in reserved else {"borrow_limit": 200}),
              "quota": [{"instance_type": "ml.p4d.24xlarge", "count": count}]} for name, count in quota.items()]
    config = environment(tmp_path, {"ml.p4d.24xlarge": 10}, teams)
    # speech (8 GPUs) wants 24 while research and prod-serving are idle and nlp/vision run their own work
    jobs = [{"name": "asr", "team": "speech", "pods": 3, "per_pod": {"instance_type": "ml.p4d.24xlarge",
                                                                    "accelerators": 8}, "submit_at": 0, "runtime": 600},
            {"name": "bert", "team": "nlp", "pods": 1, "per_pod": {"instance_type": "ml.p4d.24xlarge",
                                                                   "accelerators": 8}, "submit_at": 0, "runtime": 900}]
    summary, findings = _run(config, workload_file(tmp_path, jobs))
    admitted = _first(summary, "asr", "admitted")
    # 8 of its own and 16 borrowed - from nlp's and vision's idle GPUs only, never the reserved teams'
    assert admitted["borrowed"]["accelerators"] == 16
    assert set(admitted["from"]) <= {"nlp", "vision"}
    assert findings == []
