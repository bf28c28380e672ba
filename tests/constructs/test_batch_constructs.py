"""Fine-grained tests of the AWS Batch constructs: what each writes, what each refuses, and cfn-lint
(its AWS::Batch::* schemas: enums, ranges, required properties) on a stack holding every one of them."""

from __future__ import annotations

import json

import pytest
from aws_cdk import App, Environment, Stack
from aws_cdk.assertions import Template
from cfnlint.api import ManualArgs, lint

from hyperpod_constructs.batch_job_queue import BatchJobQueue, BatchJobQueueProps
from hyperpod_constructs.batch_quota_share import BatchQuotaShare, BatchQuotaShareProps
from hyperpod_constructs.batch_scheduling_policy import BatchSchedulingPolicy, BatchSchedulingPolicyProps
from hyperpod_constructs.batch_service_environment import BatchServiceEnvironment, BatchServiceEnvironmentProps
from hyperpod_constructs.batch_team_access import BatchTeamAccess, BatchTeamAccessProps

ACCOUNT, REGION = "111122223333", "us-east-1"
TRAINING_ROLE = f"arn:aws:iam::{ACCOUNT}:role/TeamTraining"


def stack() -> Stack:
    return Stack(App(), "Test", env=Environment(account=ACCOUNT, region=REGION))


@pytest.fixture(scope="module")
def built() -> tuple[Stack, dict]:
    """One of each construct, wired the way the Batch stack wires them."""
    s = stack()
    env = BatchServiceEnvironment(s, "Env", props=BatchServiceEnvironmentProps(
        name="p4d", capacity_limits=(("ml.p4d.24xlarge", 100),)))
    cpu = BatchServiceEnvironment(s, "Cpu", props=BatchServiceEnvironmentProps(
        name="cpu", capacity_limits=(("NUM_INSTANCES", 20),), enabled=False))
    quota_policy = BatchSchedulingPolicy(s, "QuotaPolicy", props=BatchSchedulingPolicyProps(name="prod", kind="quota_share"))
    fair_policy = BatchSchedulingPolicy(s, "FairPolicy", props=BatchSchedulingPolicyProps(
        name="gpu", kind="fair_share", shares=(("HIGHPRI", 1.0), ("MIDPRI", 3.0), ("LOWPRI", None)),
        share_decay_seconds=3600, compute_reservation=10))
    quota_queue = BatchJobQueue(s, "QuotaQueue", props=BatchJobQueueProps(
        name="prod", service_environment=env.arn, priority=10, scheduling_policy_arn=quota_policy.arn))
    fair_queue = BatchJobQueue(s, "FairQueue", props=BatchJobQueueProps(
        name="gpu", service_environment=env.arn, scheduling_policy_arn=fair_policy.arn))
    fifo_queue = BatchJobQueue(s, "FifoQueue", props=BatchJobQueueProps(name="cpu", service_environment=cpu.arn,
                                                                        priority=2, enabled=False,
                                                                        runnable_timeout_seconds=3600))
    share = BatchQuotaShare(s, "Share", props=BatchQuotaShareProps(
        name="ProdExp1", job_queue=quota_queue.arn, capacity_limits=(("ml.p4d.24xlarge", 60),), borrow_limit=-1))
    reserve = BatchQuotaShare(s, "Reserve", props=BatchQuotaShareProps(
        name="ProdExp2", job_queue=quota_queue.arn, capacity_limits=(("ml.p4d.24xlarge", 40),), strategy="RESERVE",
        in_share_preemption="DISABLED", enabled=False))
    access = BatchTeamAccess(s, "Access", props=BatchTeamAccessProps(
        team="ProdExp1", principals=(f"arn:aws:iam::{ACCOUNT}:role/Scientists",), execution_role_arn=TRAINING_ROLE,
        fair_share_queues=(fair_queue.arn,), share_identifier="HIGHPRI", quota_shares=((quota_queue.arn, share.arn),),
        fifo_queues=(fifo_queue.arn,), max_priority=99))
    refs = {name: s.resolve(c.resource.logical_id) for name, c in
            {"env": env, "fair_policy": fair_policy, "quota_queue": quota_queue, "fair_queue": fair_queue,
             "fifo_queue": fifo_queue, "share": share, "reserve": reserve}.items()}
    refs["access"] = access
    return s, refs


def resources(s: Stack, type_name: str) -> dict[str, dict]:
    return Template.from_stack(s).find_resources(type_name)


def test_cfn_lint_accepts_every_construct_in_the_region(built):
    s, _ = built
    template = json.dumps(App.of(s).synth().get_stack_by_name("Test").template)
    matches = lint(template, regions=[REGION], config=ManualArgs(ignore_checks=["W3005"]))
    assert [str(m) for m in matches] == []


def test_service_environment_is_sagemaker_training_with_its_capacity(built):
    s, refs = built
    env = resources(s, "AWS::Batch::ServiceEnvironment")[refs["env"]]["Properties"]
    assert env == {"ServiceEnvironmentName": "p4d", "ServiceEnvironmentType": "SAGEMAKER_TRAINING", "State": "ENABLED",
                   "CapacityLimits": [{"CapacityUnit": "ml.p4d.24xlarge", "MaxCapacity": 100}]}


def test_fair_share_policy_carries_weights_decay_and_reservation(built):
    s, refs = built
    policy = resources(s, "AWS::Batch::SchedulingPolicy")[refs["fair_policy"]]["Properties"]
    assert policy["Name"] == "gpu-fair-share"
    assert policy["FairsharePolicy"] == {"ShareDecaySeconds": 3600, "ComputeReservation": 10, "ShareDistribution": [
        {"ShareIdentifier": "HIGHPRI", "WeightFactor": 1}, {"ShareIdentifier": "MIDPRI", "WeightFactor": 3},
        {"ShareIdentifier": "LOWPRI"}]}
    kinds = {p["Properties"]["Name"]: sorted(k for k in p["Properties"] if k.endswith("Policy"))
             for p in resources(s, "AWS::Batch::SchedulingPolicy").values()}
    assert kinds == {"gpu-fair-share": ["FairsharePolicy"], "prod-quota-share": ["QuotaSharePolicy"]}


def test_policy_kind_is_part_of_its_identity():
    """Batch cannot turn a fair-share policy into a quota-share one: a kind change must be a new resource."""
    ids = {}
    for kind in ("fair_share", "quota_share"):
        s = stack()
        policy = BatchSchedulingPolicy(s, "Policy", props=BatchSchedulingPolicyProps(name="gpu", kind=kind))
        ids[kind] = (s.resolve(policy.resource.logical_id), policy.name)
    assert ids["fair_share"][0] != ids["quota_share"][0] and ids["fair_share"][1] != ids["quota_share"][1]


def test_queues_are_sagemaker_training_on_one_environment(built):
    s, refs = built
    queues = resources(s, "AWS::Batch::JobQueue")
    fifo = queues[refs["fifo_queue"]]["Properties"]
    assert "SchedulingPolicyArn" not in fifo and fifo["State"] == "DISABLED" and fifo["Priority"] == 2
    assert fifo["JobStateTimeLimitActions"] == [{"Action": "TERMINATE", "MaxTimeSeconds": 3600, "State": "RUNNABLE",
                                                 "Reason": "RUNNABLE at the head of cpu for over 3600 s"}]
    assert "JobStateTimeLimitActions" not in queues[refs["quota_queue"]]["Properties"]
    quota = queues[refs["quota_queue"]]["Properties"]
    assert quota["JobQueueType"] == "SAGEMAKER_TRAINING" and quota["JobQueueName"] == "prod"
    assert quota["ServiceEnvironmentOrder"] == [{"Order": 1, "ServiceEnvironment": {
        "Fn::GetAtt": [refs["env"], "ServiceEnvironmentArn"]}}]
    assert quota["SchedulingPolicyArn"]["Fn::GetAtt"][1] == "Arn"


def test_quota_shares_map_strategy_borrowing_preemption_and_state(built):
    s, refs = built
    shares = resources(s, "AWS::Batch::QuotaShare")
    lend = shares[refs["share"]]["Properties"]
    assert lend["ResourceSharingConfiguration"] == {"Strategy": "LEND_AND_BORROW", "BorrowLimit": -1}
    assert lend["PreemptionConfiguration"] == {"InSharePreemption": "ENABLED"} and lend["State"] == "ENABLED"
    assert lend["JobQueue"] == {"Fn::GetAtt": [refs["quota_queue"], "JobQueueArn"]}
    reserve = shares[refs["reserve"]]["Properties"]
    assert reserve["ResourceSharingConfiguration"] == {"Strategy": "RESERVE"}
    assert reserve["PreemptionConfiguration"] == {"InSharePreemption": "DISABLED"} and reserve["State"] == "DISABLED"


def statements(s: Stack) -> dict[str, dict]:
    [policy] = resources(s, "AWS::IAM::Policy").values()
    return {st["Sid"]: st for st in policy["Properties"]["PolicyDocument"]["Statement"]}


def same(got: list, wanted: list) -> bool:
    """The same resources in any order (CDK sorts a statement's resources its own way)."""
    return sorted(json.dumps(r, sort_keys=True) for r in got) == sorted(json.dumps(r, sort_keys=True) for r in wanted)


def test_team_submits_only_to_its_queues_with_its_own_share(built):
    s, refs = built
    found = statements(s)
    service_jobs = s.resolve(f"arn:{s.partition}:batch:{REGION}:{ACCOUNT}:service-job/*")
    fair = found["SubmitWithOwnShareIdentifier"]
    assert fair["Action"] == "batch:SubmitServiceJob"
    assert same(fair["Resource"], [service_jobs, {"Fn::GetAtt": [refs["fair_queue"], "JobQueueArn"]}])
    assert fair["Condition"] == {"StringEquals": {"batch:ShareIdentifier": "HIGHPRI"},
                                 "NumericLessThanEqualsIfExists": {"batch:SchedulingPriority": 99}}
    quota = found["SubmitToOwnQuotaShare"]
    assert same(quota["Resource"], [service_jobs, {"Fn::GetAtt": [refs["quota_queue"], "JobQueueArn"]},
                                    {"Fn::GetAtt": [refs["share"], "QuotaShareArn"]}])
    assert {"Fn::GetAtt": [refs["reserve"], "QuotaShareArn"]} not in quota["Resource"]
    assert same(found["SubmitToFifoQueues"]["Resource"], [service_jobs, {"Fn::GetAtt": [refs["fifo_queue"], "JobQueueArn"]}])


def test_team_passes_only_its_training_role_to_sagemaker(built):
    s, _ = built
    passing = statements(s)["PassOwnTrainingRole"]
    assert passing["Action"] == "iam:PassRole" and passing["Resource"] == TRAINING_ROLE
    assert passing["Condition"] == {"StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}}


def test_no_wildcard_actions_and_role_assumed_by_the_team_only(built):
    s, _ = built
    for sid, statement in statements(s).items():
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        assert all("*" not in action for action in actions), sid
    [role] = resources(s, "AWS::IAM::Role").values()
    assert role["Properties"]["AssumeRolePolicyDocument"]["Statement"] == [{
        "Action": "sts:AssumeRole", "Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:role/Scientists"}}]


@pytest.mark.parametrize(("make", "message"), [
    (lambda s: BatchServiceEnvironment(s, "E", props=BatchServiceEnvironmentProps(name="a.b", capacity_limits=(("NUM_INSTANCES", 1),))),
     "letters, digits"),
    (lambda s: BatchServiceEnvironment(s, "E", props=BatchServiceEnvironmentProps(name="e", capacity_limits=())),
     "at least one capacity limit"),
    (lambda s: BatchSchedulingPolicy(s, "P", props=BatchSchedulingPolicyProps(name="p", kind="fair_share",
                                                                             shares=(("HIGH-PRI", 1.0),))), "letters and digits"),
    (lambda s: BatchSchedulingPolicy(s, "P", props=BatchSchedulingPolicyProps(name="p", kind="fair_share",
                                                                             shares=(("A", 1000.0),))), "0.0001-999.9999"),
    (lambda s: BatchSchedulingPolicy(s, "P", props=BatchSchedulingPolicyProps(name="p", kind="quota_share",
                                                                             compute_reservation=5)), "fair_share policies only"),
    (lambda s: BatchSchedulingPolicy(s, "P", props=BatchSchedulingPolicyProps(name="p", kind="fair_share",
                                                                             share_decay_seconds=604801)), "0-604800"),
    (lambda s: BatchJobQueue(s, "Q", props=BatchJobQueueProps(name="q", service_environment="e", priority=1001)), "0-1000"),
    (lambda s: BatchJobQueue(s, "Q", props=BatchJobQueueProps(name="q", service_environment="e",
                                                              runnable_timeout_seconds=599)), "600-86400"),
    (lambda s: BatchQuotaShare(s, "S", props=BatchQuotaShareProps(name="s", job_queue="q",
                                                                  capacity_limits=(("ml.p4d.24xlarge", 0),))), "at least 1"),
    (lambda s: BatchQuotaShare(s, "S", props=BatchQuotaShareProps(name="s", job_queue="q", strategy="LEND", borrow_limit=10,
                                                                  capacity_limits=(("ml.p4d.24xlarge", 1),))), "LEND_AND_BORROW only"),
    (lambda s: BatchTeamAccess(s, "A", props=BatchTeamAccessProps(team="t", principals=(), execution_role_arn=TRAINING_ROLE,
                                                                  fifo_queues=("arn",))), "at least one principal"),
    (lambda s: BatchTeamAccess(s, "A", props=BatchTeamAccessProps(team="t", principals=("arn:aws:iam::1:role/x",),
                                                                  execution_role_arn=TRAINING_ROLE, fair_share_queues=("q",))),
     "share identifier"),
    (lambda s: BatchTeamAccess(s, "A", props=BatchTeamAccessProps(team="t", principals=("arn:aws:iam::1:role/x",),
                                                                  execution_role_arn=f"arn:aws:iam::{ACCOUNT}:user/x",
                                                                  fifo_queues=("q",))), "IAM role ARN"),
])
def test_constructs_refuse_what_batch_would_refuse(make, message):
    with pytest.raises(ValueError, match=message):
        make(stack())
