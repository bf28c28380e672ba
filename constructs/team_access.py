"""What a team's people may do on the cluster: an IAM role their principals assume, mapped by an EKS
access entry to the EKS edit policy scoped to the team's namespace only (hyperpod-ns-<team>).
Nothing cluster-wide: no other namespace, no cluster-scoped objects."""

from __future__ import annotations

import re
from dataclasses import dataclass

from aws_cdk import aws_eks_v2 as eks, aws_iam as iam
from constructs import Construct

TEAM_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$")


@dataclass(frozen=True)
class TeamAccessProps:
    """Props of TeamAccess.

    cluster: the EKS cluster - required.
    team: team name, a DNS label of at most 40 characters - required.
    principals: IAM ARNs allowed to assume the team's role, at least one - required.
    access_policy: EKS access policy granted in the namespace. Default AmazonEKSEditPolicy.
    """

    cluster: eks.ICluster
    team: str
    principals: tuple[str, ...]
    access_policy: str = "AmazonEKSEditPolicy"


class TeamAccess(Construct):
    """The team's role and its namespace-scoped access entry."""

    def __init__(self, scope: Construct, construct_id: str, *, props: TeamAccessProps) -> None:
        super().__init__(scope, construct_id)
        if not TEAM_NAME.match(props.team):
            raise ValueError(f"team must be a DNS label of at most 40 characters, got {props.team!r}")
        if not props.principals:
            raise ValueError(f"team {props.team!r} needs at least one principal to assume its role")
        self.namespace = f"hyperpod-ns-{props.team}"
        self.role = iam.Role(self, "Role", assumed_by=iam.CompositePrincipal(*(iam.ArnPrincipal(p) for p in props.principals)),
                             description=f"Submits jobs as team {props.team} in {self.namespace}")
        self.access_entry = eks.AccessEntry(
            self, "Access", cluster=props.cluster, principal=self.role.role_arn,
            access_policies=[eks.AccessPolicy.from_access_policy_name(
                props.access_policy, access_scope_type=eks.AccessScopeType.NAMESPACE, namespaces=[self.namespace])],
        )
