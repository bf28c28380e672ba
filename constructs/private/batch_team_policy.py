"""The two IAM documents of a Batch team's role - its trust policy and its inline policy - as plain JSON, built
in one place for BatchTeamAccess (which writes them, with CloudFormation tokens for ARNs) and for the validator
(which measures them with the ARNs resolved, HPK728). Imports no aws_cdk, so `validate` stays fast.

IAM for batch:SubmitServiceJob (Service Authorization Reference, AWS Batch,
https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsbatch.html): resource types job-queue
(required), quota-share and service-job (required); condition keys aws:RequestTag, aws:ResourceTag, aws:TagKeys
and batch:SchedulingPriority, plus batch:ShareIdentifier on the service job; dependent action iam:PassRole with
iam:PassedToService sagemaker.amazonaws.com. There is no condition key for the quota share's name: the
quota-share ARN in the Resource element confines it instead. ARN formats are that page's resource-type table.
"""

from __future__ import annotations

from typing import Any

SUBMIT = "batch:SubmitServiceJob"
READ_ACTIONS = ("batch:DescribeServiceJob", "batch:ListServiceJobs")
# IAM's quota on all inline policies of a role together (reference_iam-quotas, as role_trust.py's): 10,240
# non-whitespace characters. The trust policy, its limit and the measure are role_trust.py's.
INLINE_POLICY_LIMIT = 10240


def batch_arn(partition: str, region: str, account: str, resource: str) -> str:
    return f"arn:{partition}:batch:{region}:{account}:{resource}"


def job_queue_arn(partition: str, region: str, account: str, queue: str) -> str:
    return batch_arn(partition, region, account, f"job-queue/{queue}")


def quota_share_arn(partition: str, region: str, account: str, queue: str, share: str) -> str:
    return batch_arn(partition, region, account, f"job-queue/{queue}/quota-share/{share}")


def _statement(sid: str, actions: list[str], resources: list[Any], conditions: dict[str, Any] | None = None
               ) -> dict[str, Any]:
    statement: dict[str, Any] = {"Action": actions[0] if len(actions) == 1 else actions, "Effect": "Allow",
                                 "Resource": resources[0] if len(resources) == 1 else resources, "Sid": sid}
    if conditions:
        statement["Condition"] = conditions
    return statement


def team_policy(*, execution_role_arn: str, service_jobs: str, fair_share_queues: tuple[Any, ...] = (),
                share_identifier: str | None = None, quota_shares: tuple[tuple[Any, Any], ...] = (),
                fifo_queues: tuple[Any, ...] = (), max_priority: int | None = None) -> dict[str, Any]:
    """The team's inline policy: submit to its own queues (with its share identifier on fair-share queues, its
    quota share on a quota-share queue, at most max_priority), pass only its execution role to SageMaker, read
    its queues' snapshots and service jobs. ARNs may be strings or tokens."""
    # IfExists: a job that gives no priority (Batch then uses its default) is not refused for lacking the key.
    priority = ({"NumericLessThanEqualsIfExists": {"batch:SchedulingPriority": max_priority}}
                if max_priority is not None else {})
    statements = []
    if fair_share_queues:
        statements.append(_statement("SubmitWithOwnShareIdentifier", [SUBMIT], [*fair_share_queues, service_jobs],
                                     {"StringEquals": {"batch:ShareIdentifier": share_identifier}, **priority}))
    if quota_shares:
        statements.append(_statement("SubmitToOwnQuotaShare", [SUBMIT],
                                     [arn for pair in quota_shares for arn in pair] + [service_jobs], priority))
    if fifo_queues:
        statements.append(_statement("SubmitToFifoQueues", [SUBMIT], [*fifo_queues, service_jobs], priority))
    queues = [*fair_share_queues, *(queue for queue, _ in quota_shares), *fifo_queues]
    statements += [
        _statement("PassOwnTrainingRole", ["iam:PassRole"], [execution_role_arn],
                   {"StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}}),
        _statement("SeeOwnQueues", ["batch:GetJobQueueSnapshot"], queues),
        # DescribeServiceJob and ListServiceJobs have no resource-level permissions (README: what a team can read).
        _statement("SeeServiceJobs", list(READ_ACTIONS), ["*"]),
    ]
    return {"Statement": statements, "Version": "2012-10-17"}


