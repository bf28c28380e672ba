"""Fine-grained tests of the HyperPodNetwork construct."""

from __future__ import annotations

import pytest
from aws_cdk import App, Stack
from aws_cdk.assertions import Match, Template

from hyperpod_constructs.hyperpod_network import (
    ExistingSubnetRef,
    HyperPodNetwork,
    HyperPodNetworkProps,
    plan_subnets,
)


def template_for(props: HyperPodNetworkProps) -> Template:
    stack = Stack(App(), "Test")
    HyperPodNetwork(stack, "Network", props=props)
    return Template.from_stack(stack)


def test_new_vpc_has_private_subnet_per_zone_id_with_nat_and_s3_endpoint():
    template = template_for(HyperPodNetworkProps(availability_zone_ids=("use1-az4", "use1-az6")))
    template.resource_count_is("AWS::EC2::VPC", 1)
    template.resource_count_is("AWS::EC2::Subnet", 4)
    template.resource_count_is("AWS::EC2::NatGateway", 2)
    template.has_resource_properties("AWS::EC2::Subnet", {"AvailabilityZoneId": "use1-az4", "CidrBlock": "10.192.0.0/19"})
    template.has_resource_properties("AWS::EC2::Subnet", {"AvailabilityZoneId": "use1-az6", "CidrBlock": "10.192.32.0/19"})
    template.has_resource_properties("AWS::EC2::VPCEndpoint", {"VpcEndpointType": "Gateway",
                                                               "RouteTableIds": Match.any_value()})
    template.has_resource_properties("AWS::EC2::FlowLog", {"ResourceType": "VPC", "TrafficType": "ALL"})


def test_security_group_allows_efa_both_ways_and_lustre_ports():
    template = template_for(HyperPodNetworkProps(availability_zone_ids=("use1-az4",)))
    template.has_resource_properties("AWS::EC2::SecurityGroupIngress", {"IpProtocol": "-1",
                                                                        "SourceSecurityGroupId": Match.any_value()})
    template.has_resource_properties("AWS::EC2::SecurityGroupEgress", {"IpProtocol": "-1",
                                                                       "DestinationSecurityGroupId": Match.any_value()})
    for low, high in ((988, 988), (1018, 1023)):
        template.has_resource_properties("AWS::EC2::SecurityGroupIngress",
                                         {"IpProtocol": "tcp", "FromPort": low, "ToPort": high})


def test_existing_vpc_creates_only_the_security_group():
    template = template_for(HyperPodNetworkProps(
        availability_zone_ids=("use1-az4",), existing_vpc_id="vpc-0123456789abcdef0",
        existing_subnets=(ExistingSubnetRef("subnet-0123456789abcdef0", "use1-az4"),)))
    template.resource_count_is("AWS::EC2::VPC", 0)
    template.resource_count_is("AWS::EC2::Subnet", 0)
    template.has_resource_properties("AWS::EC2::SecurityGroup", {"VpcId": "vpc-0123456789abcdef0"})


def test_plan_subnets_splits_a_20_too():
    assert plan_subnets("10.0.0.0/20", 2) == (["10.0.0.0/23", "10.0.2.0/23"], ["10.0.14.0/26", "10.0.14.64/26"])


@pytest.mark.parametrize(("props", "message"), [
    (HyperPodNetworkProps(availability_zone_ids=()), "1 to 6 distinct zone ids"),
    (HyperPodNetworkProps(availability_zone_ids=("use1-az4", "use1-az4")), "1 to 6 distinct zone ids"),
    (HyperPodNetworkProps(availability_zone_ids=("use1-az4",), existing_vpc_id="vpc-0123456789abcdef0"),
     "existing_vpc_id and existing_subnets must be given together"),
    (HyperPodNetworkProps(availability_zone_ids=("use1-az4",), vpc_cidr="10.0.0.0/24"), "vpc_cidr must be /16 to /20"),
])
def test_bad_props_raise(props, message):
    with pytest.raises(ValueError, match=message):
        template_for(props)
