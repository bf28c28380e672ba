"""The VPC, its subnets and the EKS endpoint's reach."""

from __future__ import annotations

import ipaddress

from cdk_app.config.model import (
    KitConfig,
)
from cdk_app.config.yaml_source import PathKey
from cdk_app.validator.reporter import Reporter
from cdk_app.validator.rules.zones import group_zone
from hyperpod_constructs.private.limits import ANYWHERE_IPV4


def check_eks_endpoint(config: KitConfig, report: Reporter) -> None:
    eks = config.eks
    public = eks.endpoint_access != "private"
    anywhere = _covers_the_internet(eks.public_access_cidrs)
    if public and not eks.public_access_cidrs:
        # No default of "anywhere": the API of a shared GPU cluster is not opened by leaving a field out.
        report.error("HPK112", ("eks", "endpoint_access"),
                     f"a {eks.endpoint_access} endpoint with no public_access_cidrs: the config does not say who "
                     "may reach the Kubernetes API from outside the VPC",
                     "list the networks the admins' kubectl runs from in eks.public_access_cidrs (e.g. "
                     "[203.0.113.0/24]), or use endpoint_access: private (the default; the kit's deploy reaches "
                     "the API inside the VPC)")
    elif eks.endpoint_access == "public" and eks.public_access_cidrs != (ANYWHERE_IPV4,):
        report.error("HPK108", ("eks", "endpoint_access"),
                     "with a public-only endpoint, nodes and the Helm installer reach the API through NAT, "
                     "whose addresses public_access_cidrs does not list",
                     "use public_and_private (in-VPC traffic then takes the private endpoint); public alone takes "
                     f"only public_access_cidrs: [{ANYWHERE_IPV4}]")
    if public and anywhere:
        report.warning("HPK113", ("eks", "public_access_cidrs"),
                       "public_access_cidrs let the whole internet reach the Kubernetes API of a shared GPU "
                       "cluster: IAM authentication is all that stands between it and a leaked key or an API "
                       "server vulnerability",
                       "list only the networks the admins' kubectl runs from, or use endpoint_access: private "
                       "and reach the API from inside the VPC")
    if eks.endpoint_access == "private" and eks.public_access_cidrs:
        report.warning("HPK109", ("eks", "public_access_cidrs"),
                       "public_access_cidrs has no effect on a private endpoint",
                       "remove it, or use endpoint_access: public_and_private")


def _covers_the_internet(cidrs: tuple[str, ...]) -> bool:
    """Whether the valid networks among `cidrs` add up to all of IPv4 (0.0.0.0/0, or its halves listed apart);
    invalid ones are HPK015's."""
    networks = [ipaddress.IPv4Network(c) for c in cidrs if _cidr_problem(c) is None]
    return ipaddress.IPv4Network(ANYWHERE_IPV4) in ipaddress.collapse_addresses(networks)


def _cidr_problem(text: str) -> str | None:
    """Why `text` is not an IPv4 network in CIDR form, or None."""
    try:
        network = ipaddress.IPv4Network(text, strict=False)
    except ValueError as err:
        return str(err)
    if str(network) != text:
        return f"host bits are set: the network is {network}"
    return None


# EKS: public endpoint access CIDR ranges per cluster (Amazon EKS service quotas; aws/containers-roadmap#2174 and
# #1349 ask AWS to raise the 40).
MAX_PUBLIC_ACCESS_CIDRS = 40


def check_cidrs(config: KitConfig, report: Reporter) -> None:
    if config.network.existing_vpc_id is None:
        why = _cidr_problem(config.network.vpc_cidr)
        if why:
            report.error("HPK015", ("network", "vpc_cidr"), f"vpc_cidr {config.network.vpc_cidr!r} is not a valid network: {why}",
                         "expected an IPv4 CIDR from /16 to /20 with the host bits zero, e.g. 10.192.0.0/16")
    cidrs = config.eks.public_access_cidrs
    if len(cidrs) > MAX_PUBLIC_ACCESS_CIDRS:
        report.error("HPK167", ("eks", "public_access_cidrs", MAX_PUBLIC_ACCESS_CIDRS),
                     f"{len(cidrs)} public_access_cidrs; EKS takes at most {MAX_PUBLIC_ACCESS_CIDRS} per cluster",
                     "merge neighbouring ranges into wider ones, or reach the API through the private endpoint")
    for j, cidr in enumerate(cidrs):
        why = _cidr_problem(cidr)
        if why:
            report.error("HPK015", ("eks", "public_access_cidrs", j), f"{cidr!r} is not a valid network: {why}",
                         "expected an IPv4 CIDR with the host bits zero, e.g. 203.0.113.0/24")


def check_network(config: KitConfig, report: Reporter) -> None:
    network = config.network
    if network.existing_vpc_id is None and len(config.availability_zone_ids) < 2:
        report.error("HPK107", ("availability_zone_ids",),
                     "EKS places its control plane in subnets of at least two availability zones; one is listed",
                     "add a second availability zone id of the region")
    if (network.existing_vpc_id is None) != (not network.existing_subnets):
        missing = "existing_subnets" if network.existing_vpc_id else "existing_vpc_id"
        present = "existing_vpc_id" if network.existing_vpc_id else "existing_subnets"
        report.error("HPK103", ("network", present), f"{present} is set but {missing} is not",
                     "set both to use an existing VPC, or neither to create one")
        return
    if network.existing_vpc_id is None:
        return
    first: dict[str, int] = {}
    for i, subnet in enumerate(network.existing_subnets):
        if subnet.subnet_id not in first:
            first[subnet.subnet_id] = i
            continue
        earlier = network.existing_subnets[first[subnet.subnet_id]]
        where = ("" if earlier.availability_zone_id == subnet.availability_zone_id else
                 f"; there in {earlier.availability_zone_id}, here in {subnet.availability_zone_id}, but a subnet "
                 "lies in exactly one availability zone")
        report.error("HPK165", ("network", "existing_subnets", i, "subnet_id"),
                     f"subnet {subnet.subnet_id} is listed twice (first at network.existing_subnets"
                     f"[{first[subnet.subnet_id]}]{where})",
                     "list each subnet once, with the zone id EC2 shows for it (AvailabilityZoneId)")
    subnet_zones = {s.availability_zone_id for s in network.existing_subnets}
    if len(subnet_zones) < 2:
        report.error("HPK107", ("network", "existing_subnets"),
                     "EKS places its control plane in subnets of at least two availability zones; "
                     f"the existing subnets are all in {', '.join(subnet_zones)}",
                     "add a subnet in a second availability zone")
    for i, subnet in enumerate(network.existing_subnets):
        if subnet.availability_zone_id not in config.availability_zone_ids:
            report.error("HPK105", ("network", "existing_subnets", i, "availability_zone_id"),
                         f"subnet {subnet.subnet_id} is in {subnet.availability_zone_id}, "
                         "which availability_zone_ids does not list",
                         f"list it there or use a subnet in {', '.join(config.availability_zone_ids)}")
    for i, group in enumerate(config.hyperpod.instance_groups):
        zone = group_zone(config, i)
        if zone not in subnet_zones:
            path: PathKey = ("hyperpod", "instance_groups", i)
            if group.availability_zone_id:
                path += ("availability_zone_id",)
            report.error("HPK104", path,
                         f"instance group '{group.name}' is in {zone} but no existing subnet is",
                         f"add a subnet in {zone} to network.existing_subnets "
                         f"(subnets are in {', '.join(sorted(subnet_zones))})")
