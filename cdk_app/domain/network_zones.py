"""Which zones' subnets the EKS control plane and the HyperPod cluster's own VpcConfig use.

Both are fixed when the clusters are created (VpcConfig of AWS::SageMaker::Cluster is create-only; the
kit keeps the EKS control plane's subnets as they are too), so they are recorded in the config
(network.cluster_zone_ids) rather than derived from the order of availability_zone_ids. Shared by the
validator (HPK121-HPK123) and the cluster stack.
"""

from __future__ import annotations

from cdk_app.config.model import KitConfig

EKS_MIN_ZONES = 2


def cluster_zone_ids(config: KitConfig) -> tuple[str, ...]:
    """The recorded zones, or by default the first two of availability_zone_ids."""
    return config.network.cluster_zone_ids or config.availability_zone_ids[:EKS_MIN_ZONES]
