"""An AWS Batch job queue for SageMaker Training jobs on one service environment.

Without a scheduling policy the queue is FIFO, and Batch never adds one later; with one, Batch can swap
it but never remove it. The validator's live check (HPK716) catches a config that asks for either."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import aws_batch as batch
from constructs import Construct

from hyperpod_constructs.batch_service_environment import BATCH_NAME, SAGEMAKER_TRAINING


@dataclass(frozen=True)
class BatchJobQueueProps:
    """Props of BatchJobQueue.

    name: queue name, the one jobs are submitted to; fixed, so CloudFormation refuses a silent replacement - required.
    service_environment: ARN or name of the queue's service environment - required.
    priority: 0-1000; higher-priority queues on the same environment go first. Default 1.
    scheduling_policy_arn: fair-share or quota-share policy. Default None: FIFO.
    enabled: DISABLED accepts no new jobs, queued ones finish. Default True.
    runnable_timeout_seconds: terminate a job RUNNABLE at the head of the queue this long, 600-86400. Default None: wait.
    """

    name: str
    service_environment: str
    priority: int = 1
    scheduling_policy_arn: str | None = None
    enabled: bool = True
    runnable_timeout_seconds: int | None = None


class BatchJobQueue(Construct):
    """AWS::Batch::JobQueue of type SAGEMAKER_TRAINING."""

    def __init__(self, scope: Construct, construct_id: str, *, props: BatchJobQueueProps) -> None:
        super().__init__(scope, construct_id)
        if not BATCH_NAME.fullmatch(props.name):
            raise ValueError(f"job queue name must be 1-128 letters, digits, - or _, got {props.name!r}")
        if not 0 <= props.priority <= 1000:
            raise ValueError(f"job queue priority must be 0-1000, got {props.priority}")
        timeout = props.runnable_timeout_seconds
        if timeout is not None and not 600 <= timeout <= 86400:
            raise ValueError(f"runnable_timeout_seconds must be 600-86400, got {timeout}")
        # SageMaker Training queues support TERMINATE only (botocore batch JobStateTimeLimitAction).
        actions = None if timeout is None else [batch.CfnJobQueue.JobStateTimeLimitActionProperty(
            action="TERMINATE", max_time_seconds=timeout, state="RUNNABLE",
            reason=f"RUNNABLE at the head of {props.name} for over {timeout} s")]
        self.resource = batch.CfnJobQueue(
            self, "Resource", job_queue_name=props.name, job_queue_type=SAGEMAKER_TRAINING, priority=props.priority,
            service_environment_order=[batch.CfnJobQueue.ServiceEnvironmentOrderProperty(
                order=1, service_environment=props.service_environment)],
            scheduling_policy_arn=props.scheduling_policy_arn, state="ENABLED" if props.enabled else "DISABLED",
            job_state_time_limit_actions=actions)
        self.name = props.name
        self.arn = self.resource.attr_job_queue_arn
