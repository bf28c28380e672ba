"""Stack HyperPod-<env>-batch: AWS Batch for SageMaker Training jobs from the config's `batch:` section -
a service environment per capacity pool, a job queue on each (FIFO, fair share or quota share), a
scheduling policy per non-FIFO queue, a quota share per team on a quota-share queue and a role per team
with principals. It shares nothing with the HyperPod stacks, so it deploys and changes on its own."""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Stack
from constructs import Construct

from cdk_app.batch_shares import quota_share_request, teams_on
from cdk_app.config.model import KitConfig
from hyperpod_constructs.batch_job_queue import BatchJobQueue, BatchJobQueueProps
from hyperpod_constructs.batch_quota_share import BatchQuotaShare, BatchQuotaShareProps
from hyperpod_constructs.batch_scheduling_policy import BatchSchedulingPolicy, BatchSchedulingPolicyProps
from cdk_app.config.names import output_id
from hyperpod_constructs.batch_service_environment import BatchServiceEnvironment, BatchServiceEnvironmentProps
from hyperpod_constructs.batch_team_access import BatchTeamAccess, BatchTeamAccessProps


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
            CfnOutput(self, output_id("Queue", queue.name), value=created.name,
                      description=f"{queue.scheduling} job queue on service environment {queue.service_environment}")

        for team in spec.teams:
            quota_shares: list[tuple[str, str]] = []
            for name in team.queues:
                scheduling, queue = queues[name]
                if scheduling != "quota_share":
                    continue
                request: dict[str, Any] = quota_share_request(team, queue.arn)
                sharing = request["resourceSharingConfiguration"]
                share = BatchQuotaShare(self, f"QuotaShare-{team.name}", props=BatchQuotaShareProps(
                    name=request["quotaShareName"], job_queue=request["jobQueue"],
                    capacity_limits=tuple((c["capacityUnit"], c["maxCapacity"]) for c in request["capacityLimits"]),
                    strategy=sharing["strategy"], borrow_limit=sharing.get("borrowLimit"),
                    in_share_preemption=request["preemptionConfiguration"]["inSharePreemption"],
                    enabled=request["state"] == "ENABLED"))
                quota_shares.append((queue.arn, share.arn))
            if not team.principals or team.execution_role_arn is None:
                continue
            access = BatchTeamAccess(self, f"Team-{team.name}", props=BatchTeamAccessProps(
                team=team.name, principals=team.principals, execution_role_arn=team.execution_role_arn,
                fair_share_queues=tuple(queues[n][1].arn for n in team.queues if queues[n][0] == "fair_share"),
                share_identifier=team.share_identifier, quota_shares=tuple(quota_shares),
                fifo_queues=tuple(queues[n][1].arn for n in team.queues if queues[n][0] == "fifo"),
                max_priority=team.max_priority))
            CfnOutput(self, output_id("BatchTeamRole", team.name), value=access.role_arn,
                      description=f"Role team {team.name} assumes to submit SageMaker Training jobs to AWS Batch")
