"""The HyperPod dependency Helm chart (aws/sagemaker-hyperpod-cli, helm_chart/HyperPodHelmChart)
as one release in kube-system, installed at deploy time by a custom resource.

Synth stays offline: the template only names the pinned commit, the chart folder's content digest and
one URL and SHA-256 per remote dependency. At deploy time a Lambda function in the cluster's VPC builds
the chart from those pinned bytes only and runs helm (helm_release_handler/). The function is a
cluster-admin (access entry), so what it may do is fixed here, in its environment: the cluster, chart
source, pins, release name and namespace; it refuses any event that asks for something else. It runs
in a security group of its own that may only open HTTPS connections, and the cluster's security group
lets it reach the API endpoint. A helm failure fails the resource with helm's output as the reason.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from aws_cdk import CustomResource, Duration, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_eks_v2 as eks
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from constructs import Construct

from hyperpod_constructs.imported_network import import_vpc_subnets
from hyperpod_constructs.nag_acknowledgements import acknowledge, nag_text, wildcard_resource
from hyperpod_constructs.private.kubectl_layers import kubectl_layer
from hyperpod_constructs.private.limits import COMMIT_ID, HELM_RELEASE_NAME, SHA256_HEX
from hyperpod_constructs.protection import retain
from hyperpod_constructs.python_handler_provider import PythonHandlerProvider, PythonHandlerProviderProps

HANDLER_DIR = Path(__file__).resolve().parent / "helm_release_handler"
DEFAULT_REPOSITORY = "aws/sagemaker-hyperpod-cli"
# CloudFormation waits this long for the installer's answer (at most 3600 s). The handler answers
# within Lambda's 15 minutes (it stops a minute early with a reason), so this only bounds a lost answer.
SERVICE_TIMEOUT = Duration.minutes(20)
HANDLER_TIMEOUT = Duration.minutes(15)
# The provider framework's waiter, for the resources that wait across invocations (SchedulableNode): one
# is_complete call per QUERY_INTERVAL, each a kubectl call or two; WAITER_TIMEOUT is the framework's maximum.
QUERY_INTERVAL, COMPLETE_TIMEOUT, WAITER_TIMEOUT = Duration.seconds(30), Duration.minutes(3), Duration.hours(1)

# Component toggles -> the chart value that switches each one (the chart's dependency conditions,
# Chart.yaml at a00b22d; tests check each against the chart).
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
    "inference_operator": ("inferenceOperators", "enabled"),
    "mlflow": ("mlflow", "enabled"),
}

# The device plugin's side of the nodes' GPU device isolation (lifecycle_scripts/steps/gpu_device_isolation.sh),
# as the nvidia-device-plugin 0.16.1 chart the HyperPod chart depends on reads them: deviceListStrategy becomes
# the plugin's DEVICE_LIST_STRATEGY, so it hands allocated GPUs over as mounts under
# /var/run/nvidia-container-devices; a non-empty securityContext replaces the chart's unprivileged one. The
# plugin finds the GPUs through the NVIDIA_VISIBLE_DEVICES=all of its own pod, which the toolkit then honours
# for privileged containers only: unprivileged, it would see no GPU and the node would offer none.
GPU_DEVICE_ISOLATION_VALUES: dict[str, object] = {
    "nvidia-device-plugin": {"deviceListStrategy": "volume-mounts", "securityContext": {"privileged": True}},
}
# MIG partitions: under the "mixed" strategy the device plugin advertises each MIG device of a node as
# nvidia.com/mig-<profile> (NVIDIA k8s-device-plugin documentation, "MIG strategies"), which is what the compute
# quotas' AcceleratorPartition counts and a job asks for; the 0.16.1 chart turns migStrategy into the plugin's
# (and feature discovery's) MIG_STRATEGY. Unset, the plugin's default "none" ignores MIG devices.
MIG_STRATEGY = "mixed"
# And the chart's edits (helm_release_handler/chart_patches.py): the health monitoring agent, which read the GPUs
# through its image's variable, gets them as a device-list mount, which the isolated toolkit reads.
GPU_DEVICE_ISOLATION_PATCHES = ("health-monitoring-agent-gpu-reader",)

# The chart's controllers with cluster-wide rights (pods and pods/exec in every namespace, Secrets listed
# everywhere; ClusterRoles of a00b22d): the MPI operator's sub-chart reads a node selector and tolerations from
# its values (charts/mpi-operator/templates/deployment.yaml); the training operator's template reads none, so a
# chart patch (helm_release_handler/chart_patches.py) makes it read the same two values of its sub-chart.
# The chart's own toleration of the MPI operator (values.yaml: it keeps running on a node HyperPod marks
# Unschedulable) is kept: a list value replaces the chart's list.
MPI_OPERATOR_TOLERATIONS = ({"key": "sagemaker.amazonaws.com/node-health-status", "operator": "Equal",
                             "value": "Unschedulable", "effect": "NoSchedule"},)
CONTROLLER_PLACEMENT_PATCHES = ("training-operator-placement",)


@dataclass(frozen=True)
class ChartDependency:
    """A remote dependency of the chart: its name in Chart.yaml, the URL of its packaged .tgz (inside the
    repository Chart.yaml names) and the SHA-256 its repository's index.yaml publishes for it."""

    name: str
    url: str
    sha256: str


@dataclass(frozen=True)
class HyperPodHelmReleaseProps:
    """Props of HyperPodHelmRelease.

    cluster: the EKS cluster; its cluster security group gets an HTTPS rule for the installer - required.
    kubernetes_version: the cluster's "1.NN"; picks the kubectl/helm layer within one minor - required.
    stack_name_prefix: the kit's stack names start with it (HyperPod-<env>-); the installer acts only on
        requests CloudFormation makes for resources of those stacks in this account and region - required.
    vpc_id, subnet_ids: where the installer runs. The subnets need HTTPS egress to GitHub and the
        dependencies' repositories (NAT) - required.
    revision: full 40-hex commit id of the chart repository - required.
    content_sha256: content digest of the chart folder at that commit (chart_digest.py) - required.
    dependencies: one pin per remote dependency the chart enables. Default: none (the installer then
        refuses a chart that enables a remote dependency).
    repository: GitHub owner/name holding helm_chart/HyperPodHelmChart. Default aws/sagemaker-hyperpod-cli.
    release_name: Helm release name; fixed once installed. Default hyperpod-dependencies.
    namespace: namespace of the release; fixed once installed. Default kube-system.
    components: component name -> installed, for names in COMPONENT_VALUES. Default: the chart's defaults.
    gpu_device_isolation: the NVIDIA device plugin hands GPUs over as volume mounts (GPU_DEVICE_ISOLATION_VALUES);
        the nodes' container toolkit must read them and ignore NVIDIA_VISIBLE_DEVICES from unprivileged
        containers (the lifecycle step of the same name), or GPU pods get no GPU. Default False.
    controller_node_selector: node labels the training and MPI operators are placed on (their nodes must
        carry every one). Default empty: the operators run on any node.
    controller_tolerations: tolerations the two operators get, for the taints of those nodes; needs
        controller_node_selector. Default none.
    mig_partitions: the NVIDIA device plugin advertises MIG partitions (migStrategy MIG_STRATEGY), for nodes whose
        GPUs a MIG manager partitions. Default False (the plugin's own default, which offers whole GPUs only).
    log_retention: retention of the installer's log group. Default one year.
    """

    cluster: eks.ICluster
    kubernetes_version: str
    stack_name_prefix: str
    vpc_id: str
    subnet_ids: tuple[str, ...]
    revision: str
    content_sha256: str
    dependencies: tuple[ChartDependency, ...] = ()
    repository: str = DEFAULT_REPOSITORY
    release_name: str = "hyperpod-dependencies"
    namespace: str = "kube-system"
    components: dict[str, bool] = field(default_factory=dict)
    gpu_device_isolation: bool = False
    controller_node_selector: dict[str, str] = field(default_factory=dict)
    controller_tolerations: tuple[dict[str, str], ...] = ()
    mig_partitions: bool = False
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


def release_values(components: dict[str, bool], gpu_device_isolation: bool, node_selector: dict[str, str] | None = None,
                   tolerations: tuple[dict[str, str], ...] = (), mig_partitions: bool = False) -> dict[str, object]:
    """The chart values the kit sets: the component toggles, with isolation the device plugin's strategy, with a
    node selector the operators' placement, and with MIG partitions the device plugin's MIG strategy."""
    values = component_values(components)
    if gpu_device_isolation:
        _merge(values, GPU_DEVICE_ISOLATION_VALUES)
    if node_selector:
        _merge(values, {
            "training-operators": {"nodeSelector": node_selector, "tolerations": list(tolerations)},
            "mpi-operator": {"mpiOperator": {"nodeSelector": node_selector,
                                             "tolerations": [*MPI_OPERATOR_TOLERATIONS, *tolerations]}},
        })
    if mig_partitions:
        _merge(values, {"nvidia-device-plugin": {"migStrategy": MIG_STRATEGY}})
    return values


def release_patches(gpu_device_isolation: bool, node_selector: dict[str, str] | None = None) -> tuple[str, ...]:
    """The chart patches the release's values need (helm_release_handler/chart_patches.py)."""
    return (GPU_DEVICE_ISOLATION_PATCHES if gpu_device_isolation else ()) + (
        CONTROLLER_PLACEMENT_PATCHES if node_selector else ())


def _merge(target: dict[str, object], extra: dict[str, object]) -> None:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)  # type: ignore[arg-type]
        else:
            target[key] = json.loads(json.dumps(value))  # a copy: the module's constant stays as it is


class HyperPodHelmRelease(Construct):
    """Installer function, its security group, cluster-admin access entry and the release custom resource."""

    def __init__(self, scope: Construct, construct_id: str, *, props: HyperPodHelmReleaseProps) -> None:
        super().__init__(scope, construct_id)
        _validate(props)
        stack = Stack.of(self)

        vpc, subnets = import_vpc_subnets(self, props.vpc_id, props.subnet_ids)
        # Its own group: HTTPS out only (EKS, STS, GitHub, chart repositories; the VPC's DNS resolver is
        # not subject to security groups), nothing in - not the node group, which opens every port to nodes.
        self.security_group = ec2.SecurityGroup(self, "SecurityGroup", vpc=vpc, allow_all_outbound=False,
                                                description="hyperpod-kit chart installer: HTTPS egress only")
        self.security_group.add_egress_rule(ec2.Peer.any_ipv4(), ec2.Port.tcp(443), "HTTPS to AWS APIs and chart sources")
        # EKS puts its cluster security group on the API endpoint's interfaces in the VPC.
        api_ingress = ec2.CfnSecurityGroupIngress(self, "ApiEndpointIngress", group_id=props.cluster.cluster_security_group_id,
                                                  source_security_group_id=self.security_group.security_group_id,
                                                  ip_protocol="tcp", from_port=443, to_port=443,
                                                  description="hyperpod-kit chart installer to the Kubernetes API")
        patches = release_patches(props.gpu_device_isolation, props.controller_node_selector)
        release = {
            "Repository": props.repository, "Revision": props.revision, "ContentSha256": props.content_sha256,
            "Dependencies": json.dumps({d.name: {"url": d.url, "sha256": d.sha256} for d in props.dependencies},
                                       sort_keys=True),
            "ReleaseName": props.release_name, "Namespace": props.namespace,
            "Values": json.dumps(release_values(props.components, props.gpu_device_isolation,
                                                props.controller_node_selector, props.controller_tolerations,
                                                props.mig_partitions),
                                 sort_keys=True),
            **({"Patches": json.dumps(list(patches))} if patches else {}),
        }
        installer = PythonHandlerProvider(self, "Installer", props=PythonHandlerProviderProps(
            handler_dir=str(HANDLER_DIR), description="Installs helm_chart/HyperPodHelmChart at a pinned revision",
            shared_modules=("cfn_anchor",),
            timeout=HANDLER_TIMEOUT, memory_mib=1024, ephemeral_storage_mib=2048,
            layers=(kubectl_layer(self, "KubectlLayer", props.kubernetes_version),), vpc=vpc, vpc_subnets=subnets,
            security_groups=(self.security_group,), log_retention=props.log_retention,
            is_complete=True, is_complete_timeout=COMPLETE_TIMEOUT, query_interval=QUERY_INTERVAL,
            total_timeout=WAITER_TIMEOUT,
        ))
        # What the installer may act on, fixed at synth; the handler refuses events that differ.
        stacks = {"Partition": stack.partition, "Account": stack.account, "StackPrefix": props.stack_name_prefix}
        installer_scope = stack.to_json_string(
            {"ClusterName": props.cluster.cluster_name, "Release": release, "Stacks": stacks})
        for function in installer.functions:
            function.add_environment("INSTALLER_SCOPE", installer_scope)
        role = installer.role
        role.add_to_policy(iam.PolicyStatement(actions=["eks:DescribeCluster"], resources=[props.cluster.cluster_arn]))
        # Every event is confirmed with CloudFormation (shared_handler/cfn_anchor.py), for the kit's own stacks only.
        kit_stacks = stack.format_arn(service="cloudformation", resource="stack",
                                      resource_name=f"{props.stack_name_prefix}*/*")
        role.add_to_policy(iam.PolicyStatement(
            actions=["cloudformation:DescribeStackResource", "cloudformation:DescribeStacks"], resources=[kit_stacks]))
        acknowledge(role, {wildcard_resource(nag_text(self, kit_stacks)): (
            "read-only calls on the kit's own stacks (HyperPod-<env>-*, every stack id): the installer asks "
            "CloudFormation whether an event is a real request of those stacks before it acts")})
        # Large manifest sets and every admission object come as S3 assets of the kit's deployments
        # (KubernetesManifests): the installer may read the bucket its own code was published to, and no other.
        assets = f"arn:{stack.partition}:s3:::{installer.function.node.default_child.code.s3_bucket}/*"
        role.add_to_policy(iam.PolicyStatement(actions=["s3:GetObject"], resources=[assets]))
        acknowledge(role, {wildcard_resource(nag_text(self, assets)): (
            "read-only on the CDK asset bucket the kit's deployments publish to: manifest sets are assets named by "
            "content hash, one per deploy, and a rollback reads the previous one")})
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
            service_timeout=SERVICE_TIMEOUT,
            properties={"ClusterName": props.cluster.cluster_name, "Region": stack.region, **release},
        )
        # Like the EKS add-ons (PreserveOnDelete): deleting the stack leaves the release on the retained cluster,
        # whose health checks, node recovery and device plugins run from it; a failed create still uninstalls.
        retain(self.resource.node.default_child)
        # helm authenticates through the access entry and reaches the endpoint through the ingress rule,
        # so both must exist before the first call.
        self.resource.node.add_dependency(self.access_entry, api_ingress)
        self.content_sha256 = self.resource.get_att_string("ContentSha256")
        # The same cluster-admin installer applies Kubernetes manifests (KubernetesManifests), waits for
        # deployments (DeploymentAvailable) and for a schedulable node (SchedulableNode) for other stacks.
        self.service_token = installer.service_token


def _validate(props: HyperPodHelmReleaseProps) -> None:
    if not re.fullmatch(COMMIT_ID, props.revision):
        raise ValueError(f"revision must be a full 40-hex commit id, got {props.revision!r}")
    if not re.fullmatch(SHA256_HEX, props.content_sha256):
        raise ValueError(f"content_sha256 must be 64 lower-case hex digits, got {props.content_sha256!r}")
    for dependency in props.dependencies:
        if not re.fullmatch(SHA256_HEX, dependency.sha256):
            raise ValueError(f"dependency {dependency.name}: sha256 must be 64 lower-case hex digits, got {dependency.sha256!r}")
        if not re.fullmatch(r"https://[^\s]+\.tgz", dependency.url):
            raise ValueError(f"dependency {dependency.name}: url must be an https URL of a .tgz, got {dependency.url!r}")
    if len({dependency.name for dependency in props.dependencies}) != len(props.dependencies):
        raise ValueError("dependencies pins a name twice")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", props.repository):
        raise ValueError(f"repository must be a GitHub owner/name, got {props.repository!r}")
    if not re.fullmatch(HELM_RELEASE_NAME, props.release_name):
        raise ValueError(f"release_name must be a Helm release name (lower-case DNS label, <= 53), got {props.release_name!r}")
    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", props.namespace):
        raise ValueError(f"namespace must be a Kubernetes namespace name, got {props.namespace!r}")
    if not re.fullmatch(r"[A-Za-z][-A-Za-z0-9]*-", props.stack_name_prefix):
        raise ValueError(f"stack_name_prefix must be a stack name prefix ending in '-', got {props.stack_name_prefix!r}")
    if not props.subnet_ids:
        raise ValueError("subnet_ids must name at least one subnet for the installer")
    if props.controller_tolerations and not props.controller_node_selector:
        raise ValueError("controller_tolerations without controller_node_selector would let the operators onto "
                         "tainted nodes without keeping them there; name the nodes' labels too")
    unknown = set(props.components) - set(COMPONENT_VALUES)
    if unknown:
        raise ValueError(f"components names unknown components {sorted(unknown)}; known: {sorted(COMPONENT_VALUES)}")
