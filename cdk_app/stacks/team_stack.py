"""A team's pieces - compute quota, Kubernetes RBAC, IAM role and EKS access entry - and the team stack that
holds a shard of the teams (cdk_app/stacks/layout.py decides which). The governance stack uses the same
`add_team` for the teams it keeps, so a team's resources are the same wherever they live."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aws_cdk import CfnOutput, CfnResource, Stack
from constructs import Construct, IConstruct

from cdk_app.config.model import DEFAULT_BORROW_LIMIT, KitConfig, QuotaEntry, SharedPool, Team
from cdk_app.domain.governance_types import uses_native
from cdk_app.kubernetes.team_rbac import team_group
from cdk_app.kubernetes.team_set import team_set
from cdk_app.kubernetes.team_volumes import team_claims
from hyperpod_constructs.kubernetes_manifests import KubernetesManifests, KubernetesManifestsProps
from hyperpod_constructs.sagemaker_governance_resource import (
    SageMakerGovernanceResource,
    SageMakerGovernanceResourceProps,
)
from hyperpod_constructs.team_access import TeamAccess, TeamAccessProps

ROLE_ARNS_OUTPUT = "TeamRoleArns"


@dataclass(frozen=True)
class ClusterRefs:
    """The cluster stack's values the team pieces need (imports when the stack is not the cluster's)."""

    eks_cluster_name: str
    hyperpod_cluster_arn: str
    installer_service_token: str


def quota_resource(entry: QuotaEntry) -> dict[str, Any]:
    """One ComputeQuotaResourceConfig (a quota entry, or an absolute borrow limit: the same shape)."""
    fields = {"Count": entry.count, "Accelerators": entry.accelerators, "VCpu": entry.vcpu,
              "MemoryInGiB": entry.memory_gib}
    resource = {"InstanceType": entry.instance_type, **{k: v for k, v in fields.items() if v is not None}}
    if entry.accelerator_partition is not None:
        resource["AcceleratorPartition"] = {"Type": entry.accelerator_partition.type,
                                            "Count": entry.accelerator_partition.count}
    return resource


def quota_parameters(config: KitConfig, cluster_arn: str, team: Team | SharedPool,
                     quota: tuple[QuotaEntry, ...] | list[QuotaEntry]) -> dict[str, Any]:
    """ComputeQuota properties (= CreateComputeQuota request) of one team or the shared pool."""
    sharing: dict[str, Any] = {"Strategy": team.sharing_strategy}
    if team.sharing_strategy == "LendAndBorrow":
        sharing["BorrowLimit"] = getattr(team, "borrow_limit", None) or DEFAULT_BORROW_LIMIT
        limits = getattr(team, "absolute_borrow_limits", ())
        if limits:
            sharing["AbsoluteBorrowLimits"] = [quota_resource(entry) for entry in limits]
    return {
        "Name": f"{config.environment}-{team.name}",
        "ClusterArn": cluster_arn,
        "ActivationState": "Enabled" if getattr(team, "enabled", True) else "Disabled",
        "ComputeQuotaConfig": {
            "ComputeQuotaResources": [quota_resource(entry) for entry in quota],
            "ResourceSharingConfig": sharing,
            "PreemptTeamTasks": getattr(team, "preempt_team_tasks", "LowerPriority"),
        },
        "ComputeQuotaTarget": {"TeamName": team.name, "FairShareWeight": team.fair_share_weight},
    }


def add_quota(scope: Construct, config: KitConfig, refs: ClusterRefs, team: Team | SharedPool,
              quota: tuple[QuotaEntry, ...] | list[QuotaEntry]) -> SageMakerGovernanceResource:
    return SageMakerGovernanceResource(scope, f"Quota-{team.name}", props=SageMakerGovernanceResourceProps(
        kind="ComputeQuota", parameters=quota_parameters(config, refs.hyperpod_cluster_arn, team, quota),
        native=uses_native(config, "compute_quota"), eks_cluster_name=refs.eks_cluster_name))


def add_team(scope: Construct, config: KitConfig, refs: ClusterRefs, team: Team, *,
             policy: IConstruct | None = None, guardrails: IConstruct | None = None) -> str | None:
    """The team's quota, RBAC and (with principals) access; returns its role's ARN, if any. `policy` and
    `guardrails`: the cluster policy the quota follows and the guardrails RBAC and access follow, when they
    are in the same stack; a team stack gets that order from its dependency on the governance stack."""
    quota = add_quota(scope, config, refs, team, team.quota)
    after_guardrails = (guardrails,) if guardrails is not None else ()
    if policy is not None:
        quota.node.add_dependency(policy)
    # The task-governance add-on creates hyperpod-ns-<team> with the team's quota; RBAC, the NetworkPolicy and the
    # ResourceQuota go in after.
    rbac = KubernetesManifests(scope, f"Rbac-{team.name}", props=KubernetesManifestsProps(
        service_token=refs.installer_service_token, cluster_name=refs.eks_cluster_name, name=f"team-{team.name}",
        manifests=tuple(team_set(team.name, team_claims(config, team.name))), region=config.region))
    rbac.node.add_dependency(quota, *after_guardrails)
    if not team.principals:
        return None
    access = TeamAccess(scope, f"Team-{team.name}", props=TeamAccessProps(
        cluster_name=refs.eks_cluster_name, team=team.name, principals=team.principals,
        kubernetes_group=team_group(team.name)))
    if after_guardrails:
        access.node.add_dependency(*after_guardrails)
    return access.role_arn


def role_arns_output(stack: Stack, arns: dict[str, str], key: str = ROLE_ARNS_OUTPUT,
                     description: str = "JSON: team name -> the IAM role its principals assume") -> None:
    """One output for all the stack's teams: a JSON object team -> role ARN (per-team outputs would hit
    CloudFormation's 200-output limit)."""
    if arns:
        CfnOutput(stack, key, value=stack.to_json_string(arns), description=description)


class TeamStack(Stack):
    """Teams of one shard. Deploys after the governance stack (the app adds the dependency): its quotas need
    the cluster policy, its RBAC the guardrails."""

    def __init__(self, scope: Construct, construct_id: str, *, config: KitConfig, teams: tuple[Team, ...],
                 refs: ClusterRefs, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        arns = {team.name: arn for team in teams if (arn := add_team(self, config, refs, team)) is not None}
        role_arns_output(self, arns)
        if not teams:
            # CloudFormation refuses a template without resources; an empty shard stays deployed (so removing
            # its last team deleted that team's resources) and holds this no-op instead.
            CfnResource(self, "Empty", type="AWS::CloudFormation::WaitConditionHandle")
