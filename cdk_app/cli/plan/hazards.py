"""Destructive changes that are not whole-resource replacements: nodes lost, guarantees dropped, protection off."""

from __future__ import annotations

import json
from typing import Any

from cdk_app.cli.plan.model import (
    REMOVAL_DOC,
    RENAME_ORDER,
    RENAMED_TEAM,
    RETAIN,
    Hazard,
    Plan,
    group_types,
    resource_path,
    template_resources,
    types_text,
)
from cdk_app.config.names import team_namespace
from cdk_app.domain.batch_shares import queue_scheduling
from cdk_app.domain.lustre import UPDATABLE_LUSTRE_SETTINGS


def capacity_type(group: dict[str, Any]) -> str:
    """A template group's capacity type: Spot where CapacityRequirements names it, else On-Demand (the kit writes
    none for the default, and EC2's default is On-Demand)."""
    requirements = group.get("CapacityRequirements")
    return "Spot" if isinstance(requirements, dict) and "Spot" in requirements else "OnDemand"


def _spot_hazard(stack: str, where: str, name: str, group: dict[str, Any],
                 backing: dict[str, bool] | None) -> Hazard:
    """A group turned from On-Demand to Spot: EC2 may take its instances back at any time, so the teams' quotas on
    its types hold only where the On-Demand capacity still covers them (capacity.spot_backing: fixed On-Demand
    groups, and autoscaled ones at max_count, whose NodePools count no Spot group as given - the rule validate's
    HPK531 reads). Refused when they no longer do. CloudFormation updates CapacityRequirements in place (it is not
    create-only in its AWS::SageMaker::Cluster schema); neither the schema nor UpdateCluster's documentation says
    whether the running nodes are replaced or turned Spot only as they are replaced."""
    types = group_types(group)
    short = [t for t in types if backing is not None and backing.get(t) is False]
    if backing is None:
        fit = "whether the teams' quotas still fit the On-Demand capacity is not known here (run validate)"
    elif short:
        fit = (f"the teams' quotas on {', '.join(short)} no longer fit the On-Demand capacity (validate's HPK531): "
               "they count on instances EC2 may take back")
    else:
        fit = (f"the teams' quotas on {', '.join(types)} still fit the On-Demand capacity of the other groups "
               "(autoscaled ones included: Karpenter launches their nodes in place of Spot nodes EC2 takes back, as "
               "far as EC2 has On-Demand ones)")
    return Hazard(stack, where, f"instance group {name}: capacity On-Demand -> Spot: its {types_text(group)} "
                                "instances are no longer guaranteed (EC2 may take Spot instances back at any time); "
                                f"{fit}. CloudFormation changes it in place; AWS does not document whether the "
                                "running nodes are replaced", refuse=bool(short))


def group_hazards(stack: str, logical_id: str, old: dict[str, Any], new: dict[str, Any],
                  backing: dict[str, bool] | None = None) -> list[Hazard]:
    """What an in-place update of a HyperPod cluster does to its instance groups' nodes. UpdateCluster
    deletes a group left out of the desired state (InstanceGroupsToDelete) with its nodes, and rebuilds
    a group's nodes for a new instance type (AWS docs: 'you can change the instance type'); a zone move,
    a threads-per-core change, a smaller volume or a dropped training plan cannot keep the nodes either. A group
    scaled up or down is no hazard: plan's instance-group lines (groups.py) say it, not refused. A group turned
    Spot loses its guarantee (_spot_hazard; `backing`: capacity.spot_backing of the config deployed)."""
    def groups(props: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {g["InstanceGroupName"]: g for g in props.get("InstanceGroups", [])
                if isinstance(g, dict) and isinstance(g.get("InstanceGroupName"), str)}

    def nodes(group: dict[str, Any]) -> str:
        count = group.get("InstanceCount")
        return f"{count if isinstance(count, int) else 'all its'} x {types_text(group)} nodes"

    def volume(group: dict[str, Any]) -> int:
        return sum(int(c.get("EbsVolumeConfig", {}).get("VolumeSizeInGB", 0) or 0)
                   for c in group.get("InstanceStorageConfigs", []) if isinstance(c, dict))

    old_groups, new_groups = groups(old), groups(new)
    hazards = []
    for name, group in sorted(old_groups.items()):
        where = f"{logical_id}/{name}"
        if name not in new_groups:
            added = sorted(set(new_groups) - set(old_groups))
            hint = f" (a renamed group is a new, empty one: {', '.join(added)})" if added else ""
            hazards.append(Hazard(stack, where, f"instance group {name} removed: its {nodes(group)} are terminated, "
                                               f"with the jobs running on them{hint}"))
            continue
        now = new_groups[name]
        why = []
        # A node keeps running while its type stays one the group may run (InstanceType or a flexible group's
        # InstanceRequirements; neither is create-only in the schema); nodes of a type the group no longer lists
        # are rebuilt. A type added, or the order changed, decides only which type new nodes come up as.
        dropped = [t for t in group_types(group) if t not in group_types(now)]
        if dropped:
            why.append(f"instance type{'s' if len(group_types(group)) > 1 else ''} {types_text(group)} -> "
                       f"{types_text(now)} (no longer runs {', '.join(dropped)})")
        elif group_types(group) != group_types(now):
            hazards.append(Hazard(stack, where, f"instance group {name}: instance types {types_text(group)} -> "
                                                f"{types_text(now)}: its nodes keep running; new nodes come up as the "
                                                "first of the types EC2 has capacity for", refuse=False))
        if group.get("ThreadsPerCore") != now.get("ThreadsPerCore"):
            why.append(f"threads per core {group.get('ThreadsPerCore')} -> {now.get('ThreadsPerCore')}")
        if volume(now) < volume(group):
            why.append(f"EBS volume {volume(group)} -> {volume(now)} GiB (a volume cannot shrink)")
        if group.get("TrainingPlanArn") and group.get("TrainingPlanArn") != now.get("TrainingPlanArn"):
            why.append(f"training plan {str(group['TrainingPlanArn']).rsplit('/', 1)[-1]} "
                       f"{'changed' if now.get('TrainingPlanArn') else 'dropped'} (its reserved capacity is left)")
        if capacity_type(group) == "OnDemand" and capacity_type(now) == "Spot":
            hazards.append(_spot_hazard(stack, where, name, now, backing))
        if group.get("OverrideVpcConfig") != now.get("OverrideVpcConfig"):
            why.append("subnet (zone) changed")
        if why:
            hazards.append(Hazard(stack, where, f"instance group {name}: {'; '.join(why)}: its {nodes(group)} are "
                                               "terminated and re-created, with the jobs running on them"))
    return hazards


def file_system_hazards(stack: str, logical_id: str, old: dict[str, Any], new: dict[str, Any]) -> list[Hazard]:
    """An in-place update of an FSx for Lustre file system (a replacement is the create-only check's): FSx only
    grows its capacity, and cannot change what UpdateFileSystem's Lustre configuration does not take (the
    deployment type) - the update would fail, so a new file system (another name) and a copy are the way."""
    where = f"{resource_path(new, stack, logical_id)} (AWS::FSx::FileSystem)"
    hazards = []
    before, after = old.get("Properties", {}), new.get("Properties", {})
    capacity = before.get("StorageCapacity"), after.get("StorageCapacity")
    if all(isinstance(c, int) for c in capacity) and capacity[0] != capacity[1]:
        if capacity[1] < capacity[0]:
            hazards.append(Hazard(stack, logical_id, f"{where}: storage capacity {capacity[0]} -> {capacity[1]} GiB: "
                                  "FSx for Lustre capacity only grows, so the update fails; keep "
                                  f"storage_capacity_gib at {capacity[0]} or more", fails=True))
        else:
            hazards.append(Hazard(stack, logical_id, f"{where}: storage capacity {capacity[0]} -> {capacity[1]} GiB: "
                                  "it can never shrink back (FSx adds it while the file system stays in use)",
                                  refuse=False))
    if before.get("StorageType", "SSD") != after.get("StorageType", "SSD"):
        # Not create-only in CloudFormation's schema, but UpdateFileSystem documents no storage-type change for Lustre.
        hazards.append(Hazard(stack, logical_id, f"{where}: StorageType {before.get('StorageType', 'SSD')} -> "
                              f"{after.get('StorageType', 'SSD')}: FSx for Lustre cannot change it on an existing file "
                              "system, so the update fails; create a new file system (another name) and copy the data",
                              fails=True))
    if (before.get("LustreConfiguration") or {}).get("DeploymentType") == "SCRATCH_1" and \
            all(isinstance(c, int) for c in capacity) and capacity[1] > capacity[0]:
        # UpdateFileSystem StorageCapacity: "For SCRATCH_1 file systems, you can't increase the storage capacity."
        hazards.append(Hazard(stack, logical_id, f"{where}: a SCRATCH_1 file system's capacity cannot grow, so the "
                              "update fails; create a SCRATCH_2 file system (another name) instead", fails=True))
    settings = before.get("LustreConfiguration") or {}, after.get("LustreConfiguration") or {}
    for key in sorted((set(settings[0]) | set(settings[1])) - UPDATABLE_LUSTRE_SETTINGS):
        if settings[0].get(key) != settings[1].get(key):
            hazards.append(Hazard(stack, logical_id, f"{where}: {key} {settings[0].get(key)} -> {settings[1].get(key)}: "
                                  "FSx cannot change it on an existing file system, so the update fails; create a new "
                                  "file system (another name) and copy the data", fails=True))
    return hazards


def policy_hazards(stack: str, logical_id: str, old: dict[str, Any], new: dict[str, Any]) -> list[Hazard]:
    return [Hazard(stack, logical_id, f"{resource_path(new, stack, logical_id)} ({new['Type']}): {policy} "
                                      f"{old[policy]} dropped (now {new.get(policy, 'Delete')}): a later "
                                      f"{'replacement' if policy == 'UpdateReplacePolicy' else 'deletion'} "
                                      "would delete it")
            for policy in ("DeletionPolicy", "UpdateReplacePolicy")
            if old.get(policy) in RETAIN and new.get(policy) not in RETAIN]


def _device_list_strategy(release: dict[str, Any]) -> str | None:
    try:
        values = json.loads(release.get("Properties", {}).get("Values") or "{}")
    except (TypeError, ValueError):
        return None
    plugin = values.get("nvidia-device-plugin") if isinstance(values, dict) else None
    return plugin.get("deviceListStrategy") if isinstance(plugin, dict) else None


def release_hazards(stack: str, logical_id: str, old: dict[str, Any], new: dict[str, Any]) -> list[Hazard]:
    """Node GPU isolation switched on or off in a deployed environment (hyperpod.lifecycle.gpu_device_isolation):
    the chart's device plugin changes at this deploy, the nodes' container toolkit only where the lifecycle
    scripts run again (nodes created or replaced afterwards). Until the GPU nodes are replaced, the two disagree."""
    before, after = _device_list_strategy(old), _device_list_strategy(new)
    if before == after:
        return []
    if after == "volume-mounts":
        text = ("GPU isolation switched on: the device plugin hands GPUs over as mounts and the admission rule "
                "gpu-visibility is dropped at this deploy, but GPU nodes created before keep the permissive toolkit "
                "until replaced - there GPU pods fail to start and a GPU-less container whose image names the GPUs "
                "sees every GPU of the node. Replace the GPU nodes in the same change (aws sagemaker "
                "update-cluster-software re-runs the lifecycle scripts)")
    else:
        text = ("GPU isolation switched off: the device plugin hands GPUs over through NVIDIA_VISIBLE_DEVICES again, "
                "which isolated nodes ignore in unprivileged containers - GPU pods there see no GPU until the nodes "
                "are replaced (aws sagemaker update-cluster-software)")
    return [Hazard(stack, logical_id, text)]


def protection_hazards(before: dict[str, bool], after: dict[str, bool],
                        templates: dict[str, dict[str, Any]]) -> list[Hazard]:
    return [Hazard(stack, stack, f"stack {stack}: termination protection turned off (`cdk destroy` would then "
                                 "delete it)")
            for stack in sorted(templates) if before.get(stack) and after.get(stack) is False]


def _template_scheduling(queue: dict[str, Any], resources: dict[str, dict[str, Any]]) -> str:
    """The scheduling type of a job queue in a template: its SchedulingPolicyArn is the GetAtt of the policy."""
    arn = queue.get("Properties", {}).get("SchedulingPolicyArn")
    target = arn.get("Fn::GetAtt", [None])[0] if isinstance(arn, dict) else None
    return queue_scheduling(arn, resources.get(target, {}).get("Properties") if target else None)


def scheduling_hazards(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[Hazard]:
    """A job queue kept under its logical id whose scheduling type changes. Batch never adds a scheduling policy
    to a FIFO queue, never removes one, and never changes it between fair share and quota share (botocore
    CreateJobQueue/UpdateJobQueue schedulingPolicyArn), so the update fails; `validate --live` says the same
    against the deployed queue (HPK716)."""
    hazards = []
    for stack in sorted(after):
        old_resources, new_resources = template_resources(before.get(stack, {})), template_resources(after[stack])
        for logical_id, new in sorted(new_resources.items()):
            old = old_resources.get(logical_id)
            if new["Type"] != "AWS::Batch::JobQueue" or old is None or old["Type"] != new["Type"]:
                continue
            kinds = _template_scheduling(old, old_resources), _template_scheduling(new, new_resources)
            if kinds[0] != kinds[1]:
                hazards.append(Hazard(stack, logical_id, f"{resource_path(new, stack, logical_id)} (AWS::Batch::JobQueue): "
                                      f"scheduling {kinds[0]} -> {kinds[1]}: Batch cannot change a queue's scheduling "
                                      "type (give the queue a new name - a new queue is created, the old one "
                                      f"removed - and move its teams, or keep scheduling: {kinds[0]})", fails=True))
    return hazards


def renamed_team_hazards(plan: Plan) -> list[Hazard]:
    """A team removed while another is added looks like a rename, which replaces the quota: the old team's
    jobs stop and its namespace goes (the removal page says the rest). Refused unless named (team:<old name>);
    RENAME_ORDER says the safer way."""
    removed = [t.team for t in plan.teams if t.change == "removed"]
    added = [t.team for t in plan.teams if t.change == "added"]
    if not (removed and added):
        return []
    # Shorter than a removal's own text: the removal page (REMOVAL_DOC) says the rest of what the old name loses.
    return [Hazard("", f"team:{team}", f"team {team} removed while {', '.join(added)} is added (a rename?): "
                                       f"{team}'s running jobs lose their queue and {team_namespace(team)} goes, as "
                                       f"for a removal; {RENAMED_TEAM}. {RENAME_ORDER[0].upper()}{RENAME_ORDER[1:]} "
                                       f"({REMOVAL_DOC})")
            for team in removed]
