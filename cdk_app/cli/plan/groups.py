"""The HyperPod cluster's instance groups before and after: added, removed, grown and shrunk, by name.

Read from the templates' AWS::SageMaker::Cluster InstanceGroups (the group's name is InstanceGroupName, its nodes
InstanceCount), so a quota raise that needs capacity first shows the capacity change beside it, not "1 update"."""

from __future__ import annotations

from typing import Any

from cdk_app.cli.plan.model import GroupChange, template_resources, types_text

CLUSTER_TYPE = "AWS::SageMaker::Cluster"


def _groups(templates: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Group name -> its InstanceGroups entry, over every cluster of the templates (an environment has one)."""
    found: dict[str, dict[str, Any]] = {}
    for template in templates.values():
        for resource in template_resources(template).values():
            if resource.get("Type") != CLUSTER_TYPE:
                continue
            props = resource.get("Properties")
            groups = props.get("InstanceGroups") if isinstance(props, dict) else None
            for group in groups if isinstance(groups, list) else ():  # a hand-edited template may hold anything
                if isinstance(group, dict) and isinstance(group.get("InstanceGroupName"), str):
                    found[group["InstanceGroupName"]] = group
    return found


def _count(group: dict[str, Any] | None) -> int | None:
    count = (group or {}).get("InstanceCount")
    return count if isinstance(count, int) and not isinstance(count, bool) else None


def group_changes(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[GroupChange]:
    """Each group whose node count changes, in name order; a group of a new cluster is added."""
    old, new = _groups(before), _groups(after)
    changes = []
    for name in sorted(set(old) | set(new)):
        was, now = _count(old.get(name)), _count(new.get(name))
        if name in old and name in new and was == now:
            continue
        instance_type = types_text(new.get(name) or old[name])
        changes.append(GroupChange(name, instance_type, was if name in old else None, now if name in new else None))
    return changes
