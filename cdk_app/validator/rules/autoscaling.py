"""HyperPod's managed Karpenter and the instance groups it scales; flexible (several types) and Spot groups.

Each prerequisite quotes where AWS states it. The cluster's NodeProvisioningMode is always Continuous (the
HyperPodCluster construct writes it), which the autoscaling docs' prerequisites name first ("Continuous
provisioning enabled on your HyperPod cluster"), so no config can miss it.
"""

from __future__ import annotations

from cdk_app.config.model import (
    DEFAULT_HELM_CHART_HEALTH_AGENT_TAG,
    DEFAULT_HELM_CHART_REVISION,
    InstanceGroup,
    KitConfig,
)
from cdk_app.config.yaml_source import PathKey
from cdk_app.domain.autoscaling import autoscaled_groups
from cdk_app.domain.instance_types import CATALOGUE
from cdk_app.domain.mig_profiles import MIG_CONFIG_LABEL
from cdk_app.domain.regions import hyperpod_instance_types
from cdk_app.domain.system_nodes import system_group
from cdk_app.validator.reporter import Reporter
from cdk_app.validator.rules.instance_groups import report_not_offered, report_unknown_type
from hyperpod_constructs.private.limits import MAX_NODECLASS_GROUPS

# HyperPod autoscaling docs, prerequisites: "Health monitoring agent version 1.0.742.0_1.0.241.0 or above".
MIN_HEALTH_AGENT_TAG = "1.0.742.0_1.0.241.0"


def agent_tag_key(tag: str) -> tuple[int, ...]:
    """An agent image tag (two dotted versions joined by "_") as numbers, for comparison."""
    return tuple(int(part) for part in tag.replace("_", ".").split("."))


def check_autoscaling(config: KitConfig, report: Reporter) -> None:
    hyperpod = config.hyperpod
    scaled = autoscaled_groups(config)
    if not hyperpod.autoscaling:
        for i, group in enumerate(hyperpod.instance_groups):
            if group.max_count is not None:
                report.error("HPK250", ("hyperpod", "instance_groups", i, "max_count"),
                             f"instance group '{group.name}' has max_count but hyperpod.autoscaling is off, so "
                             "nothing would scale it",
                             "set hyperpod.autoscaling: true, or remove max_count and give the group a count")
        return
    if hyperpod.node_recovery != "Automatic":
        # HyperPod autoscaling docs, prerequisites: "NodeRecovery set to Automatic".
        report.error("HPK251", ("hyperpod", "node_recovery"),
                     "HyperPod's managed Karpenter needs node_recovery Automatic (autoscaling prerequisites)",
                     "set hyperpod.node_recovery: Automatic, or turn hyperpod.autoscaling off")
    _check_health_agent(config, report)
    if not scaled:
        report.warning("HPK256", ("hyperpod", "autoscaling"),
                       "hyperpod.autoscaling is on but no instance group has max_count, so Karpenter has no group to scale",
                       "give the groups Karpenter should scale a max_count (and count: 0), or turn autoscaling off")
    if len(scaled) > MAX_NODECLASS_GROUPS:
        report.error("HPK255", ("hyperpod", "instance_groups"),
                     f"{len(scaled)} instance groups have max_count; the kit's HyperpodNodeClass can list at most "
                     f"{MAX_NODECLASS_GROUPS} (HyperPod autoscaling docs, \"Create a NodeClass\")",
                     f"give at most {MAX_NODECLASS_GROUPS} groups a max_count")
    system = system_group(config)
    for i, group in enumerate(hyperpod.instance_groups):
        if group.max_count is None:
            continue
        base: PathKey = ("hyperpod", "instance_groups", i)
        if group is system:
            # The NodePools are sized to what the teams' queues may admit (cdk_app.domain.autoscaling), and the
            # system group's nodes are no team's (its taint keeps team pods off): no pool would launch one, so
            # the operators would never run. A pool of its own would have to launch nodes for pods that select
            # the group's own labels and tolerate its taint, which AWS's list of the requirements HyperPod's
            # provider supports ("Create a NodePool") does not cover. A fixed count keeps them up.
            report.error("HPK264", base + ("max_count",),
                         f"instance group '{group.name}' is the system instance group and has max_count: the kit's "
                         "NodePools launch nodes for the teams' quotas only, so Karpenter would never give it a node "
                         "and the training and MPI operators (no PyTorchJob or MPIJob starts without them) never run",
                         "remove max_count and give the system group a fixed count (2 keeps the operators running "
                         "while HyperPod replaces a node)")
        if group.count:
            # "Create a NodeClass": "You must start with 0 nodes in your instance group and let Karpenter handle
            # the autoscaling. If you start with more than 0 nodes, Karpenter will scale them down to 0."
            report.error("HPK254", base + ("count",),
                         f"autoscaled instance group '{group.name}' has count {group.count}; Karpenter scales a group "
                         "that starts above 0 down to 0",
                         "set count: 0 (max_count is what the group may grow to)")
        if group.deep_health_checks:
            # "Create a NodeClass": "Instance groups with DeepHealthChecks (DHC) are not supported."
            report.error("HPK257", base + ("deep_health_checks",),
                         f"autoscaled instance group '{group.name}' runs deep health checks, which HyperPod's "
                         "Karpenter does not support (pods would wait 60-90 minutes on each new node)",
                         "set deep_health_checks: [] or remove max_count")
        if MIG_CONFIG_LABEL in group.labels:
            # The NodePools are one per instance type, sized in whole GPUs, memory and CPUs (domain.autoscaling);
            # Karpenter launches a node of the type from whichever group it picks, not for a MIG profile, so
            # partition quotas that only this group's nodes can hold are not what the pool is sized to.
            report.warning("HPK265", base + ("labels", MIG_CONFIG_LABEL),
                           f"autoscaled instance group '{group.name}' partitions its GPUs (MIG): the kit sizes the "
                           "NodePool of its type in whole GPUs, memory and CPUs, and Karpenter cannot choose a "
                           "partitioned node for a pod that asks for a MIG profile, so jobs admitted on its partition "
                           "quotas may wait for nodes",
                           "give the partitions a fixed group (count, no max_count), or remove the label")
        if group.training_plan_arn is not None:
            # "Create a NodeClass": "Instance groups with Training plan or reserved capacity are not supported."
            report.error("HPK258", base + ("training_plan_arn",),
                         f"autoscaled instance group '{group.name}' takes its capacity from a training plan, which "
                         "HyperPod's Karpenter does not support",
                         "remove training_plan_arn or max_count (a training plan's instances are a fixed count)")


def _check_health_agent(config: KitConfig, report: Reporter) -> None:
    chart = config.hyperpod.helm_chart
    path: PathKey = ("hyperpod", "helm_chart", "components", "health_monitoring_agent")
    if not chart.components.health_monitoring_agent:
        report.error("HPK252", path,
                     "HyperPod's managed Karpenter needs the health monitoring agent "
                     f"({MIN_HEALTH_AGENT_TAG} or later, autoscaling prerequisites)",
                     "set health_monitoring_agent: true, or turn hyperpod.autoscaling off")
    elif chart.revision != DEFAULT_HELM_CHART_REVISION:
        report.warning("HPK253", ("hyperpod", "helm_chart", "revision"),
                       f"the kit has not read which health monitoring agent chart revision {chart.revision[:12]} "
                       f"installs; HyperPod's managed Karpenter needs {MIN_HEALTH_AGENT_TAG} or later",
                       "check the health-monitoring-agent subchart's imageTag at that revision, or use the kit's "
                       "default revision")
    elif agent_tag_key(DEFAULT_HELM_CHART_HEALTH_AGENT_TAG) < agent_tag_key(MIN_HEALTH_AGENT_TAG):
        report.error("HPK252", path,
                     f"the chart's health monitoring agent {DEFAULT_HELM_CHART_HEALTH_AGENT_TAG} is older than the "
                     f"{MIN_HEALTH_AGENT_TAG} HyperPod's managed Karpenter needs",
                     "pin a chart revision whose agent is newer, or turn hyperpod.autoscaling off")


def check_flexible_groups(config: KitConfig, report: Reporter) -> None:
    """A flexible group's fallback types and MinInstanceCount, against AWS::SageMaker::Cluster's schema."""
    offered = hyperpod_instance_types(config.region)
    for i, group in enumerate(config.hyperpod.instance_groups):
        base: PathKey = ("hyperpod", "instance_groups", i)
        for j, itype in enumerate(group.fallback_instance_types):
            if itype not in CATALOGUE:
                report_unknown_type(report, base + ("fallback_instance_types", j), itype)
            elif offered is not None and itype not in offered:
                report_not_offered(report, base + ("fallback_instance_types", j), itype, config.region, offered)
        seen = {group.instance_type}
        for j, itype in enumerate(group.fallback_instance_types):
            if itype in seen:
                report.error("HPK259", base + ("fallback_instance_types", j),
                             f"instance type {itype} is listed twice in instance group '{group.name}'",
                             "list each type once: instance_type first, then the fallbacks in order of preference")
            seen.add(itype)
        if group.min_count is not None and group.min_count > group.count:
            # AWS::SageMaker::Cluster (cfn-lint schema): "MinInstanceCount must be less than or equal to
            # InstanceCount" - count, also for an autoscaled group, which starts at 0.
            # An autoscaled group's count is 0 and its size max_count: say which of the two the limit reads.
            autoscaled = (f" (MinInstanceCount is held to InstanceCount, which an autoscaled group keeps at 0; "
                          f"Karpenter scales it up to max_count {group.max_count} without it)"
                          if group.max_count is not None else "")
            report.error("HPK260", base + ("min_count",),
                         f"min_count {group.min_count} of instance group '{group.name}' is above its count "
                         f"{group.count}{autoscaled}",
                         f"set min_count to at most {group.count}, or leave it out")
        elif group.min_count is not None and group.max_count is not None:
            # botocore's MinInstanceCount "only affects the initial transition to InService"; held to InstanceCount,
            # which is 0 on an autoscaled group, it can only be 0: Karpenter brings the nodes, not this.
            report.warning("HPK263", base + ("min_count",),
                           f"min_count {group.min_count} of autoscaled instance group '{group.name}' does nothing: "
                           "MinInstanceCount only decides when a group first goes InService and is held to its "
                           "count, which an autoscaled group keeps at 0; Karpenter launches its nodes as pods need them",
                           "leave min_count out of an autoscaled group")
        _check_training_plan(group, base, report)


def _check_training_plan(group: InstanceGroup, base: PathKey, report: Reporter) -> None:
    """A training plan is reserved capacity of one instance type: "SageMaker training plans consist of one or more
    Reserved Capacity blocks, each defined by ... Specific instance type, Quantity of instances, Availability
    Zone" (AWS's SageMaker guide, Reserve training plans). Neither botocore nor the CloudFormation schema says
    whether SageMaker refuses a plan on a flexible or Spot group, so these are warnings."""
    if group.training_plan_arn is None:
        return
    if group.fallback_instance_types:
        report.warning("HPK261", base + ("training_plan_arn",),
                       f"instance group '{group.name}' uses a training plan and may fall back to "
                       f"{', '.join(group.fallback_instance_types)}: a training plan reserves instances of one "
                       "instance type, so fallback instances would not be the plan's",
                       "use the plan's instance type alone in this group (no fallback_instance_types), and put the "
                       "fallbacks in a group of their own")
    if group.capacity_type == "Spot":
        report.warning("HPK262", base + ("capacity_type",),
                       f"instance group '{group.name}' uses a training plan and capacity_type Spot: a training plan's "
                       "instances are capacity reserved (and paid for) ahead, not Spot instances EC2 may take back",
                       "leave capacity_type out (or OnDemand) on a group with a training plan, or drop the plan")
