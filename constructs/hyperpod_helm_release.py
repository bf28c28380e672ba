"""The HyperPod dependency Helm chart (aws/sagemaker-hyperpod-cli, helm_chart/HyperPodHelmChart)
as one release in kube-system, installed at deploy time by a custom resource.

Synth stays offline: the template only names the pinned commit and checksum. At deploy time a
Lambda function in the cluster's VPC fetches that commit's archive, verifies it and runs helm (see
helm_release_handler/index.py). Its role gets a cluster-admin access entry; a helm failure fails the
resource with helm's output as the reason.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from aws_cdk import CustomResource, Duration, Stack, aws_ec2 as ec2, aws_eks_v2 as eks, aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk.lambda_layer_kubectl_v35 import KubectlV35Layer
from constructs import Construct

from hyperpod_constructs.imported_network import import_vpc_subnets
from hyperpod_constructs.python_handler_provider import PythonHandlerProvider, PythonHandlerProviderProps

HANDLER_DIR = Path(__file__).resolve().parent / "helm_release_handler"
DEFAULT_REPOSITORY = "aws/sagemaker-hyperpod-cli"

# Component toggles -> the chart value that switches each one (the chart's dependency conditions).
COMPONENT_VALUES: dict[str, tuple[str, ...]] = {
    "health_monitoring_agent": ("health-monitoring-agent", "enabled"),
    "deep_health_check": ("deep-health-check", "enabled"),
    "job_auto_restart": ("job-auto-restart", "enabled"),
    "training_operators": ("trainingOperators", "enabled"),
    "mpi_operator": ("mpi-operator", "enabled"),
    "nvidia_device_plugin": ("nvidia-device-plugin", "devicePlugin", "enabled"),
    "neuron_device_plugin": ("neuron-device-plugin", "devicePlugin", "enabled"),
    "efa_device_plugin": ("aws-efa-k8s-device-plugin", "devicePlugin", "enabled"),
    "hyperpod_patching": ("hyperpod-patching", "enabled"),
    "kuberay": ("kuberay", "enabled"),
    "inference_operator": ("inferenceOperators", "enabled"),
    "mlflow": ("mlflow", "enabled"),
}

@dataclass(frozen=True)
class HyperPodHelmReleaseProps:
    """Props of HyperPodHelmRelease.

    cluster: the EKS cluster - required.
    vpc_id, subnet_ids, security_group_id: where the installer runs. The subnets need egress to
        GitHub and the chart's registries (NAT); the group must reach the API endpoint - required.
    revision: full 40-hex commit id of the chart repository - required.
    sha256: SHA-256 of that commit's source archive. Default: not compared (the commit id still is).
    repository: GitHub owner/name holding helm_chart/HyperPodHelmChart. Default aws/sagemaker-hyperpod-cli.
    release_name: Helm release name. Default hyperpod-dependencies.
    namespace: namespace of the release. Default kube-system.
    components: component name -> installed, for names in COMPONENT_VALUES. Default: the chart's defaults.
    log_retention: retention of the installer's log group. Default one year.
    """

    cluster: eks.ICluster
    vpc_id: str
    subnet_ids: tuple[str, ...]
    security_group_id: str
    revision: str
    sha256: str | None = None
    repository: str = DEFAULT_REPOSITORY
    release_name: str = "hyperpod-dependencies"
    namespace: str = "kube-system"
    components: dict[str, bool] = field(default_factory=dict)
    log_retention: logs.RetentionDays = logs.RetentionDays.ONE_YEAR


def component_values(components: dict[str, bool]) -> dict[str, object]:
    """Nested chart values for the component toggles."""
    values: dict[str, object] = {}
    for name, enabled in sorted(components.items()):
        *parents, leaf = COMPONENT_VALUES[name]
        node = values
        for key in parents:
            node = node.setdefault(key, {})  # type: ignore[assignment]
        node[leaf] = enabled  # type: ignore[index]
    return values


class HyperPodHelmRelease(Construct):
    """Installer function, its cluster-admin access entry and the release custom resource."""

    def __init__(self, scope: Construct, construct_id: str, *, props: HyperPodHelmReleaseProps) -> None:
        super().__init__(scope, construct_id)
        _validate(props)
        stack = Stack.of(self)

        vpc, subnets = import_vpc_subnets(self, props.vpc_id, props.subnet_ids)
        installer = PythonHandlerProvider(self, "Installer", props=PythonHandlerProviderProps(
            handler_dir=str(HANDLER_DIR), description="Installs helm_chart/HyperPodHelmChart at a pinned revision",
            timeout=Duration.minutes(15), memory_mib=1024, ephemeral_storage_mib=2048,
            layers=(KubectlV35Layer(self, "KubectlLayer"),), vpc=vpc, vpc_subnets=subnets,
            security_groups=(ec2.SecurityGroup.from_security_group_id(self, "InstallerSecurityGroup",
                                                                      props.security_group_id, mutable=False),),
            log_retention=props.log_retention,
        ))
        role = installer.role
        role.add_to_policy(iam.PolicyStatement(actions=["eks:DescribeCluster"], resources=[props.cluster.cluster_arn]))
        self.function = installer.function
        self.access_entry = eks.AccessEntry(
            self, "InstallerAccess", cluster=props.cluster, principal=role.role_arn,
            access_policies=[eks.AccessPolicy.from_access_policy_name(
                "AmazonEKSClusterAdminPolicy", access_scope_type=eks.AccessScopeType.CLUSTER)],
        )
        self.resource = CustomResource(
            self, "Resource",
            service_token=installer.service_token,
            resource_type="Custom::HyperPodHelmRelease",
            properties={
                "ClusterName": props.cluster.cluster_name,
                "Region": stack.region,
                "Repository": props.repository,
                "Revision": props.revision,
                "Sha256": props.sha256 or "",
                "ReleaseName": props.release_name,
                "Namespace": props.namespace,
                "Values": json.dumps(component_values(props.components), sort_keys=True),
            },
        )
        # helm authenticates through the access entry, so it must exist before the first call.
        self.resource.node.add_dependency(self.access_entry)
        self.archive_sha256 = self.resource.get_att_string("ArchiveSha256")
        # The same cluster-admin installer applies Kubernetes manifests (KubernetesManifests) for other stacks.
        self.service_token = installer.service_token


def _validate(props: HyperPodHelmReleaseProps) -> None:
    if not re.fullmatch(r"[0-9a-f]{40}", props.revision):
        raise ValueError(f"revision must be a full 40-hex commit id, got {props.revision!r}")
    if props.sha256 is not None and not re.fullmatch(r"[0-9a-f]{64}", props.sha256):
        raise ValueError(f"sha256 must be 64 lower-case hex digits, got {props.sha256!r}")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", props.repository):
        raise ValueError(f"repository must be a GitHub owner/name, got {props.repository!r}")
    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,51}[a-z0-9])?", props.release_name):
        raise ValueError(f"release_name must be a Helm release name (lower-case DNS label, <= 53), got {props.release_name!r}")
    if not props.subnet_ids:
        raise ValueError("subnet_ids must name at least one subnet for the installer")
    unknown = set(props.components) - set(COMPONENT_VALUES)
    if unknown:
        raise ValueError(f"components names unknown components {sorted(unknown)}; known: {sorted(COMPONENT_VALUES)}")
