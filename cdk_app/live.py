"""Live checks against a deployed account (`hyperpod-kit validate CONFIG --live`), read-only.

Reads the HyperPod cluster (instance groups, live counts, node health), every compute quota and cluster
policy on it and the task-governance add-on version, then reports next to the offline findings:
quotas the kit does not manage and their share of capacity, the cumulative quota against the live
capacity, instance groups whose live count differs from the config, and a cluster policy or add-on that
drifted from the config. Every call is a Describe or List; nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cdk_app.config.model import KitConfig, QuotaEntry
from cdk_app.validator.capacity import Resources, capacity_of, reservations
from cdk_app.validator.findings import Finding, Severity, format_path

TASK_GOVERNANCE_ADDON = "amazon-sagemaker-hyperpod-taskgovernance"
ACTIVE = {"Created", "Updated", "Creating", "Updating"}
RETRIES = {"mode": "standard", "max_attempts": 6}
# The IAM actions --live needs; the README prints them as a policy.
ACTIONS = ("sagemaker:DescribeCluster", "sagemaker:ListClusterNodes", "sagemaker:ListComputeQuotas",
           "sagemaker:ListClusterSchedulerConfigs", "sagemaker:DescribeClusterSchedulerConfig", "eks:DescribeAddon")


class LiveAccessError(Exception):
    """The account could not be read; the message says why and what to do."""


@dataclass
class LiveState:
    cluster_name: str
    cluster_arn: str
    groups: list[dict[str, Any]]
    unhealthy_nodes: dict[str, int]
    quotas: list[dict[str, Any]]
    policy: dict[str, Any] | None
    addon_version: str | None


@dataclass
class LiveResult:
    findings: list[Finding] = field(default_factory=list)
    section: dict[str, Any] = field(default_factory=dict)


def cluster_name(config: KitConfig) -> str:
    return config.hyperpod.cluster_name or f"hyperpod-{config.environment}"


def _call(client: Any, method: str, **params: Any) -> dict[str, Any]:
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


def _pages(client: Any, operation: str, key: str, **params: Any) -> list[dict[str, Any]]:
    """Every item of a paginated listing, following NextToken."""
    items: list[dict[str, Any]] = []
    token = None
    while True:
        page = _call(client, operation, **params, **({"NextToken": token} if token else {}))
        items.extend(page.get(key, []))
        token = page.get("NextToken")
        if not token:
            return items


def gather(config: KitConfig, sagemaker: Any, eks: Any) -> LiveState:
    from botocore.exceptions import ClientError

    name = cluster_name(config)
    try:
        cluster = _call(sagemaker, "describe_cluster", ClusterName=name)
    except ClientError as err:
        if err.response.get("Error", {}).get("Code") in ("ResourceNotFound", "ValidationException"):
            raise LiveAccessError(f"HyperPod cluster {name!r} not found in {config.account}/{config.region}: "
                                  "deploy it first, or check hyperpod.cluster_name") from err
        raise LiveAccessError(f"sagemaker:DescribeCluster failed: {err}") from err
    arn = cluster["ClusterArn"]
    unhealthy: dict[str, int] = {}
    for node in _pages(sagemaker, "list_cluster_nodes", "ClusterNodeSummaries", ClusterName=name):
        if node["InstanceStatus"]["Status"] != "Running":
            unhealthy[node["InstanceGroupName"]] = unhealthy.get(node["InstanceGroupName"], 0) + 1
    quotas = [q for q in _pages(sagemaker, "list_compute_quotas", "ComputeQuotaSummaries", ClusterArn=arn)
              if q["Status"] in ACTIVE]
    policies = [p for p in _pages(sagemaker, "list_cluster_scheduler_configs", "ClusterSchedulerConfigSummaries",
                                  ClusterArn=arn) if p["Status"] in ACTIVE]
    policy = None
    if policies:
        policy = _call(sagemaker, "describe_cluster_scheduler_config",
                       ClusterSchedulerConfigId=policies[0]["ClusterSchedulerConfigId"])
    eks_name = cluster.get("Orchestrator", {}).get("Eks", {}).get("ClusterArn", "").rsplit("/", 1)[-1]
    addon_version = None
    if eks_name:
        try:
            addon_version = _call(eks, "describe_addon", clusterName=eks_name,
                                  addonName=TASK_GOVERNANCE_ADDON)["addon"]["addonVersion"]
        except ClientError as err:
            if err.response.get("Error", {}).get("Code") != "ResourceNotFoundException":
                raise LiveAccessError(f"eks:DescribeAddon failed: {err}") from err
    return LiveState(name, arn, cluster.get("InstanceGroups", []), unhealthy, quotas, policy, addon_version)


def _entry(resource: dict[str, Any]) -> QuotaEntry:
    return QuotaEntry(instance_type=resource["InstanceType"], count=resource.get("Count"),
                      accelerators=resource.get("Accelerators"), vcpu=resource.get("VCpu"),
                      memory_gib=resource.get("MemoryInGiB"))


def _finding(source: Any, code: str, severity: Severity, path: tuple[str | int, ...], message: str,
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
            add(_finding(source, "HPK602", Severity.WARNING, ("hyperpod", "instance_groups", index, "name"),
                         f"instance group '{group.name}' does not exist on the deployed cluster", "deploy the cluster stack"))
        elif current != group.count:
            add(_finding(source, "HPK602", Severity.WARNING, ("hyperpod", "instance_groups", index, "count"),
                         f"instance group '{group.name}' has {current} instances live, the config says {group.count}",
                         "capacity checks below use the live count; deploy, or wait for node provisioning"))
    capacity = capacity_of((live.get("InstanceType", ""), live.get("CurrentCount", 0)) for live in state.groups)

    managed = {f"{config.environment}-{team.name}" for team in config.teams}
    if config.shared_pool is not None:
        managed.add(f"{config.environment}-{config.shared_pool.name}")
    reserved: dict[str, Resources] = {}
    quotas_section = []
    for quota in state.quotas:
        share = reservations(_entry(r) for r in quota.get("ComputeQuotaConfig", {}).get("ComputeQuotaResources", []))
        for itype, amount in share.items():
            reserved[itype] = reserved.get(itype, Resources()) + amount
        is_managed = quota["Name"] in managed
        quotas_section.append({"name": quota["Name"], "team": quota["ComputeQuotaTarget"]["TeamName"],
                               "managed_by_kit": is_managed,
                               "reserved": {t: r.to_json() for t, r in share.items()}})
        if not is_managed:
            parts = [f"{float(r.count / capacity[t].count) * 100:.0f}% of {t}" if capacity.get(t) and capacity[t].count
                     else f"{t} (not in the cluster)" for t, r in share.items()]
            add(_finding(source, "HPK601", Severity.WARNING, ("teams",),
                         f"compute quota '{quota['Name']}' (team {quota['ComputeQuotaTarget']['TeamName']}) was made "
                         f"outside the kit and reserves {', '.join(parts) or 'nothing'}",
                         "add the team to the config, or delete the quota, so one place decides the split"))
    for itype, amount in sorted(reserved.items()):
        cap = capacity.get(itype, Resources())
        over = amount.exceeding(cap)
        if over:
            add(_finding(source, "HPK603", Severity.ERROR, ("teams",),
                         f"quotas on the deployed cluster reserve {float(amount.count):g} instances of {itype} but it "
                         f"has {float(cap.count):g} running (over in {', '.join(over)})",
                         "lower quotas (including ones made outside the kit) or add capacity"))

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
                add(_finding(source, "HPK604", Severity.WARNING, ("cluster_policy",),
                             f"the deployed cluster policy's {key} is {actual[key]}, the config says {wanted[key]}",
                             "deploy the governance stack, or bring the config in line with the change"))
    if state.addon_version is not None and state.addon_version != config.task_governance.addon_version:
        add(_finding(source, "HPK605", Severity.WARNING, ("task_governance", "addon_version"),
                     f"the deployed task-governance add-on is {state.addon_version}, the config says "
                     f"{config.task_governance.addon_version}", "deploy the governance stack"))
    result.section = {"cluster": state.cluster_name, "cluster_arn": state.cluster_arn,
                      "capacity": {t: r.to_json() for t, r in sorted(capacity.items())},
                      "reserved": {t: r.to_json() for t, r in sorted(reserved.items())},
                      "instance_groups": groups_section, "quotas": quotas_section,
                      "task_governance_addon": state.addon_version}
    return result
