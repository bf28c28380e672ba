"""Referencing a VPC and its subnets by id, for L2 constructs that want IVpc and ISubnet.

No lookups: only the ids travel, so synth needs no AWS credentials.
"""

from __future__ import annotations

from aws_cdk import Annotations
from aws_cdk import aws_ec2 as ec2
from constructs import Construct


def import_vpc_subnets(scope: Construct, vpc_id: str, subnet_ids: tuple[str, ...],
                       zone_ids: tuple[str, ...] | None = None) -> tuple[ec2.IVpc, ec2.SubnetSelection]:
    """The VPC and a selection of exactly these subnets. zone_ids, when given, label each subnet."""
    zones = list(zone_ids) if zone_ids else [f"zone-{i + 1}" for i in range(len(subnet_ids))]
    vpc = ec2.Vpc.from_vpc_attributes(scope, "Vpc", vpc_id=vpc_id, availability_zones=zones)
    subnets = []
    for index, (subnet_id, zone) in enumerate(zip(subnet_ids, zones)):
        subnet = ec2.Subnet.from_subnet_attributes(scope, f"Subnet{index + 1}", subnet_id=subnet_id,
                                                   availability_zone=zone)
        Annotations.of(subnet).acknowledge_warning(
            "@aws-cdk/aws-ec2:noSubnetRouteTableId",
            "subnets are passed by id for placement only; nothing here reads their route tables")
        subnets.append(subnet)
    return vpc, ec2.SubnetSelection(subnets=subnets)
