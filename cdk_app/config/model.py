"""The environment config (config/<env>.yaml) as frozen pydantic models.

The models hold shape, types, formats and ranges; rules that involve more than one field (capacity,
names that must be unique, references between sections) live in cdk_app.validator so that each has
a stable code. Field descriptions (the docstring under each field) end up in config/schema.json for editors
and in the docs' config reference, read by cdk_app.config.field_docs only when those are written.
Scalars are strict: YAML `count: "3"` or `kubernetes_version: 1.30` (a float) are errors, not guesses.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, WrapValidator
from pydantic_core import PydanticCustomError

from cdk_app.config import batch_model, storage_model
from cdk_app.config.scalars import ScalarFloat
from cdk_app.config.types import (
    AZ_ID_PATTERN,
    ENVIRONMENT_PATTERN,
    IAM_PRINCIPAL_PATTERN,
    Bool,
    Float,
    Int,
    KitModel,
    SharingStrategy,
    Str,
)
from cdk_app.config.zone_ids import REGION_PATTERN
from hyperpod_constructs.private.limits import (
    ALARM_NAME,
    COMMIT_ID,
    HELM_RELEASE_NAME,
    IMAGE_ID,
    IMAGE_RELEASE_VERSION,
    MAX_ALARM_NAME_LENGTH,
    MAX_EBS_VOLUME_GIB,
    MAX_FLEXIBLE_TYPES,
    MAX_IMAGE_RELEASE_VERSION_LENGTH,
    MAX_INSTANCE_COUNT,
    MAX_ROLLBACK_ALARMS,
    MAX_SCHEDULE_EXPRESSION_LENGTH,
    MAX_WAIT_INTERVAL_SECONDS,
    MIN_EBS_VOLUME_GIB,
    SCHEDULE_EXPRESSION,
    SHA256_HEX,
    anchored,
)

# Largest amount a ComputeQuota resource takes (AWS::SageMaker::ComputeQuota schema in cfn-lint).
MAX_QUOTA_AMOUNT = 10_000_000


def _keep_yaml_text(value: object, handler: object) -> object:
    """Validate as a float but keep a ScalarFloat, whose YAML text gives exact decimal sums."""
    checked = handler(value)  # type: ignore[operator]
    return value if isinstance(value, ScalarFloat) else checked


def _no_bool(value: object) -> object:
    """A numeric choice refuses YAML booleans (`on` is True, which equals 1)."""
    if isinstance(value, bool):
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    return value


# A finite amount of a quota, as the YAML text wrote it.
QuotaAmount = Annotated[Float, Field(ge=0, le=MAX_QUOTA_AMOUNT, allow_inf_nan=False), WrapValidator(_keep_yaml_text)]

DeepHealthCheck = Literal["InstanceStress", "InstanceConnectivity"]
Toggle = Literal["Enabled", "Disabled"]
# Capabilities a team may be allowed beyond the Pod Security baseline set: IPC_LOCK lets EFA/NCCL pin
# memory for RDMA, SYS_RESOURCE raises resource limits (memlock) some launchers set; neither reaches the host.
# SYS_NICE: NUMA memory binding (numactl --membind, hwloc/Open MPI binding), which the runtime's default seccomp
# profile allows only with it (containerd contrib/seccomp: mbind, set_mempolicy, get_mempolicy); it also lets
# the team's processes raise their priority over other pods' on a shared node - grant it per team.
ExtraCapability = Literal["IPC_LOCK", "SYS_RESOURCE", "SYS_NICE"]

DEFAULT_TASK_GOVERNANCE_VERSION = "v1.6.0-eksbuild.1"
# aws/sagemaker-hyperpod-cli commit whose helm_chart/HyperPodHelmChart the kit installs by default, and
# its pins (hyperpod-kit chart-sha256 prints them): the chart folder's content digest, and each remote
# dependency's .tgz with the SHA-256 its repository's index.yaml publishes. cert-manager (OCI, disabled
# by the chart's values) is left out: the installer drops disabled remote dependencies.
DEFAULT_HELM_CHART_REVISION = "a00b22d17ea928a6e39a43bd2efdafe01b1005ea"
DEFAULT_HELM_CHART_CONTENT_SHA256 = "c23c8e64d6aa4531122dc13b9358b58067140ec36a6a4cad4d6592131bf00931"
DEFAULT_HELM_CHART_DEPENDENCIES = {
    "nvidia-device-plugin": ("https://nvidia.github.io/k8s-device-plugin/stable/nvidia-device-plugin-0.16.1.tgz",
                             "a77b4e81fd56a11e39536500a7a6538899b952c4b4370200280bce313dffda6a"),
    "aws-efa-k8s-device-plugin": ("https://aws.github.io/eks-charts/aws-efa-k8s-device-plugin-v0.5.20.tgz",
                                  "252967e2083799987d576ac86986b3316ce350dd1da2d07a8b83b5c4288fbcf4"),
}
# The health monitoring agent image tag the default revision's chart installs (its health-monitoring-agent
# subchart's imageTag default; tests/unit/config/test_model.py reads it from the pinned chart).
DEFAULT_HELM_CHART_HEALTH_AGENT_TAG = "1.0.1892.0_1.0.424.0"
SHA256_PATTERN = anchored(SHA256_HEX)
DEFAULT_BORROW_LIMIT = 50


class ExistingSubnet(KitModel):
    subnet_id: Annotated[Str, Field(pattern=r"^subnet-[0-9a-f]{8,17}$")]
    """Id of a private subnet with a route to a NAT gateway."""
    availability_zone_id: Annotated[Str, Field(pattern=AZ_ID_PATTERN)]
    """Availability zone id of the subnet, e.g. use1-az4."""


class Network(KitModel):
    vpc_cidr: Annotated[Str, Field(pattern=r"^([0-9]{1,3}\.){3}[0-9]{1,3}/(1[6-9]|20)$")] = "10.192.0.0/16"
    """CIDR of a new VPC (/16 to /20); ignored when existing_vpc_id is set. HyperPod nodes take many IPs."""
    existing_vpc_id: Annotated[Str, Field(pattern=r"^vpc-[0-9a-f]{8,17}$")] | None = None
    """Use this VPC instead of creating one; then existing_subnets is required."""
    existing_subnets: tuple[ExistingSubnet, ...] = ()
    """Private subnets of existing_vpc_id, at least one in each instance group's availability zone."""
    cluster_zone_ids: tuple[Annotated[Str, Field(pattern=AZ_ID_PATTERN)], ...] = ()
    """Zones whose subnets the EKS control plane and the HyperPod cluster itself use, fixed when the clusters
    are created (the HyperPod cluster's VpcConfig cannot change without replacing it). Instance groups may
    use any zone of availability_zone_ids. Default: the first two of availability_zone_ids. Record them and
    never change them; add zones by appending to availability_zone_ids."""


class Eks(KitModel):
    kubernetes_version: Annotated[Str, Field(pattern=r"^1\.[0-9]{2}$")] = "1.33"
    """Kubernetes version of the EKS cluster, quoted ("1.33"); task governance needs 1.30 or later."""
    endpoint_access: Literal["public", "private", "public_and_private"] = "private"
    """Who can reach the Kubernetes API endpoint: private (in the VPC only, as the kit's own deploy does),
    public_and_private (also from public_access_cidrs) or public (no private endpoint: the nodes reach it
    through NAT, so public_access_cidrs must be [0.0.0.0/0])."""
    public_access_cidrs: tuple[Annotated[Str, Field(pattern=r"^([0-9]{1,3}\.){3}[0-9]{1,3}/[0-9]{1,2}$")], ...] = ()
    """CIDRs allowed to reach a public endpoint; required for one (0.0.0.0/0, anywhere, is warned about)."""
    admin_principals: tuple[Annotated[Str, Field(pattern=IAM_PRINCIPAL_PATTERN)], ...] = ()
    """IAM role or user ARNs that become cluster administrators through EKS access entries."""


class Taint(KitModel):
    key: Annotated[Str, Field(min_length=1, max_length=316)]
    """Taint key."""
    value: Annotated[Str, Field(max_length=63)] | None = None
    """Taint value."""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
    """Taint effect."""
    teams: tuple[Str, ...] = ()
    """Teams whose pods may tolerate this taint (e.g. a group dedicated to them). Default none: the admission
    guardrail refuses a team pod's toleration that matches it (key, value, effect as Kubernetes matches them),
    so only the administrators' own workloads run on the group. Taints keyed by a device resource
    (nvidia.com/..., aws.amazon.com/neuron..., vpc.amazonaws.com/efa) are the exception: the API server itself
    adds their toleration to every pod that asks for the device, so they keep only other pods off."""


# The AMI lifecycle of an instance group: AWS::SageMaker::Cluster's ImageId, ImageReleaseVersion,
# ScheduledUpdateConfig and AutoPatchConfig (cfn-lint's schema); cdk_app.domain.rolling_updates holds their arithmetic.
class BatchSize(KitModel):
    type: Literal["INSTANCE_COUNT", "CAPACITY_PERCENTAGE"]
    """INSTANCE_COUNT: a number of instances; CAPACITY_PERCENTAGE: a percent of the group's instances (the kit
    counts a percent rounded up, at least one instance: 25 % of 6 is 2)."""
    # No batch holds more instances than a group can (InstanceCount's maximum; the schema gives Value none).
    value: Annotated[Int, Field(ge=1, le=MAX_INSTANCE_COUNT)]
    """Instances, or percent (1-100), SageMaker updates at a time."""


# The kit's batch when a rolling update names none: one instance at a time (without a rolling policy
# SageMaker updates every instance of the group at once).
DEFAULT_BATCH_SIZE = BatchSize.model_construct(type="INSTANCE_COUNT", value=1)


class RollingDeployment(KitModel):
    """How SageMaker rolls a new AMI through a group (DeploymentConfig): in batches, waiting between them,
    rolling back when an alarm fires."""

    maximum_batch_size: BatchSize = DEFAULT_BATCH_SIZE
    """Most instances updated at a time (RollingUpdatePolicy.MaximumBatchSize); they drain and reboot onto the
    new AMI together. Default: one instance. The validator refuses a batch that takes the group's instance type
    below what the teams' quotas reserve (HPK520)."""
    rollback_maximum_batch_size: BatchSize | None = None
    """Most instances rolled back at a time (RollbackMaximumBatchSize). Default: SageMaker's."""
    wait_interval_seconds: Annotated[Int, Field(ge=0, le=MAX_WAIT_INTERVAL_SECONDS)] | None = None
    """Seconds SageMaker waits between batches (0-3600), watching the rollback alarms. Default: SageMaker's."""
    rollback_alarms: Annotated[tuple[Annotated[Str, Field(min_length=1, max_length=MAX_ALARM_NAME_LENGTH,
                                                          pattern=ALARM_NAME)], ...],
                               Field(max_length=MAX_ROLLBACK_ALARMS)] = ()
    """Names of CloudWatch alarms (this account and region, at most 10) whose ALARM state rolls the update
    back (AutoRollbackConfiguration). The execution role may read them (cloudwatch:DescribeAlarms)."""


class ScheduledUpdate(KitModel):
    """When SageMaker updates the group to the newest AMI (ScheduledUpdateConfig)."""

    schedule_expression: Annotated[Str, Field(max_length=MAX_SCHEDULE_EXPRESSION_LENGTH,
                                              pattern=anchored(SCHEDULE_EXPRESSION))]
    """cron(Minutes Hours Day-of-month Month Day-of-week Year) in UTC, e.g. cron(0 4 ? * SUN *): Sundays 04:00."""
    deployment: RollingDeployment = RollingDeployment.model_construct()
    """Batches, wait and rollback alarms of the update. Default: one instance at a time."""


class AutoPatch(KitModel):
    """Automatic security patches of the group's AMI (AutoPatchConfig)."""

    patching_strategy: Literal["WhenIdle", "WhenAllIdle"]
    """WhenIdle cordons every instance and patches each once it runs no job (uncordoned right after);
    WhenAllIdle cordons every instance and patches them all once all are idle. Instances that never become idle
    keep the previous AMI."""
    deployment: RollingDeployment | None = None
    """Batches, wait and rollback alarms of the patches (botocore: for a rolling patching strategy). Default: none."""


class InstanceGroup(KitModel):
    name: Str
    """Instance group name: letters, digits and single hyphens, 1-63 characters."""
    instance_type: Str
    """SageMaker HyperPod instance type, e.g. ml.p5.48xlarge."""
    count: Annotated[Int, Field(ge=0, le=MAX_INSTANCE_COUNT)]
    """Number of instances."""
    threads_per_core: Annotated[Literal[1, 2], BeforeValidator(_no_bool)] = 1
    """1 turns hyper-threading off (recommended for training), 2 turns it on."""
    ebs_volume_gib: Annotated[Int, Field(ge=MIN_EBS_VOLUME_GIB, le=MAX_EBS_VOLUME_GIB)] = 500
    """Secondary EBS volume per instance, mounted at /opt/sagemaker."""
    deep_health_checks: tuple[DeepHealthCheck, ...] | None = None
    """Deep health checks run when a node joins. Default: InstanceStress on GPU and Trainium types, and
    InstanceConnectivity as well on those with EFA in a group of 2 or more; none on CPU types. An empty list turns
    them off."""
    training_plan_arn: Annotated[Str, Field(pattern=r"^arn:aws[a-z-]*:sagemaker:[a-z0-9-]+:[0-9]{12}:training-plan/.+$")] | None = None
    """SageMaker training plan that provides the capacity."""
    availability_zone_id: Annotated[Str, Field(pattern=AZ_ID_PATTERN)] | None = None
    """Availability zone id holding the group's capacity. Default: the environment's first."""
    labels: dict[Str, Annotated[Str, Field(max_length=63)]] = {}
    """Kubernetes labels put on the group's nodes."""
    taints: tuple[Taint, ...] = ()
    """Kubernetes taints put on the group's nodes."""
    # The AMI lifecycle (issue 31): kept together, after the other fields.
    image_id: Annotated[Str, Field(min_length=7, max_length=21, pattern=anchored(IMAGE_ID))] | None = None
    """AMI of the group's instances: ami-... (a custom AMI: unencrypted, owned by this account, one volume) or
    default (HyperPod's latest). Default: SageMaker's choice (HyperPod's AMI for the Kubernetes version)."""
    image_release_version: Annotated[Str, Field(max_length=MAX_IMAGE_RELEASE_VERSION_LENGTH,
                                                pattern=anchored(IMAGE_RELEASE_VERSION))] | None = None
    """Version of the HyperPod-managed AMI, MAJOR.MINOR.PATCH in quotes ("1.2.3"). Changing it updates the group's
    software at the next deploy (`plan` says how many nodes drain at a time). Default: the latest at creation."""
    scheduled_update: ScheduledUpdate | None = None
    """Recurring AMI updates in rolling batches. Default: none (updates happen when you run them)."""
    auto_patch: AutoPatch | None = None
    """Automatic security patches of the AMI. Default: none."""
    # Flexible, Spot and autoscaled capacity (AWS::SageMaker::Cluster's InstanceRequirements, CapacityRequirements,
    # MinInstanceCount; the cluster's AutoScaling): the validator counts what each gives as capacity
    # (cdk_app/domain/capacity.py), guaranteed or best-effort.
    fallback_instance_types: Annotated[tuple[Str, ...], Field(max_length=MAX_FLEXIBLE_TYPES - 1)] = ()
    """More instance types the group may run when instance_type has no capacity, in order of preference: a
    flexible group (InstanceRequirements; HyperPod tries "the first instance type in the list and falls back to
    subsequent types if capacity is unavailable"). Its capacity is best-effort for every type it lists."""
    capacity_type: Literal["OnDemand", "Spot"] | None = None
    """Spot runs the group on Spot capacity, which EC2 may take back at any time: never counted as guaranteed.
    Default: none written (On-Demand, as HyperPod had before CapacityRequirements)."""
    min_count: Annotated[Int, Field(ge=0, le=MAX_INSTANCE_COUNT)] | None = None
    """Instances the group needs to become InService (at most count); HyperPod rolls a group back that does not
    reach it within 3 hours. It guarantees nothing afterwards. Default: none (every instance)."""
    max_count: Annotated[Int, Field(ge=1, le=MAX_INSTANCE_COUNT)] | None = None
    """Hand the group to HyperPod's managed Karpenter (needs hyperpod.autoscaling), which scales it between 0 and
    this many instances as pending pods need them; count must then be 0. Its capacity is best-effort: the
    validator counts max_count against the quotas and none of it as guaranteed."""


class HelmComponents(KitModel):
    """Components of the HyperPod dependency chart; the defaults are the chart's own."""

    health_monitoring_agent: Bool = True
    """Health monitoring agent: reports node faults so that automatic node recovery can act."""
    deep_health_check: Bool = True
    """Runs deep health checks on nodes as they join."""
    job_auto_restart: Bool = True
    """Restarts PyTorchJobs annotated for auto-resume after a node is replaced."""
    training_operators: Bool = True
    """Kubeflow training operator (PyTorchJob)."""
    mpi_operator: Bool = True
    """MPI operator (MPIJob)."""
    nvidia_device_plugin: Bool = True
    """NVIDIA device plugin (GPU resources)."""
    neuron_device_plugin: Bool = True
    """AWS Neuron device plugin (Trainium and Inferentia resources)."""
    efa_device_plugin: Bool = True
    """EFA device plugin (vpc.amazonaws.com/efa resources)."""
    hyperpod_patching: Bool = True
    """Permissions HyperPod needs to patch nodes."""
    inference_operator: Bool = False
    """HyperPod inference operator. At a00b22d it needs remote charts the kit does not pin (the installer refuses it)."""
    mlflow: Bool = False
    """MLflow integration."""


class ChartDependencyPin(KitModel):
    url: Annotated[Str, Field(pattern=r"^https://[^\s]+\.tgz$")]
    """URL of the packaged dependency (.tgz), inside the repository the chart's Chart.yaml names."""
    sha256: Annotated[Str, Field(pattern=SHA256_PATTERN)]
    """SHA-256 of that .tgz: the `digest` its repository's index.yaml publishes."""


class HelmChart(KitModel):
    revision: Annotated[Str, Field(pattern=anchored(COMMIT_ID))] = DEFAULT_HELM_CHART_REVISION
    """Full commit id of aws/sagemaker-hyperpod-cli whose helm_chart/HyperPodHelmChart is installed."""
    content_sha256: Annotated[Str, Field(pattern=SHA256_PATTERN)] | None = None
    """Content digest of that commit's helm_chart/HyperPodHelmChart folder (README: "Chart pins"); the
    installer refuses a chart that differs. Required unless revision is the kit's default (then the kit's pin).
    Print it with `hyperpod-kit chart-sha256`."""
    dependencies: dict[Annotated[Str, Field(pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")], ChartDependencyPin] | None = None
    """Pin of each remote dependency the chart enables, by its name in Chart.yaml; disabled ones are dropped.
    Required unless revision is the kit's default (then the kit's pins). Print them with `hyperpod-kit chart-sha256`."""
    release_name: Annotated[Str, Field(pattern=anchored(HELM_RELEASE_NAME))] = "hyperpod-dependencies"
    """Helm release name in kube-system. Fixed once installed: the installer refuses a change (a second
    release would collide with the first); the validator cannot see the installed name (not even with --live)."""
    components: HelmComponents = HelmComponents.model_construct()
    """Which components of the chart are installed."""

    def pins(self) -> tuple[str | None, dict[str, ChartDependencyPin] | None]:
        """(content digest, dependency pins) in force: the config's, else the kit's for its default revision."""
        default = self.revision == DEFAULT_HELM_CHART_REVISION
        content = self.content_sha256 or (DEFAULT_HELM_CHART_CONTENT_SHA256 if default else None)
        dependencies = self.dependencies
        if dependencies is None and default:
            # The kit's own pins (tests check them), not validated again on every `validate`.
            dependencies = {name: ChartDependencyPin.model_construct(url=url, sha256=digest)
                            for name, (url, digest) in DEFAULT_HELM_CHART_DEPENDENCIES.items()}
        return content, dependencies


class Lifecycle(KitModel):
    """Settings of the node lifecycle scripts, written next to them as provisioning.env."""

    move_data_roots: Bool = True
    """Keep containerd's and kubelet's data (images, pods' emptyDir volumes) off the root volume: on the instance
    store NVMe (/opt/dlami/nvme) where the instance has one, else on the secondary EBS volume (/opt/sagemaker)."""
    extra_packages: tuple[Annotated[Str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9+._-]{0,99}$")], ...] = ()
    """OS packages installed on every node (dnf or apt-get); only missing ones are installed."""
    gpu_device_isolation: Bool = False
    """Node-level GPU isolation: the chart's device plugin hands GPUs over as volume mounts and GPU nodes'
    container toolkit ignores NVIDIA_VISIBLE_DEVICES in containers without CAP_SYS_ADMIN (set in the image, as
    every CUDA image does), so a container sees only the GPUs it requested and no manifest needs to hide them.
    The HyperPod health monitoring agent, which reads the GPUs through its image's variable and on which node
    recovery depends, is given the node's GPUs the way the device plugin hands them over (a device-list mount),
    so that it keeps them. `hyperpod-kit init` writes it on for a new environment. Off by default because switching it in a deployed
    environment changes the chart and drops the gpu-visibility guardrail at the next deploy, but the toolkit only
    on nodes created afterwards: until the GPU nodes are replaced (aws sagemaker update-cluster-software), their
    GPU pods do not start and a GPU-less container whose image names the GPUs sees them. `plan` refuses the switch
    until it is named with --allow-replace."""
    seccomp_default: Bool = True
    """The kubelet's seccompDefault on every node: a container that names no seccompProfile runs under the
    container runtime's default profile (RuntimeDefault) instead of Unconfined. Teams change nothing; a workload
    that needs a syscall the default profile blocks names its own profile (Localhost) or asks the
    administrators. Applies to nodes created or replaced after the change (the lifecycle scripts run then)."""
    block_pod_imds: Bool = True
    """Pods may not reach EC2 instance metadata (169.254.169.254) and so not the node role's credentials: an
    iptables rule on every node drops what pods send there (the EKS user guide's rule: FORWARD, from the VPC CNI's
    eni+ interfaces), set before every kubelet start. The node itself and host-network pods (aws-node, kube-proxy,
    the EKS Pod Identity agent, the CloudWatch agent, Fluent Bit) keep it. Pods that need AWS use EKS Pod
    Identity. Applies to nodes created or replaced after the change."""


class HyperPod(KitModel):
    cluster_name: Str | None = None
    """HyperPod cluster name. Default: hyperpod-<environment>. Changing it replaces the cluster."""
    node_recovery: Literal["Automatic", "None"] = "Automatic"
    """Automatic replaces or reboots nodes that fail health checks."""
    instance_groups: Annotated[tuple[InstanceGroup, ...], Field(min_length=1, max_length=100)]
    """Instance groups of the cluster (1-100)."""
    helm_chart: HelmChart = HelmChart.model_construct()
    """The HyperPod dependency Helm chart, installed into kube-system before the cluster is created."""
    lifecycle: Lifecycle = Lifecycle.model_construct()
    """Optional steps of the lifecycle scripts every node runs when it is created or replaced."""
    autoscaling: Bool = False
    """HyperPod's managed Karpenter (AutoScaling Mode Enable): the kit creates the cluster role it acts as and a
    HyperpodNodeClass over the instance groups with max_count and a NodePool per instance type they run, each
    limited to what the teams' queues may admit on its type. Needs node_recovery Automatic and the chart's health
    monitoring agent; the system instance group cannot be autoscaled."""
    system_instance_group: Str | None = None
    """Instance group (by name) of the administrators' system nodes: the chart's training operator and MPI
    operator, which may create pods and read Secrets in every namespace, run only there (a node selector of the
    group's labels and a toleration of its taints). The group needs labels no other group carries all of, and a
    NoSchedule or NoExecute taint that lists no team, so that no team pod shares a node with the operators'
    service-account tokens. Give it an instance type no team has a quota for and keep an untainted group for
    Kueue's controller. Default: none; the operators run on any node."""


GovernanceType = Literal["native", "api"]


class GovernanceTypes(KitModel):
    """How each governance resource is deployed, recorded once per environment: the type of a resource
    cannot change under its logical id, so a choice made from region data at synth would flip when a
    dependency upgrade adds the native type to the region, and CloudFormation would refuse the update."""

    cluster_policy: GovernanceType | None = None
    """native: AWS::SageMaker::ClusterSchedulerConfig; api: a custom resource calling the SageMaker API.
    Required where the environment has a HyperPod cluster: unrecorded, the validator refuses the config
    (HPK312) and names the value cfn-lint's region data gives."""
    compute_quota: GovernanceType | None = None
    """native: AWS::SageMaker::ComputeQuota; api: a custom resource calling the SageMaker API.
    Required where the environment has a HyperPod cluster: unrecorded, the validator refuses the config
    (HPK312) and names the value cfn-lint's region data gives."""


class TaskGovernance(KitModel):
    addon_version: Annotated[Str, Field(pattern=r"^v[0-9]+\.[0-9]+\.[0-9]+-eksbuild\.[0-9]+$")] = DEFAULT_TASK_GOVERNANCE_VERSION
    """Version of the amazon-sagemaker-hyperpod-taskgovernance EKS add-on."""
    cloudformation_types: GovernanceTypes = GovernanceTypes.model_construct()
    """Native CloudFormation type or SageMaker API custom resource, per governance resource. Never change
    it for a deployed environment (CloudFormation refuses a new type under the same logical id)."""
    team_stacks: Annotated[Int, Field(ge=0, le=100)] = 0
    """Team stacks HyperPod-<env>-teams-<k>: 0 keeps every team's quota, access and RBAC in the governance
    stack; N > 0 places each team in stack (CRC-32 of its name) mod N, so adding or removing a team moves
    no other. Fixed for the life of the environment: changing it moves most teams' quotas (delete and
    create; README: Many teams)."""


class PriorityClass(KitModel):
    name: Str
    """Class name; jobs name it as <name>-priority."""
    weight: Annotated[Int, Field(ge=0, le=100)]
    """Higher weight runs first and may preempt lower weights."""


class ClusterPolicy(KitModel):
    priority_classes: tuple[PriorityClass, ...] = ()
    """Task priority classes (at most 10); none means first come, first served."""
    fair_share: Toggle = "Enabled"
    """Enabled shares idle compute by team fair-share weight; Disabled is first come, first served."""
    idle_resource_sharing: Toggle = "Enabled"
    """Whether idle capacity may be lent and borrowed at all; Enabled also lends the capacity no team holds."""
    require_priority_class: Bool = False
    """Refuse (admission guardrail) a team workload without a priority-class label; off, such a workload
    runs at the lowest priority."""


# MIG profiles a compute quota takes (AcceleratorPartitionConfig.Type: the enum of cfn-lint's
# AWS::SageMaker::ComputeQuota schema and of botocore's MIGProfileType; tests compare them). Which ones an
# instance type's GPU offers is cdk_app.domain.mig_profiles' matter (the validator's HPK430).
MigProfileType = Literal[
    "mig-1g.5gb", "mig-1g.10gb", "mig-1g.18gb", "mig-1g.20gb", "mig-1g.23gb", "mig-1g.35gb", "mig-1g.45gb",
    "mig-1g.47gb", "mig-2g.10gb", "mig-2g.20gb", "mig-2g.35gb", "mig-2g.45gb", "mig-2g.47gb", "mig-3g.20gb",
    "mig-3g.40gb", "mig-3g.71gb", "mig-3g.90gb", "mig-3g.93gb", "mig-4g.20gb", "mig-4g.40gb", "mig-4g.71gb",
    "mig-4g.90gb", "mig-4g.93gb", "mig-7g.40gb", "mig-7g.80gb", "mig-7g.141gb", "mig-7g.180gb", "mig-7g.186gb",
]


class AcceleratorPartition(KitModel):
    type: MigProfileType
    """MIG profile, e.g. mig-1g.10gb: one the instance type's GPU offers."""
    count: Annotated[Int, Field(ge=0, le=MAX_QUOTA_AMOUNT)]
    """Partitions of that profile; never more than the instance groups partitioned into it give."""


class QuotaEntry(KitModel):
    instance_type: Str
    """Instance type of the cluster this entry reserves."""
    count: Annotated[Int, Field(ge=0, le=MAX_QUOTA_AMOUNT)] | None = None
    """Whole instances."""
    accelerators: Annotated[Int, Field(ge=0, le=MAX_QUOTA_AMOUNT)] | None = None
    """GPUs or Trainium devices; vCPU and memory are filled in the instance's ratio."""
    vcpu: QuotaAmount | None = None
    """vCPUs; memory is filled in the instance's ratio unless memory_gib is given. Without accelerators or
    count the entry gets no accelerators (SageMaker sets them to 0)."""
    memory_gib: QuotaAmount | None = None
    """Memory in GiB; alone, vCPU is filled in the instance's ratio (and accelerators are 0)."""
    accelerator_partition: AcceleratorPartition | None = None
    """MIG partitions (GPU slices) of the instance type, which instance groups of the type provide by their
    nvidia.com/mig.config label. In absolute_borrow_limits: the most partitions the team borrows."""


# A Kubernetes quantity as the caps below are written: a plain number of at most six digits (three decimals),
# with a decimal (m, k, M, G, T) or binary (Ki, Mi, Gi, Ti) suffix - a subset of resource.Quantity's grammar
# that the API server's quantity() always parses.
CapQuantity = Annotated[Str, Field(pattern=r"^[0-9]{1,6}(\.[0-9]{1,3})?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$")]


class UnqueuedPodResources(KitModel):
    """CPU, memory and local disk a pod of an unqueued workload (Deployment, StatefulSet, ReplicaSet) may ask for: Kueue counts
    none of it, so these caps, the Deployment count of the namespace's object quota (20) and at most 3 replicas
    bound what a team holds outside its quota. Defaults: an etcd member (etcd's hardware guide: 2 CPUs and 8 GB for
    a small cluster, the kit's own rendezvous asks for 250m and 256Mi) or a TensorBoard fits."""

    container_cpu: CapQuantity = "2"
    """Most CPU a container may request or be limited to."""
    container_memory: CapQuantity = "8Gi"
    """Most memory a container may request or be limited to."""
    pod_cpu: CapQuantity = "2"
    """Most CPU a pod's containers and init containers may request together (a limit counts where no request is set)."""
    pod_memory: CapQuantity = "8Gi"
    """Most memory a pod's containers and init containers may request together (a limit counts where no request is set)."""
    container_ephemeral_storage: CapQuantity = "20Gi"
    """Most local disk (ephemeral-storage: writable layer, logs, emptyDir) a container may request or be limited
    to. The scheduler reserves it from the node's allocatable disk that queued jobs' pods need too; 20Gi holds an
    etcd member at its suggested largest backend (8 GB) with its write-ahead log and snapshots."""
    pod_ephemeral_storage: CapQuantity = "20Gi"
    """Most local disk a pod's containers and init containers may request together (a limit counts where no
    request is set)."""


class Team(KitModel):
    name: Str
    """Team name: lower-case letters, digits and hyphens, at most 40 characters (namespace hyperpod-ns-<name>)."""
    fair_share_weight: Annotated[Int, Field(ge=0, le=100)] = 0
    """Higher weight gets idle compute sooner."""
    sharing_strategy: SharingStrategy = "LendAndBorrow"
    """LendAndBorrow lends idle quota and borrows; Lend only lends; DontLend keeps its quota to itself."""
    borrow_limit: Annotated[Int, Field(ge=1, le=500)] | None = None
    """Percent of the team's quota it may borrow on top (LendAndBorrow only). Default: 50."""
    preempt_team_tasks: Literal["Never", "LowerPriority"] = "LowerPriority"
    """Whether the team's higher-priority tasks preempt its own lower-priority ones."""
    quota: tuple[QuotaEntry, ...] = ()
    """Reserved compute per instance type (at most 15 entries)."""
    absolute_borrow_limits: tuple[QuotaEntry, ...] = ()
    """Per instance type, the most the team may borrow, in place of borrow_limit's percent on that type
    (LendAndBorrow only; at most 15 entries, amounts as in quota)."""
    principals: tuple[Annotated[Str, Field(pattern=IAM_PRINCIPAL_PATTERN)], ...] = ()
    """IAM principals allowed to act as this team."""
    default_priority_class: Str | None = None
    """Priority class `hyperpod-kit job` gives the team's jobs when --priority is not given; must be one the
    team may use."""
    priority_classes: tuple[Str, ...] | None = None
    """Priority classes the team's workloads may name (admission guardrail). Default: every class of the
    cluster policy."""
    allowed_capabilities: tuple[ExtraCapability, ...] = ()
    """Linux capabilities the team's containers may add beyond the Pod Security baseline set (IPC_LOCK for
    EFA/NCCL memory pinning)."""
    unqueued_pods: UnqueuedPodResources = UnqueuedPodResources.model_construct()
    """Caps on the CPU, memory and local disk of the team's Deployments' pods, which no quota counts (admission guardrail)."""
    enabled: Bool = True
    """Disabled keeps the allocation but stops enforcing it."""
    team_stack: Annotated[Int, Field(ge=0, le=99)] | None = None
    """Team stack (0 to task_governance.team_stacks - 1) for a new team whose hashed stack is full. Default:
    the stack its name hashes to. Set it only when adding the team: changing it moves the team's quota."""
    allow_cross_account: Bool = False
    """Allow principals of other AWS accounts to act as this team (they are refused by default)."""


class SharedPool(KitModel):
    name: Str = "shared"
    """Team name of the pool."""
    fair_share_weight: Annotated[Int, Field(ge=0, le=100)] = 0
    """Fair-share weight of the pool."""
    sharing_strategy: Literal["Lend", "LendAndBorrow"] = "Lend"
    """The pool lends its quota to every team that borrows."""


class Observability(KitModel):
    enabled: Bool = True
    """Install the amazon-cloudwatch-observability EKS add-on (Container Insights)."""
    kueue_metrics: Bool = True
    """Collect Kueue metrics (queue depth, admitted and pending workloads per team) into Container Insights."""
    addon_version: Annotated[Str, Field(pattern=r"^v[0-9]+\.[0-9]+\.[0-9]+-eksbuild\.[0-9]+$")] | None = None
    """Version of the amazon-cloudwatch-observability add-on (Kueue metrics need v2.4.0-eksbuild.1 or later).
    Default: the version EKS picks for the cluster's Kubernetes version."""


class AcknowledgedWarning(KitModel):
    """A warning this environment keeps on purpose, with the reason: `validate` prints it as acknowledged and
    `--strict` lets it pass. Only warnings: an error cannot be acknowledged (HPK030)."""

    code: Annotated[Str, Field(pattern=r"^HPK[0-9]{3}$")]
    """The warning's code, e.g. HPK113."""
    path: Str | None = None
    """The field the warning is at, as validate prints it (e.g. eks.public_access_cidrs). Default: every
    warning of the code in this file."""
    reason: Annotated[Str, Field(min_length=1, max_length=500, pattern=r"\S")]
    """Why the environment keeps it, for the next reader: validate prints it beside the warning."""


class KitConfig(KitModel):
    """One environment of hyperpod-kit."""

    environment: Annotated[Str, Field(pattern=ENVIRONMENT_PATTERN)]
    """Environment name: the stacks are called HyperPod-<environment>-*."""
    account: Annotated[Str, Field(pattern=r"^[0-9]{12}$")]
    """AWS account id, quoted."""
    region: Annotated[Str, Field(pattern=REGION_PATTERN)]
    """AWS region, e.g. us-east-1."""
    availability_zone_ids: Annotated[tuple[Annotated[Str, Field(pattern=AZ_ID_PATTERN)], ...], Field(max_length=6)] = ()
    """Availability zone ids (not names) of the environment, e.g. [use1-az4, use1-az6]. Required with hyperpod;
    a Batch-only environment has no VPC and lists none."""
    network: Network = Network.model_construct()
    """New VPC (default) or existing VPC and subnets."""
    eks: Eks = Eks.model_construct()
    """EKS cluster settings."""
    hyperpod: HyperPod | None = None
    """The HyperPod cluster (with EKS and its network). Leave it out for a Batch-only environment."""
    task_governance: TaskGovernance = TaskGovernance.model_construct()
    """The task-governance EKS add-on."""
    cluster_policy: ClusterPolicy = ClusterPolicy.model_construct()
    """Priority classes, fair share and idle resource sharing."""
    teams: tuple[Team, ...] = ()
    """Teams and their compute allocations."""
    shared_pool: SharedPool | None = None
    """A team that holds the capacity the other teams leave unreserved and lends it to all."""
    observability: Observability = Observability.model_construct()
    """CloudWatch Container Insights with Kueue metrics."""
    storage: storage_model.Storage | None = None
    """FSx for Lustre file systems of the teams, linked to S3 if wished (docs/how-to/storage.md)."""
    batch: batch_model.Batch | None = None
    """AWS Batch queues and team shares for SageMaker Training jobs (README: Teams on AWS Batch). An environment
    has hyperpod, batch or both."""
    acknowledged_warnings: tuple[AcknowledgedWarning, ...] = ()
    """Warnings this environment keeps on purpose, each with its reason (docs/how-to/ci.md): printed as
    acknowledged, and `validate --strict` passes them. One that matches no warning is itself a warning (HPK031),
    so they do not outlive what they excuse. Changes nothing that is deployed."""
