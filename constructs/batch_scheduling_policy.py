"""An AWS Batch scheduling policy: fair share (share identifiers with weight factors) or quota share.

Batch cannot turn a policy of one kind into the other, so the kind is part of the policy's name and
construct id: changing it creates a new policy instead of an update Batch would refuse."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from aws_cdk import aws_batch as batch
from constructs import Construct

from hyperpod_constructs.private.limits import SHARE_IDENTIFIER as SHARE_IDENTIFIER_PATTERN
from hyperpod_constructs.private.limits import anchored

# A policy name is the queue's name plus a suffix, so the queue name keeps room for it.
POLICY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,115}$")
SHARE_IDENTIFIER = re.compile(anchored(SHARE_IDENTIFIER_PATTERN))
SUFFIX = {"fair_share": "fair-share", "quota_share": "quota-share"}


@dataclass(frozen=True)
class BatchSchedulingPolicyProps:
    """Props of BatchSchedulingPolicy.

    name: base name, usually the queue's; the policy is named <name>-fair-share or <name>-quota-share - required.
    kind: fair_share or quota_share - required.
    shares: fair_share: (share identifier, weight factor or None for Batch's 1.0). Default none.
    share_decay_seconds: fair_share: 0-604800. Default Batch's (0 = 600 s window).
    compute_reservation: fair_share: 0-99 percent. Default Batch's (0).
    """

    name: str
    kind: Literal["fair_share", "quota_share"]
    shares: tuple[tuple[str, float | None], ...] = ()
    share_decay_seconds: int | None = None
    compute_reservation: int | None = None


class BatchSchedulingPolicy(Construct):
    """AWS::Batch::SchedulingPolicy with a FairsharePolicy or a QuotaSharePolicy (idle capacity by FIFO)."""

    def __init__(self, scope: Construct, construct_id: str, *, props: BatchSchedulingPolicyProps) -> None:
        super().__init__(scope, construct_id)
        if props.kind not in SUFFIX:
            raise ValueError(f"kind must be fair_share or quota_share, got {props.kind!r}")
        if not POLICY_NAME.fullmatch(props.name):
            raise ValueError(f"policy base name must be 1-116 letters, digits, - or _, got {props.name!r}")
        if props.kind == "quota_share" and (props.shares or props.share_decay_seconds is not None
                                            or props.compute_reservation is not None):
            raise ValueError("shares, share_decay_seconds and compute_reservation apply to fair_share policies only")
        for identifier, weight in props.shares:
            if not SHARE_IDENTIFIER.fullmatch(identifier):
                raise ValueError(f"share identifier must be 1-255 letters and digits, got {identifier!r}")
            if weight is not None and not 0.0001 <= weight <= 999.9999:
                raise ValueError(f"weight factor of {identifier} must be 0.0001-999.9999, got {weight}")
        if props.share_decay_seconds is not None and not 0 <= props.share_decay_seconds <= 604800:
            raise ValueError(f"share_decay_seconds must be 0-604800, got {props.share_decay_seconds}")
        if props.compute_reservation is not None and not 0 <= props.compute_reservation <= 99:
            raise ValueError(f"compute_reservation must be 0-99, got {props.compute_reservation}")
        self.name = f"{props.name}-{SUFFIX[props.kind]}"
        fair = quota = None
        if props.kind == "fair_share":
            fair = batch.CfnSchedulingPolicy.FairsharePolicyProperty(
                share_decay_seconds=props.share_decay_seconds, compute_reservation=props.compute_reservation,
                share_distribution=[batch.CfnSchedulingPolicy.ShareAttributesProperty(
                    share_identifier=identifier, weight_factor=weight) for identifier, weight in props.shares])
        else:
            quota = batch.CfnSchedulingPolicy.QuotaSharePolicyProperty(idle_resource_assignment_strategy="FIFO")
        resource_id = "FairShare" if props.kind == "fair_share" else "QuotaShare"
        self.resource = batch.CfnSchedulingPolicy(self, resource_id, name=self.name, fairshare_policy=fair,
                                                  quota_share_policy=quota)
        self.arn = self.resource.attr_arn
