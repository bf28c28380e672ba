"""Live checks against a deployed account (`hyperpod-kit validate CONFIG --live`), read-only.

Reads the HyperPod cluster (instance groups, live counts, node health), every compute quota and cluster
policy on it and the task-governance add-on version, then reports next to the offline findings:
quotas the kit does not manage and their share of capacity, the cumulative quota against the live
capacity, instance groups whose live count differs from the config, and a cluster policy or add-on that
drifted from the config. It also refuses an edit that would replace the HyperPod cluster - a new
hyperpod.cluster_name, a new VPC (vpc_cidr or existing_vpc_id) or a dropped zone under the cluster's subnets,
each reaching a property CloudFormation's schema marks create-only - and a Kubernetes version EKS cannot move
to. The deployed cluster is found through the cluster stack's outputs, so a renamed config still finds it.
Every call is a Describe, List or Get; nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cdk_app.config.model import AcceleratorPartition, InstanceGroup, KitConfig, QuotaEntry
from cdk_app.domain.capacity import (
    Resources,
    capacity_of,
    group_types,
    partition_capacity_of,
    partition_reservations,
    partition_shares,
    reservations,
    team_groups,
    without_partitioned_gpus,
)
from cdk_app.domain.governance_types import TASK_GOVERNANCE_ADDON
from cdk_app.domain.mig_profiles import MIG_CONFIG_LABEL
from cdk_app.domain.network_zones import cluster_zone_ids
from cdk_app.findings import Finding, Severity, format_path
from cdk_app.stacks.layout import stack_name

ACTIVE = {"Created", "Updated", "Creating", "Updating"}
RETRIES = {"mode": "standard", "max_attempts": 6}
# The IAM actions --live needs; docs/how-to/check-live.md prints them as a policy.
ACTIONS = ("sagemaker:DescribeCluster", "sagemaker:ListClusterNodes", "sagemaker:ListComputeQuotas",
           "sagemaker:ListClusterSchedulerConfigs", "sagemaker:DescribeClusterSchedulerConfig", "eks:DescribeAddon",
           "eks:DescribeCluster", "cloudformation:DescribeStacks", "ec2:DescribeSubnets", "ec2:DescribeVpcs")


class LiveAccessError(Exception):
    """The account could not be read; the message says why and what to do."""


@dataclass(frozen=True)
class DeployedShape:
    """What the deployed clusters were created with, where a config edit could reach a create-only property."""

    from_stack: bool  # the cluster's name came from the cluster stack's outputs, not from the config
    vpc_id: str | None = None
    vpc_cidr: str | None = None
    subnet_zones: tuple[str, ...] = ()
    kubernetes_version: str | None = None


@dataclass
class LiveState:
    cluster_name: str
    cluster_arn: str
    groups: list[dict[str, Any]]
    unhealthy_nodes: dict[str, int]
    quotas: list[dict[str, Any]]
    policy: dict[str, Any] | None
    addon_version: str | None
    shape: DeployedShape | None = None
    eks_cluster: str | None = None  # the EKS cluster's name, from the HyperPod cluster's orchestrator


@dataclass
class LiveResult:
    findings: list[Finding] = field(default_factory=list)
    section: dict[str, Any] = field(default_factory=dict)


def cluster_name(config: KitConfig) -> str:
    return config.hyperpod.cluster_name or f"hyperpod-{config.environment}"


def call_api(client: Any, method: str, **params: Any) -> dict[str, Any]:
    from botocore.exceptions import ClientError, NoCredentialsError, PartialCredentialsError

    service = client.meta.service_model.signing_name
    try:
        return getattr(client, method)(**params)
    except (NoCredentialsError, PartialCredentialsError) as err:
        raise LiveAccessError("no AWS credentials: set AWS_PROFILE, pass --profile, or export AWS_ACCESS_KEY_ID/"
                              "AWS_SECRET_ACCESS_KEY") from err
    except ClientError as err:
        code = err.response.get("Error", {}).get("Code", "")
        action = f"{service}:{err.operation_name}"
        if code in ("AccessDenied", "AccessDeniedException", "UnauthorizedOperation"):
            raise LiveAccessError(f"not allowed to call {action}: add it to the identity's policy "
                                  "(the README lists every action --live needs)") from err
        if code in ("Throttling", "ThrottlingException", "TooManyRequestsException"):
            raise LiveAccessError(f"{action} was throttled {RETRIES['max_attempts']} times in a row; "
                                  "try again in a minute") from err
        raise


def pages(client: Any, operation: str, key: str, token_key: str = "NextToken", **params: Any) -> list[dict[str, Any]]:
    """Every item of a paginated listing, following the service's token (NextToken; Batch spells it nextToken)."""
    items: list[dict[str, Any]] = []
    token = None
    while True:
        page = call_api(client, operation, **params, **({token_key: token} if token else {}))
        items.extend(page.get(key, []))
        token = page.get(token_key)
        if not token:
            return items


def stack_outputs(cloudformation: Any, stack: str) -> dict[str, str]:
    """The stack's outputs; empty when the stack does not exist yet."""
    from botocore.exceptions import ClientError

    try:
        stacks = call_api(cloudformation, "describe_stacks", StackName=stack)["Stacks"]
    except ClientError as err:
        if "does not exist" in err.response.get("Error", {}).get("Message", ""):
            return {}
        raise LiveAccessError(f"cloudformation:DescribeStacks failed: {err}") from err
    return {o["OutputKey"]: o.get("OutputValue", "") for s in stacks for o in s.get("Outputs", [])}


def _shape(cluster: dict[str, Any], from_stack: bool, eks_name: str, eks: Any, ec2: Any) -> DeployedShape:
    subnets = cluster.get("VpcConfig", {}).get("Subnets", [])
    vpc_id = vpc_cidr = None
    zones: tuple[str, ...] = ()
    if subnets:
        described = call_api(ec2, "describe_subnets", SubnetIds=subnets)["Subnets"]
        # In the cluster's VpcConfig order: the template lists network.cluster_zone_ids in order, and a
        # reorder changes that create-only list too.
        zone_of = {s["SubnetId"]: s["AvailabilityZoneId"] for s in described}
        zones = tuple(dict.fromkeys(zone_of[s] for s in subnets if s in zone_of))
        vpc_id = described[0]["VpcId"] if described else None
        if vpc_id:
            vpc_cidr = call_api(ec2, "describe_vpcs", VpcIds=[vpc_id])["Vpcs"][0]["CidrBlock"]
    version = call_api(eks, "describe_cluster", name=eks_name)["cluster"].get("version") if eks_name else None
    return DeployedShape(from_stack, vpc_id, vpc_cidr, zones, version)


def gather(config: KitConfig, sagemaker: Any, eks: Any, cloudformation: Any = None, ec2: Any = None) -> LiveState:
    """Read the deployed state. With `cloudformation` and `ec2`, also what the clusters were created with
    (for the create-only checks); the cluster is then found by the cluster stack's output."""
    from botocore.exceptions import ClientError

    outputs = stack_outputs(cloudformation, stack_name(config, "cluster")) if cloudformation else {}
    name = outputs.get("HyperPodClusterName") or cluster_name(config)
    try:
        cluster = call_api(sagemaker, "describe_cluster", ClusterName=name)
    except ClientError as err:
        if err.response.get("Error", {}).get("Code") in ("ResourceNotFound", "ValidationException"):
            raise LiveAccessError(f"HyperPod cluster {name!r} not found in {config.account}/{config.region}: "
                                  "deploy it first, or check hyperpod.cluster_name") from err
        raise LiveAccessError(f"sagemaker:DescribeCluster failed: {err}") from err
    arn = cluster["ClusterArn"]
    unhealthy: dict[str, int] = {}
    for node in pages(sagemaker, "list_cluster_nodes", "ClusterNodeSummaries", ClusterName=name):
        if node["InstanceStatus"]["Status"] != "Running":
            unhealthy[node["InstanceGroupName"]] = unhealthy.get(node["InstanceGroupName"], 0) + 1
    quotas = [q for q in pages(sagemaker, "list_compute_quotas", "ComputeQuotaSummaries", ClusterArn=arn)
              if q["Status"] in ACTIVE]
    policies = [p for p in pages(sagemaker, "list_cluster_scheduler_configs", "ClusterSchedulerConfigSummaries",
                                  ClusterArn=arn) if p["Status"] in ACTIVE]
    policy = None
    if policies:
        policy = call_api(sagemaker, "describe_cluster_scheduler_config",
                       ClusterSchedulerConfigId=policies[0]["ClusterSchedulerConfigId"])
    eks_name = cluster.get("Orchestrator", {}).get("Eks", {}).get("ClusterArn", "").rsplit("/", 1)[-1]
    addon_version = None
    if eks_name:
        try:
            addon_version = call_api(eks, "describe_addon", clusterName=eks_name,
                                  addonName=TASK_GOVERNANCE_ADDON)["addon"]["addonVersion"]
        except ClientError as err:
            if err.response.get("Error", {}).get("Code") != "ResourceNotFoundException":
                raise LiveAccessError(f"eks:DescribeAddon failed: {err}") from err
    shape = _shape(cluster, "HyperPodClusterName" in outputs, eks_name, eks, ec2) if ec2 is not None else None
    return LiveState(name, arn, cluster.get("InstanceGroups", []), unhealthy, quotas, policy, addon_version, shape,
                     eks_name or None)


def with_part(result: LiveResult, source: Any, part: str, label: str, read: Callable[[], LiveResult]) -> LiveResult:
    """`result` plus one more section's live checks (`read` gathers and compares), under section `part`; a read
    error becomes an HPK606 finding at `part`, never a traceback."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        part_result = read()
    except (LiveAccessError, BotoCoreError, ClientError) as err:
        message = str(err) if isinstance(err, LiveAccessError) else f"{type(err).__name__}: {err}"
        result.findings.append(live_finding(source, "HPK606", Severity.ERROR, (part,), f"live check of {label}: {message}",
                                            "fix access and run again; the other findings still hold"))
        result.section[part] = {"error": message}
        return result
    result.findings.extend(part_result.findings)
    result.section[part] = part_result.section
    return result


def _entry(resource: dict[str, Any]) -> QuotaEntry:
    partition = resource.get("AcceleratorPartition")
    return QuotaEntry(instance_type=resource["InstanceType"], count=resource.get("Count"),
                      accelerators=resource.get("Accelerators"), vcpu=resource.get("VCpu"),
                      memory_gib=resource.get("MemoryInGiB"),
                      # As the service returns it: a profile newer than the kit's list is still counted.
                      accelerator_partition=None if partition is None else AcceleratorPartition.model_construct(
                          type=partition["Type"], count=partition["Count"]))


def _live_groups(state: LiveState) -> list[InstanceGroup]:
    """The deployed instance groups as the capacity arithmetic reads them: type, running count and the labels
    their nodes carry now (DescribeCluster's KubernetesConfig.CurrentLabels: the MIG geometry)."""
    return [InstanceGroup.model_construct(name=g.get("InstanceGroupName", ""), instance_type=g.get("InstanceType", ""),
                                          count=g.get("CurrentCount", 0),
                                          labels=g.get("KubernetesConfig", {}).get("CurrentLabels") or {})
            for g in state.groups]


def _partition_findings(source: Any, state: LiveState) -> list[Finding]:
    """Live partition quotas against the partitions the running nodes' geometry gives (HPK603)."""
    capacity = partition_capacity_of(_live_groups(state))
    reserved: dict[tuple[str, str], int] = {}
    for quota in state.quotas:
        entries = [_entry(r) for r in quota.get("ComputeQuotaConfig", {}).get("ComputeQuotaResources", [])]
        for key, count in partition_reservations(entries).items():
            reserved[key] = reserved.get(key, 0) + count
    return [live_finding(source, "HPK603", Severity.ERROR, ("teams",),
                         f"quotas on the deployed cluster reserve {count} {profile} partitions of {itype} but its "
                         f"running nodes' {MIG_CONFIG_LABEL} geometry gives {capacity.get((itype, profile), 0)}",
                         "lower the partition quotas (including ones made outside the kit), or partition more "
                         "GPUs into the profile")
            for (itype, profile), count in sorted(reserved.items()) if count > capacity.get((itype, profile), 0)]


def live_finding(source: Any, code: str, severity: Severity, path: tuple[str | int, ...], message: str,
             hint: str) -> Finding:
    where = source.locate(path)
    return Finding(code, severity, source.file, where.line, where.column, format_path(path), message, hint)


def compare(config: KitConfig, source: Any, state: LiveState) -> LiveResult:
    result = LiveResult()
    add = result.findings.append
    groups_section = []
    live_groups = {g["InstanceGroupName"]: g for g in state.groups}
    for index, group in enumerate(config.hyperpod.instance_groups):
        live = live_groups.get(group.name)
        current = live.get("CurrentCount", 0) if live else 0
        groups_section.append({"name": group.name, "instance_type": group.instance_type, "config_count": group.count,
                               "current_count": current, "target_count": live.get("TargetCount") if live else None,
                               "unhealthy_nodes": state.unhealthy_nodes.get(group.name, 0)})
        if live is None:
            add(live_finding(source, "HPK602", Severity.WARNING, ("hyperpod", "instance_groups", index, "name"),
                         f"instance group '{group.name}' does not exist on the deployed cluster: a deploy creates it "
                         "empty, and its nodes must then get capacity",
                         "if this is a renamed group, keep the deployed name (a rename deletes the old group's nodes)"))
        elif group.max_count is not None:
            # Karpenter scales the group between 0 and max_count: any count up to it is as the config says.
            if current > group.max_count:
                add(live_finding(source, "HPK602", Severity.WARNING, ("hyperpod", "instance_groups", index, "max_count"),
                                 f"autoscaled instance group '{group.name}' has {current} instances live, above its "
                                 f"max_count {group.max_count}",
                                 "deploy (the NodePools' limits follow max_count), or raise max_count"))
        elif current != group.count:
            add(live_finding(source, "HPK602", Severity.WARNING, ("hyperpod", "instance_groups", index, "count"),
                         f"instance group '{group.name}' has {current} instances live, the config says {group.count}",
                         "capacity checks below use the live count; deploy, or wait for node provisioning"))
    wanted = {group.name for group in config.hyperpod.instance_groups}
    for name, live in sorted(live_groups.items()):
        if name not in wanted:
            # UpdateCluster deletes a group left out of the desired state (InstanceGroupsToDelete).
            add(live_finding(source, "HPK602", Severity.ERROR, ("hyperpod", "instance_groups"),
                         f"the deployed cluster's instance group '{name}' ({live.get('CurrentCount', 0)} x "
                         f"{live.get('InstanceType', '?')} nodes) is not in the config: a deploy deletes it with its "
                         "nodes and the jobs running on them",
                         f"put '{name}' back in hyperpod.instance_groups, or drain it first and accept it with "
                         f"hyperpod-kit plan --allow-replace <cluster logical id>/{name}"))
    # What runs, plus what Karpenter may still add to the groups it scales (up to max_count, under each type the
    # group may run): the capacity validate counts for them.
    headroom = [(itype, max(group.max_count - live_groups[group.name].get("CurrentCount", 0), 0))
                for group in team_groups(config) if group.max_count is not None and group.name in live_groups
                for itype in group_types(group)]
    # The system group's nodes are no team's capacity (cdk_app.domain.capacity.team_groups).
    deployed = [g for g in _live_groups(state) if g.name != config.hyperpod.system_instance_group]
    capacity = without_partitioned_gpus(deployed, capacity_of([*((g.instance_type, g.count) for g in deployed),
                                                               *headroom]))

    managed = {f"{config.environment}-{team.name}" for team in config.teams}
    if config.shared_pool is not None:
        managed.add(f"{config.environment}-{config.shared_pool.name}")
    reserved: dict[str, Resources] = {}
    quotas_section = []
    shares = partition_shares(deployed)
    for quota in state.quotas:
        share = reservations((_entry(r) for r in quota.get("ComputeQuotaConfig", {}).get("ComputeQuotaResources", [])),
                             shares)
        for itype, amount in share.items():
            reserved[itype] = reserved.get(itype, Resources()) + amount
        is_managed = quota["Name"] in managed
        quotas_section.append({"name": quota["Name"], "team": quota["ComputeQuotaTarget"]["TeamName"],
                               "managed_by_kit": is_managed,
                               "reserved": {t: r.to_json() for t, r in share.items()}})
        if not is_managed:
            parts = [f"{float(r.count / capacity[t].count) * 100:.0f}% of {t}" if capacity.get(t) and capacity[t].count
                     else f"{t} (not in the cluster)" for t, r in share.items()]
            add(live_finding(source, "HPK601", Severity.WARNING, ("teams",),
                         f"compute quota '{quota['Name']}' (team {quota['ComputeQuotaTarget']['TeamName']}) was made "
                         f"outside the kit and reserves {', '.join(parts) or 'nothing'}",
                         "add the team to the config, or delete the quota, so one place decides the split"))
    for itype, amount in sorted(reserved.items()):
        cap = capacity.get(itype, Resources())
        over = amount.exceeding(cap)
        if over:
            add(live_finding(source, "HPK603", Severity.ERROR, ("teams",),
                         f"quotas on the deployed cluster reserve {float(amount.count):g} instances of {itype} but it "
                         f"has {float(cap.count):g} running (over in {', '.join(over)})",
                         "lower quotas (including ones made outside the kit) or add capacity"))

    result.findings.extend(_partition_findings(source, state))
    if state.policy is not None:
        live_policy = state.policy.get("SchedulerConfig", {})
        wanted = {"PriorityClasses": sorted((c.name, c.weight) for c in config.cluster_policy.priority_classes),
                  "FairShare": config.cluster_policy.fair_share,
                  "IdleResourceSharing": config.cluster_policy.idle_resource_sharing}
        actual = {"PriorityClasses": sorted((c["Name"], c["Weight"]) for c in live_policy.get("PriorityClasses", [])),
                  "FairShare": live_policy.get("FairShare", "Enabled"),
                  "IdleResourceSharing": live_policy.get("IdleResourceSharing", "Enabled")}
        for key in wanted:
            if wanted[key] != actual[key]:
                add(live_finding(source, "HPK604", Severity.WARNING, ("cluster_policy",),
                             f"the deployed cluster policy's {key} is {actual[key]}, the config says {wanted[key]}",
                             "deploy the governance stack, or bring the config in line with the change"))
    if state.addon_version is not None and state.addon_version != config.task_governance.addon_version:
        add(live_finding(source, "HPK605", Severity.WARNING, ("task_governance", "addon_version"),
                     f"the deployed task-governance add-on is {state.addon_version}, the config says "
                     f"{config.task_governance.addon_version}", "deploy the governance stack"))
    if state.shape is not None:
        result.findings.extend(replacement_findings(config, source, state))
    result.section = {"cluster": state.cluster_name, "cluster_arn": state.cluster_arn,
                      "capacity": {t: r.to_json() for t, r in sorted(capacity.items())},
                      "reserved": {t: r.to_json() for t, r in sorted(reserved.items())},
                      "instance_groups": groups_section, "quotas": quotas_section,
                      "task_governance_addon": state.addon_version}
    return result


def _create_only(resource_type: str, prop: str) -> bool:
    """Whether CloudFormation's schema (cfn-lint's copy) says `prop` of `resource_type` is create-only."""
    from cdk_app.domain.resource_schemas import create_only_properties

    return (prop,) in create_only_properties(resource_type)


def _minor(version: str) -> int:
    return int(version.split(".")[1])


def replacement_findings(config: KitConfig, source: Any, state: LiveState) -> list[Finding]:
    """Edits that would replace the deployed HyperPod cluster (a create-only property changes) or that
    EKS refuses, each naming the config field and the property."""
    shape = state.shape
    if shape is None:
        return []
    found = []
    replaces = ("so the deploy would replace the HyperPod cluster: a new one is created and the old one, with its "
                "nodes and running jobs, deleted")
    wanted_name = cluster_name(config)
    if shape.from_stack and wanted_name != state.cluster_name and _create_only("AWS::SageMaker::Cluster", "ClusterName"):
        found.append(live_finding(source, "HPK607", Severity.ERROR, ("hyperpod", "cluster_name"),
                              f"the deployed HyperPod cluster is '{state.cluster_name}', the config names "
                              f"'{wanted_name}': ClusterName is create-only (AWS::SageMaker::Cluster), {replaces}",
                              f"set hyperpod.cluster_name: {state.cluster_name}, or plan a new cluster deliberately "
                              "(hyperpod-kit plan ... --allow-replace)"))
    vpc_config = _create_only("AWS::SageMaker::Cluster", "VpcConfig")
    network = config.network
    if network.existing_vpc_id and shape.vpc_id and network.existing_vpc_id != shape.vpc_id and vpc_config:
        found.append(live_finding(source, "HPK608", Severity.ERROR, ("network", "existing_vpc_id"),
                              f"the deployed HyperPod cluster runs in {shape.vpc_id}, the config names "
                              f"{network.existing_vpc_id}: VpcConfig is create-only (AWS::SageMaker::Cluster), "
                              f"{replaces}; the EKS cluster cannot move to another VPC",
                              f"set network.existing_vpc_id: {shape.vpc_id}"))
    elif (not network.existing_vpc_id and shape.vpc_cidr and network.vpc_cidr != shape.vpc_cidr and vpc_config
          and _create_only("AWS::EC2::VPC", "CidrBlock")):
        found.append(live_finding(source, "HPK608", Severity.ERROR, ("network", "vpc_cidr"),
                              f"the deployed VPC is {shape.vpc_cidr}, the config says {network.vpc_cidr}: CidrBlock "
                              "is create-only (AWS::EC2::VPC), so the VPC and its subnets are replaced and with them "
                              f"the cluster's create-only VpcConfig, {replaces}; the EKS cluster cannot move to "
                              "the new VPC",
                              f"set network.vpc_cidr: {shape.vpc_cidr}"))
    wanted_zones = cluster_zone_ids(config)
    if shape.subnet_zones and tuple(shape.subnet_zones) != tuple(wanted_zones) and vpc_config:
        recorded = bool(network.cluster_zone_ids)
        found.append(live_finding(source, "HPK609", Severity.ERROR,
                              ("network", "cluster_zone_ids") if recorded else ("availability_zone_ids",),
                              f"the deployed HyperPod cluster's subnets are in {', '.join(shape.subnet_zones)}, "
                              f"the config makes them {', '.join(wanted_zones)}"
                              f"{'' if recorded else ' (network.cluster_zone_ids not recorded: the first two zones)'}"
                              f": its VpcConfig is create-only (AWS::SageMaker::Cluster), {replaces}",
                              f"record network.cluster_zone_ids: [{', '.join(shape.subnet_zones)}] (in this order)"))
    if shape.kubernetes_version:
        deployed, wanted = shape.kubernetes_version, config.eks.kubernetes_version
        if _minor(wanted) < _minor(deployed):
            found.append(live_finding(source, "HPK610", Severity.ERROR, ("eks", "kubernetes_version"),
                                  f"the deployed EKS cluster runs Kubernetes {deployed}, the config says {wanted}: "
                                  "EKS cannot downgrade a cluster (the deploy fails)",
                                  f"set eks.kubernetes_version: \"{deployed}\""))
        elif _minor(wanted) > _minor(deployed) + 1:
            found.append(live_finding(source, "HPK610", Severity.ERROR, ("eks", "kubernetes_version"),
                                  f"the deployed EKS cluster runs Kubernetes {deployed}, the config says {wanted}: "
                                  "EKS upgrades one minor version at a time (the deploy fails)",
                                  f"deploy \"1.{_minor(deployed) + 1}\" first, then the next"))
    return found
