"""The SageMaker HyperPod cluster (AWS::SageMaker::Cluster) orchestrated by an EKS cluster.

ClusterName, VpcConfig and Orchestrator.Eks are create-only: changing them replaces the cluster and its
nodes. So the cluster-level VpcConfig holds only the subnets of the zones the cluster was created in
(cluster_zone_ids, kept as they are), and every instance group is placed through its own
OverrideVpcConfig, which may name any zone's subnet - as AWS's Terraform modules place groups. A zone
added later serves new groups without touching the cluster. Instance group edits (counts, new groups)
update it in place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from hyperpod_constructs.private.ami_lifecycle import (
    AutoPatchSpec,
    BatchSizeSpec,
    DeploymentSpec,
    ScheduledUpdateSpec,
    check_ami_lifecycle,
)
from hyperpod_constructs.private.limits import (
    DEEP_HEALTH_CHECKS,
    MAX_EBS_VOLUME_GIB,
    MAX_INSTANCE_COUNT,
    MIN_EBS_VOLUME_GIB,
    SAGEMAKER_NAME,
    anchored,
)
from hyperpod_constructs.protection import retain

NAME = re.compile(anchored(SAGEMAKER_NAME))
TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


@dataclass(frozen=True)
class NodeTaint:
    key: str
    effect: TaintEffect
    value: str | None = None


@dataclass(frozen=True)
class InstanceGroupSpec:
    """One instance group.

    name, instance_type, count (0-6758), availability_zone_id - required.
    threads_per_core: 1 or 2. Default 1 (hyper-threading off).
    ebs_volume_gib: secondary volume per instance, 1-16384. Default 500.
    deep_health_checks: run when a node joins. Default: none - the caller decides per instance type,
        since only GPU and Trainium instances accept them.
    training_plan_arn: capacity from a SageMaker training plan. Default: none.
    labels, taints: Kubernetes labels and taints of the group's nodes. Default: none.
    image_id: ami-... or default. Default: none (SageMaker's AMI for the orchestrator).
    image_release_version: HyperPod AMI version MAJOR.MINOR.PATCH; a change updates the group's software.
        Default: none (the latest at creation).
    scheduled_update: recurring rolling AMI updates. Default: none.
    auto_patch: automatic security patches. Default: none.
    """

    name: str
    instance_type: str
    count: int
    availability_zone_id: str
    threads_per_core: int = 1
    ebs_volume_gib: int = 500
    deep_health_checks: tuple[str, ...] = ()
    training_plan_arn: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[NodeTaint, ...] = ()
    # The AMI lifecycle.
    image_id: str | None = None
    image_release_version: str | None = None
    scheduled_update: ScheduledUpdateSpec | None = None
    auto_patch: AutoPatchSpec | None = None


@dataclass(frozen=True)
class HyperPodClusterProps:
    """Props of HyperPodCluster.

    cluster_name: 1-63 letters, digits and hyphens - required.
    eks_cluster_arn: the orchestrating EKS cluster - required.
    execution_role_arn: role of every instance group - required.
    lifecycle_source_s3_uri: s3:// folder holding the lifecycle scripts - required.
    security_group_id: node security group - required.
    subnet_ids_by_zone: private subnet per availability zone id; each group goes in its zone's subnet - required.
    cluster_zone_ids: zones whose subnets form the cluster-level VpcConfig (create-only: keep them as at
        creation) - required.
    instance_groups: 1-100 groups - required.
    on_create: the script HyperPod runs on each new node. Default on_create.sh.
    node_recovery: Automatic or None. Default Automatic.
    """

    cluster_name: str
    eks_cluster_arn: str
    execution_role_arn: str
    lifecycle_source_s3_uri: str
    security_group_id: str
    subnet_ids_by_zone: dict[str, str]
    cluster_zone_ids: tuple[str, ...]
    instance_groups: tuple[InstanceGroupSpec, ...]
    on_create: str = "on_create.sh"
    node_recovery: Literal["Automatic", "None"] = "Automatic"


class HyperPodCluster(Construct):
    """HyperPod cluster with EKS orchestration and one instance group per spec."""

    def __init__(self, scope: Construct, construct_id: str, *, props: HyperPodClusterProps) -> None:
        super().__init__(scope, construct_id)
        _validate(props)
        self.resource = sagemaker.CfnCluster(
            self, "Resource",
            cluster_name=props.cluster_name,
            orchestrator=sagemaker.CfnCluster.OrchestratorProperty(
                eks=sagemaker.CfnCluster.ClusterOrchestratorEksConfigProperty(cluster_arn=props.eks_cluster_arn)),
            vpc_config=sagemaker.CfnCluster.VpcConfigProperty(
                security_group_ids=[props.security_group_id],
                subnets=[props.subnet_ids_by_zone[zone] for zone in props.cluster_zone_ids]),
            node_recovery=props.node_recovery,
            node_provisioning_mode="Continuous",
            instance_groups=[_instance_group(props, group) for group in props.instance_groups],
        )
        retain(self.resource)
        self.cluster_name = props.cluster_name
        self.cluster_arn = self.resource.attr_cluster_arn


def _instance_group(props: HyperPodClusterProps, group: InstanceGroupSpec) -> sagemaker.CfnCluster.ClusterInstanceGroupProperty:
    cfn = sagemaker.CfnCluster
    return cfn.ClusterInstanceGroupProperty(
        instance_group_name=group.name,
        instance_type=group.instance_type,
        instance_count=group.count,
        execution_role=props.execution_role_arn,
        threads_per_core=group.threads_per_core,
        life_cycle_config=cfn.ClusterLifeCycleConfigProperty(source_s3_uri=props.lifecycle_source_s3_uri,
                                                             on_create=props.on_create),
        instance_storage_configs=[cfn.ClusterInstanceStorageConfigProperty(
            ebs_volume_config=cfn.ClusterEbsVolumeConfigProperty(volume_size_in_gb=group.ebs_volume_gib))],
        on_start_deep_health_checks=list(group.deep_health_checks) or None,
        training_plan_arn=group.training_plan_arn,
        # Capacity lives in one zone: the group's nodes go in that zone's subnet only.
        override_vpc_config=cfn.VpcConfigProperty(security_group_ids=[props.security_group_id],
                                                  subnets=[props.subnet_ids_by_zone[group.availability_zone_id]]),
        kubernetes_config=cfn.ClusterKubernetesConfigProperty(
            labels=dict(group.labels) or None,
            taints=[cfn.ClusterKubernetesTaintProperty(key=t.key, effect=t.effect, value=t.value) for t in group.taints]
            or None,
        ) if group.labels or group.taints else None,
        image_id=group.image_id,
        image_release_version=group.image_release_version,
        scheduled_update_config=cfn.ScheduledUpdateConfigProperty(
            schedule_expression=group.scheduled_update.schedule_expression,
            deployment_config=_deployment(group.scheduled_update.deployment),
        ) if group.scheduled_update else None,
        auto_patch_config=cfn.AutoPatchConfigProperty(
            patching_strategy=group.auto_patch.patching_strategy,
            deployment_config=_deployment(group.auto_patch.deployment) if group.auto_patch.deployment else None,
        ) if group.auto_patch else None,
    )


def _batch(size: BatchSizeSpec | None) -> sagemaker.CfnCluster.CapacitySizeConfigProperty | None:
    return sagemaker.CfnCluster.CapacitySizeConfigProperty(type=size.type, value=size.value) if size else None


def _deployment(deployment: DeploymentSpec) -> sagemaker.CfnCluster.DeploymentConfigProperty:
    cfn = sagemaker.CfnCluster
    return cfn.DeploymentConfigProperty(
        rolling_update_policy=cfn.RollingUpdatePolicyProperty(
            maximum_batch_size=_batch(deployment.maximum_batch_size),
            rollback_maximum_batch_size=_batch(deployment.rollback_maximum_batch_size)),
        wait_interval_in_seconds=deployment.wait_interval_seconds,
        auto_rollback_configuration=[cfn.AlarmDetailsProperty(alarm_name=name) for name in deployment.rollback_alarms]
        or None,
    )


def _validate(props: HyperPodClusterProps) -> None:
    if not NAME.match(props.cluster_name):
        raise ValueError(f"cluster_name must be 1-63 letters, digits and hyphens, got {props.cluster_name!r}")
    if not props.lifecycle_source_s3_uri.startswith("s3://"):
        raise ValueError(f"lifecycle_source_s3_uri must be an s3:// URI, got {props.lifecycle_source_s3_uri!r}")
    missing = [zone for zone in props.cluster_zone_ids if zone not in props.subnet_ids_by_zone]
    if not props.cluster_zone_ids or missing or len(set(props.cluster_zone_ids)) != len(props.cluster_zone_ids):
        raise ValueError(f"cluster_zone_ids must name distinct zones with a subnet ({sorted(props.subnet_ids_by_zone)}), "
                         f"got {list(props.cluster_zone_ids)}")
    if not 1 <= len(props.instance_groups) <= 100:
        raise ValueError(f"instance_groups must hold 1 to 100 groups, got {len(props.instance_groups)}")
    names = [group.name for group in props.instance_groups]
    if len(set(names)) != len(names):
        raise ValueError(f"instance group names must be unique, got {names}")
    for group in props.instance_groups:
        where = f"instance group {group.name!r}"
        if not NAME.match(group.name):
            raise ValueError(f"{where}: name must be 1-63 letters, digits and hyphens")
        if not 0 <= group.count <= MAX_INSTANCE_COUNT:
            raise ValueError(f"{where}: count must be 0-6758, got {group.count}")
        if group.threads_per_core not in (1, 2):
            raise ValueError(f"{where}: threads_per_core must be 1 or 2, got {group.threads_per_core}")
        if not MIN_EBS_VOLUME_GIB <= group.ebs_volume_gib <= MAX_EBS_VOLUME_GIB:
            raise ValueError(f"{where}: ebs_volume_gib must be 1-16384, got {group.ebs_volume_gib}")
        unknown = set(group.deep_health_checks) - set(DEEP_HEALTH_CHECKS)
        if unknown:
            raise ValueError(f"{where}: unknown deep health checks {sorted(unknown)}; allowed {list(DEEP_HEALTH_CHECKS)}")
        if group.availability_zone_id not in props.subnet_ids_by_zone:
            raise ValueError(f"{where}: no subnet in {group.availability_zone_id}; "
                             f"subnets are in {sorted(props.subnet_ids_by_zone)}")
        check_ami_lifecycle(where, group.image_id, group.image_release_version, group.scheduled_update,
                            group.auto_patch)
