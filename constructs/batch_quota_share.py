"""An AWS Batch quota share: a team's capacity on a quota-share queue, whether it lends, borrows or keeps
it, and whether its own higher-priority jobs preempt its lower-priority ones once it is full."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from aws_cdk import aws_batch as batch
from constructs import Construct

from hyperpod_constructs.batch_service_environment import BATCH_NAME


@dataclass(frozen=True)
class BatchQuotaShareProps:
    """Props of BatchQuotaShare.

    name: quota share name (jobs name it as quotaShareName) - required.
    job_queue: ARN or name of its quota-share queue - required.
    capacity_limits: (instance type, instances) pairs, each at least 1 - required, at least one.
    strategy: RESERVE, LEND or LEND_AND_BORROW. Default LEND_AND_BORROW.
    borrow_limit: LEND_AND_BORROW only: percent of the capacity it may borrow, -1 unlimited. Default Batch's (-1).
    in_share_preemption: ENABLED or DISABLED. Default ENABLED.
    enabled: DISABLED accepts no new jobs. Default True.
    """

    name: str
    job_queue: str
    capacity_limits: tuple[tuple[str, int], ...]
    strategy: Literal["RESERVE", "LEND", "LEND_AND_BORROW"] = "LEND_AND_BORROW"
    borrow_limit: int | None = None
    in_share_preemption: Literal["ENABLED", "DISABLED"] = "ENABLED"
    enabled: bool = True


class BatchQuotaShare(Construct):
    """AWS::Batch::QuotaShare; its name and queue are create-only, so changing either replaces it."""

    def __init__(self, scope: Construct, construct_id: str, *, props: BatchQuotaShareProps) -> None:
        super().__init__(scope, construct_id)
        if not BATCH_NAME.fullmatch(props.name):
            raise ValueError(f"quota share name must be 1-128 letters, digits, - or _, got {props.name!r}")
        if not props.capacity_limits or any(count < 1 for _, count in props.capacity_limits):
            raise ValueError(f"quota share {props.name!r} needs capacity limits of at least 1 instance")
        if props.strategy not in ("RESERVE", "LEND", "LEND_AND_BORROW"):
            raise ValueError(f"strategy must be RESERVE, LEND or LEND_AND_BORROW, got {props.strategy!r}")
        if props.borrow_limit is not None and (props.strategy != "LEND_AND_BORROW" or props.borrow_limit < -1):
            raise ValueError("borrow_limit applies to LEND_AND_BORROW only and is -1 (unlimited) or a percent")
        if props.in_share_preemption not in ("ENABLED", "DISABLED"):
            raise ValueError(f"in_share_preemption must be ENABLED or DISABLED, got {props.in_share_preemption!r}")
        self.resource = batch.CfnQuotaShare(
            self, "Resource", quota_share_name=props.name, job_queue=props.job_queue,
            capacity_limits=[batch.CfnQuotaShare.QuotaShareCapacityLimitProperty(capacity_unit=unit, max_capacity=count)
                             for unit, count in props.capacity_limits],
            resource_sharing_configuration=batch.CfnQuotaShare.QuotaShareResourceSharingConfigurationProperty(
                strategy=props.strategy, borrow_limit=props.borrow_limit),
            preemption_configuration=batch.CfnQuotaShare.QuotaSharePreemptionConfigurationProperty(
                in_share_preemption=props.in_share_preemption),
            state="ENABLED" if props.enabled else "DISABLED")
        self.name = props.name
        self.arn = self.resource.attr_quota_share_arn
