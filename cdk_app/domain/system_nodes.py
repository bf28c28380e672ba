"""The administrators' system nodes (hyperpod.system_instance_group): which group it is, which of its taints keep
team pods off, and where the chart's cluster-wide controllers are placed on it. The validator checks the group
with these functions and the cluster stack turns the placement into chart values, so both read one definition."""

from __future__ import annotations

from cdk_app.config.model import InstanceGroup, KitConfig, Taint
from cdk_app.domain.instance_types import DEVICE_RESOURCE_PREFIXES

# Effects that keep a pod without a matching toleration off a node (PreferNoSchedule only discourages it).
REPELLING_EFFECTS = ("NoSchedule", "NoExecute")


def system_group(config: KitConfig) -> InstanceGroup | None:
    """The group system_instance_group names, or None (none named, or no such group)."""
    if config.hyperpod is None or config.hyperpod.system_instance_group is None:
        return None
    return next((g for g in config.hyperpod.instance_groups if g.name == config.hyperpod.system_instance_group), None)


def team_proof_taints(group: InstanceGroup) -> tuple[Taint, ...]:
    """The group's taints that no team pod may tolerate: NoSchedule or NoExecute, listing no team (the admission
    guardrail refuses a team's toleration of them), and not keyed by a device resource (the API server adds that
    toleration to every pod asking for the device)."""
    return tuple(t for t in group.taints if t.effect in REPELLING_EFFECTS and not t.teams
                 and not t.key.startswith(DEVICE_RESOURCE_PREFIXES))


def groups_selected_with(config: KitConfig, group: InstanceGroup) -> list[str]:
    """Other groups whose labels include every label of `group`: a node selector of group's labels picks them too."""
    return [g.name for g in config.hyperpod.instance_groups
            if g is not group and all(g.labels.get(k) == v for k, v in group.labels.items())]


def toleration_of(taint: Taint) -> dict[str, str]:
    """A toleration that matches exactly this taint (key, value, effect as Kubernetes matches them)."""
    if taint.value is None:
        return {"key": taint.key, "operator": "Exists", "effect": taint.effect}
    return {"key": taint.key, "operator": "Equal", "value": taint.value, "effect": taint.effect}


def controller_placement(config: KitConfig) -> tuple[dict[str, str], tuple[dict[str, str], ...]]:
    """(node selector, tolerations) that put the chart's controllers on the system group: its labels, and a
    toleration of each of its taints. Both empty without a system group, or one without labels (the validator
    refuses that): tolerations without a selector would let the controllers onto the group, not keep them there."""
    group = system_group(config)
    if group is None or not group.labels:
        return {}, ()
    return dict(sorted(group.labels.items())), tuple(toleration_of(t) for t in group.taints)
