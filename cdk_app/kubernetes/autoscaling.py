"""HyperPod's managed Karpenter as Kubernetes objects: the kit's HyperpodNodeClass over the autoscaled instance groups
and its NodePool, limited to what the teams' quotas can use (cdk_app/domain/autoscaling.py). One of each: a
NodePool's limits bound everything it launches, so one pool over every autoscaled group is what makes its limits
bound their sum. The objects' one definition is the installer's (kit_node_class, kit_node_pool in
constructs/helm_release_handler/manifest_policy.py, which accepts them only in exactly that form)."""

from __future__ import annotations

from typing import Any

from cdk_app.config.model import KitConfig
from cdk_app.domain.autoscaling import autoscaled_groups, autoscaled_types, node_pool_limits
from hyperpod_constructs.helm_release_handler.manifest_policy import kit_node_class, kit_node_pool


def autoscaling_manifests(config: KitConfig) -> tuple[dict[str, Any], ...]:
    """The NodeClass and NodePool; none without autoscaling or without a group to scale."""
    groups = autoscaled_groups(config)
    if not config.hyperpod.autoscaling or not groups:
        return ()
    return (kit_node_class([group.name for group in groups]),
            kit_node_pool(list(autoscaled_types(config)), node_pool_limits(config)))
