"""An outside attack on the `batch:` section, adapted: each hostile config gives
exactly the listed findings (code, field path, severity), nothing more.

Sources of truth (none written here): the AWS Batch user guide's service-quotas page
(https://docs.aws.amazon.com/batch/latest/userguide/service_limits.html: 50 job queues and 50 service
environments per account and Region, 1 job queue per quota-management service environment, 20 quota shares per
quota-management job queue - none adjustable) and its "Quota shares" page
(https://docs.aws.amazon.com/batch/latest/userguide/quota-shares.html: at most 5 capacity limits per share);
botocore's batch model (share identifiers are letters and digits, QuotaShareCapacityLimit is one unit each);
IAM's name rules (role names at most 64 characters, ARN partition of the Region)."""

from __future__ import annotations

import pytest
from support.batch_limit_cases import CASES, ROLE

from cdk_app.validator.report import check_file


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_attack_case_gives_exactly_its_findings(write_config, text, expected):
    report = check_file(write_config(text))
    assert {(f.code, f.path, f.severity.value) for f in report.findings} == expected, \
        "\n".join(f.render() for f in report.findings)
    assert report.exit_code == (1 if any(s == "error" for _, _, s in expected) else 0)
    for finding in report.findings:
        assert finding.line and finding.hint


def test_limit_findings_name_the_limit_and_the_entry(write_config):
    by_id = {c[0]: c[1] for c in CASES}
    shown = {code: f"{f.message} {f.hint}" for cid in ("c23-21-quota-shares", "c24-6-capacity-limits",
                                                       "c36-51-queues-and-environments",
                                                       "c35-two-quota-queues-one-environment")
             for f in check_file(write_config(by_id[cid])).findings for code in [f"{cid}:{f.path}"]}
    assert "team 'T20'" in shown["c23-21-quota-shares:batch.teams[20].queues[0]"]
    assert "at most 20 quota shares" in shown["c23-21-quota-shares:batch.teams[20].queues[0]"]
    assert "at most 5 capacity limits" in shown["c24-6-capacity-limits:batch.teams[0].quota[5]"]
    assert "limit of 50 job queues" in shown["c36-51-queues-and-environments:batch.queues[50]"]
    assert "limit of 50 service environments" in shown["c36-51-queues-and-environments:batch.service_environments[50]"]
    assert "at most 1 job queue" in shown["c35-two-quota-queues-one-environment:batch.queues[1].service_environment"]


@pytest.mark.synth
@pytest.mark.parametrize("make", ["environment", "queue", "quota_share", "policy", "share", "role"])
def test_constructs_refuse_a_trailing_newline(make):
    """The constructs check names themselves (they can be used without the validator); their regexes end in `$`,
    which Python also matches before a final newline, so they must be used with fullmatch."""
    from aws_cdk import App, Environment, Stack

    from hyperpod_constructs.batch_job_queue import BatchJobQueue, BatchJobQueueProps
    from hyperpod_constructs.batch_quota_share import BatchQuotaShare, BatchQuotaShareProps
    from hyperpod_constructs.batch_scheduling_policy import BatchSchedulingPolicy, BatchSchedulingPolicyProps
    from hyperpod_constructs.batch_service_environment import BatchServiceEnvironment, BatchServiceEnvironmentProps
    from hyperpod_constructs.batch_team_access import BatchTeamAccess, BatchTeamAccessProps

    stack = Stack(App(), "T", env=Environment(account="111122223333", region="us-east-1"))
    build = {
        "environment": lambda: BatchServiceEnvironment(stack, "E", props=BatchServiceEnvironmentProps(
            name="e\n", capacity_limits=(("NUM_INSTANCES", 1),))),
        "queue": lambda: BatchJobQueue(stack, "Q", props=BatchJobQueueProps(name="q\n", service_environment="arn")),
        "quota_share": lambda: BatchQuotaShare(stack, "S", props=BatchQuotaShareProps(
            name="s\n", job_queue="q", capacity_limits=(("ml.p4d.24xlarge", 1),))),
        "policy": lambda: BatchSchedulingPolicy(stack, "P", props=BatchSchedulingPolicyProps(name="p\n", kind="fair_share")),
        "share": lambda: BatchSchedulingPolicy(stack, "P", props=BatchSchedulingPolicyProps(
            name="p", kind="fair_share", shares=(("AAA\n", None),))),
        "role": lambda: BatchTeamAccess(stack, "R", props=BatchTeamAccessProps(
            team="a", principals=(f"{ROLE}A",), execution_role_arn=f"{ROLE}ATrain\n", fifo_queues=("arn",))),
    }
    with pytest.raises(ValueError):
        build[make]()


@pytest.mark.synth
def test_every_code_of_the_attack_fixes_has_a_case():
    from cdk_app.findings import CODES

    new = {c for c in CODES if "HPK721" <= c <= "HPK739"}
    # HPK728 (IAM sizes) is tested on synthesized templates in test_batch_iam_size.py.
    assert new - {"HPK728"} <= {code for _, _, expected in CASES for code, _, _ in expected}
