"""The administrators' worked examples (../shared/reference/seed-scenarios.md) as configs, with verdicts."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from cdk_app.config.loader import load_config
from cdk_app.validator.capacity import shared_pool_quota
from cdk_app.validator.reach import team_reach
from cdk_app.validator.report import check_file

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SCENARIOS = HERE / "scenarios"


def policy_findings(report):
    """Findings other than HPK208: the scenarios are about governance, and none pins the chart archive
    (that warning has its own case in test_bad_inputs)."""
    return [f for f in report.findings if f.code != "HPK208"]


def test_1_capacity_rule_at_capacity_is_valid():
    assert policy_findings(check_file(SCENARIOS / "s1_capacity_20.yaml")) == []


def test_1_capacity_rule_one_over_names_type_sum_capacity_and_teams():
    report = check_file(SCENARIOS / "s1_capacity_21.yaml")
    # One finding at each team's entry, each naming every share.
    assert [(e.code, e.path) for e in report.errors] == [("HPK501", "teams[0].quota[0]"), ("HPK501", "teams[1].quota[0]")]
    for error in report.errors:
        for text in ("ml.c5.2xlarge", "21 instances", "20 instances", "team-a 11", "team-b 10"):
            assert text in error.message


def test_2_lend_and_borrow_is_valid():
    report = check_file(SCENARIOS / "s2_lend_borrow.yaml")
    assert report.ok and policy_findings(report) == []
    config = load_config(SCENARIOS / "s2_lend_borrow.yaml").config
    strategies = {t.name: t.sharing_strategy for t in config.teams}
    assert strategies == {"team-a": "LendAndBorrow", "team-b": "LendAndBorrow", "team-c": "DontLend"}


def test_3_shared_pool_fills_the_gap():
    path = SCENARIOS / "s3_shared_pool.yaml"
    assert policy_findings(check_file(path)) == []
    pool = shared_pool_quota(load_config(path).config)
    assert [(q.instance_type, q.count, q.accelerators) for q in pool] == [("ml.p4d.24xlarge", 3, None)]


def test_3_shared_pool_recheck_when_capacity_shrinks(write_config):
    text = (SCENARIOS / "s3_shared_pool.yaml").read_text().replace("count: 8", "count: 4")
    assert "HPK504" in {f.code for f in check_file(write_config(text)).errors}


def test_4_cluster_policy_priority_classes():
    path = SCENARIOS / "s4_cluster_policy.yaml"
    assert policy_findings(check_file(path)) == []
    policy = load_config(path).config.cluster_policy
    assert [(c.name, c.weight) for c in policy.priority_classes] == [("inference", 90), ("training", 50),
                                                                     ("experimentation", 10)]
    assert policy.fair_share == "Enabled"


def test_5_enterprise_five_teams_on_80_gpus():
    path = ROOT / "config" / "prod.yaml"
    report = check_file(path)
    assert policy_findings(report) == []
    config = load_config(path).config
    assert len(config.teams) == 5
    gpus = next(r for r in report.capacity if r.instance_type == "ml.p5.48xlarge")
    assert gpus.capacity.accelerators == 80
    assert {t.sharing_strategy for t in config.teams} >= {"DontLend", "LendAndBorrow"}


def test_6_startup_three_teams_on_15_gpus():
    path = SCENARIOS / "s6_startup.yaml"
    report = check_file(path)
    assert policy_findings(report) == []
    config = load_config(path).config
    assert len({t.fair_share_weight for t in config.teams}) == 1
    assert {t.preempt_team_tasks for t in config.teams} == {"LowerPriority"}
    assert sum(r.capacity.accelerators for r in report.capacity) == 15
    assert sum(r.reserved.accelerators for r in report.capacity) == Fraction(15)


def test_7_two_teams_on_four_g5_12xlarge_is_dev():
    path = ROOT / "config" / "dev.yaml"
    assert policy_findings(check_file(path)) == []
    config = load_config(path).config
    john, smith = config.teams
    assert (john.fair_share_weight, john.borrow_limit, john.quota[0].count) == (0, 50, 3)
    assert (smith.fair_share_weight, smith.borrow_limit, smith.quota[0].count) == (100, 100, 1)
    assert config.cluster_policy.priority_classes == () and config.cluster_policy.fair_share == "Enabled"


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_scenario_file_has_a_verdict_test(path):
    assert path.stem.split("_")[0] in {"s1", "s2", "s3", "s4", "s6", "s10"}


def reach_of(path):
    """(team, instance type) -> (quota, reach) in instances, and what limits the borrowing."""
    return {(r.team, r.instance_type): (r.quota.count, r.reach.count, r.capped_by)
            for r in team_reach(load_config(path).config)}


def test_2_team_b_can_borrow_the_three_it_needs_and_dont_lend_cannot():
    # Team B (quota 5, using 4) submits a 4-instance task: it needs 3 beyond its quota, borrowed from
    # Team A's idle 4. Its ceiling (5 + 100 %, and team A lends 6) leaves room for that; team C never borrows.
    reach = reach_of(SCENARIOS / "s2_lend_borrow.yaml")
    quota, ceiling, _ = reach[("team-b", "ml.c5.2xlarge")]
    assert ceiling - quota >= 3
    assert reach[("team-c", "ml.c5.2xlarge")] == (4, 4, None)


def test_7_smith_reaches_eight_gpus_on_johns_idle_ones():
    rows = {r.team: r for r in team_reach(load_config(ROOT / "config" / "dev.yaml").config)
            if r.instance_type == "ml.g5.12xlarge"}
    assert (rows["smith"].quota.accelerators, rows["smith"].reach.accelerators) == (4, 8)
    # john's 50 % of 3 instances would be 4.5, but only smith's one instance is there to borrow.
    assert (rows["john"].reach.count, rows["john"].capped_by) == (4, "lenders")


def test_10_batch_fair_share_prodexp1_reaches_75_of_100():
    path = SCENARIOS / "s10_batch_fair_share.yaml"
    assert policy_findings(check_file(path)) == []
    reach = reach_of(path)
    assert reach[("prodexp1", "ml.g5.2xlarge")] == (60, 75, "borrow limit")
    assert reach[("prodexp2", "ml.g5.2xlarge")] == (40, 60, "borrow limit")
    config = load_config(path).config
    assert [c.weight for c in config.cluster_policy.priority_classes] == [90, 80, 50, 30, 10]
    assert {t.preempt_team_tasks for t in config.teams} == {"LowerPriority"}
