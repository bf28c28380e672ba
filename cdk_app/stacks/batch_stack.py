"""Stack HyperPod-<env>-batch: AWS Batch for SageMaker Training jobs from the config's `batch:` section -
a service environment per capacity pool, a job queue on each (FIFO, fair share or quota share), a
scheduling policy per non-FIFO queue, a quota share per team on a quota-share queue and a role per team
with principals. It shares nothing with the HyperPod stacks, so it deploys and changes on its own."""

from __future__ import annotations

from typing import Any

from aws_cdk import Stack
from constructs import Construct

from cdk_app.config.model import KitConfig
from cdk_app.domain.batch_shares import quota_share_request, quota_share_teams, roles_of, team_queues, teams_on
from cdk_app.stacks.team_stack import role_arns_output
from hyperpod_constructs.batch_job_queue import BatchJobQueue, BatchJobQueueProps
from hyperpod_constructs.batch_quota_share import BatchQuotaShare, BatchQuotaShareProps
from hyperpod_constructs.batch_scheduling_policy import BatchSchedulingPolicy, BatchSchedulingPolicyProps
from hyperpod_constructs.batch_service_environment import BatchServiceEnvironment, BatchServiceEnvironmentProps
from hyperpod_constructs.batch_team_access import BatchTeamAccess, BatchTeamAccessProps

# The stack's one output: a JSON object team -> the role its principals assume (README: Teams on AWS Batch).
ROLE_ARNS_OUTPUT = "BatchTeamRoleArns"


class BatchStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, *, config: KitConfig, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        spec = config.batch
        if spec is None:
            raise ValueError("the config has no batch section")
        environments = {
            env.name: BatchServiceEnvironment(self, f"Environment-{env.name}", props=BatchServiceEnvironmentProps(
                name=env.name, capacity_limits=tuple((c.unit, c.max_capacity) for c in env.capacity_limits),
                enabled=env.enabled))
            for env in spec.service_environments}
        queues: dict[str, tuple[str, BatchJobQueue]] = {}
        for queue in spec.queues:
            policy_arn = None
            if queue.scheduling != "fifo":
                fair = queue.scheduling == "fair_share"
                shares = tuple((t.share_identifier, t.weight_factor) for t in teams_on(spec, queue.name)
                               if t.share_identifier is not None) if fair else ()
                policy = BatchSchedulingPolicy(self, f"Policy-{queue.name}", props=BatchSchedulingPolicyProps(
                    name=queue.name, kind=queue.scheduling, shares=shares,
                    share_decay_seconds=queue.share_decay_seconds if fair else None,
                    compute_reservation=queue.compute_reservation if fair else None))
                policy_arn = policy.arn
            created = BatchJobQueue(self, f"Queue-{queue.name}", props=BatchJobQueueProps(
                name=queue.name, service_environment=environments[queue.service_environment].arn,
                priority=queue.priority, scheduling_policy_arn=policy_arn, enabled=queue.enabled,
                runnable_timeout_seconds=queue.runnable_timeout_seconds))
            queues[queue.name] = (queue.scheduling, created)

        quota_shares: dict[str, tuple[str, str]] = {}  # team -> (queue ARN, quota share ARN)
        for team, name in quota_share_teams(spec):
            queue = queues[name][1]
            request: dict[str, Any] = quota_share_request(team, queue.arn)
            sharing = request["resourceSharingConfiguration"]
            share = BatchQuotaShare(self, f"QuotaShare-{team.name}", props=BatchQuotaShareProps(
                name=request["quotaShareName"], job_queue=request["jobQueue"],
                capacity_limits=tuple((c["capacityUnit"], c["maxCapacity"]) for c in request["capacityLimits"]),
                strategy=sharing["strategy"], borrow_limit=sharing.get("borrowLimit"),
                in_share_preemption=request["preemptionConfiguration"]["inSharePreemption"],
                enabled=request["state"] == "ENABLED"))
            quota_shares[team.name] = (queue.arn, share.arn)
        arns: dict[str, str] = {}
        for team in roles_of(spec):
            assert team.execution_role_arn is not None  # roles_of keeps only teams with one
            kinds = team_queues(spec, team)
            access = BatchTeamAccess(self, f"Team-{team.name}", props=BatchTeamAccessProps(
                team=team.name, principals=team.principals, execution_role_arn=team.execution_role_arn,
                fair_share_queues=tuple(queues[n][1].arn for n in kinds.fair_share),
                share_identifier=team.share_identifier,
                quota_shares=(quota_shares[team.name],) if kinds.quota_share is not None else (),
                fifo_queues=tuple(queues[n][1].arn for n in kinds.fifo), max_priority=team.max_priority))
            arns[team.name] = access.role_arn
        role_arns_output(self, arns, ROLE_ARNS_OUTPUT,
                         "JSON: Batch team name -> the IAM role its principals assume to submit SageMaker Training jobs")
