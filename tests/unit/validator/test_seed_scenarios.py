"""The administrators' worked examples (../shared/reference/seed-scenarios.md) as configs, with verdicts."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest
from aws_cdk import App
from aws_cdk.assertions import Template
from support.paths import ROOT, SUPPORT

from cdk_app.cli.batch_job import BatchJobError, BatchJobRequest
from cdk_app.cli.batch_job import render as render_batch_job
from cdk_app.config.loader import load_config
from cdk_app.domain.batch_shares import quota_share_reach, quota_share_request, team_named
from cdk_app.domain.capacity import shared_pool_quota
from cdk_app.domain.reach import team_reach
from cdk_app.stacks.batch_stack import BatchStack
from cdk_app.validator.report import check_file

SCENARIOS = SUPPORT / "scenarios"


def policy_findings(report):
    """Findings other than HPK208, HPK214 and HPK113: the scenarios are about governance; none pins the chart
    archive, has a group without deep health checks (tests/unit/validator/rules/test_instance_groups.py), and dev
    keeps the API endpoint open to anywhere as it was deployed (the warnings have their own cases)."""
    return [f for f in report.findings if f.code not in ("HPK208", "HPK214", "HPK113")]


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


def test_10_batch_quota_shares_60_and_40_of_100_are_valid_and_one_more_is_not(write_config):
    path = SCENARIOS / "s10_batch_quota_shares.yaml"
    assert policy_findings(check_file(path)) == []
    [error] = check_file(write_config(path.read_text().replace("count: 40", "count: 41"))).errors
    assert error.code == "HPK710" and error.path == "batch.teams[1].quota[0]"
    assert "quota shares on prod-p4d hold 101 instances of ml.p4d.24xlarge but service environment 'p4d' has 100" in error.message


def test_10_prodexp1_borrows_prodexp2s_idle_15_to_reach_75_and_is_preempted_back_to_60():
    batch = load_config(SCENARIOS / "s10_batch_quota_shares.yaml").config.batch
    reach = {r.team: (r.quota, r.reach) for r in quota_share_reach(batch, "prod-p4d", {"ProdExp2": 25})}
    assert reach["ProdExp1"] == (60, 75)
    reach = {r.team: (r.quota, r.reach) for r in quota_share_reach(batch, "prod-p4d", {"ProdExp2": 40})}
    assert reach["ProdExp1"] == (60, 60)  # ProdExp2 needs its 40: what ProdExp1 borrowed is taken back


def test_10_inside_a_full_share_priority_90_preempts_lower_ones():
    """In-share preemption is on (preempt_team_tasks: LowerPriority), and ProdExp1 may submit the seed's
    priority-90 job of 15 instances; priorities stay within the seed's 0-99."""
    config = load_config(SCENARIOS / "s10_batch_quota_shares.yaml").config
    prodexp1 = team_named(config.batch, "ProdExp1")
    assert quota_share_request(prodexp1, "prod-p4d")["preemptionConfiguration"] == {"inSharePreemption": "ENABLED"}
    job = BatchJobRequest(team="ProdExp1", name="job-e", image="train:1", instance_type="ml.p4d.24xlarge",
                          output_s3="s3://models/e", instance_count=15, priority=90)
    submit = render_batch_job(config, job)
    assert (submit["quotaShareName"], submit["schedulingPriority"]) == ("ProdExp1", 90)
    with pytest.raises(BatchJobError, match="may use 0-99"):
        render_batch_job(config, replace(job, priority=100))


@pytest.mark.synth
def test_10_fifo_queue_for_cpu_and_fair_share_queue_with_weights_1_3_5():
    config = load_config(SCENARIOS / "s10_batch_fifo_and_fair_share.yaml").config
    assert policy_findings(check_file(SCENARIOS / "s10_batch_fifo_and_fair_share.yaml")) == []
    template = Template.from_stack(BatchStack(App(), "S10", config=config))
    queues = {q["Properties"]["JobQueueName"]: q["Properties"] for q in template.find_resources("AWS::Batch::JobQueue").values()}
    assert "SchedulingPolicyArn" not in queues["ml-c5-xlarge-queue"] and queues["ml-c5-xlarge-queue"]["Priority"] == 2
    assert "SchedulingPolicyArn" in queues["ml-g6-12xlarge-queue"] and queues["ml-g6-12xlarge-queue"]["Priority"] == 1
    [policy] = template.find_resources("AWS::Batch::SchedulingPolicy").values()
    shares = {s["ShareIdentifier"]: s["WeightFactor"] for s in policy["Properties"]["FairsharePolicy"]["ShareDistribution"]}
    assert shares == {"HIGHPRI": 1, "MIDPRI": 3, "LOWPRI": 5}
    # Lower weight factor, larger share: HIGHPRI first, then MIDPRI, then LOWPRI.
    assert sorted(shares, key=shares.get) == ["HIGHPRI", "MIDPRI", "LOWPRI"]
