"""Fine-grained tests of the HyperPodNetwork construct."""

from __future__ import annotations

import ipaddress
from dataclasses import replace

import pytest
from aws_cdk import App, Environment, Stack
from aws_cdk.assertions import Match, Template

from hyperpod_constructs.hyperpod_network import (
    ExistingSubnetRef,
    HyperPodNetwork,
    HyperPodNetworkProps,
)
from hyperpod_constructs.private.subnet_layout import subnet_cidrs


def template_for(props: HyperPodNetworkProps) -> Template:
    stack = Stack(App(), "Test")
    HyperPodNetwork(stack, "Network", props=props)
    return Template.from_stack(stack)


def test_new_vpc_has_private_subnet_per_zone_id_with_nat_and_s3_endpoint():
    template = template_for(HyperPodNetworkProps(availability_zone_ids=("use1-az4", "use1-az6")))
    template.resource_count_is("AWS::EC2::VPC", 1)
    template.resource_count_is("AWS::EC2::Subnet", 4)
    template.resource_count_is("AWS::EC2::NatGateway", 2)
    # Placed by zone number: az4 takes the fourth eighth of the VPC, az6 the sixth.
    template.has_resource_properties("AWS::EC2::Subnet", {"AvailabilityZoneId": "use1-az4", "CidrBlock": "10.192.96.0/19"})
    template.has_resource_properties("AWS::EC2::Subnet", {"AvailabilityZoneId": "use1-az6", "CidrBlock": "10.192.160.0/19"})
    template.has_resource_properties("AWS::EC2::Subnet", {"AvailabilityZoneId": "use1-az4", "CidrBlock": "10.192.236.0/22"})
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


def test_subnet_cidrs_split_a_20_too_and_never_overlap():
    assert subnet_cidrs("10.0.0.0/20", "use1-az1") == ("10.0.0.0/23", "10.0.14.0/26")
    assert subnet_cidrs("10.0.0.0/20", "use1-az2") == ("10.0.2.0/23", "10.0.14.64/26")
    blocks = [ipaddress.ip_network(c) for n in range(1, 8) for c in subnet_cidrs("10.0.0.0/16", f"use1-az{n}")]
    assert not [(a, b) for a in blocks for b in blocks if a is not b and a.overlaps(b)]
    with pytest.raises(ValueError, match="az8: zone number 8 has no subnet slot"):
        subnet_cidrs("10.0.0.0/16", "use1-az8")


def subnets(zones: tuple[str, ...]) -> dict[str, dict]:
    """Every subnet, NAT gateway, EIP and route of the network, by logical id."""
    template = template_for(HyperPodNetworkProps(availability_zone_ids=zones)).to_json()["Resources"]
    kinds = ("AWS::EC2::Subnet", "AWS::EC2::NatGateway", "AWS::EC2::EIP", "AWS::EC2::Route", "AWS::EC2::RouteTable",
             "AWS::EC2::SubnetRouteTableAssociation")
    return {k: v for k, v in template.items() if v["Type"] in kinds}


def test_appending_a_zone_adds_resources_and_changes_none():
    before, after = subnets(("use1-az4", "use1-az6")), subnets(("use1-az4", "use1-az6", "use1-az1"))
    assert {k: after[k] for k in before} == before
    assert len(after) > len(before)


def test_reordering_zones_changes_no_subnet():
    assert subnets(("use1-az4", "use1-az6", "use1-az1")) == subnets(("use1-az1", "use1-az6", "use1-az4"))


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


def test_vpc_subnets_and_nat_addresses_are_retained():
    resources = template_for(HyperPodNetworkProps(availability_zone_ids=("use1-az4", "use1-az6"))).to_json()["Resources"]
    kept = {k: v for k, v in resources.items() if v["Type"] in ("AWS::EC2::VPC", "AWS::EC2::Subnet", "AWS::EC2::EIP")}
    assert len(kept) == 1 + 4 + 2
    for logical_id, resource in kept.items():
        assert (resource.get("DeletionPolicy"), resource.get("UpdateReplacePolicy")) == ("RetainExceptOnCreate", "Retain"), \
            logical_id


@pytest.mark.parametrize("existing", [False, True])
def test_the_security_group_is_kept_on_delete_unless_released(existing):
    """Running nodes' interfaces carry it (new or existing VPC); keep_on_delete=False releases it for teardown."""
    props = HyperPodNetworkProps(availability_zone_ids=("use1-az4",), existing_vpc_id="vpc-0123456789abcdef0",
                                 existing_subnets=(ExistingSubnetRef("subnet-0123456789abcdef0", "use1-az4"),)) \
        if existing else HyperPodNetworkProps(availability_zone_ids=("use1-az4",))
    for keep, policy in ((True, "RetainExceptOnCreate"), (False, None)):
        resources = template_for(replace(props, keep_on_delete=keep)).to_json()["Resources"]
        groups = [r for r in resources.values() if r["Type"].startswith("AWS::EC2::SecurityGroup")]
        assert len(groups) == 5 and {r.get("DeletionPolicy") for r in groups} == {policy}


def test_flow_log_role_trusts_the_service_for_this_account_and_its_flow_logs_only():
    stack = Stack(App(), "Test", env=Environment(account="111122223333", region="us-east-1"))
    HyperPodNetwork(stack, "Network", props=HyperPodNetworkProps(availability_zone_ids=("use1-az4",)))
    [role] = Template.from_stack(stack).find_resources("AWS::IAM::Role").values()
    [statement] = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert statement["Condition"]["StringEquals"] == {"aws:SourceAccount": "111122223333"}
    assert statement["Condition"]["ArnLike"]["aws:SourceArn"] == {"Fn::Join": ["", [
        "arn:", {"Ref": "AWS::Partition"}, ":ec2:us-east-1:111122223333:vpc-flow-log/*"]]}
