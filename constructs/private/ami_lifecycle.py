"""Props of an instance group's AMI lifecycle (AWS::SageMaker::Cluster's ImageId, ImageReleaseVersion,
ScheduledUpdateConfig, AutoPatchConfig) and their checks against the limits the config model shares. Pure
Python: hyperpod_cluster.py turns them into the CloudFormation properties."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hyperpod_constructs.private.limits import (
    ALARM_NAME,
    BATCH_SIZE_TYPES,
    IMAGE_ID,
    IMAGE_RELEASE_VERSION,
    MAX_ALARM_NAME_LENGTH,
    MAX_IMAGE_RELEASE_VERSION_LENGTH,
    MAX_INSTANCE_COUNT,
    MAX_ROLLBACK_ALARMS,
    MAX_SCHEDULE_EXPRESSION_LENGTH,
    MAX_WAIT_INTERVAL_SECONDS,
    PATCHING_STRATEGIES,
    SCHEDULE_EXPRESSION,
)


@dataclass(frozen=True)
class BatchSizeSpec:
    """How many instances a rolling step takes: type INSTANCE_COUNT or CAPACITY_PERCENTAGE - required;
    value at least 1 (a percent 1-100) - required."""

    type: str
    value: int


@dataclass(frozen=True)
class DeploymentSpec:
    """A rolling deployment (DeploymentConfig).

    maximum_batch_size: instances updated at a time. Default: one instance (without it SageMaker updates the
        whole group at once).
    rollback_maximum_batch_size: instances rolled back at a time. Default: none (SageMaker's).
    wait_interval_seconds: wait between batches, 0-3600. Default: none (SageMaker's).
    rollback_alarms: CloudWatch alarm names (1-10) that roll the update back. Default: none.
    """

    maximum_batch_size: BatchSizeSpec = BatchSizeSpec("INSTANCE_COUNT", 1)
    rollback_maximum_batch_size: BatchSizeSpec | None = None
    wait_interval_seconds: int | None = None
    rollback_alarms: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScheduledUpdateSpec:
    """schedule_expression: cron(...) as AWS::SageMaker::Cluster takes it - required.
    deployment: the rolling deployment. Default: DeploymentSpec() (one instance at a time)."""

    schedule_expression: str
    deployment: DeploymentSpec = DeploymentSpec()


@dataclass(frozen=True)
class AutoPatchSpec:
    """patching_strategy: WhenIdle or WhenAllIdle - required. deployment: the rolling deployment. Default: none."""

    patching_strategy: str
    deployment: DeploymentSpec | None = None


def _check_batch(where: str, size: BatchSizeSpec) -> None:
    if size.type not in BATCH_SIZE_TYPES:
        raise ValueError(f"{where}: batch type must be one of {list(BATCH_SIZE_TYPES)}, got {size.type!r}")
    top = 100 if size.type == "CAPACITY_PERCENTAGE" else MAX_INSTANCE_COUNT
    if isinstance(size.value, bool) or not isinstance(size.value, int) or not 1 <= size.value <= top:
        raise ValueError(f"{where}: batch value must be a whole number of at least 1 and at most "
                         f"{'100 (percent)' if top == 100 else f'{top} (instances)'}, got {size.value!r}")


def _check_deployment(where: str, deployment: DeploymentSpec) -> None:
    _check_batch(f"{where} maximum_batch_size", deployment.maximum_batch_size)
    if deployment.rollback_maximum_batch_size is not None:
        _check_batch(f"{where} rollback_maximum_batch_size", deployment.rollback_maximum_batch_size)
    wait = deployment.wait_interval_seconds
    if wait is not None and not 0 <= wait <= MAX_WAIT_INTERVAL_SECONDS:
        raise ValueError(f"{where}: wait_interval_seconds must be 0-{MAX_WAIT_INTERVAL_SECONDS}, got {wait}")
    if len(deployment.rollback_alarms) > MAX_ROLLBACK_ALARMS:
        raise ValueError(f"{where}: at most {MAX_ROLLBACK_ALARMS} rollback alarms, got {len(deployment.rollback_alarms)}")
    for alarm in deployment.rollback_alarms:
        if not (1 <= len(alarm) <= MAX_ALARM_NAME_LENGTH and re.fullmatch(ALARM_NAME, alarm)):
            raise ValueError(f"{where}: rollback alarm {alarm[:80]!r} must be 1-{MAX_ALARM_NAME_LENGTH} characters "
                             "on one line, not only white space")


def check_ami_lifecycle(where: str, image_id: str | None, image_release_version: str | None,
                        scheduled_update: ScheduledUpdateSpec | None, auto_patch: AutoPatchSpec | None) -> None:
    """Refuse what AWS::SageMaker::Cluster would: `where` names the instance group in the message."""
    if image_id is not None and not re.fullmatch(IMAGE_ID, image_id):
        raise ValueError(f"{where}: image_id must be ami-<8 to 17 hex digits> or default, got {image_id!r}")
    if image_release_version is not None and not (len(image_release_version) <= MAX_IMAGE_RELEASE_VERSION_LENGTH
                                                  and re.fullmatch(IMAGE_RELEASE_VERSION, image_release_version)):
        raise ValueError(f"{where}: image_release_version must be MAJOR.MINOR.PATCH, got {image_release_version!r}")
    if scheduled_update is not None:
        expression = scheduled_update.schedule_expression
        if len(expression) > MAX_SCHEDULE_EXPRESSION_LENGTH or not re.fullmatch(SCHEDULE_EXPRESSION, expression):
            raise ValueError(f"{where}: schedule_expression must be cron(Minutes Hours Day-of-month Month "
                             f"Day-of-week Year), e.g. cron(0 4 ? * SUN *), got {expression[:80]!r}")
        _check_deployment(f"{where} scheduled_update", scheduled_update.deployment)
    if auto_patch is not None:
        if auto_patch.patching_strategy not in PATCHING_STRATEGIES:
            raise ValueError(f"{where}: patching_strategy must be one of {list(PATCHING_STRATEGIES)}, "
                             f"got {auto_patch.patching_strategy!r}")
        if auto_patch.deployment is not None:
            _check_deployment(f"{where} auto_patch", auto_patch.deployment)
