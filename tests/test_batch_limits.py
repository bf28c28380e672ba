"""The attack of 2026-11-22 on the `batch:` section (attack-reports/batch2.md), adapted: each hostile config gives
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

from cdk_app.validator.report import check_file

HEAD = 'environment: atk\naccount: "111122223333"\nregion: us-east-1\nbatch:\n'
P4D = "    - {name: p4d, capacity_limits: [{unit: ml.p4d.24xlarge, max_capacity: 100}]}\n"
G6 = "    - {name: g6, capacity_limits: [{unit: NUM_INSTANCES, max_capacity: 8}]}\n"
ROLE = "arn:aws:iam::111122223333:role/"


def config(environments: str, queues: str, teams: str = "") -> str:
    return (HEAD + "  service_environments:\n" + environments + "  queues:\n" + queues
            + ("  teams:\n" + teams if teams else ""))


def quota_team(name: str, queue: str = "q", count: int = 1, types: tuple[str, ...] = ("ml.p4d.24xlarge",)) -> str:
    quota = ", ".join(f"{{instance_type: {t}, count: {count}}}" for t in types)
    return f"    - {{name: {name}, queues: [{queue}], quota: [{quota}]}}\n"


QUOTA_QUEUE = "    - {name: q, service_environment: p4d, scheduling: quota_share}\n"

CASES: list[tuple[str, str, set[tuple[str, str, str]]]] = [
    # H1 (c35, c26): one queue per quota-management service environment - an error, not HPK703's advice.
    ("c35-two-quota-queues-one-environment",
     config(P4D, "    - {name: q1, service_environment: p4d, scheduling: quota_share}\n"
                 "    - {name: q2, service_environment: p4d, scheduling: quota_share}\n",
            quota_team("A", "q1", 50) + quota_team("B", "q2", 50)),
     {("HPK721", "batch.queues[1].service_environment", "error")}),
    ("c26-quota-queue-and-fifo-queue-one-environment",
     config(P4D, QUOTA_QUEUE + "    - {name: f, service_environment: p4d}\n", quota_team("A")),
     {("HPK721", "batch.queues[1].service_environment", "error")}),
    ("num-instances-environment-keeps-the-warning",
     config(G6, "    - {name: f1, service_environment: g6}\n    - {name: f2, service_environment: g6}\n"),
     {("HPK703", "batch.queues[1].service_environment", "warning")}),
    # H2 (c23, c24): 20 quota shares per queue, 5 capacity limits per share; exactly at the limit is fine.
    ("c23-21-quota-shares", config(P4D, QUOTA_QUEUE, "".join(quota_team(f"T{i:02}") for i in range(21))),
     {("HPK722", "batch.teams[20].queues[0]", "error")}),
    ("20-quota-shares-are-fine", config(P4D, QUOTA_QUEUE, "".join(quota_team(f"T{i:02}") for i in range(20))), set()),
    ("c24-6-capacity-limits",
     config("    - name: p\n      capacity_limits:\n" + "".join(
         f"        - {{unit: {t}, max_capacity: 10}}\n" for t in ("ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.g5.xlarge",
                                                                  "ml.g5.2xlarge", "ml.g5.4xlarge", "ml.g5.8xlarge")),
            "    - {name: q, service_environment: p, scheduling: quota_share}\n",
            quota_team("A", types=("ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.g5.xlarge", "ml.g5.2xlarge",
                                   "ml.g5.4xlarge", "ml.g5.8xlarge"))),
     {("HPK722", "batch.teams[0].quota[5]", "error")}),
    # M1 (c36): 50 queues and 50 service environments per account and Region.
    ("c36-51-queues-and-environments",
     config("".join(f"    - {{name: e{i:02}, capacity_limits: [{{unit: NUM_INSTANCES, max_capacity: 1}}]}}\n"
                    for i in range(51)),
            "".join(f"    - {{name: q{i:02}, service_environment: e{i:02}}}\n" for i in range(51))),
     {("HPK723", "batch.queues[50]", "error"), ("HPK723", "batch.service_environments[50]", "error")}),
    ("50-queues-and-environments-are-fine",
     config("".join(f"    - {{name: e{i:02}, capacity_limits: [{{unit: NUM_INSTANCES, max_capacity: 1}}]}}\n"
                    for i in range(50)),
            "".join(f"    - {{name: q{i:02}, service_environment: e{i:02}}}\n" for i in range(50))), set()),
    # M4 (c01): a Python `$` accepts a trailing newline; Batch's share identifiers are letters and digits only.
    ("c01-share-identifier-trailing-newline",
     config(G6, "    - {name: fs, service_environment: g6, scheduling: fair_share}\n",
            '    - {name: A, queues: [fs], share_identifier: "AAA\\n"}\n'),
     {("HPK707", "batch.teams[0].share_identifier", "error")}),
    ("c20-team-name-trailing-newline",
     config(G6, "    - {name: f, service_environment: g6}\n", '    - {name: "A\\n", queues: [f]}\n'),
     {("HPK015", "batch.teams[0].name", "error")}),
    ("queue-name-trailing-newline",
     config(G6, '    - {name: "f\\n", service_environment: g6}\n'), {("HPK015", "batch.queues[0].name", "error")}),
    ("execution-role-trailing-newline",
     config(G6, "    - {name: f, service_environment: g6}\n",
            f'    - {{name: A, queues: [f], principals: ["{ROLE}A"], execution_role_arn: "{ROLE}ATrain\\n"}}\n'),
     {("HPK015", "batch.teams[0].execution_role_arn", "error")}),
    # A broken key is reported once: no finding of a rule that reads it (its sibling looks absent otherwise).
    ("misspelt-sharing-strategy-alone",
     config(P4D, QUOTA_QUEUE, "    - {name: A, queues: [q], sharing_strategy: LendAndBorow, borrow_limit: 5, "
                              "quota: [{instance_type: ml.p4d.24xlarge, count: 1}]}\n"),
     {("HPK014", "batch.teams[0].sharing_strategy", "error")}),
    # M5 (c02): one instance type twice in a team's quota.
    ("c02-same-instance-type-twice",
     config(P4D, QUOTA_QUEUE, "    - name: A\n      queues: [q]\n      quota:\n"
                              "        - {instance_type: ml.p4d.24xlarge, count: 10}\n"
                              "        - {instance_type: ml.p4d.24xlarge, count: 20}\n"),
     {("HPK724", "batch.teams[0].quota[1].instance_type", "error")}),
    # M6 (c03, c05, c04): the execution role gets the principal rule (HPK111's implementation), and sharing warns.
    ("c03-execution-role-other-partition-and-account",
     config(G6, "    - {name: f, service_environment: g6}\n",
            f"    - {{name: A, queues: [f], principals: [{ROLE}A], "
            "execution_role_arn: 'arn:aws-cn:iam::999999999999:role/SomeoneElsesTraining'}\n"),
     {("HPK725", "batch.teams[0].execution_role_arn", "error")}),
    ("execution-role-other-account",
     config(G6, "    - {name: f, service_environment: g6}\n",
            f"    - {{name: A, queues: [f], principals: [{ROLE}A], "
            "execution_role_arn: 'arn:aws:iam::999999999999:role/Training'}\n"),
     {("HPK725", "batch.teams[0].execution_role_arn", "error")}),
    ("c05-execution-role-name-65-characters",
     config(G6, "    - {name: f, service_environment: g6}\n",
            f"    - {{name: A, queues: [f], principals: [{ROLE}A], execution_role_arn: '{ROLE}path/{'x' * 65}'}}\n"),
     {("HPK725", "batch.teams[0].execution_role_arn", "error")}),
    ("execution-role-name-64-characters-with-a-path-is-fine",
     config(G6, "    - {name: f, service_environment: g6}\n",
            f"    - {{name: A, queues: [f], principals: [{ROLE}A], execution_role_arn: '{ROLE}path/{'x' * 64}'}}\n"),
     set()),
    ("c04-execution-role-shared",
     config(G6, "    - {name: f, service_environment: g6}\n",
            f"    - {{name: A, queues: [f], principals: [{ROLE}A], execution_role_arn: {ROLE}Shared}}\n"
            f"    - {{name: B, queues: [f], principals: [{ROLE}B], execution_role_arn: {ROLE}Shared}}\n"),
     {("HPK726", "batch.teams[1].execution_role_arn", "warning")}),
    # M8 (c45): enabled: false cannot stop a team on a FIFO or fair-share queue, so it is refused there.
    ("c45-disabled-team-on-fair-share-and-fifo",
     config(G6 + "    - {name: cpu, capacity_limits: [{unit: NUM_INSTANCES, max_capacity: 8}]}\n",
            "    - {name: fs, service_environment: g6, scheduling: fair_share}\n"
            "    - {name: ff, service_environment: cpu}\n",
            f"    - {{name: A, queues: [fs, ff], share_identifier: A1, enabled: false, "
            f"principals: [{ROLE}A], execution_role_arn: {ROLE}ATrain}}\n"),
     {("HPK727", "batch.teams[0].enabled", "error")}),
    ("disabled-team-on-fifo-only",
     config(G6, "    - {name: ff, service_environment: g6}\n", "    - {name: A, queues: [ff], enabled: false}\n"),
     {("HPK727", "batch.teams[0].enabled", "error")}),
    ("disabled-team-on-quota-share-queue-is-fine",
     config(P4D, QUOTA_QUEUE, "    - {name: A, queues: [q], enabled: false, "
                              "quota: [{instance_type: ml.p4d.24xlarge, count: 1}]}\n"), set()),
]


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


def test_every_code_of_the_attack_fixes_has_a_case():
    from cdk_app.findings import CODES

    new = {c for c in CODES if "HPK721" <= c <= "HPK739"}
    # HPK728 (IAM sizes) is tested on synthesized templates in test_batch_iam_size.py.
    assert new - {"HPK728"} <= {code for _, _, expected in CASES for code, _, _ in expected}
