"""Stack holding the EKS cluster, the HyperPod dependencies, the lifecycle bucket, the execution role
and the HyperPod cluster: stateful, changed when the cluster's shape changes, not for team edits."""

from __future__ import annotations

import shlex
from typing import Any

from aws_cdk import CfnOutput, Fn, Stack
from constructs import Construct

from cdk_app.config.model import BatchSize, InstanceGroup, KitConfig, RollingDeployment
from cdk_app.config.names import hyperpod_cluster_name, lifecycle_bucket_name
from cdk_app.domain.capacity import partitioned_gpus
from cdk_app.domain.deep_health_checks import group_deep_health_checks
from cdk_app.domain.network_zones import cluster_zone_ids
from cdk_app.domain.system_nodes import controller_placement
from cdk_app.kubernetes.autoscaling import autoscaling_manifests
from cdk_app.stacks.layout import stack_name
from hyperpod_constructs.helm_release_handler.manifest_policy import AUTOSCALING_SET
from hyperpod_constructs.hyperpod_autoscaling_role import HyperPodAutoscalingRole
from hyperpod_constructs.hyperpod_cluster import HyperPodCluster, HyperPodClusterProps, InstanceGroupSpec, NodeTaint
from hyperpod_constructs.hyperpod_eks_cluster import HyperPodEksCluster, HyperPodEksClusterProps
from hyperpod_constructs.hyperpod_execution_role import HyperPodExecutionRole, HyperPodExecutionRoleProps
from hyperpod_constructs.hyperpod_helm_release import (
    ChartDependency,
    HyperPodHelmRelease,
    HyperPodHelmReleaseProps,
)
from hyperpod_constructs.hyperpod_network import HyperPodNetwork
from hyperpod_constructs.kubernetes_manifests import KubernetesManifests, KubernetesManifestsProps
from hyperpod_constructs.lifecycle_scripts_bucket import LifecycleScriptsBucket, LifecycleScriptsBucketProps
from hyperpod_constructs.private.ami_lifecycle import AutoPatchSpec, BatchSizeSpec, DeploymentSpec, ScheduledUpdateSpec

PROVISIONING_ENV = "provisioning.env"


def provisioning_env(config: KitConfig) -> str:
    """lifecycle_scripts/lib/common.sh reads this file (shell assignments, values quoted)."""
    lifecycle = config.hyperpod.lifecycle
    return (f"# Written by hyperpod-kit from the {config.environment} config (hyperpod.lifecycle).\n"
            f"MOVE_DATA_ROOTS={'true' if lifecycle.move_data_roots else 'false'}\n"
            f"EXTRA_PACKAGES={shlex.quote(' '.join(lifecycle.extra_packages))}\n"
            f"GPU_DEVICE_ISOLATION={'true' if lifecycle.gpu_device_isolation else 'false'}\n"
            f"SECCOMP_DEFAULT={'true' if lifecycle.seccomp_default else 'false'}\n"
            f"BLOCK_POD_IMDS={'true' if lifecycle.block_pod_imds else 'false'}\n")


def instance_group_spec(config: KitConfig, group: InstanceGroup) -> InstanceGroupSpec:
    return InstanceGroupSpec(
        name=group.name, instance_type=group.instance_type, count=group.count,
        availability_zone_id=group.availability_zone_id or config.availability_zone_ids[0],
        threads_per_core=group.threads_per_core, ebs_volume_gib=group.ebs_volume_gib,
        deep_health_checks=group_deep_health_checks(group), training_plan_arn=group.training_plan_arn,
        labels=dict(group.labels),
        taints=tuple(NodeTaint(key=t.key, effect=t.effect, value=t.value) for t in group.taints),
        image_id=group.image_id, image_release_version=group.image_release_version,
        scheduled_update=ScheduledUpdateSpec(group.scheduled_update.schedule_expression,
                                             _deployment(group.scheduled_update.deployment))
        if group.scheduled_update else None,
        auto_patch=AutoPatchSpec(group.auto_patch.patching_strategy,
                                 _deployment(group.auto_patch.deployment) if group.auto_patch.deployment else None)
        if group.auto_patch else None,
        fallback_instance_types=group.fallback_instance_types, capacity_type=group.capacity_type,
        min_count=group.min_count,
    )


def _batch(size: BatchSize | None) -> BatchSizeSpec | None:
    return BatchSizeSpec(size.type, size.value) if size else None


def _deployment(deployment: RollingDeployment) -> DeploymentSpec:
    return DeploymentSpec(maximum_batch_size=BatchSizeSpec(deployment.maximum_batch_size.type,
                                                           deployment.maximum_batch_size.value),
                          rollback_maximum_batch_size=_batch(deployment.rollback_maximum_batch_size),
                          wait_interval_seconds=deployment.wait_interval_seconds,
                          rollback_alarms=deployment.rollback_alarms)


class ClusterStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, *, config: KitConfig, network: HyperPodNetwork,
                 scripts_dir: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        # Sorted by zone id, so that reordering availability_zone_ids changes nothing.
        subnets = tuple(network.private_subnet_ids[zone] for zone in sorted(network.private_subnet_ids))
        # The control plane keeps the subnets of the zones recorded at creation: appending a zone must
        # not touch the EKS or the HyperPod cluster (tests/stacks/test_app.py).
        home_zones = cluster_zone_ids(config)

        eks = HyperPodEksCluster(self, "Eks", props=HyperPodEksClusterProps(
            kubernetes_version=config.eks.kubernetes_version, vpc_id=network.vpc_id,
            subnet_ids=tuple(network.private_subnet_ids[zone] for zone in home_zones),
            availability_zone_ids=home_zones, security_group_id=network.security_group_id,
            endpoint_access=config.eks.endpoint_access, public_access_cidrs=config.eks.public_access_cidrs,
            admin_principals=config.eks.admin_principals,
        ))
        scripts = LifecycleScriptsBucket(self, "LifecycleScripts", props=LifecycleScriptsBucketProps(
            bucket_name=lifecycle_bucket_name(config), scripts_dir=scripts_dir,
            generated_files={PROVISIONING_ENV: provisioning_env(config)}))
        role = HyperPodExecutionRole(self, "ExecutionRole", props=HyperPodExecutionRoleProps(
            vpc_id=network.vpc_id, eks_cluster_arn=eks.cluster_arn, eks_cluster_name=eks.cluster_name,
            lifecycle_bucket_arn=scripts.bucket_arn))
        chart = config.hyperpod.helm_chart
        content_sha256, pins = chart.pins()  # the validator refuses a config where either is missing
        node_selector, tolerations = controller_placement(config)
        dependencies = HyperPodHelmRelease(self, "HelmChart", props=HyperPodHelmReleaseProps(
            cluster=eks.cluster, kubernetes_version=config.eks.kubernetes_version, vpc_id=network.vpc_id,
            subnet_ids=subnets, revision=chart.revision, content_sha256=content_sha256 or "",
            dependencies=tuple(ChartDependency(name=name, url=pin.url, sha256=pin.sha256)
                               for name, pin in sorted((pins or {}).items())),
            release_name=chart.release_name, components=chart.components.model_dump(),
            gpu_device_isolation=config.hyperpod.lifecycle.gpu_device_isolation,
            controller_node_selector=node_selector, controller_tolerations=tolerations,
            mig_partitions=bool(partitioned_gpus(config.hyperpod.instance_groups)),
            stack_name_prefix=stack_name(config, ""),
        ))
        for addon in eks.addons.values():
            dependencies.node.add_dependency(addon)

        autoscaler = HyperPodAutoscalingRole(self, "AutoscalingRole") if config.hyperpod.autoscaling else None
        hyperpod = HyperPodCluster(self, "HyperPod", props=HyperPodClusterProps(
            cluster_name=hyperpod_cluster_name(config), eks_cluster_arn=eks.cluster_arn,
            execution_role_arn=role.role_arn, lifecycle_source_s3_uri=scripts.source_s3_uri,
            security_group_id=network.security_group_id, subnet_ids_by_zone=dict(network.private_subnet_ids),
            cluster_zone_ids=home_zones,
            instance_groups=tuple(instance_group_spec(config, g) for g in config.hyperpod.instance_groups),
            node_recovery=config.hyperpod.node_recovery,
            autoscaling_role_arn=autoscaler.role_arn if autoscaler else None,
        ))
        # HyperPod needs the chart's agents, the scripts and the role's permissions before the first node.
        hyperpod.node.add_dependency(dependencies.resource, scripts.deployment, role.policy)
        karpenter_objects = autoscaling_manifests(config)
        if autoscaler is not None:
            hyperpod.node.add_dependency(autoscaler.policy)
        if karpenter_objects:
            # HyperPod installs its Karpenter (and the NodeClass and NodePool kinds) with the cluster.
            KubernetesManifests(self, "Autoscaling", props=KubernetesManifestsProps(
                service_token=dependencies.service_token, cluster_name=eks.cluster_name, name=AUTOSCALING_SET,
                manifests=karpenter_objects)).node.add_dependency(hyperpod.resource)
        self.eks = eks
        self.hyperpod = hyperpod
        self.installer_service_token = dependencies.service_token

        outputs = {
            "EksClusterName": eks.cluster_name, "EksClusterArn": eks.cluster_arn,
            "HyperPodClusterName": hyperpod.cluster_name, "HyperPodClusterArn": hyperpod.cluster_arn,
            "LifecycleBucketName": scripts.bucket_name, "ExecutionRoleArn": role.role_arn,
            "HelmChartContentSha256": dependencies.content_sha256,
            "KubeconfigCommand": Fn.join("", [f"aws eks update-kubeconfig --region {config.region} --name ",
                                              eks.cluster_name]),
        }
        for name, value in outputs.items():
            CfnOutput(self, name, value=value)
