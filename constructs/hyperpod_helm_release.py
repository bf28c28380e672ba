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

from aws_cdk import CustomResource, Duration, RemovalPolicy, Size, Stack, aws_ec2 as ec2, aws_eks_v2 as eks
from aws_cdk import aws_iam as iam, aws_lambda as lambda_, aws_logs as logs, custom_resources as cr
from aws_cdk.lambda_layer_kubectl_v35 import KubectlV35Layer
from constructs import Construct

from hyperpod_constructs.imported_network import import_vpc_subnets
from hyperpod_constructs.nag_acknowledgements import acknowledge, managed_policy, ref, wildcard_resource

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

LAMBDA_VPC_ACTIONS = (
    "ec2:CreateNetworkInterface", "ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets",
    "ec2:DeleteNetworkInterface", "ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses",
)


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

        log_group = logs.LogGroup(self, "InstallerLogs", retention=props.log_retention,
                                  removal_policy=RemovalPolicy.DESTROY)
        role = iam.Role(self, "InstallerRole", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
                        description="Installs the HyperPod dependency Helm chart")
        role.add_to_policy(iam.PolicyStatement(actions=["eks:DescribeCluster"], resources=[props.cluster.cluster_arn]))
        role.add_to_policy(iam.PolicyStatement(actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                                               resources=[f"{log_group.log_group_arn}:*"]))
        # What Lambda needs to attach the function to the VPC (the managed VPC access policy, spelt out).
        role.add_to_policy(iam.PolicyStatement(actions=list(LAMBDA_VPC_ACTIONS), resources=["*"]))
        vpc, subnets = import_vpc_subnets(self, props.vpc_id, props.subnet_ids)
        self.function = lambda_.Function(
            self, "Installer",
            runtime=lambda_.Runtime.PYTHON_3_14,
            handler="index.on_event",
            code=lambda_.Code.from_asset(str(HANDLER_DIR), exclude=["__pycache__"]),
            layers=[KubectlV35Layer(self, "KubectlLayer")],
            role=role,
            timeout=Duration.minutes(15),
            memory_size=1024,
            ephemeral_storage_size=Size.mebibytes(2048),
            vpc=vpc,
            vpc_subnets=subnets,
            security_groups=[ec2.SecurityGroup.from_security_group_id(self, "InstallerSecurityGroup",
                                                                      props.security_group_id, mutable=False)],
            log_group=log_group,
            description="Installs helm_chart/HyperPodHelmChart at a pinned revision",
        )
        self.access_entry = eks.AccessEntry(
            self, "InstallerAccess", cluster=props.cluster, principal=role.role_arn,
            access_policies=[eks.AccessPolicy.from_access_policy_name(
                "AmazonEKSClusterAdminPolicy", access_scope_type=eks.AccessScopeType.CLUSTER)],
        )
        provider = cr.Provider(self, "Provider", on_event_handler=self.function,
                               log_group=logs.LogGroup(self, "ProviderLogs", retention=props.log_retention,
                                                       removal_policy=RemovalPolicy.DESTROY))
        self.resource = CustomResource(
            self, "Resource",
            service_token=provider.service_token,
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

        acknowledge(role, {
            wildcard_resource(f"{ref(log_group.node.default_child, 'Arn')}:*"):
                "Lambda creates its own log streams in the installer's log group; ':*' is the stream part",
            wildcard_resource("*"): "Lambda's VPC attachment calls EC2 ENI actions that accept no narrower resource",
        })
        framework = provider.node.find_child("framework-onEvent")
        acknowledge(framework.role, {
            managed_policy("service-role/AWSLambdaBasicExecutionRole"):
                "CDK's custom resource framework function; the managed policy only lets it write its own logs",
            wildcard_resource(f"{ref(self.function.node.default_child, 'Arn')}:*"):
                "the framework invokes the installer function and its versions; CDK writes this grant",
        })


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
