"""HyperPod's managed Karpenter as Kubernetes objects: the kit's HyperpodNodeClass over the autoscaled instance groups
and one NodePool per autoscaled instance type, each limited to what Kueue may admit on its type
(cdk_app/domain/autoscaling.py). Every pool points at the one NodeClass and requires its type
(node.kubernetes.io/instance-type, a requirement HyperPod's provider supports: "Create a NodePool"), so Karpenter
launches a pool's nodes only from the listed groups that run that type. The objects' one definition is the
installer's (kit_node_class, kit_node_pool in constructs/helm_release_handler/manifest_policy.py, which accepts them
only in exactly that form)."""

from __future__ import annotations

from typing import Any

from cdk_app.config.model import KitConfig
from cdk_app.domain.autoscaling import autoscaled_groups, node_pool_limits
from hyperpod_constructs.helm_release_handler.manifest_policy import kit_node_class, kit_node_pool


def autoscaling_manifests(config: KitConfig) -> tuple[dict[str, Any], ...]:
    """The NodeClass, then a NodePool per autoscaled instance type in config order; none without autoscaling or
    without a group to scale."""
    groups = autoscaled_groups(config)
    if not config.hyperpod.autoscaling or not groups:
        return ()
    return (kit_node_class([group.name for group in groups]),
            *(kit_node_pool(itype, limits) for itype, limits in node_pool_limits(config).items()))
