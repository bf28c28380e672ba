"""Network for a HyperPod cluster: private subnets by availability zone id, NAT egress, an S3
gateway endpoint and the security group HyperPod nodes share (EFA and FSx for Lustre).

Subnets are placed by availability zone *id* (CfnSubnet.AvailabilityZoneId): ids name the same
physical zone in every account, which is what capacity reservations and training plans use, and
they need no context lookup, so synth stays offline. Each zone's resources are named after the zone
id and their CIDRs come from its number (subnet_layout), so zones may be appended (or the list
reordered) without touching an existing subnet, NAT gateway or route.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

from aws_cdk import CfnResource, Fn, RemovalPolicy, Stack, Tags
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from constructs import Construct

from hyperpod_constructs.nag_acknowledgements import acknowledge, ref, wildcard_resource
from hyperpod_constructs.private.subnet_layout import subnet_cidrs
from hyperpod_constructs.protection import keep_on_delete, retain
from hyperpod_constructs.service_trust import service_principal

# FSx for Lustre: 988 for the file system, 1018-1023 for its clients.
LUSTRE_PORTS = ((988, 988), (1018, 1023))


@dataclass(frozen=True)
class ExistingSubnetRef:
    subnet_id: str
    availability_zone_id: str


@dataclass(frozen=True)
class HyperPodNetworkProps:
    """Props of HyperPodNetwork.

    availability_zone_ids: zones that get a private subnet (new VPC) - required, 1 to 6.
    vpc_cidr: CIDR of a new VPC, /16 to /20. Default 10.192.0.0/16.
    existing_vpc_id: use this VPC instead of creating one. Default: create a VPC.
    existing_subnets: private subnets of existing_vpc_id. Required with existing_vpc_id.
    flow_log_retention: retention of the VPC flow log group. Default one year.
    keep_on_delete: a delete of the stack keeps everything the clusters' nodes use - VPC, subnets, NAT, routes,
        the node security group and its rules - so deleting it under running (retained) clusters cuts nothing
        and cannot fail half-way on their network interfaces. False only for an environment's final teardown,
        once no cluster uses the network: the delete then removes all of it. Default True.
    """

    availability_zone_ids: tuple[str, ...]
    vpc_cidr: str = "10.192.0.0/16"
    existing_vpc_id: str | None = None
    existing_subnets: tuple[ExistingSubnetRef, ...] = field(default_factory=tuple)
    flow_log_retention: logs.RetentionDays = logs.RetentionDays.ONE_YEAR
    keep_on_delete: bool = True


class HyperPodNetwork(Construct):
    """VPC (new or existing), private subnet per zone id and the shared node security group."""

    def __init__(self, scope: Construct, construct_id: str, *, props: HyperPodNetworkProps) -> None:
        super().__init__(scope, construct_id)
        zones = props.availability_zone_ids
        if not 1 <= len(zones) <= 6 or len(set(zones)) != len(zones):
            raise ValueError(f"availability_zone_ids must hold 1 to 6 distinct zone ids, got {list(zones)}")
        if (props.existing_vpc_id is None) != (not props.existing_subnets):
            raise ValueError("existing_vpc_id and existing_subnets must be given together")
        prefix = ipaddress.ip_network(props.vpc_cidr).prefixlen
        if not 16 <= prefix <= 20:
            raise ValueError(f"vpc_cidr must be /16 to /20, got {props.vpc_cidr}")

        # What the nodes' traffic runs on: the stateful part is kept on replacement too, the rest only on delete.
        self._stateful: list[CfnResource] = []
        self._connective: list[CfnResource] = []
        if props.existing_vpc_id is not None:
            self.vpc_id = props.existing_vpc_id
            self.private_subnet_ids = {s.availability_zone_id: s.subnet_id for s in props.existing_subnets}
        else:
            self.vpc_id, self.private_subnet_ids = self._create_vpc(props)
        self.security_group = self._create_security_group()
        self.security_group_id = self.security_group.attr_group_id
        if props.keep_on_delete:
            retain(*self._stateful)
            keep_on_delete(*self._connective)

    def _create_vpc(self, props: HyperPodNetworkProps) -> tuple[str, dict[str, str]]:
        vpc = ec2.CfnVPC(self, "Vpc", cidr_block=props.vpc_cidr, enable_dns_hostnames=True,
                         enable_dns_support=True)
        Tags.of(vpc).add("Name", f"{self.node.path}/Vpc")
        self._stateful.append(vpc)
        igw = ec2.CfnInternetGateway(self, "InternetGateway")
        attach = ec2.CfnVPCGatewayAttachment(self, "InternetGatewayAttachment", vpc_id=vpc.ref,
                                             internet_gateway_id=igw.ref)
        public_table = ec2.CfnRouteTable(self, "PublicRouteTable", vpc_id=vpc.ref)
        public_route = ec2.CfnRoute(self, "PublicDefaultRoute", route_table_id=public_table.ref,
                                    destination_cidr_block="0.0.0.0/0", gateway_id=igw.ref)
        public_route.add_resource_dependency(attach)
        self._connective += [igw, attach, public_table, public_route]

        private_ids: dict[str, str] = {}
        private_tables: dict[str, str] = {}
        for zone in props.availability_zone_ids:
            private_cidr, public_cidr = subnet_cidrs(props.vpc_cidr, zone)
            name = _zone_name(zone)
            public = ec2.CfnSubnet(self, f"PublicSubnet{name}", vpc_id=vpc.ref, availability_zone_id=zone,
                                   cidr_block=public_cidr, map_public_ip_on_launch=False)
            public_association = ec2.CfnSubnetRouteTableAssociation(
                self, f"PublicSubnet{name}RouteTable", subnet_id=public.ref, route_table_id=public_table.ref)
            # Kept with the subnets: other systems may allow-list the NAT addresses (see HPK108).
            eip = ec2.CfnEIP(self, f"NatEip{name}", domain="vpc")
            nat = ec2.CfnNatGateway(self, f"NatGateway{name}", subnet_id=public.ref,
                                    allocation_id=eip.attr_allocation_id)
            nat.add_resource_dependency(attach)

            private = ec2.CfnSubnet(self, f"PrivateSubnet{name}", vpc_id=vpc.ref,
                                    availability_zone_id=zone, cidr_block=private_cidr)
            Tags.of(private).add("Name", f"{self.node.path}/Private-{zone}")
            table = ec2.CfnRouteTable(self, f"PrivateRouteTable{name}", vpc_id=vpc.ref)
            route = ec2.CfnRoute(self, f"PrivateDefaultRoute{name}", route_table_id=table.ref,
                                 destination_cidr_block="0.0.0.0/0", nat_gateway_id=nat.ref)
            private_association = ec2.CfnSubnetRouteTableAssociation(
                self, f"PrivateSubnet{name}RouteTable", subnet_id=private.ref, route_table_id=table.ref)
            self._stateful += [public, private, eip]
            self._connective += [public_association, nat, table, route, private_association]
            private_ids[zone] = private.ref
            private_tables[zone] = table.ref

        self._connective.append(ec2.CfnVPCEndpoint(
            self, "S3Endpoint", vpc_id=vpc.ref, vpc_endpoint_type="Gateway",
            service_name=Fn.join("", ["com.amazonaws.", Fn.ref("AWS::Region"), ".s3"]),
            route_table_ids=[private_tables[zone] for zone in sorted(private_tables)]))
        self._create_flow_log(vpc.ref, props.flow_log_retention)
        return vpc.ref, private_ids

    def _create_flow_log(self, vpc_id: str, retention: logs.RetentionDays) -> None:
        group = logs.LogGroup(self, "FlowLogGroup", retention=retention, removal_policy=RemovalPolicy.RETAIN)
        stack = Stack.of(self)
        role = iam.Role(self, "FlowLogRole", assumed_by=service_principal(
            self, "vpc-flow-logs.amazonaws.com",
            f"arn:{stack.partition}:ec2:{stack.region}:{stack.account}:vpc-flow-log/*"))
        # Exactly the actions VPC Flow Logs uses to deliver, on this log group only.
        role.add_to_policy(iam.PolicyStatement(
            actions=["logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"],
            resources=[group.log_group_arn, f"{group.log_group_arn}:*"],
        ))
        acknowledge(role, {wildcard_resource(f"{ref(group.node.default_child, 'Arn')}:*"):
                           "VPC Flow Logs creates its own log streams inside this one log group; ':*' is the stream "
                           "part of the group's ARN"})
        ec2.CfnFlowLog(self, "FlowLog", resource_id=vpc_id, resource_type="VPC", traffic_type="ALL",
                       log_destination_type="cloud-watch-logs", log_group_name=group.log_group_name,
                       deliver_logs_permission_arn=role.role_arn)

    def _create_security_group(self) -> ec2.CfnSecurityGroup:
        group = ec2.CfnSecurityGroup(
            self, "NodeSecurityGroup", vpc_id=self.vpc_id,
            group_description="HyperPod nodes: all traffic between nodes (EFA), FSx for Lustre, egress via NAT",
            security_group_egress=[ec2.CfnSecurityGroup.EgressProperty(
                ip_protocol="-1", cidr_ip="0.0.0.0/0", description="Egress to AWS APIs and registries through NAT")],
        )
        # EFA needs all protocols in both directions between the nodes themselves.
        rules: list[CfnResource] = [
            ec2.CfnSecurityGroupIngress(self, "NodeIngressSelf", group_id=group.attr_group_id, ip_protocol="-1",
                                        source_security_group_id=group.attr_group_id,
                                        description="All traffic between HyperPod nodes (EFA)"),
            ec2.CfnSecurityGroupEgress(self, "NodeEgressSelf", group_id=group.attr_group_id, ip_protocol="-1",
                                       destination_security_group_id=group.attr_group_id,
                                       description="All traffic between HyperPod nodes (EFA)")]
        rules += [ec2.CfnSecurityGroupIngress(self, f"LustreIngress{low}", group_id=group.attr_group_id,
                                              ip_protocol="tcp", from_port=low, to_port=high,
                                              source_security_group_id=group.attr_group_id,
                                              description=f"FSx for Lustre TCP {low}-{high}")
                  for low, high in LUSTRE_PORTS]
        # The EKS control plane's and the HyperPod nodes' interfaces carry this group: CloudFormation could not
        # delete it under them anyway, and its rules going first would cut EFA and the control plane off.
        self._connective += [group, *rules]
        return group


def _zone_name(zone_id: str) -> str:
    """use1-az4 -> Use1Az4: part of the construct ids of the zone's resources, hence of their logical ids."""
    return "".join(part.capitalize() for part in re.split(r"[^a-zA-Z0-9]+", zone_id))
