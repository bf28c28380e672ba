"""Stack holding what admins edit most: the task-governance add-on, the cluster policy, one compute
allocation per team (and the shared pool), team access and observability. A quota edit changes this
stack only; the network and cluster stacks stay byte-identical (tests/test_app.py)."""

from __future__ import annotations

import json
from typing import Any

from aws_cdk import CfnOutput, Stack, aws_eks_v2 as eks, aws_iam as iam
from constructs import Construct

from cdk_app.config.model import DEFAULT_BORROW_LIMIT, KitConfig, QuotaEntry, SharedPool, Team
from cdk_app.governance_types import uses_native
from cdk_app.guardrails import guardrail_manifests
from cdk_app.config.names import team_role_output_id
from cdk_app.team_rbac import team_group, team_manifests
from cdk_app.validator.capacity import shared_pool_quota
from hyperpod_constructs.deployment_available import DeploymentAvailable, DeploymentAvailableProps
from hyperpod_constructs.kubernetes_manifests import KubernetesManifests, KubernetesManifestsProps
from hyperpod_constructs.nag_acknowledgements import acknowledge, managed_policy
from hyperpod_constructs.sagemaker_governance_resource import (
    SageMakerGovernanceResource,
    SageMakerGovernanceResourceProps,
)
from hyperpod_constructs.service_trust import service_principal
from hyperpod_constructs.team_access import TeamAccess, TeamAccessProps

TASK_GOVERNANCE_ADDON = "amazon-sagemaker-hyperpod-taskgovernance"
OBSERVABILITY_ADDON = "amazon-cloudwatch-observability"
# Where the task-governance add-on runs Kueue's controller.
KUEUE_NAMESPACE = "kueue-system"
KUEUE_DEPLOYMENT = "kueue-controller-manager"


def quota_resource(entry: QuotaEntry) -> dict[str, Any]:
    fields = {"Count": entry.count, "Accelerators": entry.accelerators, "VCpu": entry.vcpu,
              "MemoryInGiB": entry.memory_gib}
    return {"InstanceType": entry.instance_type, **{k: v for k, v in fields.items() if v is not None}}


def quota_parameters(config: KitConfig, cluster_arn: str, team: Team | SharedPool,
                     quota: tuple[QuotaEntry, ...] | list[QuotaEntry]) -> dict[str, Any]:
    """ComputeQuota properties (= CreateComputeQuota request) of one team or the shared pool."""
    sharing: dict[str, Any] = {"Strategy": team.sharing_strategy}
    if team.sharing_strategy == "LendAndBorrow":
        sharing["BorrowLimit"] = getattr(team, "borrow_limit", None) or DEFAULT_BORROW_LIMIT
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


def policy_parameters(config: KitConfig, cluster_arn: str) -> dict[str, Any]:
    policy = config.cluster_policy
    scheduler: dict[str, Any] = {"FairShare": policy.fair_share, "IdleResourceSharing": policy.idle_resource_sharing}
    if policy.priority_classes:
        scheduler["PriorityClasses"] = [{"Name": c.name, "Weight": c.weight} for c in policy.priority_classes]
    return {"Name": f"{config.environment}-policy", "ClusterArn": cluster_arn, "SchedulerConfig": scheduler}


class GovernanceStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, *, config: KitConfig, eks_cluster_name: str,
                 hyperpod_cluster_arn: str, installer_service_token: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        cluster = eks.Cluster.from_cluster_attributes(self, "Eks", cluster_name=eks_cluster_name)

        # Kueue comes from this add-on, which needs the HyperPod cluster (this stack deploys after it).
        addon = eks.Addon(self, "TaskGovernance", cluster=cluster, addon_name=TASK_GOVERNANCE_ADDON,
                          addon_version=config.task_governance.addon_version,
                          # Deleting the stack must not take Kueue (and every queued and running job) with it.
                          preserve_on_delete=True)
        policy = SageMakerGovernanceResource(self, "ClusterPolicy", props=SageMakerGovernanceResourceProps(
            kind="ClusterSchedulerConfig", parameters=policy_parameters(config, hyperpod_cluster_arn),
            native=uses_native(config, "cluster_policy"), eks_cluster_name=eks_cluster_name))
        # The add-on is ACTIVE before Kueue's controller (and the webhooks it serves) runs; the policy and
        # quotas go in once it is Available, as AWS's Terraform for HyperPod does.
        kueue = DeploymentAvailable(self, "KueueAvailable", props=DeploymentAvailableProps(
            service_token=installer_service_token, cluster_name=eks_cluster_name, namespace=KUEUE_NAMESPACE,
            name=KUEUE_DEPLOYMENT))
        kueue.node.add_dependency(addon)
        policy.node.add_dependency(kueue)

        native_quota = uses_native(config, "compute_quota")
        quotas: dict[str, SageMakerGovernanceResource] = {}
        allocations = [(team, team.quota) for team in config.teams]
        if config.shared_pool is not None:
            allocations.append((config.shared_pool, shared_pool_quota(config)))
        for team, quota in allocations:
            allocation = SageMakerGovernanceResource(self, f"Quota-{team.name}", props=SageMakerGovernanceResourceProps(
                kind="ComputeQuota", parameters=quota_parameters(config, hyperpod_cluster_arn, team, quota),
                native=native_quota, eks_cluster_name=eks_cluster_name))
            allocation.node.add_dependency(policy)
            quotas[team.name] = allocation

        # Admission guardrails of every team namespace (and the shared pool's); they bind by namespace
        # name, so they need not wait for the namespaces, and every team's RBAC waits for them.
        # A config without teams or shared pool has no namespace to guard (and no team to grant anything).
        guardrail_objects = guardrail_manifests(config)
        if guardrail_objects:
            guardrails = KubernetesManifests(self, "Guardrails", props=KubernetesManifestsProps(
                service_token=installer_service_token, cluster_name=eks_cluster_name, name="guardrails",
                manifests=tuple(guardrail_objects)))

        for team in config.teams:
            # The task-governance add-on creates hyperpod-ns-<team> with the team's quota; RBAC goes in after.
            rbac = KubernetesManifests(self, f"Rbac-{team.name}", props=KubernetesManifestsProps(
                service_token=installer_service_token, cluster_name=eks_cluster_name, name=f"team-{team.name}",
                manifests=tuple(team_manifests(team.name))))
            rbac.node.add_dependency(quotas[team.name], guardrails)
            if team.principals:
                access = TeamAccess(self, f"Team-{team.name}", props=TeamAccessProps(
                    cluster_name=eks_cluster_name, team=team.name, principals=team.principals,
                    kubernetes_group=team_group(team.name)))
                access.node.add_dependency(guardrails)
                CfnOutput(self, team_role_output_id(team.name), value=access.role.role_arn)

        if config.observability.enabled:
            self._observability(config, cluster)
        CfnOutput(self, "ClusterPolicyArn", value=policy.arn)

    def _observability(self, config: KitConfig, cluster: eks.ICluster) -> None:
        role = iam.Role(self, "CloudWatchAgentRole",
                        assumed_by=service_principal(self, "pods.eks.amazonaws.com").with_session_tags(),
                        managed_policies=[iam.ManagedPolicy.from_aws_managed_policy_name("CloudWatchAgentServerPolicy")],
                        description="CloudWatch agent of the observability add-on (EKS Pod Identity)")
        acknowledge(role, {managed_policy("CloudWatchAgentServerPolicy"):
                           "the CloudWatch agent's documented policy; it writes metrics and logs only"})
        metrics: dict[str, Any] = {"enhanced_container_insights": True}
        if config.observability.kueue_metrics:
            metrics["kueue_container_insights"] = True
        agent = {"agent": {"config": {"logs": {"metrics_collected": {"kubernetes": metrics}}}}}
        eks.CfnAddon(
            self, "Observability", cluster_name=cluster.cluster_name, addon_name=OBSERVABILITY_ADDON,
            addon_version=config.observability.addon_version, resolve_conflicts="OVERWRITE",
            configuration_values=json.dumps(agent, sort_keys=True),
            pod_identity_associations=[eks.CfnAddon.PodIdentityAssociationProperty(
                role_arn=role.role_arn, service_account="cloudwatch-agent")],
        )
