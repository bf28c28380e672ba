"""Stack holding the cluster-wide governance: the task-governance add-on, Kueue's wait, the cluster policy,
the admission guardrails, the shared pool's allocation and observability - and the teams the layout keeps
here (task_governance.team_stacks 0: all of them; else none, they live in team stacks). A quota edit
changes this stack or a team stack only; the network and cluster stacks stay byte-identical
(tests/stacks/test_app.py)."""

from __future__ import annotations

import json
from typing import Any

from aws_cdk import CfnOutput, Stack
from aws_cdk import aws_eks_v2 as eks
from aws_cdk import aws_iam as iam
from constructs import Construct

from cdk_app.config.model import KitConfig, Team
from cdk_app.domain.capacity import shared_pool_quota
from cdk_app.domain.governance_types import TASK_GOVERNANCE_ADDON, uses_native
from cdk_app.kubernetes.guardrails import guardrail_manifests
from cdk_app.stacks.layout import GOVERNANCE, team_layout
from cdk_app.stacks.team_stack import ClusterRefs, add_quota, add_team, role_arns_output
from hyperpod_constructs.deployment_available import DeploymentAvailable, DeploymentAvailableProps
from hyperpod_constructs.kubernetes_manifests import KubernetesManifests, KubernetesManifestsProps
from hyperpod_constructs.nag_acknowledgements import acknowledge, managed_policy
from hyperpod_constructs.sagemaker_governance_resource import (
    SageMakerGovernanceResource,
    SageMakerGovernanceResourceProps,
)
from hyperpod_constructs.schedulable_node import SchedulableNode, SchedulableNodeProps
from hyperpod_constructs.service_trust import pod_identity_principal

OBSERVABILITY_ADDON = "amazon-cloudwatch-observability"
# Where that add-on runs its CloudWatch agent (EKS user guide, CloudWatch Observability add-on).
OBSERVABILITY_NAMESPACE, OBSERVABILITY_AGENT = "amazon-cloudwatch", "cloudwatch-agent"
# Where the task-governance add-on runs Kueue's controller.
KUEUE_NAMESPACE = "kueue-system"
KUEUE_DEPLOYMENT = "kueue-controller-manager"


def policy_parameters(config: KitConfig, cluster_arn: str) -> dict[str, Any]:
    policy = config.cluster_policy
    scheduler: dict[str, Any] = {"FairShare": policy.fair_share, "IdleResourceSharing": policy.idle_resource_sharing}
    if policy.priority_classes:
        scheduler["PriorityClasses"] = [{"Name": c.name, "Weight": c.weight} for c in policy.priority_classes]
    return {"Name": f"{config.environment}-policy", "ClusterArn": cluster_arn, "SchedulerConfig": scheduler}


class GovernanceStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, *, config: KitConfig, eks_cluster_name: str,
                 hyperpod_cluster_arn: str, installer_service_token: str, teams: tuple[Team, ...] | None = None,
                 **kwargs: Any) -> None:
        """teams: the teams this stack holds. Default: the layout's (cdk_app/stacks/layout.py)."""
        super().__init__(scope, construct_id, **kwargs)
        teams = team_layout(config).stacks[GOVERNANCE] if teams is None else teams
        refs = ClusterRefs(eks_cluster_name, hyperpod_cluster_arn, installer_service_token)
        cluster = eks.Cluster.from_cluster_attributes(self, "Eks", cluster_name=eks_cluster_name)

        # Kueue comes from this add-on, which needs the HyperPod cluster (this stack deploys after it) and a node
        # its controller can run on: the cluster stack finishes before any node has joined (continuous
        # provisioning), so the add-on waits for one, as AWS's Terraform for HyperPod does.
        node = SchedulableNode(self, "SchedulableNode", props=SchedulableNodeProps(
            service_token=installer_service_token, cluster_name=eks_cluster_name))
        addon = eks.Addon(self, "TaskGovernance", cluster=cluster, addon_name=TASK_GOVERNANCE_ADDON,
                          addon_version=config.task_governance.addon_version,
                          # Deleting the stack must not take Kueue (and every queued and running job) with it.
                          preserve_on_delete=True)
        addon.node.add_dependency(node)
        # A governance stack rolled back once leaves the preserved add-on's Kueue objects behind; the next create
        # takes them over instead of failing on the conflict. AWS's HyperPod CloudFormation sets OVERWRITE on the
        # add-ons it creates (aws/sagemaker-hyperpod-cluster-setup eks/cloudformation/eks-template.yaml, the core
        # add-ons); the deploy review reads awsome-distributed-ai's Terraform the same. CDK's Addon has no prop for it.
        addon.node.default_child.resolve_conflicts = "OVERWRITE"
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

        if config.shared_pool is not None:
            add_quota(self, config, refs, config.shared_pool, shared_pool_quota(config)).node.add_dependency(policy)

        # Admission guardrails of every team namespace (and the shared pool's), wherever the team lives; they
        # bind by namespace name, so they need not wait for the namespaces, and every team's RBAC waits for
        # them. A config without teams or shared pool has no namespace to guard.
        guardrail_objects = guardrail_manifests(config)
        guardrails = KubernetesManifests(self, "Guardrails", props=KubernetesManifestsProps(
            service_token=installer_service_token, cluster_name=eks_cluster_name, name="guardrails",
            manifests=tuple(guardrail_objects))) if guardrail_objects else None

        arns = {team.name: arn for team in teams
                if (arn := add_team(self, config, refs, team, policy=policy, guardrails=guardrails)) is not None}
        role_arns_output(self, arns)

        if config.observability.enabled:
            self._observability(config, cluster, eks_cluster_name)
        CfnOutput(self, "ClusterPolicyArn", value=policy.arn)

    def _observability(self, config: KitConfig, cluster: eks.ICluster, eks_cluster_name: str) -> None:
        role = iam.Role(self, "CloudWatchAgentRole",
                        assumed_by=pod_identity_principal(eks_cluster_name, OBSERVABILITY_NAMESPACE, OBSERVABILITY_AGENT),
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
                role_arn=role.role_arn, service_account=OBSERVABILITY_AGENT)],
        )
