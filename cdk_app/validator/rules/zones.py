"""Availability zones: where the instance groups and the clusters' subnets live."""

from __future__ import annotations

from cdk_app.config.model import (
    KitConfig,
)
from cdk_app.config.yaml_source import PathKey
from cdk_app.domain.network_zones import EKS_MIN_ZONES, cluster_zone_ids
from cdk_app.validator.reporter import Reporter
from hyperpod_constructs.private.subnet_layout import MAX_ZONE_NUMBER, zone_number


def group_zone(config: KitConfig, index: int) -> str:
    return config.hyperpod.instance_groups[index].availability_zone_id or config.availability_zone_ids[0]


def check_zones(config: KitConfig, report: Reporter) -> None:
    """Zones are append-only: subnets are placed by zone number, the clusters keep their recorded zones.
    Removing or reordering zones of a deployed network cannot be seen offline; CloudFormation refuses to
    remove a subnet the cluster stack still imports, and the retained subnets are never deleted."""
    network = config.network
    if network.existing_vpc_id is None:
        for i, zone in enumerate(config.availability_zone_ids):
            if zone_number(zone) > MAX_ZONE_NUMBER:
                report.error("HPK120", ("availability_zone_ids", i),
                             f"{zone} has no subnet slot in a new VPC: subnets are placed by zone number, "
                             f"az1 to az{MAX_ZONE_NUMBER}",
                             "use another zone, or an existing VPC (network.existing_vpc_id)")
    with_subnet = ({s.availability_zone_id for s in network.existing_subnets} if network.existing_vpc_id
                   else set(config.availability_zone_ids))
    recorded = bool(network.cluster_zone_ids)
    # An existing VPC without subnets is HPK103's: no zone has a subnet, and there is none to name.
    for i, zone in enumerate(cluster_zone_ids(config) if with_subnet else ()):
        if zone not in with_subnet:
            where = "network.existing_subnets has no subnet in it" if network.existing_vpc_id else \
                "availability_zone_ids does not list it"
            path: PathKey = ("network", "cluster_zone_ids", i) if recorded else ("availability_zone_ids", i)
            what = "cluster zone" if recorded else "cluster zone (by default the first two zones)"
            report.error("HPK121", path, f"{what} {zone}: {where}",
                         f"name zones of {', '.join(sorted(with_subnet))} in network.cluster_zone_ids")
    if network.cluster_zone_ids and (len(set(network.cluster_zone_ids)) < EKS_MIN_ZONES
                                     or len(set(network.cluster_zone_ids)) != len(network.cluster_zone_ids)):
        report.error("HPK122", ("network", "cluster_zone_ids"),
                     f"cluster_zone_ids must name at least {EKS_MIN_ZONES} distinct zones (EKS places its control "
                     f"plane in two), got {list(network.cluster_zone_ids)}",
                     "record the zones the clusters were created in (without the key, the first two of "
                     f"availability_zone_ids: {', '.join(config.availability_zone_ids[:EKS_MIN_ZONES])})")


def check_cluster_zones_recorded(config: KitConfig, report: Reporter) -> None:
    """HPK123: without network.cluster_zone_ids the clusters' subnets are the first two zones listed, so
    prepending or reordering availability_zone_ids would replace the HyperPod cluster (create-only VpcConfig)."""
    if not config.network.cluster_zone_ids:
        zones = ", ".join(cluster_zone_ids(config))
        report.warning("HPK123", ("availability_zone_ids",),
                       f"network.cluster_zone_ids is not recorded: the clusters' subnets are the first two zones "
                       f"listed ({zones}), so prepending or reordering zones would replace the HyperPod cluster",
                       f"record network.cluster_zone_ids: [{zones}]")
