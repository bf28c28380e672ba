"""An AWS Batch service environment for SageMaker Training jobs: the capacity its queue's jobs may use at once."""

from __future__ import annotations

import re
from dataclasses import dataclass

from aws_cdk import aws_batch as batch
from constructs import Construct

# Batch names: letters, digits, - and _, at most 128 (botocore batch CreateServiceEnvironment).
BATCH_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")
SAGEMAKER_TRAINING = "SAGEMAKER_TRAINING"


@dataclass(frozen=True)
class BatchServiceEnvironmentProps:
    """Props of BatchServiceEnvironment.

    name: service environment name; fixed, so CloudFormation refuses to replace it silently - required.
    capacity_limits: (unit, max instances) pairs; unit NUM_INSTANCES or an instance type - required, at least one.
    enabled: DISABLED keeps the environment but schedules nothing. Default True.
    """

    name: str
    capacity_limits: tuple[tuple[str, int], ...]
    enabled: bool = True


class BatchServiceEnvironment(Construct):
    """AWS::Batch::ServiceEnvironment of type SAGEMAKER_TRAINING."""

    def __init__(self, scope: Construct, construct_id: str, *, props: BatchServiceEnvironmentProps) -> None:
        super().__init__(scope, construct_id)
        if not BATCH_NAME.fullmatch(props.name):
            raise ValueError(f"service environment name must be 1-128 letters, digits, - or _, got {props.name!r}")
        if not props.capacity_limits:
            raise ValueError(f"service environment {props.name!r} needs at least one capacity limit")
        for unit, maximum in props.capacity_limits:
            if maximum < 1:
                raise ValueError(f"capacity of {unit} in {props.name!r} must be at least 1, got {maximum}")
        self.resource = batch.CfnServiceEnvironment(
            self, "Resource", service_environment_name=props.name, service_environment_type=SAGEMAKER_TRAINING,
            capacity_limits=[batch.CfnServiceEnvironment.CapacityLimitProperty(capacity_unit=unit, max_capacity=maximum)
                             for unit, maximum in props.capacity_limits],
            state="ENABLED" if props.enabled else "DISABLED")
        self.name = props.name
        self.arn = self.resource.attr_service_environment_arn
