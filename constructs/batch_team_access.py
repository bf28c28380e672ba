"""What a team may do on AWS Batch: an IAM role its principals assume that may submit SageMaker Training
service jobs to the team's queues only, with the team's own share, and pass only the team's training
execution role to SageMaker. The role's two documents are built by hyperpod_constructs.private.batch_team_policy, the
same functions the validator measures against IAM's size quotas (HPK728).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from constructs import Construct

from hyperpod_constructs.batch_scheduling_policy import SHARE_IDENTIFIER
from hyperpod_constructs.nag_acknowledgements import acknowledge, nag_text, wildcard_resource
from hyperpod_constructs.private.batch_team_policy import batch_arn, team_policy
from hyperpod_constructs.private.role_trust import trust_policy

ROLE_ARN = re.compile(r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]{1,512}$")


@dataclass(frozen=True)
class BatchTeamAccessProps:
    """Props of BatchTeamAccess.

    team: team name, used in the role's description - required.
    principals: IAM ARNs allowed to assume the role, at least one - required.
    execution_role_arn: the SageMaker training execution role the team's jobs run as; the only role it may pass - required.
    fair_share_queues: ARNs of fair-share queues; jobs there must carry share_identifier. Default none.
    share_identifier: the team's share identifier, required with fair_share_queues. Default None.
    quota_shares: (queue ARN, quota share ARN) pairs; jobs there must name that quota share. Default none.
    fifo_queues: ARNs of FIFO queues. Default none.
    max_priority: highest schedulingPriority the role may submit with. Default None: any.
    """

    team: str
    principals: tuple[str, ...]
    execution_role_arn: str
    fair_share_queues: tuple[str, ...] = ()
    share_identifier: str | None = None
    quota_shares: tuple[tuple[str, str], ...] = ()
    fifo_queues: tuple[str, ...] = ()
    max_priority: int | None = None


class BatchTeamAccess(Construct):
    """The team's Batch role."""

    def __init__(self, scope: Construct, construct_id: str, *, props: BatchTeamAccessProps) -> None:
        super().__init__(scope, construct_id)
        if not props.principals:
            raise ValueError(f"team {props.team!r} needs at least one principal to assume its role")
        if not ROLE_ARN.fullmatch(props.execution_role_arn):
            raise ValueError(f"execution_role_arn must be an IAM role ARN, got {props.execution_role_arn!r}")
        if props.fair_share_queues and (props.share_identifier is None
                                        or not SHARE_IDENTIFIER.fullmatch(props.share_identifier)):
            raise ValueError(f"team {props.team!r} needs a share identifier (1-255 letters and digits) "
                             "for its fair-share queues")
        if not (props.fair_share_queues or props.quota_shares or props.fifo_queues):
            raise ValueError(f"team {props.team!r} has no queue to submit to")
        stack = Stack.of(self)
        # Service job ids are made by Batch at submission: only a pattern can name them.
        service_jobs = batch_arn(stack.partition, stack.region, stack.account, "service-job/*")
        # The role as the L2 iam.Role writes it (same path Role/Resource, so the same logical id), with the trust
        # policy the validator measures; the policy is the L2 iam.Policy with the document the validator measures.
        role = iam.CfnRole(Construct(self, "Role"), "Resource",
                           assume_role_policy_document=trust_policy(props.principals),
                           description=f"Submits SageMaker Training jobs to AWS Batch as team {props.team}")
        document = team_policy(execution_role_arn=props.execution_role_arn, service_jobs=service_jobs,
                               fair_share_queues=props.fair_share_queues, share_identifier=props.share_identifier,
                               quota_shares=props.quota_shares, fifo_queues=props.fifo_queues,
                               max_priority=props.max_priority)
        self.policy = iam.Policy(self, "Policy", document=iam.PolicyDocument.from_json(document),
                                 roles=[iam.Role.from_role_name(self, "Attached", role.ref)])
        acknowledge(self.policy, {
            wildcard_resource(nag_text(self, service_jobs)):
                "Batch names a service job by an id it makes at submission; the queue, quota-share and share "
                "identifier conditions of the same statement confine what the team may submit",
            wildcard_resource("*"): "batch:DescribeServiceJob and batch:ListServiceJobs have no resource-level "
                                    "permissions; they only read job status",
        })
        self.role_arn = role.attr_arn
