"""Stack holding the environment's network: stateful, rarely edited, deployed first."""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Stack
from constructs import Construct

from cdk_app.config.model import KitConfig
from hyperpod_constructs.hyperpod_network import ExistingSubnetRef, HyperPodNetwork, HyperPodNetworkProps


class NetworkStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, *, config: KitConfig, teardown: bool = False,
                 **kwargs: Any) -> None:
        """teardown: release what a delete keeps by default (hyperpod-kit teardown prints when to)."""
        super().__init__(scope, construct_id, **kwargs)
        net = config.network
        self.network = HyperPodNetwork(self, "Network", props=HyperPodNetworkProps(
            availability_zone_ids=config.availability_zone_ids,
            vpc_cidr=net.vpc_cidr,
            existing_vpc_id=net.existing_vpc_id,
            existing_subnets=tuple(ExistingSubnetRef(s.subnet_id, s.availability_zone_id)
                                   for s in net.existing_subnets),
            keep_on_delete=not teardown,
        ))
        CfnOutput(self, "VpcId", value=self.network.vpc_id)
        CfnOutput(self, "NodeSecurityGroupId", value=self.network.security_group_id)
