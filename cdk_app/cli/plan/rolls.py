"""Which instance groups roll onto another AMI at a deploy, and what their scheduled updates and automatic patches
will drain later, read from the HyperPod cluster's template (AWS::SageMaker::Cluster's InstanceGroups).

None of these properties is create-only in the schema (cfn-lint: ClusterName, VpcConfig, Orchestrator/Eks), so
a change never replaces the cluster (the comparison decides that from the schema); what it does to the nodes is
said here. Sources: the schema's ImageReleaseVersion ("Changing this value on an existing instance group triggers
a software update via UpdateClusterSoftware"), AWS's update-cluster-software guide for EKS (HyperPod does not
drain or move the pods on the nodes; the root volume is replaced and the nodes are NotReady while they update) and
botocore's ClusterAutoPatchConfig (WhenIdle, WhenAllIdle)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from cdk_app.cli.plan.model import Hazard, types_text
from cdk_app.config.model import BatchSize
from cdk_app.domain.cron_schedules import Cron, first_start, parse_cron, utc_naive
from cdk_app.domain.rolling_updates import batch_text, first_start_together

_IMAGE_KEYS = ("ImageId", "ImageReleaseVersion")


def _groups(props: dict[str, Any]) -> dict[str, dict[str, Any]]:
    groups = props.get("InstanceGroups")
    return {g["InstanceGroupName"]: g for g in groups if isinstance(g, dict) and isinstance(g.get("InstanceGroupName"), str)
            } if isinstance(groups, list) else {}


def _count(group: dict[str, Any]) -> int | None:
    count = group.get("InstanceCount")
    return count if isinstance(count, int) and not isinstance(count, bool) else None


def _image(group: dict[str, Any]) -> str:
    parts = [f"{key} {group[key]}" for key in _IMAGE_KEYS if key in group]
    return ", ".join(parts) or "SageMaker's AMI"


def _batch(deployment: Any, count: int | None, key: str = "MaximumBatchSize") -> str | None:
    """How many of the group's nodes a batch of the deployment takes, in words; None without a readable one."""
    policy = deployment.get("RollingUpdatePolicy") if isinstance(deployment, dict) else None
    size = policy.get(key) if isinstance(policy, dict) else None
    if not isinstance(size, dict) or size.get("Type") not in ("INSTANCE_COUNT", "CAPACITY_PERCENTAGE"):
        return None
    value = size.get("Value")
    if not isinstance(value, int) or isinstance(value, bool) or value < 1 or count is None:
        return None
    return batch_text(BatchSize.model_construct(type=size["Type"], value=value), count)


def _deployment_text(deployment: Any, count: int | None) -> str:
    batch = _batch(deployment, count)
    if batch is None:
        return f"all {count if count is not None else 'its'} nodes at once (no rolling batch)"
    parts = [f"{batch} at a time"]
    wait = deployment.get("WaitIntervalInSeconds")
    if isinstance(wait, int):
        parts.append(f"{wait} s between batches")
    listed = deployment.get("AutoRollbackConfiguration")
    alarms = [a.get("AlarmName") for a in listed if isinstance(a, dict)] if isinstance(listed, list) else []
    if alarms:
        parts.append(f"rolled back when {', '.join(str(a) for a in alarms)} fires")
    return ", ".join(parts)


def roll_hazards(stack: str, logical_id: str, old: dict[str, Any], new: dict[str, Any],
                 as_of: datetime | None = None) -> list[Hazard]:
    """The AMI changes of an in-place cluster update: a group whose ImageId or ImageReleaseVersion changes rolls
    at this deploy (refused unless named, as other changes that stop the jobs on a group's nodes); a scheduled
    update or automatic patching turned on, changed or off is called out with what it will drain, when it first
    starts after `as_of` (UTC; the clock's when None) and which groups' updates start with it."""
    old_groups, new_groups = _groups(old), _groups(new)
    as_of = utc_naive(as_of)
    hazards = []
    for name, now in sorted(new_groups.items()):
        before = old_groups.get(name)
        if before is None:
            continue  # a new group's nodes start on its AMI
        where = f"{logical_id}/{name}"
        count = _count(now)
        nodes = f"{count if count is not None else 'all its'} x {types_text(now)} nodes"
        if any(before.get(key) != now.get(key) for key in _IMAGE_KEYS):
            scheduled = now.get("ScheduledUpdateConfig")
            batch = _batch(scheduled.get("DeploymentConfig"), count) if isinstance(scheduled, dict) else None
            later = f" (its scheduled updates take {batch} at a time)" if batch else ""
            hazards.append(Hazard(stack, where, f"instance group {name} rolls at this deploy: {_image(before)} -> "
                                                f"{_image(now)}. CloudFormation updates its software "
                                                f"(UpdateClusterSoftware; no create-only property, the cluster stays): "
                                                f"its {nodes} reboot onto the new AMI with new root volumes, and the "
                                                "jobs on them stop (HyperPod does not drain them). AWS documents no "
                                                "batch for an update CloudFormation starts, so plan for all "
                                                f"{count if count is not None else 'of them'} at once{later}"))
        hazards.extend(_schedule_changes(stack, where, name, nodes, count, before, now,
                                         _schedule_words(name, new_groups, as_of)))
    return hazards


def _schedule_of(group: dict[str, Any]) -> Cron | str | None:
    """A template group's update schedule by its meaning, its text when the kit cannot read it, None without one."""
    scheduled = group.get("ScheduledUpdateConfig")
    expression = scheduled.get("ScheduleExpression") if isinstance(scheduled, dict) else None
    return (parse_cron(expression) or expression) if isinstance(expression, str) else None


def _schedule_words(name: str, groups: dict[str, dict[str, Any]], as_of: datetime) -> tuple[str, str]:
    """When the group's scheduled updates first start, and the other groups whose updates ever start with them
    (cdk_app.domain.rolling_updates.first_start_together, as `validate`'s HPK241 and its rolling batches)."""
    schedule = _schedule_of(groups[name])
    if schedule is None:
        return "", ""
    first = first_start(schedule, as_of) if isinstance(schedule, Cron) else None
    if isinstance(schedule, Cron) and first is None:
        return " (never, from today on)", ""
    starts = f" (the first on {first:%Y-%m-%d %H:%M} UTC)" if first else ""
    together = []
    for other, group in sorted(groups.items()):
        theirs = _schedule_of(group)
        met = first_start_together(schedule, theirs, as_of) if other != name and theirs is not None else None
        if met is not None:
            together.append(other + (f" (first on {met:%Y-%m-%d %H:%M} UTC)" if isinstance(met, datetime) else ""))
    if not together:
        return starts, ""
    return starts, (f"; they start with the updates of {', '.join(together)}, so their batches are out at once, and "
                  "AWS warns that overlapping schedules may make updates fail")


def _schedule_changes(stack: str, where: str, name: str, nodes: str, count: int | None, before: dict[str, Any],
                      now: dict[str, Any], words: tuple[str, str]) -> list[Hazard]:
    hazards = []
    old_schedule, new_schedule = before.get("ScheduledUpdateConfig"), now.get("ScheduledUpdateConfig")
    if old_schedule != new_schedule:
        if isinstance(new_schedule, dict):
            text = (f"instance group {name}: AMI updates {'scheduled' if old_schedule is None else 'rescheduled'} "
                    f"at {new_schedule.get('ScheduleExpression')}{words[0]}: each drains its {nodes} "
                    f"{_deployment_text(new_schedule.get('DeploymentConfig'), count)}{words[1]}")
        else:
            text = f"instance group {name}: scheduled AMI updates removed (it keeps its AMI until you update it)"
        hazards.append(Hazard(stack, where, text, refuse=False))
    old_patch, new_patch = before.get("AutoPatchConfig"), now.get("AutoPatchConfig")
    if old_patch != new_patch:
        if isinstance(new_patch, dict):
            strategy = new_patch.get("PatchingStrategy")
            how = ("patches each once it runs no job" if strategy == "WhenIdle"
                   else "patches them all once all are idle" if strategy == "WhenAllIdle" else f"applies {strategy}")
            text = (f"instance group {name}: automatic patches {strategy}: when a patch AMI comes out, its {nodes} are "
                    f"cordoned (no new jobs start there) and HyperPod {how}; nodes that never go idle keep the old AMI")
        else:
            text = f"instance group {name}: automatic patches turned off"
        hazards.append(Hazard(stack, where, text, refuse=False))
    return hazards
