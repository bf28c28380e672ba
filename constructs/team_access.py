"""What a team's people may do on the cluster: an IAM role their principals assume, and an EKS access
entry that maps it to the team's Kubernetes group and nothing else - no access policy, no cluster-wide
rights. What the group may do is what cdk_app/kubernetes/team_rbac.py binds to it: the Role in the team namespace and a
read-only ClusterRole limited by resourceNames to the team's namespace and ClusterQueue."""

from __future__ import annotations

import re
from dataclasses import dataclass

from aws_cdk import aws_eks_v2 as eks
from aws_cdk import aws_iam as iam
from constructs import Construct

from hyperpod_constructs.private.role_trust import trust_policy

TEAM_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$")


@dataclass(frozen=True)
class TeamAccessProps:
    """Props of TeamAccess.

    cluster_name: the EKS cluster - required.
    team: team name, a DNS label of at most 40 characters - required.
    principals: IAM ARNs allowed to assume the team's role, at least one - required.
    kubernetes_group: group the role maps to. Default hyperpod-team-<team>.
    """

    cluster_name: str
    team: str
    principals: tuple[str, ...]
    kubernetes_group: str | None = None


class TeamAccess(Construct):
    """The team's role and its access entry."""

    def __init__(self, scope: Construct, construct_id: str, *, props: TeamAccessProps) -> None:
        super().__init__(scope, construct_id)
        if not TEAM_NAME.match(props.team):
            raise ValueError(f"team must be a DNS label of at most 40 characters, got {props.team!r}")
        if not props.principals:
            raise ValueError(f"team {props.team!r} needs at least one principal to assume its role")
        self.kubernetes_group = props.kubernetes_group or f"hyperpod-team-{props.team}"
        # The role as the L2 iam.Role writes it under the app's @aws-cdk/aws-iam:minimizePolicies (cdk.json; the
        # trust policy is role_trust's, which the validator measures, HPK170), at the same construct path
        # (Role/Resource, so the same logical id and generated name: a deployed role is not replaced), made in one
        # jsii call instead of about ten - synth of hundreds of teams spends its time in those calls (README: Benchmark).
        self.role = iam.CfnRole(
            Construct(self, "Role"), "Resource", assume_role_policy_document=trust_policy(props.principals),
            description=f"Submits jobs as team {props.team} in hyperpod-ns-{props.team}")
        self.role_arn = self.role.attr_arn
        self.access_entry = eks.CfnAccessEntry(
            self, "Access", cluster_name=props.cluster_name, principal_arn=self.role_arn,
            kubernetes_groups=[self.kubernetes_group], type="STANDARD")
